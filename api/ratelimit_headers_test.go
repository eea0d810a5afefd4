package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
)

// withAnonymousLimits replaces the harness server with a rate-limited one
// whose anonymous per-address limits are hourly and burst.
func (h *harness) withAnonymousLimits(hourly, burst string) {
	h.t.Helper()
	rdb, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = closeFn() })
	cfg, err := config.Load(func(name string) string {
		return map[string]string{"ANONYMOUS_HOURLY_LIMIT": hourly, "ANONYMOUS_BURST_LIMIT": burst}[name]
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Redis: rdb, Limiter: ratelimit.New(rdb)})
}

// TestEarlyRefusalsCarryRateLimitHeaders: an unsupported API-Version, a NUL
// in the body and an oversized body are answered with X-RateLimit-*
// headers, the request id and the API version, like every answer: the
// budget counted is the credential's, or the caller address's anonymous one
// for an oversized body (refused before any work) or without a credential.
func TestEarlyRefusalsCarryRateLimitHeaders(t *testing.T) {
	h := newHarness(t)
	h.withAnonymousLimits("700", "70")
	key := h.tenants[0].liveKey
	keyBurst := h.do("GET", "/v1/services/catalog", key, nil).header.Get("X-RateLimit-Burst")
	if keyBurst == "" || keyBurst == "70" {
		t.Fatalf("the key's burst %q must differ from the anonymous one", keyBurst)
	}
	twoMiB := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	tests := []struct {
		name   string
		method string
		path   string
		key    string
		body   any
		header []string
		status int
		code   string
		burst  string // the X-RateLimit-Burst of the budget counted
	}{
		{"bad version, anonymous", "GET", "/v1/services/catalog", "", nil, []string{"API-Version", "2.0.0-beta"}, 400, "UNSUPPORTED_API_VERSION", "70"},
		{"bad version, with a key", "GET", "/v1/services/catalog", key, nil, []string{"API-Version", "9"}, 400, "UNSUPPORTED_API_VERSION", keyBurst},
		{"NUL in the body, with a key", "POST", "/v1/billing/accounts", key, `{"name":"\u0000"}`, nil, 400, "VALIDATION_ERROR", keyBurst},
		{"body above 1 MiB", "POST", "/v1/billing/accounts", key, twoMiB, nil, 413, "PAYLOAD_TOO_LARGE", "70"},
		{"body above 1 MiB, anonymous", "POST", "/v1/webhooks", "", twoMiB, nil, 413, "PAYLOAD_TOO_LARGE", "70"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(tc.method, tc.path, tc.key, tc.body, tc.header...)
			e := res.wantError(tc.status, tc.code)
			// The tightest bucket is reported: the anonymous burst, and the
			// hourly limit of the address or of the endpoint group.
			if res.header.Get("X-RateLimit-Limit") == "" || res.header.Get("X-RateLimit-Burst") != tc.burst || res.header.Get("X-RateLimit-Remaining") == "" {
				t.Fatalf("rate-limit headers: %v", res.header)
			}
			if id := res.header.Get("X-Request-Id"); id == "" || id != e.Error.RequestID || res.header.Get("API-Version") == "" {
				t.Fatalf("request id %q (body %q), API-Version %q", id, e.Error.RequestID, res.header.Get("API-Version"))
			}
			if tc.status == 413 {
				if e.Error.Details["limit_bytes"] != float64(1<<20) || !strings.Contains(e.Error.Message, "1 MiB") {
					t.Fatalf("413 does not state the limit: %+v", e.Error)
				}
			}
		})
	}
}
