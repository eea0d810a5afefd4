package tracing_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/telcoplatform/platform/tracing"
)

// TestOffWithoutEndpoint: without an endpoint the provider is off: its
// spans record nothing, no interceptor nor transport is added.
func TestOffWithoutEndpoint(t *testing.T) {
	p, err := tracing.New(context.Background(), tracing.Options{DefaultServiceName: tracing.ServiceAPI})
	if err != nil {
		t.Fatal(err)
	}
	if p.Enabled() {
		t.Fatal("enabled without an endpoint")
	}
	_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "x")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("the off provider records spans")
	}
	if is, err := p.TemporalInterceptors(); err != nil || is != nil {
		t.Errorf("interceptors %v, %v", is, err)
	}
	if rt := p.WrapTransport(http.DefaultTransport); rt != http.DefaultTransport {
		t.Errorf("transport wrapped: %T", rt)
	}
	var nilProvider *tracing.Provider
	if nilProvider.Enabled() || nilProvider.Shutdown(context.Background()) != nil {
		t.Error("a nil provider is not off")
	}
}

// collector is an OTLP/HTTP receiver on loopback: the bodies POSTed to
// /v1/traces.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		c.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// TestExportsByOTLP: with an endpoint, spans are batched and Shutdown
// sends them to <endpoint>/v1/traces, under the service's name
// (OTEL_SERVICE_NAME, or the role's default).
func TestExportsByOTLP(t *testing.T) {
	for _, tc := range []struct{ configured, want string }{{"", tracing.ServiceWorker}, {"billing-worker", "billing-worker"}} {
		col := &collector{}
		srv := httptest.NewServer(col)
		p, err := tracing.New(context.Background(), tracing.Options{Endpoint: srv.URL + "/", ServiceName: tc.configured, DefaultServiceName: tracing.ServiceWorker})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Enabled() {
			t.Fatal("off with an endpoint")
		}
		_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "exported-span-name")
		span.End()
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		col.mu.Lock()
		all := bytes.Join(col.bodies, nil)
		col.mu.Unlock()
		if !bytes.Contains(all, []byte("exported-span-name")) || !bytes.Contains(all, []byte(tc.want)) {
			t.Errorf("%d exports; want the span under service %s", len(col.bodies), tc.want)
		}
	}
}

// TestWrapTransport: a traced client sends the span's traceparent (not
// its baggage) and records a client span in the caller's trace, through
// the transport it wraps.
func TestWrapTransport(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	p := tracing.NewWithSpanProcessor(rec, nil)
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	inner := &countingTransport{next: http.DefaultTransport}
	hc := &http.Client{Transport: p.WrapTransport(inner)}
	member, _ := baggage.NewMember("organization", "org_1")
	bag, _ := baggage.New(member)
	ctx, parent := p.TracerProvider().Tracer("t").Start(baggage.ContextWithBaggage(context.Background(), bag), "parent")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	parent.End()
	if inner.n != 1 {
		t.Errorf("the wrapped transport sent %d requests", inner.n)
	}
	var client trace.SpanContext
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindClient && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			client = s.SpanContext()
		}
	}
	if !client.IsValid() {
		t.Fatal("no client span under the caller's span")
	}
	if want := "00-" + client.TraceID().String() + "-" + client.SpanID().String() + "-01"; got.Get("Traceparent") != want {
		t.Errorf("traceparent %q, want %q", got.Get("Traceparent"), want)
	}
	if v := got.Get("Baggage"); v != "" {
		t.Errorf("baggage sent: %q", v)
	}
}

type countingTransport struct {
	next http.RoundTripper
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return c.next.RoundTrip(r)
}
