package activities_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
)

// receiver is a loopback HTTP server that records every request and
// answers with the status its respond function returns.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	respond  func(n int) (int, string)
}

func newReceiver(t *testing.T, respond func(n int) (int, string)) *receiver {
	t.Helper()
	r := &receiver{respond: respond}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, req)
		r.bodies = append(r.bodies, body)
		n := len(r.requests)
		r.mu.Unlock()
		status, text := r.respond(n)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// verify checks request i with the Standard Webhooks library and secret.
func (r *receiver) verify(t *testing.T, i int, secret string) map[string]any {
	t.Helper()
	r.mu.Lock()
	req, body := r.requests[i], r.bodies[i]
	r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, req.Header); err != nil {
		t.Fatalf("request %d does not verify with the secret: %v", i, err)
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		t.Fatal(err)
	}
	return payload
}

type whFixture struct {
	store *models.Store
	acts  *activities.Webhooks
	p     *models.Principal
	staff *models.Principal
}

func newWebhookFixture(t *testing.T, allowPrivate bool) *whFixture {
	t.Helper()
	ctx := context.Background()
	store := testenv.Store(t)
	provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staff := &models.Principal{ID: "ak_admin", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(store).CreateOrganization(ctx, staff, identity.OrganizationInput{Name: "Tenant", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_t", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	client := webhooks.NewClient(allowPrivate, webhooks.WithTimeout(2*time.Second))
	return &whFixture{store: store, acts: activities.NewWebhooks(store, client, nil), p: p, staff: staff}
}

// delivery creates a subscription of p to url and a delivery of a new
// service.provisioned event of the tenant to it.
func (f *whFixture) delivery(t *testing.T, p *models.Principal, url string, all bool) (*eventlog.WebhookSubscription, *eventlog.Event, workflows.WebhookDeliveryInput) {
	t.Helper()
	ctx := context.Background()
	sub, err := eventlog.NewStore(f.store).CreateWebhook(ctx, p, eventlog.WebhookSpec{Area: eventlog.WebhookAreaAll, URL: url, Events: []string{"*"}, Active: true, AllOrganizations: all, Secret: secretA})
	if err != nil {
		t.Fatal(err)
	}
	ev := eventlog.NewEvent(eventlog.EventServiceProvisioned, "svc_1", map[string]any{"service": map[string]any{"id": "svc_1"}})
	if err := f.store.Tx(ctx, f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
		t.Fatal(err)
	}
	if ev, err = eventlog.NewStore(f.store).EventByID(ctx, ev.ID); err != nil {
		t.Fatal(err)
	}
	ds, err := eventlog.NewStore(f.store).EnsureDeliveries(ctx, ev, []eventlog.WebhookSubscription{*sub})
	if err != nil || len(ds) != 1 {
		t.Fatal(ds, err)
	}
	return sub, ev, workflows.WebhookDeliveryInput{DeliveryID: ds[0].ID, OrganizationID: ds[0].OrganizationID, Environment: ds[0].Environment}
}

func (f *whFixture) attempt(t *testing.T, in workflows.WebhookDeliveryInput, n int) *workflows.WebhookAttemptResult {
	t.Helper()
	res, err := f.acts.Attempt(context.Background(), workflows.WebhookAttemptInput{Delivery: in, Attempt: n, NextDelay: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWebhookAttemptIsSignedAndRecordedOnce(t *testing.T) {
	f := newWebhookFixture(t, true)
	rcv := newReceiver(t, func(int) (int, string) { return 200, "ok" })
	_, ev, in := f.delivery(t, f.p, rcv.URL+"/hook", false)

	if prep, err := f.acts.Prepare(context.Background(), in); err != nil || !prep.Ready || prep.Stop {
		t.Fatalf("prepare: %+v %v", prep, err)
	}
	res := f.attempt(t, in, 1)
	if !res.Success || res.StatusCode != 200 || rcv.count() != 1 {
		t.Fatalf("%+v, %d requests", res, rcv.count())
	}
	payload := rcv.verify(t, 0, secretA)
	if payload["id"] != ev.ID || payload["event"] != "service.provisioned" || payload["timestamp"] != models.Timestamp(ev.CreatedAt) || payload["organization_id"] != nil {
		t.Fatalf("payload %v", payload)
	}
	if h := rcv.requests[0].Header; h.Get("webhook-id") != ev.ID || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h)
	}
	// A retried activity finds the attempt and does not send again.
	if again := f.attempt(t, in, 1); !again.Success || rcv.count() != 1 {
		t.Fatalf("repeated attempt: %+v, %d requests", again, rcv.count())
	}
	d, _ := eventlog.NewStore(f.store).DeliveryIn(context.Background(), in.Scope(), in.DeliveryID)
	if d.Status != eventlog.DeliverySucceeded || d.Attempts != 1 || d.LastStatusCode != 200 {
		t.Fatalf("delivery %+v", d)
	}
	if prep, _ := f.acts.Prepare(context.Background(), in); !prep.Stop || prep.Status != eventlog.DeliverySucceeded {
		t.Fatalf("a delivered delivery stops: %+v", prep)
	}
	if next := f.attempt(t, in, 2); !next.Stop || rcv.count() != 1 {
		t.Fatalf("no attempt after success: %+v", next)
	}
}

func TestWebhookAttemptFailuresAreRecorded(t *testing.T) {
	f := newWebhookFixture(t, true)
	rcv := newReceiver(t, func(int) (int, string) { return 500, "database on fire" })
	_, _, in := f.delivery(t, f.p, rcv.URL, false)
	res := f.attempt(t, in, 1)
	if res.Success || res.StatusCode != 500 || res.Error != "non-2xx response: HTTP 500" {
		t.Fatalf("%+v", res)
	}
	ctx := context.Background()
	a, err := eventlog.NewStore(f.store).AttemptOf(ctx, in.Scope(), in.DeliveryID, 1)
	if err != nil || a == nil || a.StatusCode != 500 || a.ResponseBody != "database on fire" || a.Success || a.LatencyMs < 0 {
		t.Fatalf("attempt %+v %v", a, err)
	}
	d, _ := eventlog.NewStore(f.store).DeliveryIn(ctx, in.Scope(), in.DeliveryID)
	if d.Status != eventlog.DeliveryPending || d.NextAttemptAt == nil || d.NextAttemptAt.Sub(a.AttemptedAt) != 5*time.Second {
		t.Fatalf("delivery %+v", d)
	}
	if err := f.acts.Finish(ctx, workflows.WebhookFinishInput{Delivery: in, Status: eventlog.DeliveryFailed, Reason: "every attempt failed"}); err != nil {
		t.Fatal(err)
	}
	if d, _ = eventlog.NewStore(f.store).DeliveryIn(ctx, in.Scope(), in.DeliveryID); d.Status != eventlog.DeliveryFailed || d.NextAttemptAt != nil {
		t.Fatalf("failed: %+v", d)
	}
}

func TestWebhookAttemptRefusesPrivateAddressesAtConnectionTime(t *testing.T) {
	f := newWebhookFixture(t, false)
	rcv := newReceiver(t, func(int) (int, string) { return 200, "ok" })
	_, _, in := f.delivery(t, f.p, rcv.URL, false) // stored without the registration check
	res := f.attempt(t, in, 1)
	if res.Success || rcv.count() != 0 || !strings.Contains(res.Error, "refused") {
		t.Fatalf("a loopback receiver must be refused: %+v, %d requests", res, rcv.count())
	}
}

func TestWebhookAttemptDuringARotationSignsWithBothSecrets(t *testing.T) {
	f := newWebhookFixture(t, true)
	rcv := newReceiver(t, func(int) (int, string) { return 204, "" })
	sub, _, in := f.delivery(t, f.p, rcv.URL, false)
	if _, err := eventlog.NewStore(f.store).RotateWebhookSecret(context.Background(), f.p, sub.ID, secretB); err != nil {
		t.Fatal(err)
	}
	if res := f.attempt(t, in, 1); !res.Success {
		t.Fatalf("%+v", res)
	}
	rcv.verify(t, 0, secretA)
	rcv.verify(t, 0, secretB)
	if sigs := strings.Fields(rcv.requests[0].Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("signatures %v", sigs)
	}
}

func TestWebhookAttemptStopsForPausedOrDeletedSubscriptions(t *testing.T) {
	ctx := context.Background()
	f := newWebhookFixture(t, true)
	rcv := newReceiver(t, func(int) (int, string) { return 200, "ok" })
	paused := false

	sub, _, in := f.delivery(t, f.p, rcv.URL, false)
	if _, err := eventlog.NewStore(f.store).UpdateWebhook(ctx, f.p, sub.ID, eventlog.WebhookPatch{Active: &paused}); err != nil {
		t.Fatal(err)
	}
	if res := f.attempt(t, in, 1); !res.Stop || res.Status != eventlog.DeliveryCancelled || rcv.count() != 0 {
		t.Fatalf("paused: %+v", res)
	}

	// A test ping goes to a paused subscription.
	td, _, err := eventlog.NewStore(f.store).CreateTestDelivery(ctx, sub, map[string]any{"webhook_id": sub.ID})
	if err != nil {
		t.Fatal(err)
	}
	tin := workflows.WebhookDeliveryInput{DeliveryID: td.ID, OrganizationID: td.OrganizationID, Environment: td.Environment}
	if res := f.attempt(t, tin, 1); !res.Success || rcv.count() != 1 {
		t.Fatalf("test ping: %+v", res)
	}
	if p := rcv.verify(t, 0, secretA); p["event"] != "webhook.test" || p["data"].(map[string]any)["webhook_id"] != sub.ID {
		t.Fatalf("ping %v", p)
	}

	sub2, _, in2 := f.delivery(t, f.p, rcv.URL, false)
	// Deleting cancels pending deliveries; a workflow that did not notice stops at its next attempt.
	if err := eventlog.NewStore(f.store).DeleteWebhook(ctx, f.p, sub2.ID); err != nil {
		t.Fatal(err)
	}
	if res := f.attempt(t, in2, 1); !res.Stop || rcv.count() != 1 {
		t.Fatalf("deleted: %+v", res)
	}
	d, _ := eventlog.NewStore(f.store).DeliveryIn(ctx, in2.Scope(), in2.DeliveryID)
	if d.Status != eventlog.DeliveryCancelled || d.StatusReason != "the subscription was deleted" {
		t.Fatalf("delivery %+v", d)
	}
	if res, err := f.acts.Attempt(ctx, workflows.WebhookAttemptInput{Delivery: workflows.WebhookDeliveryInput{DeliveryID: "whd_missing", OrganizationID: f.p.OrganizationID, Environment: models.EnvLive}, Attempt: 1}); err != nil || !res.Stop {
		t.Fatalf("missing delivery: %+v %v", res, err)
	}
}

func TestWebhookAttemptForAStaffSubscriptionNamesTheOrganization(t *testing.T) {
	f := newWebhookFixture(t, true)
	rcv := newReceiver(t, func(int) (int, string) { return 200, "ok" })
	_, _, in := f.delivery(t, f.staff, rcv.URL, true)
	if in.OrganizationID != f.staff.OrganizationID {
		t.Fatalf("the delivery belongs to the staff subscription: %+v", in)
	}
	if res := f.attempt(t, in, 1); !res.Success {
		t.Fatalf("%+v", res)
	}
	if p := rcv.verify(t, 0, secretA); p["organization_id"] != f.p.OrganizationID {
		t.Fatalf("payload %v", p)
	}
}
