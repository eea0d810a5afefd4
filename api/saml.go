package api

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
)

// samlRequestTTL is how long the service provider waits for the IdP's answer.
const samlRequestTTL = 10 * time.Minute

// SAMLLoginOutput is the answer of the assertion consumer service: the
// platform's access token for the signed-in user.
type SAMLLoginOutput struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	UserID      string `json:"user_id"`
	Created     bool   `json:"user_created"`
	RelayState  string `json:"relay_state,omitempty"`
}

func (s *Server) registerSAML() {
	sp := auth.NewSAML(s.store, s.cfg.PublicBaseURL, s.cfg.SAMLIdPMetadataURL)

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
	// /saml/sso: starts an SP-initiated login (HTTP-Redirect binding to the IdP).
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
		relay := c.Query("RelayState")
		if len(relay) > 80 {
			return models.Invalid(models.FieldIssue{Field: "RelayState", Issue: "must be at most 80 bytes (SAML bindings 3.4.3)"})
		}
		if err := s.store.SaveSAMLRequest(ctx, req.ID, samlRequestTTL); err != nil {
			return err
		}
		u, err := req.Redirect(relay, p)
		if err != nil {
			return models.Internal(err)
		}
		return c.Redirect(u.String(), http.StatusFound)
	})
	// /saml/acs: verifies the IdP's response (HTTP-POST binding) to one of our
	// requests, creates the user just in time when the domain allows it, and
	// answers the platform's access token.
	s.App.Post("/saml/acs", func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		p, err := sp.ServiceProvider(ctx)
		if err != nil {
			return err
		}
		refused := func(why string) error {
			s.audit(ctx, models.AuditEvent{EventType: models.AuditLoginFailed, Outcome: "failure", AuthenticationMethod: "saml", Reason: why})
			return models.Errorf(models.CodeUnauthenticated, "the SAML response was refused: %s", why)
		}
		raw, err := base64.StdEncoding.DecodeString(c.FormValue("SAMLResponse"))
		if err != nil || len(raw) == 0 {
			return models.Invalid(models.FieldIssue{Field: "SAMLResponse", Issue: "must be a base64 SAML response"})
		}
		doc := etree.NewDocument()
		if err := doc.ReadFromBytes(raw); err != nil || doc.Root() == nil {
			return models.Invalid(models.FieldIssue{Field: "SAMLResponse", Issue: "is not XML"})
		}
		inResponseTo := doc.Root().SelectAttrValue("InResponseTo", "")
		if inResponseTo == "" {
			return refused("IdP-initiated login is not accepted; start at /saml/sso")
		}
		ok, err := s.store.TakeSAMLRequest(ctx, inResponseTo)
		if err != nil {
			return err
		}
		if !ok {
			return refused("it answers no pending request of this server (unknown, expired or already used)")
		}
		assertion, err := p.ParseXMLResponse(raw, []string{inResponseTo}, p.AcsURL)
		if err != nil {
			var ire *saml.InvalidResponseError
			if errors.As(err, &ire) {
				s.log.Warn("SAML response refused", "reason", ire.PrivateErr)
			}
			return refused("signature, audience, time or destination check failed")
		}
		email, name, _ := auth.AssertionIdentity(assertion)
		if email == "" {
			return refused("the assertion has no email attribute")
		}
		user, created, err := s.store.SAMLUser(ctx, email, name, s.cfg.SAMLDomains)
		if err != nil {
			return err
		}
		issued, err := s.tokens.Issue(ctx, auth.Grant{Subject: user.ID, OrganizationID: user.OrganizationID, Permissions: samlPermissions(user.Role), AuthMethod: "saml"})
		if err != nil {
			return err
		}
		s.audit(ctx, models.AuditEvent{EventType: models.AuditLoginSucceeded, OrganizationID: user.OrganizationID, UserID: user.ID, AuthenticationMethod: "saml",
			TokenType: "access_token", SessionID: issued.JTI})
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(SAMLLoginOutput{AccessToken: issued.Token, TokenType: "Bearer", ExpiresIn: issued.ExpiresIn, UserID: user.ID, Created: created, RelayState: c.FormValue("RelayState")})
	})
}

// samlPermissions are the permissions of a SAML session: every permission
// for admins; support for agents; for customers everything but
// support:admin and "*".
func samlPermissions(role models.Role) []string {
	switch role {
	case models.RoleAdmin:
		return []string{"*"}
	case models.RoleAgent:
		return []string{"support:read", "support:create", "support:write", "services:read", "billing:read"}
	}
	var out []string
	for _, p := range models.KnownPermissions() {
		if !slices.Contains([]string{"*", "support:admin"}, p) {
			out = append(out, p)
		}
	}
	return out
}
