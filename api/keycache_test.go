package api_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// secondInstance returns another API server on the harness's database,
// with its own cache of authenticated keys.
func secondInstance(t *testing.T, h *harness) *api.Server {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return api.New(api.Deps{Config: cfg, Store: h.store, Blobs: h.blobs})
}

// on runs fn with the harness pointed at srv.
func on(h *harness, srv *api.Server, fn func()) {
	prev := h.srv
	h.srv = srv
	defer func() { h.srv = prev }()
	fn()
}

// untilStatus sends GET path with key to srv until it answers want, and
// fails if a request sent one second or more after since did not.
func untilStatus(t *testing.T, h *harness, srv *api.Server, path, key string, want int, since time.Time) time.Duration {
	t.Helper()
	for {
		sent := time.Now()
		var got int
		on(h, srv, func() { got = h.do("GET", path, key, nil).status })
		if got == want {
			return sent.Sub(since)
		}
		if sent.Sub(since) >= identity.DefaultKeyCacheTTL {
			t.Fatalf("GET %s answered %d %v after the change, want %d within %v", path, got, sent.Sub(since), want, identity.DefaultKeyCacheTTL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCachedKeyRevocation: a key revoked on one instance stops working at
// once there, and within one second on another instance that has it cached.
func TestCachedKeyRevocation(t *testing.T) {
	h := newHarness(t)
	a, b := h.srv, secondInstance(t, h)
	id, key := h.limitedKey(100, 50)
	for _, srv := range []*api.Server{a, b} { // both instances now hold the key
		on(h, srv, func() { h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil) })
	}
	h.do("DELETE", "/v1/auth/api-keys/"+id, h.tenants[0].liveKey, nil).decode(http.StatusOK, nil)
	revoked := time.Now()
	h.do("GET", "/v1/services/catalog", key, nil).wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	took := untilStatus(t, h, b, "/v1/services/catalog", key, http.StatusUnauthorized, revoked)
	t.Logf("the other instance refused the revoked key after %v", took)

	// Rotation: the old secret stops at once here, within a second there.
	id, key = h.limitedKey(100, 50)
	for _, srv := range []*api.Server{a, b} {
		on(h, srv, func() { h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil) })
	}
	h.do("POST", "/v1/auth/api-keys/"+id+"/rotate", h.tenants[0].liveKey, nil).decode(http.StatusOK, nil)
	rotated := time.Now()
	h.do("GET", "/v1/services/catalog", key, nil).wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	untilStatus(t, h, b, "/v1/services/catalog", key, http.StatusUnauthorized, rotated)
}

// TestCachedKeyChanges: a change of a key's permissions made outside this
// process, and a change of its organization's access policy made on
// another instance, apply within one second.
func TestCachedKeyChanges(t *testing.T) {
	h := newHarness(t)
	a, b := h.srv, secondInstance(t, h)
	id, key := h.limitedKey(100, 50)
	for _, srv := range []*api.Server{a, b} {
		on(h, srv, func() { h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil) })
	}

	// The permissions, changed in the database (another process): both
	// instances apply them within a second.
	err := h.store.In(context.Background(), models.SystemScope()).Model(&identity.APIKey{}).Where("id = ?", id).
		Update("permissions", `["billing:read"]`).Error
	if err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for _, srv := range []*api.Server{a, b} {
		untilStatus(t, h, srv, "/v1/services/catalog", key, http.StatusForbidden, changed)
	}

	// The organization's access policy, changed through instance a: a
	// applies it at once, b within a second.
	on(h, b, func() { h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(http.StatusOK, nil) })
	h.do("PUT", "/v1/organizations/"+h.tenants[0].org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"ip_allowlist": []string{"192.0.2.0/24"}}}).decode(http.StatusOK, nil)
	changed = time.Now()
	h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	untilStatus(t, h, b, "/v1/services/catalog", h.tenants[0].liveKey, http.StatusForbidden, changed)

	// And back: the policy removed on a, the key works again on both.
	h.do("PUT", "/v1/organizations/"+h.tenants[0].org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{}}).decode(http.StatusOK, nil)
	changed = time.Now()
	h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(http.StatusOK, nil)
	untilStatus(t, h, b, "/v1/services/catalog", h.tenants[0].liveKey, http.StatusOK, changed)
}

// TestCachedKeysKeptByOtherWrites: a write that can change no credential,
// permission, plan or policy (a ticket, a webhook subscription, by either
// path prefix) keeps the cache of authenticated keys; a write to an
// organization empties it. The instance caches keys for an hour, so only
// an emptied cache can show a change made in the database.
func TestCachedKeysKeptByOtherWrites(t *testing.T) {
	h := newHarness(t)
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Deps{Config: cfg, Store: h.store, Blobs: h.blobs, Keys: identity.NewKeyCache(time.Hour)})
	id, key := h.limitedKey(100, 50)
	on(h, srv, func() {
		h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil)
		// The key loses services:read in the database.
		if err := h.store.In(context.Background(), models.SystemScope()).Model(&identity.APIKey{}).Where("id = ?", id).
			Update("permissions", `["billing:read"]`).Error; err != nil {
			t.Fatal(err)
		}
		h.do("POST", "/v1/support/tickets", h.tenants[0].liveKey, map[string]any{"title": "t", "description": "d", "category": "network", "priority": "low"}).
			decode(http.StatusCreated, nil)
		h.do("POST", "/api/v1/webhooks", h.tenants[0].liveKey, map[string]any{"url": publicHook, "events": []string{"service.*"}}).decode(http.StatusCreated, nil)
		h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil) // still the cached key
		// A write to an organization empties the cache: the change shows.
		h.do("PUT", "/v1/organizations/"+h.tenants[0].org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{}}).decode(http.StatusOK, nil)
		h.do("GET", "/v1/services/catalog", key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	})
}

// TestWritesThatKeepCachedKeys lists every write route the key cache
// survives (keepsCredentials): each was reviewed to change no API key, key
// permission, user, OAuth client, plan, limit or access policy. A new
// write route in those areas must be reviewed the same way and added here,
// or moved out of them.
func TestWritesThatKeepCachedKeys(t *testing.T) {
	h := newHarness(t)
	var got []string
	seen := map[string]bool{}
	for _, r := range h.srv.App.GetRoutes(true) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions, "CONNECT", "TRACE":
			continue
		}
		if !api.KeepsCredentials(r.Path) || strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		if k := r.Method + " " + r.Path; !seen[k] {
			seen[k] = true
			got = append(got, k)
		}
	}
	sort.Strings(got)
	reviewed := []string{
		"DELETE /v1/analytics/report-definitions/:definition_id",
		"DELETE /v1/services/:service_id",
		"DELETE /v1/services/connectivity/internet/:service_id",
		"DELETE /v1/support/calendars/:calendar_id",
		"DELETE /v1/support/calendars/:calendar_id/holidays/:date",
		"DELETE /v1/support/integrations/chatapp/:integration_id",
		"DELETE /v1/support/integrations/tracker/:integration_id",
		"DELETE /v1/support/routing-rules/:rule_id",
		"DELETE /v1/support/sla-policies/:policy_id",
		"DELETE /v1/webhooks/:webhook_id",
		"PATCH /v1/support/calendars/:calendar_id",
		"PATCH /v1/support/categories/:category_id",
		"PATCH /v1/support/integrations/chatapp/:integration_id",
		"PATCH /v1/support/integrations/tracker/:integration_id",
		"PATCH /v1/support/knowledge/:article_id",
		"PATCH /v1/support/routing-rules/:rule_id",
		"PATCH /v1/support/sla-policies/:policy_id",
		"PATCH /v1/support/tickets/:ticket_id",
		"PATCH /v1/webhooks/:webhook_id",
		"POST /v1/analytics/report-definitions",
		"POST /v1/analytics/report-definitions/:definition_id/run",
		"POST /v1/analytics/reports",
		"POST /v1/analytics/reports/:report_id/cancel",
		"POST /v1/events/:event_id/redeliver",
		"POST /v1/graphql",
		"POST /v1/operations/:request_id/cancel",
		"POST /v1/operations/:request_id/retry",
		"POST /v1/services",
		"POST /v1/services/:service_id/decommission",
		"POST /v1/services/ai/platforms",
		"POST /v1/services/availability/check",
		"POST /v1/services/bulk/modify",
		"POST /v1/services/bulk/provision",
		"POST /v1/services/bulk/status",
		"POST /v1/services/cloud/infrastructure",
		"POST /v1/services/cloud/platforms",
		"POST /v1/services/connectivity/internet",
		"POST /v1/services/connectivity/networks",
		"POST /v1/services/orchestration/workflows",
		"POST /v1/services/provision",
		"POST /v1/services/quotes",
		"POST /v1/services/security/infrastructure",
		"POST /v1/services/security/managed",
		"POST /v1/services/voice/contact-centers",
		"POST /v1/services/voice/systems",
		"POST /v1/services/webhooks",
		"POST /v1/support/calendars",
		"POST /v1/support/calendars/:calendar_id/holidays",
		"POST /v1/support/calendars/:calendar_id/holidays/import",
		"POST /v1/support/categories",
		"POST /v1/support/feedback",
		"POST /v1/support/integrations/chatapp",
		"POST /v1/support/integrations/chatapp/:integration_id/test",
		"POST /v1/support/integrations/tracker",
		"POST /v1/support/integrations/tracker/:integration_id/test",
		"POST /v1/support/knowledge",
		"POST /v1/support/reports/:report_id/cancel",
		"POST /v1/support/reports/generate",
		"POST /v1/support/routing-rules",
		"POST /v1/support/sla-policies",
		"POST /v1/support/sla/simulate",
		"POST /v1/support/tickets",
		"POST /v1/support/tickets/:ticket_id/comments",
		"POST /v1/support/tickets/:ticket_id/escalate",
		"POST /v1/support/tickets/:ticket_id/notify",
		"POST /v1/support/tickets/search",
		"POST /v1/support/webhooks",
		"POST /v1/webhooks",
		"POST /v1/webhooks/:webhook_id/rotate-secret",
		"POST /v1/webhooks/:webhook_id/test",
		"PUT /v1/analytics/report-definitions/:definition_id",
		"PUT /v1/services/:service_id",
		"PUT /v1/services/:service_id/configuration",
		"PUT /v1/services/:service_id/features",
		"PUT /v1/services/:service_id/scaling",
		"PUT /v1/services/connectivity/internet/:service_id",
		"PUT /v1/support/tickets/:ticket_id",
	}
	if strings.Join(got, "\n") != strings.Join(reviewed, "\n") {
		t.Fatalf("the write routes that keep the key cache changed: review each new one (it must change no API key, key permission, user, OAuth client, plan, limit or access policy), then list it here.\ngot:\n%s", strings.Join(got, "\n"))
	}
}
