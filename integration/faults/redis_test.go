//go:build faults

package faults

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
)

// TestRedisDownFailsOpen stops the API's redis-server: requests keep
// being served (rate limits fail open), each fail-open is counted in
// platform_ratelimit_fail_open_total and logged at most once a minute;
// redis-server started again, the limits apply again without restarting
// the platform.
func TestRedisDownFailsOpen(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{postgresOnly: "the outage is redis-server's, the database takes no part in it: run once, on PostgreSQL, to keep make test-faults short"})
	const burst = 5
	limited := s.newKey(identity.APIKeyInput{Name: "limited", RequestsPerMinute: 1, BurstLimit: burst})

	if got := s.metric(0, "platform_ratelimit_fail_open_total"); got != 0 {
		t.Fatalf("fail-open count %v before the outage", got)
	}
	s.redis.stop(10 * time.Second)
	began := time.Now()
	const n = 60
	for i := range n {
		path := "/v1/services/catalog"
		var body any
		want := http.StatusOK
		if i%10 == 9 { // a write too
			path, want = "/v1/support/tickets", http.StatusCreated
			body = map[string]any{"title": "redis down " + strconv.Itoa(i), "description": "fail open", "category": "network", "priority": "low"}
		}
		method := "GET"
		if body != nil {
			method = "POST"
		}
		a, err := s.send(s.bases[0], method, path, body, nil)
		if err != nil || a.status != want {
			t.Fatalf("%s %s with redis-server down: %d %s %v", method, path, a.status, a.body, err)
		}
	}
	// The limited key is not limited while the counters are unreachable.
	for i := range 3 * burst {
		if a := s.sendAs(limited, "GET", "/v1/services/catalog"); a.status != http.StatusOK {
			t.Fatalf("request %d of the limited key with redis-server down: %d %s", i+1, a.status, a.body)
		}
	}
	outage := time.Since(began)
	failOpen := s.metric(0, "platform_ratelimit_fail_open_total")
	if failOpen < n {
		t.Fatalf("platform_ratelimit_fail_open_total %v after %d requests served without redis-server", failOpen, n)
	}
	logged := s.logCount(s.apis[0].Name(), "rate limits fail open")
	if logged != 1 {
		t.Fatalf("the fail-open was logged %d times in %s; want once a minute", logged, outage.Round(time.Millisecond))
	}

	s.redis.start()
	restarted := time.Now()
	// The limits apply again: within a short while the limited key is refused.
	deadline := time.Now().Add(30 * time.Second)
	admitted := 0
	for {
		a := s.sendAs(limited, "GET", "/v1/services/catalog")
		if a.status == http.StatusTooManyRequests {
			if a.errorCode() != "RATE_LIMIT_EXCEEDED" || a.header.Get("Retry-After") == "" {
				t.Fatalf("429 after the restart: %v %s", a.header, a.body)
			}
			break
		}
		if a.status != http.StatusOK {
			t.Fatalf("after redis-server's restart: %d %s", a.status, a.body)
		}
		admitted++
		if time.Now().After(deadline) {
			t.Fatalf("the limited key still admitted after %d requests, 30 s after redis-server's restart", admitted)
		}
	}
	// Requests sent while the client reconnects still fail open (and are
	// counted); the others spend the key's burst.
	after := s.metric(0, "platform_ratelimit_fail_open_total")
	// The burst bucket gives back one unit every 60 s / burst.
	refill := int(time.Since(restarted)/(time.Minute/burst)) + 1
	if reconnecting := int(after - failOpen); admitted > burst+refill+reconnecting {
		t.Fatalf("%d requests admitted after the restart, %d of them failed open; the burst is %d (+%d refilled)", admitted, reconnecting, burst, refill)
	}
	t.Logf("redis-server down %s: %d requests served, %v fail-opens counted, logged %d time; after its restart the key was refused after %d requests (fail-opens then %v)",
		outage.Round(time.Millisecond), n+3*burst, failOpen, logged, admitted, after)
	s.figure("redis_down_requests_served", n+3*burst)
}

// sendAs sends one request with another key to the first API.
func (s *stack) sendAs(key, method, path string) answer {
	s.t.Helper()
	req, err := http.NewRequest(method, s.bases[0]+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := s.http.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return answer{status: res.StatusCode, body: raw, header: res.Header}
}

// metric reads one unlabelled sample from API i's /metrics (0 when absent).
func (s *stack) metric(i int, name string) float64 {
	s.t.Helper()
	res, err := s.http.Get(s.metrics[i])
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				s.t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// logCount counts the lines of a process's log that contain text.
func (s *stack) logCount(process, text string) int {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.dir, process+".log"))
	if err != nil {
		s.t.Fatal(err)
	}
	return bytes.Count(raw, []byte(text))
}
