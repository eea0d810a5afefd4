package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
)

// Helpers shared by the tests that follow events to real webhook receivers:
// the outbox dispatcher loop as the worker process runs it, and a loopback
// receiver that verifies every request with the Standard Webhooks library.

// Short retries and a short attempt timeout keep the test quick; the real
// schedule is covered by the workflow tests with time skipping.
var (
	testRetryDelays    = []time.Duration{time.Second, time.Second, time.Second, time.Second}
	testAttemptTimeout = 2 * time.Second
)

// startDispatcher runs the outbox dispatcher loop until the test ends, as
// the worker process does: it starts the delivery workflows on opts's task
// queue and hands every event to the event triggers of orchestrations
// (activities.OrchestrationEventHook, unless opts sets OnEvent). A zero
// PollInterval means 100 ms.
func startDispatcher(t testing.TB, store *models.Store, tc client.Client, opts events.Options) *events.Dispatcher {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	if opts.OnEvent == nil {
		opts.OnEvent = activities.OrchestrationEventHook(tc, store)
	}
	d := events.NewDispatcher(store, tc, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

// delivery is one request a receiver accepted after verifying it.
type delivery struct {
	ID      string // webhook-id
	Event   string
	Payload map[string]any
	Sigs    int // signatures in webhook-signature
}

// hookReceiver is a real HTTP server on loopback that verifies every request
// with the Standard Webhooks Go library against each of its secrets.
type hookReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	secrets []string
	got     []delivery
	invalid []string
	calls   map[string]int // per event type
	// respond decides the answer to the nth request (from 1) of an event
	// type: a status, or 0 to hang until the sender gives up.
	respond func(event string, n int) int
	closing chan struct{}
}

// newHookReceiver starts a receiver that answers with respond and accepts
// only requests that verify with every one of secrets (with none, any
// well-formed request), until the test ends.
func newHookReceiver(t testing.TB, respond func(event string, n int) int, secrets ...string) *hookReceiver {
	t.Helper()
	r := &hookReceiver{secrets: secrets, respond: respond, calls: map[string]int{}, closing: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() { close(r.closing); r.srv.Close() })
	return r
}

// setSecrets replaces the secrets requests must verify with.
func (r *hookReceiver) setSecrets(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = secrets
}

// serve verifies and records one request, then answers as respond says.
func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	secrets := append([]string(nil), r.secrets...)
	r.mu.Unlock()
	problem := ""
	if err != nil {
		problem = err.Error()
	}
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err == nil {
			err = wh.Verify(body, req.Header)
		}
		if err != nil && problem == "" {
			problem = "signature: " + err.Error()
		}
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil && problem == "" {
		problem = "body: " + err.Error()
	}
	if problem != "" {
		r.mu.Lock()
		r.invalid = append(r.invalid, problem)
		r.mu.Unlock()
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	event, _ := payload["event"].(string)
	r.mu.Lock()
	r.calls[event]++
	n := r.calls[event]
	r.mu.Unlock()
	status := r.respond(event, n)
	if status == 0 {
		select { // hang: the sender's timeout ends the attempt
		case <-req.Context().Done():
		case <-r.closing:
		}
		return
	}
	if status >= 200 && status < 300 {
		r.mu.Lock()
		r.got = append(r.got, delivery{ID: req.Header.Get("webhook-id"), Event: event, Payload: payload,
			Sigs: len(strings.Fields(req.Header.Get("webhook-signature")))})
		r.mu.Unlock()
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, http.StatusText(status))
}

// received returns the accepted deliveries of an event type.
func (r *hookReceiver) received(event string) []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []delivery
	for _, d := range r.got {
		if d.Event == event {
			out = append(out, d)
		}
	}
	return out
}

// total counts every request received, verified or not.
func (r *hookReceiver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got) + len(r.invalid)
}

// checkValid fails the test if any request failed verification.
func (r *hookReceiver) checkValid(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.invalid) > 0 {
		t.Fatalf("requests that failed verification: %v", r.invalid)
	}
}

// alwaysOK answers every request 200.
func alwaysOK(string, int) int { return http.StatusOK }

// serviceDeliveries returns, for the accepted deliveries of an event type,
// the webhook-ids (event ids) received for each data.service.id, checking
// that each delivery's body names the same event as its webhook-id header.
func (r *hookReceiver) serviceDeliveries(t testing.TB, event string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, d := range r.received(event) {
		data, _ := d.Payload["data"].(map[string]any)
		svc, _ := data["service"].(map[string]any)
		id, _ := svc["id"].(string)
		if id == "" || d.Payload["id"] != d.ID {
			t.Fatalf("%s delivery %s: body %v", event, d.ID, d.Payload)
		}
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][d.ID] = true
	}
	return out
}

// hasServiceEvents reports whether every service of ids has received (at
// least) one event of type event.
func (r *hookReceiver) hasServiceEvents(t testing.TB, event string, ids []string) bool {
	t.Helper()
	got := r.serviceDeliveries(t, event)
	for _, id := range ids {
		if len(got[id]) == 0 {
			return false
		}
	}
	return true
}

// subscribe creates a subscription through path and returns its id.
func (p *platform) subscribe(path, key string, body map[string]any) string {
	p.t.Helper()
	var out struct {
		Webhook struct{ ID string } `json:"webhook"`
	}
	if status := p.do("POST", path, key, body, &out); status != http.StatusCreated {
		p.t.Fatalf("subscribe through %s: %d", path, status)
	}
	return out.Webhook.ID
}
