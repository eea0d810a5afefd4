package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/metrics"
)

// Metadata is the top-level `metadata` object of every JSON object answer.
type Metadata struct {
	RequestID string `json:"request_id" example:"req_3fK9aZ"`
	Timestamp string `json:"timestamp" example:"2026-11-22T10:00:00Z"`
	Version   string `json:"version" example:"1.2.3"`
}

// Envelope is embedded in every answer body; the server fills it.
type Envelope struct {
	Metadata *Metadata `json:"metadata,omitempty"`
}

func (e *Envelope) setMetadata(m Metadata) { e.Metadata = &m }

type metadataSetter interface{ setMetadata(Metadata) }

type requestInfo struct {
	RequestID string
	Version   string
	Logger    *slog.Logger
	Realm     string // PUBLIC_BASE_URL, the realm of 401 challenges

	// Metrics counts error answers by code (nil: none).
	Metrics *metrics.Metrics
}

// loggerFrom returns the server's logger carried by a request context.
func loggerFrom(ctx context.Context) *slog.Logger {
	if l := requestInfoFrom(ctx).Logger; l != nil {
		return l
	}
	return slog.Default()
}

type requestInfoKey struct{}

func withRequestInfo(ctx context.Context, info requestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

func requestInfoFrom(ctx context.Context) requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(requestInfo)
	return info
}

// RequestID returns the request id carried by ctx ("" outside a request).
func RequestID(ctx context.Context) string { return requestInfoFrom(ctx).RequestID }

func (s *Server) metadataFor(ctx context.Context) Metadata {
	info := requestInfoFrom(ctx)
	v := info.Version
	if v == "" {
		v = LatestVersion
	}
	return Metadata{RequestID: info.RequestID, Timestamp: s.now().UTC().Format(time.RFC3339), Version: v}
}

// envelopeTransformer fills `metadata` in every answer body and, for GET
// answers, sets an ETag computed from the body without its metadata.
func (s *Server) envelopeTransformer(hctx huma.Context, status string, v any) (any, error) {
	if v == nil {
		return v, nil
	}
	if ea, isErr := v.(errorAnswer); isErr {
		ea.setMetadata(s.metadataFor(hctx.Context()))
		for k, h := range ea.headers {
			hctx.SetHeader(k, h)
		}
		return ea, nil
	}
	rv := reflect.ValueOf(v)
	var target reflect.Value
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		target = rv
	case rv.Kind() == reflect.Struct:
		target = reflect.New(rv.Type())
		target.Elem().Set(rv)
	default:
		return v, nil
	}
	setter, ok := target.Interface().(metadataSetter)
	if !ok {
		return v, nil
	}
	if hctx.Method() == http.MethodGet && status == "200" {
		if k, ok := target.Interface().(etagKnown); ok && k.knownETagValue() != "" {
			hctx.SetHeader("ETag", k.knownETagValue())
		} else if etag, err := bodyETag(target.Interface()); err == nil {
			hctx.SetHeader("ETag", etag)
		}
	}
	setter.setMetadata(s.metadataFor(hctx.Context()))
	return target.Interface(), nil
}

// bodyETag is the ETag of an answer body: the first half of the SHA-256 of
// its JSON without metadata (which must be nil).
func bodyETag(body any) (string, error) {
	raw, err := jsonMarshal(body)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return `"` + hex.EncodeToString(sum[:16]) + `"`, nil
}

// knownETag, embedded in an answer body, carries the body's ETag computed
// in advance (bodyETag), for a body served many times (the catalog): the
// envelope transformer then does not encode it a second time. It is
// neither encoded nor in the schema (unexported).
type knownETag struct{ etag string }

func (k knownETag) knownETagValue() string { return k.etag }

type etagKnown interface{ knownETagValue() string }

// jsonMarshal encodes v as JSON without HTML escaping and without a trailing newline.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return fmt.Sprint(x)
	case int64:
		return fmt.Sprint(x)
	case float64:
		return fmt.Sprintf("%.0f", x)
	default:
		return fmt.Sprint(x)
	}
}
