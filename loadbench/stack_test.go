package loadbench

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	tlog "go.temporal.io/sdk/log"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// stack is the platform on loopback for BenchmarkProvisionStart and
// BenchmarkWebhookFanout: a private Temporal dev server (bin/temporal,
// in-memory store, the platform's search attributes), a private
// redis-server, the benchmark database (prepareDatabase), `platform serve`
// and, when asked, `platform worker` (worker, outbox dispatcher), each a
// process of its own built from this tree. The benchmark's process keeps a
// store on the same database.
type stack struct {
	base     string // the API's base URL
	temporal string // the dev server's frontend host:port
	queue    string // TEMPORAL_TASK_QUEUE of every process
	pprof    string // the worker's profiling listener (http://host:port), when startStack was asked for one
	dbName   string // SQLite or PostgreSQL
	fx       fixture
	store    *models.Store
	demoOrg  string // the demo organization (the key's tenant, sandbox)
	apiPID   int    // the API process
	devPID   int    // the Temporal dev server's process (0: not found)
}

// startStack starts the stack (see stack); env adds NAME=value settings to
// both processes. Everything stops when b ends.
func startStack(b *testing.B, withWorker bool, env ...string) *stack {
	return startStackProfiled(b, withWorker, false, env...)
}

// startStackProfiled is startStack whose worker, when workerPprof is set,
// serves Go's profiling endpoints on a loopback port of its own
// (stack.pprof).
func startStackProfiled(b *testing.B, withWorker, workerPprof bool, env ...string) *stack {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	temporal := testenv.TemporalAddress(b, workflows.DevServerArgs()...)
	redisURL := testenv.RedisURL(b)
	dbURL := testenv.DatabaseURL(b)
	s := &stack{temporal: temporal, queue: "loadbench-" + models.RandomString(6), dbName: "SQLite"}
	if testenv.IsPostgres() {
		s.dbName = "PostgreSQL"
	}
	s.fx = prepareDatabase(b, ctx, dbURL)

	db, err := models.Open(ctx, dbURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = models.Close(db) })
	key, _ := hex.DecodeString(secretsKey)
	sealer, err := models.NewSealer(key)
	if err != nil {
		b.Fatal(err)
	}
	s.store = models.NewStore(db, sealer)
	demo, err := seed.NewStore(s.store).DemoOrganization(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s.demoOrg = demo.ID

	exe := testenv.BuildPlatform(b, dir)
	apiAddr := freeAddr(b)
	s.base = "http://" + apiAddr
	common := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"HTTP_ADDR=" + apiAddr, "PUBLIC_BASE_URL=" + s.base,
		"DATABASE_URL=" + dbURL, "REDIS_URL=" + redisURL, "SECRETS_KEY=" + secretsKey,
		"BLOB_URL=file:" + filepath.Join(dir, "blobs"),
		"TEMPORAL_ADDRESS=" + temporal, "TEMPORAL_TASK_QUEUE=" + s.queue, "LOG_LEVEL=warn",
	}
	if v, ok := os.LookupEnv("MODERNC_SQLITE_OFD_LOCK"); ok {
		common = append(common, "MODERNC_SQLITE_OFD_LOCK="+v)
	}
	common = append(common, env...)
	apiEnv := common
	if addr := os.Getenv("LOAD_BENCH_API_PPROF"); addr != "" {
		// The API's profiling endpoints, for a profile taken while a
		// benchmark runs (a loopback host:port, as PPROF_ADDR takes).
		apiEnv = append(slices.Clone(common), "PPROF_ADDR="+addr)
	}
	api := testenv.NewProcess(b, "serve", exe, "serve", dir, s.base+"/healthz", apiEnv)
	api.Start()
	api.WaitReady(60 * time.Second)
	s.apiPID = api.PID()
	s.devPID = serverPID("temporal", temporal[strings.LastIndexByte(temporal, ':')+1:])
	if withWorker {
		wenv := common
		if workerPprof {
			addr := freeAddr(b)
			s.pprof = "http://" + addr
			wenv = append(slices.Clone(common), "PPROF_ADDR="+addr)
		}
		testenv.NewProcess(b, "worker", exe, "worker", dir, "", wenv).Start()
	}
	return s
}

// tally adds up the runs of one target (interleaved rounds, see
// BenchmarkProvisionStart): successful and failed requests, the time they
// ran, every latency, and the answers other than 2xx by status.
type tally struct {
	ok, failed int
	elapsed    time.Duration
	lat        []time.Duration
	bad        map[string]int  // status (or transport error) → count
	cpu        []time.Duration // CPU time of the processes measure watched, in the same order
}

// measure runs run and adds to t the CPU time the processes pids spent
// meanwhile.
func (t *tally) measure(pids []int, run func()) {
	m := startCPU(pids...)
	run()
	if t.cpu == nil {
		t.cpu = make([]time.Duration, len(pids))
	}
	for i, d := range m.spent() {
		t.cpu[i] += d
	}
}

// cpuPerCall returns the CPU time per call of the i-th process measure
// watched, in microseconds ("-" when unknown).
func (t *tally) cpuPerCall(i int) string {
	n := t.ok + t.failed
	if i >= len(t.cpu) || t.cpu[i] == 0 || n == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(t.cpu[i])/float64(time.Microsecond)/float64(n), 'f', 0, 64) + " µs"
}

// point is the tally as one measured point: successes per second of the
// runs' whole time, p50 and p99 of every latency.
func (t *tally) point() point {
	slices.Sort(t.lat)
	p := point{errors: t.failed, requests: uint64(t.ok + t.failed), p50: quantile(t.lat, 0.50), p99: quantile(t.lat, 0.99),
		limited: t.bad["429"]}
	if t.elapsed > 0 {
		p.rate = float64(t.ok) / t.elapsed.Seconds()
	}
	return p
}

// failures lists the answers other than 2xx, by status, sorted.
func (t *tally) failures() string {
	var out []string
	for code, n := range t.bad {
		out = append(out, fmt.Sprintf("%s x%d", code, n))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// fail counts n failures of the kind what.
func (t *tally) fail(what string, n int) {
	if t.bad == nil {
		t.bad = map[string]int{}
	}
	t.failed += n
	t.bad[what] += n
}

// attacker is vegeta with conns keep-alive connections and as many
// workers, bodies drained, redirects not followed.
func attacker(conns int) *vegeta.Attacker {
	return vegeta.NewAttacker(vegeta.Connections(conns), vegeta.MaxConnections(conns),
		vegeta.Workers(uint64(conns)), vegeta.MaxWorkers(uint64(conns)),
		vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0), vegeta.Redirects(vegeta.NoFollow))
}

// attackInto drives the requests targeter makes with conns connections
// (and as many workers) for du, as fast as the answers come, and adds them
// to t.
func attackInto(t *tally, name string, targeter vegeta.Targeter, conns int, du time.Duration) {
	start := time.Now()
	for r := range attacker(conns).Attack(targeter, vegeta.ConstantPacer{}, du, name) {
		t.lat = append(t.lat, r.Latency)
		switch {
		case r.Code >= 200 && r.Code < 300:
			t.ok++
		case r.Code == 0:
			t.fail(r.Error, 1)
		default:
			t.fail(strconv.Itoa(int(r.Code)), 1)
		}
	}
	t.elapsed += time.Since(start)
}

// loopInto calls do from conns goroutines, each calling again as soon as
// the last call returned, for du, and adds the calls to t as attackInto
// adds requests.
func loopInto(t *tally, conns int, du time.Duration, do func() error) {
	var mu sync.Mutex
	start := time.Now()
	deadline := start.Add(du)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var ok, failed int
			var first error
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := do()
				mine = append(mine, time.Since(t0))
				if err != nil {
					failed++
					first = cmp.Or(first, err)
				} else {
					ok++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			t.lat = append(t.lat, mine...)
			t.ok += ok
			if failed > 0 {
				t.fail(first.Error(), failed)
			}
		}()
	}
	wg.Wait()
	t.elapsed += time.Since(start)
}

// quantile returns the q-quantile of sorted (nearest rank), 0 when empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// envInt reads a positive integer setting, def when unset.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// jsonHeader returns the headers of an authenticated JSON request.
func jsonHeader(key string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	h.Set("Content-Type", "application/json")
	return h
}

// msf formats a duration in milliseconds with one decimal.
func msf(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// quietLogger is the Temporal SDK logger of the benchmarks' own clients
// and workers: warnings and errors only, as the platform's processes run
// (LOG_LEVEL=warn), so that the references do not pay for debug lines the
// platform does not write.
func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
