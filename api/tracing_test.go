package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/logging"
	"github.com/telcoplatform/platform/tracing"
)

// traced replaces the harness server with one traced into the returned
// recorder (its database too), logging JSON into the returned buffer.
func (h *harness) traced(t *testing.T, tp *tracing.Provider) *lockedBuffer {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.InstrumentDB(h.store.DB); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Logger: logging.New(logs, "json", "info", api.LogAttrs), Blobs: h.blobs, Tracing: tp})
	return logs
}

// traceparent parses a W3C traceparent header (version 00, sampled).
func traceparent(t *testing.T, v string) (trace.TraceID, trace.SpanID) {
	t.Helper()
	parts := strings.Split(v, "-")
	if len(parts) != 4 || parts[0] != "00" || parts[3] != "01" {
		t.Fatalf("traceparent %q", v)
	}
	tid, err := trace.TraceIDFromHex(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	return tid, sid
}

// accessLine is the access-log line of the request with id requestID.
func accessLine(t *testing.T, logs *lockedBuffer, requestID string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if m["msg"] == "request" && m["request_id"] == requestID {
			return m
		}
	}
	t.Fatalf("no access-log line of %s in %s", requestID, logs.String())
	return nil
}

// TestTracedRequests: with tracing on, every answer (a 200, a 401 refused
// before routing) carries the traceparent of its server span, named after
// the route template; the SQL statements the request ran are its
// children, without their parameters; a caller's traceparent is
// continued; the access-log line carries trace_id and span_id; probes are
// not traced.
func TestTracedRequests(t *testing.T) {
	h := newHarness(t)
	rec := tracetest.NewSpanRecorder()
	logs := h.traced(t, tracing.NewWithSpanProcessor(rec, nil))
	a := h.tenants[0]
	spans := func() map[trace.SpanID]tracetest.SpanStub {
		out := map[trace.SpanID]tracetest.SpanStub{}
		for _, s := range tracetest.SpanStubsFromReadOnlySpans(rec.Ended()) {
			out[s.SpanContext.SpanID()] = s
		}
		return out
	}

	res := h.do("GET", "/v1/billing/accounts/"+a.account.ID, a.liveKey, nil).decode(http.StatusOK, nil)
	tid, sid := traceparent(t, res.header.Get("Traceparent"))
	all := spans()
	server, ok := all[sid]
	if !ok {
		t.Fatalf("no span %s among %d", sid, len(all))
	}
	if server.SpanKind != trace.SpanKindServer || server.Name != "GET /v1/billing/accounts/{account_id}" && server.Name != "GET /v1/billing/accounts/:account_id" {
		t.Errorf("server span %q kind %v", server.Name, server.SpanKind)
	}
	if server.SpanContext.TraceID() != tid || server.Parent.IsValid() {
		t.Errorf("server span trace %s parent %v", server.SpanContext.TraceID(), server.Parent)
	}
	sql := 0
	for _, s := range all {
		if s.InstrumentationScope.Name != "gorm.io/plugin/opentelemetry" || s.Parent.SpanID() != sid {
			continue
		}
		sql++
		if s.SpanContext.TraceID() != tid {
			t.Errorf("SQL span %q in trace %s", s.Name, s.SpanContext.TraceID())
		}
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, a.account.ID) || strings.Contains(v, a.org.ID) {
				t.Errorf("SQL span %q: %s holds a parameter: %s", s.Name, kv.Key, v)
			}
		}
	}
	if sql == 0 {
		t.Error("no SQL span under the request's span")
	}
	line := accessLine(t, logs, res.header.Get("X-Request-Id"))
	if line["trace_id"] != tid.String() || line["span_id"] != sid.String() {
		t.Errorf("access log %v, trace %s span %s", line, tid, sid)
	}

	// A caller's trace is continued.
	const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res = h.do("POST", "/v1/auth/api-keys", "sk_live_wrong", map[string]any{"name": "x"}, "traceparent", caller)
	res.wantError(http.StatusUnauthorized, "INVALID_API_KEY")
	tid, sid = traceparent(t, res.header.Get("Traceparent"))
	if tid.String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sid.String() == "00f067aa0ba902b7" {
		t.Errorf("traceparent %s after %s", res.header.Get("Traceparent"), caller)
	}
	if s, ok := spans()[sid]; !ok || s.Parent.SpanID().String() != "00f067aa0ba902b7" || s.Name != "POST /v1/auth/api-keys" {
		t.Errorf("401's span %+v (found %v)", s, ok)
	}

	// A caller's baggage is not taken in, nor answered; a URL's query is
	// not recorded.
	res = h.do("GET", "/v1/billing/accounts/"+a.account.ID+"?secret=s3cret", a.liveKey, nil, "baggage", "tenant=other")
	_, sid = traceparent(t, res.header.Get("Traceparent"))
	if v := res.header.Get("Baggage"); v != "" {
		t.Errorf("baggage answered: %q", v)
	}
	for _, kv := range spans()[sid].Attributes {
		if strings.Contains(kv.Value.String(), "s3cret") {
			t.Errorf("the query is recorded: %s=%s", kv.Key, kv.Value.String())
		}
	}

	// A Server-Sent Events stream is not traced (the middleware would hold
	// the stream back until it ends).
	before := len(rec.Ended())
	res = h.do("GET", "/v1/billing/accounts/"+a.account.ID, a.liveKey, nil, "Accept", "text/event-stream")
	if res.header.Get("Traceparent") != "" {
		t.Errorf("an event stream request answered traceparent %q", res.header.Get("Traceparent"))
	}
	for _, s := range rec.Ended()[before:] {
		if s.SpanKind() == trace.SpanKindServer {
			t.Errorf("event stream request traced: %q", s.Name())
		}
	}

	before = len(rec.Ended())
	res = h.do("GET", "/healthz", "", nil)
	if res.status != http.StatusOK || res.header.Get("Traceparent") != "" {
		t.Errorf("/healthz: %d, traceparent %q", res.status, res.header.Get("Traceparent"))
	}
	for _, s := range rec.Ended()[before:] {
		if s.SpanKind() == trace.SpanKindServer {
			t.Errorf("/healthz traced: %q", s.Name())
		}
	}
}

// TestUntracedRequests: with tracing off no traceparent is answered, even
// to a caller who sends one, and log lines carry no trace id.
func TestUntracedRequests(t *testing.T) {
	h := newHarness(t)
	logs := h.traced(t, tracing.Off())
	a := h.tenants[0]
	res := h.do("GET", "/v1/billing/accounts/"+a.account.ID, a.liveKey, nil, "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").decode(http.StatusOK, nil)
	if v := res.header.Get("Traceparent"); v != "" {
		t.Errorf("traceparent %q", v)
	}
	if line := accessLine(t, logs, res.header.Get("X-Request-Id")); line["trace_id"] != nil || line["span_id"] != nil {
		t.Errorf("access log %v", line)
	}
}
