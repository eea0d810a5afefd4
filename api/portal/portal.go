// Package portal is the customer portal: server-rendered pages
// (html/template) for people signed in with SAML single sign-on or a
// password. Every page acts through the platform's own API, in process:
// it calls the JSON endpoints through the API's handler with an access
// token minted for the session's user (the same token POST
// /v1/auth/session/token hands out), so the API alone decides what a person
// may see and do. Static assets (CSS, JavaScript) are embedded and served
// under /portal/static; pages carry a strict Content-Security-Policy (no
// inline script or style) and every form a per-session CSRF token.
package portal

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/api/internal/inproc"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Path is where the portal is mounted.
const Path = "/portal"

// LoginCookie holds the CSRF token of the sign-in form (before a session exists).
const LoginCookie = "portal_csrf"

// CSP is the Content-Security-Policy of every portal page: only the
// portal's own files, no inline script or style.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Session is the signed-in person a page is rendered for.
type Session struct {
	ID             string // the session's audit id
	UserID         string
	Name           string
	Email          string
	Role           string
	OrganizationID string
	AuthMethod     string
	CSRFToken      string
	ExpiresAt      time.Time
	// Permissions are the session's permissions (the access token's);
	// they decide what the navigation offers, never what is allowed.
	Permissions []string
}

// Can reports whether the session's permissions include perm.
func (s *Session) Can(perm string) bool {
	return (&models.Principal{Permissions: s.Permissions}).Can(perm)
}

// Sessions is what the portal needs of the platform's sign-in.
type Sessions interface {
	// Session returns the live session of the cookie's token after the
	// restrictions that bind its user. Errors: UNAUTHENTICATED (no live
	// session), IP_NOT_ALLOWED and ACCESS_RESTRICTED, INTERNAL_ERROR.
	Session(ctx context.Context, token string) (*Session, error)
	// AccessToken mints an access token for the session's user in env and
	// returns it with its expiry (the portal reuses it until shortly
	// before: see tokenCache).
	AccessToken(ctx context.Context, s *Session, env models.Environment) (string, time.Time, error)
	// Inbox returns the messages sent to the session's user.
	Inbox(ctx context.Context, s *Session) ([]eventlog.Inbox, error)
}

// Config are the portal's collaborators.
type Config struct {
	Sessions Sessions
	// API serves the platform's JSON API in process (the app's requests
	// start from the context they are sent with: inproc.Adopt).
	API *inproc.Dispatcher
	// SessionCookie is the name of the session cookie.
	SessionCookie string
	// SSO offers single sign-on on the sign-in page.
	SSO bool
	// Secure marks cookies Secure (the public address is https).
	Secure bool
	Log    *slog.Logger // the portal's log (default: slog.Default())
	// Now is the clock of the cached access tokens' expiry (default time.Now).
	Now func() time.Time
}

// Portal serves the portal's pages.
type Portal struct {
	cfg    Config
	pages  *pages
	tokens *tokenCache // the access tokens of the sessions' pages
}

// New builds the portal; it panics if its embedded templates do not parse.
func New(cfg Config) *Portal {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Portal{cfg: cfg, pages: parsePages(), tokens: newTokenCache(cfg.Now)}
}

// area is one part of the portal: its navigation entry (none when Label is
// empty) and its routes.
type area struct {
	nav      navItem
	register func(r fiber.Router)
}

// areas are the portal's parts in navigation order. A new area adds its
// file (one register method) and one line here.
func (p *Portal) areas() []area {
	return []area{
		{navItem{ID: "nav-dashboard", Label: "Dashboard", Path: Path}, p.registerDashboard},
		{navItem{ID: "nav-services", Label: "Services", Path: Path + "/services", Permission: "services:read"}, p.registerServices},
		{navItem{ID: "nav-order", Label: "Order", Path: Path + "/order", Permission: "services:write"}, p.registerOrder},
		{navItem{ID: "nav-operations", Label: "Operations", Path: Path + "/operations", Permission: "services:read"}, p.registerOperations},
		{navItem{ID: "nav-tickets", Label: "Tickets", Path: Path + "/tickets", Permission: "support:read"}, p.registerTickets},
		{navItem{ID: "nav-billing", Label: "Billing", Path: Path + "/billing", Permission: "billing:read"}, p.registerBilling},
		{navItem{ID: "nav-developers", Label: "Developers", Path: Path + "/developers", AnyOf: []string{"auth:manage", "webhooks:manage"}}, p.registerDevelopers},
		{navItem{}, p.registerMFA},
	}
}

// Mount registers the portal's routes on app under Path.
func (p *Portal) Mount(app *fiber.App) {
	r := app.Group(Path)
	sub, _ := fs.Sub(staticFiles, "static")
	r.Get("/static/*", p.static(sub))
	for _, a := range p.areas() {
		a.register(r)
	}
}

// static serves the embedded assets, cached for an hour.
func (p *Portal) static(files fs.FS) fiber.Handler {
	return func(c *fiber.Ctx) error {
		name := c.Params("*")
		raw, err := fs.ReadFile(files, name)
		if err != nil || strings.Contains(name, "..") {
			return p.renderError(c, nil, http.StatusNotFound, "There is no such file.")
		}
		switch {
		case strings.HasSuffix(name, ".css"):
			c.Type("css", "utf-8")
		case strings.HasSuffix(name, ".js"):
			c.Type("js", "utf-8")
		case strings.HasSuffix(name, ".svg"):
			c.Type("svg")
		}
		c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
		c.Set("X-Content-Type-Options", "nosniff")
		return c.Send(raw)
	}
}

// Request is a signed-in page request: the session and the API as its user.
type Request struct {
	Session *Session
	API     *Client
	Env     models.Environment
}

// handler is a page handler for a signed-in person.
type handler func(c *fiber.Ctx, r *Request) error

// page wraps h: it loads the session (no session: the sign-in page),
// checks the CSRF token of every POST, gives the API client the session's
// access token (cached: see tokenCache) and renders the
// portal's page for an error h returns.
func (p *Portal) page(h handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		s, err := p.cfg.Sessions.Session(ctx, c.Cookies(p.cfg.SessionCookie))
		switch {
		case err == nil:
		case models.ErrorCode(err) == models.CodeUnauthenticated:
			if c.Method() != fiber.MethodGet {
				return p.RenderSignIn(c, http.StatusUnauthorized, "Your session ended. Please sign in again.", "")
			}
			return p.RenderSignIn(c, http.StatusOK, "", "")
		case models.ErrorCode(err) == models.CodeInternal:
			return err
		default:
			return p.RenderSignIn(c, http.StatusForbidden, "Access from here or at this time is not allowed for your account: "+models.AsError(err).Message, "")
		}
		if c.Method() == fiber.MethodPost && !validCSRF(c, s.CSRFToken) {
			return p.renderError(c, s, http.StatusForbidden, "This form is not from your session (its security token is missing or old). Go back, reload the page and try again.")
		}
		env := requestEnv(c)
		token, err := p.tokens.token(ctx, s, env, p.cfg.Sessions.AccessToken)
		if err != nil {
			return err
		}
		r := &Request{Session: s, Env: env, API: newClient(ctx, p.cfg.API, c.Context(), token)}
		if c.Method() == fiber.MethodPost {
			r.API.Challenge = c.FormValue("mfa_challenge_id")
			r.API.IdempotencyKey = formIdempotencyKey(c)
		}
		if err := h(c, r); err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) {
				return p.renderAPIError(c, r, apiErr)
			}
			return err
		}
		return nil
	}
}

// formIdempotencyKey is the form's idempotency_key (a random value the
// forms that show a secret once carry: the formKey template function),
// when the API would accept it as an Idempotency-Key; "" otherwise, and
// the form is sent without one.
func formIdempotencyKey(c *fiber.Ctx) string {
	if k := c.FormValue("idempotency_key"); models.ValidIdempotencyKey(k) {
		return k
	}
	return ""
}

// validCSRF checks the form's csrf_token (or the X-CSRF-Token header of a
// script's request) against the session's.
func validCSRF(c *fiber.Ctx, want string) bool {
	got := c.FormValue("csrf_token")
	if got == "" {
		got = c.Get("X-CSRF-Token")
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// renderAPIError renders the page for an API refusal: 401 MFA_REQUIRED
// becomes the challenge form, 403 and 404 their pages, a validation error
// the message with the fields it names; anything else is an error of the
// portal.
func (p *Portal) renderAPIError(c *fiber.Ctx, r *Request, e *APIError) error {
	switch {
	case e.MFA != nil:
		return p.renderChallenge(c, r, e.MFA, "")
	case e.Status == http.StatusNotFound:
		return p.renderError(c, r.Session, http.StatusNotFound, "Not found: it does not exist or is not yours to see.")
	case e.Status == http.StatusForbidden:
		return p.renderError(c, r.Session, http.StatusForbidden, "You are not allowed to do this: "+e.Message)
	case e.Status == http.StatusTooManyRequests:
		return p.renderError(c, r.Session, http.StatusTooManyRequests, "Too many requests: wait a moment and try again.")
	case e.Status >= 400 && e.Status < 500:
		return p.renderError(c, r.Session, e.Status, errorMessage(e))
	}
	return p.renderError(c, r.Session, http.StatusBadGateway, "The platform could not answer ("+e.Code+"). Try again in a moment.")
}

// setHeaders sets the headers of every portal page.
func setHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set("Content-Security-Policy", CSP)
}
