//go:build faults

package faults

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// receiverOutage is how long the webhook receiver stays down: a real
// minute. The real retry schedule tries an event at 0, 5 s, 35 s and
// 2 min 35 s after its first attempt, so an event first tried in the
// outage's first 25 s has its first three attempts refused and is
// delivered by its fourth, and a later one is refused twice and delivered
// by its third.
// The test runs beside the other fault tests, so the wait overlaps their
// work.
const receiverOutage = time.Minute

// TestWebhookReceiverDownAMinute takes the webhook receiver down (its port
// refuses connections) for receiverOutage, in real time, while services
// are provisioned, with the worker's real retry schedule: afterwards every
// event is delivered, each delivery once, and for each service the first
// attempts were made in the order of its events (the documented ordering
// promise).
func TestWebhookReceiverDownAMinute(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{postgresOnly: "a real outage of the receiver: run once, on PostgreSQL, to keep make test-faults short"})
	hooks := newReceiver(t)
	subscribed := time.Now()
	sub := s.subscribe(hooks, "service.*")

	hooks.down()
	down := time.Now()
	var ops []string
	for i := range 6 {
		var acc accepted
		s.do("POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": fmt.Sprintf("hook-%d", i)}, http.StatusAccepted, &acc)
		ops = append(ops, acc.RequestID)
		time.Sleep(receiverOutage / 8)
	}
	statuses := s.waitTerminal(ops, 2*time.Minute)
	for id, st := range statuses {
		if st != "completed" {
			t.Fatalf("operation %s ended %s", id, st)
		}
	}
	time.Sleep(time.Until(down.Add(receiverOutage)))
	if n := len(hooks.deliveries()); n != 0 {
		t.Fatalf("%d deliveries received while the receiver was down", n)
	}
	var failedAttempts int64
	if err := s.db().Table("webhook_attempts").Where("success = ?", false).Count(&failedAttempts).Error; err != nil {
		t.Fatal(err)
	}
	if failedAttempts == 0 {
		t.Fatal("no delivery attempt was refused while the receiver was down: the outage tested nothing")
	}
	hooks.up()
	up := time.Now()

	deliveries := s.waitDelivered(sub, 5*time.Minute)
	took := time.Since(up)
	var events []struct {
		ID, Type, ResourceID string
		CreatedAt            time.Time
	}
	if err := s.db().Table("events").Select("id, type, resource_id, created_at").Where("type LIKE 'service.%' AND created_at >= ?", subscribed).
		Order("created_at, id").Scan(&events).Error; err != nil {
		t.Fatal(err)
	}
	if len(events) < len(ops) || deliveries["succeeded"] != int64(len(events)) || len(deliveries) != 1 {
		t.Fatalf("deliveries by status %v for %d events", deliveries, len(events))
	}
	got := map[string]int{}
	for _, d := range hooks.deliveries() {
		got[d.eventID]++
	}
	redelivered := 0
	for _, ev := range events {
		if got[ev.ID] == 0 {
			t.Fatalf("event %s (%s) never delivered", ev.ID, ev.Type)
		}
		redelivered += got[ev.ID] - 1
	}
	if redelivered != 0 {
		t.Fatalf("%d events delivered more than once", redelivered)
	}
	// First attempts per service in the order of its events.
	var firsts []struct {
		ResourceID     string
		EventCreatedAt time.Time
		AttemptedAt    time.Time
	}
	if err := s.db().Table("webhook_deliveries d").Select("d.resource_id, d.event_created_at, a.attempted_at").
		Joins("JOIN webhook_attempts a ON a.delivery_id = d.id AND a.number = 1").Where("d.subscription_id = ?", sub).
		Order("d.resource_id, d.event_created_at").Scan(&firsts).Error; err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(firsts); i++ {
		if firsts[i].ResourceID == firsts[i-1].ResourceID && firsts[i].AttemptedAt.Before(firsts[i-1].AttemptedAt) {
			t.Fatalf("service %s: the first attempt of a later event (%s) came before that of an earlier one (%s)",
				firsts[i].ResourceID, firsts[i].AttemptedAt, firsts[i-1].AttemptedAt)
		}
	}
	t.Logf("receiver down %s: %d events of %d services, %d attempts refused; all delivered once %s after it came back, first attempts in order per service",
		up.Sub(down).Round(time.Second), len(events), len(ops), failedAttempts, took.Round(time.Second))
	s.figure("receiver_down_events", len(events))
	s.figure("receiver_down_refused_attempts", failedAttempts)
	s.figure("receiver_down_delivered", deliveries["succeeded"])
	s.figure("receiver_down_lost", 0)
}
