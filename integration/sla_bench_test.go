package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/testenv"
)

// slaBenchCommand is how the SLA benchmark is run (`make bench-sla`).
const slaBenchCommand = "SLA_BENCH_TICKETS=10000 go test -run '^$' -bench BenchmarkSLAOpenTickets -benchtime 1x -timeout 60m ./integration/"

// BenchmarkSLAOpenTickets opens SLA_BENCH_TICKETS tickets (low priority,
// so that no warning or breach falls due while it runs) through the HTTP
// API, 16 at a time, each starting its TicketSLA workflow; waits until every
// workflow is running and has synced its clocks once (its TicketPriority
// search attribute is set after the first sync); then, over a quiet window
// with no API traffic, measures the CPU time of this process (the API and
// the worker) and of the Temporal dev server, before any ticket and with
// every ticket open. It also reports the database rows and bytes and the Go
// heap per open ticket. Baselines in the same run: tickets created by an API
// with no workflow engine (no SLA workflow is started) and GET
// /v1/support/categories. It reports and asserts nothing about the time.
// The outbox dispatcher does not run: events stay in the outbox, and its
// polling does not blur the idle CPU figures.
//
// It runs only when SLA_BENCH_TICKETS is set (see slaBenchCommand);
// SLA_BENCH_QUIET sets the quiet window (default 30s) and
// SLA_BENCH_CONCURRENCY the creations in flight (default 16).
func BenchmarkSLAOpenTickets(b *testing.B) {
	if _, err := os.Stat("../bin/temporal"); err != nil {
		b.Skip("bin/temporal is absent: run scripts/install-temporal.sh")
	}
	raw, set := os.LookupEnv("SLA_BENCH_TICKETS")
	if !set {
		b.Skip("SLA_BENCH_TICKETS is not set; run: " + slaBenchCommand + " (or make bench-sla)")
	}
	n := 10000
	if raw != "" {
		v, err := strconv.Atoi(raw)
		if err != nil || v <= 0 {
			b.Fatalf("SLA_BENCH_TICKETS=%q: want a positive number", raw)
		}
		n = v
	}
	quiet := 30 * time.Second
	if q := os.Getenv("SLA_BENCH_QUIET"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d <= 0 {
			b.Fatalf("SLA_BENCH_QUIET=%q: want a duration", q)
		}
		quiet = d
	}
	concurrency := 16
	if c := os.Getenv("SLA_BENCH_CONCURRENCY"); c != "" {
		v, err := strconv.Atoi(c)
		if err != nil || v <= 0 {
			b.Fatalf("SLA_BENCH_CONCURRENCY=%q: want a positive number", c)
		}
		concurrency = v
	}
	const baselineTickets = 200
	const categoryReads = 2000

	p := startPlatform(b, platformOptions{queuePrefix: "sla-bench", noDispatcher: true, httpTimeout: time.Minute})
	// The integration stack runs no rate limiter (api.Deps.Limiter is nil),
	// so one key of one customer tenant opens every ticket.
	orgID, key := (&bulkStack{platform: p}).newTenant("SLA bench customer")
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConns: 2 * concurrency, MaxIdleConnsPerHost: 2 * concurrency}}
	temporalPID := devServerPID(p.cfg.TemporalAddress)
	if temporalPID == 0 {
		b.Logf("the Temporal dev server's process was not found: its CPU is not reported")
	}

	ticket := func(i int) map[string]any {
		return map[string]any{"title": fmt.Sprintf("Bench ticket %d", i), "description": "Opened by the SLA benchmark.", "category": "general", "priority": "low"}
	}

	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		// Baseline 1: the same creations on an API without a workflow
		// engine (syncSLA returns at once: no SLA workflow), same process,
		// same database.
		plain := startPlainAPI(b, p)
		start := time.Now()
		if err := parallel(baselineTickets, concurrency, func(i int) error {
			return post(client, plain+"/v1/support/tickets", key, ticket(i), http.StatusCreated)
		}); err != nil {
			b.Fatal(err)
		}
		plainRate := float64(baselineTickets) / time.Since(start).Seconds()
		// Baseline 2: a cheap authenticated read on the real API.
		start = time.Now()
		if err := parallel(categoryReads, concurrency, func(int) error {
			return get(client, p.base+"/v1/support/categories", key)
		}); err != nil {
			b.Fatal(err)
		}
		readRate := float64(categoryReads) / time.Since(start).Seconds()

		// Idle before: the stack with no SLA workflow.
		waitQuiet(5 * time.Second)
		idleBefore := measureIdle(quiet, temporalPID)
		rowsBefore := tableRows(b, p)
		bytesBefore := databaseBytes(b, p)
		heapBefore := liveHeap()

		b.StartTimer()
		start = time.Now()
		var failures atomic.Int64
		if err := parallel(n, concurrency, func(i int) error {
			// A 5xx is counted and the creation tried again (SQLite answers
			// SQLITE_BUSY under this load: see docs/performance.md).
			var err error
			for range 5 {
				if err = post(client, p.base+"/v1/support/tickets", key, ticket(i), http.StatusCreated); err == nil || !isServerError(err) {
					return err
				}
				failures.Add(1)
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
		created := time.Now()
		opened := tableRows(b, p)["support_tickets"] - rowsBefore["support_tickets"]
		if opened != int64(n) {
			b.Logf("%d tickets stored for %d creations", opened, n)
		}
		settled := waitSynced(b, p, int(opened), orgID, 10*time.Minute+time.Duration(n)*50*time.Millisecond)
		b.StopTimer()
		rate := float64(n) / created.Sub(start).Seconds()

		waitQuiet(5 * time.Second)
		idleAfter := measureIdle(quiet, temporalPID)
		rowsAfter := tableRows(b, p)
		bytesAfter := databaseBytes(b, p)
		heapAfter := liveHeap()
		if failed := countWorkflows(b, p, "WorkflowType='TicketSLA' AND ExecutionStatus!='Running'"); failed != 0 {
			b.Errorf("%d TicketSLA workflows are no longer running after the quiet window", failed)
		}

		b.ReportMetric(rate, "tickets/s")
		b.ReportMetric(float64(failures.Load()), "create-5xx")
		b.ReportMetric(plainRate, "no-sla-tickets/s")
		b.ReportMetric(rate/plainRate, "sla/no-sla-rate")
		b.ReportMetric(readRate, "category-reads/s")
		b.ReportMetric(rate/readRate, "tickets/reads-rate")
		b.ReportMetric(settled.Sub(created).Seconds(), "settle-s")
		b.ReportMetric(settled.Sub(start).Seconds(), "create+settle-s")
		b.ReportMetric(idleBefore.self, "idle-empty-worker-cpu-ms/s")
		b.ReportMetric(idleAfter.self, "idle-worker-cpu-ms/s")
		if temporalPID != 0 {
			b.ReportMetric(idleBefore.temporal, "idle-empty-temporal-cpu-ms/s")
			b.ReportMetric(idleAfter.temporal, "idle-temporal-cpu-ms/s")
		}
		var total int64
		var lines []string
		for _, table := range slices.Sorted(maps.Keys(rowsAfter)) {
			d := rowsAfter[table] - rowsBefore[table]
			if d == 0 {
				continue
			}
			total += d
			b.ReportMetric(float64(d)/float64(n), table+"-rows/ticket")
			lines = append(lines, fmt.Sprintf("%s %.2f", table, float64(d)/float64(n)))
		}
		b.ReportMetric(float64(total)/float64(n), "rows/ticket")
		dbPerTicket := float64(bytesAfter-bytesBefore) / float64(n)
		b.ReportMetric(dbPerTicket, "db-B/ticket")
		heapPerTicket := (float64(heapAfter) - float64(heapBefore)) / float64(n)
		b.ReportMetric(heapPerTicket, "heap-B/ticket")

		b.Logf("SLA clocks at scale: %d open tickets, %d creations in flight (database %s, %d cores)", n, concurrency, databaseName(), runtime.NumCPU())
		b.Logf("creation: %.1f tickets/s with the SLA workflow, %.1f without (ratio %.2f); GET /v1/support/categories %.1f/s (ratio %.3f); %d answers 5xx, tried again",
			rate, plainRate, rate/plainRate, readRate, rate/readRate, failures.Load())
		b.Logf("settle: every workflow running and synced %.1f s after the last creation (%.1f s from the first)",
			settled.Sub(created).Seconds(), settled.Sub(start).Seconds())
		b.Logf("idle over %s: this process (API + worker) %.2f cpu-ms/s empty, %.2f with the tickets open; Temporal dev server %.2f empty, %.2f open",
			quiet, idleBefore.self, idleAfter.self, idleBefore.temporal, idleAfter.temporal)
		b.Logf("database: %d rows (%.2f per ticket: %s), %.0f bytes per ticket; Go heap %.0f bytes per ticket",
			total, float64(total)/float64(n), strings.Join(lines, ", "), dbPerTicket, heapPerTicket)
	}
}

// startPlainAPI serves, until b ends, the same API on the same database
// without a workflow engine, and returns its base URL.
func startPlainAPI(b *testing.B, p *platform) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := api.New(api.Deps{Config: p.cfg, Store: p.store, Blobs: testenv.Blobs(b)})
	served := make(chan struct{})
	go func() { _ = srv.App.Listener(ln); close(served) }()
	b.Cleanup(func() {
		_ = srv.App.ShutdownWithTimeout(5 * time.Second)
		<-served
	})
	return "http://" + ln.Addr().String()
}

// parallel runs do(0..n-1), at most width at a time, and returns the first
// error.
func parallel(n, width int, do func(i int) error) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					first.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	if err := first.Load(); err != nil {
		return *err
	}
	return nil
}

// serverError is a 5xx answer.
type serverError struct{ error }

func isServerError(err error) bool { _, ok := err.(serverError); return ok }

func post(c *http.Client, url, key string, body any, want int) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return send(c, req, key, want)
}

func get(c *http.Client, url, key string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	return send(c, req, key, http.StatusOK)
}

func send(c *http.Client, req *http.Request, key string, want int) error {
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		if res.StatusCode >= 500 {
			return serverError{fmt.Errorf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, res.StatusCode, want, raw)}
		}
		return fmt.Errorf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, res.StatusCode, want, raw)
	}
	return nil
}

// waitSynced waits until n TicketSLA workflows are running and have
// synced once (the workflow sets TicketPriority after its first sync), and
// returns when that was seen. On a timeout it fails with what it found.
func waitSynced(b *testing.B, p *platform, n int, orgID string, timeout time.Duration) time.Time {
	b.Helper()
	const synced = "WorkflowType='TicketSLA' AND ExecutionStatus='Running' AND TicketPriority='low'"
	deadline := time.Now().Add(timeout)
	for {
		got := countWorkflows(b, p, synced)
		if got >= int64(n) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			running := countWorkflows(b, p, "WorkflowType='TicketSLA' AND ExecutionStatus='Running'")
			ended := countWorkflows(b, p, "WorkflowType='TicketSLA' AND ExecutionStatus!='Running'")
			b.Fatalf("after %s: %d of %d TicketSLA workflows synced, %d running, %d ended (organization %s)%s",
				timeout, got, n, running, ended, orgID, stuckSample(p))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// stuckSample describes one running TicketSLA workflow that has not
// synced yet: its pending activity and that activity's last failure.
func stuckSample(p *platform) string {
	ctx := context.Background()
	page, err := p.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 1,
		Query: "WorkflowType='TicketSLA' AND ExecutionStatus='Running' AND TicketPriority IS NULL"})
	if err != nil || len(page.Executions) == 0 {
		return ""
	}
	ex := page.Executions[0].Execution
	d, err := p.temporal.DescribeWorkflowExecution(ctx, ex.WorkflowId, ex.RunId)
	if err != nil {
		return "; describe " + ex.WorkflowId + ": " + err.Error()
	}
	out := "; e.g. " + ex.WorkflowId
	for _, a := range d.PendingActivities {
		out += fmt.Sprintf(": activity %s attempt %d, last failure %v", a.ActivityType.GetName(), a.Attempt, a.LastFailure)
	}
	return out
}

func countWorkflows(b *testing.B, p *platform, query string) int64 {
	b.Helper()
	res, err := p.temporal.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default", Query: query})
	if err != nil {
		b.Fatalf("count %s: %v", query, err)
	}
	return res.Count
}

// idleCPU is the CPU used per second of a quiet window, in milliseconds.
type idleCPU struct{ self, temporal float64 }

// measureIdle sleeps through window and returns the CPU time this process
// (API, worker, Temporal client) and the Temporal dev server (pid; none
// when 0) used per second of it.
func measureIdle(window time.Duration, pid int) idleCPU {
	self0, tmp0 := selfCPU(), procCPU(pid)
	start := time.Now()
	time.Sleep(window)
	secs := time.Since(start).Seconds()
	return idleCPU{
		self:     float64((selfCPU() - self0).Milliseconds()) / secs,
		temporal: float64((procCPU(pid) - tmp0).Milliseconds()) / secs,
	}
}

// waitQuiet lets the work in flight (task completions, visibility writes)
// end before a quiet window starts.
func waitQuiet(d time.Duration) { time.Sleep(d) }

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user and system CPU time of process pid so far, from
// /proc/<pid>/stat (0 when unknown).
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// devServerPID finds (Linux only) the process of the Temporal dev server
// listening on addr: bin/temporal started with --port <its port>.
func devServerPID(addr string) int {
	if runtime.GOOS != "linux" {
		return 0
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	exe, err := filepath.Abs("../bin/temporal")
	if err != nil {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(args) == 0 || (args[0] != exe && filepath.Base(args[0]) != "temporal") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "--port" && args[i+1] == port {
				return pid
			}
		}
	}
	return 0
}

// tableRows counts the rows of every table of the database.
func tableRows(b *testing.B, p *platform) map[string]int64 {
	b.Helper()
	db := p.store.In(context.Background(), models.SystemScope())
	tables, err := db.Migrator().GetTables()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, t := range tables {
		var c int64
		if err := db.Raw(`SELECT COUNT(*) FROM "` + t + `"`).Scan(&c).Error; err != nil {
			b.Fatalf("count %s: %v", t, err)
		}
		out[t] = c
	}
	return out
}

// databaseBytes is the database's size: page_count × page_size on SQLite,
// pg_database_size on PostgreSQL.
func databaseBytes(b *testing.B, p *platform) int64 {
	b.Helper()
	db := p.store.In(context.Background(), models.SystemScope())
	var size int64
	if testenv.IsPostgres() {
		if err := db.Raw("SELECT pg_database_size(current_database())").Scan(&size).Error; err != nil {
			b.Fatal(err)
		}
		return size
	}
	var pages, pageSize int64
	if err := db.Raw("PRAGMA page_count").Scan(&pages).Error; err != nil {
		b.Fatal(err)
	}
	if err := db.Raw("PRAGMA page_size").Scan(&pageSize).Error; err != nil {
		b.Fatal(err)
	}
	return pages * pageSize
}

// liveHeap is the Go heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func databaseName() string {
	if testenv.IsPostgres() {
		return "PostgreSQL"
	}
	return "SQLite"
}
