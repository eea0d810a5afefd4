package api

import (
	"strings"

	"github.com/gofiber/contrib/otelfiber/v2"
	"github.com/gofiber/fiber/v2"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
)

// traceMiddleware is otelfiber's middleware with the server's provider
// (installed only when tracing is on): a server span per request, a child
// of the caller's traceparent when one is sent, named "METHOD <route
// template>", in the request's context (handlers, the Temporal client and
// the database pass it on). Every answer carries the span's traceparent
// header. Probes (/healthz, /readyz) and Server-Sent Events streams are
// not traced. The client's address
// is not recorded; the middleware's own metrics are dropped (the API's
// are Prometheus').
func (s *Server) traceMiddleware() fiber.Handler {
	return otelfiber.Middleware(
		otelfiber.WithTracerProvider(s.tracing.TracerProvider()),
		otelfiber.WithPropagators(s.tracing.Propagator()),
		otelfiber.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelfiber.WithCollectClientIP(false),
		otelfiber.WithNext(func(c *fiber.Ctx) bool {
			// Server-Sent Events are not traced: the middleware reads the
			// answer's body when the handler returns, which for a stream
			// would wait for its end before sending anything.
			p := c.Path()
			return p == "/healthz" || p == "/readyz" || acceptsEventStream(c.Get(fiber.HeaderAccept))
		}),
		otelfiber.WithSpanNameFormatter(func(c *fiber.Ctx) string {
			return strings.Clone(c.Method()) + " " + s.routeTemplate(c)
		}),
	)
}
