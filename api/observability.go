package api

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/ratelimit"
)

// unmatchedRoute is the route label of requests no route matched (their
// raw paths would make a label per path).
const unmatchedRoute = "(unmatched)"

// observe is the outermost middleware: it answers the chain's error itself
// (through the error handler, so the status is final), then writes the
// request's one access-log line and counts it in the HTTP metrics, both
// under the route template (never the raw path).
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	if s.runNext(c) != nil {
		_ = c.SendStatus(fiber.StatusInternalServerError)
	}
	elapsed := time.Since(start)
	route := s.routeTemplate(c)
	status := c.Response().StatusCode()
	method := strings.Clone(c.Method())
	s.metrics.ObserveHTTP(route, method, status, elapsed)
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	s.log.LogAttrs(c.UserContext(), level, "request",
		slog.String("method", method), slog.String("route", route), slog.Int("status", status),
		slog.Float64("latency_ms", float64(elapsed.Microseconds())/1000), slog.Int("bytes", bodySize(c)))
	return nil
}

// bodySize is the answer's body length; -1 for a streamed body (an event
// stream), whose length is unknown when the handler returns (reading it
// here would wait for the stream's end).
func bodySize(c *fiber.Ctx) int {
	if c.Response().IsBodyStream() {
		return -1
	}
	return len(c.Response().Body())
}

// routeTemplate is the template of the route that answered (e.g.
// /v1/services/:service_id). A request refused by a middleware (401, 429,
// 413: only the middleware, registered at /, ran) gets the template of
// the route it was meant for, or unmatchedRoute when none matches. Route
// templates are the registered strings, not views of request buffers.
func (s *Server) routeTemplate(c *fiber.Ctx) string {
	r := c.Route()
	if r != nil && r.Path != "" && (r.Path != "/" || c.Path() == "/") {
		return r.Path
	}
	return s.routes.match(s.App, c.Method(), c.Path())
}

// routeIndex is the app's route templates by method, split into segments,
// in registration order (built on first use, once every route exists).
type routeIndex struct {
	once     sync.Once
	byMethod map[string][]routePattern
}

type routePattern struct {
	path     string
	segments []string
}

// match returns the first template of method that path matches (the
// route Fiber would pick), or unmatchedRoute.
func (ri *routeIndex) match(app *fiber.App, method, path string) string {
	ri.once.Do(func() {
		ri.byMethod = map[string][]routePattern{}
		for _, r := range app.GetRoutes(true) {
			ri.byMethod[r.Method] = append(ri.byMethod[r.Method], routePattern{path: r.Path, segments: strings.Split(strings.Trim(r.Path, "/"), "/")})
		}
	})
	xs := strings.Split(strings.Trim(path, "/"), "/")
	for _, p := range ri.byMethod[method] {
		if len(p.segments) != len(xs) {
			continue
		}
		ok := true
		for i, seg := range p.segments {
			if !strings.HasPrefix(seg, ":") && seg != xs[i] {
				ok = false
				break
			}
		}
		if ok {
			return p.path
		}
	}
	return unmatchedRoute
}

// countRateLimit records the limiter's decision on a request (nothing when
// the limiter failed: the fail-open counter, registered in New, counts
// those).
func (s *Server) countRateLimit(res ratelimit.Result, err error) {
	if err != nil {
		return
	}
	bucket := res.RejectedBy
	if res.Allowed {
		bucket = res.LimitBucket
	}
	if bucket == "" {
		bucket = "none"
	}
	s.metrics.RateLimitDecision(string(bucket), res.Allowed)
}

// LogAttrs is the logging.Extractor of API requests: request_id, and the
// organization, environment and principal id of an authenticated caller.
// It never returns a credential itself.
func LogAttrs(ctx context.Context) []slog.Attr {
	var out []slog.Attr
	if id := RequestID(ctx); id != "" {
		out = append(out, slog.String("request_id", id))
	}
	if p := models.PrincipalFrom(ctx); p != nil {
		out = append(out, slog.String("organization", p.OrganizationID), slog.String("environment", string(p.Environment)),
			slog.String("principal_id", p.ID), slog.String("principal_kind", string(p.Kind)))
	}
	return out
}
