package models_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func webhookSpec(events ...string) models.WebhookSpec {
	return models.WebhookSpec{Area: models.WebhookAreaAll, URL: "https://hooks.example.com/x", Events: events, Active: true, Secret: testSecret}
}

// recordEvent commits an event of p's tenant at `at`, as a state change would.
func recordEvent(t *testing.T, s *models.Store, scope models.Scope, typ, resource string, at time.Time, data map[string]any) *models.Event {
	t.Helper()
	ev := models.NewEvent(typ, resource, data)
	ev.CreatedAt = at
	if err := s.Tx(context.Background(), scope, func(tx *gorm.DB) error { return models.RecordEvent(tx, ev) }); err != nil {
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
			spec func(*models.WebhookSpec)
			code models.Code
		}{
			{"customer", pa, func(*models.WebhookSpec) {}, ""},
			{"customer across organizations", pa, func(sp *models.WebhookSpec) { sp.AllOrganizations = true }, models.CodeInsufficientPermissions},
			{"staff across organizations", admin(t, s), func(sp *models.WebhookSpec) { sp.AllOrganizations = true }, ""},
			{"unknown priority", pa, func(sp *models.WebhookSpec) { sp.Priorities = []string{"urgent"} }, models.CodeValidation},
			{"empty customer id", pa, func(sp *models.WebhookSpec) { sp.CustomerIDs = []string{""} }, models.CodeValidation},
			{"long description", pa, func(sp *models.WebhookSpec) { sp.Description = string(make([]byte, 501)) }, models.CodeValidation},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				spec := webhookSpec("service.*")
				tc.spec(&spec)
				sub, err := s.CreateWebhook(ctx, tc.p, spec)
				if models.ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) {
					t.Fatalf("error %v, want %q", err, tc.code)
				}
				if tc.code == "" && (sub.Secret == testSecret || sub.OrganizationID != tc.p.OrganizationID || !models.HasPrefix(sub.ID, "wh")) {
					t.Fatalf("stored %+v (the secret must be sealed)", sub)
				}
			})
		}
	})

	sub, err := s.CreateWebhook(ctx, pa, webhookSpec("service.provisioned"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("tenancy", func(t *testing.T) {
		for _, p := range []*models.Principal{pb, paTest} {
			if _, err := s.GetWebhook(ctx, p, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("another tenant or environment sees the subscription: %v", err)
			}
			if _, err := s.UpdateWebhook(ctx, p, sub.ID, models.WebhookPatch{}); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("update by another tenant: %v", err)
			}
			if err := s.DeleteWebhook(ctx, p, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("delete by another tenant: %v", err)
			}
			list, total, err := s.ListWebhooks(ctx, p, models.WebhookListFilter{}, models.PageRequest{Limit: 50})
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
		got, err := s.UpdateWebhook(ctx, pa, sub.ID, models.WebhookPatch{URL: &url, Events: []string{"service.*"},
			Filters: &models.WebhookFilters{Priorities: []string{"high"}}})
		if err != nil || got.URL != url || len(got.Events) != 1 || got.Events[0] != "service.*" || got.Priorities[0] != "high" || !got.Active {
			t.Fatalf("%+v %v", got, err)
		}
		ev := recordEvent(t, s, pa.OwnScope(), models.EventServiceProvisioned, "svc_1", time.Now().UTC(), nil)
		dels, err := s.EnsureDeliveries(ctx, ev, []models.WebhookSubscription{*got})
		if err != nil || len(dels) != 1 {
			t.Fatal(dels, err)
		}
		if got, err = s.UpdateWebhook(ctx, pa, sub.ID, models.WebhookPatch{Active: &active}); err != nil || got.Active {
			t.Fatalf("pause: %+v %v", got, err)
		}
		d, _ := s.DeliveryIn(ctx, pa.OwnScope(), dels[0].ID)
		if d.Status != models.DeliveryCancelled || d.StatusReason != "the subscription was paused" || d.CompletedAt == nil {
			t.Fatalf("pausing must cancel pending deliveries: %+v", d)
		}
		if list, _, err := s.ListWebhooks(ctx, pa, models.WebhookListFilter{Active: &active}, models.PageRequest{Limit: 50}); err != nil || len(list) != 1 {
			t.Fatalf("filter by active: %v %v", list, err)
		}

		cur, prev, err := s.WebhookSecrets(got)
		if err != nil || cur != testSecret || prev != "" {
			t.Fatalf("secrets %q %q %v", cur, prev, err)
		}
		const next = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		rotated, err := s.RotateWebhookSecret(ctx, pa, sub.ID, next)
		if err != nil || rotated.SecretRotatedAt == nil {
			t.Fatal(rotated, err)
		}
		if cur, prev, err = s.WebhookSecrets(rotated); err != nil || cur != next || prev != testSecret {
			t.Fatalf("after rotation: %q %q %v", cur, prev, err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.DeleteWebhook(ctx, pa, sub.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetWebhook(ctx, pa, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("deleted: %v", err)
		}
		if err := s.DeleteWebhook(ctx, pa, sub.ID); models.ErrorCode(err) != models.CodeNotFound {
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
	mk := func(p *models.Principal, spec models.WebhookSpec) *models.WebhookSubscription {
		t.Helper()
		sub, err := s.CreateWebhook(ctx, p, spec)
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

	ev := recordEvent(t, s, pa.OwnScope(), models.EventServiceProvisioned, "svc_1", time.Now().UTC(), map[string]any{"x": 1})
	later := mk(pa, webhookSpec("service.*")) // created after the event: it does not receive it
	cands, err := s.CandidateSubscriptions(ctx, ev)
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
	for _, sub := range []*models.WebhookSubscription{own, cross} {
		if !models.SubscriptionMayReceive(sub, ev) {
			t.Fatalf("%s may receive", sub.ID)
		}
	}
	if models.SubscriptionMayReceive(other, ev) || models.SubscriptionMayReceive(sandbox, ev) {
		t.Fatal("tenancy must refuse other tenants and environments")
	}

	subs := []models.WebhookSubscription{*own, *cross}
	first, err := s.EnsureDeliveries(ctx, ev, subs)
	if err != nil || len(first) != 2 {
		t.Fatal(first, err)
	}
	again, err := s.EnsureDeliveries(ctx, ev, subs)
	if err != nil || len(again) != 2 || again[0].ID != first[0].ID || again[1].ID != first[1].ID {
		t.Fatalf("a repeated dispatch must keep the rows: %v %v", again, err)
	}
	for _, d := range first {
		if d.Generation != 1 || d.Reason != models.DeliveryForEvent || d.Status != models.DeliveryPending || d.EventType != ev.Type || d.ResourceID != "svc_1" {
			t.Fatalf("delivery %+v", d)
		}
	}
	if first[1].OrganizationID != staff.OrganizationID {
		t.Fatalf("a delivery belongs to its subscription's tenant: %+v", first[1])
	}

	// Unstarted deliveries are found until marked started; events until dispatched.
	pending, err := s.UnstartedDeliveries(ctx, time.Now().UTC().Add(time.Minute), 10)
	if err != nil || len(pending) != 2 {
		t.Fatal(pending, err)
	}
	if err := s.MarkDeliveryStarted(ctx, first[0].ID); err != nil {
		t.Fatal(err)
	}
	if pending, _ = s.UnstartedDeliveries(ctx, time.Now().UTC().Add(time.Minute), 10); len(pending) != 1 || pending[0].ID != first[1].ID {
		t.Fatalf("after start: %v", pending)
	}
	undispatched, err := s.UndispatchedEvents(ctx, 10)
	if err != nil || len(undispatched) != 1 || undispatched[0].ID != ev.ID {
		t.Fatal(undispatched, err)
	}
	if err := s.MarkEventDispatched(ctx, ev.ID); err != nil {
		t.Fatal(err)
	}
	if undispatched, _ = s.UndispatchedEvents(ctx, 10); len(undispatched) != 0 {
		t.Fatalf("dispatched events stay: %v", undispatched)
	}

	// Redeliveries take the next generation; the matched subscriptions are remembered.
	matched, err := s.MatchedSubscriptionIDs(ctx, pa, ev.ID)
	if err != nil || len(matched) != 1 || matched[0] != own.ID {
		t.Fatalf("a customer sees its own subscriptions only: %v %v", matched, err)
	}
	for want := 2; want <= 3; want++ {
		re, err := s.CreateRedeliveries(ctx, pa, ev, []models.WebhookSubscription{*own})
		if err != nil || len(re) != 1 || re[0].Generation != want || re[0].Reason != models.DeliveryRedelivery {
			t.Fatalf("redelivery %d: %+v %v", want, re, err)
		}
	}
	if ds, _, err := s.DeliveriesOfEvent(ctx, pa, ev.ID); err != nil || len(ds) != 3 {
		t.Fatalf("deliveries of the event seen by A: %d %v", len(ds), err)
	}
	if ds, _, err := s.DeliveriesOfEvent(ctx, staff, ev.ID); err != nil || len(ds) != 4 {
		t.Fatalf("staff see every tenant's deliveries: %d %v", len(ds), err)
	}

	// A test ping is an event already dispatched, delivered to one subscription.
	td, tev, err := s.CreateTestDelivery(ctx, paused, map[string]any{"webhook_id": paused.ID})
	if err != nil || td.Reason != models.DeliveryTest || td.SubscriptionID != paused.ID || tev.Type != models.EventWebhookTest || tev.DispatchedAt == nil {
		t.Fatalf("%+v %+v %v", td, tev, err)
	}
	if undispatched, _ = s.UndispatchedEvents(ctx, 10); len(undispatched) != 0 {
		t.Fatalf("a test event is not dispatched again: %v", undispatched)
	}
}

func TestDeliveryAttemptsAndOrdering(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	scope := pa.OwnScope()
	sub, err := s.CreateWebhook(ctx, pa, webhookSpec("service.*"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(time.Second).Truncate(time.Microsecond)
	ev1 := recordEvent(t, s, scope, "service.status_changed", "svc_1", t0, nil)
	ev2 := recordEvent(t, s, scope, models.EventServiceProvisioned, "svc_1", t0.Add(time.Millisecond), nil)
	ev3 := recordEvent(t, s, scope, models.EventServiceProvisioned, "svc_2", t0, nil)
	var d [3]models.WebhookDelivery
	for i, ev := range []*models.Event{ev1, ev2, ev3} {
		ds, err := s.EnsureDeliveries(ctx, ev, []models.WebhookSubscription{*sub})
		if err != nil {
			t.Fatal(err)
		}
		d[i] = ds[0]
	}
	ready := func(d *models.WebhookDelivery) bool {
		t.Helper()
		got, err := s.DeliveryIn(ctx, scope, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := s.DeliveryReady(ctx, scope, got)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ready(&d[0]) || ready(&d[1]) || !ready(&d[2]) {
		t.Fatal("the second event of svc_1 must wait for the first; another resource need not")
	}

	fail := &models.WebhookAttempt{DeliveryID: d[0].ID, Number: 1, AttemptedAt: t0, StatusCode: 503, LatencyMs: 12, Error: "non-2xx response: HTTP 503", ResponseBody: "busy"}
	next := t0.Add(5 * time.Second)
	got, err := s.RecordDeliveryAttempt(ctx, scope, fail, &next)
	if err != nil || got.Attempts != 1 || got.Status != models.DeliveryPending || got.LastStatusCode != 503 || got.NextAttemptAt == nil {
		t.Fatalf("%+v %v", got, err)
	}
	if !ready(&d[1]) {
		t.Fatal("once the earlier event was attempted, the next one goes")
	}
	// The same attempt number again keeps the first record.
	dup := &models.WebhookAttempt{DeliveryID: d[0].ID, Number: 1, AttemptedAt: t0, StatusCode: 200, Success: true}
	if got, err = s.RecordDeliveryAttempt(ctx, scope, dup, nil); err != nil || got.Status != models.DeliveryPending || got.LastStatusCode != 503 {
		t.Fatalf("a repeated attempt must not overwrite: %+v %v", got, err)
	}
	if a, err := s.AttemptOf(ctx, scope, d[0].ID, 1); err != nil || a == nil || a.StatusCode != 503 || a.Success {
		t.Fatalf("attempt 1: %+v %v", a, err)
	}
	if a, err := s.AttemptOf(ctx, scope, d[0].ID, 2); err != nil || a != nil {
		t.Fatalf("attempt 2 was not made: %+v %v", a, err)
	}
	ok := &models.WebhookAttempt{DeliveryID: d[0].ID, Number: 2, AttemptedAt: t0.Add(5 * time.Second), StatusCode: 204, Success: true}
	if got, err = s.RecordDeliveryAttempt(ctx, scope, ok, nil); err != nil || got.Status != models.DeliverySucceeded || got.Attempts != 2 || got.CompletedAt == nil || got.NextAttemptAt != nil {
		t.Fatalf("success: %+v %v", got, err)
	}
	if err := s.FinishDelivery(ctx, scope, d[0].ID, models.DeliveryFailed, "late"); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.DeliveryIn(ctx, scope, d[0].ID); got.Status != models.DeliverySucceeded {
		t.Fatalf("an ended delivery stays ended: %s", got.Status)
	}
	if err := s.FinishDelivery(ctx, scope, d[2].ID, models.DeliveryFailed, "every attempt failed"); err != nil {
		t.Fatal(err)
	}

	ds, atts, total, err := s.ListDeliveries(ctx, pa, sub.ID, models.DeliveryListFilter{}, models.PageRequest{Limit: 50})
	if err != nil || total != 3 || len(atts[d[0].ID]) != 2 || atts[d[0].ID][0].Number != 1 || atts[d[0].ID][1].Number != 2 {
		t.Fatalf("list: %d %v %v", total, atts, err)
	}
	_ = ds
	failed, _, total, err := s.ListDeliveries(ctx, pa, sub.ID, models.DeliveryListFilter{Status: models.DeliveryFailed}, models.PageRequest{Limit: 50})
	if err != nil || total != 1 || failed[0].ID != d[2].ID || failed[0].StatusReason != "every attempt failed" {
		t.Fatalf("failed: %+v %v", failed, err)
	}
	if _, _, _, err := s.ListDeliveries(ctx, pa, sub.ID, models.DeliveryListFilter{Status: "lost"}, models.PageRequest{Limit: 50}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("unknown status: %v", err)
	}
	pb, _ := provisioningTenant(t, s, "B")
	if _, _, _, err := s.ListDeliveries(ctx, pb, sub.ID, models.DeliveryListFilter{}, models.PageRequest{Limit: 50}); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
}

func TestListEvents(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	pa, _ := provisioningTenant(t, s, "A")
	pb, _ := provisioningTenant(t, s, "B")
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	recordEvent(t, s, pa.OwnScope(), models.EventServiceProvisioned, "svc_1", t0, nil)
	recordEvent(t, s, pa.OwnScope(), "service.status_changed", "svc_1", t0.Add(time.Minute), nil)
	recordEvent(t, s, pa.OwnScope(), "invoice.created", "inv_1", t0.Add(2*time.Minute), nil)
	recordEvent(t, s, pb.OwnScope(), models.EventServiceProvisioned, "svc_9", t0, nil)
	after, before := t0.Add(time.Minute), t0.Add(2*time.Minute)
	tests := []struct {
		name string
		f    models.EventFilter
		want int64
	}{
		{"all", models.EventFilter{}, 3},
		{"type", models.EventFilter{Types: []string{models.EventServiceProvisioned}}, 1},
		{"group", models.EventFilter{Groups: []string{"service"}}, 2},
		{"type or group", models.EventFilter{Types: []string{"invoice.created"}, Groups: []string{"service"}}, 3},
		{"readable services only", models.EventFilter{Readable: []string{"service"}}, 2},
		{"nothing readable", models.EventFilter{Readable: []string{}}, 0},
		{"resource", models.EventFilter{ResourceID: "inv_1"}, 1},
		{"created range", models.EventFilter{CreatedAfter: &after, CreatedBefore: &before}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, total, err := s.ListEvents(ctx, pa, tc.f, models.PageRequest{Limit: 50})
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
	evs, _, _ := s.ListEvents(ctx, pa, models.EventFilter{}, models.PageRequest{Limit: 50})
	if evs[0].Type != "invoice.created" {
		t.Fatalf("newest first: %+v", evs)
	}
	if _, err := s.GetEvent(ctx, pa, evs[0].ID, []string{"service"}); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("an unreadable group is not found: %v", err)
	}
	if got, err := s.GetEvent(ctx, pa, evs[0].ID, nil); err != nil || got.ID != evs[0].ID {
		t.Fatal(got, err)
	}
	if _, err := s.GetEvent(ctx, pb, evs[0].ID, nil); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
	if got, err := s.EventByID(ctx, evs[0].ID); err != nil || got.ID != evs[0].ID {
		t.Fatal(got, err)
	}
}
