package loadbench

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/testenv"
)

// floorEnv, when set to a or b, makes this test binary serve that floor on
// floorAddrEnv instead of running tests: the benchmark starts it so, as a
// process of its own, the way the platform runs (and the way wrk measured
// the floors the performance goals were set against).
const (
	floorEnv     = "LOAD_BENCH_FLOOR"
	floorAddrEnv = "LOAD_BENCH_FLOOR_ADDR"
	floorKeyEnv  = "LOAD_BENCH_FLOOR_KEY"  // floor (b): the one API key it knows
	floorBodyEnv = "LOAD_BENCH_FLOOR_BODY" // floor (b): a file holding the bytes it answers
	floorRedis   = "LOAD_BENCH_FLOOR_REDIS_URL"
)

// TestMain runs the tests and benchmarks, or serves a floor (floorEnv).
func TestMain(m *testing.M) {
	if which := os.Getenv(floorEnv); which != "" {
		if err := serveFloor(which); err != nil {
			fmt.Fprintln(os.Stderr, "floor "+which+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveFloor serves floor which (a or b) on floorAddrEnv until SIGTERM or
// SIGINT, with /healthz for readiness.
func serveFloor(which string) error {
	var app *fiber.App
	switch which {
	case "a":
		app = floorA()
	case "b":
		body, err := os.ReadFile(os.Getenv(floorBodyEnv))
		if err != nil {
			return err
		}
		opts, err := redis.ParseURL(os.Getenv(floorRedis))
		if err != nil {
			return err
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		app = floorB(rdb, os.Getenv(floorKeyEnv), body)
	default:
		return fmt.Errorf("%s=%q: want a or b", floorEnv, which)
	}
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; _ = app.ShutdownWithTimeout(5 * time.Second) }()
	return app.Listen(os.Getenv(floorAddrEnv))
}

// startFloorProcess starts floor which (a or b) as a process of its own (this
// test binary again, see TestMain) and returns its base URL and process id;
// env adds the floor's settings.
func startFloorProcess(b *testing.B, which string, env ...string) (string, int) {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	addr := freeAddr(b)
	p := testenv.NewProcess(b, "floor-"+which, exe, "-test.run=^$", dir, "http://"+addr+"/healthz",
		append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, floorEnv + "=" + which, floorAddrEnv + "=" + addr}, env...))
	p.Start()
	p.WaitReady(30 * time.Second)
	return "http://" + addr, p.PID()
}

// startFloorBProcess starts floor (b) in a process of its own, answering
// body to key; see startFloorProcess.
func startFloorBProcess(b *testing.B, redisURL, key string, body []byte) (string, int) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "body.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		b.Fatal(err)
	}
	return startFloorProcess(b, "b", floorRedis+"="+redisURL, floorKeyEnv+"="+key, floorBodyEnv+"="+path)
}

// floorA is floor (a): a bare Fiber app answering a small JSON.
func floorA() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/json", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"status": "ok"})
	})
	return app
}

// floorB is floor (b): what an authenticated, rate-limited GET cannot
// avoid. It hashes the bearer key (SHA-256), finds it in a map, runs one
// GCRA check on Redis through go-redis/redis_rate (a limit the load cannot
// reach) and writes the catalog's bytes, computed beforehand.
func floorB(rdb *redis.Client, key string, body []byte) *fiber.App {
	keys := map[[32]byte]string{sha256.Sum256([]byte(key)): "key_loadbench"}
	limiter := redis_rate.NewLimiter(rdb)
	limit := redis_rate.Limit{Rate: 1_000_000_000, Burst: 1_000_000_000, Period: time.Hour}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/v1/services/catalog", func(c *fiber.Ctx) error {
		bearer, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		if !ok {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		id, ok := keys[sha256.Sum256([]byte(bearer))]
		if !ok {
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		res, err := limiter.Allow(c.UserContext(), "floor:"+id, limit)
		if err != nil {
			return c.SendStatus(fiber.StatusServiceUnavailable)
		}
		if res.Allowed == 0 {
			return c.SendStatus(fiber.StatusTooManyRequests)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
	return app
}

// serveFiber serves app in this process on a loopback port until b ends and
// returns its base URL.
func serveFiber(b *testing.B, app *fiber.App) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	b.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}
