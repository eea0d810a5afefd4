package webhooks

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/telcoplatform/platform/tracing"
)

// TestTracedClient: with the tracing wrapper a delivery carries the
// traceparent of its client span, in the caller's trace; and the wrapped
// client still refuses a destination that turns private at connection
// time (the guard lives in the wrapped transport's dialer).
func TestTracedClient(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := tracing.NewWithSpanProcessor(rec, nil)
	var hits atomic.Int32
	var traceparent atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		traceparent.Store(r.Header.Get("Traceparent"))
	}))
	t.Cleanup(srv.Close)

	ctx, parent := tp.TracerProvider().Tracer("t").Start(context.Background(), "activity")
	c := NewClient(true, WithTransportWrapper(tp.WrapTransport))
	t.Cleanup(c.CloseIdleConnections)
	if a := c.Deliver(ctx, srv.URL+"/hook", []string{NewSecret()}, "msg_traced", time.Now(), []byte(`{}`)); !a.Success {
		t.Fatalf("attempt %+v", a)
	}
	parent.End()
	got, _ := traceparent.Load().(string)
	if !strings.HasPrefix(got, "00-"+parent.SpanContext().TraceID().String()+"-") || strings.Contains(got, parent.SpanContext().SpanID().String()) {
		t.Errorf("traceparent %q under %s", got, parent.SpanContext().TraceID())
	}

	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var lookups atomic.Int32
	r := resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil // at validation
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil // at connection time
	})
	guarded := NewClient(false, WithResolver(r), WithTransportWrapper(tp.WrapTransport))
	t.Cleanup(guarded.CloseIdleConnections)
	a := guarded.Deliver(ctx, "http://rebind.example:"+port+"/hook", []string{NewSecret()}, "msg_rebind", time.Now(), []byte(`{}`))
	if a.Success || !strings.Contains(a.Error, "destination refused") {
		t.Fatalf("attempt %+v, want the connection-time refusal", a)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("receiver got %d requests, want the traced one only", n)
	}
}
