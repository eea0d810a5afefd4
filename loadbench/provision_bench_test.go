package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/workflows"
)

// provisionBenchCommand is how BenchmarkProvisionStart runs (make bench-start).
const provisionBenchCommand = "LOAD_BENCH=1 go test -run '^$' -bench BenchmarkProvisionStart -benchtime 1x -timeout 60m ./loadbench/"

// provisionBody is the order every POST /v1/services/provision sends: a
// template at the sandbox site whose capacity (1,000,000 Mbps per service
// type and tenant) the benchmark cannot use up; without a worker no
// capacity is held at all (the workflow's reserve_capacity step holds it).
var provisionBody = map[string]any{
	"service_template": "internet-dedicated-1g", "location_id": "loc_sandbox_all",
	"customizations": map[string]any{"bandwidth": "100mbps"},
}

// BenchmarkProvisionStart measures starting an operation: POST
// /v1/services/provision answered 202 by `platform serve` (validation,
// availability, the pending operation row, ExecuteWorkflow of the
// provisioning workflow), against a raw SDK loop in the benchmark's
// process calling client.ExecuteWorkflow with the same workflow type, task
// queue, search attributes and input on the same Temporal dev server. No
// worker runs: the started workflows wait in the task queue (the 202 needs
// only the start), so the figures are the start path alone, the same for
// both. Each point runs the SDK loop and the API without and with an
// Idempotency-Key (unique per request), taking turns in
// LOAD_BENCH_ROUNDS rounds (default 5), at LOAD_BENCH_CONNECTIONS
// (default 1,8,32), LOAD_BENCH_DURATION each in all (default 5s). A credential may make 50 provisioning requests an hour (the
// provisioning endpoint group), so the API runs use fresh sandbox keys of
// the demo tenant, 50 requests each, as many customers would. It runs only
// when LOAD_BENCH is set (see provisionBenchCommand).
func BenchmarkProvisionStart(b *testing.B) {
	if os.Getenv("LOAD_BENCH") == "" {
		b.Skip("LOAD_BENCH is not set; run: " + provisionBenchCommand + " (or make bench-start)")
	}
	s := loadSettings(b)
	if os.Getenv("LOAD_BENCH_CONNECTIONS") == "" {
		s.connections = []int{1, 8, 32}
	}
	rounds := max(1, envInt(b, "LOAD_BENCH_ROUNDS", 5))
	ctx := context.Background()
	st := startStack(b, false)

	body, err := json.Marshal(provisionBody)
	if err != nil {
		b.Fatal(err)
	}
	url := st.base + "/v1/services/provision"
	// One request first: the order is valid and answered 202.
	if code, answer := post(url, st.fx.key, body); code != http.StatusAccepted {
		b.Fatalf("POST /v1/services/provision: %d %.500s", code, answer)
	}

	// The raw loop's input: the order the API would validate, prepared once.
	principal := &models.Principal{Kind: models.PrincipalAPIKey, ID: "key_loadbench", OrganizationID: st.demoOrg,
		Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	order, scope, err := services.NewStore(st.store).PrepareTemplateOrder(ctx, principal, services.TemplateInput{
		ServiceTemplate: "internet-dedicated-1g", LocationID: "loc_sandbox_all", Bandwidth: "100mbps"})
	if err != nil {
		b.Fatalf("prepare the raw loop's order: %v", err)
	}
	// The SDK loop's client is built as the API's is (TEMPORAL_COMPRESSION's
	// default, auto: no compression on loopback), so that both pay the
	// same for the same start.
	tc, err := temporalclient.Dial(ctx, temporalclient.Options{Address: st.temporal, Namespace: "default",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer tc.Close()
	queues := workflows.TaskQueues{Interactive: st.queue}
	sdkStart := func() error {
		id, svc := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
		opts := workflows.StartOptions(queues, workflows.Start{ID: id, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
			OperationType: string(operations.OpTypeProvisioning), ResourceID: svc, Link: st.base + "/v1/operations/" + id})
		in := workflows.ProvisioningInput{RequestID: id, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc, Order: *order}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := tc.ExecuteWorkflow(sctx, opts, workflows.ProvisioningWorkflow, in)
		return err
	}
	if err := sdkStart(); err != nil {
		b.Fatalf("raw ExecuteWorkflow: %v", err)
	}

	fmt.Printf("\nStarting an operation: %s, Temporal dev server (in-memory), no worker, %s per point, %d CPUs (GOMAXPROCS %d), %s/%s\n",
		st.dbName, s.duration, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("the SDK loop and vegeta run in the benchmark's process, the API in its own; %d interleaved rounds per point%s\n\n", rounds, loadAverage())
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	// CPU per start: of the API process and of the dev server, over the
	// target's turns (from /proc; "-" elsewhere). The SDK loop's own CPU is
	// the benchmark process's, shared with vegeta, and is not shown.
	pids := []int{st.apiPID, st.devPID}
	fmt.Fprintln(w, "conns\ttarget\tstarts/s\tp50\tp99\terrors\tvs SDK\tCPU/start API\tCPU/start dev server\t")
	started := 2
	var failures, idleLines []string
	for _, conns := range s.connections {
		// The three targets take turns, rounds times, each for duration /
		// rounds, the first of each round in turn: the dev server holds
		// more workflows as the run goes on and the machine's other load
		// comes and goes, and each target gets its share of both.
		var sdk tally
		var api [2]tally
		slice := s.duration / time.Duration(rounds)
		for r := range rounds {
			for k := range 3 {
				// 0: the SDK loop; 1, 2: the API without and with an Idempotency-Key.
				if turn := (r + k) % 3; turn == 0 {
					sdk.measure(pids, func() { loopInto(&sdk, conns, slice, sdkStart) })
				} else {
					idem := turn == 2
					// Enough fresh keys for twice the SDK loop's best rate so far.
					rate := max(sdk.point().rate, 200)
					keys := issueKeys(b, st, int(2*rate*slice.Seconds())/perKey+10)
					t := &api[turn-1]
					t.measure(pids, func() {
						attackInto(t, provisionTargetName(idem), provisionTargeter(url, keys, body, idem), conns, slice)
					})
				}
			}
		}
		// The dev server's CPU with nothing starting: its background work
		// (timers, the task queues' backlog), which each target's CPU per
		// start includes in proportion to the time it ran.
		idle := startCPU(st.devPID)
		time.Sleep(2 * time.Second)
		idleCPU := idle.spent()[0] / 2
		ref := sdk.point()
		started += int(ref.requests) - ref.errors
		row := func(name string, p point, ratio string, t *tally, api string) {
			fmt.Fprintf(w, "%d\t%s\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\t\n", conns, name, p.rate, ms(p.p50), ms(p.p99), p.errors, ratio, api, t.cpuPerCall(1))
		}
		// The API's CPU while the SDK loop runs is its idle work (timers,
		// pollers), shown in parentheses per SDK start.
		row("raw SDK ExecuteWorkflow", ref, "-", &sdk, "("+sdk.cpuPerCall(0)+")")
		if bad := sdk.failures(); bad != "" {
			failures = append(failures, fmt.Sprintf("%d conns, raw SDK ExecuteWorkflow: %s", conns, bad))
		}
		var pts [2]point
		for i, idem := range []bool{false, true} {
			pts[i] = api[i].point()
			started += int(pts[i].requests) - pts[i].errors
			ratio := "-"
			if ref.rate > 0 {
				ratio = fmt.Sprintf("%.1f %%", 100*pts[i].rate/ref.rate)
			}
			row(provisionTargetName(idem), pts[i], ratio, &api[i], api[i].cpuPerCall(0))
			if bad := api[i].failures(); bad != "" {
				failures = append(failures, fmt.Sprintf("%d conns, %s: %s", conns, provisionTargetName(idem), bad))
			}
		}
		idleLines = append(idleLines, fmt.Sprintf("after %d conns: the dev server idle spends %.0f ms of CPU per second", conns, float64(idleCPU)/float64(time.Millisecond)))
		b.ReportMetric(pts[0].rate, fmt.Sprintf("provision/s-%dconns", conns))
		b.ReportMetric(float64(pts[0].p99)/float64(time.Millisecond), fmt.Sprintf("provision-p99-ms-%dconns", conns))
		b.ReportMetric(ref.rate, fmt.Sprintf("sdk-starts/s-%dconns", conns))
		if ref.rate > 0 {
			b.ReportMetric(pts[0].rate/ref.rate, fmt.Sprintf("provision/sdk-%dconns", conns))
		}
	}
	_ = w.Flush()
	for _, f := range idleLines {
		fmt.Println(f)
	}
	for _, f := range failures {
		fmt.Printf("errors: %s\n", f)
	}
	fmt.Printf("\nfinished: about %d workflows started%s\n\n", started, loadAverage())
}

func provisionTargetName(idem bool) string {
	if idem {
		return "POST /v1/services/provision + Idempotency-Key"
	}
	return "POST /v1/services/provision"
}

// perKey is how many provisioning requests one credential may make in an
// hour (the provisioning endpoint group's limit).
var perKey = ratelimit.GroupProvisioning.HourlyLimit()

// provisionTargeter makes POST /v1/services/provision requests with body,
// perKey with each key in turn, each with a new Idempotency-Key when idem.
func provisionTargeter(url string, keys []string, body []byte, idem bool) vegeta.Targeter {
	prefix := "lb-" + models.RandomString(8) + "-"
	var n atomic.Int64
	return func(t *vegeta.Target) error {
		i := n.Add(1)
		h := jsonHeader(keys[int((i-1)/int64(perKey))%len(keys)])
		if idem {
			h.Set("Idempotency-Key", fmt.Sprint(prefix, i))
		}
		t.Method, t.URL, t.Body, t.Header = http.MethodPost, url, body, h
		return nil
	}
}

// issueKeys writes n new sandbox API keys of the demo tenant with every
// permission (as EnsureAPIKey writes them, in batches) and returns their
// secrets.
func issueKeys(b *testing.B, st *stack, n int) []string {
	secrets := make([]string, n)
	rows := make([]identity.APIKey, n)
	for i := range rows {
		secrets[i] = "sk_test_" + models.RandomString(56)
		rows[i] = identity.APIKey{ID: models.NewID(models.PrefixAPIKey), Tenant: models.Tenant{OrganizationID: st.demoOrg, Environment: models.EnvTest},
			Name: "load benchmark " + strconv.Itoa(i), DisplayPrefix: secrets[i][:12], Hash: models.HashSecret(secrets[i]),
			Role: models.RoleCustomer, Permissions: []string{"*"}, CreatedBy: "bootstrap"}
	}
	scope := models.TenantScope(st.demoOrg, models.EnvTest)
	if err := st.store.In(context.Background(), scope).CreateInBatches(rows, 100).Error; err != nil {
		b.Fatalf("issue %d API keys: %v", n, err)
	}
	return secrets
}

// post sends one authenticated JSON POST and returns the status and body.
func post(url, key string, body []byte) (int, []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header = jsonHeader(key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}
