package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/ratelimit"
)

// trendsAnswer is GET /v1/analytics/trends as the tests read it.
type trendsAnswer struct {
	Trends struct {
		Query          map[string]any    `json:"query"`
		Horizon        int               `json:"horizon"`
		Currency       string            `json:"currency"`
		ComparedPeriod map[string]string `json:"compared_period"`
		PreviousPeriod map[string]string `json:"previous_period"`
		Series         []struct {
			Metric         string   `json:"metric"`
			Unit           string   `json:"unit"`
			CurrentTotal   float64  `json:"current_total"`
			PreviousTotal  float64  `json:"previous_total"`
			GrowthRatePct  *float64 `json:"growth_rate_pct"`
			ForecastReason string   `json:"forecast_reason"`
			Buckets        []struct {
				Start, End string
				Value      float64  `json:"value"`
				ChangePct  *float64 `json:"change_pct"`
			} `json:"buckets"`
			Forecast *struct {
				Method        string `json:"method"`
				ConfidencePct int    `json:"confidence_pct"`
				FittedFrom    string `json:"fitted_from"`
				FittedTo      string `json:"fitted_to"`
				Fit           struct {
					Buckets int     `json:"buckets"`
					Slope   float64 `json:"slope"`
				} `json:"fit"`
				Points []struct {
					Start, End          string
					Value, Lower, Upper float64
				} `json:"points"`
			} `json:"forecast"`
		} `json:"series"`
		Omitted []map[string]string `json:"omitted"`
	} `json:"trends"`
}

// metrics returns the series' metrics in order.
func (a *trendsAnswer) metrics() []string {
	var out []string
	for _, s := range a.Trends.Series {
		out = append(out, s.Metric)
	}
	return out
}

// seedTrendsAPI gives tenant a (service svc) data in 5-9 January 2026 (the
// period) and 31 December 2025 - 4 January (the previous one): 1 to 5 GB a
// day against 5 GB, an invoice of 120.00 against none, two tickets against
// one.
func seedTrendsAPI(t *testing.T, h *harness, tn tenant, svc string, gb ...float64) {
	t.Helper()
	ctx := context.Background()
	db := h.store.In(ctx, models.TenantScope(tn.org.ID, models.EnvLive))
	day := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	rows := []any{&telemetry.TelemetrySample{ServiceID: svc, At: day.AddDate(0, 0, -3), Up: true, DataMB: 5000}}
	for i, g := range gb {
		rows = append(rows, &telemetry.TelemetrySample{ServiceID: svc, At: day.AddDate(0, 0, i), Up: true, DataMB: g * 1000})
	}
	inv := "inv_" + models.RandomString(12)
	rows = append(rows, &billing.Invoice{ID: inv, AccountID: tn.account.ID, Number: inv, Status: billing.InvoicePending, Source: billing.InvoiceSourceManual,
		Currency: "USD", Subtotal: 12000, Total: 12000, IssuedAt: day, DueDate: day.AddDate(0, 0, 30)},
		&billing.InvoiceLine{InvoiceID: inv, Kind: billing.LineRecurring, ServiceID: svc, Category: "connectivity", Description: "x", Quantity: 1,
			UnitPrice: 12000, Amount: 12000})
	for i, at := range []time.Time{day, day.Add(time.Hour), day.AddDate(0, 0, -2)} {
		rows = append(rows, &support.Ticket{ID: models.NewID(models.PrefixTicket), Number: fmt.Sprintf("TKT-T%d-%s", i, models.RandomString(6)), Title: "t",
			CustomerID: "cus_x", Status: "open", Priority: "medium", Category: "technical", SLAResponseMinutes: 60, SLAResolutionMinutes: 240,
			ResponseDue: at.Add(time.Hour), ResolutionDue: at.Add(4 * time.Hour), CreatedBy: "usr_x", CreatedAt: at, UpdatedAt: at})
	}
	for _, r := range rows {
		if err := db.Create(r).Error; err != nil {
			t.Fatal(err)
		}
	}
}

const trendsJan = "/v1/analytics/trends?from=2026-01-05&to=2026-01-10&granularity=day"

func TestAnalyticsTrendsEndpoint(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svcA, svcB := mustService(t, h, a), mustService(t, h, b)
	seedTrendsAPI(t, h, a, svcA, 1, 2, 3, 4, 5)
	seedTrendsAPI(t, h, b, svcB, 99)

	var tr trendsAnswer
	h.do("GET", trendsJan, a.liveKey, nil).decode(http.StatusOK, &tr)
	got := tr.Trends
	if got.Horizon != 3 || got.Currency != "USD" || len(got.Omitted) != 0 || fmt.Sprint(tr.metrics()) != "[data_gb voice_calls net_spend incidents tickets_opened]" {
		t.Fatalf("trends %+v", got)
	}
	if got.PreviousPeriod["from"] != "2025-12-31T00:00:00Z" || got.PreviousPeriod["to"] != "2026-01-05T00:00:00Z" || got.ComparedPeriod["to"] != "2026-01-10T00:00:00Z" {
		t.Errorf("periods %v %v", got.ComparedPeriod, got.PreviousPeriod)
	}
	data := got.Series[0]
	if data.Unit != "GB" || data.CurrentTotal != 15 || data.PreviousTotal != 5 || data.GrowthRatePct == nil || *data.GrowthRatePct != 200 || len(data.Buckets) != 5 {
		t.Errorf("data_gb %+v", data)
	}
	fc := data.Forecast
	if fc == nil || fc.Method != "ols_linear" || fc.ConfidencePct != 95 || fc.Fit.Buckets != 5 || fc.Fit.Slope != 1 || len(fc.Points) != 3 ||
		fc.FittedTo != "2026-01-10T00:00:00Z" {
		t.Fatalf("forecast %+v", fc)
	}
	for k, p := range fc.Points {
		want := float64(6 + k)
		if p.Value != want || p.Lower != want || p.Upper != want || p.Start != fmt.Sprintf("2026-01-%02dT00:00:00Z", 10+k) {
			t.Errorf("point %d %+v, want %v", k, p, want)
		}
	}
	if spend := got.Series[2]; spend.Unit != "USD" || spend.CurrentTotal != 120 || spend.PreviousTotal != 0 || spend.GrowthRatePct != nil {
		t.Errorf("net_spend %+v", spend)
	}
	if tk := got.Series[4]; tk.CurrentTotal != 2 || tk.PreviousTotal != 1 || tk.GrowthRatePct == nil || *tk.GrowthRatePct != 100 {
		t.Errorf("tickets %+v", tk)
	}

	// The alias, a horizon and a zone.
	h.do("GET", "/api"+trendsJan+"&horizon=5&timezone=America/Chicago", a.liveKey, nil).decode(http.StatusOK, &tr)
	if tr.Trends.Horizon != 5 || len(tr.Trends.Series[0].Forecast.Points) != 5 || tr.Trends.Query["timezone"] != "America/Chicago" ||
		tr.Trends.Series[0].Buckets[0].Start != "2026-01-05T00:00:00-06:00" {
		t.Errorf("alias %+v", tr.Trends)
	}

	// Tenancy: B sees its own figures; A cannot name B's service; staff
	// choose an organization.
	h.do("GET", trendsJan, b.liveKey, nil).decode(http.StatusOK, &tr)
	if d := tr.Trends.Series[0]; d.CurrentTotal != 99 || d.PreviousTotal != 5 {
		t.Errorf("tenant B data %+v", d)
	}
	h.do("GET", trendsJan+"&service_id="+svcB, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", trendsJan+"&organization_id="+a.org.ID, h.adminKey, nil).decode(http.StatusOK, &tr)
	if tr.Trends.Series[0].CurrentTotal != 15 {
		t.Errorf("staff, organization A: %+v", tr.Trends.Series[0])
	}
	h.do("GET", trendsJan, a.testKey, nil).decode(http.StatusOK, &tr)
	if tr.Trends.Series[0].CurrentTotal != 0 || tr.Trends.Series[4].CurrentTotal != 0 {
		t.Errorf("test environment counted live data: %+v", tr.Trends.Series)
	}

	// An empty period: zeros and null growth.
	h.do("GET", "/v1/analytics/trends?from=2001-01-01&to=2001-01-03", a.liveKey, nil).decode(http.StatusOK, &tr)
	for _, s := range tr.Trends.Series {
		if s.CurrentTotal != 0 || s.PreviousTotal != 0 || s.GrowthRatePct != nil || len(s.Buckets) != 48 || s.Forecast == nil {
			t.Errorf("empty %s: %+v", s.Metric, s)
		}
	}
	// Too few whole buckets: no forecast, and why.
	h.do("GET", "/v1/analytics/trends?from=2026-01-05&to=2026-01-07&granularity=day", a.liveKey, nil).decode(http.StatusOK, &tr)
	if s := tr.Trends.Series[0]; s.Forecast != nil || s.ForecastReason != "insufficient_data" {
		t.Errorf("two buckets: %+v", s)
	}
}

func TestAnalyticsTrendsPermissions(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	seedTrendsAPI(t, h, a, svc, 1, 2, 3)

	var tr trendsAnswer
	h.do("GET", trendsJan, limitedKey(t, h, a, "services:read"), nil).decode(http.StatusOK, &tr)
	if fmt.Sprint(tr.metrics()) != "[data_gb voice_calls incidents]" || tr.Trends.Currency != "" ||
		fmt.Sprint(tr.Trends.Omitted) != "[map[metric:net_spend required_permission:billing:read] map[metric:tickets_opened required_permission:support:read]]" {
		t.Errorf("services:read only: %v omitted %v", tr.metrics(), tr.Trends.Omitted)
	}
	h.do("GET", trendsJan, limitedKey(t, h, a, "services:read", "billing:read"), nil).decode(http.StatusOK, &tr)
	if fmt.Sprint(tr.metrics()) != "[data_gb voice_calls net_spend incidents]" || len(tr.Trends.Omitted) != 1 {
		t.Errorf("with billing:read: %v omitted %v", tr.metrics(), tr.Trends.Omitted)
	}
	h.do("GET", trendsJan, limitedKey(t, h, a, "billing:read", "support:read"), nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("GET", trendsJan, "", nil).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
}

func TestAnalyticsTrendsValidation(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for _, c := range []struct{ query, field string }{
		{"horizon=0", "horizon"}, {"horizon=25", "horizon"}, {"horizon=-1", "horizon"}, {"horizon=many", "horizon"},
		{"currency=dollars", "currency"}, {"period=fortnight", "period"}, {"granularity=minute", "granularity"},
	} {
		e := h.do("GET", "/v1/analytics/trends?"+c.query, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		fields, _ := e.Error.Details["fields"].([]any)
		named := false
		for _, f := range fields {
			if m, ok := f.(map[string]any); ok && m["field"] == c.field {
				named = true
			}
		}
		if !named {
			t.Errorf("%s: fields %v, want %s named", c.query, fields, c.field)
		}
	}
}

func TestAnalyticsTrendsCountsAsExport(t *testing.T) {
	for _, path := range []string{"/v1/analytics/trends", "/api/v1/analytics/trends"} {
		if got := api.EndpointGroup(http.MethodGet, path); got != ratelimit.GroupExports {
			t.Errorf("GET %s: group %q, want %q", path, got, ratelimit.GroupExports)
		}
	}
}
