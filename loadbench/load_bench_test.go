package loadbench

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/testenv"
)

// loadBenchCommand is how the benchmark runs (make bench-load).
const loadBenchCommand = "LOAD_BENCH=1 go test -run '^$' -bench BenchmarkAPILoad -benchtime 1x -timeout 60m ./loadbench/"

// secretsKey is the benchmark database's SECRETS_KEY (32 bytes, hex).
var secretsKey = strings.Repeat("5a", 32)

// settings are the benchmark's knobs, from the environment.
type settings struct {
	duration    time.Duration // LOAD_BENCH_DURATION: per measured point (default 5s)
	connections []int         // LOAD_BENCH_CONNECTIONS: comma-separated (default 1,8,32,128)
	half        int           // LOAD_BENCH_HALF_CONNECTIONS: connections of the half-load run (default 32, 0: none)
	profile     string        // LOAD_BENCH_PROFILE: file for a CPU profile of the platform under the catalog load (empty: none)
}

func loadSettings(b *testing.B) settings {
	s := settings{duration: 5 * time.Second, connections: []int{1, 8, 32, 128}, half: 32, profile: os.Getenv("LOAD_BENCH_PROFILE")}
	if v := os.Getenv("LOAD_BENCH_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			b.Fatalf("LOAD_BENCH_DURATION=%q: want a duration of at least 1s", v)
		}
		s.duration = d
	}
	if v := os.Getenv("LOAD_BENCH_CONNECTIONS"); v != "" {
		s.connections = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("LOAD_BENCH_CONNECTIONS=%q: want positive numbers separated by commas", v)
			}
			s.connections = append(s.connections, n)
		}
	}
	if v := os.Getenv("LOAD_BENCH_HALF_CONNECTIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("LOAD_BENCH_HALF_CONNECTIONS=%q: want a number of connections (0: no half-load run)", v)
		}
		s.half = n
	}
	if s.profile != "" {
		abs, err := filepath.Abs(s.profile)
		if err != nil {
			b.Fatal(err)
		}
		s.profile = abs
	}
	return s
}

// target is one endpoint under load.
type target struct {
	name, url, key string
	floor          bool // one of the floors (not divided by floor (b))
	pid            int  // the process serving it (0: the load generator's own)
}

// point is one measured run.
type point struct {
	rate     float64 // successful requests per second
	p50, p99 time.Duration
	errors   int // transport errors and answers other than 2xx
	limited  int // 429 answers (counted among errors)
	requests uint64
}

// BenchmarkAPILoad measures the platform's authenticated, rate-limited GETs
// (catalog, one service, one operation) against two floors on the same
// machine, Redis and load generator. It runs only when LOAD_BENCH is set
// (see loadBenchCommand); the database is SQLite, or PostgreSQL when
// TEST_DATABASE_URL is set (scripts/with-postgres.sh). It prints a table of
// throughput, latency and errors per connection count, each platform
// endpoint's ratio to floor (b), and p99 at half the maximum rate.
func BenchmarkAPILoad(b *testing.B) {
	if os.Getenv("LOAD_BENCH") == "" {
		b.Skip("LOAD_BENCH is not set; run: " + loadBenchCommand + " (or make bench-load)")
	}
	s := loadSettings(b)
	ctx := context.Background()
	dir := b.TempDir()

	redisURL := testenv.RedisURL(b)
	ropts, err := redis.ParseURL(redisURL)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()

	dbURL := testenv.DatabaseURL(b)
	dbName := "SQLite"
	if testenv.IsPostgres() {
		dbName = "PostgreSQL"
	}
	if testenv.IsPostgres() && s.profile != "" {
		ext := filepath.Ext(s.profile)
		s.profile = strings.TrimSuffix(s.profile, ext) + "-postgres" + ext
	}
	fx := prepareDatabase(b, ctx, dbURL)

	// The platform: `platform serve`, built from this tree, on loopback.
	exe := testenv.BuildPlatform(b, dir)
	apiAddr := freeAddr(b)
	pprofAddr := freeAddr(b)
	base := "http://" + apiAddr
	platform := testenv.NewProcess(b, "platform", exe, "serve", dir, base+"/healthz", []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"HTTP_ADDR=" + apiAddr, "PUBLIC_BASE_URL=http://" + apiAddr,
		"DATABASE_URL=" + dbURL, "REDIS_URL=" + redisURL, "SECRETS_KEY=" + secretsKey,
		"BLOB_URL=file:" + filepath.Join(dir, "blobs"),
		"TEMPORAL_ADDRESS=127.0.0.1:" + strconv.Itoa(testenv.FreePort(b)), // never dialled by `serve`
		"PPROF_ADDR=" + pprofAddr, "LOG_LEVEL=warn",
	})
	platform.Start()
	platform.WaitReady(60 * time.Second)

	// What each platform endpoint answers, fetched once: the catalog's
	// bytes are what floor (b) writes.
	catalog := fetch(b, base+"/v1/services/catalog", fx.key)
	fetch(b, base+"/v1/services/"+fx.serviceID, fx.key)
	fetch(b, base+"/v1/operations/"+fx.operationID, fx.key)

	// The floors: (a) and (b) each in a process of its own, as the platform
	// runs; (b') is (b) again inside the load generator's process, which
	// saves it the scheduling of a second process on every request.
	floorA, floorAPID := startFloorProcess(b, "a")
	floorBURL, floorBPID := startFloorBProcess(b, redisURL, fx.key, catalog)
	floorBHere := serveFiber(b, floorB(rdb, fx.key, catalog))
	fetch(b, floorBURL+"/v1/services/catalog", fx.key)
	fetch(b, floorBHere+"/v1/services/catalog", fx.key)

	targets := []target{
		{name: "(a) bare Fiber, small JSON", url: floorA + "/json", floor: true, pid: floorAPID},
		{name: "(b) Fiber + key hash + redis_rate + catalog bytes", url: floorBURL + "/v1/services/catalog", key: fx.key, floor: true, pid: floorBPID},
		{name: "(b') the same, in the load generator's process", url: floorBHere + "/v1/services/catalog", key: fx.key, floor: true},
		{name: "GET /v1/services/catalog", url: base + "/v1/services/catalog", key: fx.key, pid: platform.PID()},
		{name: "GET /v1/services/{id}", url: base + "/v1/services/" + fx.serviceID, key: fx.key, pid: platform.PID()},
		{name: "GET /v1/operations/{id}", url: base + "/v1/operations/" + fx.operationID, key: fx.key, pid: platform.PID()},
	}

	fmt.Printf("\nAPI load benchmark: %s, redis-server, vegeta at maximum rate, %s per point, %d CPUs (GOMAXPROCS %d), %s/%s\n",
		dbName, s.duration, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	fmt.Printf("catalog answer: %d bytes; the platform and floors (a) and (b) each run in a process of their own, (b') in the load generator's%s\n\n", len(catalog), loadAverage())
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	// CPU per request: of the process that serves the target, and of
	// redis-server, over the point's run (from /proc; "-" elsewhere).
	// Unlike the rates, these hardly move with the machine's other load.
	redisProc := redisPID(ropts.Addr[strings.LastIndexByte(ropts.Addr, ':')+1:])
	fmt.Fprintln(w, "conns\ttarget\treq/s\tp50\tp99\terrors\t429\tvs (b)\tvs (b')\tCPU/req server\tCPU/req redis\t")
	maxRate := map[string]float64{}
	for _, conns := range s.connections {
		var floor, floorHere float64
		for _, tg := range targets {
			meter := startCPU(tg.pid, redisProc)
			p := attack(tg, conns, 0, s.duration)
			cpu := meter.perRequest(p.requests)
			switch {
			case tg.floor && strings.HasPrefix(tg.name, "(b)"):
				floor = p.rate
			case tg.floor && strings.HasPrefix(tg.name, "(b')"):
				floorHere = p.rate
			}
			ratio, ratioHere := "-", "-"
			if !tg.floor && floor > 0 {
				ratio = fmt.Sprintf("%.1f %%", 100*p.rate/floor)
			}
			if !tg.floor && floorHere > 0 {
				ratioHere = fmt.Sprintf("%.1f %%", 100*p.rate/floorHere)
			}
			if conns == s.half {
				maxRate[tg.name] = p.rate
			}
			fmt.Fprintf(w, "%d\t%s\t%.0f\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", conns, tg.name, p.rate, ms(p.p50), ms(p.p99), p.errors, p.limited, ratio, ratioHere, cpu[0], cpu[1])
			if !tg.floor {
				b.ReportMetric(p.rate, fmt.Sprintf("req/s-%s-%dconns", metricName(tg.name), conns))
			}
		}
	}
	_ = w.Flush()

	if s.half > 0 {
		fmt.Printf("\nHalf load: %d connections at half of each target's maximum rate at %d connections\n\n", s.half, s.half)
		w = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "target\trate\treq/s\tp50\tp99\terrors\t")
		for _, tg := range targets {
			half := int(maxRate[tg.name] / 2)
			if half < 1 {
				half = int(attack(tg, s.half, 0, s.duration).rate/2) + 1
			}
			p := attack(tg, s.half, half, s.duration)
			fmt.Fprintf(w, "%s\t%d/s\t%.0f\t%s\t%s\t%d\t\n", tg.name, half, p.rate, ms(p.p50), ms(p.p99), p.errors)
		}
		_ = w.Flush()
	}

	if s.profile != "" {
		// One CPU profile per endpoint: the catalog's in the named file, the
		// others beside it (<name>-service<ext>, <name>-operation<ext>).
		conns := 32
		ext := filepath.Ext(s.profile)
		for i, suffix := range []string{"", "-service", "-operation"} {
			tg := targets[3+i]
			path := strings.TrimSuffix(s.profile, ext) + suffix + ext
			fmt.Printf("\nCPU profile of the platform under %s at %d connections (%s): %s\n", tg.name, conns, s.duration, path)
			done := make(chan error, 1)
			go func() { done <- cpuProfile("http://"+pprofAddr, s.duration, path) }()
			time.Sleep(100 * time.Millisecond) // the profile starts before the load
			p := attack(tg, conns, 0, s.duration+500*time.Millisecond)
			if err := <-done; err != nil {
				b.Fatalf("CPU profile: %v", err)
			}
			fmt.Printf("(%.0f req/s while profiling; read it with: go tool pprof -top %s)\n", p.rate, path)
		}
	}
	fmt.Printf("\nfinished%s\n\n", loadAverage())
}

// fixture is what the benchmark database holds for the load.
type fixture struct {
	key, serviceID, operationID string
}

// prepareDatabase migrates and seeds the database (the catalog and the demo
// tenant with its sandbox services), puts the demo tenant on a custom plan
// whose hourly and burst limits the load cannot reach and whose concurrency
// cap (256) stays on, adds a completed operation, and issues a sandbox API
// key of the tenant with every permission.
func prepareDatabase(b *testing.B, ctx context.Context, dbURL string) fixture {
	db, err := models.Open(ctx, dbURL, nil)
	if err != nil {
		b.Fatalf("open %s: %v", dbURL, err)
	}
	defer models.Close(db)
	if err := migrate.Run(ctx, db); err != nil {
		b.Fatalf("migrate: %v", err)
	}
	key, _ := hex.DecodeString(secretsKey)
	sealer, err := models.NewSealer(key)
	if err != nil {
		b.Fatal(err)
	}
	store := models.NewStore(db, sealer)
	seeded, err := seed.NewStore(store).Seed(ctx)
	if err != nil {
		b.Fatalf("seed: %v", err)
	}
	demo, err := seed.NewStore(store).SeedDemoData(ctx, seeded)
	if err != nil || len(demo.Services) == 0 {
		b.Fatalf("seed demo data: %v", err)
	}
	if err := db.Model(&models.Organization{}).Where("id = ?", seeded.Demo.ID).Updates(map[string]any{
		"plan": models.PlanCustom, "custom_hourly": 1_000_000_000, "custom_burst": 1_000_000_000, "custom_concurrent": 256,
	}).Error; err != nil {
		b.Fatalf("raise the demo tenant's limits: %v", err)
	}
	scope := models.TenantScope(seeded.Demo.ID, models.EnvTest)
	op := operations.NewOperation(models.NewID(models.PrefixRequest), operations.OpTypeProvisioning, demo.Services[0], "loadbench",
		[]string{"validate", "provision"}, map[string]any{"service_id": demo.Services[0]})
	op.Tenant = models.Tenant{OrganizationID: seeded.Demo.ID, Environment: models.EnvTest}
	op.Status = operations.OpCompleted
	for i := range op.Steps {
		op.Steps[i].Status = operations.StepCompleted
	}
	now := time.Now().UTC()
	op.FinishedAt = &now
	if err := operations.NewStore(store).CreateOperation(ctx, scope, op); err != nil {
		b.Fatalf("create an operation: %v", err)
	}
	secret := "sk_test_" + models.RandomString(56)
	if _, err := identity.NewStore(store).EnsureAPIKey(ctx, seeded.Demo.ID, secret, "load benchmark", models.RoleCustomer, []string{"*"}); err != nil {
		b.Fatalf("issue the API key: %v", err)
	}
	return fixture{key: secret, serviceID: demo.Services[0], operationID: op.ID}
}

// attack drives tg with conns connections (and as many workers) for du, at
// rate requests per second, or as fast as the answers come when rate is 0.
func attack(tg target, conns, rate int, du time.Duration) point {
	header := http.Header{}
	if tg.key != "" {
		header.Set("Authorization", "Bearer "+tg.key)
	}
	targeter := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: tg.url, Header: header})
	atk := attacker(conns)
	pacer := vegeta.ConstantPacer{} // zero: no pacing, each worker sends its next request on the answer
	if rate > 0 {
		pacer = vegeta.ConstantPacer{Freq: rate, Per: time.Second}
	}
	var m vegeta.Metrics
	for r := range atk.Attack(targeter, pacer, du, tg.name) {
		m.Add(r)
	}
	m.Close()
	p := point{rate: m.Throughput, p50: m.Latencies.P50, p99: m.Latencies.P99, requests: m.Requests}
	for code, n := range m.StatusCodes {
		if !strings.HasPrefix(code, "2") {
			p.errors += n
		}
		if code == "429" {
			p.limited += n
		}
	}
	return p
}

// cpuProfile saves a CPU profile of du from the platform's pprof listener.
func cpuProfile(pprofBase string, du time.Duration, path string) error {
	secs := max(1, int(du/time.Second))
	res, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", pprofBase, secs))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// fetch GETs url with key once and returns the body; anything but 200 fails.
func fetch(b *testing.B, url, key string) []byte {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %v %.300s", url, res.StatusCode, err, body)
	}
	return body
}

// freeAddr returns a free loopback host:port.
func freeAddr(b *testing.B) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(b)))
}

// loadAverage returns ", load average X Y Z" from /proc/loadavg (Linux),
// or "" elsewhere: other work on the machine lowers every figure.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return ", load average " + strings.Join(f[:3], " ")
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// metricName shortens a target's name for b.ReportMetric.
func metricName(name string) string {
	switch {
	case strings.Contains(name, "catalog"):
		return "catalog"
	case strings.Contains(name, "services/"):
		return "service"
	case strings.Contains(name, "operations/"):
		return "operation"
	}
	return "floor"
}
