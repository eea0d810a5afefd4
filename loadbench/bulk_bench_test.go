package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/identity"
)

// bulkBenchCommand is how BenchmarkBulkThroughput runs (make bench-bulk).
const bulkBenchCommand = "LOAD_BENCH=1 go test -run '^$' -bench BenchmarkBulkThroughput -benchtime 1x -timeout 120m ./loadbench/"

// Shape of the reference program: what the bulk workflow did per item
// before batches (a child workflow of seven activities, 50 in flight, a
// page of 100 items per run).
const (
	refWindow     = 50
	refPage       = 100
	refActivities = 7
)

// BenchmarkBulkThroughput measures bulk provisioning end to end: POST
// /v1/services/bulk/provision of n items (parallel, 50 at a time, the
// sandbox site, a 100 Mbps internet template) answered by `platform serve`,
// run by `platform worker` with the simulator's step delay at zero, followed
// with GET /v1/operations/{id} until it ends; items per second from the
// POST to the end. Against it, the reference: a raw Temporal SDK program
// of the shape bulk provisioning had before batches (a parent workflow
// starting one child workflow per item, 50 in flight, 100 items per run
// then continue-as-new; each child runs seven no-op activities in turn),
// with its own worker in the benchmark's process, on the same dev server.
// The reference runs (LOAD_BENCH_BULK_REF_ITEMS items, default 1,000)
// before the platform and again after it; each size (LOAD_BENCH_BULK_ITEMS,
// default 100,1000,5000) uses a new tenant, so its sandbox inventory starts
// empty. A request takes at most 1,000 items: a larger size is several
// requests of 1,000 posted at once, measured until the last one ends. It runs only when
// LOAD_BENCH is set (see bulkBenchCommand) and asserts nothing about time.
func BenchmarkBulkThroughput(b *testing.B) {
	if os.Getenv("LOAD_BENCH") == "" {
		b.Skip("LOAD_BENCH is not set; run: " + bulkBenchCommand + " (or make bench-bulk)")
	}
	sizes := []int{100, 1000, 5000}
	if v := os.Getenv("LOAD_BENCH_BULK_ITEMS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 10000 {
				b.Fatalf("LOAD_BENCH_BULK_ITEMS=%q: want numbers from 1 to 10000 separated by commas", v)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	profile := os.Getenv("LOAD_BENCH_PROFILE")
	if profile != "" {
		abs, err := filepath.Abs(profile)
		if err != nil {
			b.Fatal(err)
		}
		profile = abs
	}
	st := startStackProfiled(b, true, profile != "", "SIMULATOR_STEP_DELAY=0s")

	tc, err := client.DialContext(ctx, client.Options{HostPort: st.temporal, Namespace: "default", Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer tc.Close()
	refQueue := "bulkref-" + models.RandomString(6)
	w := worker.New(tc, refQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(refParent, workflow.RegisterOptions{Name: "RefBulk"})
	w.RegisterWorkflowWithOptions(refItem, workflow.RegisterOptions{Name: "RefItem"})
	w.RegisterActivityWithOptions(refStep, activity.RegisterOptions{Name: "RefStep"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	reference := func(n int) float64 {
		start := time.Now()
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "bulkref-" + models.RandomString(8), TaskQueue: refQueue}, "RefBulk", refInput{Total: n})
		if err != nil {
			b.Fatalf("start the reference: %v", err)
		}
		if err := run.Get(ctx, nil); err != nil {
			b.Fatalf("the reference: %v", err)
		}
		return float64(n) / time.Since(start).Seconds()
	}

	fmt.Printf("\nBulk provisioning: %s, Temporal dev server (in-memory), simulator step delay 0, window 50, %d CPUs (GOMAXPROCS %d), %s/%s%s\n",
		st.dbName, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadAverage())
	fmt.Printf("reference: raw SDK, a child workflow of %d no-op activities per item, %d in flight, %d items per run, its worker in the benchmark's process\n\n",
		refActivities, refWindow, refPage)
	refItems := 1000
	if v := os.Getenv("LOAD_BENCH_BULK_REF_ITEMS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("LOAD_BENCH_BULK_REF_ITEMS=%q: want a positive number", v)
		}
		refItems = n
	}
	refBefore := reference(refItems)
	fmt.Printf("raw SDK reference (before): %d items in %.1f s, %.1f items/s\n", refItems, float64(refItems)/refBefore, refBefore)
	type row struct {
		n       int
		rate    float64
		elapsed time.Duration
		status  string
	}
	var rows []row
	var failures []string
	for _, n := range sizes {
		key := bulkTenant(b, st)
		profiled := make(chan error, 1)
		if profile != "" {
			// A CPU profile of the worker for the first seconds of each
			// size (10 s, or about the run's length for 100 items).
			path := strings.TrimSuffix(profile, filepath.Ext(profile)) + fmt.Sprintf("-%d", n) + filepath.Ext(profile)
			go func() {
				profiled <- cpuProfile(st.pprof, min(10*time.Second, time.Duration(n)*20*time.Millisecond), path)
			}()
			fmt.Printf("CPU profile of the worker during %d items: %s\n", n, path)
		} else {
			profiled <- nil
		}
		start := time.Now()
		status, done := runBulk(b, st, key, n)
		elapsed := time.Since(start)
		if err := <-profiled; err != nil {
			b.Fatalf("CPU profile: %v", err)
		}
		if status != "completed" || done != n {
			failures = append(failures, fmt.Sprintf("%d items: ended %s with %d completed", n, status, done))
		}
		r := row{n: n, rate: float64(n) / elapsed.Seconds(), elapsed: elapsed, status: status}
		rows = append(rows, r)
		fmt.Printf("%d items: %s in %.1f s, %.1f items/s, %.2fx the reference before%s\n", n, status, elapsed.Seconds(), r.rate, r.rate/refBefore, loadAverage())
	}
	refAfter := reference(refItems)
	ref := (refBefore + refAfter) / 2

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "items\twhat\tseconds\titems/s\tvs reference\t")
	fmt.Fprintf(tw, "%d\traw SDK reference (before)\t%.1f\t%.1f\t-\t\n", refItems, float64(refItems)/refBefore, refBefore)
	for _, r := range rows {
		what := "POST /v1/services/bulk/provision to its end"
		if r.n > automation.MaxBulkItems {
			what = fmt.Sprintf("%d bulk requests at once, to their end", (r.n+automation.MaxBulkItems-1)/automation.MaxBulkItems)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%.1f\t%.2fx\t\n", r.n, what, r.elapsed.Seconds(), r.rate, r.rate/ref)
		b.ReportMetric(r.rate, fmt.Sprintf("items/s-%d", r.n))
		b.ReportMetric(r.rate/ref, fmt.Sprintf("vs-ref-%d", r.n))
	}
	fmt.Fprintf(tw, "%d\traw SDK reference (after)\t%.1f\t%.1f\t-\t\n", refItems, float64(refItems)/refAfter, refAfter)
	_ = tw.Flush()
	for _, f := range failures {
		fmt.Printf("not completed: %s\n", f)
	}
	b.ReportMetric(ref, "ref-items/s")
	fmt.Printf("\nfinished%s\n\n", loadAverage())
}

// bulkTenant creates a sandbox tenant with limits the benchmark cannot
// reach, a key with every permission and a billing account, and returns
// the key's secret.
func bulkTenant(b *testing.B, st *stack) string {
	ctx := context.Background()
	admin := &models.Principal{Kind: models.PrincipalAPIKey, ID: "key_loadbench", Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	ids := identity.NewStore(st.store)
	org, err := ids.CreateOrganization(ctx, admin, identity.OrganizationInput{Name: "Bulk benchmark", Plan: models.PlanCustom,
		CustomLimits: &models.RateLimits{Hourly: 1_000_000_000, Burst: 1_000_000_000, Concurrent: 256}})
	if err != nil {
		b.Fatalf("create a tenant: %v", err)
	}
	issued, err := ids.CreateAPIKey(ctx, admin, identity.APIKeyInput{Name: "bulk", Permissions: []string{"*"}, OrganizationID: org.ID, Environment: models.EnvTest})
	if err != nil {
		b.Fatalf("issue a key: %v", err)
	}
	body, _ := json.Marshal(map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "b@example.com"})
	if code, answer := post(st.base+"/v1/billing/accounts", issued.Secret, body); code != http.StatusCreated {
		b.Fatalf("POST /v1/billing/accounts: %d %.500s", code, answer)
	}
	return issued.Secret
}

// runBulk provisions n services with key, in one bulk request per 1,000
// items (the most one request takes), all posted at once, and follows the
// operations to their end; it returns the worst status and the completed
// items.
func runBulk(b *testing.B, st *stack, key string, n int) (string, int) {
	type answer struct {
		status string
		done   int
	}
	answers := make(chan answer)
	jobs := 0
	for left := n; left > 0; left -= automation.MaxBulkItems {
		jobs++
		// A tenant per request: a sandbox site has about 4,000 VLAN ids per tenant.
		if jobs > 1 {
			key = bulkTenant(b, st)
		}
		go func(key string, size int) {
			status, done := runBulkJob(st, key, size)
			answers <- answer{status, done}
		}(key, min(left, automation.MaxBulkItems))
	}
	status, done := "completed", 0
	for range jobs {
		a := <-answers
		if a.status != "completed" {
			status = a.status
		}
		done += a.done
	}
	return status, done
}

// runBulkJob provisions n services in one bulk request with key and
// follows the operation to its end; it returns its status and completed
// items (or "error: ..." when a request failed).
func runBulkJob(st *stack, key string, n int) (string, int) {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all", "customizations": map[string]any{"bandwidth": "100mbps"}}
	}
	body, _ := json.Marshal(map[string]any{"services": items, "orchestration": map[string]any{"parallel": true, "max_concurrency": refWindow}})
	code, answer := post(st.base+"/v1/services/bulk/provision", key, body)
	if code != http.StatusAccepted {
		return fmt.Sprintf("error: POST /v1/services/bulk/provision: %d %.500s", code, answer), 0
	}
	var acc struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(answer, &acc); err != nil {
		return "error: " + err.Error(), 0
	}
	deadline := time.Now().Add(time.Hour)
	for {
		var op struct {
			Status   string `json:"status"`
			Progress struct {
				Completed int `json:"completed"`
			} `json:"progress"`
		}
		req, _ := http.NewRequest(http.MethodGet, st.base+"/v1/operations/"+acc.RequestID, nil)
		req.Header = jsonHeader(key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return "error: " + err.Error(), 0
		}
		raw, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Sprintf("error: GET /v1/operations/%s: %d %.500s", acc.RequestID, res.StatusCode, raw), 0
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			return "error: " + err.Error(), 0
		}
		switch op.Status {
		case "completed", "partial", "failed", "rolled_back", "cancelled":
			return op.Status, op.Progress.Completed
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("error: bulk %s still %s after an hour", acc.RequestID, op.Status), 0
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// refInput is the reference parent's input: the items and where this run starts.
type refInput struct {
	Total int `json:"total"`
	Next  int `json:"next"`
}

// refParent runs a page of items, each a child RefItem workflow, at most
// refWindow at once, then continues as new with the next page.
func refParent(ctx workflow.Context, in refInput) error {
	end := min(in.Next+refPage, in.Total)
	sel := workflow.NewSelector(ctx)
	inFlight := 0
	var failure error
	info := workflow.GetInfo(ctx)
	for i := in.Next; i < end || inFlight > 0; {
		for inFlight < refWindow && i < end {
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: fmt.Sprintf("%s-%d", info.WorkflowExecution.ID, i)})
			f := workflow.ExecuteChildWorkflow(cctx, "RefItem", i)
			inFlight++
			i++
			sel.AddFuture(f, func(f workflow.Future) {
				inFlight--
				if err := f.Get(ctx, nil); err != nil {
					failure = err
				}
			})
		}
		if inFlight > 0 {
			sel.Select(ctx)
		}
	}
	if failure != nil {
		return failure
	}
	if end < in.Total {
		return workflow.NewContinueAsNewError(ctx, "RefBulk", refInput{Total: in.Total, Next: end})
	}
	return nil
}

// refItem runs refActivities no-op activities in turn.
func refItem(ctx workflow.Context, position int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5}})
	for step := range refActivities {
		if err := workflow.ExecuteActivity(ctx, "RefStep", position, step).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// refStep does nothing.
func refStep(context.Context, int, int) error { return nil }
