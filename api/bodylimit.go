package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// largeBodyRoute is a route that accepts a body above MaxJSONBody.
type largeBodyRoute struct {
	method  string
	pattern string // Fiber form: /v1/support/tickets/:ticket_id/comments
	limit   int64
}

// allowLargeBody records that method on the huma path (under both mounts)
// accepts bodies up to limit bytes.
func (s *Server) allowLargeBody(method, path string, limit int64) {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			segs[i] = ":" + strings.Trim(seg, "{}")
		}
	}
	pattern := strings.Join(segs, "/")
	for _, prefix := range []string{"/v1", "/api/v1"} {
		s.largeBodies = append(s.largeBodies, largeBodyRoute{method: method, pattern: prefix + pattern, limit: limit})
	}
}

// bodyLimit returns the largest body the route of method and path accepts:
// MaxJSONBody unless the route was registered with a larger limit.
func (s *Server) bodyLimit(method, path string) int64 {
	for _, r := range s.largeBodies {
		if r.method == method && routeMatches(r.pattern, path) {
			return r.limit
		}
	}
	return MaxJSONBody
}

// limitBody refuses a body above its route's limit (413 PAYLOAD_TOO_LARGE)
// before any other work: before authentication, rate limiting or parsing.
// The declared Content-Length is compared first; a chunked body by the bytes
// received. Only the routes that take attachments accept more than
// MaxJSONBody.
// The refusal is answered after rate limiting (see refuseEarly), without
// authenticating the credential.
func (s *Server) limitBody(c *fiber.Ctx) error {
	limit := s.bodyLimit(c.Method(), c.Path())
	if int64(c.Request().Header.ContentLength()) > limit || int64(len(c.Request().Body())) > limit {
		refuseEarly(c, bodyTooLarge(limit))
	}
	if hasEscapedNUL(c.Request().Body()) && strings.Contains(strings.ToLower(c.Get(fiber.HeaderContentType)), "json") {
		// No text column takes it (PostgreSQL refuses it outright).
		refuseEarly(c, models.Invalid(models.FieldIssue{Field: "body", Issue: `a string holds the NUL character (\u0000), which no text field accepts`}))
	}
	return c.Next()
}

// hasEscapedNUL reports whether a JSON document holds the escape \u0000 in
// a string: a backslash-u-0000 preceded by an even number of backslashes
// (an odd number would make it literal text).
func hasEscapedNUL(body []byte) bool {
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte(`\u0000`))
		if j < 0 {
			return false
		}
		at := i + j
		n := 0
		for k := at - 1; k >= 0 && body[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = at + 1
	}
}

// bodyTooLarge is the 413 PAYLOAD_TOO_LARGE of a body above limit bytes:
// the message states the limit, details.limit_bytes (and max_bytes, its
// older name) give it in bytes.
func bodyTooLarge(limit int64) error {
	size := fmt.Sprintf("%d bytes", limit)
	if limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB (%d bytes)", limit>>20, limit)
	}
	return models.Errorf(models.CodePayloadTooLarge, "the request body is too large: this endpoint accepts at most %s", size).
		WithDetail("limit_bytes", limit).WithDetail("max_bytes", limit)
}

// checkBody applies the body conventions of docs/api.md#bodies to an
// operation's request before huma reads it (huma only looks a media type up
// case-sensitively, decodes invalid UTF-8 as U+FFFD, takes a body without
// Content-Type for JSON and never reads the body of an operation without
// one):
//   - an operation that takes a JSON body: a non-empty body needs a JSON
//     Content-Type, in any letter case, without a charset other than UTF-8
//     (415 UNSUPPORTED_MEDIA_TYPE otherwise), and must be UTF-8 (400
//     INVALID_JSON); the media type is passed on to huma in lower case;
//   - a POST, PUT, PATCH or DELETE that takes no body: an empty body, null or {}
//     is accepted whatever its Content-Type; anything else must be JSON
//     (415), valid UTF-8 JSON (400 INVALID_JSON) and an object without
//     fields (400 VALIDATION_ERROR naming each field).
//
// Operations with another media type (an iCalendar import) check their own.
func (s *Server) checkBody(ctx huma.Context, next func(huma.Context)) {
	c := humafiber.Unwrap(ctx)
	if err := bodyProblem(ctx.Operation(), c); err != nil {
		huma.WriteErr(s.API, ctx, 0, "", err)
		return
	}
	next(ctx)
}

// bodyProblem is checkBody's verdict on c's body for op (nil: none).
func bodyProblem(op *huma.Operation, c *fiber.Ctx) error {
	if op.RequestBody == nil {
		if !slices.Contains([]string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}, c.Method()) {
			return nil // GET and HEAD bodies mean nothing and are ignored
		}
		return noBodyProblem(c)
	}
	if _, ok := op.RequestBody.Content["application/json"]; !ok {
		return nil
	}
	body := c.Body() // decoded as huma reads it (Content-Encoding)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil // no body: huma answers a missing required one
	}
	mt, err := jsonMediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return err
	}
	if c.Get(fiber.HeaderContentType) != mt {
		c.Request().Header.SetContentType(strings.Clone(mt)) // huma looks it up as is
	}
	return notUTF8(body)
}

// noBodyProblem checks a body sent to an operation that takes none.
func noBodyProblem(c *fiber.Ctx) error {
	raw := c.Body()
	body := bytes.TrimSpace(raw)
	if len(body) == 0 || string(body) == "null" || (body[0] == '{' && body[len(body)-1] == '}' && len(bytes.TrimSpace(body[1:len(body)-1])) == 0) {
		return nil // nothing: no body, {} or JSON null
	}
	if _, err := jsonMediaType(c.Get(fiber.HeaderContentType)); err != nil {
		return err
	}
	if err := notUTF8(raw); err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return models.Errorf(models.CodeInvalidJSON, "the request body is not valid JSON: %s", plainJSONError(err.Error()))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return models.Invalid(models.FieldIssue{Field: "(body)", Issue: "this operation takes no body: send none, or {}"})
	}
	issues := make([]models.FieldIssue, 0, len(obj))
	for k := range obj {
		issues = append(issues, models.FieldIssue{Field: k, Issue: "unexpected property: this operation takes no body"})
	}
	slices.SortFunc(issues, func(a, b models.FieldIssue) int { return strings.Compare(a.Field, b.Field) })
	return models.Invalid(issues...)
}

// jsonMediaType returns the media type of a Content-Type header in lower
// case when it is JSON (application/json or a +json type) in UTF-8.
// Errors: UNSUPPORTED_MEDIA_TYPE.
func jsonMediaType(header string) (string, error) {
	if strings.TrimSpace(header) == "" {
		return "", models.Errorf(models.CodeUnsupportedMediaType, "the request has a body but no Content-Type: send the body as application/json")
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || (mt != fiber.MIMEApplicationJSON && !strings.HasSuffix(mt, "+json")) {
		return "", models.Errorf(models.CodeUnsupportedMediaType, "send the body as application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return "", models.Errorf(models.CodeUnsupportedMediaType, "send the body as application/json in UTF-8, not charset %s", cs)
	}
	return mt, nil
}

// notUTF8 refuses a JSON body that is not UTF-8 (encoding/json would
// read each invalid byte as U+FFFD). Errors: INVALID_JSON.
func notUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	at := 0
	for at < len(body) {
		r, size := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	return models.Errorf(models.CodeInvalidJSON, "the request body is not valid JSON: it is not UTF-8 (invalid byte at offset %d)", at).
		WithDetail("offset", at)
}
