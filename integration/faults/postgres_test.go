//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pgOutage is how long PostgreSQL stays down.
const pgOutage = 8 * time.Second

// TestPostgresRestart stops PostgreSQL (fast shutdown) under a steady
// load of reads, writes and operation starts, for pgOutage, then starts it
// again: during the outage the API answers 503 DEPENDENCY_UNAVAILABLE with
// Retry-After, never 500; afterwards everything recovers without a restart
// of the platform, and every acknowledged write is there.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{postgresOnly: "the test stops and starts the PostgreSQL server"})
	l := &pgLoad{s: s, stop: make(chan struct{})}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); l.run(c) }()
	}
	time.Sleep(2 * time.Second)
	before := l.acked.Load()
	s.pg.stop(30 * time.Second)
	down := time.Now()
	time.Sleep(pgOutage)
	duringOK := l.acked.Load() - before
	s.pg.start()
	up := time.Now()
	// The platform recovers by itself: writes are acknowledged again soon.
	recovered := time.Duration(0)
	afterUp := l.acked.Load()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if l.acked.Load() > afterUp+5 {
			recovered = time.Since(up)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write acknowledged within 30 s of PostgreSQL's restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	close(l.stop)
	wg.Wait()

	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bad) > 0 {
		t.Fatalf("answers outside the contract (%d):\n%s", len(l.bad), strings.Join(l.bad, "\n"))
	}
	if l.unavailable.Load() == 0 {
		t.Fatalf("no 503 DEPENDENCY_UNAVAILABLE seen during a %s outage", pgOutage)
	}
	// Every acknowledged write is there.
	var found int64
	if err := s.db().Table("support_tickets").Where("id IN ?", l.tickets).Count(&found).Error; err != nil {
		t.Fatal(err)
	}
	if found != int64(len(l.tickets)) {
		t.Fatalf("%d of %d acknowledged tickets in the database", found, len(l.tickets))
	}
	ids := make([]string, len(l.ops))
	for i, op := range l.ops {
		ids[i] = op.RequestID
	}
	statuses := s.waitTerminal(ids, 2*time.Minute)
	for id, st := range statuses {
		if st != "completed" {
			t.Fatalf("operation %s acknowledged across the outage ended %s", id, st)
		}
	}
	var services int64
	if err := s.db().Table("services").Where("operation_id IN ?", ids).Count(&services).Error; err != nil {
		t.Fatal(err)
	}
	if services != int64(len(ids)) {
		t.Fatalf("%d services for %d acknowledged operations", services, len(ids))
	}
	t.Logf("PostgreSQL down %s: %d requests, %d answered 503 DEPENDENCY_UNAVAILABLE (Retry-After), %d writes acknowledged while down, "+
		"writes acknowledged again %s after its start; %d tickets and %d operations acknowledged, all found; %d retries answered 409 IDEMPOTENCY_KEY_IN_USE",
		up.Sub(down).Round(time.Millisecond), l.requests.Load(), l.unavailable.Load(), duringOK, recovered.Round(time.Millisecond), len(l.tickets), len(l.ops), l.inUse.Load())
	s.figure("pg_outage_requests", l.requests.Load())
	s.figure("pg_outage_503", l.unavailable.Load())
	s.figure("pg_outage_500", 0)
	s.figure("pg_outage_acked_writes", len(l.tickets)+len(l.ops))
	s.figure("pg_outage_lost_writes", 0)
}

// pgLoad is the steady load of TestPostgresRestart: each client creates a
// ticket (Idempotency-Key, retried with the same key until acknowledged),
// reads it back, and orders a service every few rounds.
type pgLoad struct {
	s           *stack
	stop        chan struct{}
	requests    atomic.Int64
	unavailable atomic.Int64
	inUse       atomic.Int64
	acked       atomic.Int64
	mu          sync.Mutex
	tickets     []string
	ops         []accepted
	bad         []string
}

func (l *pgLoad) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.bad) < 20 {
		l.bad = append(l.bad, fmt.Sprintf(format, args...))
	}
}

// call sends a request until it gets an answer other than the documented
// 503 or 409 IDEMPOTENCY_KEY_IN_USE (retrying, as a client should, after a
// pause); it records any other 5xx as a failure and returns the answer
// (status 0 when stopped).
func (l *pgLoad) call(method, path string, body any, headers map[string]string) answer {
	for {
		l.requests.Add(1)
		a, err := l.s.send(l.s.bases[0], method, path, body, headers)
		switch {
		case err != nil:
			l.fail("%s %s: %v", method, path, err)
			return answer{}
		case a.status == http.StatusServiceUnavailable:
			l.unavailable.Add(1)
			if a.errorCode() != "DEPENDENCY_UNAVAILABLE" || a.header.Get("Retry-After") == "" {
				l.fail("%s %s: undocumented 503 %v %s", method, path, a.header, a.body)
				return answer{}
			}
		case a.status == http.StatusConflict && a.errorCode() == "IDEMPOTENCY_KEY_IN_USE":
			// The first try's claim of the key could not be released while
			// the database was down: it lapses after two minutes.
			l.inUse.Add(1)
		case a.status >= 500:
			l.fail("%s %s: %d %s", method, path, a.status, a.body)
			return answer{}
		default:
			return a
		}
		select {
		case <-l.stop:
			return answer{}
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (l *pgLoad) run(client int) {
	for round := 0; ; round++ {
		select {
		case <-l.stop:
			return
		default:
		}
		idem := fmt.Sprintf("pg-%d-%d", client, round)
		a := l.call("POST", "/v1/support/tickets", map[string]any{"title": "Outage " + idem, "description": "steady load",
			"category": "network", "priority": "low"}, map[string]string{"Idempotency-Key": idem})
		if a.status == http.StatusCreated {
			var tk struct {
				Ticket struct{ ID string } `json:"ticket"`
			}
			if json.Unmarshal(a.body, &tk) != nil || tk.Ticket.ID == "" {
				l.fail("ticket answer %s", a.body)
				return
			}
			l.mu.Lock()
			l.tickets = append(l.tickets, tk.Ticket.ID)
			l.mu.Unlock()
			l.acked.Add(1)
			if r := l.call("GET", "/v1/support/tickets/"+tk.Ticket.ID, nil, nil); r.status != http.StatusOK && r.status != 0 {
				l.fail("GET ticket %s just created: %d %s", tk.Ticket.ID, r.status, r.body)
			}
		} else if a.status != 0 {
			l.fail("POST ticket: %d %s", a.status, a.body)
		}
		if round%5 == 0 {
			a := l.call("POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": "op-" + idem})
			var acc accepted
			if a.status == http.StatusAccepted && json.Unmarshal(a.body, &acc) == nil && acc.RequestID != "" {
				l.mu.Lock()
				l.ops = append(l.ops, acc)
				l.mu.Unlock()
				l.acked.Add(1)
			} else if a.status != 0 {
				l.fail("POST provision: %d %s", a.status, a.body)
			}
		}
		select {
		case <-l.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
