package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// fakeDNS answers every lookup with fixed addresses.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return f[host], nil
}

func fieldsOf(t *testing.T, err error) map[string]bool {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("error %v, want VALIDATION_ERROR", err)
	}
	out := map[string]bool{}
	for _, f := range e.Details["fields"].([]models.FieldIssue) {
		out[f.Field] = true
	}
	return out
}

func TestSubscriptionRules(t *testing.T) {
	dns := fakeDNS{
		"hooks.example.com": {netip.MustParseAddr("93.184.216.34")},
		"rebind.example":    {netip.MustParseAddr("10.0.0.7")},
		"metadata.example":  {netip.MustParseAddr("169.254.169.254")},
	}
	rules := events.NewSubscriptions(false, dns)
	ctx := context.Background()
	ok := func(area webhooks.Area, events ...string) {
		t.Helper()
		spec, err := rules.Spec(ctx, area, eventsInput(events))
		if err != nil {
			t.Fatalf("%s %v: %v", area, events, err)
		}
		if spec.Area != eventsAreaName(area) || !spec.Active || spec.Secret != secret {
			t.Fatalf("spec %+v", spec)
		}
	}
	ok(webhooks.AreaServices, "service.provisioned", "service.*")
	ok(webhooks.AreaBilling, "invoice.generated", "payment.*")
	ok(webhooks.AreaSupport, "ticket.escalated", "sla.*")
	ok(webhooks.AreaAll, "*")
	ok(webhooks.AreaAll, "service.*", "invoice.*", "ticket.created")

	tests := []struct {
		name   string
		area   webhooks.Area
		in     events.SubscriptionInput
		fields []string
	}{
		{"nothing", webhooks.AreaAll, events.SubscriptionInput{}, []string{"url", "events"}},
		{"unknown event", webhooks.AreaAll, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"service.exploded"}}, []string{"events[0]"}},
		{"pattern outside the area", webhooks.AreaBilling, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"invoice.*", "service.*"}}, []string{"events[1]"}},
		{"everything on an area endpoint", webhooks.AreaSupport, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"*"}}, []string{"events[0]"}},
		{"empty events", webhooks.AreaAll, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{}}, []string{"events"}},
		{"malformed secret", webhooks.AreaAll, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"*"}, Secret: "hunter2"}, []string{"secret"}},
		{"short secret", webhooks.AreaAll, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"*"}, Secret: "whsec_AAAA"}, []string{"secret"}},
		{"ftp", webhooks.AreaAll, events.SubscriptionInput{URL: "ftp://hooks.example.com/x", Events: []string{"*"}}, []string{"url"}},
		{"loopback", webhooks.AreaAll, events.SubscriptionInput{URL: "http://127.0.0.1:8080/x", Events: []string{"*"}}, []string{"url"}},
		{"private by name", webhooks.AreaAll, events.SubscriptionInput{URL: "https://rebind.example/x", Events: []string{"*"}}, []string{"url"}},
		{"metadata", webhooks.AreaAll, events.SubscriptionInput{URL: "http://metadata.example/latest", Events: []string{"*"}}, []string{"url"}},
		{"filters on billing", webhooks.AreaBilling, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"invoice.*"},
			Filters: &eventlog.WebhookFilters{Priorities: []string{"high"}}}, []string{"filters"}},
		{"every issue at once", webhooks.AreaServices, events.SubscriptionInput{URL: "gopher://x", Events: []string{"ticket.*"}, Secret: "x"}, []string{"url", "events[0]", "secret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules.Spec(ctx, tc.area, tc.in)
			got := fieldsOf(t, err)
			for _, f := range tc.fields {
				if !got[f] {
					t.Fatalf("fields %v, want %v", got, tc.fields)
				}
			}
			if len(got) != len(tc.fields) {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
		})
	}
	t.Run("private addresses allowed by configuration", func(t *testing.T) {
		if _, err := events.NewSubscriptions(true, dns).Spec(ctx, webhooks.AreaAll, events.SubscriptionInput{URL: "http://127.0.0.1:8080/x", Events: []string{"*"}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a generated secret", func(t *testing.T) {
		spec, err := rules.Spec(ctx, webhooks.AreaAll, events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: []string{"*"}})
		if err != nil || webhooks.ValidateSecret(spec.Secret) != nil {
			t.Fatalf("%q %v", spec.Secret, err)
		}
		if s, err := events.Secret(""); err != nil || webhooks.ValidateSecret(s) != nil || s == spec.Secret {
			t.Fatalf("rotation secret %q %v", s, err)
		}
		if _, err := events.Secret("whsec_nope"); models.ErrorCode(err) != models.CodeValidation {
			t.Fatalf("malformed rotation secret: %v", err)
		}
	})
	t.Run("patch stays within the area", func(t *testing.T) {
		sub := &eventlog.WebhookSubscription{Area: eventlog.WebhookAreaBilling}
		if _, err := rules.Patch(ctx, sub, events.PatchInput{Events: []string{"service.*"}}); !fieldsOf(t, err)["events[0]"] {
			t.Fatal(err)
		}
		url := "http://10.1.2.3/x"
		if _, err := rules.Patch(ctx, sub, events.PatchInput{URL: &url}); !fieldsOf(t, err)["url"] {
			t.Fatal(err)
		}
		p, err := rules.Patch(ctx, sub, events.PatchInput{Events: []string{"payment.received"}})
		if err != nil || len(p.Events) != 1 || p.Events[0] != "payment.successful" {
			t.Fatalf("%+v %v", p, err)
		}
	})
}

func eventsInput(evs []string) events.SubscriptionInput {
	return events.SubscriptionInput{URL: "https://hooks.example.com/x", Events: evs, Secret: secret}
}

func eventsAreaName(a webhooks.Area) string { return events.AreaName(a) }

func TestMatches(t *testing.T) {
	ev := func(org string, env models.Environment, typ string, data map[string]any) *eventlog.Event {
		e := eventlog.NewEvent(typ, "x_1", data)
		e.OrganizationID, e.Environment = org, env
		return e
	}
	sub := func(mut func(*eventlog.WebhookSubscription)) *eventlog.WebhookSubscription {
		s := &eventlog.WebhookSubscription{Active: true, Events: []string{"*"}}
		s.OrganizationID, s.Environment = "org_a", models.EnvLive
		mut(s)
		return s
	}
	ticket := map[string]any{"ticket": map[string]any{"id": "tkt_1", "customer_id": "cust_1", "priority": "high"}}
	tests := []struct {
		name string
		sub  *eventlog.WebhookSubscription
		ev   *eventlog.Event
		want bool
	}{
		{"own event", sub(func(*eventlog.WebhookSubscription) {}), ev("org_a", models.EnvLive, "service.provisioned", nil), true},
		{"another organization", sub(func(*eventlog.WebhookSubscription) {}), ev("org_b", models.EnvLive, "service.provisioned", nil), false},
		{"another environment", sub(func(*eventlog.WebhookSubscription) {}), ev("org_a", models.EnvTest, "service.provisioned", nil), false},
		{"staff across organizations", sub(func(s *eventlog.WebhookSubscription) { s.AllOrganizations = true }), ev("org_b", models.EnvLive, "service.provisioned", nil), true},
		{"staff, another environment", sub(func(s *eventlog.WebhookSubscription) { s.AllOrganizations = true }), ev("org_b", models.EnvTest, "service.provisioned", nil), false},
		{"paused", sub(func(s *eventlog.WebhookSubscription) { s.Active = false }), ev("org_a", models.EnvLive, "service.provisioned", nil), false},
		{"other group", sub(func(s *eventlog.WebhookSubscription) { s.Events = []string{"invoice.*"} }), ev("org_a", models.EnvLive, "service.provisioned", nil), false},
		{"alias in the subscription", sub(func(s *eventlog.WebhookSubscription) { s.Events = []string{"payment.received"} }), ev("org_a", models.EnvLive, "payment.successful", nil), true},
		{"test ping never matches", sub(func(*eventlog.WebhookSubscription) {}), ev("org_a", models.EnvLive, "webhook.test", nil), false},
		{"customer filter passes", sub(func(s *eventlog.WebhookSubscription) { s.CustomerIDs = []string{"cust_1"} }), ev("org_a", models.EnvLive, "ticket.created", ticket), true},
		{"customer filter refuses", sub(func(s *eventlog.WebhookSubscription) { s.CustomerIDs = []string{"cust_2"} }), ev("org_a", models.EnvLive, "ticket.created", ticket), false},
		{"priority filter passes", sub(func(s *eventlog.WebhookSubscription) { s.Priorities = []string{"critical", "high"} }), ev("org_a", models.EnvLive, "ticket.escalated", ticket), true},
		{"priority filter refuses", sub(func(s *eventlog.WebhookSubscription) { s.Priorities = []string{"low"} }), ev("org_a", models.EnvLive, "ticket.escalated", ticket), false},
		{"top-level priority", sub(func(s *eventlog.WebhookSubscription) { s.Priorities = []string{"low"} }), ev("org_a", models.EnvLive, "sla.breach", map[string]any{"priority": "low"}), true},
		{"filter without the field", sub(func(s *eventlog.WebhookSubscription) { s.Priorities = []string{"low"} }), ev("org_a", models.EnvLive, "comment.added", map[string]any{}), false},
		{"filters ignore other areas", sub(func(s *eventlog.WebhookSubscription) { s.Priorities = []string{"low"} }), ev("org_a", models.EnvLive, "service.down", nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := events.Matches(tc.sub, tc.ev); got != tc.want {
				t.Fatalf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBodyAndReadableGroups(t *testing.T) {
	ev := eventlog.NewEvent("service.provisioned", "svc_1", map[string]any{"service": map[string]any{"id": "svc_1"}})
	ev.OrganizationID, ev.CreatedAt = "org_a", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	body, err := events.Body(ev, &eventlog.WebhookSubscription{})
	if err != nil || string(body) != `{"id":"`+ev.ID+`","event":"service.provisioned","timestamp":"2026-01-02T03:04:05Z","data":{"service":{"id":"svc_1"}}}` {
		t.Fatalf("%s %v", body, err)
	}
	body, err = events.Body(ev, &eventlog.WebhookSubscription{AllOrganizations: true})
	var m map[string]any
	if err != nil || json.Unmarshal(body, &m) != nil || m["organization_id"] != "org_a" || m["event"] != "service.provisioned" {
		t.Fatalf("%s %v", body, err)
	}

	groups, err := events.ReadableGroups(&models.Principal{Permissions: []string{"webhooks:manage"}})
	if err != nil || groups != nil {
		t.Fatal(groups, err)
	}
	groups, err = events.ReadableGroups(&models.Principal{Permissions: []string{"services:read", "support:read"}})
	if err != nil || len(groups) != 4 || groups[0] != "service" {
		t.Fatal(groups, err)
	}
	if _, err := events.ReadableGroups(&models.Principal{Permissions: []string{"auth:manage"}}); models.ErrorCode(err) != models.CodeInsufficientPermissions {
		t.Fatal(err)
	}

	for typ, want := range map[string]string{"service.provisioned": "T:service.provisioned", "invoice.generated": "T:invoice.created",
		"ticket.*": "G:ticket", "webhook.test": "T:webhook.test", "*": "", "": ""} {
		var f eventlog.EventFilter
		if err := events.TypeFilter(&f, typ); err != nil {
			t.Fatalf("%q: %v", typ, err)
		}
		got := ""
		if len(f.Types) == 1 {
			got = "T:" + f.Types[0]
		}
		if len(f.Groups) == 1 {
			got = "G:" + f.Groups[0]
		}
		if got != want {
			t.Fatalf("%q: %q, want %q", typ, got, want)
		}
	}
	var f eventlog.EventFilter
	if err := events.TypeFilter(&f, "nonsense.*"); models.ErrorCode(err) != models.CodeValidation {
		t.Fatal(err)
	}
}

// dispatchFixture is a store with one tenant and subscriptions.
type dispatchFixture struct {
	store *models.Store
	p     *models.Principal
	sub   *eventlog.WebhookSubscription
	other *eventlog.WebhookSubscription
}

func newDispatchFixture(t *testing.T) *dispatchFixture {
	t.Helper()
	ctx := context.Background()
	store := testenv.Store(t)
	provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := &models.Principal{ID: "ak_admin", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(store).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "T", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_t", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	mk := func(evs ...string) *eventlog.WebhookSubscription {
		sub, err := eventlog.NewStore(store).CreateWebhook(ctx, p, eventlog.WebhookSpec{Area: "all", URL: "https://hooks.example.com/x", Events: evs, Active: true, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}
	return &dispatchFixture{store: store, p: p, sub: mk("service.*"), other: mk("invoice.*")}
}

func (f *dispatchFixture) event(t *testing.T) *eventlog.Event {
	t.Helper()
	ev := eventlog.NewEvent(eventlog.EventServiceProvisioned, "svc_1", nil)
	if err := f.store.Tx(context.Background(), f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDispatcherIsIdempotent(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	ev := f.event(t)
	mc := mocks.NewClient(t)
	var started []string
	var startedOpts client.StartWorkflowOptions
	outage := errors.New("temporal unreachable")

	// Round 1: the workflow engine is down after the rows were written.
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(nil, outage).Once()
	d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour})
	if _, err := d.DispatchOnce(ctx); models.ErrorCode(err) != models.CodeDependencyUnavailable {
		t.Fatalf("round 1: %v", err)
	}
	rows, _ := eventlog.NewStore(f.store).EnsureDeliveries(ctx, ev, nil)
	if len(rows) != 1 || rows[0].SubscriptionID != f.sub.ID || rows[0].WorkflowStartedAt != nil {
		t.Fatalf("rows after round 1: %+v", rows)
	}
	if und, _ := eventlog.NewStore(f.store).UndispatchedEvents(ctx, 10); len(und) != 1 {
		t.Fatal("the event must stay undispatched")
	}

	// Round 2: the start went through but the answer was lost (as if the
	// process died before marking the event): the event stays undispatched.
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Run(func(args mock.Arguments) {
		startedOpts = args.Get(1).(client.StartWorkflowOptions)
		started = append(started, startedOpts.ID)
	}).Return(nil, outage).Once()
	if _, err := d.DispatchOnce(ctx); err == nil {
		t.Fatal("round 2 must fail")
	}

	// Round 3: the engine answers "already started": that is success.
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Run(func(args mock.Arguments) {
		started = append(started, args.Get(1).(client.StartWorkflowOptions).ID)
	}).Return(nil, serviceerror.NewWorkflowExecutionAlreadyStarted("already", "", "")).Once()
	st, err := d.DispatchOnce(ctx)
	if err != nil || st.Events != 1 || st.Deliveries != 1 || st.Started != 1 {
		t.Fatalf("round 3: %+v %v", st, err)
	}
	if len(started) != 2 || started[0] != rows[0].ID || started[1] != rows[0].ID {
		t.Fatalf("every start must use the one delivery id: %v", started)
	}
	if startedOpts.TaskQueue != "q" || !startedOpts.WorkflowExecutionErrorWhenAlreadyStarted || startedOpts.WorkflowIDReusePolicy != enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("options %+v", startedOpts)
	}
	if st, err := d.DispatchOnce(ctx); err != nil || st != (events.Stats{}) {
		t.Fatalf("nothing left: %+v %v", st, err)
	}
	rows, _ = eventlog.NewStore(f.store).EnsureDeliveries(ctx, ev, nil)
	if len(rows) != 1 || rows[0].WorkflowStartedAt == nil {
		t.Fatalf("rows: %+v", rows)
	}
}

func TestRedeliveriesAndTestsStartedByTheSweep(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	ev := f.event(t)
	api := events.NewDispatcher(f.store, nil, events.Options{})

	if _, err := api.Redeliver(ctx, f.p, ev.ID, ""); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("nothing received it yet: %v", err)
	}
	if _, err := api.Redeliver(ctx, f.p, ev.ID, f.other.ID); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a subscription that does not take service events: %v", err)
	}
	if _, err := api.Redeliver(ctx, f.p, "evt_missing", ""); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatal(err)
	}
	re, err := api.Redeliver(ctx, f.p, ev.ID, f.sub.ID)
	if err != nil || len(re) != 1 || re[0].Generation != 2 {
		t.Fatalf("%+v %v", re, err)
	}
	td, tev, err := api.SendTest(ctx, f.p, f.other.ID)
	if err != nil || td.SubscriptionID != f.other.ID || tev.Type != eventlog.EventWebhookTest {
		t.Fatal(td, err)
	}
	if _, err := api.Redeliver(ctx, f.p, tev.ID, f.sub.ID); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a test event goes to its subscription only: %v", err)
	}
	if again, err := api.Redeliver(ctx, f.p, tev.ID, ""); err != nil || len(again) != 1 || again[0].SubscriptionID != f.other.ID {
		t.Fatalf("redelivering a test: %+v %v", again, err)
	}

	mc := mocks.NewClient(t)
	var ids []string
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Run(func(args mock.Arguments) {
		ids = append(ids, args.Get(1).(client.StartWorkflowOptions).ID)
	}).Return(mocks.NewWorkflowRun(t), nil)
	worker := events.NewDispatcher(f.store, mc, events.Options{StartGrace: time.Nanosecond})
	st, err := worker.DispatchOnce(ctx)
	if err != nil || st.Events != 1 || st.Started != 1 || st.Resumed != 3 || len(ids) != 4 {
		t.Fatalf("%+v %v %v", st, ids, err)
	}
	if st, err := worker.DispatchOnce(ctx); err != nil || st.Resumed != 0 {
		t.Fatalf("started deliveries are not started again: %+v %v", st, err)
	}
}

func TestDispatcherOnEventHook(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	// Two events, the second one newer (rounds take the oldest first).
	first, second := f.event(t), f.event(t)
	if err := f.store.In(ctx, models.SystemScope()).Model(&eventlog.Event{}).Where("id = ?", second.ID).Update("created_at", time.Now().UTC().Add(time.Second)).Error; err != nil {
		t.Fatal(err)
	}
	mc := mocks.NewClient(t)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(mocks.NewWorkflowRun(t), nil)
	outage := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable")
	calls := map[string]int{}
	failSecond := true
	hook := func(hctx context.Context, ev *eventlog.Event) error {
		calls[ev.ID]++
		if _, ok := hctx.Deadline(); !ok {
			t.Error("the hook must run with a deadline")
		}
		// Called after the deliveries are started, before the event is marked dispatched.
		und, _ := eventlog.NewStore(f.store).UndispatchedEvents(ctx, 10)
		found := false
		for _, u := range und {
			found = found || u.ID == ev.ID
		}
		rows, _ := eventlog.NewStore(f.store).EnsureDeliveries(ctx, ev, nil)
		if !found || len(rows) != 1 || rows[0].WorkflowStartedAt == nil {
			t.Errorf("hook called on %s: undispatched %v, deliveries %+v", ev.ID, found, rows)
		}
		if ev.ID == second.ID && failSecond {
			return outage
		}
		return nil
	}
	d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour, OnEvent: hook})

	tests := []struct {
		name       string
		fail       bool
		wantErr    models.Code
		wantEvents int
		wantCalls  map[string]int
		left       int // events still undispatched after the round
	}{
		{"the hook fails on the second event: the round stops there", true, models.CodeDependencyUnavailable, 1, map[string]int{first.ID: 1, second.ID: 1}, 1},
		{"the next round calls it again for that event only", false, "", 1, map[string]int{first.ID: 1, second.ID: 2}, 0},
		{"dispatched events are not handed over again", false, "", 0, map[string]int{first.ID: 1, second.ID: 2}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			failSecond = tc.fail
			st, err := d.DispatchOnce(ctx)
			if (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && models.ErrorCode(err) != tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if st.Events != tc.wantEvents {
				t.Fatalf("stats %+v, want %d events", st, tc.wantEvents)
			}
			if len(calls) != len(tc.wantCalls) || calls[first.ID] != tc.wantCalls[first.ID] || calls[second.ID] != tc.wantCalls[second.ID] {
				t.Fatalf("hook calls %v, want %v", calls, tc.wantCalls)
			}
			if und, _ := eventlog.NewStore(f.store).UndispatchedEvents(ctx, 10); len(und) != tc.left || (tc.left == 1 && und[0].ID != second.ID) {
				t.Fatalf("undispatched %+v", und)
			}
		})
	}
	// The delivery of the event the hook refused was started once: the
	// retried round found it started.
	rows, _ := eventlog.NewStore(f.store).EnsureDeliveries(ctx, second, nil)
	if len(rows) != 1 || rows[0].WorkflowStartedAt == nil {
		t.Fatalf("deliveries %+v", rows)
	}
	mc.AssertNumberOfCalls(t, "ExecuteWorkflow", 2)
}
