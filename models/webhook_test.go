package models_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func webhookSpec(events ...string) eventlog.WebhookSpec {
	return eventlog.WebhookSpec{Area: eventlog.WebhookAreaAll, URL: "https://hooks.example.com/x", Events: events, Active: true, Secret: testSecret}
}

// recordEvent commits an event of p's tenant at `at`, as a state change would.
func recordEvent(t *testing.T, s *models.Store, scope models.Scope, typ, resource string, at time.Time, data map[string]any) *eventlog.Event {
	t.Helper()
	ev := eventlog.NewEvent(typ, resource, data)
	ev.CreatedAt = at
	if err := s.Tx(context.Background(), scope, func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestWebhookSubscriptionLifecycle(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	pb, _ := provisioningTenant(t, s, "B")
	paTest := &models.Principal{ID: "ak_t", OrganizationID: pa.OrganizationID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}

	t.Run("creation rules", func(t *testing.T) {
		tests := []struct {
			name string
			p    *models.Principal
			spec func(*eventlog.WebhookSpec)
			code models.Code
		}{
			{"customer", pa, func(*eventlog.WebhookSpec) {}, ""},
			{"customer across organizations", pa, func(sp *eventlog.WebhookSpec) { sp.AllOrganizations = true }, models.CodeInsufficientPermissions},
			{"staff across organizations", admin(t, s), func(sp *eventlog.WebhookSpec) { sp.AllOrganizations = true }, ""},
			{"unknown priority", pa, func(sp *eventlog.WebhookSpec) { sp.Priorities = []string{"urgent"} }, models.CodeValidation},
			{"empty customer id", pa, func(sp *eventlog.WebhookSpec) { sp.CustomerIDs = []string{""} }, models.CodeValidation},
			{"long description", pa, func(sp *eventlog.WebhookSpec) { sp.Description = string(make([]byte, 501)) }, models.CodeValidation},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				spec := webhookSpec("service.*")
				tc.spec(&spec)
				sub, err := eventlog.NewStore(s).CreateWebhook(ctx, tc.p, spec)
				if models.ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
					t.Fatalf("error %v, want %q", err, tc.code)
				}
				if tc.code == "" && (sub.Secret == testSecret || sub.OrganizationID != tc.p.OrganizationID || !models.HasPrefix(sub.ID, "wh")) {
					t.Fatalf("stored %+v (the secret must be sealed)", sub)
				}
			})
		}
	})

	sub, err := eventlog.NewStore(s).CreateWebhook(ctx, pa, webhookSpec("service.provisioned"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("tenancy", func(t *testing.T) {
		for _, p := range []*models.Principal{pb, paTest} {
			if _, err := eventlog.NewStore(s).GetWebhook(ctx, p, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("another tenant or environment sees the subscription: %v", err)
			}
			if _, err := eventlog.NewStore(s).UpdateWebhook(ctx, p, sub.ID, eventlog.WebhookPatch{}); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("update by another tenant: %v", err)
			}
			if err := eventlog.NewStore(s).DeleteWebhook(ctx, p, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("delete by another tenant: %v", err)
			}
			list, total, err := eventlog.NewStore(s).ListWebhooks(ctx, p, eventlog.WebhookListFilter{}, models.PageRequest{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range list {
				if w.ID == sub.ID {
					t.Fatalf("listed to another tenant (%d)", total)
				}
			}
		}
	})

	t.Run("patch, pause and rotate", func(t *testing.T) {
		url, active := "https://hooks.example.com/y", false
		got, err := eventlog.NewStore(s).UpdateWebhook(ctx, pa, sub.ID, eventlog.WebhookPatch{URL: &url, Events: []string{"service.*"},
			Filters: &eventlog.WebhookFilters{Priorities: []string{"high"}}})
		if err != nil || got.URL != url || len(got.Events) != 1 || got.Events[0] != "service.*" || got.Priorities[0] != "high" || !got.Active {
			t.Fatalf("%+v %v", got, err)
		}
		ev := recordEvent(t, s, pa.OwnScope(), eventlog.EventServiceProvisioned, "svc_1", time.Now().UTC(), nil)
		dels, err := eventlog.NewStore(s).EnsureDeliveries(ctx, ev, []eventlog.WebhookSubscription{*got})
		if err != nil || len(dels) != 1 {
			t.Fatal(dels, err)
		}
		if got, err = eventlog.NewStore(s).UpdateWebhook(ctx, pa, sub.ID, eventlog.WebhookPatch{Active: &active}); err != nil || got.Active {
			t.Fatalf("pause: %+v %v", got, err)
		}
		d, _ := eventlog.NewStore(s).DeliveryIn(ctx, pa.OwnScope(), dels[0].ID)
		if d.Status != eventlog.DeliveryCancelled || d.StatusReason != "the subscription was paused" || d.CompletedAt == nil {
			t.Fatalf("pausing must cancel pending deliveries: %+v", d)
		}
		if list, _, err := eventlog.NewStore(s).ListWebhooks(ctx, pa, eventlog.WebhookListFilter{Active: &active}, models.PageRequest{Limit: 50}); err != nil || len(list) != 1 {
			t.Fatalf("filter by active: %v %v", list, err)
		}

		cur, prev, err := eventlog.NewStore(s).WebhookSecrets(got)
		if err != nil || cur != testSecret || prev != "" {
			t.Fatalf("secrets %q %q %v", cur, prev, err)
		}
		const next = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		rotated, err := eventlog.NewStore(s).RotateWebhookSecret(ctx, pa, sub.ID, next)
		if err != nil || rotated.SecretRotatedAt == nil {
			t.Fatal(rotated, err)
		}
		if cur, prev, err = eventlog.NewStore(s).WebhookSecrets(rotated); err != nil || cur != next || prev != testSecret {
			t.Fatalf("after rotation: %q %q %v", cur, prev, err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := eventlog.NewStore(s).DeleteWebhook(ctx, pa, sub.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := eventlog.NewStore(s).GetWebhook(ctx, pa, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("deleted: %v", err)
		}
		if err := eventlog.NewStore(s).DeleteWebhook(ctx, pa, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("deleting twice: %v", err)
		}
	})
}

func TestDeliveriesArePlannedOncePerEventAndSubscription(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	pb, _ := provisioningTenant(t, s, "B")
	staff := admin(t, s)
	paTest := &models.Principal{ID: "ak_t", OrganizationID: pa.OrganizationID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	mk := func(p *models.Principal, spec eventlog.WebhookSpec) *eventlog.WebhookSubscription {
		t.Helper()
		sub, err := eventlog.NewStore(s).CreateWebhook(ctx, p, spec)
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}
	own := mk(pa, webhookSpec("service.*"))
	crossSpec := webhookSpec("*")
	crossSpec.AllOrganizations = true
	cross := mk(staff, crossSpec)
	other := mk(pb, webhookSpec("service.*"))
	sandbox := mk(paTest, webhookSpec("service.*"))
	pausedSpec := webhookSpec("service.*")
	pausedSpec.Active = false
	paused := mk(pa, pausedSpec)

	ev := recordEvent(t, s, pa.OwnScope(), eventlog.EventServiceProvisioned, "svc_1", time.Now().UTC(), map[string]any{"x": 1})
	later := mk(pa, webhookSpec("service.*")) // created after the event: it does not receive it
	cands, err := eventlog.NewStore(s).CandidateSubscriptions(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range cands {
		ids[c.ID] = true
	}
	if !ids[own.ID] || !ids[cross.ID] || ids[other.ID] || ids[sandbox.ID] || ids[paused.ID] || ids[later.ID] {
		t.Fatalf("candidates %v: want own and staff cross-tenant only", ids)
	}
	for _, sub := range []*eventlog.WebhookSubscription{own, cross} {
		if !eventlog.SubscriptionMayReceive(sub, ev) {
			t.Fatalf("%s may receive", sub.ID)
		}
	}
	if eventlog.SubscriptionMayReceive(other, ev) || eventlog.SubscriptionMayReceive(sandbox, ev) {
		t.Fatal("tenancy must refuse other tenants and environments")
	}

	subs := []eventlog.WebhookSubscription{*own, *cross}
	first, err := eventlog.NewStore(s).EnsureDeliveries(ctx, ev, subs)
	if err != nil || len(first) != 2 {
		t.Fatal(first, err)
	}
	again, err := eventlog.NewStore(s).EnsureDeliveries(ctx, ev, subs)
	if err != nil || len(again) != 2 || again[0].ID != first[0].ID || again[1].ID != first[1].ID {
		t.Fatalf("a repeated dispatch must keep the rows: %v %v", again, err)
	}
	for _, d := range first {
		if d.Generation != 1 || d.Reason != eventlog.DeliveryForEvent || d.Status != eventlog.DeliveryPending || d.EventType != ev.Type || d.ResourceID != "svc_1" {
			t.Fatalf("delivery %+v", d)
		}
	}
	if first[1].OrganizationID != staff.OrganizationID {
		t.Fatalf("a delivery belongs to its subscription's tenant: %+v", first[1])
	}

	// Unstarted deliveries are found until marked started; events until dispatched.
	pending, err := eventlog.NewStore(s).UnstartedDeliveries(ctx, time.Now().UTC().Add(time.Minute), 10)
	if err != nil || len(pending) != 2 {
		t.Fatal(pending, err)
	}
	if err := eventlog.NewStore(s).MarkDeliveryStarted(ctx, first[0].ID); err != nil {
		t.Fatal(err)
	}
	if pending, _ = eventlog.NewStore(s).UnstartedDeliveries(ctx, time.Now().UTC().Add(time.Minute), 10); len(pending) != 1 || pending[0].ID != first[1].ID {
		t.Fatalf("after start: %v", pending)
	}
	undispatched, err := eventlog.NewStore(s).UndispatchedEvents(ctx, 10)
	if err != nil || len(undispatched) != 1 || undispatched[0].ID != ev.ID {
		t.Fatal(undispatched, err)
	}
	if err := eventlog.NewStore(s).MarkEventDispatched(ctx, ev.ID); err != nil {
		t.Fatal(err)
	}
	if undispatched, _ = eventlog.NewStore(s).UndispatchedEvents(ctx, 10); len(undispatched) != 0 {
		t.Fatalf("dispatched events stay: %v", undispatched)
	}

	// Redeliveries take the next generation; the matched subscriptions are remembered.
	matched, err := eventlog.NewStore(s).MatchedSubscriptionIDs(ctx, pa, ev.ID)
	if err != nil || len(matched) != 1 || matched[0] != own.ID {
		t.Fatalf("a customer sees its own subscriptions only: %v %v", matched, err)
	}
	for want := 2; want <= 3; want++ {
		re, err := eventlog.NewStore(s).CreateRedeliveries(ctx, pa, ev, []eventlog.WebhookSubscription{*own})
		if err != nil || len(re) != 1 || re[0].Generation != want || re[0].Reason != eventlog.DeliveryRedelivery {
			t.Fatalf("redelivery %d: %+v %v", want, re, err)
		}
	}
	if ds, _, err := eventlog.NewStore(s).DeliveriesOfEvent(ctx, pa, ev.ID); err != nil || len(ds) != 3 {
		t.Fatalf("deliveries of the event seen by A: %d %v", len(ds), err)
	}
	if ds, _, err := eventlog.NewStore(s).DeliveriesOfEvent(ctx, staff, ev.ID); err != nil || len(ds) != 4 {
		t.Fatalf("staff see every tenant's deliveries: %d %v", len(ds), err)
	}

	// A test ping is an event already dispatched, delivered to one subscription.
	td, tev, err := eventlog.NewStore(s).CreateTestDelivery(ctx, paused, map[string]any{"webhook_id": paused.ID})
	if err != nil || td.Reason != eventlog.DeliveryTest || td.SubscriptionID != paused.ID || tev.Type != eventlog.EventWebhookTest || tev.DispatchedAt == nil {
		t.Fatalf("%+v %+v %v", td, tev, err)
	}
	if undispatched, _ = eventlog.NewStore(s).UndispatchedEvents(ctx, 10); len(undispatched) != 0 {
		t.Fatalf("a test event is not dispatched again: %v", undispatched)
	}
}

func TestDeliveryAttemptsAndOrdering(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	scope := pa.OwnScope()
	sub, err := eventlog.NewStore(s).CreateWebhook(ctx, pa, webhookSpec("service.*"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(time.Second).Truncate(time.Microsecond)
	ev1 := recordEvent(t, s, scope, "service.status_changed", "svc_1", t0, nil)
	ev2 := recordEvent(t, s, scope, eventlog.EventServiceProvisioned, "svc_1", t0.Add(time.Millisecond), nil)
	ev3 := recordEvent(t, s, scope, eventlog.EventServiceProvisioned, "svc_2", t0, nil)
	var d [3]eventlog.WebhookDelivery
	for i, ev := range []*eventlog.Event{ev1, ev2, ev3} {
		ds, err := eventlog.NewStore(s).EnsureDeliveries(ctx, ev, []eventlog.WebhookSubscription{*sub})
		if err != nil {
			t.Fatal(err)
		}
		d[i] = ds[0]
	}
	ready := func(d *eventlog.WebhookDelivery) bool {
		t.Helper()
		got, err := eventlog.NewStore(s).DeliveryIn(ctx, scope, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := eventlog.NewStore(s).DeliveryReady(ctx, scope, got)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ready(&d[0]) || ready(&d[1]) || !ready(&d[2]) {
		t.Fatal("the second event of svc_1 must wait for the first; another resource need not")
	}

	fail := &eventlog.WebhookAttempt{DeliveryID: d[0].ID, Number: 1, AttemptedAt: t0, StatusCode: 503, LatencyMs: 12, Error: "non-2xx response: HTTP 503", ResponseBody: "busy"}
	next := t0.Add(5 * time.Second)
	got, err := eventlog.NewStore(s).RecordDeliveryAttempt(ctx, scope, fail, &next)
	if err != nil || got.Attempts != 1 || got.Status != eventlog.DeliveryPending || got.LastStatusCode != 503 || got.NextAttemptAt == nil {
		t.Fatalf("%+v %v", got, err)
	}
	if !ready(&d[1]) {
		t.Fatal("once the earlier event was attempted, the next one goes")
	}
	// The same attempt number again keeps the first record.
	dup := &eventlog.WebhookAttempt{DeliveryID: d[0].ID, Number: 1, AttemptedAt: t0, StatusCode: 200, Success: true}
	if got, err = eventlog.NewStore(s).RecordDeliveryAttempt(ctx, scope, dup, nil); err != nil || got.Status != eventlog.DeliveryPending || got.LastStatusCode != 503 {
		t.Fatalf("a repeated attempt must not overwrite: %+v %v", got, err)
	}
	if a, err := eventlog.NewStore(s).AttemptOf(ctx, scope, d[0].ID, 1); err != nil || a == nil || a.StatusCode != 503 || a.Success {
		t.Fatalf("attempt 1: %+v %v", a, err)
	}
	if a, err := eventlog.NewStore(s).AttemptOf(ctx, scope, d[0].ID, 2); err != nil || a != nil {
		t.Fatalf("attempt 2 was not made: %+v %v", a, err)
	}
	ok := &eventlog.WebhookAttempt{DeliveryID: d[0].ID, Number: 2, AttemptedAt: t0.Add(5 * time.Second), StatusCode: 204, Success: true}
	if got, err = eventlog.NewStore(s).RecordDeliveryAttempt(ctx, scope, ok, nil); err != nil || got.Status != eventlog.DeliverySucceeded || got.Attempts != 2 || got.CompletedAt == nil || got.NextAttemptAt != nil {
		t.Fatalf("success: %+v %v", got, err)
	}
	if err := eventlog.NewStore(s).FinishDelivery(ctx, scope, d[0].ID, eventlog.DeliveryFailed, "late"); err != nil {
		t.Fatal(err)
	}
	if got, _ = eventlog.NewStore(s).DeliveryIn(ctx, scope, d[0].ID); got.Status != eventlog.DeliverySucceeded {
		t.Fatalf("an ended delivery stays ended: %s", got.Status)
	}
	if err := eventlog.NewStore(s).FinishDelivery(ctx, scope, d[2].ID, eventlog.DeliveryFailed, "every attempt failed"); err != nil {
		t.Fatal(err)
	}

	ds, atts, total, err := eventlog.NewStore(s).ListDeliveries(ctx, pa, sub.ID, eventlog.DeliveryListFilter{}, models.PageRequest{Limit: 50})
	if err != nil || total != 3 || len(atts[d[0].ID]) != 2 || atts[d[0].ID][0].Number != 1 || atts[d[0].ID][1].Number != 2 {
		t.Fatalf("list: %d %v %v", total, atts, err)
	}
	_ = ds
	failed, _, total, err := eventlog.NewStore(s).ListDeliveries(ctx, pa, sub.ID, eventlog.DeliveryListFilter{Status: eventlog.DeliveryFailed}, models.PageRequest{Limit: 50})
	if err != nil || total != 1 || failed[0].ID != d[2].ID || failed[0].StatusReason != "every attempt failed" {
		t.Fatalf("failed: %+v %v", failed, err)
	}
	if _, _, _, err := eventlog.NewStore(s).ListDeliveries(ctx, pa, sub.ID, eventlog.DeliveryListFilter{Status: "lost"}, models.PageRequest{Limit: 50}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("unknown status: %v", err)
	}
	pb, _ := provisioningTenant(t, s, "B")
	if _, _, _, err := eventlog.NewStore(s).ListDeliveries(ctx, pb, sub.ID, eventlog.DeliveryListFilter{}, models.PageRequest{Limit: 50}); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
}

func TestListEvents(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	pb, _ := provisioningTenant(t, s, "B")
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	recordEvent(t, s, pa.OwnScope(), eventlog.EventServiceProvisioned, "svc_1", t0, nil)
	recordEvent(t, s, pa.OwnScope(), "service.status_changed", "svc_1", t0.Add(time.Minute), nil)
	recordEvent(t, s, pa.OwnScope(), "invoice.created", "inv_1", t0.Add(2*time.Minute), nil)
	recordEvent(t, s, pb.OwnScope(), eventlog.EventServiceProvisioned, "svc_9", t0, nil)
	after, before := t0.Add(time.Minute), t0.Add(2*time.Minute)
	tests := []struct {
		name string
		f    eventlog.EventFilter
		want int64
	}{
		{"all", eventlog.EventFilter{}, 3},
		{"type", eventlog.EventFilter{Types: []string{eventlog.EventServiceProvisioned}}, 1},
		{"group", eventlog.EventFilter{Groups: []string{"service"}}, 2},
		{"type or group", eventlog.EventFilter{Types: []string{"invoice.created"}, Groups: []string{"service"}}, 3},
		{"readable services only", eventlog.EventFilter{Readable: []string{"service"}}, 2},
		{"nothing readable", eventlog.EventFilter{Readable: []string{}}, 0},
		{"resource", eventlog.EventFilter{ResourceID: "inv_1"}, 1},
		{"created range", eventlog.EventFilter{CreatedAfter: &after, CreatedBefore: &before}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, total, err := eventlog.NewStore(s).ListEvents(ctx, pa, tc.f, models.PageRequest{Limit: 50})
			if err != nil || total != tc.want || int64(len(evs)) != tc.want {
				t.Fatalf("%d events (total %d), want %d: %v", len(evs), total, tc.want, err)
			}
			for _, ev := range evs {
				if ev.OrganizationID != pa.OrganizationID {
					t.Fatalf("another tenant's event: %+v", ev)
				}
			}
		})
	}
	evs, _, _ := eventlog.NewStore(s).ListEvents(ctx, pa, eventlog.EventFilter{}, models.PageRequest{Limit: 50})
	if evs[0].Type != "invoice.created" {
		t.Fatalf("newest first: %+v", evs)
	}
	if _, err := eventlog.NewStore(s).GetEvent(ctx, pa, evs[0].ID, []string{"service"}); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("an unreadable group is not found: %v", err)
	}
	if got, err := eventlog.NewStore(s).GetEvent(ctx, pa, evs[0].ID, nil); err != nil || got.ID != evs[0].ID {
		t.Fatal(got, err)
	}
	if _, err := eventlog.NewStore(s).GetEvent(ctx, pb, evs[0].ID, nil); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
	if got, err := eventlog.NewStore(s).EventByID(ctx, evs[0].ID); err != nil || got.ID != evs[0].ID {
		t.Fatal(got, err)
	}
}

// TestEventDeliveriesInBatches covers the dispatcher's batch calls: rows of
// several events inserted in one call (a repeated call keeps the existing
// rows and their ids), read back per event, marked started and their
// events dispatched, each once.
func TestEventDeliveriesInBatches(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	el := eventlog.NewStore(s)
	var subs []*eventlog.WebhookSubscription
	for range 3 {
		sub, err := el.CreateWebhook(ctx, pa, webhookSpec("service.*"))
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	at := time.Now().UTC().Add(time.Minute)
	var evs []*eventlog.Event
	var ids []string
	for i := range 4 {
		ev := recordEvent(t, s, pa.OwnScope(), eventlog.EventServiceProvisioned, "svc_1", at.Add(time.Duration(i)*time.Second), nil)
		evs, ids = append(evs, ev), append(ids, ev.ID)
	}
	rows := func() []*eventlog.WebhookDelivery {
		var out []*eventlog.WebhookDelivery
		for _, ev := range evs {
			for _, sub := range subs {
				out = append(out, eventlog.NewEventDelivery(ev, sub, eventlog.DeliveryToWebhook))
			}
		}
		return out
	}
	if err := el.InsertEventDeliveries(ctx, rows()); err != nil {
		t.Fatal(err)
	}
	first, err := el.EventDeliveries(ctx, ids)
	if err != nil || len(first) != 12 {
		t.Fatalf("%d rows: %v", len(first), err)
	}
	if err := el.InsertEventDeliveries(ctx, rows()); err != nil {
		t.Fatal(err)
	}
	again, err := el.EventDeliveries(ctx, ids)
	if err != nil || len(again) != 12 {
		t.Fatalf("%d rows: %v", len(again), err)
	}
	seen := map[string]bool{}
	for _, d := range first {
		seen[d.ID] = true
		if d.Generation != 1 || d.Reason != eventlog.DeliveryForEvent || d.Kind != eventlog.DeliveryToWebhook || d.OrganizationID != pa.OrganizationID {
			t.Fatalf("row %+v", d)
		}
	}
	for _, d := range again {
		if !seen[d.ID] {
			t.Fatalf("a repeated insert must keep the rows: %s is new", d.ID)
		}
	}
	if one, err := el.EventDeliveries(ctx, ids[:1]); err != nil || len(one) != 3 || one[0].EventID != ids[0] {
		t.Fatalf("one event's rows: %+v %v", one, err)
	}

	startIDs := []string{first[0].ID, first[5].ID}
	if err := el.MarkDeliveriesStarted(ctx, startIDs); err != nil {
		t.Fatal(err)
	}
	got, _ := el.EventDeliveries(ctx, ids)
	marks := map[string]time.Time{}
	for _, d := range got {
		if (d.WorkflowStartedAt != nil) != (d.ID == startIDs[0] || d.ID == startIDs[1]) {
			t.Fatalf("row %s started at %v", d.ID, d.WorkflowStartedAt)
		}
		if d.WorkflowStartedAt != nil {
			marks[d.ID] = *d.WorkflowStartedAt
		}
	}
	// Marking again keeps the first mark.
	if err := el.MarkDeliveriesStarted(ctx, []string{first[0].ID}); err != nil {
		t.Fatal(err)
	}
	got, _ = el.EventDeliveries(ctx, ids[:1])
	for _, d := range got {
		if d.ID == first[0].ID && !d.WorkflowStartedAt.Equal(marks[d.ID]) {
			t.Fatalf("mark moved: %v, was %v", d.WorkflowStartedAt, marks[d.ID])
		}
	}

	if err := el.MarkEventsDispatched(ctx, ids[:3]); err != nil {
		t.Fatal(err)
	}
	und, err := el.UndispatchedEvents(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, u := range und {
		for _, id := range ids {
			if u.ID == id {
				left++
				if id != ids[3] {
					t.Fatalf("event %s still undispatched", id)
				}
			}
		}
	}
	if left != 1 {
		t.Fatalf("%d of the events left undispatched, want 1", left)
	}
}
