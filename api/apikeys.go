package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// KeyRateLimit is a key's own limits as answered; they can only lower the plan's.
type KeyRateLimit struct {
	RequestsPerMinute int `json:"requests_per_minute" required:"false" minimum:"0" maximum:"1000000" doc:"0: the key keeps the plan's hourly limit"`
	BurstLimit        int `json:"burst_limit" required:"false" minimum:"0" maximum:"1000000" doc:"0: the key keeps the plan's burst limit"`
}

// KeyRateLimitInput is the rate_limit of key creation: a limit that is sent
// lowers the plan's; a limit left out keeps it. 0 is refused, not read as
// "absent".
type KeyRateLimitInput struct {
	RequestsPerMinute *int `json:"requests_per_minute,omitempty" minimum:"1" maximum:"1000000" doc:"Optional: at least 1; absent keeps the plan's hourly limit"`
	BurstLimit        *int `json:"burst_limit,omitempty" minimum:"3" maximum:"1000000" doc:"Optional: at least 3 (the cost of a DELETE); absent keeps the plan's burst limit"`
}

// KeyRestrictions are a key's IP allow-list and expiry.
type KeyRestrictions struct {
	IPWhitelist []string   `json:"ip_whitelist,omitempty" maxItems:"100" example:"[\"203.0.113.0/24\"]"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
}

// APIKeyItem is an API key as answered. Key and signing_secret
// appear only in the answers to create and rotate.
type APIKeyItem struct {
	ID             string          `json:"id" example:"ak_3fK9aZ"`
	Key            string          `json:"key,omitempty" doc:"The secret: shown once"`
	SigningSecret  string          `json:"signing_secret,omitempty" doc:"Request-signing secret: shown once"`
	KeyPrefix      string          `json:"key_prefix" example:"sk_live_4eC3"`
	Name           string          `json:"name"`
	Description    string          `json:"description,omitempty"`
	OrganizationID string          `json:"organization_id"`
	Environment    string          `json:"environment" enum:"live,test"`
	Role           string          `json:"role" enum:"customer,agent,admin"`
	Permissions    []string        `json:"permissions"`
	RateLimit      *KeyRateLimit   `json:"rate_limit,omitempty"`
	Restrictions   KeyRestrictions `json:"restrictions"`
	RequireSigning bool            `json:"require_signing"`
	Status         string          `json:"status" enum:"active,expired,revoked"`
	CreatedAt      string          `json:"created_at"`
	ExpiresAt      *string         `json:"expires_at"`
	RevokedAt      *string         `json:"revoked_at,omitempty"`
	LastUsed       *string         `json:"last_used"`
	UsageCount     int64           `json:"usage_count"`
}

func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := models.Timestamp(*t)
	return &s
}

func (s *Server) apiKeyItem(k *identity.APIKey) APIKeyItem {
	item := APIKeyItem{
		ID: k.ID, KeyPrefix: k.DisplayPrefix, Name: k.Name, Description: k.Description, OrganizationID: k.OrganizationID,
		Environment: string(k.Environment), Role: string(k.Role), Permissions: nonNil(k.Permissions),
		Restrictions: KeyRestrictions{IPWhitelist: k.IPAllowList, ExpiresAt: k.ExpiresAt}, RequireSigning: k.SigningSecret != "",
		Status: "active", CreatedAt: models.Timestamp(k.CreatedAt), ExpiresAt: optTimestamp(k.ExpiresAt),
		RevokedAt: optTimestamp(k.RevokedAt), LastUsed: optTimestamp(k.LastUsedAt), UsageCount: k.UsageCount,
	}
	if k.RequestsPerMinute > 0 || k.BurstLimit > 0 {
		item.RateLimit = &KeyRateLimit{RequestsPerMinute: k.RequestsPerMinute, BurstLimit: k.BurstLimit}
	}
	switch {
	case k.RevokedAt != nil:
		item.Status = "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(s.now()):
		item.Status = "expired"
	}
	return item
}

// APIKeyOutput wraps one API key.
type APIKeyOutput struct {
	Status int
	Body   struct {
		Envelope
		APIKey APIKeyItem `json:"api_key"`
	}
}

// APIKeysOutput is a page of API keys.
type APIKeysOutput struct {
	Body struct {
		Envelope
		APIKeys    []APIKeyItem `json:"api_keys"`
		Pagination Pagination   `json:"pagination"`
	}
}

// APIKeyCreateBody is the API key create body (spec 2.6, DECISIONS 11).
type APIKeyCreateBody struct {
	Name           string             `json:"name" maxLength:"200" example:"Production integration"`
	Description    string             `json:"description,omitempty" maxLength:"10000"`
	Permissions    []string           `json:"permissions" maxItems:"20" example:"[\"services:read\",\"services:write\"]"`
	RateLimit      *KeyRateLimitInput `json:"rate_limit,omitempty"`
	Restrictions   *KeyRestrictions   `json:"restrictions,omitempty"`
	RequireSigning bool               `json:"require_signing,omitempty" doc:"Every request with this key must carry X-Timestamp and X-Signature"`
	OrganizationID string             `json:"organization_id,omitempty" maxLength:"64" doc:"Provider administrators only"`
	Environment    string             `json:"environment,omitempty" enum:"live,test" doc:"Provider administrators only"`
	Role           string             `json:"role,omitempty" enum:"customer,agent,admin" doc:"Provider administrators only"`
}

func (s *Server) issuedKeyOutput(k *identity.IssuedKey, status int) *APIKeyOutput {
	out := &APIKeyOutput{Status: status}
	out.Body.APIKey = s.apiKeyItem(k.Key)
	out.Body.APIKey.Key = k.Secret
	out.Body.APIKey.SigningSecret = k.SigningSecret
	return out
}

type keyPath struct {
	ID string `path:"key_id" maxLength:"64"`
}

func (s *Server) registerAPIKeys() {
	tags := []string{"Authentication: API keys"}
	register(s, huma.Operation{OperationID: "create-api-key", Method: http.MethodPost, Path: "/auth/api-keys", Summary: "Create an API key", Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *struct{ Body APIKeyCreateBody }) (*APIKeyOutput, error) {
			b := in.Body
			input := identity.APIKeyInput{
				Name: b.Name, Description: b.Description, Permissions: b.Permissions, RequireSigning: b.RequireSigning,
				OrganizationID: b.OrganizationID, Environment: models.Environment(b.Environment), Role: models.Role(b.Role),
			}
			if rl := b.RateLimit; rl != nil && rl.RequestsPerMinute != nil {
				input.RequestsPerMinute = *rl.RequestsPerMinute
			}
			if rl := b.RateLimit; rl != nil && rl.BurstLimit != nil {
				input.BurstLimit = *rl.BurstLimit
			}
			if b.Restrictions != nil {
				input.IPAllowList, input.ExpiresAt = b.Restrictions.IPWhitelist, b.Restrictions.ExpiresAt
			}
			issued, err := s.identity.CreateAPIKey(ctx, principal(ctx), input)
			if err != nil {
				return nil, err
			}
			return s.issuedKeyOutput(issued, http.StatusCreated), nil
		})
	register(s, huma.Operation{OperationID: "list-api-keys", Method: http.MethodGet, Path: "/auth/api-keys", Summary: "List API keys", Tags: tags},
		access{permission: "auth:manage"}, func(ctx context.Context, in *struct{ ListParams }) (*APIKeysOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			keys, total, err := s.identity.ListAPIKeys(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &APIKeysOutput{}
			out.Body.APIKeys = mapSlice(keys, s.apiKeyItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-api-key", Method: http.MethodGet, Path: "/auth/api-keys/{key_id}", Summary: "Get an API key", Tags: tags},
		access{permission: "auth:manage"}, func(ctx context.Context, in *keyPath) (*APIKeyOutput, error) {
			k, err := s.identity.GetAPIKey(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &APIKeyOutput{Status: http.StatusOK}
			out.Body.APIKey = s.apiKeyItem(k)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "rotate-api-key", Method: http.MethodPost, Path: "/auth/api-keys/{key_id}/rotate", Summary: "Rotate an API key", Tags: tags,
		Description: "Issues a new secret (and signing secret) for the key; the old secret stops working at once."},
		access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *keyPath) (*APIKeyOutput, error) {
			issued, err := s.identity.RotateAPIKey(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return s.issuedKeyOutput(issued, http.StatusOK), nil
		})
	register(s, huma.Operation{OperationID: "revoke-api-key", Method: http.MethodDelete, Path: "/auth/api-keys/{key_id}", Summary: "Revoke an API key", Tags: tags},
		access{permission: "auth:manage"}, func(ctx context.Context, in *keyPath) (*APIKeyOutput, error) {
			k, err := s.identity.RevokeAPIKey(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &APIKeyOutput{Status: http.StatusOK}
			out.Body.APIKey = s.apiKeyItem(k)
			return out, nil
		})
}
