package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// API versions (DECISIONS 4): any 1.x.y up to 1.2.3; missing means the latest.
const LatestVersion = "1.2.3"

// latestMinor and latestPatch are LatestVersion's: every 1.x.y up to it
// is served, whatever patch an earlier minor reached.
const latestMinor, latestPatch = 2, 3

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
	minor := nums[1]
	if minor > latestMinor {
		return "", unsupported
	}
	if len(nums) == 2 {
		if minor == latestMinor {
			return LatestVersion, nil
		}
		return fmt.Sprintf("1.%d.0", minor), nil // a minor's shorthand: its first release
	}
	if minor == latestMinor && nums[2] > latestPatch {
		return "", unsupported
	}
	return fmt.Sprintf("1.%d.%d", minor, nums[2]), nil
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
// (the server sends the headers without the body). An unsupported version is
// refused after rate limiting (see refuseEarly), so the refusal carries the
// X-RateLimit-* headers too.
func (s *Server) requestContext(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodHead {
		c.Method(fiber.MethodGet)
	}
	if err := s.startRequest(c); err != nil {
		refuseEarly(c, err)
	}
	return c.Next()
}

// startRequest sets the request id and the served API version in headers
// and in the request's context. Errors: UNSUPPORTED_API_VERSION (the latest
// version is set meanwhile, for the error answer).
func (s *Server) startRequest(c *fiber.Ctx) error {
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
	c.SetUserContext(withRequestInfo(c.UserContext(), requestInfo{RequestID: id, Version: version, Logger: s.log, Metrics: s.metrics, Realm: s.cfg.PublicBaseURL}))
	return verr
}

type earlyRefusalKey struct{}

// refuseEarly records that the request is refused before its handler (an
// unsupported API version, an oversized body, a NUL in the body). The
// refusal is answered after rate limiting, so it carries the X-RateLimit-*
// headers like every answer: the credential's budget is counted, or the
// caller address's anonymous one for an oversized body or a request
// without a valid credential. The first refusal wins.
func refuseEarly(c *fiber.Ctx, err error) {
	if earlyRefusal(c) == nil {
		c.Locals(earlyRefusalKey{}, err)
	}
}

// earlyRefusal returns the refusal recorded by refuseEarly, if any.
func earlyRefusal(c *fiber.Ctx) error {
	err, _ := c.Locals(earlyRefusalKey{}).(error)
	return err
}

// isTrustedProxy reports whether a is one of TRUSTED_PROXIES.
func (s *Server) isTrustedProxy(a netip.Addr) bool {
	for _, pfx := range s.trustedProxies {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr returns the address of the connection's peer.
func peerAddr(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	return peer.Unmap()
}

// fromTrustedProxy reports whether the connection's peer is one of TRUSTED_PROXIES.
func (s *Server) fromTrustedProxy(c *fiber.Ctx) bool { return s.isTrustedProxy(peerAddr(c)) }

// clientIP returns the caller's address. X-Forwarded-For is read only when
// the peer is a trusted proxy (TRUSTED_PROXIES), and then from the right:
// the first address that is not itself a trusted proxy is the client, since
// every entry to its left was written by the client and proves nothing (a
// proxy appends the address it received the request from). An entry that
// cannot be read yields the invalid address, which no allow-list accepts.
// This is the one place the client address is decided (Fiber's own proxy
// handling is not used).
func (s *Server) clientIP(c *fiber.Ctx) netip.Addr {
	peer := peerAddr(c)
	if !s.isTrustedProxy(peer) {
		return peer
	}
	var hops []string
	for _, h := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(h), ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		addr, err := netip.ParseAddr(hop)
		if err != nil {
			ap, perr := netip.ParseAddrPort(hop) // some proxies add the port
			if perr != nil {
				return netip.Addr{}
			}
			addr = ap.Addr()
		}
		client = addr.Unmap()
		if !s.isTrustedProxy(client) {
			break
		}
	}
	return client
}

// versionedPath reports whether path is under /v1 or /api/v1, where the
// access restrictions apply (health, documents and discovery never carry them).
func versionedPath(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/api/v1/")
}

// origin returns where a request comes from, for the access restrictions.
func (s *Server) origin(ip netip.Addr) models.RequestOrigin {
	return models.RequestOrigin{IP: ip, Countries: s.cfg.GeoIP}
}

// requestOrigin returns the origin of the request of ctx (see authenticate).
func (s *Server) requestOrigin(ctx context.Context) models.RequestOrigin {
	ci, _ := ctx.Value(clientInfoKey{}).(clientInfo)
	ip, _ := netip.ParseAddr(ci.IP)
	return s.origin(ip)
}

// restrict evaluates the access restrictions that bind principal p on a
// versioned path: its organization's access policy and, for access tokens,
// the IP allow-lists of the client (clientID) and the user.
// Errors: IP_NOT_ALLOWED, ACCESS_RESTRICTED, INVALID_TOKEN, INTERNAL_ERROR.
func (s *Server) restrict(c *fiber.Ctx, p *models.Principal, clientID string, ip netip.Addr) error {
	if !versionedPath(c.Path()) {
		return nil
	}
	sub := identity.AccessSubject{OrganizationID: p.OrganizationID, ClientID: clientID, UserID: p.UserID}
	return s.identity.CheckAccess(c.UserContext(), sub, s.origin(ip))
}

// oauthClientEndpoints are where OAuth clients authenticate.
var oauthClientEndpoints = map[string]bool{"/oauth/token": true, "/oauth/introspect": true, "/oauth/revoke": true, "/oauth/device/code": true}

// restrictOAuthClient refuses a request to an OAuth client endpoint from
// outside the named client's IP allow-list or its organization's access
// policy, with an RFC 6749 body: 403 {"error": "access_denied"}. It returns
// false when it answered.
func (s *Server) restrictOAuthClient(c *fiber.Ctx, ip netip.Addr) bool {
	if c.Method() != fiber.MethodPost || !oauthClientEndpoints[c.Path()] {
		return true
	}
	clientID := c.FormValue("client_id")
	if scheme, creds, ok := strings.Cut(c.Get(fiber.HeaderAuthorization), " "); ok && strings.EqualFold(scheme, "Basic") {
		if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(creds)); err == nil {
			id, _, _ := strings.Cut(string(raw), ":")
			if unescaped, err := url.QueryUnescape(id); err == nil {
				clientID = unescaped
			}
		}
	}
	if !models.HasPrefix(clientID, models.PrefixClient) || len(clientID) > 64 {
		return true // unknown shape: the endpoint refuses it itself
	}
	err := s.identity.CheckClientAccess(c.UserContext(), clientID, s.origin(ip))
	if err == nil {
		return true
	}
	code := models.ErrorCode(err)
	method := c.FormValue("grant_type")
	if method == "" || len(method) > 40 {
		method = strings.TrimPrefix(c.Path(), "/oauth/")
	}
	s.audit(c.UserContext(), identity.AuditEvent{EventType: identity.AuditTokenRefused, Outcome: "failure", ClientID: clientID,
		AuthenticationMethod: method, Reason: string(code)})
	status, name := fiber.StatusForbidden, "access_denied"
	if code == models.CodeInternal {
		s.log.Error("checking an OAuth client's restrictions failed", "request_id", RequestID(c.UserContext()), "error", err)
		status, name = fiber.StatusInternalServerError, "server_error"
	}
	c.Set(fiber.HeaderContentType, "application/json;charset=UTF-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	_ = c.Status(status).JSON(map[string]string{"error": name, "error_description": models.AsError(err).Message + " (" + string(code) + ")"})
	return false
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

// authenticate resolves the presented credential, if any, into a principal,
// and applies the access restrictions that bind it (IP allow-lists, time and
// country rules; see restrict). Requests without a credential continue
// anonymously: each operation decides whether it needs one
// (UNAUTHENTICATED). A credential that fails is answered after rate limiting
// (see afterAuthentication), so failed attempts are throttled per client IP
// and carry the rate-limit headers too.
func (s *Server) authenticate(c *fiber.Ctx) error {
	ip := s.setClientInfo(c)
	if err := earlyRefusal(c); err != nil {
		if models.ErrorCode(err) != models.CodePayloadTooLarge {
			// An unsupported API-Version, a NUL in the body: counted against
			// the credential, as its other refusals are. An oversized body
			// is refused before any work, against the address.
			s.attributeRefusal(c, ip)
		}
		return c.Next()
	}
	if strings.HasPrefix(c.Path(), "/oauth/") || strings.HasPrefix(c.Path(), "/saml/") {
		if !s.restrictOAuthClient(c, ip) {
			return nil
		}
		return c.Next() // OAuth and SAML endpoints authenticate clients and IdPs themselves
	}
	secret, present := credential(c)
	if !present {
		if claims, ok, err := s.streamTokenFor(c); ok { // GET /v1/stream?token=
			if err == nil {
				err = s.resolveStreamToken(c, claims, ip)
			}
			if err != nil {
				c.Locals(authErrorKey{}, err)
				s.audit(c.UserContext(), identity.AuditEvent{EventType: identity.AuditCredentialFails, Outcome: "failure", AuthenticationMethod: "stream_token", Reason: string(models.ErrorCode(err))})
			}
			return c.Next()
		}
	}
	if !present {
		anonymous := c.UserContext()
		if err := s.resolveCertificate(c); err != nil { // mutual-TLS listener only
			c.Locals(authErrorKey{}, err)
		} else if p := models.PrincipalFrom(c.UserContext()); p != nil {
			if err := s.restrict(c, p, "", ip); err != nil {
				c.SetUserContext(anonymous)
				c.Locals(authErrorKey{}, err)
				s.audit(c.UserContext(), identity.AuditEvent{EventType: identity.AuditCredentialFails, Outcome: "failure", OrganizationID: p.OrganizationID,
					AuthenticationMethod: "mtls", Reason: string(models.ErrorCode(err))})
			}
		}
		return c.Next()
	}
	err := s.resolveCredential(c, secret, ip)
	if ref, ok := c.Locals(streamRefKey{}).(streamRef); ok && err == nil &&
		c.Method() == fiber.MethodPost && strings.HasSuffix(strings.ToLower(c.Path()), "/stream/token") { // as the router matches it
		c.SetUserContext(context.WithValue(c.UserContext(), streamCredentialKey{}, ref))
	}
	if err != nil {
		c.Locals(authErrorKey{}, err)
		method := "api_key"
		if !strings.HasPrefix(secret, "sk_") {
			method = "access_token"
		}
		s.audit(c.UserContext(), identity.AuditEvent{EventType: identity.AuditCredentialFails, Outcome: "failure", AuthenticationMethod: method, Reason: string(models.ErrorCode(err))})
	}
	return c.Next()
}

// attributeRefusal identifies the API key or access token of a request
// refused early (see refuseEarly), so that rate limiting counts the refusal
// against that credential: it sets the principal and nothing else. The
// request is not served, so none of a served request's effects happen: no
// signature is checked and no nonce spent, no stream token used, no usage
// recorded, no failure audited. A credential it cannot identify leaves the
// request anonymous (counted against the address).
func (s *Server) attributeRefusal(c *fiber.Ctx, ip netip.Addr) {
	if strings.HasPrefix(c.Path(), "/oauth/") || strings.HasPrefix(c.Path(), "/saml/") {
		return // their clients are identified by oauthClientBudget
	}
	secret, present := credential(c)
	if !present || secret == "" {
		return
	}
	ctx := c.UserContext()
	if strings.HasPrefix(secret, "sk_") {
		// A signing key's requests are its own only once signed: unchecked,
		// its refusals stay the address's.
		if auth, err := s.identity.AuthenticateAPIKeyCached(ctx, s.keys, secret, ip); err == nil && auth.Key.SigningSecret == "" {
			c.SetUserContext(models.WithPrincipal(ctx, auth.Principal))
		}
		return
	}
	if claims, err := s.tokens.Verify(ctx, secret); err == nil {
		if p, err := s.tokens.Principal(ctx, claims); err == nil {
			c.SetUserContext(models.WithPrincipal(ctx, p))
		}
	}
}

// setClientInfo records the caller's address and user agent in the
// request's context and returns the address.
func (s *Server) setClientInfo(c *fiber.Ctx) netip.Addr {
	ip := s.clientIP(c)
	shownIP := ""
	if ip.IsValid() {
		shownIP = ip.String()
	}
	c.SetUserContext(withClientInfo(c.UserContext(), shownIP, c.Get(fiber.HeaderUserAgent)))
	// The net/http handlers of /oauth/* see the request's fasthttp context:
	// give them the same client information (audit events, restrictions).
	c.Context().SetUserValue(clientInfoKey{}, clientInfo{IP: shownIP, UserAgent: c.Get(fiber.HeaderUserAgent)})
	return ip
}

type authErrorKey struct{}

// dropCachedKeys empties the cache of authenticated API keys once a
// request that may write (any method but GET, HEAD and OPTIONS) has been
// handled, before its answer is sent: a key's revocation, rotation or
// permission change, and a change of its organization's plan limits or
// access policy, applies to the next request this instance receives.
// Other instances see it within the cache's TTL (one second). A request
// refused with a 4xx (unauthenticated, rate-limited, invalid) changed
// nothing, so it keeps the cache: anyone could otherwise empty it at will.
// Nor do writes to the areas that hold no credential, permission, plan or
// policy (keepsCredentials): with them the cache would be emptied by most
// of the traffic, and every request would read its key again.
func (s *Server) dropCachedKeys(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if keepsCredentials(c.Path()) {
		return c.Next()
	}
	err := c.Next()
	if st := c.Response().StatusCode(); err != nil || st < 400 || st >= 500 {
		s.keys.Invalidate()
	}
	return err
}

// keepsCredentials reports whether a write to path (with or without the
// /api prefix, in any case, as the router matches it) can change no API
// key, key permission, user, OAuth client, plan limit or access policy
// (TestWritesThatKeepCachedKeys lists the routes, each reviewed): services and
// their operations, support, webhook subscriptions and events, analytics
// and GraphQL (which only reads). Batch requests are not among them: their
// items may go anywhere.
func keepsCredentials(path string) bool {
	p := strings.ToLower(path)
	p = strings.TrimPrefix(p, "/api")
	p, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return false
	}
	area, _, _ := strings.Cut(p, "/")
	switch area {
	case "services", "operations", "support", "webhooks", "events", "analytics", "graphql":
		return true
	}
	return false
}

// resolveCredential authenticates an API key or an access token from ip and
// applies the restrictions that bind it. A signing key's signature is
// accepted once (see replayGuard). Errors: those of AuthenticateAPIKey,
// VerifySignature, replayGuard.claim, resolveAccessToken and restrict.
func (s *Server) resolveCredential(c *fiber.Ctx, secret string, ip netip.Addr) error {
	if secret == "" {
		return models.Errorf(models.CodeUnauthenticated, "the Authorization header must be `Bearer <credential>`")
	}
	if !strings.HasPrefix(secret, "sk_") {
		if c.Get("X-API-Key") != "" && !auth.LooksLikeJWT(secret) { // neither a key nor an access token: a malformed key
			return models.Errorf(models.CodeInvalidAPIKey, "the API key is malformed")
		}
		return s.resolveAccessToken(c, secret, ip)
	}
	ctx := c.UserContext()
	auth, err := s.identity.AuthenticateAPIKeyCached(ctx, s.keys, secret, ip)
	if err != nil {
		return err
	}
	// A batch's sub-request is covered by the batch's own signature, which
	// was verified for this very key (its items are in the signed body).
	if item := batchItemFrom(ctx); item == nil || item.principalID != auth.Principal.ID {
		sig, err := s.identity.VerifySignature(auth.Key, identity.SignedRequest{Timestamp: c.Get("X-Timestamp"), Signature: c.Get("X-Signature"),
			Nonce: c.Get("X-Nonce"), Method: c.Method(), RawPath: string(c.Request().RequestURI()), Body: c.Request().Body()})
		if err != nil {
			return err
		}
		if sig != nil {
			if err := s.replays.claim(ctx, auth.Key.ID, sig); err != nil {
				return err
			}
		}
	}
	if versionedPath(c.Path()) { // the organization's policy came with the key: no second read
		if err := auth.Policy.Check(s.store.Now(), s.origin(ip)); err != nil {
			return err
		}
	}
	s.keyUsage.Record(auth.Key.ID, s.now())
	c.SetUserContext(models.WithPrincipal(ctx, auth.Principal))
	c.Locals(streamRefKey{}, streamRef{kind: streamRefAPIKey, keyID: auth.Key.ID})
	secret = strings.Clone(secret) // Fiber reuses its buffers after the handler
	setCredentialCheck(c, func(ctx context.Context) error {
		// Through the key cache: a revocation on any instance shows within
		// its TTL (one second), so streams that check often end quickly.
		_, err := s.identity.AuthenticateAPIKeyCached(ctx, s.keys, secret, ip)
		return err
	})
	return nil
}

// resolveAccessToken authenticates an RS256 access token (JWT): signature by
// kid, issuer, audience and expiry, the jti deny-list on every request, the
// principal's rate limits from its organization's plan, and the
// restrictions of its organization, client and user.
// Errors: INVALID_TOKEN, TOKEN_EXPIRED, IP_NOT_ALLOWED, ACCESS_RESTRICTED.
func (s *Server) resolveAccessToken(c *fiber.Ctx, raw string, ip netip.Addr) error {
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
	if err := s.restrict(c, p, claims.ClientID, ip); err != nil {
		return err
	}
	c.SetUserContext(models.WithPrincipal(ctx, p))
	c.Locals(streamRefKey{}, streamRef{kind: streamRefAccessToken, token: claims})
	raw = strings.Clone(raw)
	setCredentialCheck(c, func(ctx context.Context) error {
		claims, err := s.tokens.Verify(ctx, raw) // expiry and the deny-list
		if err != nil {
			return err
		}
		_, err = s.tokens.Principal(ctx, claims)
		return err
	})
	return nil
}

// authenticationError returns the early refusal of the request (see
// refuseEarly) or the failure of the presented credential, if any.
func authenticationError(c *fiber.Ctx) error {
	if err := earlyRefusal(c); err != nil {
		return err
	}
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

// fixedPathGuard answers 405 METHOD_NOT_ALLOWED (with Allow) to a method
// that a fixed path (one without parameters: /services/quotes,
// /services/catalog, ...) lacks, which a route with a parameter
// (/services/{service_id}) would otherwise take: GET /v1/services/quotes
// is not a request for the service "quotes". It looks the path up in
// s.fixedPaths, made once every route is registered.
func (s *Server) fixedPathGuard(c *fiber.Ctx) error {
	method := c.Method()
	if method == fiber.MethodOptions {
		return c.Next()
	}
	path := strings.TrimSuffix(c.Path(), "/")
	allow, ok := s.fixedPaths[path]
	if !ok && strings.ToLower(path) != path {
		allow, ok = s.fixedPaths[strings.ToLower(path)] // routing ignores case
	}
	if method == fiber.MethodHead {
		method = fiber.MethodGet
	}
	if !ok || slices.Contains(allow, method) {
		return c.Next()
	}
	c.Set(fiber.HeaderAllow, strings.Join(allow, ", "))
	return models.Errorf(models.CodeMethodNotAllowed, "%s is not allowed here; allowed: %s", c.Method(), strings.Join(allow, ", "))
}

// fixedPathMethods maps every route path without a parameter to its
// methods, in lower case, as fixedPathGuard looks them up: HEAD after GET
// (every GET route answers HEAD), OPTIONS left out.
func fixedPathMethods(routes []fiber.Route) map[string][]string {
	out := map[string][]string{}
	for _, r := range routes {
		if strings.ContainsAny(r.Path, ":*") || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			continue
		}
		path := strings.ToLower(strings.TrimSuffix(r.Path, "/"))
		if !slices.Contains(out[path], r.Method) {
			out[path] = append(out[path], r.Method)
		}
	}
	for path, methods := range out {
		out[path] = withHead(methods)
	}
	return out
}

// withHead returns methods with HEAD right after GET when GET is among
// them (the server answers HEAD wherever it answers GET).
func withHead(methods []string) []string {
	i := slices.Index(methods, http.MethodGet)
	if i < 0 || slices.Contains(methods, http.MethodHead) {
		return methods
	}
	return slices.Insert(slices.Clone(methods), i+1, http.MethodHead)
}
