package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
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
		// Encoded once (or never, for a body encoded in advance): the ETag is
		// computed over the body without its metadata, and the metadata is
		// then spliced in front of the same bytes.
		raw, etag := []byte(nil), ""
		if k, ok := target.Interface().(encodedInAdvance); ok {
			raw, etag = k.encoded()
		}
		if raw == nil {
			if b, err := jsonMarshal(target.Interface()); err == nil {
				raw, etag = b, rawETag(b)
			}
		}
		if len(raw) >= 2 && raw[0] == '{' {
			hctx.SetHeader("ETag", etag)
			if meta, err := jsonMarshal(s.metadataFor(hctx.Context())); err == nil {
				return withMetadata(raw, meta), nil
			}
		}
	}
	setter.setMetadata(s.metadataFor(hctx.Context()))
	return target.Interface(), nil
}

// encodedBody is an answer body already encoded as JSON (a GET's answer,
// encoded once for both its ETag and its bytes); jsonFormat writes it as
// it is.
type encodedBody []byte

// MarshalJSON returns the encoded body.
func (b encodedBody) MarshalJSON() ([]byte, error) { return b, nil }

// withMetadata returns the JSON object raw (encoded without metadata) with
// the encoded metadata as its first member, as the envelope encodes it.
func withMetadata(raw, meta []byte) encodedBody {
	out := make([]byte, 0, len(raw)+len(meta)+14)
	out = append(out, `{"metadata":`...)
	out = append(out, meta...)
	if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, raw[1:]...)
}

// jsonFormat is huma's JSON format, writing an encodedBody without
// encoding it again.
func jsonFormat() huma.Format {
	return huma.Format{
		Marshal: func(w io.Writer, v any) error {
			if b, ok := v.(encodedBody); ok {
				if _, err := w.Write(b); err != nil {
					return err
				}
				_, err := w.Write([]byte{'\n'}) // as json.Encoder ends a value
				return err
			}
			return huma.DefaultJSONFormat.Marshal(w, v)
		},
		Unmarshal: huma.DefaultJSONFormat.Unmarshal,
	}
}

// rawETag is the ETag of an answer body encoded without its metadata: the
// first half of the SHA-256 of its JSON.
func rawETag(raw []byte) string {
	sum := sha256.Sum256(raw)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// preEncoded, embedded in an answer body served many times (the catalog),
// carries the body encoded in advance without its metadata, and its ETag
// (see encodeInAdvance): the envelope transformer writes those bytes
// instead of encoding the body. It is neither encoded nor in the schema
// (unexported).
type preEncoded struct {
	raw  []byte
	etag string
}

func (p preEncoded) encoded() ([]byte, string) { return p.raw, p.etag }

type encodedInAdvance interface{ encoded() ([]byte, string) }

// encodeInAdvance encodes body (whose metadata must be nil) for a
// preEncoded.
func encodeInAdvance(body any) (preEncoded, error) {
	raw, err := jsonMarshal(body)
	if err != nil {
		return preEncoded{}, err
	}
	return preEncoded{raw: raw, etag: rawETag(raw)}, nil
}

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
