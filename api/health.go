package api

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// HealthOutput is the answer of /healthz.
type HealthOutput struct {
	Body struct {
		Envelope
		Status string `json:"status" example:"ok"`
	}
}

// ReadyOutput is the answer of /readyz: database and Temporal decide readiness;
// Redis is reported and only degrades.
type ReadyOutput struct {
	Status int
	Body   struct {
		Envelope
		Status     string            `json:"status" enum:"ready,degraded,unready"`
		Components map[string]string `json:"components"`
		Metrics    map[string]int64  `json:"metrics"`
	}
}

// drainRetryAfter is the Retry-After (seconds) of a request refused while
// the server shuts down: another instance can take it at once.
const drainRetryAfter = 1

// drainState is where a shutdown stands (see Server.Run and
// docs/rolling-restarts.md). Draining: /readyz answers 503 so that load
// balancers stop sending, every other request is still served, and each
// answer closes its connection so that clients reconnect elsewhere.
// Closing (after SHUTDOWN_DRAIN_DELAY): the listener is closed and requests
// in flight finish; a request that still arrives on an open connection is
// refused with 503 DEPENDENCY_UNAVAILABLE and Retry-After before anything
// is done for it, so it may be retried on another instance. /healthz
// answers 200 throughout: the process is alive until it exits.
type drainState struct {
	draining atomic.Bool
	closing  atomic.Bool
}

// refuseWhileClosing is the middleware of drainState, after the request
// has its id and before authentication (a refused request costs no
// rate-limit units).
func (s *Server) refuseWhileClosing(c *fiber.Ctx) error {
	if !s.drain.draining.Load() {
		return c.Next()
	}
	c.Context().SetConnectionClose()
	if !s.drain.closing.Load() || c.Path() == "/healthz" || c.Path() == "/readyz" {
		// Liveness holds until the process exits; readiness answers its own
		// document (unready) to the end, as /openapi.json describes it.
		return c.Next()
	}
	return models.Errorf(models.CodeDependencyUnavailable, "this API instance is shutting down; retry the request").
		WithDetail("reason", "shutting_down").WithDetail("retry_after", drainRetryAfter)
}

func (s *Server) registerHealth() {
	registerRoot(s, huma.Operation{OperationID: "healthz", Method: http.MethodGet, Path: "/healthz", Summary: "Liveness", Tags: []string{"Health"}},
		access{public: true}, func(ctx context.Context, _ *struct{}) (*HealthOutput, error) {
			out := &HealthOutput{}
			out.Body.Status = "ok"
			return out, nil
		})
	registerRoot(s, huma.Operation{OperationID: "readyz", Method: http.MethodGet, Path: "/readyz", Summary: "Readiness",
		Tags: []string{"Health"}, Responses: map[string]*huma.Response{"503": {Description: "Not ready: the same document, status unready"}},
		Metadata: map[string]any{outputOnStatusKey: []string{"503"}}},
		access{public: true}, s.ready)
}

func (s *Server) ready(ctx context.Context, _ *struct{}) (*ReadyOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out := &ReadyOutput{Status: http.StatusOK}
	if s.drain.draining.Load() {
		// Shutting down: no longer a target, whatever the dependencies say.
		out.Status, out.Body.Status = http.StatusServiceUnavailable, "unready"
		out.Body.Components = map[string]string{"server": "draining"}
		out.Body.Metrics = map[string]int64{"rate_limit_fail_open_total": s.limits.failOpen.Load()}
		return out, nil
	}
	comps := map[string]string{}
	ready, degraded := true, false
	if err := models.Ping(ctx, s.store.DB); err != nil {
		comps["database"], ready = "unavailable", false
		s.log.Warn("readiness: database unavailable", "error", err)
	} else {
		comps["database"] = "ok"
	}
	switch {
	case s.temporal == nil:
		comps["temporal"], ready = "not configured", false
	default:
		if _, err := s.temporal.CheckHealth(ctx, nil); err != nil {
			comps["temporal"], ready = "unavailable", false
			s.log.Warn("readiness: temporal unavailable", "error", err)
		} else {
			comps["temporal"] = "ok"
		}
	}
	switch {
	case s.redis == nil:
		comps["redis"], degraded = "not configured", true
	default:
		if err := s.redis.Ping(ctx).Err(); err != nil {
			comps["redis"], degraded = "degraded", true
		} else {
			comps["redis"] = "ok"
		}
	}
	out.Body.Components = comps
	out.Body.Metrics = map[string]int64{"rate_limit_fail_open_total": s.limits.failOpen.Load()}
	switch {
	case !ready:
		out.Status, out.Body.Status = http.StatusServiceUnavailable, "unready"
	case degraded:
		out.Body.Status = "degraded"
	default:
		out.Body.Status = "ready"
	}
	return out, nil
}
