package metrics_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/telcoplatform/platform/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func wantLines(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(body, l) {
			t.Errorf("scrape lacks %q", l)
		}
	}
}

// TestFamilies: every recording method shows in the scrape under its
// family, with the labels docs/operations.md lists.
func TestFamilies(t *testing.T) {
	m := metrics.New()
	m.ObserveHTTP("/v1/services/:service_id", "GET", 200, 30*time.Millisecond)
	m.APIError("NOT_FOUND")
	m.RateLimitDecision("hourly", true)
	m.RateLimitDecision("burst", false)
	m.RegisterFailOpen(func() float64 { return 1 })
	m.RegisterFailOpen(func() float64 { return 5 })
	m.OperationStatusChanged("provision", "pending", "in_progress")
	m.OperationStatusChanged("provision", "in_progress", "completed")
	m.OperationStatusChanged("provision", "in_progress", "in_progress")
	m.WebhookAttempt(false, 1)
	m.WebhookAttempt(true, 9)
	m.SLABreach("response")
	m.SLAEscalation("resolution", "notify_assignee")
	m.StreamDisconnected("shutdown")
	m.StreamHorizonCapped()
	m.RegisterOutboxLag(func(context.Context) (time.Time, bool, error) {
		return time.Unix(1000, 0), true, nil
	}, func() time.Time { return time.Unix(1042, 0) })
	body := scrape(t, m)
	wantLines(t, body,
		`platform_http_requests_total{method="GET",route="/v1/services/:service_id",status="200"} 1`,
		`platform_http_request_duration_seconds_bucket{method="GET",route="/v1/services/:service_id",le="0.05"} 1`,
		`platform_api_errors_total{code="NOT_FOUND"} 1`,
		`platform_ratelimit_decisions_total{bucket="hourly",outcome="allowed"} 1`,
		`platform_ratelimit_decisions_total{bucket="burst",outcome="limited"} 1`,
		`platform_ratelimit_fail_open_total 1`,
		`platform_operations_started_total{type="provision"} 1`,
		`platform_operations_finished_total{status="completed",type="provision"} 1`,
		`platform_webhook_delivery_attempts_total{attempt="1",outcome="failure"} 1`,
		`platform_webhook_delivery_attempts_total{attempt="7+",outcome="success"} 1`,
		`platform_sla_breaches_total{metric="response"} 1`,
		`platform_sla_escalations_total{action="notify_assignee",metric="resolution"} 1`,
		`platform_stream_disconnects_total{reason="shutdown"} 1`,
		`platform_stream_horizon_capped_total 1`,
		`platform_outbox_lag_seconds 42`,
		`go_goroutines `,
	)
}

// TestNilMetrics: a nil *Metrics records nothing and does not panic.
func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics
	m.ObserveHTTP("/", "GET", 200, time.Second)
	m.APIError("X")
	m.RateLimitDecision("hourly", true)
	m.RegisterFailOpen(func() float64 { return 1 })
	m.OperationStatusChanged("a", "pending", "in_progress")
	m.WebhookAttempt(true, 1)
	m.SLABreach("response")
	m.SLAEscalation("response", "x")
	m.StreamDisconnected("shutdown")
	m.StreamHorizonCapped()
	m.RegisterDB(nil)
	m.RegisterOutboxLag(nil, nil)
	m.TemporalHandler().WithTags(map[string]string{"a": "b"}).Counter("c").Inc(1)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("nil handler: %d", rec.Code)
	}
}

// TestOutboxLagEmptyAndFailing: no waiting event is a lag of 0; a failed
// read leaves the gauge out and counts the failure.
func TestOutboxLagEmptyAndFailing(t *testing.T) {
	m := metrics.New()
	m.RegisterOutboxLag(func(context.Context) (time.Time, bool, error) { return time.Time{}, false, nil }, nil)
	wantLines(t, scrape(t, m), "platform_outbox_lag_seconds 0", "platform_outbox_lag_errors_total 0")
	m = metrics.New()
	m.RegisterOutboxLag(func(context.Context) (time.Time, bool, error) { return time.Time{}, false, errors.New("down") }, nil)
	body := scrape(t, m)
	if strings.Contains(body, "platform_outbox_lag_seconds ") {
		t.Errorf("lag exposed after a failed read")
	}
	wantLines(t, body, "platform_outbox_lag_errors_total 1")
}

// TestTemporalHandler: the SDK's counters, gauges and timers appear
// under their names with their tags, one name with different tag sets
// included.
func TestTemporalHandler(t *testing.T) {
	m := metrics.New()
	h := m.TemporalHandler().WithTags(map[string]string{"namespace": "default"})
	h.Counter("temporal_request").Inc(2)
	h.WithTags(map[string]string{"operation": "StartWorkflowExecution"}).Counter("temporal_request").Inc(1)
	h.Gauge("temporal_worker_task_slots_available").Update(7)
	h.Timer("temporal_request_latency").Record(20 * time.Millisecond)
	h.Timer("temporal_request_latency").Record(2 * time.Minute)
	body := scrape(t, m)
	wantLines(t, body,
		`temporal_request_total{namespace="default"} 2`,
		`temporal_request_total{namespace="default",operation="StartWorkflowExecution"} 1`,
		`temporal_worker_task_slots_available{namespace="default"} 7`,
		`temporal_request_latency_bucket{namespace="default",le="0.025"} 1`,
		`temporal_request_latency_bucket{namespace="default",le="+Inf"} 2`,
		`temporal_request_latency_count{namespace="default"} 2`,
	)
}

// TestDBStats: the pool statistics appear as go_sql_* families.
func TestDBStats(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := metrics.New()
	m.RegisterDB(db)
	wantLines(t, scrape(t, m), `go_sql_max_open_connections{db_name="platform"}`)
}

// TestListenAllowList: loopback clients are served; an allow-list that
// does not hold the client's address answers 403.
func TestListenAllowList(t *testing.T) {
	m := metrics.New()
	srv, err := metrics.Listen("127.0.0.1:0", nil, m.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	res, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") {
		t.Fatalf("loopback scrape: %d", res.StatusCode)
	}
	h := metrics.AllowList([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, m.Handler())
	for remote, want := range map[string]int{"10.1.2.3:5000": 200, "192.0.2.1:5000": 403, "[::1]:5000": 200, "[::ffff:10.0.0.1]:1": 200, "garbage": 403} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("from %s: %d, want %d", remote, rec.Code, want)
		}
	}
}
