package integration

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/worker"
)

// wireMetrics records the store's operation transitions, its pool and the
// outbox lag in m, as the platform's main does.
func wireMetrics(t testing.TB, m *metrics.Metrics, store *models.Store) {
	t.Helper()
	store.Observer = m
	sqlDB, err := store.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	m.RegisterDB(sqlDB)
	m.RegisterOutboxLag(eventlog.NewStore(store).OldestUndispatched, nil)
}

// scraped is one scrape of /metrics: the value of each series line.
type scraped map[string]float64

var seriesLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$`)

// scrapeURL reads a Prometheus text exposition.
func scrapeURL(t testing.TB, url string) scraped {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d %s", url, res.StatusCode, raw)
	}
	out := scraped{}
	for _, l := range strings.Split(string(raw), "\n") {
		if m := seriesLine.FindStringSubmatch(l); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err == nil {
				out[m[1]] = v
			}
		}
	}
	return out
}

// sum adds the values of the series of family whose labels contain every
// one of labels (`name="value"` pieces).
func (s scraped) sum(family string, labels ...string) (total float64, n int) {
	for series, v := range s {
		name, rest, _ := strings.Cut(series, "{")
		if name != family {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(rest, l)
		}
		if ok {
			total += v
			n++
		}
	}
	return total, n
}

// TestMetricsScrapeAfterSession runs a session through the real stack (the
// API, a worker and the outbox dispatcher on a Temporal dev server),
// serves the registry on a loopback listener as WORKER_HTTP_ADDR does, and
// scrapes it: HTTP requests by route template with a 4xx, errors by code,
// rate-limit decisions and the fail-open count, an operation started and
// completed through its workflow, webhook
// delivery attempts, the outbox lag, the pool's statistics, the Go and
// process collectors, and the Temporal SDK's own metrics. (SLA breaches
// and escalations are scraped after a ticket's clocks breach, in
// TestSupportSLABreachEndToEnd.)
func TestMetricsScrapeAfterSession(t *testing.T) {
	m := metrics.New()
	p := startPlatform(t, platformOptions{queuePrefix: "metrics", keys: demoLiveKey, metrics: m, rateLimits: true})
	health := worker.NewHealth(p.temporal, "", func(ctx context.Context) error { return models.Ping(ctx, p.store.DB) }, m, p.queue)
	health.Started(p.queue)
	srv, err := metrics.Listen("127.0.0.1:0", nil, health.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	base := "http://" + srv.Addr()

	received := make(chan struct{}, 10)
	hooks := newHookReceiver(t, func(string, int) int {
		select {
		case received <- struct{}{}:
		default:
		}
		return http.StatusOK
	}, hookSecret1)
	p.subscribe("/v1/services/webhooks", p.liveKey, map[string]any{"url": hooks.srv.URL, "events": []string{"service.provisioned"}, "secret": hookSecret1})
	if status := p.do("GET", "/v1/services/svc_doesnotexist", p.liveKey, nil, nil); status != http.StatusNotFound {
		t.Fatalf("unknown service: %d", status)
	}
	if status := p.do("GET", "/v1/services", "sk_live_notakey", nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d", status)
	}
	p.provision()
	select {
	case <-received:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivery within 30 s")
	}
	var s scraped
	// The delivery attempt, and the provisioning workflow's completion,
	// which the worker counts once its last workflow task is done (after
	// the operation's row says completed).
	p.waitUntil("the delivery attempt and the workflow's completion are counted", func() bool {
		s = scrapeURL(t, base+"/metrics")
		n, _ := s.sum("platform_webhook_delivery_attempts_total", `outcome="success"`, `attempt="1"`)
		done, _ := s.sum("temporal_workflow_completed_total", `workflow_type="`)
		return n >= 1 && done >= 1
	})

	if n, _ := s.sum("platform_http_requests_total", `route="/v1/services/connectivity/internet"`, `method="POST"`, `status="202"`); n != 1 {
		t.Errorf("POST /v1/services/connectivity/internet 202: %v", n)
	}
	if n, _ := s.sum("platform_http_requests_total", `route="/v1/services/:service_id"`, `status="404"`); n != 1 {
		t.Errorf("GET /v1/services/:service_id 404: %v", n)
	}
	if n, _ := s.sum("platform_http_request_duration_seconds_count", `route="/v1/operations/:request_id"`); n < 1 {
		t.Errorf("operation polls timed: %v", n)
	}
	if n, _ := s.sum("platform_http_requests_total", `route="/v1/services"`, `method="GET"`, `status="401"`); n != 1 {
		t.Errorf("GET /v1/services 401 (refused before routing): %v", n)
	}
	if n, _ := s.sum("platform_api_errors_total", `code="NOT_FOUND"`); n != 1 {
		t.Errorf("NOT_FOUND errors: %v", n)
	}
	if n, _ := s.sum("platform_api_errors_total", `code="INVALID_API_KEY"`); n != 1 {
		t.Errorf("INVALID_API_KEY errors: %v", n)
	}
	if n, _ := s.sum("platform_operations_started_total", `type="provisioning"`); n != 1 {
		t.Errorf("provisioning started: %v", n)
	}
	if n, _ := s.sum("platform_operations_finished_total", `type="provisioning"`, `status="completed"`); n != 1 {
		t.Errorf("provisioning completed: %v", n)
	}
	if n, c := s.sum("platform_outbox_lag_seconds"); c != 1 || n < 0 || n > 60 {
		t.Errorf("outbox lag %v (%d series)", n, c)
	}
	if n, _ := s.sum("platform_ratelimit_decisions_total", `outcome="allowed"`); n < 3 {
		t.Errorf("rate-limit decisions allowed: %v", n)
	}
	if n, c := s.sum("platform_ratelimit_fail_open_total"); c != 1 || n != 0 {
		t.Errorf("rate limiter fail-open count %v (%d series)", n, c)
	}
	if _, c := s.sum("go_sql_open_connections", `db_name="platform"`); c != 1 {
		t.Errorf("no pool statistics")
	}
	if n, _ := s.sum("go_goroutines"); n < 10 {
		t.Errorf("go_goroutines %v", n)
	}
	if _, c := s.sum("process_start_time_seconds"); c != 1 {
		t.Errorf("no process collector")
	}
	if n, _ := s.sum("temporal_request_total", `operation="StartWorkflowExecution"`); n < 1 {
		t.Errorf("temporal_request_total of StartWorkflowExecution: %v", n)
	}
	if n, _ := s.sum("temporal_workflow_completed_total", `workflow_type="`); n < 1 {
		t.Errorf("temporal_workflow_completed_total: %v", n)
	}
	if n, _ := s.sum("temporal_activity_execution_latency_count"); n < 1 {
		t.Errorf("temporal_activity_execution_latency: %v", n)
	}
	if status, _ := getBody(t, base+"/readyz"); status != http.StatusOK {
		t.Errorf("readyz %d", status)
	}
	for series := range s {
		if strings.Contains(series, "svc_") || strings.Contains(series, "sk_live") {
			t.Errorf("a raw path or a key in a label: %s", series)
		}
	}
}

func getBody(t testing.TB, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}
