package api

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/api/portal"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// The portal: server-rendered pages for people who sign in with SAML single
// sign-on or a password. A sign-in starts a portal session held in an
// HttpOnly cookie (never readable by scripts); the API does not accept the
// cookie as a credential, but POST /v1/auth/session/token exchanges it,
// with the session's CSRF token, for an access token (JWT).
const (
	portalPath    = portal.Path
	sessionCookie = "platform_session"
)

// sessionID is the audit identifier of a portal session: a prefix of its
// token hash (the token itself is never logged).
func sessionID(ps *identity.PortalSession) string { return "ps_" + ps.TokenHash[:16] }

func (s *Server) setSessionCookie(c *fiber.Ctx, token string, expires time.Time) {
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: token, Path: "/", Expires: expires, HTTPOnly: true,
		Secure: strings.HasPrefix(s.cfg.PublicBaseURL, "https://"), SameSite: fiber.CookieSameSiteLaxMode})
}

func (s *Server) clearSessionCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: sessionCookie, Value: "", Path: "/", Expires: time.Unix(0, 0), HTTPOnly: true,
		Secure: strings.HasPrefix(s.cfg.PublicBaseURL, "https://"), SameSite: fiber.CookieSameSiteLaxMode})
}

func (s *Server) registerPortal() {
	s.portal = portal.New(portal.Config{Sessions: portalSessions{s}, API: s.inProcess, SessionCookie: sessionCookie,
		SSO: s.cfg.SAMLIdPMetadataURL != "", Secure: strings.HasPrefix(s.cfg.PublicBaseURL, "https://"), Log: s.log, Now: s.now})
	s.portal.Mount(s.App)
	// Password sign-in (the SAML sign-in starts at /saml/sso?RelayState=/portal).
	s.App.Post(portalPath+"/login", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		want := c.Cookies(portal.LoginCookie)
		if len(want) < 32 || subtle.ConstantTimeCompare([]byte(want), []byte(c.FormValue("csrf_token"))) != 1 {
			return s.portal.RenderSignIn(c, http.StatusForbidden, "Your sign-in form expired. Please try again.", "")
		}
		email := c.FormValue("email")
		user, err := s.identity.CheckPassword(ctx, email, c.FormValue("password"))
		if err != nil {
			reason, msg := passwordRefusal(err)
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", AuthenticationMethod: "password", Reason: "portal: " + reason})
			return s.portal.RenderSignIn(c, http.StatusUnauthorized, msg, email)
		}
		if err := s.userAccess(ctx, user); err != nil {
			if models.ErrorCode(err) == models.CodeInternal {
				return err
			}
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", OrganizationID: user.OrganizationID, UserID: user.ID,
				AuthenticationMethod: "password", Reason: "portal: " + string(models.ErrorCode(err))})
			return s.portal.RenderSignIn(c, http.StatusForbidden, "Access from here or at this time is not allowed for your account: "+models.AsError(err).Message, email)
		}
		token, ps, err := s.identity.StartPortalSession(ctx, user, "password", nil)
		if err != nil {
			return err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID,
			AuthenticationMethod: "password", TokenType: "portal_session", SessionID: sessionID(ps)})
		s.setSessionCookie(c, token, ps.ExpiresAt)
		return c.Redirect(identity.SafeRedirectTarget(c.FormValue("next"), portalPath), http.StatusSeeOther)
	})
	s.App.Post(portalPath+"/logout", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		token := c.Cookies(sessionCookie)
		if ps, user, err := s.identity.PortalSessionByToken(ctx, token); err == nil {
			if subtle.ConstantTimeCompare([]byte(ps.CSRFToken), []byte(c.FormValue("csrf_token"))) != 1 {
				return s.portal.RenderError(c, http.StatusForbidden, "This sign-out form is not from your session (its security token is missing or old). Go back, reload the page and try again.")
			}
			if err := s.identity.EndPortalSession(ctx, token); err != nil {
				return err
			}
			s.portal.Forget(sessionID(ps))
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLogout, OrganizationID: user.OrganizationID, UserID: user.ID, AuthenticationMethod: ps.AuthMethod, SessionID: sessionID(ps)})
		}
		s.clearSessionCookie(c)
		return c.Redirect(portalPath, http.StatusSeeOther)
	})

	tags := []string{"Authentication"}
	register(s, huma.Operation{OperationID: "get-session", Method: http.MethodGet, Path: "/auth/session", Summary: "The portal session of this browser",
		Description: "Reads the HttpOnly `platform_session` cookie set by a SAML (or portal password) sign-in. Returns who is signed in and the session's CSRF token, which POST /auth/session/token and DELETE /auth/session require in X-CSRF-Token. 401 UNAUTHENTICATED without a live session.",
		Tags:        tags,
	}, access{public: true}, func(ctx context.Context, in *SessionInput) (*SessionOutput, error) {
		ps, user, err := s.identity.PortalSessionByToken(ctx, in.Session)
		if err != nil {
			return nil, err
		}
		out := &SessionOutput{CacheControl: "no-store"} // it carries the CSRF token
		out.Body.Session = sessionItem(ps, user)
		return out, nil
	})
	register(s, huma.Operation{OperationID: "exchange-session-token", Method: http.MethodPost, Path: "/auth/session/token", Summary: "Exchange the portal session for an access token",
		Description: "The token delivery of SAML single sign-on for API use: with the `platform_session` cookie and the session's CSRF token in X-CSRF-Token, answers an RS256 access token (the OAuth token response shape) for the signed-in user, valid for an hour or until the session ends, whichever is sooner. With `?env=test` the token acts in the sandbox (as a `sk_test_` key would); without, in live. 401 UNAUTHENTICATED without a live session, 403 INSUFFICIENT_PERMISSIONS with a wrong CSRF token.",
		Tags:        tags,
	}, access{public: true}, func(ctx context.Context, in *SessionTokenInput) (*SessionTokenOutput, error) {
		ps, user, err := s.sessionWithCSRF(ctx, &in.SessionChangeInput)
		if err != nil {
			return nil, err
		}
		issued, err := s.sessionToken(ctx, auth.Grant{Subject: user.ID, OrganizationID: user.OrganizationID, Environment: models.Environment(in.Env),
			Permissions: user.SessionPermissions(), AuthMethod: ps.AuthMethod}, ps.ExpiresAt)
		if err != nil {
			return nil, err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditTokenIssued, OrganizationID: user.OrganizationID, UserID: user.ID, AuthenticationMethod: ps.AuthMethod,
			TokenType: "access_token", SessionID: sessionID(ps), Scopes: strings.Join(user.SessionPermissions(), " ")})
		out := &SessionTokenOutput{CacheControl: "no-store"}
		b := &out.Body
		b.AccessToken, b.TokenType, b.ExpiresIn, b.UserID = issued.Token, "Bearer", issued.ExpiresIn, user.ID
		scopes := make([]string, 0)
		for _, p := range user.SessionPermissions() {
			scopes = append(scopes, identity.ScopeForPermission(p))
		}
		b.Scope = strings.Join(scopes, " ")
		return out, nil
	})
	register(s, huma.Operation{OperationID: "end-session", Method: http.MethodDelete, Path: "/auth/session", Summary: "Sign out of the portal session",
		Description: "Ends the session of the `platform_session` cookie (X-CSRF-Token required) and clears the cookie. Access tokens already exchanged stay valid until they expire or are revoked (POST /oauth/revoke).",
		Tags:        tags, DefaultStatus: http.StatusNoContent,
	}, access{public: true}, func(ctx context.Context, in *SessionChangeInput) (*SessionEndOutput, error) {
		ps, user, err := s.sessionWithCSRF(ctx, in)
		if err != nil {
			return nil, err
		}
		if err := s.identity.EndPortalSession(ctx, in.Session); err != nil {
			return nil, err
		}
		s.portal.Forget(sessionID(ps))
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLogout, OrganizationID: user.OrganizationID, UserID: user.ID, AuthenticationMethod: ps.AuthMethod, SessionID: sessionID(ps)})
		secure := ""
		if strings.HasPrefix(s.cfg.PublicBaseURL, "https://") {
			secure = "; Secure"
		}
		return &SessionEndOutput{SetCookie: sessionCookie + "=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax" + secure}, nil
	})
}

// passwordRefusal returns the audit reason and the page's message of a
// refused password sign-in: one message whatever the cause (unknown e-mail,
// wrong password), plus when to try again if the account is locked.
func passwordRefusal(err error) (reason, message string) {
	if n := identity.RetryAfter(err); n > 0 {
		return "account locked after repeated wrong passwords",
			fmt.Sprintf("E-mail or password is wrong. Too many failed attempts: try again in %d minute(s).", (n+59)/60)
	}
	return "wrong e-mail or password", "E-mail or password is wrong."
}

// sessionWithCSRF returns the live session of the request's cookie after
// checking its CSRF token and the restrictions that bind its user.
// Errors: UNAUTHENTICATED, INSUFFICIENT_PERMISSIONS, IP_NOT_ALLOWED, ACCESS_RESTRICTED.
func (s *Server) sessionWithCSRF(ctx context.Context, in *SessionChangeInput) (*identity.PortalSession, *identity.User, error) {
	ps, user, err := s.identity.PortalSessionByToken(ctx, in.Session)
	if err != nil {
		return nil, nil, err
	}
	if subtle.ConstantTimeCompare([]byte(ps.CSRFToken), []byte(in.CSRF)) != 1 {
		return nil, nil, models.Errorf(models.CodeInsufficientPermissions, "X-CSRF-Token does not match the session (GET /v1/auth/session returns it)")
	}
	if err := s.userAccess(ctx, user); err != nil {
		return nil, nil, err
	}
	return ps, user, nil
}

// userAccess applies to a person signing in or using a portal session the
// restrictions that bind their requests with a token: their IP allow-list
// and their organization's access policy (docs/authentication.md, "Access
// restrictions"). Errors: IP_NOT_ALLOWED, ACCESS_RESTRICTED, INTERNAL_ERROR.
func (s *Server) userAccess(ctx context.Context, u *identity.User) error {
	return s.identity.CheckAccess(ctx, identity.AccessSubject{OrganizationID: u.OrganizationID, UserID: u.ID}, s.requestOrigin(ctx))
}

// portalSessions gives the portal its sessions, their access tokens and
// their users' messages.
type portalSessions struct{ s *Server }

// Session returns the live session of token after its user's restrictions.
func (ps portalSessions) Session(ctx context.Context, token string) (*portal.Session, error) {
	sess, user, err := ps.s.identity.PortalSessionByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	if err := ps.s.userAccess(ctx, user); err != nil {
		return nil, err
	}
	return &portal.Session{ID: sessionID(sess), UserID: user.ID, Name: user.Name, Email: user.Email, Role: string(user.Role), OrganizationID: user.OrganizationID,
		AuthMethod: sess.AuthMethod, CSRFToken: sess.CSRFToken, ExpiresAt: sess.ExpiresAt, Permissions: user.SessionPermissions()}, nil
}

// AccessToken mints the token POST /v1/auth/session/token would hand out
// for the session (same permissions and authentication method; never past
// the session's end), in env.
func (ps portalSessions) AccessToken(ctx context.Context, sess *portal.Session, env models.Environment) (string, time.Time, error) {
	issued, err := ps.s.sessionToken(ctx, auth.Grant{Subject: sess.UserID, OrganizationID: sess.OrganizationID, Environment: env,
		Permissions: sess.Permissions, AuthMethod: sess.AuthMethod}, sess.ExpiresAt)
	if err != nil {
		return "", time.Time{}, err
	}
	return issued.Token, issued.ExpiresAt, nil
}

// sessionToken issues g for a portal session that ends at ends: an access
// token's lifetime, never past the session's end (at least a second).
func (s *Server) sessionToken(ctx context.Context, g auth.Grant, ends time.Time) (*auth.Issued, error) {
	g.TTL = max(min(auth.AccessTokenTTL, ends.Sub(s.store.Now()).Truncate(time.Second)), time.Second)
	return s.tokens.Issue(ctx, g)
}

// Inbox returns the e-mail and SMS sent to the session's user.
func (ps portalSessions) Inbox(ctx context.Context, sess *portal.Session) ([]eventlog.Inbox, error) {
	recipients := []string{sess.Email}
	if phone, err := ps.s.identity.MFAPhoneOf(ctx, sess.UserID); err == nil && phone != "" {
		recipients = append(recipients, phone)
	}
	return ps.s.eventlog.UserInbox(ctx, sess.OrganizationID, recipients, 20)
}

// SessionInput carries the portal session cookie.
type SessionInput struct {
	Session string `cookie:"platform_session" doc:"the HttpOnly session cookie set by a SAML or portal sign-in"`
}

// SessionChangeInput carries the session cookie and its CSRF token.
type SessionChangeInput struct {
	Session string `cookie:"platform_session" doc:"the HttpOnly session cookie set by a SAML or portal sign-in"`
	CSRF    string `header:"X-CSRF-Token" doc:"the session's csrf_token (GET /v1/auth/session)"`
}

// SessionTokenInput is the session exchange's input: the session, and the
// environment the token acts in (the portal's sandbox view asks for test).
type SessionTokenInput struct {
	SessionChangeInput
	Env string `query:"env" enum:"live,test" default:"live" doc:"The environment the token acts in: live, or test (the sandbox, as a sk_test_ key)"`
}

// SessionItem describes a portal session.
type SessionItem struct {
	UserID         string   `json:"user_id"`
	Email          string   `json:"email"`
	Name           string   `json:"name"`
	Role           string   `json:"role"`
	OrganizationID string   `json:"organization_id"`
	AuthMethod     string   `json:"authentication_method" enum:"saml,password"`
	Groups         []string `json:"groups" doc:"the identity provider's groups at sign-in"`
	CSRFToken      string   `json:"csrf_token" doc:"send as X-CSRF-Token to exchange or end the session"`
	CreatedAt      string   `json:"created_at"`
	ExpiresAt      string   `json:"expires_at"`
}

func sessionItem(ps *identity.PortalSession, u *identity.User) SessionItem {
	groups := []string{}
	if ps.Groups != "" {
		groups = strings.Split(ps.Groups, ",")
	}
	return SessionItem{UserID: u.ID, Email: u.Email, Name: u.Name, Role: string(u.Role), OrganizationID: u.OrganizationID, AuthMethod: ps.AuthMethod,
		Groups: groups, CSRFToken: ps.CSRFToken, CreatedAt: models.Timestamp(ps.CreatedAt), ExpiresAt: models.Timestamp(ps.ExpiresAt)}
}

// SessionOutput is the answer of GET /auth/session.
type SessionOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         struct {
		Envelope
		Session SessionItem `json:"session"`
	}
}

// SessionTokenOutput is the token exchange's answer (the OAuth token response shape of spec 2.6).
type SessionTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         struct {
		Envelope
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type" example:"Bearer"`
		ExpiresIn   int    `json:"expires_in" example:"3600"`
		Scope       string `json:"scope" doc:"space-separated scopes the token carries"`
		UserID      string `json:"user_id"`
	}
}

// SessionEndOutput clears the session cookie.
type SessionEndOutput struct {
	SetCookie string `header:"Set-Cookie"`
}
