package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// ClientBody is the body of OAuth client registration (DECISIONS 11).
type ClientBody struct {
	Name         string   `json:"name" minLength:"1" maxLength:"200" example:"Acme dashboard" doc:"shown on the sign-in page"`
	RedirectURIs []string `json:"redirect_uris,omitempty" maxItems:"20" example:"[\"https://app.example.com/callback\"]" doc:"required when grant_types has authorization_code (the default): absolute https URLs, or http on localhost, 127.0.0.1 or [::1]; matched exactly, so no wildcard host, user information or fragment"`
	GrantTypes   []string `json:"grant_types,omitempty" doc:"authorization_code, refresh_token, client_credentials, urn:ietf:params:oauth:grant-type:device_code (default: authorization_code + refresh_token)"`
	Scopes       []string `json:"scopes" minItems:"1" maxItems:"50" example:"[\"services.read\"]" doc:"at least one dotted permission the client may ask for, e.g. services.read"`
	Public       bool     `json:"public,omitempty" doc:"a public client (no secret) must use PKCE"`
	IPAllowList  []string `json:"ip_allowlist,omitempty" maxItems:"100" doc:"IP addresses or CIDR ranges the client may call from: the OAuth endpoints and every request of its access tokens (default: anywhere)"`
}

// ClientPatchBody is a partial update of a client: absent fields are kept,
// a list that is sent replaces the whole list. Whether a client is public
// cannot change.
type ClientPatchBody struct {
	Name         *string   `json:"name,omitempty" maxLength:"200" doc:"shown on the sign-in page"`
	RedirectURIs *[]string `json:"redirect_uris,omitempty" maxItems:"20" doc:"replaces the list; absolute https URLs, or http on localhost, 127.0.0.1 or [::1]; no wildcard host, user information or fragment; changing it voids codes not yet exchanged"`
	GrantTypes   *[]string `json:"grant_types,omitempty" maxItems:"4" doc:"replaces the list; removing one revokes the client's access tokens"`
	Scopes       *[]string `json:"scopes,omitempty" maxItems:"50" doc:"replaces the list; removing one revokes the client's access tokens"`
	IPAllowList  *[]string `json:"ip_allowlist,omitempty" maxItems:"100" doc:"replaces the list of IP addresses or CIDR ranges the client may call from; [] removes it"`
}

// ClientItem is a registered OAuth client. The secret appears only in the
// answers to registration and secret rotation.
type ClientItem struct {
	ClientID        string   `json:"client_id" example:"cli_3fK9aZ"`
	ClientSecret    string   `json:"client_secret,omitempty" doc:"shown once, on registration and on secret rotation; absent for public clients"`
	Name            string   `json:"name"`
	RedirectURIs    []string `json:"redirect_uris"`
	GrantTypes      []string `json:"grant_types"`
	Scopes          []string `json:"scopes"`
	Public          bool     `json:"public"`
	OrganizationID  string   `json:"organization_id"`
	Environment     string   `json:"environment" enum:"live,test"`
	CreatedAt       string   `json:"created_at" example:"2026-11-22T10:00:00Z"`
	UpdatedAt       string   `json:"updated_at" example:"2026-11-22T10:00:00Z"`
	SecretRotatedAt *string  `json:"secret_rotated_at,omitempty" doc:"when the secret was last rotated"`
	IPAllowList     []string `json:"ip_allowlist" doc:"where the client may call from (empty: anywhere)"`
}

// ClientOutput is the answer of client registration, reading, update and
// secret rotation.
type ClientOutput struct {
	Status int
	Body   struct {
		Envelope
		Client ClientItem `json:"client"`
	}
}

// ClientsOutput is a page of OAuth clients.
type ClientsOutput struct {
	Body struct {
		Envelope
		Clients    []ClientItem `json:"clients"`
		Pagination Pagination   `json:"pagination"`
	}
}

type clientPath struct {
	ClientID string `path:"client_id" maxLength:"64" example:"cli_3fK9aZ"`
}

func clientItem(c *identity.OAuthClient) ClientItem {
	redirects, grants, scopes := c.Lists()
	updated := c.UpdatedAt
	if updated.IsZero() {
		updated = c.CreatedAt
	}
	return ClientItem{ClientID: c.ID, Name: c.Name, RedirectURIs: nonNil(redirects), GrantTypes: nonNil(grants), Scopes: nonNil(scopes),
		Public: c.Public, OrganizationID: c.OrganizationID, Environment: string(c.Environment),
		CreatedAt: models.Timestamp(c.CreatedAt), UpdatedAt: models.Timestamp(updated), SecretRotatedAt: optTimestamp(c.SecretRotatedAt),
		IPAllowList: nonNil(c.IPAllowList)}
}

func clientOutput(c *identity.OAuthClient, secret string, status int) *ClientOutput {
	out := &ClientOutput{Status: status}
	out.Body.Client = clientItem(c)
	out.Body.Client.ClientSecret = secret
	return out
}

// auditClient records a client-management event.
func (s *Server) auditClient(ctx context.Context, eventType string, c *identity.OAuthClient, reason string) {
	_, _, scopes := c.Lists()
	s.audit(ctx, identity.AuditEvent{EventType: eventType, OrganizationID: c.OrganizationID, UserID: principal(ctx).UserID, ClientID: c.ID,
		Scopes: strings.Join(scopes, " "), Reason: reason})
}

// registerClients registers OAuth client management under /auth/clients
// (docs/authentication.md, "Managing clients").
func (s *Server) registerClients() {
	tags := []string{"Authentication"}
	manage := access{permission: "auth:manage"}
	// Creating a client, changing its grants or scopes and rotating its
	// secret mint a machine credential: users are challenged, as for API keys.
	manageMFA := access{permission: "auth:manage", mfa: true}

	register(s, huma.Operation{
		OperationID: "create-oauth-client", Method: http.MethodPost, Path: "/auth/clients", Summary: "Register an OAuth 2.0 client",
		Description: "Registers a client of the caller's organization and environment. The client_secret is shown once; public clients get none and must use PKCE (S256). A client's scopes cannot exceed its creator's permissions.",
		Tags:        tags, DefaultStatus: http.StatusCreated,
	}, manageMFA, func(ctx context.Context, in *struct{ Body ClientBody }) (*ClientOutput, error) {
		c, secret, err := s.identity.CreateOAuthClient(ctx, principal(ctx), identity.OAuthClientInput{
			Name: in.Body.Name, RedirectURIs: in.Body.RedirectURIs, GrantTypes: in.Body.GrantTypes, Scopes: in.Body.Scopes, Public: in.Body.Public,
			IPAllowList: in.Body.IPAllowList,
		})
		if err != nil {
			return nil, err
		}
		s.auditClient(ctx, identity.AuditClientCreated, c, "")
		return clientOutput(c, secret, http.StatusCreated), nil
	})

	register(s, huma.Operation{
		OperationID: "list-oauth-clients", Method: http.MethodGet, Path: "/auth/clients", Summary: "List OAuth 2.0 clients",
		Description: "The clients of the caller's organization and environment, newest first (sortable by created_at, updated_at, name). Secrets are never shown.",
		Tags:        tags,
	}, manage, func(ctx context.Context, in *struct{ ListParams }) (*ClientsOutput, error) {
		pr, err := in.page()
		if err != nil {
			return nil, err
		}
		rows, total, err := s.identity.ListOAuthClients(ctx, principal(ctx), pr)
		if err != nil {
			return nil, err
		}
		out := &ClientsOutput{}
		out.Body.Clients = mapSlice(rows, clientItem)
		out.Body.Pagination = newPagination(pr, total)
		return out, nil
	})

	register(s, huma.Operation{
		OperationID: "get-oauth-client", Method: http.MethodGet, Path: "/auth/clients/{client_id}", Summary: "Get an OAuth 2.0 client",
		Description: "Another tenant's client is 404. The secret is never shown.", Tags: tags,
	}, manage, func(ctx context.Context, in *clientPath) (*ClientOutput, error) {
		c, err := s.identity.GetOAuthClient(ctx, principal(ctx), in.ClientID)
		if err != nil {
			return nil, err
		}
		return clientOutput(c, "", http.StatusOK), nil
	})

	register(s, huma.Operation{
		OperationID: "update-oauth-client", Method: http.MethodPatch, Path: "/auth/clients/{client_id}", Summary: "Change an OAuth 2.0 client",
		Description: "Partial update: name, redirect_uris, grant_types, scopes (a list that is sent replaces the list). The result is validated like a registration, " +
			"and the caller must hold every permission of the resulting scopes. Removing a scope or a grant type revokes the client's access tokens at once; " +
			"changing redirect_uris voids the authorization codes not yet exchanged. `public` cannot change.",
		Tags: tags,
	}, manageMFA, func(ctx context.Context, in *struct {
		ClientID string `path:"client_id" maxLength:"64" example:"cli_3fK9aZ"`
		Body     ClientPatchBody
	}) (*ClientOutput, error) {
		b := in.Body
		c, changed, err := s.identity.UpdateOAuthClient(ctx, principal(ctx), in.ClientID, identity.OAuthClientPatch{
			Name: b.Name, RedirectURIs: b.RedirectURIs, GrantTypes: b.GrantTypes, Scopes: b.Scopes, IPAllowList: b.IPAllowList,
		})
		if err != nil {
			return nil, err
		}
		if len(changed) > 0 {
			s.auditClient(ctx, identity.AuditClientUpdated, c, "changed: "+strings.Join(changed, ", "))
		}
		return clientOutput(c, "", http.StatusOK), nil
	})

	register(s, huma.Operation{
		OperationID: "delete-oauth-client", Method: http.MethodDelete, Path: "/auth/clients/{client_id}", Summary: "Delete an OAuth 2.0 client",
		Description: "Deletes the client and revokes everything it was given: its access tokens are refused by the API at once, its refresh tokens, " +
			"authorization codes and device codes stop working.",
		Tags: tags, DefaultStatus: http.StatusNoContent,
	}, manage, func(ctx context.Context, in *clientPath) (*struct{}, error) {
		c, _, err := s.identity.DeleteOAuthClient(ctx, principal(ctx), in.ClientID)
		if err != nil {
			return nil, err
		}
		s.auditClient(ctx, identity.AuditClientDeleted, c, "")
		return nil, nil
	})

	register(s, huma.Operation{
		OperationID: "rotate-oauth-client-secret", Method: http.MethodPost, Path: "/auth/clients/{client_id}/rotate-secret", Summary: "Rotate an OAuth 2.0 client's secret",
		Description: "Issues a new client_secret (shown once in this answer); the old secret stops working at once. Tokens issued before stay valid " +
			"until they expire (delete the client to end them). A public client has no secret: 409 INVALID_STATE_TRANSITION.",
		Tags: tags,
	}, manageMFA, func(ctx context.Context, in *clientPath) (*ClientOutput, error) {
		c, secret, err := s.identity.RotateOAuthClientSecret(ctx, principal(ctx), in.ClientID)
		if err != nil {
			return nil, err
		}
		s.auditClient(ctx, identity.AuditClientSecretRotated, c, "")
		return clientOutput(c, secret, http.StatusOK), nil
	})
}
