package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// A public address literal: subscriptions are checked without DNS in tests.
const publicHook = "https://93.184.216.34/hooks"

const validSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

type webhookAnswer struct {
	Webhook struct {
		ID      string   `json:"id"`
		URL     string   `json:"url"`
		Area    string   `json:"area"`
		Events  []string `json:"events"`
		Filters struct {
			CustomerIDs []string `json:"customer_ids"`
			Priorities  []string `json:"priorities"`
		} `json:"filters"`
		Active                  bool    `json:"active"`
		AllOrganizations        bool    `json:"all_organizations"`
		Secret                  string  `json:"secret"`
		SecretRotatedAt         *string `json:"secret_rotated_at"`
		PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
	} `json:"webhook"`
}

type deliveryAnswer struct {
	ID         string `json:"id"`
	WebhookID  string `json:"webhook_id"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	Reason     string `json:"reason"`
	Generation int    `json:"generation"`
	Status     string `json:"status"`
	Attempts   []struct {
		Number     int  `json:"number"`
		StatusCode *int `json:"status_code"`
	} `json:"attempts"`
}

type eventAnswer struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	ResourceID string         `json:"resource_id"`
	Data       map[string]any `json:"data"`
	CreatedAt  string         `json:"created_at"`
}

// webhookFixtures returns a subscription of tn (live) and the id of the
// service.provisioned event of serviceID, for the tenancy test.
func webhookFixtures(t testing.TB, h *harness, tn tenant, serviceID string) (webhookID, eventID string) {
	t.Helper()
	ctx := context.Background()
	p := tenantPrincipal(tn)
	sub, err := eventlog.NewStore(h.store).CreateWebhook(ctx, p, eventlog.WebhookSpec{Area: eventlog.WebhookAreaAll, URL: publicHook, Events: []string{"*"}, Active: true, Secret: validSecret})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eventlog.NewStore(h.store).EventsFor(ctx, p.OwnScope(), serviceID)
	if err != nil || len(evs) == 0 {
		t.Fatalf("no event for %s: %v", serviceID, err)
	}
	return sub.ID, evs[0].ID
}

func TestWebhookSubscriptionEndpoints(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]

	var services, billing, support, all webhookAnswer
	h.do("POST", "/api/v1/services/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned", "service.status_changed"}}).decode(201, &services)
	w := services.Webhook
	if !models.HasPrefix(w.ID, "wh") || w.Area != "services" || !w.Active || !strings.HasPrefix(w.Secret, "whsec_") || len(w.Events) != 2 {
		t.Fatalf("services webhook %+v", w)
	}
	h.do("POST", "/api/v1/billing/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"invoice.generated", "payment.*"}, "secret": validSecret}).decode(201, &billing)
	if w := billing.Webhook; w.Area != "billing" || w.Secret != validSecret || strings.Join(w.Events, ",") != "invoice.created,payment.*" {
		t.Fatalf("billing webhook %+v", w)
	}
	h.do("POST", "/v1/support/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"ticket.escalated", "sla.*"},
		"filters": map[string]any{"customer_ids": []string{a.org.CustomerID}, "priorities": []string{"high", "critical"}}, "secret": validSecret, "active": false}).decode(201, &support)
	if w := support.Webhook; w.Area != "support" || w.Active || len(w.Filters.Priorities) != 2 || w.Filters.CustomerIDs[0] != a.org.CustomerID {
		t.Fatalf("support webhook %+v", w)
	}
	h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.*", "invoice.*", "ticket.*"}, "active": true}).decode(201, &all)
	if all.Webhook.Area != "all" {
		t.Fatalf("cross-area webhook %+v", all.Webhook)
	}

	t.Run("bad input is 400", func(t *testing.T) {
		tests := []struct {
			name, path string
			body       map[string]any
			fields     []string
		}{
			{"missing fields", "/v1/webhooks", map[string]any{}, []string{"url", "events"}},
			{"unknown event", "/api/v1/services/webhooks", map[string]any{"url": publicHook, "events": []string{"service.exploded"}}, []string{"events[0]"}},
			{"pattern outside the area", "/api/v1/billing/webhooks", map[string]any{"url": publicHook, "events": []string{"service.*"}}, []string{"events[0]"}},
			{"everything on an area endpoint", "/v1/support/webhooks", map[string]any{"url": publicHook, "events": []string{"*"}}, []string{"events[0]"}},
			{"unknown group", "/v1/webhooks", map[string]any{"url": publicHook, "events": []string{"bogus.*"}}, []string{"events[0]"}},
			{"malformed secret", "/v1/webhooks", map[string]any{"url": publicHook, "events": []string{"*"}, "secret": "my-secret"}, []string{"secret"}},
			{"short secret", "/v1/webhooks", map[string]any{"url": publicHook, "events": []string{"*"}, "secret": "whsec_c2hvcnQ="}, []string{"secret"}},
			{"not http", "/v1/webhooks", map[string]any{"url": "ftp://93.184.216.34/x", "events": []string{"*"}}, []string{"url"}},
			{"loopback", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9000/x", "events": []string{"*"}}, []string{"url"}},
			{"private", "/v1/webhooks", map[string]any{"url": "http://10.1.2.3/x", "events": []string{"*"}}, []string{"url"}},
			{"link-local metadata", "/v1/webhooks", map[string]any{"url": "http://169.254.169.254/latest/meta-data", "events": []string{"*"}}, []string{"url"}},
			{"IPv6 loopback", "/v1/webhooks", map[string]any{"url": "http://[::1]/x", "events": []string{"*"}}, []string{"url"}},
			{"filters on billing", "/api/v1/billing/webhooks", map[string]any{"url": publicHook, "events": []string{"invoice.*"}, "filters": map[string]any{"priorities": []string{"high"}}}, []string{"filters"}},
			{"another tenant's customer", "/v1/support/webhooks", map[string]any{"url": publicHook, "events": []string{"ticket.*"}, "filters": map[string]any{"customer_ids": []string{a.org.CustomerID, b.org.CustomerID}}}, []string{"filters.customer_ids[1]"}},
			{"no such customer", "/v1/support/webhooks", map[string]any{"url": publicHook, "events": []string{"ticket.*"}, "filters": map[string]any{"customer_ids": []string{"cust_1"}}}, []string{"filters.customer_ids[0]"}},
			{"unknown priority", "/v1/support/webhooks", map[string]any{"url": publicHook, "events": []string{"ticket.*"}, "filters": map[string]any{"priorities": []string{"urgent"}}}, []string{"filters.priorities"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := h.do("POST", tc.path, a.liveKey, tc.body).wantError(400, "VALIDATION_ERROR")
				got := map[string]bool{}
				for _, f := range e.Error.Details["fields"].([]any) {
					got[f.(map[string]any)["field"].(string)] = true
				}
				for _, f := range tc.fields {
					if !got[f] {
						t.Fatalf("fields %v, want %v: %+v", got, tc.fields, e.Error)
					}
				}
				if strings.Contains(e.Error.Message, "my-secret") {
					t.Fatal("the secret was echoed")
				}
			})
		}
	})

	t.Run("staff only across organizations", func(t *testing.T) {
		h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"*"}, "all_organizations": true}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		var staff webhookAnswer
		h.do("POST", "/v1/webhooks", h.adminKey, map[string]any{"url": publicHook, "events": []string{"*"}, "all_organizations": true}).decode(201, &staff)
		if !staff.Webhook.AllOrganizations {
			t.Fatalf("%+v", staff.Webhook)
		}
	})

	t.Run("list, get and tenancy", func(t *testing.T) {
		var list struct {
			Webhooks   []webhookAnswer     `json:"webhooks"`
			Pagination struct{ Total int } `json:"pagination"`
		}
		h.do("GET", "/v1/webhooks", a.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != 4 {
			t.Fatalf("A has 4 subscriptions, listed %d", list.Pagination.Total)
		}
		var raw struct {
			Webhooks []map[string]any `json:"webhooks"`
		}
		h.do("GET", "/v1/webhooks?area=billing", a.liveKey, nil).decode(200, &raw)
		if len(raw.Webhooks) != 1 || raw.Webhooks[0]["id"] != billing.Webhook.ID || raw.Webhooks[0]["secret"] != nil {
			t.Fatalf("billing list (no secrets): %v", raw.Webhooks)
		}
		h.do("GET", "/v1/webhooks?active=false", a.liveKey, nil).decode(200, &raw)
		if len(raw.Webhooks) != 1 || raw.Webhooks[0]["id"] != support.Webhook.ID {
			t.Fatalf("paused list: %v", raw.Webhooks)
		}
		for _, k := range []string{b.liveKey, a.testKey} {
			h.do("GET", "/v1/webhooks", k, nil).decode(200, &list)
			if list.Pagination.Total != 0 {
				t.Fatalf("another tenant or environment lists %d", list.Pagination.Total)
			}
			h.do("GET", "/v1/webhooks/"+services.Webhook.ID, k, nil).wantError(404, "NOT_FOUND")
		}
		var got webhookAnswer
		h.do("GET", "/v1/webhooks/"+services.Webhook.ID, a.liveKey, nil).decode(200, &got)
		if got.Webhook.Secret != "" || got.Webhook.URL != publicHook {
			t.Fatalf("get shows no secret: %+v", got.Webhook)
		}
	})

	t.Run("patch", func(t *testing.T) {
		id := billing.Webhook.ID
		h.do("PATCH", "/v1/webhooks/"+id, a.liveKey, map[string]any{"events": []string{"ticket.*"}}).wantError(400, "VALIDATION_ERROR")
		h.do("PATCH", "/v1/webhooks/"+id, a.liveKey, map[string]any{"url": "http://192.168.1.1/x"}).wantError(400, "VALIDATION_ERROR")
		var got webhookAnswer
		h.do("PATCH", "/v1/webhooks/"+id, a.liveKey, map[string]any{"events": []string{"payment.received"}, "active": false}).decode(200, &got)
		if got.Webhook.Active || strings.Join(got.Webhook.Events, ",") != "payment.successful" {
			t.Fatalf("%+v", got.Webhook)
		}
		h.do("PATCH", "/v1/webhooks/"+id, a.liveKey, map[string]any{"active": true}).decode(200, &got)
		if !got.Webhook.Active {
			t.Fatal("resume")
		}
		h.do("PATCH", "/v1/webhooks/"+support.Webhook.ID, a.liveKey, map[string]any{"filters": map[string]any{}}).decode(200, &got)
		if len(got.Webhook.Filters.Priorities) != 0 || len(got.Webhook.Filters.CustomerIDs) != 0 {
			t.Fatalf("filters removed: %+v", got.Webhook.Filters)
		}
		h.do("PATCH", "/v1/webhooks/"+id, b.liveKey, map[string]any{"active": false}).wantError(404, "NOT_FOUND")
	})

	t.Run("rotate the secret", func(t *testing.T) {
		id := billing.Webhook.ID
		h.do("POST", "/v1/webhooks/"+id+"/rotate-secret", a.liveKey, map[string]any{"secret": "whsec_bad"}).wantError(400, "VALIDATION_ERROR")
		var got webhookAnswer
		h.do("POST", "/v1/webhooks/"+id+"/rotate-secret", a.liveKey, nil).decode(200, &got)
		if !strings.HasPrefix(got.Webhook.Secret, "whsec_") || got.Webhook.Secret == validSecret || got.Webhook.PreviousSecretExpiresAt == nil || got.Webhook.SecretRotatedAt == nil {
			t.Fatalf("%+v", got.Webhook)
		}
		rotated, _ := time.Parse(time.RFC3339, *got.Webhook.SecretRotatedAt)
		expires, _ := time.Parse(time.RFC3339, *got.Webhook.PreviousSecretExpiresAt)
		if expires.Sub(rotated) != 24*time.Hour {
			t.Fatalf("the previous secret signs for 24 hours: %v → %v", rotated, expires)
		}
		h.do("POST", "/v1/webhooks/"+id+"/rotate-secret", a.liveKey, map[string]any{"secret": validSecret}).decode(200, &got)
		if got.Webhook.Secret != validSecret {
			t.Fatalf("%+v", got.Webhook)
		}
	})

	t.Run("test ping and deliveries", func(t *testing.T) {
		var sent struct {
			Delivery deliveryAnswer `json:"delivery"`
		}
		h.do("POST", "/v1/webhooks/"+support.Webhook.ID+"/test", a.liveKey, nil).decode(202, &sent)
		if d := sent.Delivery; d.Reason != "test" || d.EventType != "webhook.test" || d.WebhookID != support.Webhook.ID || d.Status != "pending" || !models.HasPrefix(d.ID, "whd") {
			t.Fatalf("%+v", d)
		}
		var list struct {
			Deliveries []deliveryAnswer `json:"deliveries"`
		}
		h.do("GET", "/v1/webhooks/"+support.Webhook.ID+"/deliveries", a.liveKey, nil).decode(200, &list)
		if len(list.Deliveries) != 1 || list.Deliveries[0].ID != sent.Delivery.ID || list.Deliveries[0].Attempts == nil {
			t.Fatalf("%+v", list)
		}
		h.do("GET", "/v1/webhooks/"+support.Webhook.ID+"/deliveries?status=failed", a.liveKey, nil).decode(200, &list)
		if len(list.Deliveries) != 0 {
			t.Fatalf("%+v", list)
		}
		h.do("GET", "/v1/webhooks/"+support.Webhook.ID+"/deliveries?status=lost", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/webhooks/"+support.Webhook.ID+"/test", b.liveKey, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/v1/webhooks/"+support.Webhook.ID+"/deliveries", b.liveKey, nil).wantError(404, "NOT_FOUND")
	})

	t.Run("permissions", func(t *testing.T) {
		var key keyAnswer
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
		h.do("POST", "/v1/webhooks", key.APIKey.Key, map[string]any{"url": publicHook, "events": []string{"*"}}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", "/v1/webhooks", key.APIKey.Key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", "/v1/webhooks/event-types", key.APIKey.Key, nil).decode(200, nil)
	})

	t.Run("delete", func(t *testing.T) {
		h.do("DELETE", "/v1/webhooks/"+all.Webhook.ID, b.liveKey, nil).wantError(404, "NOT_FOUND")
		res := h.do("DELETE", "/v1/webhooks/"+all.Webhook.ID, a.liveKey, nil)
		if res.status != http.StatusNoContent || len(res.body) != 0 {
			t.Fatalf("delete: %d %s", res.status, res.body)
		}
		h.do("GET", "/v1/webhooks/"+all.Webhook.ID, a.liveKey, nil).wantError(404, "NOT_FOUND")
		h.do("DELETE", "/v1/webhooks/"+all.Webhook.ID, a.liveKey, nil).wantError(404, "NOT_FOUND")
	})
}

func TestEventTypesCatalogue(t *testing.T) {
	h := newHarness(t)
	var cat struct {
		Areas []struct {
			Area     string   `json:"area"`
			Patterns []string `json:"patterns"`
			Events   []string `json:"events"`
		} `json:"areas"`
		Aliases map[string]string `json:"aliases"`
	}
	h.do("GET", "/v1/webhooks/event-types", h.tenants[0].liveKey, nil).decode(200, &cat)
	if len(cat.Areas) != 4 || cat.Areas[0].Area != "services" || len(cat.Areas[0].Events) != 8 || len(cat.Areas[1].Events) != 10 || len(cat.Areas[2].Events) != 9 ||
		cat.Areas[3].Area != "analytics" || len(cat.Areas[3].Events) != 2 ||
		cat.Aliases["invoice.generated"] != "invoice.created" {
		t.Fatalf("%+v", cat)
	}
}

func TestEventEndpoints(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	ctx := context.Background()
	p := tenantPrincipal(a)
	early, err := eventlog.NewStore(h.store).CreateWebhook(ctx, p, eventlog.WebhookSpec{Area: eventlog.WebhookAreaServices, URL: publicHook, Events: []string{"service.*"}, Active: true, Secret: validSecret})
	if err != nil {
		t.Fatal(err)
	}
	_, serviceID := provisionedFixture(t, h, a)

	var list struct {
		Events     []eventAnswer       `json:"events"`
		Pagination struct{ Total int } `json:"pagination"`
	}
	// The provisioning wrote service.status_changed (provisioning → operational) and service.provisioned.
	h.do("GET", "/v1/events?type=service.provisioned", a.liveKey, nil).decode(200, &list)
	if len(list.Events) != 1 || list.Events[0].Type != "service.provisioned" || list.Events[0].ResourceID != serviceID ||
		list.Events[0].Data["service"].(map[string]any)["id"] != serviceID {
		t.Fatalf("%+v", list)
	}
	evID := list.Events[0].ID
	for query, want := range map[string]int{
		"type=service.provisioned": 1, "type=service.status_changed": 1, "type=service.*": 2, "type=invoice.*": 0, "type=invoice.generated": 0, "type=*": 2,
		"resource_id=" + serviceID: 2, "resource_id=svc_other": 0,
		"created_after=2000-01-01T00:00:00Z": 2, "created_before=2000-01-01T00:00:00Z": 0,
		"created_after=" + time.Now().UTC().Add(time.Hour).Format(time.RFC3339): 0,
	} {
		h.do("GET", "/v1/events?"+query, a.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != want {
			t.Fatalf("%s: %d events, want %d", query, list.Pagination.Total, want)
		}
	}
	for _, query := range []string{"type=bogus", "type=service.exploded", "created_after=yesterday", "sort=colour:asc"} {
		h.do("GET", "/v1/events?"+query, a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	}
	for _, k := range []string{b.liveKey, a.testKey} {
		h.do("GET", "/v1/events", k, nil).decode(200, &list)
		if list.Pagination.Total != 0 {
			t.Fatalf("another tenant or environment sees %d events", list.Pagination.Total)
		}
		h.do("GET", "/v1/events/"+evID, k, nil).wantError(404, "NOT_FOUND")
		h.do("POST", "/v1/events/"+evID+"/redeliver", k, nil).wantError(404, "NOT_FOUND")
	}

	t.Run("read permissions decide which events show", func(t *testing.T) {
		keyWith := func(perms ...string) string {
			var key keyAnswer
			h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "k", "permissions": perms}).decode(201, &key)
			return key.APIKey.Key
		}
		h.do("GET", "/v1/events", keyWith("services:read"), nil).decode(200, &list)
		if list.Pagination.Total != 2 {
			t.Fatalf("services:read sees service events: %d", list.Pagination.Total)
		}
		billingOnly := keyWith("billing:read")
		h.do("GET", "/v1/events", billingOnly, nil).decode(200, &list)
		if list.Pagination.Total != 0 {
			t.Fatalf("billing:read does not see service events: %d", list.Pagination.Total)
		}
		h.do("GET", "/v1/events/"+evID, billingOnly, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/v1/events", keyWith("auth:manage"), nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", "/v1/events/"+evID+"/redeliver", keyWith("services:read"), nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})

	t.Run("redeliver", func(t *testing.T) {
		h.do("POST", "/v1/events/"+evID+"/redeliver", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		ev, err := eventlog.NewStore(h.store).EventByID(ctx, evID)
		if err != nil {
			t.Fatal(err)
		}
		// As the dispatcher would: the first delivery of the event to the subscription.
		first, err := eventlog.NewStore(h.store).EnsureDeliveries(ctx, ev, []eventlog.WebhookSubscription{*early})
		if err != nil || len(first) != 1 {
			t.Fatal(first, err)
		}
		var re struct {
			Deliveries []deliveryAnswer `json:"deliveries"`
		}
		h.do("POST", "/v1/events/"+evID+"/redeliver", a.liveKey, nil).decode(202, &re)
		if len(re.Deliveries) != 1 || re.Deliveries[0].Generation != 2 || re.Deliveries[0].Reason != "redelivery" || re.Deliveries[0].WebhookID != early.ID {
			t.Fatalf("%+v", re)
		}
		h.do("POST", "/v1/events/"+evID+"/redeliver", a.liveKey, map[string]any{"subscription_id": early.ID}).decode(202, &re)
		if re.Deliveries[0].Generation != 3 {
			t.Fatalf("%+v", re)
		}
		h.do("POST", "/v1/events/"+evID+"/redeliver", a.liveKey, map[string]any{"subscription_id": "wh_missing"}).wantError(400, "VALIDATION_ERROR")
		var billing webhookAnswer
		h.do("POST", "/v1/billing/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"invoice.*"}}).decode(201, &billing)
		h.do("POST", "/v1/events/"+evID+"/redeliver", a.liveKey, map[string]any{"subscription_id": billing.Webhook.ID}).wantError(400, "VALIDATION_ERROR")

		var got struct {
			Event      eventAnswer      `json:"event"`
			Deliveries []deliveryAnswer `json:"deliveries"`
		}
		h.do("GET", "/v1/events/"+evID, a.liveKey, nil).decode(200, &got)
		if got.Event.ID != evID || len(got.Deliveries) != 3 || got.Deliveries[0].Generation != 1 {
			t.Fatalf("%+v", got)
		}
	})
}

// TestWebhookSubscriptionCap: an organization holds at most 50
// subscriptions per environment, every area together; the 51st is 409
// RESOURCE_LIMIT_EXCEEDED, deleting one makes room, and the other
// environment and other tenants are not affected.
func TestWebhookSubscriptionCap(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	paths := []string{"/v1/webhooks", "/v1/services/webhooks"}
	var first webhookAnswer
	for i := 0; i < eventlog.MaxWebhooksPerTenant; i++ {
		res := h.do("POST", paths[i%2], a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned"}})
		if i == 0 {
			res.decode(201, &first)
		} else {
			res.decode(201, nil)
		}
	}
	e := h.do("POST", "/v1/billing/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"invoice.*"}}).wantError(409, "RESOURCE_LIMIT_EXCEEDED")
	if e.Error.Details["limit"] != float64(eventlog.MaxWebhooksPerTenant) || e.Error.Details["resource"] != "webhook_subscriptions" {
		t.Fatalf("details %+v", e.Error.Details)
	}
	h.do("POST", "/v1/webhooks", a.testKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned"}}).decode(201, nil)
	h.do("POST", "/v1/webhooks", h.tenants[1].liveKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned"}}).decode(201, nil)
	h.do("DELETE", "/v1/webhooks/"+first.Webhook.ID, a.liveKey, nil).decode(204, nil)
	h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned"}}).decode(201, nil)
	h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.provisioned"}}).wantError(409, "RESOURCE_LIMIT_EXCEEDED")
}
