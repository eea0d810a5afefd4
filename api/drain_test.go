package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/testenv"
)

// TestDrainAnswers: while draining, /readyz is 503 (server: draining) and
// other requests are still served, each answer closing its connection;
// once closing, a request is refused with 503 DEPENDENCY_UNAVAILABLE,
// Retry-After and the usual error shape.
func TestDrainAnswers(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	h.do("GET", "/v1/services/catalog", key, nil).decode(http.StatusOK, nil)

	h.srv.StartDrain(false)
	var r readiness
	res := h.do("GET", "/readyz", "", nil).decode(http.StatusServiceUnavailable, &r)
	if r.Status != "unready" || r.Components["server"] != "draining" {
		t.Fatalf("readyz while draining: %s", res.body)
	}
	if status, closes := closesConnection(t, h, "/v1/services/catalog", key); status != http.StatusOK || !closes {
		t.Fatalf("an answer while draining: %d, closes its connection: %v", status, closes)
	}

	h.srv.StartDrain(true)
	res = h.do("POST", "/v1/support/tickets", key, map[string]any{"title": "t", "description": "d", "category": "network", "priority": "low"})
	e := res.wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	if res.header.Get("Retry-After") != "1" || e.Error.Details["reason"] != "shutting_down" ||
		res.header.Get("X-Request-Id") != e.Error.RequestID {
		t.Fatalf("refusal while closing: %v %s", res.header, res.body)
	}
	if status, closes := closesConnection(t, h, "/v1/services/catalog", key); status != http.StatusServiceUnavailable || !closes {
		t.Fatalf("a refusal while closing: %d, closes its connection: %v", status, closes)
	}
	// Liveness holds until the process exits.
	if res := h.do("GET", "/healthz", "", nil); res.status != http.StatusOK {
		t.Fatalf("/healthz while closing: %d %s", res.status, res.body)
	}
}

// closesConnection GETs path and reports the status and whether the answer
// closes the connection (Connection: close, which the client's reader
// takes out of the headers).
func closesConnection(t *testing.T, h *harness, path, key string) (int, bool) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := h.srv.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode, res.Close
}

// TestRunDrainsBeforeClosing: after its context ends, Run keeps serving
// for SHUTDOWN_DRAIN_DELAY with /readyz 503, then closes its listener and
// returns.
func TestRunDrainsBeforeClosing(t *testing.T) {
	h := newHarness(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"HTTP_ADDR": addr, "SHUTDOWN_DRAIN_DELAY": "3s", "SHUTDOWN_TIMEOUT": "5s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Deps{Config: cfg, Store: h.store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, error) {
		res, err := client.Get("http://" + addr + path)
		if err != nil {
			return 0, err
		}
		_ = res.Body.Close()
		return res.StatusCode, nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if status, err := get("/healthz"); err == nil && status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}

	cancel()
	stopped := time.Now()
	for { // the drain begins at once
		status, err := get("/readyz")
		if err != nil {
			t.Fatalf("/readyz while draining: %v", err)
		}
		if status == http.StatusServiceUnavailable {
			break
		}
		if time.Since(stopped) > 2500*time.Millisecond { // well inside the drain delay
			t.Fatalf("/readyz still %d after the shutdown began", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, err := get("/healthz"); err != nil || status != http.StatusOK {
		t.Fatalf("/healthz while draining: %d %v", status, err)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v %s after the shutdown began, before the drain delay", err, time.Since(stopped))
	case <-time.After(time.Until(stopped.Add(time.Second))):
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the drain delay")
	}
	if took := time.Since(stopped); took < 3*time.Second {
		t.Fatalf("Run returned %s after the shutdown began, before the drain delay", took)
	}
	if _, err := get("/healthz"); err == nil {
		t.Fatal("the listener is still open after Run returned")
	}
}

// TestRunEndsStreamsAtShutdown: when Run shuts down, an open real-time
// stream ends at once with its reason: Server-Sent Events a last `error`
// event (SERVICE_MAINTENANCE, details.reason "shutdown"), WebSocket the
// close code 1001; Run returns without waiting for SHUTDOWN_TIMEOUT.
func TestRunEndsStreamsAtShutdown(t *testing.T) {
	h := newHarness(t)
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"HTTP_ADDR": addr, "SHUTDOWN_DRAIN_DELAY": "0s", "SHUTDOWN_TIMEOUT": "20s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Deps{Config: cfg, Store: h.store})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	base := "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		if res, err := http.Get(base + "/healthz"); err == nil {
			_ = res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	key := h.tenants[0].liveKey
	res, events := sseStream(t, base, "/v1/stream", key)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	conn, wres, err := websocket.DefaultDialer.Dial("ws://"+addr+"/v1/stream", http.Header{"Authorization": {"Bearer " + key}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, wres)
	}
	defer conn.Close()
	time.Sleep(100 * time.Millisecond) // both streams are open

	cancel()
	stopped := time.Now()
	var last sseEvent
	for open, limit := true, time.After(10*time.Second); open; {
		select {
		case ev, ok := <-events:
			if open = ok; ok {
				last = ev
			}
		case <-limit:
			t.Fatal("the SSE stream is still open 10 s after the shutdown began")
		}
	}
	var body struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(last.data), &body); err != nil || last.name != "error" ||
		body.Error.Code != "SERVICE_MAINTENANCE" || body.Error.Details["reason"] != "shutdown" {
		t.Fatalf("the SSE stream's last event: %+v", last)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, raw, err := conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || !strings.Contains(ce.Text, "shutdown") {
		t.Fatalf("the WebSocket stream's end: %v %s", err, raw)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if took := time.Since(stopped); took > 5*time.Second {
		t.Fatalf("Run returned %s after the shutdown began: it waited for the streams", took)
	}
}
