package api

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// samlRequestTTL is how long the service provider waits for the IdP's answer.
const samlRequestTTL = 10 * time.Minute

// samlBrowserCookie binds a sign-in to the browser that started it: a random
// value set at /saml/sso, whose hash is kept with the request and checked at
// /saml/acs (no login CSRF: a response obtained in another browser is refused).
const samlBrowserCookie = "saml_request"

// samlCookie returns the binding cookie (maxAge 0 with an empty value clears
// it). The IdP's answer reaches /saml/acs as a cross-site POST, which
// browsers send SameSite=Lax cookies with only in narrow cases, so: behind
// https, SameSite=None; Secure; on plain http (development), where None
// needs Secure, no SameSite attribute (the browser's default: Firefox sends
// it, Chromium sends it on a top-level POST within two minutes).
func (s *Server) samlCookie(value string, maxAge time.Duration) *fiber.Cookie {
	c := &fiber.Cookie{Name: samlBrowserCookie, Value: value, Path: "/saml", HTTPOnly: true, MaxAge: int(maxAge.Seconds()), SameSite: fiber.CookieSameSiteDisabled}
	if maxAge <= 0 {
		c.MaxAge, c.Expires = 0, time.Unix(0, 0)
	}
	if strings.HasPrefix(s.cfg.PublicBaseURL, "https://") {
		c.Secure, c.SameSite = true, fiber.CookieSameSiteNoneMode
	}
	return c
}

func (s *Server) registerSAML() {
	sp := auth.NewSAML(s.store, s.cfg.PublicBaseURL, s.cfg.SAMLIdPMetadataURL)
	policy := identity.SAMLPolicy{Domains: s.cfg.SAMLDomains, GroupRoles: map[string]models.Role{}}
	for g, r := range s.cfg.SAMLGroupRoles {
		policy.GroupRoles[g] = models.Role(r)
	}

	// /saml/metadata: the service provider's metadata for the IdP administrator.
	s.App.Get("/saml/metadata", func(c *fiber.Ctx) error {
		p, err := sp.ServiceProvider(c.UserContext())
		if err != nil {
			return err
		}
		raw, err := xml.MarshalIndent(auth.Metadata(p), "", "  ")
		if err != nil {
			return models.Internal(err)
		}
		c.Set(fiber.HeaderContentType, "application/samlmetadata+xml")
		return c.Send(raw)
	})
	// /saml/sso: starts an SP-initiated login (HTTP-Redirect binding to the
	// IdP). RelayState is where to go after the login: a same-site relative
	// path, kept server-side with the request (anything else means /portal).
	s.App.Get("/saml/sso", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		p, err := sp.ServiceProvider(ctx)
		if err != nil {
			return err
		}
		req, err := p.MakeAuthenticationRequest(p.GetSSOBindingLocation(saml.HTTPRedirectBinding), saml.HTTPRedirectBinding, saml.HTTPPostBinding)
		if err != nil {
			return models.Internal(err)
		}
		target := identity.SafeRedirectTarget(c.Query("RelayState"), portalPath)
		browser := models.RandomString(32)
		if err := s.identity.SaveSAMLRequest(ctx, req.ID, target, browser, samlRequestTTL); err != nil {
			return err
		}
		c.Cookie(s.samlCookie(browser, samlRequestTTL))
		u, err := req.Redirect(req.ID, p) // the IdP echoes an opaque value; the target stays here
		if err != nil {
			return models.Internal(err)
		}
		return c.Redirect(u.String(), http.StatusFound)
	})
	// /saml/acs: verifies the IdP's response (HTTP-POST binding) to one of our
	// requests, started in this browser (its cookie), spends the request only
	// once the signature is verified, creates the user just in time when the
	// domain allows it,
	// applies the group-to-role mapping, starts a portal session (HttpOnly
	// cookie) and sends the browser to the target kept with the request. API
	// clients exchange the session for an access token at POST /v1/auth/session/token.
	s.App.Post("/saml/acs", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		p, err := sp.ServiceProvider(ctx)
		if err != nil {
			return err
		}
		refused := func(why string) error {
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", AuthenticationMethod: "saml", Reason: why})
			return models.Errorf(models.CodeUnauthenticated, "the SAML response was refused: %s", why)
		}
		raw, inResponseTo, err := samlResponse(c.FormValue("SAMLResponse"))
		if err != nil {
			return err
		}
		if inResponseTo == "" {
			return refused("IdP-initiated login is not accepted; start at /saml/sso")
		}
		pending, err := s.identity.PendingSAMLRequest(ctx, inResponseTo)
		if err != nil {
			return err
		}
		if pending == nil {
			return refused("it answers no pending request of this server (unknown, expired or already used)")
		}
		if !pending.BoundTo(c.Cookies(samlBrowserCookie)) {
			return refused("it answers a sign-in started in another browser")
		}
		assertion, err := p.ParseXMLResponse(raw, []string{inResponseTo}, p.AcsURL)
		if err != nil { // the request stays pending: a forged response cannot spend it
			var ire *saml.InvalidResponseError
			if errors.As(err, &ire) {
				s.log.Warn("SAML response refused", "reason", ire.PrivateErr)
			}
			return refused("signature, audience, time or destination check failed")
		}
		if pending, err = s.identity.TakeSAMLRequest(ctx, inResponseTo); err != nil {
			return err
		}
		if pending == nil {
			return refused("it answers no pending request of this server (unknown, expired or already used)")
		}
		c.Cookie(s.samlCookie("", 0))
		email, name, groups := auth.AssertionIdentity(assertion)
		if email == "" {
			return refused("the assertion has no email attribute")
		}
		user, created, err := s.identity.SAMLUser(ctx, identity.SAMLLogin{Email: email, Name: name, Groups: groups}, policy)
		if err != nil {
			// Refused for its domain or organization (ACCESS_RESTRICTED), or
			// failed: a failed sign-in, as every other refusal is.
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", AuthenticationMethod: "saml",
				Reason: string(models.ErrorCode(err)) + ": " + email})
			return err
		}
		if err := s.userAccess(ctx, user); err != nil {
			s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginFailed, Outcome: "failure", OrganizationID: user.OrganizationID, UserID: user.ID,
				AuthenticationMethod: "saml", Reason: string(models.ErrorCode(err))})
			return err
		}
		token, sess, err := s.identity.StartPortalSession(ctx, user, "saml", groups)
		if err != nil {
			return err
		}
		s.audit(ctx, identity.AuditEvent{EventType: identity.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID, AuthenticationMethod: "saml",
			TokenType: "portal_session", SessionID: sessionID(sess), Reason: samlLoginReason(created, user.Role)})
		s.setSessionCookie(c, token, sess.ExpiresAt)
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Redirect(identity.SafeRedirectTarget(pending.RelayTarget, portalPath), http.StatusSeeOther)
	})
}

// samlResponse reads the SAMLResponse parameter of the ACS: the XML it
// carries and the id of the request it answers (InResponseTo; "" for an
// IdP-initiated response). Nothing in it is trusted yet: the signature is
// checked later. Errors: VALIDATION_ERROR.
func samlResponse(param string) ([]byte, string, error) {
	raw, err := base64.StdEncoding.DecodeString(param)
	if err != nil || len(raw) == 0 {
		return nil, "", models.Invalid(models.FieldIssue{Field: "SAMLResponse", Issue: "must be a base64 SAML response"})
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(raw); err != nil || doc.Root() == nil {
		return nil, "", models.Invalid(models.FieldIssue{Field: "SAMLResponse", Issue: "is not XML"})
	}
	return raw, doc.Root().SelectAttrValue("InResponseTo", ""), nil
}

func samlLoginReason(created bool, role models.Role) string {
	if created {
		return "user created just in time with role " + string(role)
	}
	return "role " + string(role)
}
