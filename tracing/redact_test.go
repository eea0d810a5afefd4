package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/telcoplatform/platform/tracing"
)

// TestURLsAreRedacted: a span started with a URL's query (incoming) or
// path (outgoing) is recorded without them; a real outgoing request
// through the wrapped transport records only the receiver's scheme and
// host.
func TestURLsAreRedacted(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	p := tracing.NewWithSpanProcessor(rec, nil)
	// An incoming request as otelfiber records it.
	_, in := p.TracerProvider().Tracer("t").Start(context.Background(), "GET /v1/reports/{id}/download")
	in.SetAttributes(attribute.String("http.target", "/v1/reports/rpt_1/download?expires=1&signature=s3cret"),
		attribute.String("http.url", "/v1/reports/rpt_1/download?expires=1&signature=s3cret"), attribute.Int("http.status_code", 200))
	in.End()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	client := &http.Client{Transport: p.WrapTransport(nil)}
	resp, err := client.Get(srv.URL + "/hooks/T000/B000/secret-token?sig=abc")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	seen := map[attribute.Key]bool{}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			seen[kv.Key] = true
			switch kv.Key {
			case "url.full":
				if kv.Value.AsString() != srv.URL {
					t.Errorf("url.full = %q, want %q", kv.Value.AsString(), srv.URL)
				}
			case "http.target", "http.url":
				if v := kv.Value.AsString(); v != "/v1/reports/rpt_1/download" {
					t.Errorf("%s = %q", kv.Key, v)
				}
			case "url.path", "url.query":
				if v := kv.Value.AsString(); v != "" {
					t.Errorf("%s = %q", kv.Key, v)
				}
			case "http.status_code":
				if kv.Value.AsInt64() != 200 {
					t.Errorf("other attributes changed: %v", kv)
				}
			}
		}
	}
	for _, k := range []attribute.Key{"url.full", "http.target", "http.url", "http.status_code"} {
		if !seen[k] {
			t.Errorf("no span has %s", k)
		}
	}
}
