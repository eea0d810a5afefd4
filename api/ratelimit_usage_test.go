package api_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
)

// TestRateLimitUsageReportsBothUnits: the monitoring endpoint reports
// requests and cost units apart, and the hourly limit in units, for a
// Custom plan its own limit.
func TestRateLimitUsageReportsBothUnits(t *testing.T) {
	h := newHarness(t)
	h.withAnonymousLimits("", "")
	a := h.tenants[0]
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"plan": "custom", "custom_limits": map[string]any{"hourly": 300, "burst": 40, "concurrent": 3}}).decode(200, nil)
	h.do("POST", "/v1/billing/accounts", a.liveKey, map[string]any{"name": "Second", "currency": "USD", "billing_email": "b@example.com"}).decode(201, nil) // 2 units
	var got struct {
		CurrentUsage struct {
			RequestsThisHour int64 `json:"requests_this_hour"`
			UnitsThisHour    int64 `json:"units_this_hour"`
			HourlyLimitUnits *int  `json:"hourly_limit_units"`
			HourlyLimit      int   `json:"hourly_limit"`
			BurstLimit       int   `json:"burst_limit"`
		} `json:"current_usage"`
		UsageHistory []struct {
			Requests int64 `json:"requests"`
			Units    int64 `json:"units"`
		} `json:"usage_history"`
	}
	h.do("GET", "/v1/monitoring/rate-limits", a.liveKey, nil).decode(200, &got)
	cu := got.CurrentUsage
	if cu.HourlyLimitUnits == nil || *cu.HourlyLimitUnits != 300 || cu.HourlyLimit != 300 || cu.BurstLimit != 40 {
		t.Fatalf("limits: %+v", cu)
	}
	// The POST (2 units) and this GET (1 unit): units exceed requests.
	if cu.RequestsThisHour < 2 || cu.UnitsThisHour <= cu.RequestsThisHour {
		t.Fatalf("requests %d, units %d", cu.RequestsThisHour, cu.UnitsThisHour)
	}
}

// TestOAuthTokenCountsAgainstTheClient: a token request with valid client
// authentication is counted against the client (its organization's plan
// limits), not against the address's anonymous budget; a wrong secret is.
func TestOAuthTokenCountsAgainstTheClient(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var c clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "Machine", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"}}).
		decode(http.StatusCreated, &c)
	h.withAnonymousLimits("500", "50")
	token := func(secret string) *response {
		basic := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(c.Client.ClientID) + ":" + url.QueryEscape(secret)))
		return h.do("POST", "/oauth/token", "", url.Values{"grant_type": {"client_credentials"}}.Encode(),
			"Content-Type", "application/x-www-form-urlencoded", "Authorization", "Basic "+basic)
	}
	ok := token(c.Client.ClientSecret)
	if ok.status != http.StatusOK || ok.header.Get("X-RateLimit-Burst") != "500" { // business plan burst
		t.Fatalf("valid client: %d, burst %q: %s", ok.status, ok.header.Get("X-RateLimit-Burst"), ok.body)
	}
	bad := token("cs_wrong")
	if bad.status != http.StatusUnauthorized || bad.header.Get("X-RateLimit-Burst") != "50" { // anonymous burst
		t.Fatalf("wrong secret: %d, burst %q", bad.status, bad.header.Get("X-RateLimit-Burst"))
	}
}

// TestSandboxMonthlyUsageIsItsOwn: an organization's monthly API usage is
// counted per environment. Live requests neither show in a sandbox key's
// figures (GET /v1/billing/usage, the monitoring endpoint's
// monthly_usage) nor are sandbox requests counted in live's, which API
// overage is billed from.
func TestSandboxMonthlyUsageIsItsOwn(t *testing.T) {
	h := newHarness(t)
	h.withAnonymousLimits("", "")
	a := h.tenants[0]
	type monthly struct {
		MonthlyUsage struct {
			Requests int64 `json:"requests"`
		} `json:"monthly_usage"`
	}
	apiCalls := func(key string) int64 {
		t.Helper()
		var u struct {
			TotalUsage struct {
				APICalls int64 `json:"api_calls"`
			} `json:"total_usage"`
		}
		h.do("GET", "/v1/billing/usage?service_type=api", key, nil).decode(200, &u)
		return u.TotalUsage.APICalls
	}
	var test0, live0 monthly
	h.do("GET", "/v1/monitoring/rate-limits", a.testKey, nil).decode(200, &test0) // sandbox request 1
	h.do("GET", "/v1/monitoring/rate-limits", a.liveKey, nil).decode(200, &live0)
	for range 5 {
		h.do("GET", "/v1/users/me", a.liveKey, nil).decode(200, nil)
	}
	var test1, live1 monthly
	h.do("GET", "/v1/monitoring/rate-limits", a.testKey, nil).decode(200, &test1) // sandbox request 2
	h.do("GET", "/v1/monitoring/rate-limits", a.liveKey, nil).decode(200, &live1)
	if test1.MonthlyUsage.Requests != test0.MonthlyUsage.Requests+1 {
		t.Fatalf("sandbox monthly requests %d then %d: live requests counted in the sandbox", test0.MonthlyUsage.Requests, test1.MonthlyUsage.Requests)
	}
	if live1.MonthlyUsage.Requests != live0.MonthlyUsage.Requests+6 {
		t.Fatalf("live monthly requests %d then %d, want +6 (the sandbox's not among them)", live0.MonthlyUsage.Requests, live1.MonthlyUsage.Requests)
	}
	if got := apiCalls(a.testKey); got != test1.MonthlyUsage.Requests+1 {
		t.Fatalf("sandbox api_calls %d, want its own %d", got, test1.MonthlyUsage.Requests+1)
	}
	if got := apiCalls(a.liveKey); got != live1.MonthlyUsage.Requests+1 {
		t.Fatalf("live api_calls %d, want %d", got, live1.MonthlyUsage.Requests+1)
	}
}
