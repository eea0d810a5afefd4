package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/tracing"
)

// TestSMSTraced: an SMS sent with the tracing wrapper carries the
// traceparent of its client span in the sender's trace; without it, none.
func TestSMSTraced(t *testing.T) {
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.Header.Get("Traceparent") }))
	t.Cleanup(srv.Close)
	tp := tracing.NewWithSpanProcessor(tracetest.NewSpanRecorder(), nil)
	ctx, span := tp.TracerProvider().Tracer("t").Start(context.Background(), "dispatch")
	defer span.End()

	if err := notify.NewSMSHTTP(srv.URL, tp.WrapTransport).Send(ctx, notify.Message{ID: "ntf_1", To: "+15550100", Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; !strings.HasPrefix(v, "00-"+span.SpanContext().TraceID().String()+"-") {
		t.Errorf("traced SMS: traceparent %q", v)
	}
	if err := notify.NewSMSHTTP(srv.URL).Send(ctx, notify.Message{ID: "ntf_2", To: "+15550100", Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "" {
		t.Errorf("untraced SMS: traceparent %q", v)
	}
}
