// Package testenv provides real external services (PostgreSQL or SQLite
// databases, Redis servers, Temporal dev servers) for the tests of other
// packages. Every service is private to the calling test and is torn down by
// t.Cleanup.
//
// Environment:
//   - TEST_DATABASE_URL: a PostgreSQL server URL (for example the one exported
//     by scripts/with-postgres.sh). When set, DatabaseURL creates a fresh
//     database on that server; otherwise it returns an SQLite file. Store
//     and SeededStore return a migrated models.Store on such a database.
//   - CI: when "true", a missing redis-server or bin/temporal fails the test
//     instead of skipping it.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// envDatabaseURL is the environment variable holding the URL of a PostgreSQL
// server to create test databases on.
const envDatabaseURL = "TEST_DATABASE_URL"

// IsPostgres reports whether tests run against PostgreSQL, that is whether
// TEST_DATABASE_URL is set. Otherwise DatabaseURL returns SQLite databases.
func IsPostgres() bool {
	return os.Getenv(envDatabaseURL) != ""
}

// DatabaseURL returns the DATABASE_URL of an empty database private to t.
//
// When TEST_DATABASE_URL is set, it creates a uniquely named database
// (test_<random hex>) on that PostgreSQL server, drops it (WITH (FORCE)) when
// t finishes, and returns the server URL with its path replaced by the new
// database. Otherwise it returns "sqlite:<file>" with the file in t.TempDir().
func DatabaseURL(t testing.TB) string {
	t.Helper()
	serverURL := os.Getenv(envDatabaseURL)
	if serverURL == "" {
		return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	}
	return postgresDatabase(t, serverURL, "")
}

// execAdmin runs one statement on a short-lived connection to serverURL.
func execAdmin(ctx context.Context, serverURL, sql string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// RedisURL starts a fresh redis-server process private to t on a free
// loopback port, without persistence and with its working folder in
// t.TempDir(), waits until it answers PING and returns its URL
// ("redis://127.0.0.1:PORT/0"). The server is killed when t finishes.
//
// If redis-server is not on PATH the test is skipped, or fails when the
// environment variable CI is "true".
func RedisURL(t testing.TB) string {
	t.Helper()
	exe, err := exec.LookPath("redis-server")
	if err != nil {
		skipOrFail(t, "testenv: redis-server not found on PATH; install it (Debian: apt-get install redis-server)")
	}

	dir := t.TempDir()
	logPath := filepath.Join(dir, "redis.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	port := FreePort(t)
	cmd := exec.Command(exe,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--dir", dir,
	)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("testenv: redis-server log (tail):\n%s", tail(logPath))
		}
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitRedis(addr, exited, 30*time.Second); err != nil {
		stop()
		t.Fatalf("testenv: redis-server on %s: %v\nlog (tail):\n%s", addr, err, tail(logPath))
	}
	return "redis://" + addr + "/0"
}

// waitRedis pings addr until it answers, the process exits or timeout passes.
func waitRedis(addr string, exited <-chan struct{}, timeout time.Duration) error {
	rdb := redis.NewClient(&redis.Options{
		Addr:         addr,
		DialTimeout:  time.Second,
		ReadTimeout:  time.Second,
		WriteTimeout: time.Second,
		MaxRetries:   -1,
	})
	defer rdb.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("process exited before answering PING")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TemporalAddress starts a Temporal dev server private to t from the
// repository's bin/temporal (see scripts/install-temporal.sh), with an
// in-memory store, no UI and the "default" namespace, and returns its
// frontend host:port. extraArgs are appended to "temporal server start-dev",
// for example "--search-attribute", "OrganizationId=Keyword". The server is
// stopped when t finishes.
//
// If bin/temporal is missing the test is skipped, or fails when the
// environment variable CI is "true".
func TemporalAddress(t testing.TB, extraArgs ...string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	exe := filepath.Join(root, "bin", "temporal")
	if info, err := os.Stat(exe); err != nil || info.IsDir() {
		skipOrFail(t, "testenv: Temporal CLI not found at bin/temporal; run scripts/install-temporal.sh")
	}

	logPath := filepath.Join(t.TempDir(), "temporal.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}

	port := FreePort(t)
	hostPort := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		// An existing path means StartDevServer never downloads anything.
		ExistingPath: exe,
		ClientOptions: &client.Options{
			HostPort:  hostPort,
			Namespace: "default",
			Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(logFile,
				&slog.HandlerOptions{Level: slog.LevelWarn}))),
		},
		EnableUI:  false, // passes --headless
		LogLevel:  "error",
		ExtraArgs: extraArgs,
		// *os.File: the child writes to the file directly, so no pipe to the
		// test binary's output is left behind.
		Stdout: logFile,
		Stderr: logFile,
	})
	if err != nil {
		// StartDevServer does not stop a process it started but could not
		// connect to; find and kill it so that it does not outlive the test.
		killDevServer(exe, port)
		_ = logFile.Close()
		t.Fatalf("testenv: start Temporal dev server on %s: %v\nlog (tail):\n%s", hostPort, err, tail(logPath))
	}
	t.Cleanup(func() {
		srv.Client().Close()
		done := make(chan error, 1)
		go func() { done <- srv.Stop() }()
		select {
		case err := <-done:
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Logf("testenv: stop Temporal dev server: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Logf("testenv: Temporal dev server on %s did not stop within 30s; killing it", hostPort)
			killDevServer(exe, port)
			<-done
		}
		_ = logFile.Close()
		if t.Failed() {
			t.Logf("testenv: Temporal dev server log (tail):\n%s", tail(logPath))
		}
	})
	return srv.FrontendHostPort()
}

// killDevServer kills (best effort, Linux only) the "exe server start-dev"
// processes listening on the given frontend port.
func killDevServer(exe string, port int) {
	if runtime.GOOS != "linux" {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	portArg := strconv.Itoa(port)
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
		if len(args) == 0 || args[0] != exe {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "--port" && args[i+1] == portArg {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
				break
			}
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that is currently free to listen
// on. The kernel will not hand the same port out again to bind(":0") for about
// a minute (the port is left in TIME_WAIT), which keeps parallel tests from
// picking the same port before its server has started.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("testenv: find a free port: %v", err)
	}
	return port
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr := l.Addr().(*net.TCPAddr)
	// Connect to the port and close the connection from the listening side,
	// which leaves the port in TIME_WAIT: Linux then does not reuse it for
	// ephemeral ports, while servers (which set SO_REUSEADDR) can still
	// listen on it.
	c, err := net.DialTCP("tcp", nil, addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		return 0, err
	}
	_ = s.Close()
	return addr.Port, nil
}

// repoRoot walks up from the working directory to the folder holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found in the working directory or its parents")
		}
		dir = parent
	}
}

// skipOrFail skips the test, or fails it when running on CI.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: not skipping)")
	}
	t.Skip(msg)
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return hex.EncodeToString(b)
}

// tail returns the last few KiB of the file at path, for error messages.
func tail(path string) string {
	const maxTail = 8 << 10
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", filepath.Base(path), err)
	}
	if len(b) > maxTail {
		b = b[len(b)-maxTail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "(empty)"
	}
	return string(b)
}
