package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// TestIdempotencyIsBoundToTheCredential: a second credential of the same
// organization sending the same Idempotency-Key and body is processed as its
// own request; it never receives the first credential's answer (here, a new
// API key's secret).
func TestIdempotencyIsBoundToTheCredential(t *testing.T) {
	h := newHarness(t)
	var other keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "second", "permissions": []string{"*"}}).decode(201, &other)
	body := map[string]any{"name": "ci", "permissions": []string{"services:read"}}

	var first, second keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, body, "Idempotency-Key", "same-key").decode(201, &first)
	res := h.do("POST", "/v1/auth/api-keys", other.APIKey.Key, body, "Idempotency-Key", "same-key").decode(201, &second)
	if res.header.Get("Idempotent-Replayed") != "" || second.APIKey.Key == first.APIKey.Key || second.APIKey.ID == first.APIKey.ID ||
		strings.Contains(string(res.body), first.APIKey.Key) {
		t.Fatalf("the second credential received the first answer: %s", res.body)
	}
	// The first credential still gets its own answer back.
	var again keyAnswer
	replay := h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, body, "Idempotency-Key", "same-key").decode(201, &again)
	if replay.header.Get("Idempotent-Replayed") != "true" || again.APIKey.Key != first.APIKey.Key {
		t.Fatalf("no replay for the first credential: %s", replay.body)
	}
}

// TestIdempotentReplayNeedsAuthorization: a stored answer is served only
// after the operation's access rule passed on the replaying request. A
// credential that lost the permission gets 403, not the stored secret; one
// that never had it gets 403 too.
func TestIdempotentReplayNeedsAuthorization(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	var manager keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "manager", "permissions": []string{"auth:manage", "services:read"}}).decode(201, &manager)
	body := map[string]any{"name": "ci", "permissions": []string{"services:read"}}
	var created keyAnswer
	h.do("POST", "/v1/auth/api-keys", manager.APIKey.Key, body, "Idempotency-Key", "k-perm").decode(201, &created)

	var reader keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &reader)
	res := h.do("POST", "/v1/auth/api-keys", reader.APIKey.Key, body, "Idempotency-Key", "k-perm")
	res.wantError(403, "INSUFFICIENT_PERMISSIONS")

	// The manager key loses auth:manage: its own replay is refused.
	db := models.Scoped(ctx, h.store.DB, models.SystemScope())
	if err := db.Exec("UPDATE api_keys SET permissions = ? WHERE id = ?", `["services:read"]`, manager.APIKey.ID).Error; err != nil {
		t.Fatal(err)
	}
	res = h.do("POST", "/v1/auth/api-keys", manager.APIKey.Key, body, "Idempotency-Key", "k-perm")
	res.wantError(403, "INSUFFICIENT_PERMISSIONS")
	if res.header.Get("Idempotent-Replayed") != "" || strings.Contains(string(res.body), created.APIKey.Key) {
		t.Fatalf("the stored answer was replayed without the permission: %s", res.body)
	}
}

// TestIdempotentAnswersAreSealed: the stored answer to an API-key creation
// does not hold the key's secret in clear, and still replays byte for byte.
func TestIdempotentAnswersAreSealed(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"name": "signed", "permissions": []string{"services:read"}, "require_signing": true}
	var created keyAnswer
	first := h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, body, "Idempotency-Key", "k-seal").decode(201, &created)
	if created.APIKey.Key == "" || created.APIKey.SigningSecret == "" {
		t.Fatalf("no secrets in %s", first.body)
	}
	var rows []map[string]any
	if err := models.Scoped(context.Background(), h.store.DB, models.SystemScope()).Raw("SELECT * FROM idempotency_records").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no stored answer")
	}
	for _, row := range rows {
		for col, v := range row {
			var text string
			switch x := v.(type) {
			case string:
				text = x
			case []byte:
				text = string(x)
			}
			for _, secret := range []string{created.APIKey.Key, created.APIKey.SigningSecret, created.APIKey.Key[8:]} {
				if strings.Contains(text, secret) {
					t.Fatalf("column %s holds a secret in clear", col)
				}
			}
		}
	}
	replay := h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, body, "Idempotency-Key", "k-seal").decode(201, nil)
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
		t.Fatalf("replay differs: %s", replay.body)
	}
}
