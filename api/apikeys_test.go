package api_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
)

type keyAnswer struct {
	APIKey struct {
		ID            string   `json:"id"`
		Key           string   `json:"key"`
		SigningSecret string   `json:"signing_secret"`
		Permissions   []string `json:"permissions"`
		Environment   string   `json:"environment"`
		Status        string   `json:"status"`
		LastUsed      *string  `json:"last_used"`
		UsageCount    int64    `json:"usage_count"`
	} `json:"api_key"`
}

func TestAPIKeyLifecycle(t *testing.T) {
	h := newHarness(t)
	owner := h.tenants[0].liveKey
	var created keyAnswer
	h.do("POST", "/v1/auth/api-keys", owner, map[string]any{
		"name": "integration", "description": "CRM sync", "permissions": []string{"services:read", "billing:read"},
		"rate_limit": map[string]any{"requests_per_minute": 60, "burst_limit": 20},
	}).decode(201, &created)
	k := created.APIKey
	if !strings.HasPrefix(k.Key, "sk_live_") || len(k.Key) != 64 || !strings.HasPrefix(k.ID, "ak_") {
		t.Fatalf("bad key shape: %+v", k)
	}

	t.Run("the secret is shown once", func(t *testing.T) {
		var got keyAnswer
		res := h.do("GET", "/v1/auth/api-keys/"+k.ID, owner, nil).decode(200, &got)
		if got.APIKey.Key != "" || strings.Contains(string(res.body), k.Key) {
			t.Fatal("the secret was shown again")
		}
	})
	t.Run("bearer and X-API-Key both work", func(t *testing.T) {
		h.do("GET", "/v1/services/catalog", k.Key, nil).decode(200, nil)
		h.do("GET", "/v1/services/catalog", "", nil, "X-API-Key", k.Key).decode(200, nil)
	})
	t.Run("permissions are enforced", func(t *testing.T) {
		h.do("POST", "/v1/billing/accounts", k.Key, map[string]any{"name": "x", "currency": "USD", "billing_email": "a@example.com"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("usage is counted without a write per request", func(t *testing.T) {
		var before keyAnswer
		h.do("GET", "/v1/auth/api-keys/"+k.ID, owner, nil).decode(200, &before)
		if err := h.srv.FlushUsage(context.Background()); err != nil {
			t.Fatal(err)
		}
		var after keyAnswer
		h.do("GET", "/v1/auth/api-keys/"+k.ID, owner, nil).decode(200, &after)
		if after.APIKey.UsageCount < 3 || after.APIKey.LastUsed == nil || after.APIKey.UsageCount <= before.APIKey.UsageCount {
			t.Fatalf("usage not recorded: before %+v after %+v", before.APIKey, after.APIKey)
		}
	})
	t.Run("a key cannot grant more than its creator", func(t *testing.T) {
		h.do("POST", "/v1/auth/api-keys", k.Key, map[string]any{"name": "x", "permissions": []string{"*"}}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		var limited keyAnswer
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "manager", "permissions": []string{"auth:manage", "services:read"}}).decode(201, &limited)
		h.do("POST", "/v1/auth/api-keys", limited.APIKey.Key, map[string]any{"name": "x", "permissions": []string{"billing:write"}}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", "/v1/auth/api-keys", limited.APIKey.Key, map[string]any{"name": "x", "permissions": []string{"services:read"}}).decode(201, nil)
	})
	t.Run("customers cannot issue keys for other tenants or staff roles", func(t *testing.T) {
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "x", "permissions": []string{"services:read"}, "organization_id": h.tenants[1].org.ID}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "x", "permissions": []string{"services:read"}, "role": "admin"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("bad bodies", func(t *testing.T) {
		for name, body := range map[string]map[string]any{
			"unknown permission": {"name": "x", "permissions": []string{"services:fly"}},
			"no permissions":     {"name": "x", "permissions": []string{}},
			"no name":            {"permissions": []string{"services:read"}},
			"bad cidr":           {"name": "x", "permissions": []string{"services:read"}, "restrictions": map[string]any{"ip_whitelist": []string{"10.0.0.0/33"}}},
			"past expiry":        {"name": "x", "permissions": []string{"services:read"}, "restrictions": map[string]any{"expires_at": "2001-01-01T00:00:00Z"}},
			"above the plan":     {"name": "x", "permissions": []string{"services:read"}, "rate_limit": map[string]any{"requests_per_minute": 100000, "burst_limit": 10}},
			"burst below cost":   {"name": "x", "permissions": []string{"services:read"}, "rate_limit": map[string]any{"requests_per_minute": 10, "burst_limit": 2}},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("POST", "/v1/auth/api-keys", owner, body).wantError(400, "VALIDATION_ERROR")
			})
		}
	})
	t.Run("rotate replaces the secret at once", func(t *testing.T) {
		var rotated keyAnswer
		h.do("POST", "/v1/auth/api-keys/"+k.ID+"/rotate", owner, nil).decode(200, &rotated)
		if rotated.APIKey.Key == "" || rotated.APIKey.Key == k.Key || rotated.APIKey.ID != k.ID {
			t.Fatalf("bad rotation: %+v", rotated.APIKey)
		}
		h.do("GET", "/v1/services/catalog", k.Key, nil).wantError(401, "INVALID_API_KEY")
		h.do("GET", "/v1/services/catalog", rotated.APIKey.Key, nil).decode(200, nil)
		k.Key = rotated.APIKey.Key
	})
	t.Run("revoke", func(t *testing.T) {
		var revoked keyAnswer
		h.do("DELETE", "/v1/auth/api-keys/"+k.ID, owner, nil).decode(200, &revoked)
		if revoked.APIKey.Status != "revoked" {
			t.Fatalf("status %q", revoked.APIKey.Status)
		}
		h.do("GET", "/v1/services/catalog", k.Key, nil).wantError(401, "INVALID_API_KEY")
		h.do("POST", "/v1/auth/api-keys/"+k.ID+"/rotate", owner, nil).wantError(409, "INVALID_STATE_TRANSITION")
		h.do("DELETE", "/v1/auth/api-keys/"+k.ID, owner, nil).decode(200, nil)
	})
	t.Run("listing", func(t *testing.T) {
		var list struct {
			APIKeys    []struct{ ID, Key string } `json:"api_keys"`
			Pagination struct {
				Total      int64  `json:"total"`
				NextCursor string `json:"next_cursor"`
			} `json:"pagination"`
		}
		h.do("GET", "/v1/auth/api-keys?limit=2&sort=created_at:asc", owner, nil).decode(200, &list)
		if len(list.APIKeys) != 2 || list.Pagination.Total < 4 || list.Pagination.NextCursor == "" {
			t.Fatalf("bad page: %+v", list)
		}
		for _, item := range list.APIKeys {
			if item.Key != "" {
				t.Fatal("secret in a list")
			}
		}
		var next struct {
			APIKeys []struct{ ID string } `json:"api_keys"`
		}
		h.do("GET", "/v1/auth/api-keys?limit=2&sort=created_at:asc&cursor="+list.Pagination.NextCursor, owner, nil).decode(200, &next)
		if len(next.APIKeys) == 0 || next.APIKeys[0].ID == list.APIKeys[0].ID || next.APIKeys[0].ID == list.APIKeys[1].ID {
			t.Fatalf("cursor did not advance: %+v", next)
		}
	})
}

func TestAPIKeyRestrictions(t *testing.T) {
	h := newHarness(t)
	owner := h.tenants[0].liveKey
	t.Run("IP allow-list", func(t *testing.T) {
		var k keyAnswer
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "office", "permissions": []string{"services:read"}, "restrictions": map[string]any{"ip_whitelist": []string{"203.0.113.0/24"}}}).decode(201, &k)
		h.do("GET", "/v1/services/catalog", k.APIKey.Key, nil).wantError(403, "IP_NOT_ALLOWED")
		var local keyAnswer
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "local", "permissions": []string{"services:read"}, "restrictions": map[string]any{"ip_whitelist": []string{"0.0.0.0/0"}}}).decode(201, &local)
		h.do("GET", "/v1/services/catalog", local.APIKey.Key, nil).decode(200, nil)
	})
	t.Run("expiry", func(t *testing.T) {
		var k keyAnswer
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "short", "permissions": []string{"services:read"},
			"restrictions": map[string]any{"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}).decode(201, &k)
		h.do("GET", "/v1/services/catalog", k.APIKey.Key, nil).decode(200, nil)
		h.store.Now = func() time.Time { return time.Now().Add(2 * time.Hour).UTC() }
		defer func() { h.store.Now = func() time.Time { return time.Now().UTC() } }()
		h.do("GET", "/v1/services/catalog", k.APIKey.Key, nil).wantError(401, "INVALID_API_KEY")
	})
	t.Run("request signing", func(t *testing.T) {
		var k keyAnswer
		h.do("POST", "/v1/auth/api-keys", owner, map[string]any{"name": "signed", "permissions": []string{"services:read"}, "require_signing": true}).decode(201, &k)
		if k.APIKey.SigningSecret == "" {
			t.Fatal("no signing secret shown")
		}
		path := "/v1/services/catalog?x=1"
		sign := func(ts int64, method, p string) string {
			return base64.StdEncoding.EncodeToString(identity.SignRequest(k.APIKey.SigningSecret, strconv.FormatInt(ts, 10), method, p))
		}
		now := time.Now().Unix()
		h.do("GET", path, k.APIKey.Key, nil).wantError(401, "INVALID_SIGNATURE")
		h.do("GET", path, k.APIKey.Key, nil, "X-Timestamp", strconv.FormatInt(now, 10), "X-Signature", sign(now, "GET", path)).decode(200, nil)
		h.do("GET", path, k.APIKey.Key, nil, "X-Timestamp", strconv.FormatInt(now, 10), "X-Signature", sign(now, "GET", "/v1/other")).wantError(401, "INVALID_SIGNATURE")
		old := now - 600
		h.do("GET", path, k.APIKey.Key, nil, "X-Timestamp", strconv.FormatInt(old, 10), "X-Signature", sign(old, "GET", path)).wantError(401, "INVALID_SIGNATURE")
	})
	t.Run("test keys act on the sandbox partition", func(t *testing.T) {
		var acct struct {
			Account struct{ ID string } `json:"account"`
		}
		h.do("POST", "/v1/billing/accounts", h.tenants[0].testKey, map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "s@example.com"}).decode(201, &acct)
		h.do("GET", "/v1/billing/accounts/"+acct.Account.ID, h.tenants[0].testKey, nil).decode(200, nil)
		h.do("GET", "/v1/billing/accounts/"+acct.Account.ID, owner, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/v1/billing/accounts/"+h.tenants[0].account.ID, h.tenants[0].testKey, nil).wantError(404, "NOT_FOUND")
	})
}
