package api_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/testenv"
)

// redisBackends returns the embedded server and a real redis-server.
func redisBackends(t *testing.T) map[string]redis.UniversalClient {
	t.Helper()
	out := map[string]redis.UniversalClient{}
	embedded, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	out["embedded"] = embedded
	real, _, closeReal, err := redisconn.Open(context.Background(), testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeReal() })
	out["redis-server"] = real
	return out
}

// withLimiter replaces the harness server with one that rate-limits through rdb.
func (h *harness) withLimiter(rdb redis.UniversalClient) *ratelimit.Limiter {
	h.t.Helper()
	cfg, _ := config.Load(func(string) string { return "" })
	lim := ratelimit.New(rdb)
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Redis: rdb, Limiter: lim})
	return lim
}

// twoInstances returns two API servers, each with its own client to the Redis at url.
func (h *harness) twoInstances(url string) []*api.Server {
	h.t.Helper()
	var servers []*api.Server
	for i := 0; i < 2; i++ {
		rdb, _, closeFn, err := redisconn.Open(context.Background(), url)
		if err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { _ = closeFn() })
		h.withLimiter(rdb)
		servers = append(servers, h.srv)
	}
	return servers
}

// limitedKey creates a key of tenant 0 with its own small limits.
func (h *harness) limitedKey(perMinute, burst int) (id, secret string) {
	h.t.Helper()
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "limited", "permissions": []string{"*"},
		"rate_limit": map[string]any{"requests_per_minute": perMinute, "burst_limit": burst}}).decode(201, &k)
	return k.APIKey.ID, k.APIKey.Key
}

func TestRateLimits(t *testing.T) {
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.withLimiter(rdb)
			t.Run("headers on every answer", func(t *testing.T) {
				_, key := h.limitedKey(100, 50)
				ok := h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
				for _, res := range []*response{
					ok,
					h.do("GET", "/v1/nowhere", key, nil),
					h.do("GET", "/v1/services/catalog", key, nil, "If-None-Match", ok.header.Get("ETag")),
					h.do("GET", "/v1/services/catalog", "sk_live_"+fmt.Sprintf("%056d", 0), nil),
					h.do("POST", "/v1/billing/accounts", key, `{bad json`),
					h.do("GET", "/v1/services/catalog", "", nil),
				} {
					for _, hdr := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Burst", "X-RateLimit-Burst-Remaining", "X-RateLimit-Retry-After"} {
						if res.header.Get(hdr) == "" {
							t.Fatalf("status %d answer without %s: %v", res.status, hdr, res.header)
						}
					}
				}
				if h.do("GET", "/healthz", "", nil).header.Get("X-RateLimit-Limit") != "" {
					t.Fatal("/healthz must be exempt")
				}
			})
			t.Run("costs by method", func(t *testing.T) {
				id, key := h.limitedKey(100, 50)
				remaining := func(res *response) int {
					n, _ := strconv.Atoi(res.header.Get("X-RateLimit-Burst-Remaining"))
					return n
				}
				a := remaining(h.do("GET", "/v1/auth/api-keys/"+id, key, nil))
				b := remaining(h.do("GET", "/v1/auth/api-keys/"+id, key, nil))
				c := remaining(h.do("DELETE", "/v1/auth/api-keys/ak_doesnotexist", key, nil))
				if a-b != 1 || b-c != 3 {
					t.Fatalf("GET should cost 1 and DELETE 3: %d, %d, %d", a, b, c)
				}
			})
			t.Run("burst exhaustion then suspension", func(t *testing.T) {
				keyID, key := h.limitedKey(100, 5)
				for i := 0; i < 5; i++ {
					h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
				}
				e := h.do("GET", "/v1/services/catalog", key, nil)
				body := e.wantError(429, "RATE_LIMIT_EXCEEDED")
				for _, d := range []string{"limit", "remaining", "reset_time", "retry_after", "current_usage"} {
					if _, ok := body.Error.Details[d]; !ok {
						t.Fatalf("details lack %s: %v", d, body.Error.Details)
					}
				}
				if body.Error.Details["bucket"] != "burst" || body.Error.Details["current_usage"] != float64(5) || body.Error.Details["limit"] != float64(5) {
					t.Fatalf("a burst refusal's usage is the burst bucket's: %v", body.Error.Details)
				}
				// ... and so is its reset_time: the burst bucket is full again within its 60 s.
				if reset, err := time.Parse(time.RFC3339, fmt.Sprint(body.Error.Details["reset_time"])); err != nil || time.Until(reset) > 61*time.Second {
					t.Fatalf("a burst refusal's reset_time %v is not the burst bucket's", body.Error.Details["reset_time"])
				}
				if e.header.Get("Retry-After") == "" {
					t.Fatal("429 without Retry-After")
				}
				h.do("GET", "/v1/services/catalog", key, nil).wantError(429, "RATE_LIMIT_EXCEEDED")
				h.do("GET", "/v1/services/catalog", key, nil).wantError(429, "RATE_LIMIT_EXCEEDED")
				suspended := h.do("GET", "/v1/services/catalog", key, nil).wantError(429, "RATE_LIMIT_EXCEEDED")
				if suspended.Error.Details["suspended_until"] == nil || suspended.Error.Details["reset_time"] != suspended.Error.Details["suspended_until"] ||
					suspended.Error.Details["bucket"] != "suspended" {
					t.Fatalf("4th burst rejection should suspend (reset_time its end): %v", suspended.Error.Details)
				}
				var list struct {
					Suspensions []struct {
						CredentialID string `json:"credential_id"`
					} `json:"suspensions"`
				}
				h.do("GET", "/v1/monitoring/rate-limit-suspensions?credential_id="+keyID, h.adminKey, nil).decode(200, &list)
				if len(list.Suspensions) != 1 || list.Suspensions[0].CredentialID != keyID {
					t.Fatalf("suspension not recorded for review: %+v", list)
				}
				h.do("GET", "/v1/monitoring/rate-limit-suspensions", h.tenants[1].liveKey, nil).decode(200, &list)
				if len(list.Suspensions) != 0 {
					t.Fatal("another tenant sees the suspension")
				}
			})
			t.Run("endpoint group counts requests", func(t *testing.T) {
				_, key := h.limitedKey(166, 500) // 9960 units/hour; account management allows 200 requests
				var last *response
				for i := 0; i < 201; i++ {
					last = h.do("GET", "/v1/auth/api-keys?limit=1", key, nil)
					if last.status == 429 {
						break
					}
				}
				e := last.wantError(429, "RATE_LIMIT_EXCEEDED")
				if e.Error.Details["bucket"] != "group" || e.Error.Details["limit"] != float64(200) || e.Error.Details["current_usage"] != float64(200) {
					t.Fatalf("want the account-management group to reject at 200, with current_usage its 200 requests: %v", e.Error.Details)
				}
				h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
			})
			t.Run("usage monitoring", func(t *testing.T) {
				_, key := h.limitedKey(100, 50)
				for i := 0; i < 4; i++ {
					h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
				}
				var u struct {
					CurrentUsage struct {
						RequestsThisHour int64 `json:"requests_this_hour"`
						HourlyLimit      int   `json:"hourly_limit"`
						BurstUsed        int   `json:"burst_used"`
						BurstLimit       int   `json:"burst_limit"`
					} `json:"current_usage"`
					UsageHistory []struct {
						Requests int64 `json:"requests"`
					} `json:"usage_history"`
					ProjectedUsage struct {
						RiskLevel string `json:"risk_level"`
					} `json:"projected_usage"`
					MonthlyUsage struct {
						Requests  int64 `json:"requests"`
						CostUnits int64 `json:"cost_units"`
						Included  int64 `json:"included"`
					} `json:"monthly_usage"`
				}
				h.do("GET", "/api/v1/monitoring/rate-limits", key, nil).decode(200, &u)
				if u.CurrentUsage.RequestsThisHour != 5 || u.CurrentUsage.HourlyLimit != 6000 || u.CurrentUsage.BurstLimit != 50 || u.CurrentUsage.BurstUsed < 5 {
					t.Fatalf("current usage: %+v", u.CurrentUsage)
				}
				if len(u.UsageHistory) != 24 || u.UsageHistory[23].Requests != 5 || u.ProjectedUsage.RiskLevel == "" {
					t.Fatalf("history: %+v", u)
				}
				if u.MonthlyUsage.Requests < 5 || u.MonthlyUsage.CostUnits < u.MonthlyUsage.Requests || u.MonthlyUsage.Included != 500_000 {
					t.Fatalf("monthly usage: %+v", u.MonthlyUsage)
				}
			})
		})
	}
}

func TestConcurrencyCapAndFailOpen(t *testing.T) {
	embedded, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	h := newHarness(t)
	lim := h.withLimiter(embedded)
	org := h.tenants[0].org
	// Business plan: 50 requests in flight per organization and environment.
	var releases []func()
	for i := 0; i < 50; i++ {
		release, ok, err := lim.Acquire(context.Background(), "conc:"+org.ID+":live", 50, 0)
		if err != nil || !ok {
			t.Fatalf("acquire %d: %v %v", i, ok, err)
		}
		releases = append(releases, release)
	}
	refused := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil)
	refused.wantError(429, "CONCURRENCY_LIMIT_EXCEEDED")
	again := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil)
	again.wantError(429, "CONCURRENCY_LIMIT_EXCEEDED")
	// A request refused for its slot takes nothing from the buckets, and its
	// X-RateLimit-Retry-After says what Retry-After says.
	if refused.header.Get("X-RateLimit-Burst-Remaining") == "" || again.header.Get("X-RateLimit-Burst-Remaining") != refused.header.Get("X-RateLimit-Burst-Remaining") ||
		again.header.Get("X-RateLimit-Remaining") != refused.header.Get("X-RateLimit-Remaining") {
		t.Fatalf("refused requests spent units: burst %q then %q, hourly %q then %q", refused.header.Get("X-RateLimit-Burst-Remaining"),
			again.header.Get("X-RateLimit-Burst-Remaining"), refused.header.Get("X-RateLimit-Remaining"), again.header.Get("X-RateLimit-Remaining"))
	}
	if again.header.Get("X-RateLimit-Retry-After") != "1" || again.header.Get("Retry-After") != "1" {
		t.Fatalf("retry headers %q and %q", again.header.Get("X-RateLimit-Retry-After"), again.header.Get("Retry-After"))
	}
	h.do("GET", "/v1/services/catalog", h.tenants[0].testKey, nil).decode(200, nil)
	h.do("GET", "/v1/services/catalog", h.tenants[1].liveKey, nil).decode(200, nil)
	releases[0]()
	h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(200, nil)
	h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(200, nil) // the slot came back after the request
	for _, r := range releases[1:] {
		r()
	}

	t.Run("fails open without Redis", func(t *testing.T) {
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
		defer dead.Close()
		h.withLimiter(dead)
		res := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(200, nil)
		if res.header.Get("X-RateLimit-Limit") != "" {
			t.Fatal("headers invented without counters")
		}
	})
	t.Run("a plan change applies to the next request", func(t *testing.T) {
		h.withLimiter(embedded)
		before := h.do("GET", "/v1/services/catalog", h.tenants[1].liveKey, nil).header.Get("X-RateLimit-Burst")
		h.do("PUT", "/v1/organizations/"+h.tenants[1].org.ID, h.adminKey, map[string]any{"plan": "developer"}).decode(200, nil)
		after := h.do("GET", "/v1/services/catalog", h.tenants[1].liveKey, nil).header.Get("X-RateLimit-Burst")
		if before != "500" || after != "100" {
			t.Fatalf("burst %s -> %s, want 500 -> 100", before, after)
		}
	})
	_ = models.PlanDeveloper
}

// TestLimitsHoldAcrossInstances sends concurrent requests through two API
// instances sharing one real Redis: together they admit exactly the burst.
func TestLimitsHoldAcrossInstances(t *testing.T) {
	h := newHarness(t)
	_, key := h.limitedKey(100, 20)
	servers := h.twoInstances(testenv.RedisURL(t))
	results := make(chan int, 60)
	for i := 0; i < 60; i++ {
		go func(i int) {
			hh := *h
			hh.srv = servers[i%2]
			hh.t = t
			results <- hh.do("GET", "/v1/services/catalog", key, nil).status
		}(i)
	}
	admitted := 0
	for i := 0; i < 60; i++ {
		if <-results == 200 {
			admitted++
		}
	}
	if admitted != 20 {
		t.Fatalf("two instances admitted %d requests, want exactly the burst of 20", admitted)
	}
}

func TestEndpointGroup(t *testing.T) {
	tests := []struct {
		method, path string
		want         ratelimit.Group
	}{
		{"GET", "/v1/billing/invoices", ratelimit.GroupBilling},
		{"GET", "/v1/BILLING/Invoices", ratelimit.GroupBilling}, // the router matches paths without regard to case
		{"POST", "/API/V1/Services/Bulk/Provision/", ratelimit.GroupProvisioning},
		{"POST", "/api/v1/billing/payments", ratelimit.GroupBilling},
		{"GET", "/api/v1/billing/usage", ratelimit.GroupExports},
		{"GET", "/v1/billing/cost-analysis", ratelimit.GroupExports},
		{"GET", "/v1/analytics/performance", ratelimit.GroupExports},
		{"POST", "/v1/analytics/reports", ratelimit.GroupExports},
		{"POST", "/v1/analytics/report-definitions/rdef_1/run", ratelimit.GroupExports},
		{"POST", "/v1/analytics/report-definitions", ratelimit.GroupNone},
		{"GET", "/v1/analytics/reports/rpt_1/download", ratelimit.GroupExports},
		{"POST", "/v1/support/reports/generate", ratelimit.GroupExports},
		{"GET", "/api/v1/services/svc_1/analytics", ratelimit.GroupExports},
		{"GET", "/v1/events", ratelimit.GroupExports},
		{"POST", "/api/v1/services/connectivity/internet", ratelimit.GroupProvisioning},
		{"POST", "/v1/services", ratelimit.GroupProvisioning},
		{"POST", "/v1/services/bulk/provision", ratelimit.GroupProvisioning},
		{"GET", "/api/v1/services/connectivity/internet", ratelimit.GroupNone},
		// Calls that start provisioning too: a retry of a bulk job's items, an orchestration.
		{"POST", "/v1/operations/bulk_1/retry", ratelimit.GroupProvisioning},
		{"POST", "/API/V1/Operations/bulk_1/Retry/", ratelimit.GroupProvisioning},
		{"POST", "/v1/operations/bulk_1/cancel", ratelimit.GroupNone},
		{"POST", "/v1/operations//retry", ratelimit.GroupNone},
		{"GET", "/v1/operations/bulk_1/retry", ratelimit.GroupNone},
		{"POST", "/v1/services/orchestration/workflows", ratelimit.GroupProvisioning},
		{"GET", "/v1/services/orchestration/workflows", ratelimit.GroupNone},
		{"POST", "/v1/auth/api-keys", ratelimit.GroupAccount},
		{"GET", "/v1/organizations/org_1", ratelimit.GroupAccount},
		{"GET", "/v1/users/me", ratelimit.GroupAccount},
		{"GET", "/v1/services/catalog", ratelimit.GroupNone},
		{"GET", "/healthz", ratelimit.GroupNone},
	}
	for _, tc := range tests {
		if got := api.EndpointGroup(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: group %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestRiskLevel(t *testing.T) {
	tests := []struct {
		projected int64
		limit     int
		want      string
	}{
		{0, 1000, "low"}, {499, 1000, "low"}, {500, 1000, "medium"}, {800, 1000, "high"}, {1000, 1000, "critical"}, {5, 0, "low"},
	}
	for _, tc := range tests {
		if got := api.RiskLevel(tc.projected, tc.limit); got != tc.want {
			t.Errorf("RiskLevel(%d, %d) = %s, want %s", tc.projected, tc.limit, got, tc.want)
		}
	}
}

func TestCustomPlanLimits(t *testing.T) {
	embedded, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	h := newHarness(t)
	h.withLimiter(embedded)
	org := h.tenants[0].org.ID
	h.do("PUT", "/v1/organizations/"+org, h.adminKey, map[string]any{"plan": "business", "custom_limits": map[string]any{"hourly": 10, "burst": 5, "concurrent": 1}}).
		wantError(400, "VALIDATION_ERROR")
	h.do("PUT", "/v1/organizations/"+org, h.adminKey, map[string]any{"plan": "custom", "custom_limits": map[string]any{"hourly": 100, "burst": 2, "concurrent": 1}}).
		wantError(400, "VALIDATION_ERROR")
	var got struct {
		Organization struct {
			Plan   string `json:"plan"`
			Limits struct {
				HourlyLimit     int `json:"hourly_limit"`
				BurstLimit      int `json:"burst_limit"`
				ConcurrentLimit int `json:"concurrent_limit"`
			} `json:"limits"`
		} `json:"organization"`
	}
	h.do("PUT", "/v1/organizations/"+org, h.adminKey, map[string]any{"plan": "custom", "custom_limits": map[string]any{"hourly": 300, "burst": 40, "concurrent": 3}}).decode(200, &got)
	if got.Organization.Plan != "custom" || got.Organization.Limits.HourlyLimit != 300 || got.Organization.Limits.BurstLimit != 40 || got.Organization.Limits.ConcurrentLimit != 3 {
		t.Fatalf("custom limits not applied: %+v", got)
	}
	res := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil).decode(200, nil)
	if res.header.Get("X-RateLimit-Limit") != "300" || res.header.Get("X-RateLimit-Burst") != "40" {
		t.Fatalf("headers %v", res.header)
	}
}

// TestLimiterRecoversWhenRedisReturns fails open while the server is down and
// limits again once it is back on the same address.
func TestLimiterRecoversWhenRedisReturns(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rdb.Close()
	h := newHarness(t)
	h.withLimiter(rdb)
	key := h.tenants[0].liveKey
	if h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil).header.Get("X-RateLimit-Limit") == "" {
		t.Fatal("no headers while Redis is up")
	}
	m.Close()
	if h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil).header.Get("X-RateLimit-Limit") != "" {
		t.Fatal("headers while Redis is down: the limiter did not fail open")
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	var ok bool
	for i := 0; i < 50 && !ok; i++ {
		ok = h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil).header.Get("X-RateLimit-Limit") != ""
	}
	if !ok {
		t.Fatal("the limiter did not recover after Redis came back")
	}
}

// TestTwoInstancesShareLimits runs two API instances against one real
// redis-server: concurrent clients of mixed methods are admitted at most the
// burst in cost units, a burst abuser is suspended on both instances, and the
// organization's concurrency cap holds across them.
func TestTwoInstancesShareLimits(t *testing.T) {
	h := newHarness(t)
	servers := h.twoInstances(testenv.RedisURL(t))
	via := func(i int) *harness {
		hh := *h
		hh.srv = servers[i%2]
		return &hh
	}

	t.Run("mixed methods never exceed the burst in cost units", func(t *testing.T) {
		_, key := h.limitedKey(160, 60)
		methods := []struct {
			method, path string
			cost         int
		}{{"GET", "/v1/services/catalog", 1}, {"POST", "/v1/billing/accounts", 2}, {"DELETE", "/v1/auth/api-keys/ak_missing", 3}}
		type outcome struct{ status, cost int }
		results := make(chan outcome, 90)
		for i := 0; i < 90; i++ {
			go func(i int) {
				m := methods[i%3]
				res := via(i).do(m.method, m.path, key, map[string]any{"name": "x"})
				results <- outcome{res.status, m.cost}
			}(i)
		}
		spent, rejected := 0, 0
		for i := 0; i < 90; i++ {
			o := <-results
			if o.status == 429 {
				rejected++
			} else {
				spent += o.cost
			}
		}
		if spent > 60 || spent < 55 || rejected == 0 {
			t.Fatalf("admitted %d cost units (burst 60), %d rejected", spent, rejected)
		}
	})
	t.Run("a burst abuser is suspended on both instances", func(t *testing.T) {
		_, key := h.limitedKey(160, 5)
		for i := 0; i < 5; i++ {
			via(i).do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
		}
		var last errorBody
		for i := 0; i < 4; i++ {
			last = via(i).do("GET", "/v1/services/catalog", key, nil).wantError(429, "RATE_LIMIT_EXCEEDED")
		}
		if last.Error.Details["suspended_until"] == nil {
			t.Fatalf("not suspended: %v", last.Error.Details)
		}
		for i := 0; i < 2; i++ {
			e := via(i).do("GET", "/v1/services/catalog", key, nil).wantError(429, "RATE_LIMIT_EXCEEDED")
			if e.Error.Details["suspended_until"] == nil {
				t.Fatalf("instance %d does not see the suspension", i)
			}
		}
	})
	t.Run("the concurrency cap holds across instances", func(t *testing.T) {
		// Tenant 1 on the developer plan: 10 requests in flight.
		h.do("PUT", "/v1/organizations/"+h.tenants[1].org.ID, h.adminKey, map[string]any{"plan": "developer"}).decode(200, nil)
		release := make(chan struct{})
		for _, srv := range servers {
			srv.App.Get("/v1/test-blocking", func(c *fiber.Ctx) error { <-release; return c.SendStatus(200) })
		}
		statuses := make(chan int, 16)
		for i := 0; i < 16; i++ {
			go func(i int) { statuses <- via(i).do("GET", "/v1/test-blocking", h.tenants[1].liveKey, nil).status }(i)
		}
		for i := 0; i < 6; i++ { // the six beyond the cap come back while ten are held
			if s := <-statuses; s != 429 {
				t.Fatalf("status %d while the cap is full, want 429", s)
			}
		}
		close(release)
		for i := 0; i < 10; i++ {
			if s := <-statuses; s != 200 {
				t.Fatalf("held request answered %d", s)
			}
		}
		via(0).do("GET", "/v1/services/catalog", h.tenants[1].liveKey, nil).decode(200, nil)
	})
}
