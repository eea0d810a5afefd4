package worker

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/metrics"
)

// PollerSeenWithin is how recently the Temporal server must have seen a
// poll of this process on a task queue for /readyz to report it "seen".
// A poll is a long poll that the server answers within about a minute,
// after which the worker polls again at once.
const PollerSeenWithin = 3 * time.Minute

// Health answers the worker process's own listener (WORKER_HTTP_ADDR):
// /healthz (the process is up), /readyz (Temporal answers, every expected
// worker has started polling and not stopped, the database answers; and,
// for operators, whether the server saw the process's identity poll each
// task queue lately) and /metrics (the process's registry).
type Health struct {
	temporal client.Client
	identity string
	ping     func(ctx context.Context) error
	metrics  *metrics.Metrics
	mu       sync.Mutex
	expected []string
	polling  map[string]bool
}

// NewHealth returns the health of a worker process whose workers are
// named by taskQueues (each must be marked started before /readyz says
// ready). identity is the process's Temporal identity (the client's, which
// its workers share; temporalclient.Identity), whose polls /readyz looks up
// on the server ("" skips that). ping checks the database (nil: not
// checked).
func NewHealth(tc client.Client, identity string, ping func(ctx context.Context) error, m *metrics.Metrics, taskQueues ...string) *Health {
	return &Health{temporal: tc, identity: identity, ping: ping, metrics: m, expected: slices.Clone(taskQueues), polling: map[string]bool{}}
}

// Started records that the worker of taskQueue started polling.
func (h *Health) Started(taskQueue string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polling[taskQueue] = true
}

// Stopped records that the worker of taskQueue stopped (the process is
// draining: /readyz answers 503 from then on).
func (h *Health) Stopped(taskQueue string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polling[taskQueue] = false
}

// Readiness is the body of /readyz: ready or unready, and each check's
// state (ok or what is wrong; never an error's text).
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// Check runs the readiness checks (each within 3 seconds).
func (h *Health) Check(ctx context.Context) Readiness {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	r := Readiness{Status: "ready", Checks: map[string]string{}}
	fail := func(name, state string) { r.Checks[name], r.Status = state, "unready" }
	if h.temporal == nil {
		fail("temporal", "not configured")
	} else if _, err := h.temporal.CheckHealth(ctx, nil); err != nil {
		fail("temporal", "unavailable")
	} else {
		r.Checks["temporal"] = "ok"
	}
	h.mu.Lock()
	var started []string
	for _, q := range h.expected {
		switch on, seen := h.polling[q]; {
		case on:
			started = append(started, q)
		case seen:
			fail("worker:"+q, "stopped")
		default:
			fail("worker:"+q, "not started")
		}
	}
	h.mu.Unlock()
	for _, q := range started {
		r.Checks["worker:"+q] = "polling"
		// What the server saw, for operators; it does not decide
		// readiness: the legacy description reads one partition of the
		// queue, and a worker's polls may all have gone to others lately.
		if h.identity != "" && h.temporal != nil && r.Checks["temporal"] == "ok" {
			r.Checks["server:"+q] = h.serverSeesPolls(ctx, q)
		}
	}
	if h.ping != nil {
		if err := h.ping(ctx); err != nil {
			fail("database", "unavailable")
		} else {
			r.Checks["database"] = "ok"
		}
	}
	return r
}

// serverSeesPolls asks the server whether it saw this process poll
// taskQueue (workflow or activity tasks) within PollerSeenWithin: "seen",
// "not seen" or "unconfirmed" (the server did not answer).
func (h *Health) serverSeesPolls(ctx context.Context, taskQueue string) string {
	for _, typ := range []enums.TaskQueueType{enums.TASK_QUEUE_TYPE_WORKFLOW, enums.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := h.temporal.DescribeTaskQueue(ctx, taskQueue, typ)
		if err != nil {
			return "unconfirmed"
		}
		for _, p := range resp.GetPollers() {
			if p.GetIdentity() == h.identity && time.Since(p.GetLastAccessTime().AsTime()) < PollerSeenWithin {
				return "seen"
			}
		}
	}
	return "not seen"
}

// Handler serves /healthz, /readyz and /metrics.
func (h *Health) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		res := h.Check(r.Context())
		status := http.StatusOK
		if res.Status != "ready" {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, res)
	})
	mux.Handle("GET /metrics", h.metrics.Handler())
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
