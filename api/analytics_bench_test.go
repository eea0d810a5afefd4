package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
)

// BenchmarkAnalyticsUsage measures GET /v1/analytics/usage through the
// whole API (docs/performance.md, Analytics usage over a year; skipped
// without ANALYTICS_BENCH_SERVICES) over ANALYTICS_BENCH_SERVICES services
// of one organization with one telemetry sample per service and hour for
// ANALYTICS_BENCH_DAYS days (default 365): the whole period by month and by
// day, one service by day, and the last 30 days by day. The baseline, in
// the same process and database, is the floor any usage answer pays: one
// count and sum of data_mb over the same tenant's samples of the whole
// period. Each run reports its wall time, the peak of the Go heap above its
// level before the run (sampled every millisecond) and the bytes and
// objects allocated, and its time as a ratio to the baseline's.
func BenchmarkAnalyticsUsage(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("ANALYTICS_BENCH_SERVICES"))
	if n <= 0 {
		b.Skip("set ANALYTICS_BENCH_SERVICES (e.g. 1000) to run it")
	}
	days := 365
	if v, err := strconv.Atoi(os.Getenv("ANALYTICS_BENCH_DAYS")); err == nil && v > 0 {
		days = v
	}
	ctx := context.Background()
	h := newHarness(b)
	a := h.tenants[0]
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, days)

	t0 := time.Now()
	ids := seedUsageServices(b, h, a, n)
	seedHourlyTelemetry(b, h, a.org.ID, start, days)
	seeded := time.Since(t0)
	t0 = time.Now()
	if err := h.store.DB.Exec("ANALYZE telemetry_samples").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d services and %d samples in %s (analyze %s) on %s", n, int64(n)*int64(days)*24, seeded.Round(time.Millisecond),
		time.Since(t0).Round(time.Millisecond), h.store.DB.Name())

	want := int64(n) * int64(days) * 24
	baseline := func() error {
		var r struct {
			N    int64
			Data float64
		}
		err := h.store.In(ctx, scope).Table("telemetry_samples").Select("COUNT(*) AS n, COALESCE(SUM(data_mb), 0) AS data").
			Where("at >= ? AND at < ?", start, end).Scan(&r).Error
		if err == nil && r.N != want {
			err = fmt.Errorf("baseline counted %d samples, want %d", r.N, want)
		}
		return err
	}
	usage := func(query string, samples int64) func() error {
		return func() error {
			req := httptest.NewRequest("GET", "/v1/analytics/usage?"+query, nil)
			req.Header.Set("Authorization", "Bearer "+a.liveKey)
			res, err := h.srv.App.Test(req, -1)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			var body struct {
				Usage struct {
					Totals struct {
						Samples int64 `json:"samples"`
					} `json:"totals"`
				} `json:"usage"`
			}
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 {
				return fmt.Errorf("%s: status %d, %v", query, res.StatusCode, err)
			}
			if body.Usage.Totals.Samples != samples {
				return fmt.Errorf("%s: %d samples, want %d", query, body.Usage.Totals.Samples, samples)
			}
			return nil
		}
	}
	period := func(from, to time.Time, extra string) string {
		return "from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339)) + "&" + extra
	}
	monthFrom := end.AddDate(0, 0, -min(30, days))
	runs := []struct {
		name string
		run  func() error
	}{
		{"year-by-month", usage(period(start, end, "granularity=month"), want)},
		{"year-by-day", usage(period(start, end, "granularity=day"), want)},
		{"one-service-by-day", usage(period(start, end, "granularity=day&service_id="+ids[n/2]), int64(days)*24)},
		{"last-30-days-by-day", usage(period(monthFrom, end, "granularity=day"), int64(n)*int64(end.Sub(monthFrom)/time.Hour))},
	}
	if os.Getenv("ANALYTICS_BENCH_EXPLAIN") != "" {
		explainUsage(b, h, a.org.ID, "whole period", start, end, "")
		explainUsage(b, h, a.org.ID, "last 30 days", monthFrom, end, "")
		explainUsage(b, h, a.org.ID, "one service", start, end, ids[n/2])
	}
	// Warm the caches once (the first read of the table comes from disk).
	if _, err := measureRun(baseline); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		base, err := measureRun(baseline)
		if err != nil {
			b.Fatal(err)
		}
		base.report(b, "baseline", 0)
		for _, r := range runs {
			m, err := measureRun(r.run)
			if err != nil {
				b.Fatal(err)
			}
			m.report(b, r.name, base.elapsed)
		}
	}
}

// explainUsage logs the database's plan of the samples' WHERE clause of a
// usage query of org over [from, to) (of one service when svc is set).
func explainUsage(b *testing.B, h *harness, org, name string, from, to time.Time, svc string) {
	b.Helper()
	q := "SELECT COUNT(*), SUM(data_mb) FROM telemetry_samples WHERE organization_id = ? AND environment = 'live' AND at >= ? AND at < ?"
	args := []any{org, from, to}
	if svc != "" {
		q += " AND service_id IN (?)"
		args = append(args, svc)
	}
	prefix := "EXPLAIN ANALYZE "
	if models.IsSQLite(h.store.DB) {
		prefix = "EXPLAIN QUERY PLAN "
	}
	rows, err := h.store.DB.Raw(prefix+q, args...).Rows()
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	plan := ""
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		plan += fmt.Sprintln(vals[len(vals)-1])
	}
	fmt.Fprintf(os.Stderr, "plan, %s:\n%s", name, plan) // b.Logf truncates a benchmark's log
}

// runFigures are what measureRun saw of one run.
type runFigures struct {
	elapsed time.Duration
	peak    uint64 // Go heap above its level before the run
	bytes   uint64 // allocated
	objects uint64 // allocated
}

// report reports f as name's metrics, with its time as a ratio to base
// (when not zero).
func (f runFigures) report(b *testing.B, name string, base time.Duration) {
	b.ReportMetric(float64(f.elapsed.Microseconds())/1000, name+"-ms")
	b.ReportMetric(float64(f.peak)/(1<<20), name+"-peak-MiB")
	b.ReportMetric(float64(f.bytes)/(1<<20), name+"-alloc-MiB")
	b.ReportMetric(float64(f.objects), name+"-allocs")
	if base > 0 {
		b.ReportMetric(float64(f.elapsed)/float64(base), name+"/baseline")
	}
}

// measureRun runs run once after a full garbage collection and returns its
// wall time, the peak of the heap above its level before (sampled every
// millisecond) and what it allocated.
func measureRun(run func() error) (runFigures, error) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > before.HeapAlloc && m.HeapAlloc-before.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc - before.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	t0 := time.Now()
	err := run()
	elapsed := time.Since(t0)
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return runFigures{elapsed: elapsed, peak: peak.Load(), bytes: after.TotalAlloc - before.TotalAlloc, objects: after.Mallocs - before.Mallocs}, err
}

// seedUsageServices stores n operational services of tn (live), a third
// each internet, phone systems and cloud infrastructure, and returns their ids.
func seedUsageServices(b *testing.B, h *harness, tn tenant, n int) []string {
	b.Helper()
	now := time.Now().UTC()
	kinds := [][2]string{{"internet", "fiber_dedicated"}, {"phone_system", "hosted_pbx"}, {"cloud_infrastructure", "virtual_machines"}}
	rows := make([]services.Service, n)
	ids := make([]string, n)
	for i := range rows {
		k := kinds[i%len(kinds)]
		ids[i] = fmt.Sprintf("svc_bench%08d", i)
		rows[i] = services.Service{ID: ids[i], AccountID: tn.account.ID, Name: "Bench service " + strconv.Itoa(i), Kind: k[0], ServiceType: k[1],
			CatalogServiceID: "bench", Status: services.ServiceOperational, Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "standard",
			BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701",
			OperationID: fmt.Sprintf("prov_bench%08d", i), ActivatedAt: &now, StatusChangedAt: now, MonthlyCharge: 10000, Currency: "USD"}
	}
	if err := h.store.In(context.Background(), models.TenantScope(tn.org.ID, models.EnvLive)).CreateInBatches(rows, 200).Error; err != nil {
		b.Fatal(err)
	}
	return ids
}

// seedHourlyTelemetry writes one sample per hour for days days from start
// for every bench service (svc_bench...) of org, hour by hour, in one
// INSERT ... SELECT over a generated series of hours: generate_series on
// PostgreSQL, a recursive common table expression on SQLite (whose
// timestamps are written as the driver writes them, so that comparisons
// with bound times hold).
func seedHourlyTelemetry(b *testing.B, h *harness, org string, start time.Time, days int) {
	b.Helper()
	const columns = `organization_id, environment, service_id, at, up, latency_ms, jitter_ms, packet_loss_pct, utilization_pct,
		security_alerts, throughput_mbps, data_mb, calls, call_quality`
	values := `s.organization_id, 'live', s.id, %s, %s, 10 + hr %% 7, 1.5, 0, 40 + hr %% 50, 0, 100, 40 + hr %% 97, hr %% 5, 4.2`
	hours := days * 24
	var sql string
	if models.IsSQLite(h.store.DB) {
		sql = fmt.Sprintf(`INSERT INTO telemetry_samples (%s)
			WITH RECURSIVE hours(hr, at) AS (
				SELECT 0, strftime('%%Y-%%m-%%d %%H:%%M:%%S', ?) || '+00:00'
				UNION ALL
				SELECT hr + 1, strftime('%%Y-%%m-%%d %%H:%%M:%%S', ?, '+' || (hr + 1) || ' hours') || '+00:00' FROM hours WHERE hr + 1 < %d)
			SELECT `+values+` FROM hours CROSS JOIN services s
			WHERE s.organization_id = ? AND s.environment = 'live' AND s.id LIKE 'svc_bench%%'`, columns, hours, "hours.at", "1")
		start := start.Format("2006-01-02 15:04:05")
		if err := h.store.DB.Exec(sql, start, start, org).Error; err != nil {
			b.Fatal(err)
		}
	} else {
		sql = fmt.Sprintf(`INSERT INTO telemetry_samples (%s)
			SELECT `+values+` FROM generate_series(0, %d) AS g(hr) CROSS JOIN services s
			WHERE s.organization_id = ? AND s.environment = 'live' AND s.id LIKE 'svc_bench%%'`,
			columns, "CAST(? AS timestamptz) + make_interval(hours => g.hr)", "true", hours-1)
		if err := h.store.DB.Exec(sql, start, org).Error; err != nil {
			b.Fatal(err)
		}
	}
}
