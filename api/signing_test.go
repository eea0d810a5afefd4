package api_test

import (
	"context"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/redisconn"
)

// TestRequestSigningV2AndReplays: a v2 signature covers the body (a tampered
// body is refused), no signature is accepted twice (v1 or v2), and v1
// signatures keep working; with Redis and with the in-memory store.
func TestRequestSigningV2AndReplays(t *testing.T) {
	embedded, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	for name, rdb := range map[string]redis.UniversalClient{"memory": nil, "redis": embedded} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			if rdb != nil {
				cfg, _ := config.Load(func(string) string { return "" })
				h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Redis: rdb})
			}
			var k keyAnswer
			h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "signed", "permissions": []string{"*"}, "require_signing": true}).decode(201, &k)
			secret := k.APIKey.SigningSecret
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			path := "/v1/billing/accounts"
			body := `{"name":"Signed","currency":"USD","billing_email":"s@example.com"}`
			v2 := func(nonce, method, p, b string) string {
				return "v2," + base64.StdEncoding.EncodeToString(identity.SignRequestV2(secret, ts, nonce, method, p, []byte(b)))
			}

			// v2: the body is covered.
			tampered := `{"name":"Tampered","currency":"USD","billing_email":"s@example.com"}`
			h.do("POST", path, k.APIKey.Key, tampered, "X-Timestamp", ts, "X-Nonce", "n-1", "X-Signature", v2("n-1", "POST", path, body)).
				wantError(401, "INVALID_SIGNATURE")
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Signature", v2("", "POST", path, body)).wantError(401, "INVALID_SIGNATURE")
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-1", "X-Signature", v2("n-1", "POST", path, body)).decode(201, nil)
			// The same signed request again: refused, though the signature is valid.
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-1", "X-Signature", v2("n-1", "POST", path, body)).
				wantError(401, "INVALID_SIGNATURE")
			// A new nonce makes a new request.
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-2", "X-Signature", v2("n-2", "POST", path, body)).decode(201, nil)
			// A request refused before it is served (an unsupported
			// API-Version) spends no nonce: sent again with a served
			// version, the same signature is accepted.
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-3", "X-Signature", v2("n-3", "POST", path, body), "API-Version", "9").
				wantError(400, "UNSUPPORTED_API_VERSION")
			h.do("POST", path, k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-3", "X-Signature", v2("n-3", "POST", path, body)).decode(201, nil)

			// v1 still works, bare and with its marker, once per signature.
			cat := "/v1/services/catalog"
			v1 := base64.StdEncoding.EncodeToString(identity.SignRequest(secret, ts, "GET", cat))
			h.do("GET", cat, k.APIKey.Key, nil, "X-Timestamp", ts, "X-Signature", v1).decode(200, nil)
			h.do("GET", cat, k.APIKey.Key, nil, "X-Timestamp", ts, "X-Signature", v1).wantError(401, "INVALID_SIGNATURE")
			v1q := base64.StdEncoding.EncodeToString(identity.SignRequest(secret, ts, "GET", cat+"?a=1"))
			h.do("GET", cat+"?a=1", k.APIKey.Key, nil, "X-Timestamp", ts, "X-Signature", "v1,"+v1q).decode(200, nil)
			h.do("GET", cat, k.APIKey.Key, nil, "X-Timestamp", ts, "X-Signature", "v9,"+v1).wantError(401, "INVALID_SIGNATURE")
		})
	}
}
