// Package tracing builds the process's OpenTelemetry tracer provider from
// configuration and hands the instrumentations of the platform (the HTTP
// API, the Temporal client and workers, the database, outgoing HTTP) what
// they need.
//
// Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: the provider
// is then a no-op one, Enabled reports false, and callers install no
// middleware, interceptor or plugin at all, so an untraced process pays
// nothing. When it is on, spans are batched and exported by OTLP over
// HTTP (protobuf) to the endpoint; the exporter's other standard variables
// (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, ...) and the
// sampler's (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG) apply as the
// OpenTelemetry SDK reads them. Trace context crosses processes in W3C
// traceparent headers; baggage is neither read nor sent. URLs are recorded
// without their query and, for outgoing requests, without their path
// (both may hold secrets: signed links, webhook tokens).
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"gorm.io/gorm"
	gormtracing "gorm.io/plugin/opentelemetry/tracing"
)

// Service names by role, when OTEL_SERVICE_NAME is empty.
const (
	ServiceAPI    = "platform-api"
	ServiceWorker = "platform-worker"
	ServiceDev    = "platform-dev"
)

// Options configure a Provider.
type Options struct {
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT, the base URL of an OTLP/HTTP
	// collector (http://collector:4318); spans go to <Endpoint>/v1/traces.
	// Empty: tracing is off.
	Endpoint string
	// ServiceName is OTEL_SERVICE_NAME (empty: DefaultServiceName).
	ServiceName string
	// DefaultServiceName names the process when ServiceName is empty
	// (ServiceAPI, ServiceWorker, ServiceDev).
	DefaultServiceName string
}

// Provider is the process's tracer provider. The zero value and nil are
// off.
type Provider struct {
	tp       trace.TracerProvider
	shutdown func(context.Context) error // nil: off
}

// Propagator is the W3C trace context propagator every instrumentation of
// the platform uses. Baggage is left out: what a caller puts in it would
// otherwise travel into every workflow's headers and back out.
func Propagator() propagation.TextMapPropagator {
	return propagation.TraceContext{}
}

// New returns the Provider opts describe: off (a no-op provider) without
// an endpoint; otherwise a batching SDK provider exporting by OTLP/HTTP,
// whose resource names the service. Nothing is connected until the first
// batch is sent.
func New(ctx context.Context, opts Options) (*Provider, error) {
	if strings.TrimSpace(opts.Endpoint) == "" {
		return Off(), nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(opts.Endpoint, "/")+"/v1/traces"))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// The role's name, unless OTEL_RESOURCE_ATTRIBUTES names the service;
	// OTEL_SERVICE_NAME above both.
	detectors := []resource.Option{resource.WithTelemetrySDK(), resource.WithAttributes(attribute.String("service.name", opts.DefaultServiceName)),
		resource.WithFromEnv()}
	if opts.ServiceName != "" {
		detectors = append(detectors, resource.WithAttributes(attribute.String("service.name", opts.ServiceName)))
	}
	res, err := resource.New(ctx, detectors...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	return NewWithSpanProcessor(sdktrace.NewBatchSpanProcessor(exp), res), nil
}

// NewWithSpanProcessor returns an enabled Provider whose spans go to sp
// (tests pass a tracetest.SpanRecorder); res may be nil. Every span is
// sampled unless OTEL_TRACES_SAMPLER says otherwise.
func NewWithSpanProcessor(sp sdktrace.SpanProcessor, res *resource.Resource) *Provider {
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(redactor{next: sp})}
	if res != nil {
		opts = append(opts, sdktrace.WithResource(res))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: tp, shutdown: tp.Shutdown}
}

// Off returns a disabled Provider: a no-op tracer provider.
func Off() *Provider {
	return &Provider{tp: noop.NewTracerProvider()}
}

// Enabled reports whether spans are recorded and exported.
func (p *Provider) Enabled() bool { return p != nil && p.shutdown != nil }

// TracerProvider is the provider instrumentations are given (a no-op one
// when off).
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil || p.tp == nil {
		return noop.NewTracerProvider()
	}
	return p.tp
}

// Propagator is the provider's text map propagator: Propagator().
func (p *Provider) Propagator() propagation.TextMapPropagator { return Propagator() }

// Shutdown flushes the spans not yet exported and stops the exporter; a
// disabled Provider has nothing to do.
func (p *Provider) Shutdown(ctx context.Context) error {
	if !p.Enabled() {
		return nil
	}
	return p.shutdown(ctx)
}

// TemporalInterceptors are the interceptors of a Temporal client (nil when
// off): the SDK's OpenTelemetry tracing interceptor, which also applies to
// the workers built from the client. It records StartWorkflow,
// SignalWorkflow, ... on the client; RunWorkflow, StartActivity,
// StartChildWorkflow, ... in workflows (only outside replay, so workflow
// code stays deterministic); and RunActivity around each activity, whose
// context carries that span.
func (p *Provider) TemporalInterceptors() ([]interceptor.ClientInterceptor, error) {
	if !p.Enabled() {
		return nil, nil
	}
	i, err := opentelemetry.NewTracingInterceptor(opentelemetry.TracerOptions{
		Tracer:            p.tp.Tracer("go.temporal.io/sdk"),
		TextMapPropagator: Propagator(),
		// Workflows started before tracing was turned on (or by another
		// SDK) keep running whatever their headers hold.
		AllowInvalidParentSpans: true,
		DisableBaggage:          true,
	})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing interceptor: %w", err)
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// InstrumentDB registers GORM's OpenTelemetry plugin on db (nothing when
// off): a client span per statement, a child of the span in the
// statement's context, with the statement's text without its parameters
// (values may hold secrets). The plugin's own metrics are left out (the
// platform's are Prometheus').
func (p *Provider) InstrumentDB(db *gorm.DB) error {
	if !p.Enabled() {
		return nil
	}
	if err := db.Use(gormtracing.NewPlugin(gormtracing.WithTracerProvider(p.tp), gormtracing.WithoutQueryVariables(),
		gormtracing.WithoutMetrics(), gormtracing.WithoutServerAddress())); err != nil {
		return fmt.Errorf("database tracing: %w", err)
	}
	return nil
}

// WrapTransport returns rt (http.DefaultTransport when nil) wrapped by
// otelhttp when tracing is on: a client span per request, whose trace
// context the request carries in a traceparent header (baggage is not
// sent: it stays inside the platform). Off, rt comes back unchanged. The
// wrapped transport still dials, resolves and checks addresses as rt does.
func (p *Provider) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if !p.Enabled() {
		return rt
	}
	return otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(p.tp), otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "HTTP " + r.Method }))
}
