package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/logging"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/ratelimit"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// observed replaces the harness server with one that records metrics,
// logs JSON (the production logger, at debug) into the returned buffer and
// rate-limits anonymous callers to anonymousLimit units an hour through
// miniredis.
func (h *harness) observed(t *testing.T, anonymousLimit string) (*metrics.Metrics, *lockedBuffer) {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"ANONYMOUS_HOURLY_LIMIT": anonymousLimit, "ANONYMOUS_BURST_LIMIT": anonymousLimit}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	m := metrics.New()
	logs := &lockedBuffer{}
	log := logging.New(logs, "json", "debug", api.LogAttrs)
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Redis: rdb, Limiter: ratelimit.New(rdb), Logger: log, Metrics: m, Blobs: h.blobs})
	return m, logs
}

func scrapeMetrics(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestMetricsAfterSession scrapes the registry after a few requests: a
// 200 and a 404 under their route templates (never the raw path), 401s
// and 429s refused before routing under the template they were meant for,
// the
// error counted by code, rate-limit decisions with a refusal, and one
// access-log line per request carrying the request id and the caller.
func TestMetricsAfterSession(t *testing.T) {
	h := newHarness(t)
	m, logs := h.observed(t, "5")
	a := h.tenants[0]
	h.do("GET", "/v1/billing/accounts/"+a.account.ID, a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/services/svc_doesnotexist", a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/no/such/path/at/all", a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/auth/api-keys", "sk_live_wrong", map[string]any{"name": "x"}).wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	limited := 0
	for range 8 {
		if h.do("GET", "/v1/services/catalog", "", nil).status == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("no anonymous request was rate-limited")
	}
	body := scrapeMetrics(t, m)
	for _, want := range []string{
		`platform_http_requests_total{method="GET",route="/v1/billing/accounts/:account_id",status="200"} 1`,
		`platform_http_requests_total{method="GET",route="/v1/services/:service_id",status="404"} 1`,
		`platform_http_requests_total{method="GET",route="(unmatched)",status="404"} 1`,
		`platform_http_request_duration_seconds_count{method="GET",route="/v1/billing/accounts/:account_id"} 1`,
		`platform_http_requests_total{method="GET",route="/v1/services/catalog",status="429"} ` + strconv.Itoa(limited),
		`platform_http_requests_total{method="POST",route="/v1/auth/api-keys",status="401"} 1`,
		`platform_api_errors_total{code="NOT_FOUND"} 2`,
		`platform_api_errors_total{code="RATE_LIMIT_EXCEEDED"}`,
		`platform_ratelimit_decisions_total{bucket="hourly",outcome="limited"}`,
		`platform_ratelimit_decisions_total{bucket="hourly",outcome="allowed"}`,
		`platform_ratelimit_fail_open_total 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, "svc_doesnotexist") || strings.Contains(body, "/no/such/path") {
		t.Errorf("a raw path is a label value")
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not a JSON log line: %q", l)
		}
		if rec["msg"] == "request" {
			lines = append(lines, rec)
		}
	}
	if len(lines) != 12 {
		t.Fatalf("%d access-log lines for 12 requests", len(lines))
	}
	first := lines[0]
	for _, k := range []string{"method", "route", "status", "latency_ms", "bytes", "request_id", "organization", "environment", "principal_id"} {
		if _, ok := first[k]; !ok {
			t.Errorf("access-log line lacks %s: %v", k, first)
		}
	}
	if first["organization"] != a.org.ID || first["environment"] != "live" || first["route"] != "/v1/billing/accounts/:account_id" {
		t.Errorf("access-log line %v", first)
	}
}

// TestNoSecretsInLogs runs a session that handles every kind of secret
// (an API key created and used, a password sign-in, an OAuth client
// secret and its access token, a webhook signing secret) with the
// production JSON logger at debug level, then looks for each planted
// secret in what was logged.
func TestNoSecretsInLogs(t *testing.T) {
	h := newHarness(t)
	_, logs := h.observed(t, "1000")
	a := h.tenants[0]
	var secrets []string

	var key struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "planted", "permissions": []string{"*"}}).decode(http.StatusCreated, &key)
	secrets = append(secrets, key.APIKey.Key, a.liveKey)
	h.do("GET", "/v1/services", key.APIKey.Key, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/services", key.APIKey.Key+"x", nil).wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	h.do("GET", "/v1/services", "", nil, "X-API-Key", key.APIKey.Key).decode(http.StatusOK, nil)

	const password = "planted correct horse battery"
	secrets = append(secrets, password)
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "pat@tenant-a.example", "name": "Pat", "role": "customer",
		"organization_id": a.org.ID, "password": password}).decode(http.StatusCreated, nil)
	b := &browserish{t: t, h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/portal", nil)
	csrf := hiddenCSRF.FindStringSubmatch(page)[1]
	b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {"pat@tenant-a.example"}, "password": {password + "!"}})
	if res, _ := b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {"pat@tenant-a.example"}, "password": {password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("password sign-in: %d", res.StatusCode)
	}
	if s := b.cookies["platform_session"]; s != "" {
		secrets = append(secrets, s)
	}

	var reg struct {
		Client struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "planted", "grant_types": []string{"client_credentials"},
		"scopes": []string{"services.read"}}).decode(http.StatusCreated, &reg)
	secrets = append(secrets, reg.Client.ClientSecret)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(reg.Client.ClientID+":"+reg.Client.ClientSecret))
	req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader("grant_type=client_credentials&scope=services.read"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", basic)
	res, err := h.srv.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("client credentials: %d %s", res.StatusCode, raw)
	}
	secrets = append(secrets, tok.AccessToken)
	h.do("GET", "/v1/services", tok.AccessToken, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/services", tok.AccessToken[:len(tok.AccessToken)-4]+"AAAA", nil).wantError(http.StatusUnauthorized, "INVALID_TOKEN")

	const whsec = "whsec_cGxhbnRlZCB3ZWJob29rIHNpZ25pbmcgc2VjcmV0ISE="
	secrets = append(secrets, whsec)
	h.do("POST", "/v1/billing/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"invoice.generated"}, "secret": whsec}).decode(http.StatusCreated, nil)
	h.do("POST", "/v1/billing/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"invoice.generated"}, "secret": whsec + "?"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	out := logs.String()
	if !strings.Contains(out, `"msg":"request"`) {
		t.Fatalf("nothing logged: %q", out)
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("a planted secret is empty")
		}
		if strings.Contains(out, s) {
			t.Errorf("the logs hold a planted secret %.12s...", s)
		}
	}
}
