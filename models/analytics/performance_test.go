package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// seedPerformance adds samples and incidents in May 2030 whose answers are
// known: a1 (premium) 4 up samples on 1 May 10:00-10:45 UTC (latency 10,
// 20, 30, 40 ms) and a down one on 2 May 23:30 UTC; a2 one up sample
// (5.5 ms); a down incident of a1 from 2 May 23:30 to 3 May 00:30 UTC
// (60 min) and one of a2 from 30 April 23:00 to 1 May 00:30 UTC (90 min);
// tenant B's sample and incident are never counted.
func seedPerformance(t *testing.T, f *fixture) {
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
	smp := func(svc *services.Service, when string, up bool, latency, jitter, loss, util float64) *telemetry.TelemetrySample {
		return &telemetry.TelemetrySample{ServiceID: svc.ID, At: at(when), Up: up, LatencyMs: latency, JitterMs: jitter, PacketLossPct: loss, UtilizationPct: util}
	}
	create(f.a, smp(f.a1, "2030-05-01T10:00:00Z", true, 10, 2, 0.5, 10), smp(f.a1, "2030-05-01T10:15:00Z", true, 20, 2, 0.5, 20),
		smp(f.a1, "2030-05-01T10:30:00Z", true, 30, 2, 0.5, 30), smp(f.a1, "2030-05-01T10:45:00Z", true, 40, 2, 0.5, 40),
		smp(f.a1, "2030-05-02T23:30:00Z", false, 0, 0, 100, 0), smp(f.a2, "2030-05-01T12:00:00Z", true, 5.5, 1, 0, 50))
	create(f.b, smp(f.b1, "2030-05-01T10:00:00Z", false, 999, 99, 99, 99))
	inc := func(svc *services.Service, kind, start, end string) *telemetry.ServiceIncident {
		r := at(end)
		return &telemetry.ServiceIncident{ID: models.NewID("inc"), ServiceID: svc.ID, Kind: kind, Cause: "x", StartedAt: at(start), ResolvedAt: &r}
	}
	create(f.a, inc(f.a1, telemetry.IncidentDown, "2030-05-02T23:30:00Z", "2030-05-03T00:30:00Z"),
		inc(f.a2, telemetry.IncidentDown, "2030-04-30T23:00:00Z", "2030-05-01T00:30:00Z"),
		inc(f.a1, telemetry.IncidentDegraded, "2030-05-01T11:00:00Z", "2030-05-01T13:00:00Z"))
	create(f.b, inc(f.b1, telemetry.IncidentDown, "2030-05-01T10:00:00Z", "2030-05-01T12:00:00Z"))
}

var may = analytics.QueryInput{From: "2030-05-01", To: "2030-05-05"}

func val(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestAnalyticsPerformance(t *testing.T) {
	f := newFixture(t)
	seedPerformance(t, f)
	ctx := context.Background()
	now := at("2030-06-01T00:00:00Z")
	perf, err := f.s.Performance(ctx, f.a, parse(t, may, false, now))
	if err != nil {
		t.Fatal(err)
	}
	tot := perf.Totals
	if tot.Samples != 6 || tot.UpSamples != 5 || val(tot.AvailabilityPct) != 83.333 || tot.Incidents != 1 || tot.Restored != 2 || val(tot.MTTRMinutes) != 75.0 {
		t.Errorf("totals %+v", tot)
	}
	// Up latencies 5.5, 10, 20, 30, 40: ranks 3, 5, 5.
	if val(tot.LatencyP50Ms) != 20.0 || val(tot.LatencyP95Ms) != 40.0 || val(tot.LatencyP99Ms) != 40.0 {
		t.Errorf("percentiles %v %v %v", val(tot.LatencyP50Ms), val(tot.LatencyP95Ms), val(tot.LatencyP99Ms))
	}
	if val(tot.JitterMs) != 1.8 || val(tot.PacketLossPct) != 0.4 || val(tot.UtilizationPct) != 30.0 {
		t.Errorf("means %v %v %v", val(tot.JitterMs), val(tot.PacketLossPct), val(tot.UtilizationPct))
	}
	if len(perf.Buckets) != 4 {
		t.Fatalf("%d buckets", len(perf.Buckets))
	}
	b := perf.Buckets
	if b[0].Samples != 5 || b[0].Restored != 1 || val(b[0].MTTRMinutes) != 90.0 || b[0].Incidents != 0 || val(b[0].AvailabilityPct) != 100.0 {
		t.Errorf("1 May %+v", b[0].PerformanceFigures)
	}
	if b[1].Samples != 1 || val(b[1].AvailabilityPct) != 0.0 || b[1].Incidents != 1 || b[1].LatencyP50Ms != nil || b[1].JitterMs != nil {
		t.Errorf("2 May %+v", b[1].PerformanceFigures)
	}
	if b[2].Restored != 1 || val(b[2].MTTRMinutes) != 60.0 || b[2].AvailabilityPct != nil {
		t.Errorf("3 May %+v", b[2].PerformanceFigures)
	}
	if b[3].PerformanceFigures != (analytics.PerformanceFigures{}) {
		t.Errorf("4 May %+v", b[3].PerformanceFigures)
	}
	if len(perf.Services) != 2 {
		t.Fatalf("services %+v", perf.Services)
	}
	for _, sp := range perf.Services {
		switch sp.ServiceID {
		case f.a1.ID:
			if val(sp.AvailabilityPct) != 80.0 || sp.MetSLA == nil || *sp.MetSLA || sp.TargetPct != 99.9 || sp.SLA != "premium" ||
				val(sp.LatencyP50Ms) != 20.0 || val(sp.LatencyP95Ms) != 40.0 || sp.Incidents != 1 || val(sp.MTTRMinutes) != 60.0 || sp.Category != "connectivity" {
				t.Errorf("a1 %+v", sp)
			}
		case f.a2.ID:
			if val(sp.AvailabilityPct) != 100.0 || sp.MetSLA == nil || !*sp.MetSLA || val(sp.LatencyP99Ms) != 5.5 || val(sp.MTTRMinutes) != 90.0 {
				t.Errorf("a2 %+v", sp)
			}
		default:
			t.Errorf("service %s", sp.ServiceID)
		}
	}
	if perf.SLA.Measured != 2 || perf.SLA.Met != 1 || val(perf.SLA.AttainmentPct) != 50.0 {
		t.Errorf("sla %+v", perf.SLA)
	}

	// Hours: a1's four samples share 10:00 UTC.
	hours, err := f.s.Performance(ctx, f.a, parse(t, analytics.QueryInput{From: "2030-05-01", To: "2030-05-02", Granularity: "hour"}, false, now))
	if err != nil {
		t.Fatal(err)
	}
	if len(hours.Buckets) != 24 || hours.Buckets[10].Samples != 4 || val(hours.Buckets[10].LatencyP50Ms) != 20.0 || hours.Buckets[12].Samples != 1 {
		t.Errorf("hours %+v", hours.Buckets[10])
	}
	// Weeks and months add up to the same totals.
	for _, g := range []string{"week", "month"} {
		in := may
		in.Granularity = g
		w, err := f.s.Performance(ctx, f.a, parse(t, in, false, now))
		if err != nil {
			t.Fatal(err)
		}
		var n, inc int64
		for _, b := range w.Buckets {
			n, inc = n+b.Samples, inc+b.Incidents
		}
		if n != 6 || inc != 1 || val(w.Totals.MTTRMinutes) != 75.0 {
			t.Errorf("%s: %d samples, %d incidents, %+v", g, n, inc, w.Totals)
		}
	}
}

func TestAnalyticsPerformanceTimezone(t *testing.T) {
	f := newFixture(t)
	seedPerformance(t, f)
	// In New York (UTC-4 in May) the period starts at 04:00 UTC: a2's
	// restore (00:30 UTC) falls before it, and a1's (3 May 00:30 UTC) on
	// 2 May local.
	in := may
	in.Timezone = "America/New_York"
	perf, err := f.s.Performance(context.Background(), f.a, parse(t, in, false, at("2030-06-01T00:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	if perf.Totals.Restored != 1 || val(perf.Totals.MTTRMinutes) != 60.0 || perf.Totals.Samples != 6 {
		t.Errorf("totals %+v", perf.Totals)
	}
	if b := perf.Buckets[1]; b.Restored != 1 || b.Incidents != 1 || b.Samples != 1 || b.Start.Format(time.RFC3339) != "2030-05-02T00:00:00-04:00" {
		t.Errorf("2 May local %+v", b)
	}
	if perf.Buckets[2].Restored != 0 {
		t.Errorf("3 May local %+v", perf.Buckets[2])
	}
}

func TestAnalyticsPerformanceEmptyAndTenancy(t *testing.T) {
	f := newFixture(t)
	seedPerformance(t, f)
	ctx := context.Background()
	empty, err := f.s.Performance(ctx, f.a, parse(t, analytics.QueryInput{Period: "last_7_days"}, false, at("2035-06-01T00:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Buckets) != 7 || empty.Totals != (analytics.PerformanceFigures{}) || len(empty.Services) != 0 || empty.SLA != (analytics.SLAAttainment{}) {
		t.Errorf("empty %+v", empty)
	}
	now := at("2030-06-01T00:00:00Z")
	b, err := f.s.Performance(ctx, f.b, parse(t, may, false, now))
	if err != nil {
		t.Fatal(err)
	}
	if b.Totals.Samples != 1 || b.Totals.Incidents != 1 || len(b.Services) != 1 || b.Services[0].ServiceID != f.b1.ID {
		t.Errorf("tenant B %+v", b.Totals)
	}
	in := may
	in.OrganizationID = f.orgA
	staff, err := f.s.Performance(ctx, f.staff, parse(t, in, true, now))
	if err != nil {
		t.Fatal(err)
	}
	if staff.Totals.Samples != 6 || len(staff.Services) != 2 {
		t.Errorf("staff on A %+v", staff.Totals)
	}
	in = may
	in.ServiceID = f.b1.ID
	if _, err := f.s.Performance(ctx, f.a, parse(t, in, false, now)); models.ErrorCode(err) != models.CodeNotFound {
		t.Errorf("another tenant's service: %v", err)
	}
}

func TestAnalyticsPerformancePercentileBins(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rows := []any{}
	for i, ms := range []float64{10.2, 10.7, 10.9, 250} {
		rows = append(rows, &telemetry.TelemetrySample{ServiceID: f.a2.ID, At: at("2030-07-01T10:00:00Z").Add(time.Duration(i) * time.Minute), Up: true, LatencyMs: ms})
	}
	for _, r := range rows {
		if err := f.core.In(ctx, f.a.OwnScope()).Create(r).Error; err != nil {
			t.Fatal(err)
		}
	}
	perf, err := f.s.Performance(ctx, f.a, parse(t, analytics.QueryInput{From: "2030-07-01", To: "2030-07-02"}, false, at("2030-08-01T00:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	// The exact nearest-rank median (rank 2 of 4) is 10.7; its 1 ms bin
	// [10, 11) reports its largest latency, 10.9: at most 1 ms above.
	if tot := perf.Totals; val(tot.LatencyP50Ms) != 10.9 || val(tot.LatencyP95Ms) != 250.0 || val(tot.LatencyP99Ms) != 250.0 {
		t.Errorf("percentiles %v %v %v", val(tot.LatencyP50Ms), val(tot.LatencyP95Ms), val(tot.LatencyP99Ms))
	}
}
