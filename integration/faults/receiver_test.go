//go:build faults

package faults

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/testenv"
)

// receiverSecret signs the deliveries (Standard Webhooks whsec_ form).
const receiverSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// received is one accepted webhook request.
type received struct {
	id       string // webhook-id
	eventID  string // the payload's id
	event    string
	resource string // the payload's data id, when there is one
	at       time.Time
}

// receiver is a webhook receiver on a fixed loopback port that the test
// takes down (its listener closed: connections are refused) and brings up
// again on the same port.
type receiver struct {
	t    testing.TB
	addr string
	mu   sync.Mutex
	srv  *http.Server
	got  []received
}

// newReceiver starts a receiver, up, until the test ends.
func newReceiver(t testing.TB) *receiver {
	r := &receiver{t: t, addr: "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))}
	r.up()
	t.Cleanup(r.down)
	return r
}

// url is the receiver's address.
func (r *receiver) url() string { return "http://" + r.addr + "/hooks" }

// up listens again on the receiver's port.
func (r *receiver) up() {
	r.t.Helper()
	var l net.Listener
	var err error
	for range 50 { // the port may linger a moment after down
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// down closes the listener and every connection.
func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var payload struct {
		ID    string         `json:"id"`
		Event string         `json:"event"`
		Data  map[string]any `json:"data"`
	}
	_ = json.Unmarshal(raw, &payload)
	resource, _ := payload.Data["id"].(string)
	if resource == "" {
		resource, _ = payload.Data["service_id"].(string)
	}
	r.mu.Lock()
	r.got = append(r.got, received{id: req.Header.Get("webhook-id"), eventID: payload.ID, event: payload.Event, resource: resource, at: time.Now()})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// deliveries returns what was received, in order.
func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// subscribe subscribes the receiver to events (patterns of any area) of
// the tenant.
func (s *stack) subscribe(r *receiver, events ...string) string {
	s.t.Helper()
	var out struct {
		Webhook struct{ ID string } `json:"webhook"`
	}
	s.do("POST", "/v1/webhooks", map[string]any{"url": r.url(), "events": events, "secret": receiverSecret}, nil, http.StatusCreated, &out)
	return out.Webhook.ID
}

// waitDelivered waits until no delivery of the subscription is pending,
// failing after timeout, and returns the count of deliveries by status.
func (s *stack) waitDelivered(subscription string, timeout time.Duration) map[string]int64 {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var rows []struct {
			Status string
			N      int64
		}
		if err := s.db().Table("webhook_deliveries").Select("status, count(*) AS n").Where("subscription_id = ?", subscription).
			Group("status").Scan(&rows).Error; err != nil {
			s.t.Fatal(err)
		}
		out := map[string]int64{}
		for _, r := range rows {
			out[r.Status] = r.N
		}
		var undispatched int64
		if err := s.db().Table("events").Where("dispatched_at IS NULL").Count(&undispatched).Error; err != nil {
			s.t.Fatal(err)
		}
		if out["pending"] == 0 && undispatched == 0 {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("deliveries still pending after %s: %v, %d events not dispatched", timeout, out, undispatched)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
