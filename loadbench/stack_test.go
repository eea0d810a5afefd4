package loadbench

import (
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
	"sync/atomic"
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
	api := testenv.NewProcess(b, "serve", exe, "serve", dir, s.base+"/healthz", common)
	api.Start()
	api.WaitReady(60 * time.Second)
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

// attackWith drives the requests targeter makes with conns connections
// (and as many workers) for du, as fast as the answers come. It also
// returns the answers other than 2xx, by status, with the first error.
func attackWith(name string, targeter vegeta.Targeter, conns int, du time.Duration) (point, string) {
	atk := vegeta.NewAttacker(vegeta.Connections(conns), vegeta.MaxConnections(conns),
		vegeta.Workers(uint64(conns)), vegeta.MaxWorkers(uint64(conns)),
		vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0), vegeta.Redirects(vegeta.NoFollow))
	var m vegeta.Metrics
	for r := range atk.Attack(targeter, vegeta.ConstantPacer{}, du, name) {
		m.Add(r)
	}
	m.Close()
	p := point{rate: m.Throughput, p50: m.Latencies.P50, p99: m.Latencies.P99, requests: m.Requests}
	var bad []string
	for code, n := range m.StatusCodes {
		if !strings.HasPrefix(code, "2") {
			p.errors += n
			bad = append(bad, fmt.Sprintf("%s x%d", code, n))
		}
		if code == "429" {
			p.limited += n
		}
	}
	slices.Sort(bad)
	if len(m.Errors) > 0 {
		bad = append(bad, m.Errors[0])
	}
	return p, strings.Join(bad, ", ")
}

// loop calls do from conns goroutines, each calling again as soon as the
// last call returned, for du, and measures it as attackWith measures
// requests: successful calls per second of the whole run, and the p50 and
// p99 of every call's latency.
func loop(conns int, du time.Duration, do func() error) point {
	var mu sync.Mutex
	var lat []time.Duration
	var ok, failed atomic.Int64
	start := time.Now()
	deadline := start.Add(du)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := do()
				mine = append(mine, time.Since(t0))
				if err != nil {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	p := point{rate: float64(ok.Load()) / elapsed.Seconds(), errors: int(failed.Load()), requests: uint64(len(lat))}
	p.p50, p.p99 = quantile(lat, 0.50), quantile(lat, 0.99)
	return p
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
