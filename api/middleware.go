package api

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
)

// API versions (DECISIONS 4): any 1.x.y up to 1.2.3; missing means the latest.
const LatestVersion = "1.2.3"

var knownMinors = map[int]int{0: 0, 1: 0, 2: 3} // minor -> newest patch

// NegotiateVersion returns the version to serve for an API-Version header.
// Errors: UNSUPPORTED_API_VERSION (details.supported).
func NegotiateVersion(header string) (string, error) {
	h := strings.TrimPrefix(strings.TrimSpace(header), "v")
	if h == "" {
		return LatestVersion, nil
	}
	unsupported := models.Errorf(models.CodeUnsupportedAPIVersion, "API version %q is not supported", header).
		WithDetail("supported", []string{"1.0", "1.1", "1.2", "1.2.3"}).WithDetail("latest", LatestVersion)
	parts := strings.Split(h, ".")
	if len(parts) > 3 {
		return "", unsupported
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 4 {
			return "", unsupported
		}
		nums[i] = n
	}
	if nums[0] != 1 {
		return "", unsupported
	}
	if len(nums) == 1 {
		return LatestVersion, nil
	}
	newest, ok := knownMinors[nums[1]]
	if !ok {
		return "", unsupported
	}
	patch := newest
	if len(nums) == 3 {
		if nums[2] > newest {
			return "", unsupported
		}
		patch = nums[2]
	}
	return fmt.Sprintf("1.%d.%d", nums[1], patch), nil
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// recoverPanics turns a panic into a logged 500 INTERNAL_ERROR.
func (s *Server) recoverPanics(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic while serving a request", "request_id", RequestID(c.UserContext()), "path", c.Path(), "panic", r, "stack", string(debug.Stack()))
			err = models.Internal(fmt.Errorf("panic: %v", r))
		}
	}()
	return c.Next()
}

// requestContext sets the request id and the API version, echoes them in
// headers and carries them in the request's context. HEAD is served as GET
// (the server sends the headers without the body).
func (s *Server) requestContext(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodHead {
		c.Method(fiber.MethodGet)
	}
	id := c.Get("X-Request-Id")
	if !validRequestID(id) {
		id = models.NewID(models.PrefixRequest)
	}
	c.Set("X-Request-Id", id)
	version, verr := NegotiateVersion(c.Get("API-Version"))
	if verr != nil {
		version = LatestVersion
	}
	c.Set("API-Version", version)
	c.SetUserContext(withRequestInfo(c.UserContext(), requestInfo{RequestID: id, Version: version, Logger: s.log}))
	if verr != nil {
		return verr
	}
	return c.Next()
}

// clientIP returns the caller's address (forwarded headers only from trusted proxies).
func clientIP(c *fiber.Ctx) netip.Addr {
	addr, err := netip.ParseAddr(c.IP())
	if err != nil {
		return netip.Addr{}
	}
	return addr.Unmap()
}

// credential returns the presented credential: Authorization Bearer or X-API-Key.
func credential(c *fiber.Ctx) (string, bool) {
	if k := c.Get("X-API-Key"); k != "" {
		return strings.TrimSpace(k), true
	}
	auth := c.Get(fiber.HeaderAuthorization)
	if auth == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", true
	}
	return strings.TrimSpace(token), true
}

// authenticate resolves the presented credential, if any, into a principal.
// Requests without a credential continue anonymously: each operation decides
// whether it needs one (UNAUTHENTICATED). A credential that fails is answered
// after rate limiting (see afterAuthentication), so failed attempts are
// throttled per client IP and carry the rate-limit headers too.
func (s *Server) authenticate(c *fiber.Ctx) error {
	c.SetUserContext(withClientInfo(c.UserContext(), c.IP(), c.Get(fiber.HeaderUserAgent)))
	if strings.HasPrefix(c.Path(), "/oauth/") || strings.HasPrefix(c.Path(), "/saml/") {
		return c.Next() // OAuth and SAML endpoints authenticate clients and IdPs themselves
	}
	secret, present := credential(c)
	if !present {
		if err := s.resolveCertificate(c); err != nil { // mutual-TLS listener only
			c.Locals(authErrorKey{}, err)
		}
		return c.Next()
	}
	if err := s.resolveCredential(c, secret); err != nil {
		c.Locals(authErrorKey{}, err)
		method := "api_key"
		if !strings.HasPrefix(secret, "sk_") {
			method = "access_token"
		}
		s.audit(c.UserContext(), models.AuditEvent{EventType: models.AuditCredentialFails, Outcome: "failure", AuthenticationMethod: method, Reason: string(models.ErrorCode(err))})
	}
	return c.Next()
}

type authErrorKey struct{}

func (s *Server) resolveCredential(c *fiber.Ctx, secret string) error {
	if secret == "" {
		return models.Errorf(models.CodeUnauthenticated, "the Authorization header must be `Bearer <credential>`")
	}
	if !strings.HasPrefix(secret, "sk_") {
		return s.resolveAccessToken(c, secret)
	}
	ctx := c.UserContext()
	auth, err := s.store.AuthenticateAPIKey(ctx, secret, clientIP(c))
	if err != nil {
		return err
	}
	if err := s.store.VerifySignature(auth.Key, c.Get("X-Timestamp"), c.Get("X-Signature"), c.Method(), string(c.Request().RequestURI())); err != nil {
		return err
	}
	s.keyUsage.Record(auth.Key.ID, s.now())
	c.SetUserContext(models.WithPrincipal(ctx, auth.Principal))
	return nil
}

// resolveAccessToken authenticates an RS256 access token (JWT): signature by
// kid, issuer, audience and expiry, the jti deny-list on every request, and
// the principal's rate limits from its organization's plan.
// Errors: INVALID_TOKEN, TOKEN_EXPIRED.
func (s *Server) resolveAccessToken(c *fiber.Ctx, raw string) error {
	if !auth.LooksLikeJWT(raw) {
		return models.Errorf(models.CodeInvalidToken, "the bearer token is not a valid API key or access token")
	}
	ctx := c.UserContext()
	claims, err := s.tokens.Verify(ctx, raw)
	if err != nil {
		return err
	}
	p, err := s.tokens.Principal(ctx, claims)
	if err != nil {
		return err
	}
	c.SetUserContext(models.WithPrincipal(ctx, p))
	return nil
}

// authenticationError returns the failure of the presented credential, if any.
func authenticationError(c *fiber.Ctx) error {
	err, _ := c.Locals(authErrorKey{}).(error)
	return err
}

// afterAuthentication answers a failed credential, or continues.
func (s *Server) afterAuthentication(c *fiber.Ctx) error {
	if err := authenticationError(c); err != nil {
		return err
	}
	return c.Next()
}

// runNext runs the rest of the chain and answers its error at once, so the
// calling middleware sees the final status and body.
func (s *Server) runNext(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return s.fiberErrorHandler(c, err)
	}
	return nil
}

// conditionalGet answers 304 Not Modified when a GET's ETag matches If-None-Match.
func (s *Server) conditionalGet(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet {
		return c.Next()
	}
	if err := s.runNext(c); err != nil {
		return err
	}
	inm := c.Get(fiber.HeaderIfNoneMatch)
	etag := string(c.Response().Header.Peek(fiber.HeaderETag))
	if inm == "" || etag == "" || c.Response().StatusCode() != fiber.StatusOK {
		return nil
	}
	for _, candidate := range strings.Split(inm, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == etag || candidate == "*" {
			c.Status(fiber.StatusNotModified)
			c.Response().ResetBody()
			c.Response().Header.Del(fiber.HeaderContentType)
			c.Response().Header.Del(fiber.HeaderContentLength)
			return nil
		}
	}
	return nil
}

// idempotency replays the first answer to a POST that carries an
// Idempotency-Key (DECISIONS 6), scoped to organization, environment, method
// and path. 401, 403, 429 and 5xx answers are not stored.
func (s *Server) idempotency(c *fiber.Ctx) error {
	key := c.Get("Idempotency-Key")
	if c.Method() != fiber.MethodPost || key == "" {
		return c.Next()
	}
	p := models.PrincipalFrom(c.UserContext())
	if p == nil {
		return c.Next() // the operation answers 401 itself
	}
	if len(key) > 255 || strings.ContainsFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return models.Invalid(models.FieldIssue{Field: "Idempotency-Key", Issue: "must be 1 to 255 printable ASCII characters"})
	}
	// /v1/x and /api/v1/x are one endpoint: a retry on either mount replays.
	path := strings.TrimPrefix(c.Path(), "/api")
	sc := models.IdempotencyScope{OrganizationID: p.OrganizationID, Environment: p.Environment, Method: c.Method(), Path: path, Key: key}
	ctx := c.UserContext()
	stored, err := s.store.BeginIdempotent(ctx, sc, models.BodyHash(c.Body()))
	if err != nil {
		return err
	}
	if stored != nil {
		c.Set("Idempotent-Replayed", "true")
		if stored.Location != "" {
			c.Set(fiber.HeaderLocation, stored.Location)
		}
		if stored.ContentType != "" {
			c.Set(fiber.HeaderContentType, stored.ContentType)
		}
		c.Status(stored.Status)
		return c.Send(stored.Body)
	}
	if err := s.runNext(c); err != nil {
		_ = s.store.ReleaseIdempotent(ctx, sc)
		return err
	}
	status := c.Response().StatusCode()
	if status == fiber.StatusUnauthorized || status == fiber.StatusForbidden || status == fiber.StatusTooManyRequests || status >= 500 {
		return s.store.ReleaseIdempotent(ctx, sc)
	}
	body := bytes.Clone(c.Response().Body())
	location := string(c.Response().Header.Peek(fiber.HeaderLocation))
	if err := s.store.CompleteIdempotent(ctx, sc, status, string(c.Response().Header.ContentType()), location, body); err != nil {
		s.log.Error("storing an idempotent answer failed", "request_id", RequestID(ctx), "error", err)
	}
	return nil
}
