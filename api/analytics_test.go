package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/ratelimit"
)

// analyticsUsageAnswer is the part of GET /v1/analytics/usage the tests read.
type analyticsUsageAnswer struct {
	Usage struct {
		Query struct {
			From, To, Period, Timezone, Granularity string
			Filters                                 map[string]string
		} `json:"query"`
		Totals struct {
			Samples int64 `json:"samples"`
		} `json:"totals"`
		Buckets []struct {
			Start, End string
			Samples    int64 `json:"samples"`
		} `json:"buckets"`
		Services []struct {
			ServiceID string `json:"service_id"`
			Category  string `json:"category"`
		} `json:"services"`
		Categories   []map[string]any `json:"categories"`
		ServiceTypes []map[string]any `json:"service_types"`
	} `json:"usage"`
}

func TestAnalyticsEndpointsCountAsExports(t *testing.T) {
	for _, path := range []string{"/v1/analytics/usage", "/v1/analytics/costs", "/v1/analytics/performance", "/api/v1/analytics/usage", "/api/v1/analytics/costs"} {
		if got := api.EndpointGroup(http.MethodGet, path); got != ratelimit.GroupExports {
			t.Errorf("GET %s: group %q, want %q", path, got, ratelimit.GroupExports)
		}
	}
}

func TestAnalyticsUsageEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svcA := mustService(t, h, a)
	svcB := mustService(t, h, b)

	var u analyticsUsageAnswer
	h.do("GET", "/v1/analytics/usage?period=last_24_hours&timezone=Europe/Berlin&service_type=connectivity", a.liveKey, nil).decode(http.StatusOK, &u)
	q := u.Usage.Query
	if q.Period != "last_24_hours" || q.Timezone != "Europe/Berlin" || q.Granularity != "hour" || q.Filters["service_type"] != "connectivity" || q.From == "" || q.To == "" {
		t.Errorf("query echo %+v", q)
	}
	if n := len(u.Usage.Buckets); n < 24 || n > 25 {
		t.Errorf("%d hourly buckets", n)
	}
	if u.Usage.Totals.Samples != 1 || len(u.Usage.Services) != 1 || u.Usage.Services[0].ServiceID != svcA || u.Usage.Services[0].Category != "connectivity" {
		t.Errorf("usage %+v", u.Usage)
	}
	if len(u.Usage.Categories) != 5 || len(u.Usage.ServiceTypes) != 1 {
		t.Errorf("categories %v, service types %v", u.Usage.Categories, u.Usage.ServiceTypes)
	}

	// Defaults: the last 30 days by day in UTC.
	h.do("GET", "/v1/analytics/usage", a.liveKey, nil).decode(http.StatusOK, &u)
	if u.Usage.Query.Period != "last_30_days" || u.Usage.Query.Granularity != "day" || u.Usage.Query.Timezone != "UTC" || len(u.Usage.Buckets) < 30 || len(u.Usage.Buckets) > 31 {
		t.Errorf("defaults %+v with %d buckets", u.Usage.Query, len(u.Usage.Buckets))
	}

	// Tenancy: another tenant's service or account answers 404; staff see both.
	h.do("GET", "/v1/analytics/usage?service_id="+svcB, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/usage?account_id="+b.account.ID, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/usage?period=last_24_hours", h.adminKey, nil).decode(http.StatusOK, &u)
	if u.Usage.Totals.Samples < 2 {
		t.Errorf("staff counted %d samples, want both tenants'", u.Usage.Totals.Samples)
	}
	h.do("GET", "/v1/analytics/usage?period=last_24_hours&organization_id="+b.org.ID, h.adminKey, nil).decode(http.StatusOK, &u)
	if u.Usage.Totals.Samples != 1 || u.Usage.Services[0].ServiceID != svcB {
		t.Errorf("staff, organization B: %+v", u.Usage)
	}
	// The test environment sees none of the live tenant's data.
	h.do("GET", "/v1/analytics/usage?period=last_24_hours", a.testKey, nil).decode(http.StatusOK, &u)
	if u.Usage.Totals.Samples != 0 {
		t.Errorf("test environment counted %d samples", u.Usage.Totals.Samples)
	}
}

func TestAnalyticsValidation(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	cases := []struct {
		query  string
		fields []string
	}{
		{"period=fortnight", []string{"period"}},
		{"granularity=minute", []string{"granularity"}},
		{"timezone=Mars/Olympus&from=2026-01-01", []string{"timezone", "to"}},
		{"from=2026-01-01&to=2025-01-01", []string{"to"}},
		{"from=2026-01-01&to=2026-03-01&granularity=hour", []string{"granularity"}},
		{"period=last_7_days&from=2026-01-01&to=2026-01-02", []string{"period"}},
		{"organization_id=" + a.org.ID, []string{"organization_id"}},
	}
	for _, path := range []string{"/v1/analytics/usage", "/v1/analytics/costs", "/v1/analytics/performance"} {
		for _, c := range cases {
			e := h.do("GET", path+"?"+c.query, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			fields, _ := e.Error.Details["fields"].([]any)
			got := map[string]bool{}
			for _, f := range fields {
				if m, ok := f.(map[string]any); ok {
					got[m["field"].(string)] = true
				}
			}
			for _, f := range c.fields {
				if !got[f] {
					t.Errorf("%s?%s: fields %v, want %s named", path, c.query, fields, f)
				}
			}
		}
	}
	h.do("GET", "/v1/analytics/costs?currency=dollars", a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	// A code the platform does not bill in counts nothing: refused, not 200 with zeros.
	for _, path := range []string{"/v1/analytics/costs?currency=XYZ", "/v1/analytics/trends?currency=QQQ"} {
		e := h.do("GET", path, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "currency") {
			t.Fatalf("%s: %+v", path, e.Error)
		}
	}
	h.do("GET", "/v1/analytics/costs?currency=eur", a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/analytics/usage", "", nil).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
}

func TestAnalyticsCostsEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svcB := mustService(t, h, b)
	var c struct {
		Costs struct {
			Query      map[string]any   `json:"query"`
			Currency   string           `json:"currency"`
			Totals     map[string]any   `json:"totals"`
			Buckets    []map[string]any `json:"buckets"`
			Categories []map[string]any `json:"categories"`
			Credits    []map[string]any `json:"credits"`
			Budgets    []map[string]any `json:"budgets"`
			Forecast   map[string]any   `json:"forecast"`
		} `json:"costs"`
	}
	h.do("GET", "/v1/analytics/costs?period=current_month&timezone=America/New_York", a.liveKey, nil).decode(http.StatusOK, &c)
	if c.Costs.Currency != "USD" || c.Costs.Query["timezone"] != "America/New_York" || c.Costs.Query["granularity"] != "day" {
		t.Errorf("costs %+v", c.Costs)
	}
	if n := len(c.Costs.Buckets); n < 28 || n > 31 {
		t.Errorf("%d daily buckets", n)
	}
	if len(c.Costs.Categories) != 7 || c.Costs.Credits == nil || c.Costs.Budgets == nil {
		t.Errorf("categories %v credits %v budgets %v", c.Costs.Categories, c.Costs.Credits, c.Costs.Budgets)
	}
	for _, k := range []string{"charges", "unbilled_usage", "credits", "net"} {
		if c.Costs.Totals[k] != 0.0 {
			t.Errorf("totals %v", c.Costs.Totals)
		}
	}
	if c.Costs.Forecast["method"] != "linear_run_rate" || c.Costs.Forecast["forecast"] != 0.0 {
		t.Errorf("forecast %v", c.Costs.Forecast)
	}
	h.do("GET", "/v1/analytics/costs?service_id="+svcB, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/costs?organization_id="+b.org.ID, h.adminKey, nil).decode(http.StatusOK, &c)
	if c.Costs.Query["filters"].(map[string]any)["organization_id"] != b.org.ID {
		t.Errorf("filters echo %v", c.Costs.Query)
	}
}

func TestAnalyticsPerformanceEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svcA := mustService(t, h, a)
	svcB := mustService(t, h, b)
	var p struct {
		Performance struct {
			Query            map[string]any   `json:"query"`
			PercentileMethod string           `json:"percentile_method"`
			Totals           map[string]any   `json:"totals"`
			Buckets          []map[string]any `json:"buckets"`
			Services         []map[string]any `json:"services"`
			SLA              map[string]any   `json:"sla_attainment"`
		} `json:"performance"`
	}
	h.do("GET", "/v1/analytics/performance?period=last_24_hours&timezone=Europe/Berlin", a.liveKey, nil).decode(http.StatusOK, &p)
	perf := p.Performance
	if perf.Query["timezone"] != "Europe/Berlin" || perf.Query["granularity"] != "hour" || perf.PercentileMethod != "nearest_rank_1ms_histogram" {
		t.Errorf("query %v method %q", perf.Query, perf.PercentileMethod)
	}
	if n := len(perf.Buckets); n < 24 || n > 25 {
		t.Errorf("%d hourly buckets", n)
	}
	for _, k := range []string{"samples", "up_samples", "availability_pct", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "jitter_ms",
		"packet_loss_pct", "utilization_pct", "incidents", "restored", "mttr_minutes"} {
		if _, ok := perf.Totals[k]; !ok {
			t.Errorf("totals lack %s: %v", k, perf.Totals)
		}
	}
	if perf.Totals["samples"] != 1.0 || len(perf.Services) != 1 || perf.Services[0]["service_id"] != svcA || perf.Services[0]["availability_target_pct"] == nil {
		t.Errorf("totals %v services %v", perf.Totals, perf.Services)
	}
	if perf.SLA["services_measured"] != 1.0 {
		t.Errorf("sla %v", perf.SLA)
	}

	// An empty period: zeros and nulls.
	h.do("GET", "/v1/analytics/performance?from=2001-01-01&to=2001-01-03&granularity=day", a.liveKey, nil).decode(http.StatusOK, &p)
	perf = p.Performance
	if len(perf.Buckets) != 2 || perf.Totals["samples"] != 0.0 || perf.Totals["availability_pct"] != nil || perf.Totals["latency_p95_ms"] != nil ||
		perf.Totals["mttr_minutes"] != nil || len(perf.Services) != 0 || perf.SLA["attainment_pct"] != nil {
		t.Errorf("empty totals %v services %v sla %v", perf.Totals, perf.Services, perf.SLA)
	}
	h.do("GET", "/v1/analytics/performance?service_id="+svcB, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/performance", "", nil).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
}
