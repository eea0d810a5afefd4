//go:build faults

package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// daemon is one external server the tests stop and start again on the
// same port and the same state: PostgreSQL, redis-server or the Temporal
// dev server. Every run appends to one log file.
type daemon struct {
	t       testing.TB
	name    string
	argv    []string
	dir     string
	logPath string
	cred    *syscall.Credential // run as this user (PostgreSQL refuses root)
	ready   func() error        // nil once the server answers
	stopSig syscall.Signal      // the graceful stop signal

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// newDaemon returns the server, not started; it is stopped (SIGKILL after
// its graceful signal and 20 s) when the test ends.
func newDaemon(t testing.TB, name, dir string, stopSig syscall.Signal, ready func() error, argv ...string) *daemon {
	d := &daemon{t: t, name: name, argv: argv, dir: dir, logPath: filepath.Join(dir, name+".log"), ready: ready, stopSig: stopSig}
	t.Cleanup(func() {
		d.stop(20 * time.Second)
		if t.Failed() {
			raw, _ := os.ReadFile(d.logPath)
			t.Logf("%s log (tail):\n%s", name, testenv.Tail(raw, 4000))
		}
	})
	return d
}

// start starts the server and waits until ready answers (60 s at most).
func (d *daemon) start() {
	d.t.Helper()
	d.mu.Lock()
	logFile, err := os.OpenFile(d.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		d.mu.Unlock()
		d.t.Fatal(err)
	}
	cmd := exec.Command(d.argv[0], d.argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = d.dir, logFile, logFile
	if d.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: d.cred}
	}
	err = cmd.Start()
	_ = logFile.Close()
	if err != nil {
		d.mu.Unlock()
		d.t.Fatalf("start %s: %v", d.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()

	deadline := time.Now().Add(time.Minute)
	for {
		err := d.ready()
		if err == nil {
			return
		}
		select {
		case <-done:
			raw, _ := os.ReadFile(d.logPath)
			d.t.Fatalf("%s exited before it was ready: %v\n%s", d.name, err, testenv.Tail(raw, 3000))
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s not ready within a minute: %v", d.name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends the graceful signal and waits for the exit, killing the
// server after timeout. It does nothing when the server is not running.
func (d *daemon) stop(timeout time.Duration) {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(d.stopSig)
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// privateDir returns a new folder for a server's data, removed when the
// test ends. It is outside t.TempDir() (whose parents are private to root)
// so that the postgres account can reach it.
func privateDir(t testing.TB, pattern string) string {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pgBinDir finds the PostgreSQL server binaries (as scripts/with-postgres.sh does).
func pgBinDir() string {
	candidates := []string{os.Getenv("PG_BINDIR"), "/usr/lib/postgresql/15/bin"}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, string(trimSpace(out)))
	}
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir
		}
	}
	return ""
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// startPostgres starts a PostgreSQL server private to the test (initdb in
// a fresh folder, the server on a free loopback port) and returns it and
// the URL of its postgres database. It runs as the postgres account when
// the test runs as root.
func startPostgres(t testing.TB) (*daemon, string) {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		t.Fatal("PostgreSQL server binaries (initdb) not found; set PG_BINDIR")
	}
	dir := privateDir(t, "faults-pg-")
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root without a postgres account: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	if cred != nil {
		initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := testenv.FreePort(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	ready := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}
	// SIGINT is PostgreSQL's fast shutdown: connections are ended, what was
	// committed stays.
	d := newDaemon(t, "postgres", dir, syscall.SIGINT, ready, filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300")
	d.cred = cred
	d.start()
	return d, url
}

// startRedis starts a redis-server private to the test on a free loopback
// port and returns it and its URL.
func startRedis(t testing.TB) (*daemon, string) {
	t.Helper()
	exe, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found on PATH")
	}
	dir := t.TempDir()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	_, port, _ := net.SplitHostPort(addr)
	ready := func() error {
		rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return rdb.Ping(ctx).Err()
	}
	d := newDaemon(t, "redis", dir, syscall.SIGTERM, ready, exe, "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir)
	d.start()
	return d, "redis://" + addr + "/0"
}

// startTemporal starts a Temporal dev server private to the test from
// bin/temporal and returns it and its frontend address. With persistent,
// it keeps its state in a SQLite file so that it can be stopped and
// started again on the same port with the same workflows; otherwise in
// memory (much faster under many workflows).
func startTemporal(t testing.TB, persistent bool) (*daemon, string) {
	t.Helper()
	exe, err := filepath.Abs(filepath.Join("..", "..", "bin", "temporal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatal("bin/temporal not found: run scripts/install-temporal.sh (make temporal)")
	}
	dir := t.TempDir()
	port := testenv.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{exe, "server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(testenv.FreePort(t)), "--metrics-port", strconv.Itoa(testenv.FreePort(t)),
		"--headless", "--namespace", "default", "--log-level", "error"}
	if persistent {
		args = append(args, "--db-filename", filepath.Join(dir, "temporal.db"))
	}
	args = append(args, workflows.DevServerArgs()...)
	ready := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		c, err := client.DialContext(ctx, client.Options{HostPort: addr, Namespace: "default", Logger: quietLogger{}})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		if err != nil {
			return err
		}
		_, err = c.WorkflowService().DescribeNamespace(ctx, describeDefault())
		return err
	}
	d := newDaemon(t, "temporal", dir, syscall.SIGTERM, ready, args...)
	d.start()
	return d, addr
}

// describeDefault asks for the default namespace, which the dev server
// registers once it serves.
func describeDefault() *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: "default"}
}

// quietLogger drops the Temporal SDK's log lines of the readiness probes.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
