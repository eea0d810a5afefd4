package portal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/telcoplatform/platform/api/internal/inproc"
	"github.com/telcoplatform/platform/models"
)

// M is a JSON object as the API answers it; pages render these directly.
type M = map[string]any

// APIError is a refusal of the API.
type APIError struct {
	Status  int
	Code    string
	Message string
	Fields  []FieldIssue
	Details M          // the error's details
	MFA     *Challenge // 401 mfa_required: the challenge to satisfy
}

// FieldIssue is one problem of a validation error.
type FieldIssue struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Challenge is the API's second-factor challenge (401 mfa_required).
type Challenge struct {
	ID      string   `json:"challenge_id"`
	Methods []string `json:"methods"`
	Message string   `json:"message"`
}

// Error describes the refusal: status, code and message.
func (e *APIError) Error() string { return fmt.Sprintf("API %d %s: %s", e.Status, e.Code, e.Message) }

// Client calls the platform's API in process, as the session's user.
type Client struct {
	ctx   context.Context // the page request's: its cancellation and trace reach the API's
	api   *inproc.Dispatcher
	outer *fasthttp.RequestCtx // the browser's request: its address and forwarding headers
	token string
	// Challenge is sent as X-MFA-Challenge-Id (a verified second factor).
	Challenge string
	// IdempotencyKey is sent as the Idempotency-Key of the next POST only
	// (the form's, see formIdempotencyKey): a form posted again, by a
	// reload of the page that answered it, gets the stored answer instead
	// of doing its work twice.
	IdempotencyKey string
}

func newClient(ctx context.Context, api *inproc.Dispatcher, outer *fasthttp.RequestCtx, token string) *Client {
	return &Client{ctx: ctx, api: api, outer: outer, token: token}
}

// call sends a request to path (under /v1) through the API in process, on
// the page request's context.
func (cl *Client) call(method, path string, body any, accept, idempotencyKey string) (*fasthttp.RequestCtx, error) {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI("/v1" + path)
	req.Header.SetHost(string(cl.outer.Host()))
	req.Header.Set(fiber.HeaderAuthorization, "Bearer "+cl.token)
	req.Header.Set(fiber.HeaderAccept, accept)
	for _, h := range []string{fiber.HeaderXForwardedFor, fiber.HeaderUserAgent} {
		if v := cl.outer.Request.Header.Peek(h); len(v) > 0 {
			req.Header.SetBytesV(h, v)
		}
	}
	// The browser's request id, if it sent one (the page's own, generated,
	// is not reused: each API call gets its own id).
	id := cl.outer.Request.Header.Peek("X-Request-Id")
	if len(id) > 0 {
		req.Header.SetBytesV("X-Request-Id", id)
	}
	if cl.Challenge != "" {
		req.Header.Set("X-MFA-Challenge-Id", cl.Challenge)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		req.Header.SetContentType(fiber.MIMEApplicationJSON)
		req.SetBody(raw)
	}
	return cl.api.Serve(inproc.Detached(cl.ctx), &req, cl.outer.RemoteAddr(), cl.outer.LocalAddr()), nil
}

// Do sends a request to the API (path without the /v1 prefix) with body
// as JSON (nil: none) and decodes a successful answer into out (nil:
// ignored). A refusal is an *APIError. A POST carries IdempotencyKey,
// which it uses up; when the API says the key went with another body (the
// form was changed, after going back to it), the request is new and is
// sent again without the key.
func (cl *Client) Do(method, path string, body, out any) error {
	key := ""
	if method == fiber.MethodPost {
		key, cl.IdempotencyKey = cl.IdempotencyKey, ""
	}
	rc, err := cl.call(method, path, body, fiber.MIMEApplicationJSON, key)
	if err != nil {
		return err
	}
	status, raw := rc.Response.StatusCode(), rc.Response.Body()
	if status >= 400 {
		err := decodeError(status, raw)
		var e *APIError
		if key != "" && errors.As(err, &e) && e.Code == string(models.CodeIdempotencyKeyMismatch) {
			return cl.Do(method, path, body, out)
		}
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// Get reads path into a JSON object.
func (cl *Client) Get(path string, query url.Values) (M, error) {
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	var out M
	err := cl.Do(fiber.MethodGet, path, nil, &out)
	return out, err
}

// Stream opens an event stream of the API (an operation's) and copies it
// to the browser's response, flushing each chunk, until either side ends.
func (cl *Client) Stream(c *fiber.Ctx, path string) error {
	rc, err := cl.call(fiber.MethodGet, path, nil, "text/event-stream", "")
	if err != nil {
		return err
	}
	if status := rc.Response.StatusCode(); status >= 400 {
		return decodeError(status, rc.Response.Body())
	}
	body := rc.Response.BodyStream()
	if body == nil {
		return c.Status(rc.Response.StatusCode()).Send(rc.Response.Body())
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer func() { _ = rc.Response.CloseBodyStream() }()
		buf := make([]byte, 4096)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if w.Flush() != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return nil
}

// decodeError reads the API's error envelope (or the flat mfa_required body).
func decodeError(status int, raw []byte) *APIError {
	var env struct {
		Error json.RawMessage `json:"error"`
		Challenge
	}
	e := &APIError{Status: status, Code: "HTTP_" + fmt.Sprint(status), Message: strings.TrimSpace(string(raw))}
	if json.Unmarshal(raw, &env) != nil {
		return e
	}
	var flat string
	if json.Unmarshal(env.Error, &flat) == nil {
		if flat == "mfa_required" {
			ch := env.Challenge
			e.Code, e.Message, e.MFA = "MFA_REQUIRED", ch.Message, &ch
		}
		return e
	}
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details M      `json:"details"`
	}
	if json.Unmarshal(env.Error, &body) == nil {
		e.Code, e.Message, e.Details = body.Code, body.Message, body.Details
		var fields struct {
			Fields []FieldIssue `json:"fields"`
		}
		if raw, err := json.Marshal(body.Details); err == nil && json.Unmarshal(raw, &fields) == nil {
			e.Fields = fields.Fields
		}
	}
	return e
}
