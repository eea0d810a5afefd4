package analytics_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestTrendsFitLinear(t *testing.T) {
	cases := []struct {
		name                       string
		ys                         []float64
		slope, intercept, stdError float64
		x, value, half             float64 // a forecast at x
	}{
		// An exact line: no residuals, the interval is the point.
		{"exact line", []float64{1, 2, 3, 4, 5}, 1, 1, 0, 5, 6, 0},
		{"flat", []float64{7, 7, 7}, 0, 7, 0, 3, 7, 0},
		// x̄ = 2, Sxx = 10, Sxy = 8: slope 0.8, intercept 1.4; residuals
		// -0.4, 0.8, -1, 1.2, -0.6 (SSE 3.6), s = sqrt(3.6/3); t(3) = 3.1824;
		// at x = 5: 5.4 ± 3.1824 × s × sqrt(1 + 1/5 + 9/10).
		{"noisy", []float64{1, 3, 2, 5, 4}, 0.8, 1.4, math.Sqrt(1.2), 5, 5.4, 3.1824 * math.Sqrt(1.2) * math.Sqrt(2.1)},
		{"falling", []float64{10, 8, 6}, -2, 10, 0, 4, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fit, ok := analytics.FitLinear(c.ys)
			if !ok {
				t.Fatal("not fitted")
			}
			if !near(fit.Slope, c.slope) || !near(fit.Intercept, c.intercept) || !near(fit.StdError, c.stdError) {
				t.Errorf("fit %+v, want slope %v intercept %v s %v", fit, c.slope, c.intercept, c.stdError)
			}
			v, h := fit.Interval(c.x)
			if !near(v, c.value) || !near(h, c.half) {
				t.Errorf("at %v: %v ± %v, want %v ± %v", c.x, v, h, c.value, c.half)
			}
		})
	}
	for _, ys := range [][]float64{nil, {1}, {1, 2}} {
		if _, ok := analytics.FitLinear(ys); ok {
			t.Errorf("FitLinear(%v) fitted with fewer than %d points", ys, analytics.MinFitPoints)
		}
	}
}

func TestTrendsTQuantile(t *testing.T) {
	for df, want := range map[int]float64{1: 12.7062, 2: 4.3027, 10: 2.2281, 30: 2.0423, 31: 2.0395, 60: 2.0003, 120: 1.9799, 100000: 1.96} {
		if got := analytics.TQuantile975(df); math.Abs(got-want) > 0.0002 {
			t.Errorf("t(%d) = %v, want %v", df, got, want)
		}
	}
	if !math.IsNaN(analytics.TQuantile975(0)) {
		t.Error("t(0) is a number")
	}
}

func TestTrendsGrowthRate(t *testing.T) {
	cases := []struct {
		cur, prev float64
		want      any
	}{
		{15, 5, 200.0}, {5, 10, -50.0}, {10, 10, 0.0}, {1, 3, -66.67}, {5, 0, nil}, {0, 0, nil}, {0, 4, -100.0},
		{-50, -100, 50.0}, // a negative base: the sign follows the direction of change
	}
	for _, c := range cases {
		if got := val(analytics.GrowthRate(c.cur, c.prev)); got != c.want {
			t.Errorf("GrowthRate(%v, %v) = %v, want %v", c.cur, c.prev, got, c.want)
		}
	}
}

// seedTrends adds July 2030 data with known aggregates. The period is 8-13
// July (5 days), the previous period 3-8 July:
//
//	data_gb        current 1, 2, 3, 4, 5 (a1, one per day) = 15; previous 5 → +200 %
//	voice_calls    current 10 (a2, 9 July); previous 0 → null
//	net_spend      current 300.00 charges − 50.00 credit = 250.00; previous 200.00 → +25 %
//	incidents      current 2 down (+1 degraded, not counted); previous 4 → −50 %
//	tickets_opened current 3 (one naming a1); previous 1 → +200 %
//
// Tenant B's sample, invoice, incident and ticket in the period are never
// counted for A.
func seedTrends(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	create := func(p *models.Principal, rows ...any) {
		t.Helper()
		for _, r := range rows {
			if err := f.core.In(ctx, p.OwnScope()).Create(r).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	smp := func(svc *services.Service, when string, dataMB float64, calls int) *telemetry.TelemetrySample {
		return &telemetry.TelemetrySample{ServiceID: svc.ID, At: at(when), Up: true, DataMB: dataMB, Calls: calls}
	}
	create(f.a, smp(f.a1, "2030-07-08T12:00:00Z", 1000, 0), smp(f.a1, "2030-07-09T12:00:00Z", 2000, 0), smp(f.a1, "2030-07-10T12:00:00Z", 3000, 0),
		smp(f.a1, "2030-07-11T12:00:00Z", 4000, 0), smp(f.a1, "2030-07-12T12:00:00Z", 5000, 0), smp(f.a2, "2030-07-09T08:00:00Z", 0, 10),
		smp(f.a1, "2030-07-05T12:00:00Z", 5000, 0))
	create(f.b, smp(f.b1, "2030-07-09T12:00:00Z", 99000, 99))

	invoice := func(p *models.Principal, acct, svc, id, issued string, amount models.Money) {
		create(p, &billing.Invoice{ID: id, AccountID: acct, Number: id, Status: billing.InvoicePending, Source: billing.InvoiceSourceManual, Currency: "USD",
			Subtotal: amount, Total: amount, IssuedAt: at(issued), DueDate: at(issued).AddDate(0, 0, 30)},
			&billing.InvoiceLine{InvoiceID: id, Kind: billing.LineRecurring, ServiceID: svc, Category: "connectivity", Description: "line", Quantity: 1,
				UnitPrice: amount, Amount: amount})
	}
	invoice(f.a, f.acctA, f.a1.ID, "inv_tr_cur", "2030-07-09T12:00:00Z", 30000)
	invoice(f.a, f.acctA, f.a1.ID, "inv_tr_prev", "2030-07-04T12:00:00Z", 20000)
	invoice(f.b, f.acctB, f.b1.ID, "inv_tr_b", "2030-07-09T12:00:00Z", 77700)
	create(f.a, &billing.SLACredit{ID: models.NewID(billing.PrefixSLACredit), ServiceID: f.a1.ID, TicketID: "TKT-9", SourceKey: "tr1", PercentBP: 1000,
		Amount: 5000, Currency: "USD", Reason: "breach", Status: billing.SLACreditApplied, CreatedAt: at("2030-07-10T08:00:00Z")})

	inc := func(svc *services.Service, kind, start string) *telemetry.ServiceIncident {
		return &telemetry.ServiceIncident{ID: models.NewID("inc"), ServiceID: svc.ID, Kind: kind, Cause: "x", StartedAt: at(start)}
	}
	create(f.a, inc(f.a1, telemetry.IncidentDown, "2030-07-10T01:00:00Z"), inc(f.a2, telemetry.IncidentDown, "2030-07-10T05:00:00Z"),
		inc(f.a1, telemetry.IncidentDegraded, "2030-07-10T06:00:00Z"))
	for _, d := range []string{"03", "04", "05", "06"} {
		create(f.a, inc(f.a1, telemetry.IncidentDown, "2030-07-"+d+"T09:00:00Z"))
	}
	create(f.b, inc(f.b1, telemetry.IncidentDown, "2030-07-10T01:00:00Z"))

	n := 0
	ticket := func(p *models.Principal, created, svc string) *support.Ticket {
		n++
		c := at(created)
		return &support.Ticket{ID: models.NewID(models.PrefixTicket), Number: "TKT-TR-" + string(rune('A'+n)), Title: "t", CustomerID: "cus_x",
			Status: "open", Priority: "medium", Category: "technical", ServiceAffected: svc, SLAResponseMinutes: 60, SLAResolutionMinutes: 240,
			ResponseDue: c.Add(time.Hour), ResolutionDue: c.Add(4 * time.Hour), CreatedBy: "usr_x", CreatedAt: c, UpdatedAt: c}
	}
	create(f.a, ticket(f.a, "2030-07-08T09:00:00Z", f.a1.ID), ticket(f.a, "2030-07-09T09:00:00Z", ""), ticket(f.a, "2030-07-09T10:00:00Z", f.a2.ID),
		ticket(f.a, "2030-07-04T09:00:00Z", ""))
	create(f.b, ticket(f.b, "2030-07-09T09:00:00Z", f.b1.ID))
}

var july = analytics.QueryInput{From: "2030-07-08", To: "2030-07-13", Granularity: "day"}

// series returns the series of metric m (failing when absent).
func series(t *testing.T, tr *analytics.Trends, m string) analytics.TrendSeries {
	t.Helper()
	for _, s := range tr.Series {
		if s.Metric == m {
			return s
		}
	}
	t.Fatalf("no %s series in %+v", m, tr.Series)
	return analytics.TrendSeries{}
}

func TestTrendsStore(t *testing.T) {
	f := newFixture(t)
	seedTrends(t, f)
	ctx := context.Background()
	now := at("2030-08-01T00:00:00Z")
	tr, err := f.s.Trends(ctx, f.a, parse(t, july, false, now), 0, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Horizon != analytics.DefaultHorizon || tr.Currency != "USD" || len(tr.Omitted) != 0 || len(tr.Series) != 5 {
		t.Fatalf("trends %+v", tr)
	}
	if !tr.PreviousFrom.Equal(at("2030-07-03T00:00:00Z")) || !tr.PreviousTo.Equal(at("2030-07-08T00:00:00Z")) || !tr.ComparedTo.Equal(at("2030-07-13T00:00:00Z")) {
		t.Errorf("previous %s to %s, compared to %s", tr.PreviousFrom, tr.PreviousTo, tr.ComparedTo)
	}
	want := []struct {
		metric, unit string
		cur, prev    float64
		growth       any
		buckets      []float64
	}{
		{analytics.MetricDataGB, "GB", 15, 5, 200.0, []float64{1, 2, 3, 4, 5}},
		{analytics.MetricVoiceCalls, "calls", 10, 0, nil, []float64{0, 10, 0, 0, 0}},
		{analytics.MetricNetSpend, "USD", 250, 200, 25.0, []float64{0, 300, -50, 0, 0}},
		{analytics.MetricIncidents, "incidents", 2, 4, -50.0, []float64{0, 0, 2, 0, 0}},
		{analytics.MetricTicketsOpened, "tickets", 3, 1, 200.0, []float64{1, 2, 0, 0, 0}},
	}
	for i, w := range want {
		s := tr.Series[i]
		if s.Metric != w.metric || s.Unit != w.unit || s.CurrentTotal != w.cur || s.PreviousTotal != w.prev || val(s.GrowthRatePct) != w.growth {
			t.Errorf("%s: %s %v (prev %v) growth %v, want %s %v (%v) %v", w.metric, s.Unit, s.CurrentTotal, s.PreviousTotal, val(s.GrowthRatePct), w.unit, w.cur, w.prev, w.growth)
		}
		for j, b := range s.Buckets {
			if b.Value != w.buckets[j] {
				t.Errorf("%s bucket %d: %v, want %v", w.metric, j, b.Value, w.buckets[j])
			}
		}
		if s.Forecast == nil || len(s.Forecast.Points) != 3 || s.Forecast.Fit.N != 5 {
			t.Errorf("%s forecast %+v (%s)", w.metric, s.Forecast, s.ForecastReason)
		}
	}

	// Data grows by exactly 1 GB a day: the forecast continues the line
	// with no interval, in the following days.
	d := series(t, tr, analytics.MetricDataGB)
	fc := d.Forecast
	if fc.Method != analytics.TrendMethod || fc.Confidence != 95 || fc.Fit.Slope != 1 || fc.Fit.Intercept != 1 || fc.Fit.StdError != 0 ||
		!fc.FittedFrom.Equal(at("2030-07-08T00:00:00Z")) || !fc.FittedTo.Equal(at("2030-07-13T00:00:00Z")) {
		t.Errorf("data forecast %+v", fc)
	}
	for k, p := range fc.Points {
		v := float64(6 + k)
		start := at("2030-07-13T00:00:00Z").AddDate(0, 0, k)
		if p.Value != v || p.Lower != v || p.Upper != v || !p.Start.Equal(start) || !p.End.Equal(start.AddDate(0, 0, 1)) {
			t.Errorf("point %d: %+v, want %v from %s", k, p, v, start)
		}
	}
	if d.Buckets[0].ChangePct != nil || val(d.Buckets[1].ChangePct) != 100.0 || val(d.Buckets[4].ChangePct) != 25.0 {
		t.Errorf("bucket changes %v %v %v", val(d.Buckets[0].ChangePct), val(d.Buckets[1].ChangePct), val(d.Buckets[4].ChangePct))
	}
	// Counts never forecast below zero: incidents fall after the spike.
	for _, p := range series(t, tr, analytics.MetricIncidents).Forecast.Points {
		if p.Lower < 0 || p.Value < 0 || p.Upper < p.Value || p.Lower > p.Value {
			t.Errorf("incident point %+v", p)
		}
	}

	// Filters: service a1 only (its ticket, its incident, its spend).
	in := july
	in.ServiceID = f.a1.ID
	tr, err = f.s.Trends(ctx, f.a, parse(t, in, false, now), 2, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if got := series(t, tr, analytics.MetricTicketsOpened); got.CurrentTotal != 1 || got.PreviousTotal != 0 || got.GrowthRatePct != nil {
		t.Errorf("a1 tickets %+v", got)
	}
	if got := series(t, tr, analytics.MetricVoiceCalls); got.CurrentTotal != 0 {
		t.Errorf("a1 calls %+v", got)
	}
	if got := series(t, tr, analytics.MetricIncidents); got.CurrentTotal != 1 || got.PreviousTotal != 4 || val(got.GrowthRatePct) != -75.0 {
		t.Errorf("a1 incidents %+v", got)
	}
	if len(series(t, tr, analytics.MetricDataGB).Forecast.Points) != 2 {
		t.Error("horizon 2 not applied")
	}

	// Staff of organization B see B's figures only.
	in = july
	in.OrganizationID = f.orgB
	tr, err = f.s.Trends(ctx, f.staff, parse(t, in, true, now), 0, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if series(t, tr, analytics.MetricDataGB).CurrentTotal != 99 || series(t, tr, analytics.MetricNetSpend).CurrentTotal != 777 ||
		series(t, tr, analytics.MetricTicketsOpened).CurrentTotal != 1 || series(t, tr, analytics.MetricIncidents).CurrentTotal != 1 {
		t.Errorf("organization B: %+v", tr.Series)
	}
}

func TestTrendsPermissions(t *testing.T) {
	f := newFixture(t)
	seedTrends(t, f)
	ctx := context.Background()
	now := at("2030-08-01T00:00:00Z")
	p := *f.a
	p.Permissions = []string{"services:read"}
	tr, err := f.s.Trends(ctx, &p, parse(t, july, false, now), 0, "", now)
	if err != nil {
		t.Fatal(err)
	}
	var metrics []string
	for _, s := range tr.Series {
		metrics = append(metrics, s.Metric)
	}
	if len(metrics) != 3 || metrics[0] != "data_gb" || metrics[1] != "voice_calls" || metrics[2] != "incidents" || tr.Currency != "" {
		t.Errorf("series %v currency %q", metrics, tr.Currency)
	}
	if len(tr.Omitted) != 2 || tr.Omitted[0] != (analytics.OmittedSeries{Metric: "net_spend", RequiredPermission: "billing:read"}) ||
		tr.Omitted[1] != (analytics.OmittedSeries{Metric: "tickets_opened", RequiredPermission: "support:read"}) {
		t.Errorf("omitted %+v", tr.Omitted)
	}
	p.Permissions = []string{"services:read", "support:read"}
	if tr, err = f.s.Trends(ctx, &p, parse(t, july, false, now), 0, "", now); err != nil || len(tr.Series) != 4 || len(tr.Omitted) != 1 {
		t.Errorf("with support:read: %v, %+v", err, tr)
	}
}

func TestTrendsEdges(t *testing.T) {
	f := newFixture(t)
	seedTrends(t, f)
	ctx := context.Background()

	// Now inside the period: the compared part ends now (10 July 06:00 is
	// 2.25 days in), the previous period is as long; the forecast fits the
	// two whole days that ended (too few).
	now := at("2030-07-10T06:00:00Z")
	tr, err := f.s.Trends(ctx, f.a, parse(t, july, false, now), 0, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.ComparedTo.Equal(now) || !tr.PreviousFrom.Equal(at("2030-07-05T18:00:00Z")) || !tr.PreviousTo.Equal(at("2030-07-08T00:00:00Z")) {
		t.Errorf("compared to %s, previous %s to %s", tr.ComparedTo, tr.PreviousFrom, tr.PreviousTo)
	}
	d := series(t, tr, analytics.MetricDataGB)
	// The 5 July sample is before the shorter previous period.
	if d.PreviousTotal != 0 || d.GrowthRatePct != nil || d.Forecast != nil || d.ForecastReason != analytics.ForecastReasonInsufficientData {
		t.Errorf("data %+v", d)
	}
	if d.Buckets[3].ChangePct != nil || d.Buckets[4].ChangePct != nil {
		t.Error("buckets not started have a change")
	}
	// One day later three whole days ended: fitted on 8-10 July.
	now = at("2030-07-11T06:00:00Z")
	if tr, err = f.s.Trends(ctx, f.a, parse(t, july, false, now), 0, "", now); err != nil {
		t.Fatal(err)
	}
	if fc := series(t, tr, analytics.MetricDataGB).Forecast; fc == nil || fc.Fit.N != 3 || !fc.FittedTo.Equal(at("2030-07-11T00:00:00Z")) ||
		!fc.Points[0].Start.Equal(at("2030-07-11T00:00:00Z")) || fc.Points[0].Value != 4 {
		t.Errorf("forecast %+v", fc)
	}

	// A period clamped at both ends: the clamped first and last buckets
	// are not fitted.
	now = at("2030-08-01T00:00:00Z")
	in := analytics.QueryInput{From: "2030-07-07T12:00:00Z", To: "2030-07-12T12:00:00Z", Granularity: "day"}
	if tr, err = f.s.Trends(ctx, f.a, parse(t, in, false, now), 1, "", now); err != nil {
		t.Fatal(err)
	}
	if fc := series(t, tr, analytics.MetricDataGB).Forecast; fc == nil || fc.Fit.N != 4 || !fc.FittedFrom.Equal(at("2030-07-08T00:00:00Z")) ||
		!fc.FittedTo.Equal(at("2030-07-12T00:00:00Z")) || fc.Points[0].Value != 5 {
		t.Errorf("clamped forecast %+v", fc)
	}

	// An empty period: zeros, null growth, a flat zero forecast.
	in = analytics.QueryInput{From: "2001-01-01", To: "2001-01-05", Granularity: "day"}
	if tr, err = f.s.Trends(ctx, f.a, parse(t, in, false, now), 0, "", now); err != nil {
		t.Fatal(err)
	}
	for _, s := range tr.Series {
		if s.CurrentTotal != 0 || s.PreviousTotal != 0 || s.GrowthRatePct != nil || len(s.Buckets) != 4 || s.Forecast == nil || s.Forecast.Points[0].Upper != 0 {
			t.Errorf("empty %s: %+v", s.Metric, s)
		}
	}

	// Bad horizon and currency are both reported.
	_, err = f.s.Trends(ctx, f.a, parse(t, july, false, now), 25, "dollars", now)
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("err %v", err)
	}
	if _, err = f.s.Trends(ctx, f.a, parse(t, july, false, now), -1, "", now); err == nil {
		t.Error("horizon -1 accepted")
	}
}
