package tracing

import (
	"context"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// redactor wraps the span processor spans go to: when a span ends, it
// rewrites the URL attributes the HTTP instrumentations recorded, before
// the processor (and so the exporter) sees them. An incoming request's
// target and URL lose their query (signed report links, device codes); an
// outgoing request's URL keeps only its scheme and host (webhook and chat
// URLs may carry a token in their path). A span without such attributes
// passes as it is.
type redactor struct {
	next sdktrace.SpanProcessor
}

// redacted returns the value an attribute key keeps, and whether key is
// one redactor rewrites.
func redacted(key attribute.Key, v string) (string, bool) {
	switch key {
	case "http.target", "http.url": // otelfiber, incoming
		return withoutQuery(v), true
	case "url.full": // otelhttp, outgoing
		return schemeAndHost(v), true
	case "url.query", "url.path":
		return "", true
	}
	return "", false
}

// OnStart passes s on.
func (r redactor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { r.next.OnStart(ctx, s) }

// OnEnd passes s on with its URL attributes rewritten.
func (r redactor) OnEnd(s sdktrace.ReadOnlySpan) {
	attrs := s.Attributes()
	var out []attribute.KeyValue
	for i, kv := range attrs {
		if kv.Value.Type() == attribute.STRING {
			if v, ok := redacted(kv.Key, kv.Value.AsString()); ok {
				if out == nil {
					out = append(make([]attribute.KeyValue, 0, len(attrs)), attrs[:i]...)
				}
				out = append(out, kv.Key.String(v))
				continue
			}
		}
		if out != nil {
			out = append(out, kv)
		}
	}
	if out == nil {
		r.next.OnEnd(s)
		return
	}
	stub := tracetest.SpanStubFromReadOnlySpan(s)
	stub.Attributes = out
	r.next.OnEnd(stub.Snapshot())
}

// Shutdown shuts the wrapped processor down.
func (r redactor) Shutdown(ctx context.Context) error { return r.next.Shutdown(ctx) }

// ForceFlush flushes the wrapped processor.
func (r redactor) ForceFlush(ctx context.Context) error { return r.next.ForceFlush(ctx) }

// withoutQuery cuts s at its query.
func withoutQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i]
	}
	return s
}

// schemeAndHost keeps the scheme and host of the URL s.
func schemeAndHost(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
