//go:build faults

package faults

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// heldAnswer is an API's answer that the holding proxy has read and not
// yet passed on.
type heldAnswer struct {
	status  int
	body    []byte
	header  http.Header
	release chan bool // true: pass it on; false: drop the connection
}

// holdingProxy sits between the client and an API on loopback: it
// forwards each request, reads the API's whole answer (so the API has
// committed and answered) and holds it until the test decides to pass it
// on or to drop the client's connection without an answer.
type holdingProxy struct {
	srv    *httptest.Server
	target string
	held   chan heldAnswer
}

func newHoldingProxy(t testing.TB, target string) *holdingProxy {
	p := &holdingProxy{target: target, held: make(chan heldAnswer)}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *holdingProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequest(r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	raw, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	h := heldAnswer{status: res.StatusCode, body: raw, header: res.Header, release: make(chan bool)}
	p.held <- h
	if <-h.release {
		for k, v := range h.header {
			w.Header()[k] = v
		}
		w.WriteHeader(h.status)
		_, _ = w.Write(raw)
		return
	}
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close() // the client sees its connection closed, no answer
	}
}

// TestAPIKilledAfterCommit kills the API (SIGKILL) after it committed a
// write and before its answer reached the client: a loopback proxy between
// the client and the API holds the answer while the test finds the write
// in the database and kills the API, then drops the client's connection.
// The client's retry with the same Idempotency-Key, on the API started
// again, gets the first answer; nothing was created twice; and the events
// the writes committed (the outbox) are dispatched and delivered after the
// API's death, none lost.
func TestAPIKilledAfterCommit(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{})
	hooks := newReceiver(t)
	subscribed := time.Now()
	sub := s.subscribe(hooks, "service.*", "ticket.*")
	proxy := newHoldingProxy(t, s.bases[0])

	type write struct {
		name, path, idem, idField string
		body                      map[string]any
		want                      int
	}
	writes := []write{
		{"ticket", "/v1/support/tickets", "kill-api-ticket", "ticket.id",
			map[string]any{"title": "Killed API", "description": "answer lost", "category": "network", "priority": "low"}, http.StatusCreated},
		{"provisioning", "/v1/services/provision", "kill-api-provision", "request_id", sandboxOrder, http.StatusAccepted},
	}
	var opID string
	for _, w := range writes {
		clientErr := make(chan error, 1)
		go func() {
			_, err := s.send(proxy.srv.URL, "POST", w.path, w.body, map[string]string{"Idempotency-Key": w.idem})
			clientErr <- err
		}()
		var h heldAnswer
		select {
		case h = <-proxy.held:
		case <-time.After(time.Minute):
			t.Fatalf("%s: no answer from the API within a minute", w.name)
		}
		if h.status != w.want {
			t.Fatalf("%s: the API answered %d %s", w.name, h.status, h.body)
		}
		first := field(t, h.body, w.idField)
		if !s.committed(w.name, first) {
			t.Fatalf("%s %s: answered but not in the database", w.name, first)
		}
		s.apis[0].Kill()
		h.release <- false
		if err := <-clientErr; err == nil {
			t.Fatalf("%s: the client got an answer through a dropped connection", w.name)
		}
		s.apis[0].Start()
		s.apis[0].WaitReady(time.Minute)

		a, err := s.send(s.bases[0], "POST", w.path, w.body, map[string]string{"Idempotency-Key": w.idem})
		if err != nil || a.status != w.want {
			t.Fatalf("%s: the retry answered %d %s %v", w.name, a.status, a.body, err)
		}
		if again := field(t, a.body, w.idField); again != first {
			t.Fatalf("%s: the retry answered %s, the first answer was %s", w.name, again, first)
		}
		t.Logf("%s: API killed with the answer (%s) in flight; the retry with the same Idempotency-Key replayed it", w.name, first)
		if w.name == "provisioning" {
			opID = first
		}
	}
	var tickets int64
	if err := s.db().Table("support_tickets").Where("title = ?", "Killed API").Count(&tickets).Error; err != nil {
		t.Fatal(err)
	}
	if tickets != 1 {
		t.Fatalf("%d tickets for one request and its retry", tickets)
	}
	if st := s.waitTerminal([]string{opID}, 2*time.Minute)[opID]; st != "completed" {
		t.Fatalf("provisioning %s", st)
	}
	c := s.consistency(0, -1, subscribed)
	deliveries := s.waitDelivered(sub, 2*time.Minute)
	var events int64
	if err := s.db().Table("events").Where("created_at >= ? AND (type LIKE 'service.%' OR type LIKE 'ticket.%')", subscribed).Count(&events).Error; err != nil {
		t.Fatal(err)
	}
	if deliveries["succeeded"] != events || len(deliveries) != 1 {
		t.Fatalf("deliveries by status %v for %d events", deliveries, events)
	}
	seen := map[string]bool{}
	for _, d := range hooks.deliveries() {
		seen[d.eventID] = true
	}
	var ids []string
	if err := s.db().Table("events").Where("created_at >= ? AND (type LIKE 'service.%' OR type LIKE 'ticket.%')", subscribed).Pluck("id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("event %s never reached the receiver", id)
		}
	}
	t.Logf("2 writes answered into a killed API, replayed on retry; %d events (%d service events) committed, all delivered", events, c.events)
	s.figure("api_kill_writes", len(writes))
	s.figure("api_kill_duplicates", 0)
	s.figure("api_kill_events_delivered", events)
}

// field reads a dotted field of a JSON answer.
func field(t testing.TB, raw []byte, path string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	if s == "" {
		t.Fatalf("no %s in %s", path, raw)
	}
	return s
}

// committed reports whether the write (a ticket or an operation) is in the database.
func (s *stack) committed(kind, id string) bool {
	table := "support_tickets"
	if kind == "provisioning" {
		table = "operations"
	}
	var n int64
	if err := s.db().Table(table).Where("id = ?", id).Count(&n).Error; err != nil {
		s.t.Fatal(err)
	}
	return n == 1
}
