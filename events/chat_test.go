package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

func TestMatchesChat(t *testing.T) {
	tenant := models.Tenant{OrganizationID: "org_a", Environment: models.EnvLive}
	ticket := func(priority, customer string) map[string]any {
		return map[string]any{"ticket": map[string]any{"id": "tkt_1", "priority": priority, "customer_id": customer}}
	}
	ev := func(typ string, data map[string]any, tn models.Tenant) *eventlog.Event {
		e := eventlog.NewEvent(typ, "tkt_1", data)
		e.Tenant = tn
		return e
	}
	for _, tc := range []struct {
		name string
		chat support.ChatIntegration
		ev   *eventlog.Event
		want bool
	}{
		{"pattern", support.ChatIntegration{Events: []string{"ticket.*"}}, ev("ticket.created", ticket("low", "c1"), tenant), true},
		{"other group", support.ChatIntegration{Events: []string{"ticket.*"}}, ev("comment.added", ticket("low", "c1"), tenant), false},
		{"exact name", support.ChatIntegration{Events: []string{"sla.breach"}}, ev("sla.breach", ticket("low", "c1"), tenant), true},
		{"priority kept", support.ChatIntegration{Events: []string{"ticket.*"}, Priorities: []string{"critical", "high"}}, ev("ticket.updated", ticket("critical", "c1"), tenant), true},
		{"priority filtered", support.ChatIntegration{Events: []string{"ticket.*"}, Priorities: []string{"critical"}}, ev("ticket.updated", ticket("low", "c1"), tenant), false},
		{"customer kept", support.ChatIntegration{Events: []string{"ticket.*"}, CustomerIDs: []string{"c1"}}, ev("ticket.updated", ticket("low", "c1"), tenant), true},
		{"customer filtered", support.ChatIntegration{Events: []string{"ticket.*"}, CustomerIDs: []string{"c2"}}, ev("ticket.updated", ticket("low", "c1"), tenant), false},
		{"no priority in the event", support.ChatIntegration{Events: []string{"ticket.*"}, Priorities: []string{"low"}}, ev("ticket.updated", nil, tenant), false},
		{"another organization", support.ChatIntegration{Events: []string{"ticket.*"}}, ev("ticket.created", ticket("low", "c1"), models.Tenant{OrganizationID: "org_b", Environment: models.EnvLive}), false},
		{"another environment", support.ChatIntegration{Events: []string{"ticket.*"}}, ev("ticket.created", ticket("low", "c1"), models.Tenant{OrganizationID: "org_a", Environment: models.EnvTest}), false},
		{"paused", support.ChatIntegration{Events: []string{"ticket.*"}}, ev("ticket.created", ticket("low", "c1"), tenant), false},
	} {
		c := tc.chat
		c.Tenant, c.Active = tenant, tc.name != "paused"
		if got := events.MatchesChat(&c, tc.ev); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDispatcherFansSupportEventsOutToChatIntegrations(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	chat, err := support.NewStore(f.store).CreateChatIntegration(ctx, f.p, support.ChatSpec{WebhookURL: "https://chat.example.com/hook", Channel: "#noc",
		Events: []string{"ticket.*"}, Filters: eventlog.WebhookFilters{Priorities: []string{"critical"}}, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	record := func(typ, priority string) *eventlog.Event {
		ev := eventlog.NewEvent(typ, "tkt_1", map[string]any{"ticket": map[string]any{"id": "tkt_1", "priority": priority}})
		ev.CreatedAt = time.Now().UTC().Add(time.Second)
		if err := f.store.Tx(ctx, f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	critical, low, svc := record("ticket.created", "critical"), record("ticket.updated", "low"), f.event(t)
	mc := mocks.NewClient(t)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(mocks.NewWorkflowRun(t), nil)
	d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour})
	for range 2 { // a second round changes nothing
		if _, err := d.DispatchOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	el := eventlog.NewStore(f.store)
	rows, _ := el.EnsureDeliveries(ctx, critical, nil)
	if len(rows) != 1 || rows[0].SubscriptionID != chat.ID || rows[0].Kind != eventlog.DeliveryToChat || rows[0].WorkflowStartedAt == nil {
		t.Fatalf("deliveries of the critical ticket event: %+v", rows)
	}
	if rows, _ := el.EnsureDeliveries(ctx, low, nil); len(rows) != 0 {
		t.Fatalf("deliveries of the low ticket event: %+v", rows)
	}
	rows, _ = el.EnsureDeliveries(ctx, svc, nil)
	if len(rows) != 1 || rows[0].SubscriptionID != f.sub.ID || rows[0].Kind != eventlog.DeliveryToWebhook {
		t.Fatalf("deliveries of the service event: %+v", rows)
	}
	if ids, _ := el.MatchedSubscriptionIDs(ctx, f.p, critical.ID); len(ids) != 0 {
		t.Fatalf("a chat integration counted as a matched subscription: %v", ids)
	}
}

// TestDispatcherSendsNoReportEventsToChatIntegrations: report events are
// about no ticket, so even an integration stored with report.* (before
// such patterns were refused) gets no message for them, while its ticket
// events still go.
func TestDispatcherSendsNoReportEventsToChatIntegrations(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	chat, err := support.NewStore(f.store).CreateChatIntegration(ctx, f.p, support.ChatSpec{WebhookURL: "https://chat.example.com/hook", Channel: "#noc",
		Events: []string{"report.*", "ticket.*"}, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	record := func(typ string, data map[string]any) *eventlog.Event {
		ev := eventlog.NewEvent(typ, "x_1", data)
		ev.CreatedAt = time.Now().UTC().Add(time.Second)
		if err := f.store.Tx(ctx, f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	report := record("report.completed", map[string]any{"report": map[string]any{"id": "rpt_1"}})
	ticket := record("ticket.created", map[string]any{"ticket": map[string]any{"id": "tkt_1", "priority": "low"}})
	mc := mocks.NewClient(t)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(mocks.NewWorkflowRun(t), nil).Maybe()
	d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour})
	if _, err := d.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	el := eventlog.NewStore(f.store)
	for _, tc := range []struct {
		ev   *eventlog.Event
		want int
	}{
		{report, 0},
		{ticket, 1},
	} {
		rows, err := el.EnsureDeliveries(ctx, tc.ev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != tc.want || (tc.want == 1 && rows[0].SubscriptionID != chat.ID) {
			t.Fatalf("%s: deliveries %+v, want %d to %s", tc.ev.Type, rows, tc.want, chat.ID)
		}
	}
}
