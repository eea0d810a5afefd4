// Package logging is the platform's slog set-up: a handler that adds what
// a record's context knows (request id, organization, environment,
// principal; an activity's workflow id and run id; the trace id and span
// id of a traced context) to every record logged with a context, and the
// redaction of secrets that every handler applies.
package logging

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
)

// Extractor returns the attributes a context carries (nil: none). The API
// provides one for its requests; Activity is the worker's.
type Extractor func(ctx context.Context) []slog.Attr

// Handler adds the attributes of its extractors, and trace_id and span_id
// when the context holds a valid OpenTelemetry span context (tracing on),
// to every record logged with a context (InfoContext, ErrorContext, ...),
// then hands the record to the wrapped handler.
type Handler struct {
	next    slog.Handler
	extract []Extractor
}

// NewHandler wraps next with the extractors, and Trace after them.
func NewHandler(next slog.Handler, extract ...Extractor) *Handler {
	return &Handler{next: next, extract: append(slices.Clip(extract), Trace)}
}

// Enabled reports whether the wrapped handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds the context's attributes (those the record does not set
// itself) and passes the record on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		var have map[string]bool
		for _, ex := range h.extract {
			for _, a := range ex(ctx) {
				if have == nil {
					have = map[string]bool{}
					r.Attrs(func(a slog.Attr) bool { have[a.Key] = true; return true })
				}
				if !have[a.Key] {
					r.AddAttrs(a)
					have[a.Key] = true
				}
			}
		}
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns the handler with attrs on the wrapped handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs), extract: h.extract}
}

// WithGroup returns the handler with the group opened on the wrapped handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), extract: h.extract}
}

// Activity is the Extractor of activity contexts: workflow_id, run_id and
// activity_type of the activity the record is logged from.
func Activity(ctx context.Context) []slog.Attr {
	if !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	return []slog.Attr{
		slog.String("workflow_id", info.WorkflowExecution.ID),
		slog.String("run_id", info.WorkflowExecution.RunID),
		slog.String("activity_type", info.ActivityType.Name),
	}
}

// Trace is the Extractor of traced contexts: trace_id and span_id (hex)
// of the context's span context when it is valid; nothing otherwise (no
// span, tracing off). Handler always applies it.
func Trace(ctx context.Context) []slog.Attr {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []slog.Attr{slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String())}
}

// Redacted replaces a secret's value in the logs.
const Redacted = "[redacted]"

// secretValue matches credentials of the platform that may end up in a
// message or an attribute by mistake: API keys (sk_live_/sk_test_), webhook
// signing secrets (whsec_), OAuth client secrets (cs_), bearer and basic
// authorization values, and JWTs (three base64url segments, the first a
// JSON header).
var secretValue = regexp.MustCompile(`\b(sk_(live|test)_|whsec_|cs_)[A-Za-z0-9_\-+/=]{8,}|(?i)\b(bearer|basic)\s+[A-Za-z0-9_\-+/=.~]{8,}|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*`)

// secretKey reports whether an attribute's name says it holds a secret.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"password", "passwd", "secret", "token", "authorization", "api_key", "apikey", "cookie", "private_key", "totp"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "key" || k == "body" || k == "request_body" || k == "response_body"
}

// Redact is the handlers' HandlerOptions.ReplaceAttr: an attribute whose
// name says it holds a secret or a body is replaced by Redacted, and
// credentials found in any string value (the message included) are cut
// out.
func Redact(_ []string, a slog.Attr) slog.Attr {
	if a.Key != slog.MessageKey && secretKey(a.Key) {
		return slog.String(a.Key, Redacted)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); secretValue.MatchString(s) {
			return slog.String(a.Key, secretValue.ReplaceAllString(s, Redacted))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); secretValue.MatchString(s) {
				return slog.String(a.Key, secretValue.ReplaceAllString(s, Redacted))
			}
		}
	}
	return a
}

// New returns the platform's logger writing to w: JSON lines when format
// is "json", slog's text otherwise; at level (debug, info, warn, error;
// info when unknown); every value through Redact; and the attributes of
// extract added to every record logged with a context.
func New(w io.Writer, format, level string, extract ...Extractor) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: Redact}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(NewHandler(h, extract...))
}
