package testenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildPlatform builds cmd/platform from this tree into dir and returns
// the binary's path.
func BuildPlatform(t testing.TB, dir string) string {
	t.Helper()
	exe := filepath.Join(dir, "platform")
	build := exec.Command("go", "build", "-o", exe, "github.com/telcoplatform/platform/cmd/platform")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the platform: %v\n%s", err, out)
	}
	return exe
}

// Process is one process of the built platform binary (`platform serve` or
// `platform worker`) that a test starts, stops, kills and starts again.
// Every run appends its output to one log file, whose tail is logged when
// the test fails; the process still running when the test ends is stopped
// (SIGTERM, then SIGKILL after 20 s).
type Process struct {
	t       testing.TB
	name    string   // for logs: api-a, worker-1...
	exe     string   // the platform binary
	command string   // serve, worker
	env     []string // the whole environment
	dir     string   // working directory
	logPath string
	ready   string // a URL answering 200 once the process is ready

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current run has exited
	runs int
}

// NewProcess returns the process, not started; ready is its readiness URL.
func NewProcess(t testing.TB, name, exe, command, dir, ready string, env []string) *Process {
	p := &Process{t: t, name: name, exe: exe, command: command, env: env, dir: dir, ready: ready,
		logPath: filepath.Join(dir, name+".log")}
	t.Cleanup(func() {
		p.mu.Lock()
		cmd, done := p.cmd, p.done
		p.mu.Unlock()
		if cmd != nil {
			select {
			case <-done:
			default:
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					_ = cmd.Process.Kill()
					<-done
				}
			}
		}
		if t.Failed() {
			raw, _ := os.ReadFile(p.logPath)
			t.Logf("platform %s (%s) log (tail):\n%s", command, name, Tail(raw, 6000))
		}
	})
	return p
}

// Start starts a new run of the process (the previous one must have exited).
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	defer logFile.Close() // the child keeps its own descriptor
	fmt.Fprintf(logFile, "=== run %d of platform %s, %s\n", p.runs, p.command, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.exe, p.command)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, logFile, logFile
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
}

// Name is the process's name in logs (api-a, worker-1...).
func (p *Process) Name() string { return p.name }

// Command is the platform command the process runs (serve, worker...).
func (p *Process) Command() string { return p.command }

// Ready is the URL that answers 200 once the process is ready.
func (p *Process) Ready() string { return p.ready }

// PID is the current run's process id.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// WaitReady polls the readiness URL until it answers 200, failing the
// test if the process exits or timeout passes first.
func (p *Process) WaitReady(timeout time.Duration) {
	p.t.Helper()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	client := &http.Client{Timeout: 3 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		if res, err := client.Get(p.ready); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			p.t.Fatalf("%s exited before it was ready", p.name)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s not ready at %s within %s", p.name, p.ready, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Terminate sends SIGTERM.
func (p *Process) Terminate() {
	p.t.Helper()
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("SIGTERM %s: %v", p.name, err)
	}
}

// Wait waits for the current run to exit and returns its exit status,
// failing the test after timeout.
func (p *Process) Wait(timeout time.Duration) int {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	select {
	case <-done:
	case <-time.After(timeout):
		p.t.Fatalf("%s still running after %s", p.name, timeout)
	}
	return cmd.ProcessState.ExitCode()
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if err := cmd.Process.Kill(); err != nil {
		p.t.Fatalf("SIGKILL %s: %v", p.name, err)
	}
	<-done
}

// Tail returns the last n bytes of raw (a log), as text.
func Tail(raw []byte, n int) string {
	if len(raw) > n {
		raw = raw[len(raw)-n:]
	}
	return string(raw)
}
