package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/worker"
)

// fakeTemporal is a client whose CheckHealth answers err (every other
// method is the nil embedded client's, never called).
type fakeTemporal struct {
	client.Client
	err error
}

func (f *fakeTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, f.err
}

func get(t *testing.T, base, path string) (int, string) {
	t.Helper()
	res, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// TestHealthEndpoints serves the worker listener on loopback: /healthz
// always answers; /readyz is 503 until every worker started, while
// Temporal or the database fails, and once a worker stopped; /metrics
// serves the registry.
func TestHealthEndpoints(t *testing.T) {
	tc := &fakeTemporal{}
	var dbErr error
	m := metrics.New()
	m.WebhookAttempt(true, 1)
	h := worker.NewHealth(tc, "", func(context.Context) error { return dbErr }, m, "platform", "platform-background")
	srv, err := metrics.Listen("127.0.0.1:0", nil, h.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	base := "http://" + srv.Addr()

	ready := func(wantStatus int, wantChecks map[string]string) {
		t.Helper()
		status, body := get(t, base, "/readyz")
		var r worker.Readiness
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("readyz body %q", body)
		}
		if status != wantStatus {
			t.Errorf("readyz %d, want %d: %s", status, wantStatus, body)
		}
		for k, v := range wantChecks {
			if r.Checks[k] != v {
				t.Errorf("check %s = %q, want %q (%s)", k, r.Checks[k], v, body)
			}
		}
	}
	if status, body := get(t, base, "/healthz"); status != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("healthz: %d %s", status, body)
	}
	ready(503, map[string]string{"worker:platform": "not started", "temporal": "ok", "database": "ok"})
	h.Started("platform")
	ready(503, map[string]string{"worker:platform": "polling", "worker:platform-background": "not started"})
	h.Started("platform-background")
	ready(200, map[string]string{"worker:platform": "polling", "worker:platform-background": "polling", "temporal": "ok", "database": "ok"})
	tc.err = errors.New("connection refused to secret-host")
	ready(503, map[string]string{"temporal": "unavailable"})
	if _, body := get(t, base, "/readyz"); strings.Contains(body, "secret-host") {
		t.Errorf("readyz shows an error's text: %s", body)
	}
	tc.err, dbErr = nil, errors.New("down")
	ready(503, map[string]string{"database": "unavailable", "temporal": "ok"})
	dbErr = nil
	h.Stopped("platform")
	ready(503, map[string]string{"worker:platform": "stopped"})
	if status, body := get(t, base, "/metrics"); status != 200 || !strings.Contains(body, `platform_webhook_delivery_attempts_total{attempt="1",outcome="success"} 1`) {
		t.Errorf("metrics: %d %.300s", status, body)
	}
	if status, _ := get(t, base, "/other"); status != 404 {
		t.Errorf("/other: %d", status)
	}
}

// TestReadinessAsksTheServer: against a real Temporal server, /readyz
// reports whether the server saw the process's identity poll each task
// queue: "seen" once a started worker polled, "not seen" for an identity
// that never did (which stays ready: the server's answer informs, the
// process's own state decides).
func TestReadinessAsksTheServer(t *testing.T) {
	ctx := context.Background()
	queue := "health-" + strings.ToLower(t.Name())
	identity := "4242@health-test@platform-worker"
	tc, err := client.Dial(client.Options{HostPort: testenv.TemporalAddress(t), Identity: identity})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	w := sdkworker.New(tc, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "Noop"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h := worker.NewHealth(tc, identity, nil, metrics.New(), queue)
	h.Started(queue)
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := h.Check(ctx)
		if r.Status == "ready" && r.Checks["worker:"+queue] == "polling" && r.Checks["server:"+queue] == "seen" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never saw the worker poll: %+v", r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	other := worker.NewHealth(tc, "1@elsewhere@platform-worker", nil, metrics.New(), queue)
	other.Started(queue)
	if r := other.Check(ctx); r.Status != "ready" || r.Checks["server:"+queue] != "not seen" {
		t.Fatalf("a process that never polled: %+v", r)
	}
}
