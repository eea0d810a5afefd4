package api

import (
	"bytes"
	"fmt"
	"strings"

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
