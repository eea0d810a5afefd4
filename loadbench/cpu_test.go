package loadbench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of a process's CPU times in /proc/<pid>/stat
// (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTime returns the CPU time (user and system) process pid has used, from
// /proc/<pid>/stat; ok is false where there is none (not Linux, no such
// process).
func cpuTime(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis: state is the
	// first, utime the 12th and stime the 13th (fields 14 and 15 of the
	// whole line).
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * clockTick, true
}

// redisPID finds the redis-server serving on port (its process title names
// its address), or 0.
func redisPID(port string) int { return serverPID("redis-server", port) }

// serverPID finds the process whose command line names program and port
// (as host:port, "--port port" or a last argument ":port"), or 0. The test
// environment starts redis-server and the Temporal dev server without
// handing out their process ids.
func serverPID(program, port string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		line := string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		if strings.Contains(line, program) && (strings.Contains(line, ":"+port+" ") || strings.HasSuffix(strings.TrimSpace(line), ":"+port) ||
			strings.Contains(line, "--port "+port+" ")) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// cpuMeter measures the CPU time processes spend over a run.
type cpuMeter struct {
	pids   []int
	before []time.Duration
}

func startCPU(pids ...int) *cpuMeter {
	m := &cpuMeter{pids: pids, before: make([]time.Duration, len(pids))}
	for i, pid := range pids {
		m.before[i], _ = cpuTime(pid)
	}
	return m
}

// spent returns each process's CPU time since startCPU (0 where unknown).
func (m *cpuMeter) spent() []time.Duration {
	out := make([]time.Duration, len(m.pids))
	for i, pid := range m.pids {
		if now, ok := cpuTime(pid); ok {
			out[i] = now - m.before[i]
		}
	}
	return out
}

// perRequest returns each process's CPU time since startCPU divided by
// requests, formatted in microseconds ("-" where unknown).
func (m *cpuMeter) perRequest(requests uint64) []string {
	out := make([]string, len(m.pids))
	for i, pid := range m.pids {
		now, ok := cpuTime(pid)
		if !ok || requests == 0 || pid <= 0 {
			out[i] = "-"
			continue
		}
		out[i] = strconv.FormatFloat(float64(now-m.before[i])/float64(time.Microsecond)/float64(requests), 'f', 0, 64) + " µs"
	}
	return out
}
