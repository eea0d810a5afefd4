package support_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// BenchmarkSupportReport measures report runs over REPORT_BENCH_TICKETS
// generated tickets (docs/performance.md, Support reports; skipped without
// it): the run of a CSV ticket export and of a detailed_analytics report
// grouped by category, week and priority, each streamed to the blob store
// (support.Store.GenerateReport), against a baseline in the same process:
// loading the same tickets into memory with one GORM Find, the naive way
// to write such a file. It reports each run's time and the peak of the Go
// heap above what it was before the run (sampled every millisecond), and
// both as ratios to the baseline's.
func BenchmarkSupportReport(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("REPORT_BENCH_TICKETS"))
	if n <= 0 {
		b.Skip("set REPORT_BENCH_TICKETS (e.g. 100000) to run it")
	}
	ctx := context.Background()
	f := newSLAFixture(b, support.WithBlobs(testenv.Blobs(b)))
	s := support.NewStore(f.core, support.WithBlobs(testenv.Blobs(b)))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seedStart := time.Now()
	seedReportTickets(b, f, n, start)
	b.Logf("seeded %d tickets (with clocks, feedback and comments) in %s", n, time.Since(seedStart).Round(time.Millisecond))

	measure := func(run func() error) (time.Duration, uint64) {
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
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
				if m.HeapAlloc > base.HeapAlloc && m.HeapAlloc-base.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc - base.HeapAlloc)
				}
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		}()
		t0 := time.Now()
		if err := run(); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(t0)
		close(done)
		wg.Wait()
		return elapsed, peak.Load()
	}
	report := func(typ string, grouping []string) func() error {
		return func() error {
			spec, err := support.ValidateReport(f.customer, support.ReportRequest{ReportType: typ, Start: "2026-01-01", End: "2026-12-31",
				Grouping: grouping, Format: "csv"}, f.clock)
			if err != nil {
				return err
			}
			id := models.NewID(models.PrefixReport)
			if err := operations.NewStore(f.core).CreateOperation(ctx, f.customer.OwnScope(), support.NewReportOperation(id, spec)); err != nil {
				return err
			}
			res, err := s.GenerateReport(ctx, id)
			if err != nil {
				return err
			}
			if typ == support.ReportTicketExport && res.RowCount != int64(n) {
				return fmt.Errorf("%d rows, want %d", res.RowCount, n)
			}
			return nil
		}
	}
	b.ResetTimer()
	for range b.N {
		baseTime, baseHeap := measure(func() error {
			var all []support.Ticket
			err := f.core.In(ctx, f.customer.OwnScope()).Order("created_at, id").Find(&all).Error
			if err == nil && len(all) != n {
				err = fmt.Errorf("loaded %d tickets, want %d", len(all), n)
			}
			_, _ = fmt.Fprint(io.Discard, len(all))
			return err
		})
		exportTime, exportHeap := measure(report(support.ReportTicketExport, nil))
		groupTime, groupHeap := measure(report(support.ReportDetailedAnalytics, []string{"category", "week", "priority"}))
		b.ReportMetric(float64(baseTime.Milliseconds()), "baseline-ms")
		b.ReportMetric(float64(baseHeap)/(1<<20), "baseline-peak-MiB")
		b.ReportMetric(float64(exportTime.Milliseconds()), "export-ms")
		b.ReportMetric(float64(exportHeap)/(1<<20), "export-peak-MiB")
		b.ReportMetric(float64(groupTime.Milliseconds()), "grouped-ms")
		b.ReportMetric(float64(groupHeap)/(1<<20), "grouped-peak-MiB")
		b.ReportMetric(float64(exportTime)/float64(baseTime), "export/baseline-time")
		b.ReportMetric(float64(exportHeap)/float64(baseHeap), "export/baseline-heap")
		b.ReportMetric(float64(groupTime)/float64(baseTime), "grouped/baseline-time")
		b.ReportMetric(float64(groupHeap)/float64(baseHeap), "grouped/baseline-heap")
	}
}

// seedReportTickets writes n tickets of the fixture's customer spread over
// 2026 straight into the tables (in batches), with a resolution clock
// each, feedback on every fifth and a customer-visible agent reply on
// every third; three in four are resolved.
func seedReportTickets(b testing.TB, f *slaFixture, n int, start time.Time) {
	b.Helper()
	categories := []string{"network", "voice", "cloud", "security", "general"}
	priorities := []string{"low", "medium", "high", "critical"}
	scope := f.customer.OwnScope()
	const batch = 1000
	for from := 0; from < n; from += batch {
		to := min(from+batch, n)
		var tickets []support.Ticket
		var clocks []support.Clock
		var feedback []support.Feedback
		var comments []support.Comment
		for i := from; i < to; i++ {
			created := start.Add(time.Duration(i) * ((364 * 24 * time.Hour) / time.Duration(n)))
			id := fmt.Sprintf("tkt_bench%011d", i)
			tk := support.Ticket{ID: id, Number: fmt.Sprintf("BENCH-%07d", i), Title: "Generated ticket " + strconv.Itoa(i), Description: "generated",
				CustomerID: "cust_bench" + strconv.Itoa(i%50), Status: support.StatusOpen, Priority: priorities[i%len(priorities)],
				Category: categories[i%len(categories)], AssignedTo: "agent_" + strconv.Itoa(i%20), SLAResponseMinutes: 60, SLAResolutionMinutes: 480,
				ResponseDue: created.Add(time.Hour), ResolutionDue: created.Add(8 * time.Hour), SLACycle: 1, CreatedBy: "ak_bench",
				CreatedAt: created, UpdatedAt: created}
			clock := support.Clock{ID: fmt.Sprintf("slc_bench%011d", i), TicketID: id, Cycle: 1, Metric: support.MetricResolution, TargetMinutes: 480,
				WarningPercent: 80, State: support.ClockRunning, StartedAt: created, CreatedAt: created, UpdatedAt: created}
			if i%4 != 0 {
				resolved := created.Add(time.Duration(1+i%12) * time.Hour)
				tk.Status, tk.ResolvedAt, tk.UpdatedAt = support.StatusResolved, &resolved, resolved
				clock.State, clock.StoppedAt = support.ClockStopped, &resolved
				if i%12 >= 8 {
					clock.BreachedAt = &tk.ResolutionDue
				}
			}
			tickets, clocks = append(tickets, tk), append(clocks, clock)
			if i%5 == 0 {
				feedback = append(feedback, support.Feedback{ID: fmt.Sprintf("fb_bench%011d", i), TicketID: id, CustomerID: tk.CustomerID,
					Rating: 1 + i%5, CreatedBy: "ak_bench", CreatedAt: created})
			}
			if i%3 == 0 {
				comments = append(comments, support.Comment{ID: fmt.Sprintf("cmt_bench%011d", i), TicketID: id, Content: "on it", Type: "comment",
					Visibility: "customer", AuthorType: "agent", AuthorID: "agent_1", CreatedAt: created})
			}
		}
		err := f.core.Tx(f.ctx, scope, func(tx *gorm.DB) error {
			for _, rows := range []any{&tickets, &clocks, &feedback, &comments} {
				if err := tx.CreateInBatches(rows, 250).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
