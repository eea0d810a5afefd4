package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

func fetch(url string) (int, string) {
	res, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// TestDevServesMetricsAndWorkerHealth runs `platform dev` on a Temporal dev
// server with METRICS_ADDR and WORKER_HTTP_ADDR on loopback: the worker's
// listener answers /healthz, then /readyz once the workers poll, and
// /metrics with the SDK's and the outbox's families; the API's metrics
// listener counts an API request; the API's own port serves no /metrics.
// With both variables on one address, that one listener serves all of it.
func TestDevServesMetricsAndWorkerHealth(t *testing.T) {
	temporal := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	t.Run("two listeners", func(t *testing.T) {
		devObservability(t, temporal, fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)))
	})
	t.Run("one listener", func(t *testing.T) {
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
		devObservability(t, temporal, addr, addr)
	})
}

func devObservability(t *testing.T, temporal, metricsAddr, workerAddr string) {
	api := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	env := envFor(t, map[string]string{"HTTP_ADDR": api, "PUBLIC_BASE_URL": "http://" + api, "TEMPORAL_ADDRESS": temporal,
		"TEMPORAL_TASK_QUEUE": "metrics-" + models.RandomString(8), "METRICS_ADDR": metricsAddr, "WORKER_HTTP_ADDR": workerAddr,
		"SHUTDOWN_TIMEOUT": "2s", "BLOB_URL": "file://" + t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"dev"}, env, &bytes.Buffer{}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("dev did not stop")
		}
	})

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if ok() {
				return
			}
		}
		t.Fatalf("never: %s", what)
	}
	waitFor("/healthz", func() bool { s, _ := fetch("http://" + workerAddr + "/healthz"); return s == 200 })
	waitFor("/readyz", func() bool { s, _ := fetch("http://" + workerAddr + "/readyz"); return s == 200 })
	_, ready := fetch("http://" + workerAddr + "/readyz")
	for _, want := range []string{`"temporal":"ok"`, `"database":"ok"`, `"polling"`} {
		if !strings.Contains(ready, want) {
			t.Errorf("/readyz %s lacks %s", ready, want)
		}
	}
	waitFor("the API", func() bool { s, _ := fetch("http://" + api + "/healthz"); return s == 200 })
	if s, _ := fetch("http://" + api + "/metrics"); s != 404 {
		t.Errorf("the API's port answers /metrics with %d", s)
	}
	_, worker := fetch("http://" + workerAddr + "/metrics")
	for _, want := range []string{"temporal_request_total{", "platform_outbox_lag_seconds ", `go_sql_open_connections{db_name="platform"}`, "process_start_time_seconds "} {
		if !strings.Contains(worker, want) {
			t.Errorf("the worker's /metrics lacks %s", want)
		}
	}
	_, apiMetrics := fetch("http://" + metricsAddr + "/metrics")
	if !strings.Contains(apiMetrics, `platform_http_requests_total{method="GET",route="/healthz",status="200"}`) {
		t.Errorf("the API's /metrics lacks the /healthz request:\n%.2000s", apiMetrics)
	}
}
