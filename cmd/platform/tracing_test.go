package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/testenv"
)

// TestServeExportsTraces runs `platform serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT on a loopback OTLP receiver: an API answer
// carries traceparent, and on shutdown the process flushes its spans (the
// request's, under the service name platform-api, and its SQL
// statements') to <endpoint>/v1/traces.
func TestServeExportsTraces(t *testing.T) {
	var mu sync.Mutex
	var exported bytes.Buffer
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/v1/traces" {
			mu.Lock()
			exported.Write(raw)
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)

	port := testenv.FreePort(t)
	env := envFor(t, map[string]string{"HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "TEMPORAL_ADDRESS": "127.0.0.1:1", "SHUTDOWN_TIMEOUT": "5s",
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, env, &bytes.Buffer{}) }()

	var traceparent string
	for deadline := time.Now().Add(20 * time.Second); traceparent == "" && time.Now().Before(deadline); {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/v1/organizations", port), nil)
		req.Header.Set("Authorization", "Bearer sk_live_"+strings.Repeat("A", 56))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		traceparent = res.Header.Get("Traceparent")
		if traceparent == "" {
			t.Fatal("no traceparent with tracing on")
		}
	}
	if traceparent == "" {
		t.Fatal("serve never answered")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	mu.Lock()
	defer mu.Unlock()
	traceID, err := hex.DecodeString(strings.Split(traceparent, "-")[1])
	if err != nil {
		t.Fatalf("traceparent %q", traceparent)
	}
	for _, want := range []string{"platform-api", "GET /v1/organizations", "gorm.io/plugin/opentelemetry", string(traceID)} {
		if !bytes.Contains(exported.Bytes(), []byte(want)) {
			t.Errorf("the exported spans (%d bytes) lack %q", exported.Len(), want)
		}
	}
}
