package api

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/ory/fosite"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

//go:embed templates/authorize.html templates/device.html
var oauthTemplates embed.FS

// Device authorization (RFC 8628): codes live 10 minutes; devices poll every 5 seconds.
const (
	deviceCodeTTL      = 10 * time.Minute
	devicePollInterval = 5
)

// JWKSOutput is the JSON Web Key Set (RFC 7517) of the access-token signing
// keys: public parts only, one entry per active kid.
type JWKSOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         struct {
		Keys []auth.JWK `json:"keys"`
	}
}

// ServerMetadataOutput is the authorization server metadata (RFC 8414).
type ServerMetadataOutput struct {
	Body struct {
		Issuer                                 string   `json:"issuer"`
		AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
		TokenEndpoint                          string   `json:"token_endpoint"`
		JWKSURI                                string   `json:"jwks_uri"`
		IntrospectionEndpoint                  string   `json:"introspection_endpoint"`
		RevocationEndpoint                     string   `json:"revocation_endpoint"`
		RegistrationEndpoint                   string   `json:"registration_endpoint"`
		DeviceAuthorizationEndpoint            string   `json:"device_authorization_endpoint"`
		ScopesSupported                        []string `json:"scopes_supported"`
		ResponseTypesSupported                 []string `json:"response_types_supported"`
		GrantTypesSupported                    []string `json:"grant_types_supported"`
		CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
		TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
		IntrospectionEndpointAuthMethods       []string `json:"introspection_endpoint_auth_methods_supported"`
		RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	}
}

// Tokens returns the server's access-token service (issuing, verifying,
// revoking JWTs and rotating their signing keys).
func (s *Server) Tokens() *auth.Tokens { return s.tokens }

func (s *Server) registerIdentity() {
	oauth := auth.NewOAuth(s.store, s.tokens)
	page := template.Must(template.ParseFS(oauthTemplates, "templates/authorize.html"))
	devicePage := template.Must(template.ParseFS(oauthTemplates, "templates/device.html"))
	tags := []string{"Authentication"}

	registerRoot(s, huma.Operation{
		OperationID: "jwks", Method: http.MethodGet, Path: "/.well-known/jwks.json",
		Summary:     "JSON Web Key Set of the access-token signing keys",
		Description: "Public RSA keys (RS256) that verify the platform's access tokens, by `kid`. Verify a token by fetching the key named by its header's `kid`, requiring alg RS256, `iss` equal to the server's public address and `aud` equal to that address + `/v1`. See docs/authentication.md.",
		Tags:        tags,
	}, access{public: true}, func(ctx context.Context, _ *struct{}) (*JWKSOutput, error) {
		keys, err := s.tokens.Keys().JWKS(ctx)
		if err != nil {
			return nil, err
		}
		out := &JWKSOutput{CacheControl: "public, max-age=300"}
		out.Body.Keys = keys
		return out, nil
	})

	registerRoot(s, huma.Operation{
		OperationID: "oauth-server-metadata", Method: http.MethodGet, Path: "/.well-known/oauth-authorization-server",
		Summary: "OAuth 2.0 authorization server metadata (RFC 8414)", Tags: tags,
	}, access{public: true}, func(ctx context.Context, _ *struct{}) (*ServerMetadataOutput, error) {
		base := s.tokens.Issuer()
		out := &ServerMetadataOutput{}
		b := &out.Body
		b.Issuer, b.AuthorizationEndpoint, b.TokenEndpoint = base, base+"/oauth/authorize", base+"/oauth/token"
		b.JWKSURI, b.IntrospectionEndpoint, b.RevocationEndpoint = base+"/.well-known/jwks.json", base+"/oauth/introspect", base+"/oauth/revoke"
		b.RegistrationEndpoint = base + "/v1/auth/clients"
		for _, p := range models.KnownPermissions() {
			if p != "*" {
				b.ScopesSupported = append(b.ScopesSupported, identity.ScopeForPermission(p))
			}
		}
		b.ResponseTypesSupported = []string{"code"}
		b.GrantTypesSupported = []string{identity.GrantAuthorizationCode, identity.GrantRefreshToken, identity.GrantClientCredentials, identity.GrantDeviceCode}
		b.DeviceAuthorizationEndpoint = base + "/oauth/device/code"
		b.CodeChallengeMethodsSupported = []string{"S256"}
		b.TokenEndpointAuthMethodsSupported = []string{"client_secret_basic", "client_secret_post", "none"}
		b.IntrospectionEndpointAuthMethods = []string{"client_secret_basic", "client_secret_post"}
		b.RevocationEndpointAuthMethodsSupported = []string{"client_secret_basic", "client_secret_post"}
		return out, nil
	})

	s.registerClients() // /auth/clients: api/clients.go

	h := &oauthHandlers{s: s, oauth: oauth, page: page, devicePage: devicePage}
	s.App.Post("/oauth/device/code", adaptor.HTTPHandlerFunc(h.deviceCode))
	s.App.Get("/oauth/device", adaptor.HTTPHandlerFunc(h.device))
	s.App.Post("/oauth/device", adaptor.HTTPHandlerFunc(h.device))
	s.App.Get("/oauth/authorize", adaptor.HTTPHandlerFunc(h.authorize))
	s.App.Post("/oauth/authorize", adaptor.HTTPHandlerFunc(h.authorize))
	s.App.Post("/oauth/token", adaptor.HTTPHandlerFunc(h.token))
	s.App.Post("/oauth/introspect", adaptor.HTTPHandlerFunc(h.introspect))
	s.App.Post("/oauth/revoke", adaptor.HTTPHandlerFunc(h.revoke))
}

// oauthHandlers are the raw OAuth endpoints: their bodies and errors follow
// RFC 6749, 7009 and 7662, not the API's envelope (DECISIONS 3).
type oauthHandlers struct {
	s          *Server
	oauth      *auth.OAuth
	page       *template.Template
	devicePage *template.Template
}

const csrfCookie = "oauth_csrf"

func (h *oauthHandlers) provider(w http.ResponseWriter, r *http.Request) (fosite.OAuth2Provider, bool) {
	p, err := h.oauth.Provider(r.Context())
	if err != nil {
		h.s.log.Error("oauth provider unavailable", "error", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"server_error","error_description":"the authorization server is not available"}`))
		return nil, false
	}
	return p, true
}

// authorize serves the sign-in and consent page (GET) and its form (POST):
// the user signs in with e-mail and password and approves the scopes; the
// answer redirects to the client with code and state.
func (h *oauthHandlers) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := h.provider(w, r)
	if !ok || h.refuseRepeatedAuthorize(ctx, w, r, p) {
		return
	}
	ar, err := p.NewAuthorizeRequest(ctx, r)
	if err != nil {
		p.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	// PKCE with S256 is required of every client; refuse before showing the page.
	if form := ar.GetRequestForm(); form.Get("code_challenge") == "" || form.Get("code_challenge_method") != "S256" {
		p.WriteAuthorizeError(ctx, w, ar, fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge with code_challenge_method=S256."))
		return
	}
	if r.Method == http.MethodGet {
		h.render(w, r, ar, http.StatusOK, "", "")
		return
	}
	cookie, cerr := r.Cookie(csrfCookie)
	if cerr != nil || cookie.Value == "" || subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(r.PostFormValue("csrf_token"))) != 1 {
		h.render(w, r, ar, http.StatusForbidden, "Your sign-in form expired. Please try again.", "")
		return
	}
	if r.PostFormValue("action") != "approve" {
		p.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied.WithHint("The user denied the request."))
		return
	}
	email := r.PostFormValue("email")
	user, method, err := h.signIn(r, email)
	if err != nil {
		reason, msg := passwordRefusal(err)
		h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", ClientID: ar.GetClient().GetID(), AuthenticationMethod: "password", Reason: reason})
		h.render(w, r, ar, http.StatusUnauthorized, msg, email)
		return
	}
	if h.refuseRestricted(r, user, method, ar.GetClient().GetID(), func(status int, msg string) { h.render(w, r, ar, status, msg, email) }) {
		return
	}
	h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID, ClientID: ar.GetClient().GetID(),
		AuthenticationMethod: method, Scopes: strings.Join(ar.GetRequestedScopes(), " ")})
	sess, err := auth.UserSession(ar.GetClient(), user, method)
	if err != nil {
		h.render(w, r, ar, http.StatusForbidden, "This application is not available to your organization.", email)
		return
	}
	scopes := models.UserTokenScopes(ar.GetRequestedScopes(), ar.GetClient().GetScopes(), user.SessionPermissions())
	if len(scopes) == 0 && len(ar.GetRequestedScopes()) > 0 {
		h.render(w, r, ar, http.StatusForbidden, "Your role does not allow any of the permissions this application asks for.", email)
		return
	}
	for _, scope := range scopes {
		ar.GrantScope(scope)
	}
	resp, err := p.NewAuthorizeResponse(ctx, ar, sess)
	if err != nil {
		p.WriteAuthorizeError(ctx, w, ar, err)
		return
	}
	p.WriteAuthorizeResponse(ctx, w, ar, resp)
}

func (h *oauthHandlers) render(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, status int, msg, email string) {
	token := ""
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		token = c.Value
	} else {
		token = models.RandomString(32)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: token, Path: "/oauth", HttpOnly: true, SameSite: http.SameSiteLaxMode,
			Secure: strings.HasPrefix(h.s.tokens.Issuer(), "https://"), MaxAge: int((30 * time.Minute).Seconds())})
	}
	params := url.Values{}
	for k, v := range ar.GetRequestForm() {
		switch k {
		case "email", "password", "csrf_token", "action":
			continue
		}
		params[k] = v
	}
	name := ar.GetClient().GetID()
	if c, ok := ar.GetClient().(*auth.Client); ok && c.Name != "" {
		name = c.Name
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	// form-action governs the redirect that follows the form too: allow the
	// client's (registered, fosite-checked) redirect URI, or browsers stop
	// the approval before it reaches the client.
	formAction := "'self'"
	if u := ar.GetRedirectURI(); u != nil && u.Scheme != "" {
		if u.Host != "" {
			formAction += " " + u.Scheme + "://" + u.Host
		} else {
			formAction += " " + u.Scheme + ":" // a native app's private-use scheme (RFC 8252)
		}
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'")
	w.WriteHeader(status)
	data := map[string]any{
		"ClientName": name, "Scopes": []string(ar.GetRequestedScopes()), "Error": msg, "Email": email,
		"Action": "/oauth/authorize", "Params": params, "CSRF": token,
	}
	h.addSignInOptions(r, data, "/oauth/authorize?"+params.Encode())
	_ = h.page.Execute(w, data)
}

// signIn returns the person approving a sign-in page: the user of the
// browser's portal session (a SAML or portal sign-in) when no password is
// typed, or the user whose e-mail and password are posted, with the
// authentication method. Errors: UNAUTHENTICATED.
func (h *oauthHandlers) signIn(r *http.Request, email string) (*identity.User, string, error) {
	password := r.PostFormValue("password")
	if password == "" {
		if c, err := r.Cookie(sessionCookie); err == nil {
			if ps, user, err := h.s.identity.PortalSessionByToken(r.Context(), c.Value); err == nil {
				return user, ps.AuthMethod, nil
			}
		}
	}
	user, err := h.s.identity.CheckPassword(r.Context(), email, password)
	return user, "password", err
}

// refuseRestricted answers a sign-in page for a person whose IP allow-list
// or organization policy refuses this request (403 with the reason on the
// page), and reports whether it did.
func (h *oauthHandlers) refuseRestricted(r *http.Request, user *identity.User, method, clientID string, show func(status int, msg string)) bool {
	err := h.s.userAccess(r.Context(), user)
	if err == nil {
		return false
	}
	if models.ErrorCode(err) == models.CodeInternal {
		h.s.log.Error("checking a user's restrictions failed", "error", err)
		show(http.StatusInternalServerError, "Something went wrong. Please try again.")
		return true
	}
	h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", OrganizationID: user.OrganizationID, UserID: user.ID,
		ClientID: clientID, AuthenticationMethod: method, Reason: string(models.ErrorCode(err))})
	show(http.StatusForbidden, "Access from here or at this time is not allowed for your account: "+models.AsError(err).Message)
	return true
}

// addSignInOptions tells a sign-in page who is already signed in (portal
// session) and where single sign-on starts, returning to back afterwards.
func (h *oauthHandlers) addSignInOptions(r *http.Request, data map[string]any, back string) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if _, user, err := h.s.identity.PortalSessionByToken(r.Context(), c.Value); err == nil {
			data["SessionUser"] = user.Email
		}
	}
	if h.s.cfg.SAMLIdPMetadataURL != "" {
		data["SSOURL"] = "/saml/sso?RelayState=" + url.QueryEscape(back)
	}
}

// token is the token endpoint: authorization_code (PKCE S256),
// client_credentials and refresh_token (rotation, reuse revokes the grant).
func (h *oauthHandlers) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := h.provider(w, r)
	if !ok {
		return
	}
	if refuseRepeated(w, r) {
		h.auditTokenRefused(r, fosite.ErrInvalidRequest)
		return
	}
	switch grant := r.PostFormValue("grant_type"); grant {
	case identity.GrantAuthorizationCode, identity.GrantRefreshToken, identity.GrantClientCredentials:
	case identity.GrantDeviceCode:
		h.deviceToken(w, r)
		return
	default:
		p.WriteAccessError(ctx, w, fosite.NewAccessRequest(&auth.Session{}), fosite.ErrUnsupportedGrantType.WithHintf("grant_type %q is not supported.", grant))
		return
	}
	if _, _, basic := r.BasicAuth(); !basic && r.PostFormValue("client_id") == "" {
		h.auditTokenRefused(r, fosite.ErrInvalidClient)
		h.invalidClient(w, "the client must identify itself (HTTP Basic, or client_id in the form) and authenticate as it was registered")
		return
	}
	ar, err := p.NewAccessRequest(ctx, r, &auth.Session{})
	if err != nil {
		h.auditTokenRefused(r, err)
		if errors.Is(err, fosite.ErrInvalidClient) {
			h.invalidClient(w, "client authentication failed")
			return
		}
		p.WriteAccessError(ctx, w, ar, err)
		return
	}
	if err := narrowRefreshScopes(ar); err != nil {
		h.auditTokenRefused(r, err)
		p.WriteAccessError(ctx, w, ar, err)
		return
	}
	if err := h.capUserScopes(ctx, ar); err != nil {
		h.auditTokenRefused(r, err)
		p.WriteAccessError(ctx, w, ar, err)
		return
	}
	if ar.GetGrantTypes().ExactOne(identity.GrantClientCredentials) {
		sess, ok := auth.ClientSession(ar.GetClient())
		if !ok {
			p.WriteAccessError(ctx, w, ar, fosite.ErrServerError)
			return
		}
		ar.SetSession(sess)
		requested := ar.GetRequestedScopes()
		if len(requested) == 0 {
			requested = ar.GetClient().GetScopes()
		}
		for _, scope := range requested {
			ar.GrantScope(scope)
		}
	}
	resp, err := p.NewAccessResponse(ctx, ar)
	if errors.Is(err, auth.ErrSpent) { // a parallel exchange of the same code or refresh token won
		err = fosite.ErrInvalidGrant.WithHint("The authorization code or refresh token was already used.")
	}
	if err != nil {
		h.auditTokenRefused(r, err)
		p.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp.SetTokenType("Bearer")
	if sess, ok := ar.GetSession().(*auth.Session); ok && sess.ExpiresIn > 0 {
		// The token's lifetime (its exp less its iat: 3600), not the time
		// left a moment after issuing, which fosite truncates to 3599.
		resp.SetExtra("expires_in", int64(sess.ExpiresIn))
	}
	ev := identity.AuditEvent{EventType: identity.AuditTokenIssued, ClientID: ar.GetClient().GetID(), AuthenticationMethod: strings.Join(ar.GetGrantTypes(), " "),
		TokenType: "access_token", Scopes: strings.Join(ar.GetGrantedScopes(), " "), SessionID: ar.GetID()}
	if sess, ok := ar.GetSession().(*auth.Session); ok {
		ev.OrganizationID = sess.OrganizationID
		if sess.UserID != "" {
			resp.SetExtra("user_id", sess.UserID)
			ev.UserID = sess.UserID
		}
	}
	h.s.auditHTTP(r, ev)
	p.WriteAccessResponse(ctx, w, ar, resp)
}

// capUserScopes applies the person's current role to an authorization-code
// exchange or a refresh (models.UserTokenScopes): the new tokens (the
// scopes a narrowed refresh keeps for the refresh token included) never
// carry what the role does not permit, even if it changed since sign-in.
// Client-credentials requests are left alone.
func (h *oauthHandlers) capUserScopes(ctx context.Context, ar fosite.AccessRequester) error {
	sess, ok := ar.GetSession().(*auth.Session)
	if !ok || sess.UserID == "" {
		return nil
	}
	req, ok := ar.(*fosite.AccessRequest)
	if !ok {
		return fosite.ErrServerError.WithDebug("unexpected access request type")
	}
	user, err := h.s.identity.DeviceUser(ctx, sess.UserID)
	if models.ErrorCode(err) == models.CodeNotFound || (err == nil && user.OrganizationID != sess.OrganizationID) {
		return fosite.ErrInvalidGrant.WithHint("The user of this grant no longer exists or has moved.")
	}
	if err != nil {
		return fosite.ErrServerError.WithWrap(err)
	}
	granted := req.GetGrantedScopes()
	capped := models.UserTokenScopes(granted, req.GetClient().GetScopes(), user.SessionPermissions())
	if len(capped) == 0 && len(granted) > 0 {
		return fosite.ErrInvalidScope.WithHint("None of the grant's scopes is allowed for the user's role.")
	}
	req.GrantedScope = fosite.Arguments(capped)
	if sess.GrantScope != nil {
		// A narrowed refresh keeps the grant's scopes on the new refresh
		// token: capped by the role as well.
		sess.GrantScope = models.UserTokenScopes(sess.GrantScope, req.GetClient().GetScopes(), user.SessionPermissions())
	}
	return nil
}

// introspect answers RFC 7662 for an authenticated client.
func (h *oauthHandlers) introspect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := h.provider(w, r)
	if !ok || refuseRepeated(w, r) {
		return
	}
	bearer := strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ")
	if !bearer {
		if _, _, basic := r.BasicAuth(); !basic {
			id, secret := r.PostFormValue("client_id"), r.PostFormValue("client_secret")
			if id == "" || secret == "" {
				h.invalidClient(w, "the client must authenticate (HTTP Basic, or client_id and client_secret in the form)")
				return
			}
			// client_secret_post: the introspector reads HTTP Basic only.
			r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
		}
	}
	ir, err := p.NewIntrospectionRequest(ctx, r, &auth.Session{})
	if err != nil {
		if errors.Is(err, fosite.ErrRequestUnauthorized) && !errors.Is(err, fosite.ErrInactiveToken) && !bearer {
			h.invalidClient(w, "client authentication failed")
			return
		}
		p.WriteIntrospectionError(ctx, w, err)
		return
	}
	if ir.IsActive() && !h.mayIntrospect(ctx, p, r, bearer, ir.GetAccessRequester()) {
		// RFC 7662 §2.2: a token the caller may not learn about is
		// answered as inactive. A client learns only about the tokens
		// of its own organization and environment.
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		_, _ = w.Write([]byte(`{"active":false}`))
		return
	}
	p.WriteIntrospectionResponse(ctx, w, ir)
}

// mayIntrospect reports whether the caller of an introspection (a client
// by HTTP Basic, or the bearer of an access token) belongs to the
// organization and environment of the token it asks about.
func (h *oauthHandlers) mayIntrospect(ctx context.Context, p fosite.OAuth2Provider, r *http.Request, bearer bool, token fosite.Requester) bool {
	tok, ok := token.GetSession().(*auth.Session)
	if !ok || tok.OrganizationID == "" {
		return false
	}
	var org, env string
	if bearer {
		raw := strings.TrimSpace(r.Header.Get("Authorization")[len("bearer "):])
		_, caller, err := p.IntrospectToken(ctx, raw, fosite.AccessToken, &auth.Session{})
		if err != nil {
			return false
		}
		s, ok := caller.GetSession().(*auth.Session)
		if !ok {
			return false
		}
		org, env = s.OrganizationID, s.Environment
	} else {
		id, _, _ := r.BasicAuth()
		if unescaped, err := url.QueryUnescape(id); err == nil {
			id = unescaped
		}
		c, err := h.oauth.Storage().GetClient(ctx, id)
		if err != nil {
			return false
		}
		cl, ok := c.(*auth.Client)
		if !ok {
			return false
		}
		org, env = cl.OrganizationID, string(cl.Environment)
	}
	return org == tok.OrganizationID && env == tok.Environment
}

// revoke answers RFC 7009 for an authenticated client: a revoked access token
// is refused by the API at once; a revoked refresh token ends its grant.
func (h *oauthHandlers) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := h.provider(w, r)
	if !ok || refuseRepeated(w, r) {
		return
	}
	client, _, _ := r.BasicAuth()
	if client == "" {
		client = r.PostFormValue("client_id")
	}
	if client == "" {
		h.invalidClient(w, "the client must authenticate (HTTP Basic, or client_id and client_secret in the form)")
		return
	}
	err := p.NewRevocationRequest(ctx, r)
	ev := identity.AuditEvent{EventType: identity.AuditTokenRevoked, ClientID: clip(client, 40), TokenType: r.PostFormValue("token_type_hint")}
	if err != nil {
		ev.Outcome, ev.Reason = "failure", oauthErrorName(err)
	}
	h.s.auditHTTP(r, ev)
	if errors.Is(err, fosite.ErrInvalidClient) {
		h.invalidClient(w, "client authentication failed")
		return
	}
	p.WriteRevocationResponse(ctx, w, err)
}

// invalidClient answers a failed or missing client authentication as RFC
// 6749 section 5.2 requires: 401 invalid_client with a WWW-Authenticate
// challenge for HTTP Basic.
func (h *oauthHandlers) invalidClient(w http.ResponseWriter, description string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="`+h.s.tokens.Issuer()+`"`)
	oauthError(w, http.StatusUnauthorized, "invalid_client", description)
}

// auditTokenRefused records a refused token request.
func (h *oauthHandlers) auditTokenRefused(r *http.Request, err error) {
	client, _, _ := r.BasicAuth()
	if client == "" {
		client = r.PostFormValue("client_id")
	}
	h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditTokenRefused, Outcome: "failure", ClientID: clip(client, 40),
		AuthenticationMethod: clip(r.PostFormValue("grant_type"), 40), Reason: oauthErrorName(err)})
}

func oauthErrorName(err error) string {
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		return rfc.ErrorField
	}
	return "server_error"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// oauthError writes an RFC 6749 / RFC 8628 error body.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// clientError answers a failed client authentication.
func clientError(w http.ResponseWriter, err error) {
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		oauthError(w, rfc.CodeField, rfc.ErrorField, rfc.GetDescription())
		return
	}
	oauthError(w, http.StatusInternalServerError, "server_error", "the authorization server failed")
}

// deviceCode is the device authorization endpoint (RFC 8628 3.1-3.2).
func (h *oauthHandlers) deviceCode(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if refuseRepeated(w, r) {
		return
	}
	client, err := h.oauth.AuthenticateClient(ctx, r)
	if err != nil {
		var rfc *fosite.RFC6749Error
		if errors.As(err, &rfc) && rfc.CodeField < 500 {
			h.invalidClient(w, "client authentication failed: "+rfc.GetDescription())
			return
		}
		clientError(w, err)
		return
	}
	if !client.GetGrantTypes().Has(identity.GrantDeviceCode) {
		oauthError(w, http.StatusBadRequest, "unauthorized_client", "the client is not registered for the device_code grant")
		return
	}
	scopes := strings.Fields(r.PostForm.Get("scope"))
	if len(scopes) == 0 {
		scopes = client.GetScopes()
	}
	for _, sc := range scopes {
		if !client.GetScopes().Has(sc) {
			oauthError(w, http.StatusBadRequest, "invalid_scope", "the client may not request scope "+sc)
			return
		}
	}
	deviceCode, g, err := h.s.identity.CreateDeviceGrant(ctx, client.GetID(), scopes, deviceCodeTTL, devicePollInterval)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "the device code could not be created")
		return
	}
	verify := h.s.tokens.Issuer() + "/oauth/device"
	writeJSON(w, map[string]any{
		"device_code": deviceCode, "user_code": identity.FormatUserCode(g.UserCode),
		"verification_uri": verify, "verification_uri_complete": verify + "?user_code=" + url.QueryEscape(identity.FormatUserCode(g.UserCode)),
		"expires_in": int(deviceCodeTTL / time.Second), "interval": g.Interval,
	})
}

// deviceToken answers the device_code grant at the token endpoint (RFC 8628 3.4-3.5).
func (h *oauthHandlers) deviceToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	client, err := h.oauth.AuthenticateClient(ctx, r)
	if err != nil {
		clientError(w, err)
		return
	}
	if !client.GetGrantTypes().Has(identity.GrantDeviceCode) {
		oauthError(w, http.StatusBadRequest, "unauthorized_client", "the client is not registered for the device_code grant")
		return
	}
	code := r.PostForm.Get("device_code")
	if code == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "device_code is required")
		return
	}
	g, outcome, err := h.s.identity.PollDeviceGrant(ctx, code, client.GetID())
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "the device code could not be checked")
		return
	}
	switch outcome {
	case "":
	case identity.PollPending:
		oauthError(w, http.StatusBadRequest, outcome, "the user has not approved the device yet")
		return
	case identity.PollSlowDown:
		oauthError(w, http.StatusBadRequest, outcome, "polling too fast: wait 5 more seconds between requests")
		return
	case identity.PollDenied:
		oauthError(w, http.StatusBadRequest, outcome, "the user denied the device")
		return
	case identity.PollExpired:
		oauthError(w, http.StatusBadRequest, outcome, "the device code has expired: start again")
		return
	default:
		oauthError(w, http.StatusBadRequest, identity.PollInvalid, "the device code is unknown, used, or belongs to another client")
		return
	}
	user, err := h.s.identity.DeviceUser(ctx, g.UserID)
	if err != nil {
		oauthError(w, http.StatusBadRequest, identity.PollInvalid, "the approving user no longer exists")
		return
	}
	sess, err := auth.UserSession(client, user, "device")
	if err != nil {
		oauthError(w, http.StatusBadRequest, identity.PollInvalid, "the approving user belongs to another organization")
		return
	}
	scopes := models.UserTokenScopes(g.ScopeList(), client.GetScopes(), user.SessionPermissions())
	if len(scopes) == 0 && len(g.ScopeList()) > 0 {
		oauthError(w, http.StatusBadRequest, "invalid_scope", "none of the requested scopes is allowed for the approving user's role")
		return
	}
	toks, err := h.oauth.IssueTokens(ctx, client, sess, scopes)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "tokens could not be issued")
		return
	}
	h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditTokenIssued, OrganizationID: user.OrganizationID, UserID: user.ID, ClientID: client.GetID(),
		AuthenticationMethod: identity.GrantDeviceCode, TokenType: "access_token", Scopes: toks.Scope})
	body := map[string]any{"access_token": toks.AccessToken, "token_type": "Bearer", "expires_in": toks.ExpiresIn, "scope": toks.Scope, "user_id": user.ID}
	if toks.RefreshToken != "" {
		body["refresh_token"] = toks.RefreshToken
	}
	writeJSON(w, body)
}

// device is the user-code page (GET) and its form (POST): the user enters
// the code, signs in and approves or denies the device.
func (h *oauthHandlers) device(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	data := map[string]any{"UserCode": r.FormValue("user_code")}
	show := func(status int) {
		token := ""
		if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
			token = c.Value
		} else {
			token = models.RandomString(32)
			http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: token, Path: "/oauth", HttpOnly: true, SameSite: http.SameSiteLaxMode,
				Secure: strings.HasPrefix(h.s.tokens.Issuer(), "https://"), MaxAge: int((30 * time.Minute).Seconds())})
		}
		data["CSRF"] = token
		h.addSignInOptions(r, data, "/oauth/device?user_code="+url.QueryEscape(r.FormValue("user_code")))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		w.WriteHeader(status)
		_ = h.devicePage.Execute(w, data)
	}
	userCode := r.FormValue("user_code")
	if userCode != "" {
		if g, err := h.s.identity.PendingDeviceGrant(ctx, userCode); err == nil {
			data["Scopes"] = g.ScopeList()
			if c, err := h.s.identity.LookupOAuthClient(ctx, g.ClientID); err == nil {
				data["ClientName"] = c.Name
			}
		}
	}
	if r.Method == http.MethodGet {
		show(http.StatusOK)
		return
	}
	cookie, cerr := r.Cookie(csrfCookie)
	if cerr != nil || cookie.Value == "" || subtle.ConstantTimeCompare([]byte(cookie.Value), []byte(r.PostFormValue("csrf_token"))) != 1 {
		data["Error"] = "Your form expired. Please try again."
		show(http.StatusForbidden)
		return
	}
	g, err := h.s.identity.PendingDeviceGrant(ctx, userCode)
	if err != nil {
		data["Error"] = "This code is unknown or has expired. Check the code on your device."
		show(http.StatusNotFound)
		return
	}
	// Approving and denying both need a signed-in person of the client's
	// organization: an anonymous visitor who knows a user code cannot deny it.
	email := r.PostFormValue("email")
	data["Email"] = email
	user, method, err := h.signIn(r, email)
	if err != nil {
		reason, msg := passwordRefusal(err)
		h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", ClientID: g.ClientID, AuthenticationMethod: "device", Reason: reason})
		data["Error"] = msg
		show(http.StatusUnauthorized)
		return
	}
	if h.refuseRestricted(r, user, "device", g.ClientID, func(status int, msg string) { data["Error"] = msg; show(status) }) {
		return
	}
	c, err := h.s.identity.LookupOAuthClient(ctx, g.ClientID)
	if err != nil || c.OrganizationID != user.OrganizationID {
		data["Error"] = "This device's application is not available to your organization."
		show(http.StatusForbidden)
		return
	}
	if r.PostFormValue("action") != "approve" {
		if err := h.s.identity.DecideDeviceGrant(ctx, userCode, "", false); err != nil {
			data["Error"] = "This code is unknown or has expired."
			show(http.StatusNotFound)
			return
		}
		h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID, ClientID: g.ClientID,
			AuthenticationMethod: "device", Reason: "device denied; signed in by " + method})
		data["Done"] = "The device was denied. You can close this page."
		show(http.StatusOK)
		return
	}
	if _, _, clientScopes := c.Lists(); len(g.ScopeList()) > 0 && len(models.UserTokenScopes(g.ScopeList(), clientScopes, user.SessionPermissions())) == 0 {
		data["Error"] = "Your role does not allow any of the permissions this device asks for."
		show(http.StatusForbidden)
		return
	}
	if err := h.s.identity.DecideDeviceGrant(ctx, userCode, user.ID, true); err != nil {
		data["Error"] = "This code is unknown or has expired."
		show(http.StatusNotFound)
		return
	}
	h.s.auditHTTP(r, identity.AuditEvent{EventType: identity.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID, ClientID: g.ClientID, AuthenticationMethod: "device", Reason: "signed in by " + method})
	data["Done"] = "Your device is connected. You can return to it and close this page."
	show(http.StatusOK)
}
