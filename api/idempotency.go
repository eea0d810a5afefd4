package api

import (
	"bytes"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// idempotent replays the first answer to a POST that carries an
// Idempotency-Key. It runs as a huma middleware after authorize, so a stored
// answer is served only to a caller that passed authentication and the
// operation's access rule (permission, administrator, MFA challenge) on this
// very request. The key is scoped to the credential (kind and id),
// organization, environment, method and path: another credential of the same
// organization never receives the answer. Answers are stored sealed (see
// models.CompleteIdempotent); 401, 403, 429 and 5xx answers are not stored.
func (s *Server) idempotent(ctx huma.Context, next func(huma.Context)) {
	key := ctx.Header("Idempotency-Key")
	p := models.PrincipalFrom(ctx.Context())
	if ctx.Method() != fiber.MethodPost || key == "" || p == nil {
		next(ctx) // anonymous public operations keep no answers
		return
	}
	if !models.ValidIdempotencyKey(key) {
		huma.WriteErr(s.API, ctx, 0, "", models.Invalid(models.FieldIssue{Field: "Idempotency-Key", Issue: "must be 1 to 255 printable ASCII characters"}))
		return
	}
	c := humafiber.Unwrap(ctx)
	sc := models.IdempotencyScope{PrincipalKind: p.Kind, PrincipalID: p.ID, OrganizationID: p.OrganizationID, Environment: p.Environment,
		Method: ctx.Method(), Path: idempotencyPath(ctx), Key: strings.Clone(key)}
	rctx := c.UserContext()
	stored, err := s.store.BeginIdempotent(rctx, sc, models.BodyHash(c.Request().Body()))
	if err != nil {
		huma.WriteErr(s.API, ctx, 0, "", err)
		return
	}
	if stored != nil {
		ctx.SetHeader("Idempotent-Replayed", "true")
		if stored.Location != "" {
			ctx.SetHeader(fiber.HeaderLocation, stored.Location)
		}
		if stored.ContentType != "" {
			ctx.SetHeader(fiber.HeaderContentType, stored.ContentType)
		}
		ctx.SetStatus(stored.Status)
		_, _ = ctx.BodyWriter().Write(stored.Body)
		return
	}
	finished := false
	defer func() {
		if !finished { // a panic: let a retry process the request afresh
			_ = s.store.ReleaseIdempotent(rctx, sc)
		}
	}()
	next(ctx)
	finished = true
	status := c.Response().StatusCode()
	if status == fiber.StatusUnauthorized || status == fiber.StatusForbidden || status == fiber.StatusTooManyRequests || status >= 500 {
		if err := s.store.ReleaseIdempotent(rctx, sc); err != nil {
			s.log.Error("releasing an idempotency key failed", "request_id", RequestID(rctx), "error", err)
		}
		return
	}
	answer := models.IdempotentAnswer{Status: status, ContentType: string(c.Response().Header.ContentType()),
		Location: string(c.Response().Header.Peek(fiber.HeaderLocation)), Body: bytes.Clone(c.Response().Body())}
	if err := s.store.CompleteIdempotent(rctx, sc, answer); err != nil {
		s.log.Error("storing an idempotent answer failed", "request_id", RequestID(rctx), "error", err)
	}
}

// idempotencyPath is the path an Idempotency-Key is scoped to: the matched
// operation's path template, under /v1, with the request's path parameter
// values. Every spelling the router serves as one endpoint is one scope:
// /v1/x and /api/v1/x, any letter case of the fixed segments, with or
// without a trailing slash. Parameter values keep their case (identifiers
// are case-sensitive): /v1/x/abc and /v1/x/ABC are two scopes.
func idempotencyPath(ctx huma.Context) string {
	tpl := ctx.Operation().Path
	if rest, ok := strings.CutPrefix(tpl, "/api/v1/"); ok {
		tpl = "/v1/" + rest
	}
	segs := strings.Split(tpl, "/")
	for i, seg := range segs {
		if name, ok := strings.CutPrefix(seg, "{"); ok && strings.HasSuffix(name, "}") {
			segs[i] = ctx.Param(strings.TrimSuffix(name, "}"))
		}
	}
	return strings.Join(segs, "/")
}
