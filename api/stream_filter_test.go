package api

import (
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/eventlog"
)

// TestStreamFilterMatch: patterns (with the group wildcard), resource ids
// and the readable groups each narrow what a stream sends; webhook.test
// never goes out.
func TestStreamFilterMatch(t *testing.T) {
	ev := func(typ, res string) *eventlog.Event { return &eventlog.Event{Type: typ, ResourceID: res} }
	cases := []struct {
		name string
		f    streamFilter
		ev   *eventlog.Event
		want bool
	}{
		{"no filter", streamFilter{}, ev("invoice.paid", "inv_1"), true},
		{"group pattern", streamFilter{patterns: []string{"service.*"}}, ev("service.provisioned", "svc_1"), true},
		{"group pattern, other group", streamFilter{patterns: []string{"service.*"}}, ev("ticket.escalated", "tkt_1"), false},
		{"exact name", streamFilter{patterns: []string{"service.*", "ticket.escalated"}}, ev("ticket.escalated", "tkt_1"), true},
		{"exact name, sibling", streamFilter{patterns: []string{"ticket.escalated"}}, ev("ticket.created", "tkt_1"), false},
		{"resource", streamFilter{resources: []string{"svc_1", "svc_2"}}, ev("service.modified", "svc_2"), true},
		{"other resource", streamFilter{resources: []string{"svc_1"}}, ev("service.modified", "svc_2"), false},
		{"readable group", streamFilter{readable: []string{"service"}}, ev("service.down", "svc_1"), true},
		{"unreadable group", streamFilter{readable: []string{"service"}}, ev("invoice.created", "inv_1"), false},
		{"none readable", streamFilter{readable: []string{}}, ev("service.down", "svc_1"), false},
		{"test ping", streamFilter{}, ev(eventlog.EventWebhookTest, "wh_1"), false},
	}
	for _, c := range cases {
		if got := c.f.match(c.ev); got != c.want {
			t.Errorf("%s: match = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestStreamPositionOrder: positions order by creation time, then id, so
// events created in the same instant keep one order on every instance.
func TestStreamPositionOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	a := eventlog.StreamPosition{At: t0, ID: "evt_b"}
	later := eventlog.StreamPosition{At: t0.Add(time.Microsecond), ID: "evt_a"}
	sameAfter := eventlog.StreamPosition{At: t0, ID: "evt_c"}
	if !a.Before(later) || later.Before(a) {
		t.Error("a later creation time must come after")
	}
	if !a.Before(sameAfter) || sameAfter.Before(a) {
		t.Error("the same instant orders by id")
	}
	if a.Before(a) {
		t.Error("a position is not before itself")
	}
	// The same instant in another time zone is the same position.
	if a.Before(eventlog.StreamPosition{At: t0.In(time.FixedZone("x", 3600)), ID: "evt_b"}) {
		t.Error("time zones must not change the order")
	}
}
