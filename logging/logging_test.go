package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/logging"
)

type ctxKey struct{}

func fromCtx(ctx context.Context) []slog.Attr {
	if id, ok := ctx.Value(ctxKey{}).(string); ok {
		return []slog.Attr{slog.String("request_id", id), slog.String("organization", "org_1")}
	}
	return nil
}

func decode(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestContextAttributes: a record logged with a context gets the
// extractors' attributes (its own win on a clash, through With and groups
// too); one logged without gets none; outside an activity Activity adds
// nothing.
func TestContextAttributes(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", "info", fromCtx, logging.Activity)
	ctx := context.WithValue(context.Background(), ctxKey{}, "req_1")
	log.InfoContext(ctx, "one")
	log.InfoContext(ctx, "two", "organization", "org_own")
	log.With("component", "x").WithGroup("g").InfoContext(ctx, "three", "k", "v")
	log.Info("four")
	log.DebugContext(ctx, "below the level")
	recs := decode(t, &buf)
	if len(recs) != 4 {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	if recs[0]["request_id"] != "req_1" || recs[0]["organization"] != "org_1" {
		t.Errorf("one: %v", recs[0])
	}
	if recs[1]["organization"] != "org_own" || recs[1]["request_id"] != "req_1" {
		t.Errorf("two: %v", recs[1])
	}
	if recs[2]["component"] != "x" || recs[2]["g"] == nil {
		t.Errorf("three: %v", recs[2])
	}
	if _, ok := recs[3]["request_id"]; ok {
		t.Errorf("four: %v", recs[3])
	}
	for _, r := range recs {
		if _, ok := r["workflow_id"]; ok {
			t.Errorf("workflow_id outside an activity: %v", r)
		}
	}
}

// TestRedact: attributes named like secrets, bodies, and credentials
// inside any string (messages and errors included) never reach the output,
// in JSON and in text.
func TestRedact(t *testing.T) {
	planted := []string{
		"sk_live_" + strings.Repeat("a1B2", 14),
		"sk_test_" + strings.Repeat("Z9y8", 14),
		"whsec_cGxhbnRlZCB3ZWJob29rIHNpZ25pbmcgc2VjcmV0ISE=",
		"cs_" + strings.Repeat("q", 48),
		"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlLXBhcnQ",
		"hunter2-the-password",
	}
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log := logging.New(&buf, format, "debug")
		log.Info("created key "+planted[0], "secret", planted[2], "password", planted[5])
		log.Warn("refused", "authorization", "Bearer "+planted[4], "error", errors.New("bad key "+planted[1]))
		log.Info("client", "client_secret", planted[3], "note", "header was Basic "+strings.Repeat("QUJD", 6))
		log.Info("body", "body", `{"password":"`+planted[5]+`"}`, "api_key", planted[0], "key", planted[1])
		log.With("token", planted[4]).WithGroup("g").Info("grouped", "access_token", planted[4], "detail", "jwt "+planted[4])
		out := buf.String()
		for _, s := range planted {
			if strings.Contains(out, s) {
				t.Errorf("%s: the output holds %.14s...:\n%s", format, s, out)
			}
		}
		if strings.Contains(out, "QUJDQUJD") {
			t.Errorf("%s: a basic credential leaked", format)
		}
		if !strings.Contains(out, logging.Redacted) || !strings.Contains(out, "created key") {
			t.Errorf("%s: nothing redacted or the message lost:\n%s", format, out)
		}
	}
}

// TestRedactKeepsOrdinaryValues: ids, counts and names pass unchanged.
func TestRedactKeepsOrdinaryValues(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", "info")
	log.Info("ok", "key_id", "ak_123", "organization", "org_1", "count", 3, "status", "sk_", "route", "/v1/auth/api-keys/:key_id")
	rec := decode(t, &buf)[0]
	if rec["key_id"] != "ak_123" || rec["count"] != float64(3) || rec["status"] != "sk_" || rec["route"] != "/v1/auth/api-keys/:key_id" {
		t.Errorf("%v", rec)
	}
}

// TestActivityAttributes: a record logged with an activity's context
// carries its workflow id, run id and activity type.
func TestActivityAttributes(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", "info", logging.Activity)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		log.InfoContext(ctx, "inside")
		return nil
	}, activity.RegisterOptions{Name: "Logs"})
	if _, err := env.ExecuteActivity("Logs"); err != nil {
		t.Fatal(err)
	}
	rec := decode(t, &buf)[0]
	if rec["workflow_id"] == nil || rec["workflow_id"] == "" || rec["run_id"] == nil || rec["activity_type"] != "Logs" {
		t.Errorf("%v", rec)
	}
}

// TestTraceIDs: a record logged with a context holding a valid span
// context carries its trace_id and span_id; one without a span, or with
// an invalid one, carries neither.
func TestTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "json", "info")
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "traced")
	log.InfoContext(context.Background(), "untraced")
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), trace.SpanContext{}), "invalid")
	recs := decode(t, &buf)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0]["trace_id"] != tid.String() || recs[0]["span_id"] != sid.String() {
		t.Errorf("traced: %v", recs[0])
	}
	for _, r := range recs[1:] {
		if _, ok := r["trace_id"]; ok {
			t.Errorf("%v carries a trace id", r)
		}
		if _, ok := r["span_id"]; ok {
			t.Errorf("%v carries a span id", r)
		}
	}
}
