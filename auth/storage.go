package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"github.com/ory/fosite"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// Kinds of stored OAuth artefacts.
const (
	kindCode    = identity.OAuthKindCode
	kindPKCE    = identity.OAuthKindPKCE
	kindAccess  = identity.OAuthKindAccess
	kindRefresh = identity.OAuthKindRefresh
)

// formSecrets are request form fields that are never stored with a grant.
var formSecrets = []string{"password", "client_secret", "code_verifier", "csrf_token", "email", "action", "refresh_token", "code"}

// Storage implements fosite's storage interfaces (clients, authorization
// codes, PKCE, access and refresh tokens, revocation) on the platform's
// database. Revoking an access token also deny-lists its jti, so the API
// refuses it at once.
type Storage struct {
	store    *models.Store
	identity *identity.Store
}

// NewStorage returns fosite storage on store.
func NewStorage(store *models.Store) *Storage {
	return &Storage{store: store, identity: identity.NewStore(store)}
}

// Client is a registered OAuth client as fosite sees it, with its tenant.
type Client struct {
	*fosite.DefaultClient
	OrganizationID string
	Environment    models.Environment
	Name           string
}

// GetClient returns the client by id; fosite.ErrNotFound when unknown.
func (s *Storage) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	if !models.HasPrefix(id, models.PrefixClient) {
		return nil, fosite.ErrNotFound
	}
	c, err := s.identity.LookupOAuthClient(ctx, id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return clientOf(c), nil
}

func clientOf(c *identity.OAuthClient) *Client {
	redirects, grants, scopes := c.Lists()
	dc := &fosite.DefaultClient{ID: c.ID, RedirectURIs: redirects, GrantTypes: grants, Scopes: scopes, Public: c.Public, ResponseTypes: []string{"code"}}
	if c.SecretHash != "" {
		dc.Secret = []byte(c.SecretHash)
	}
	return &Client{DefaultClient: dc, OrganizationID: c.OrganizationID, Environment: c.Environment, Name: c.Name}
}

// ClientAssertionJWTValid accepts every jti: JWT client assertions are not offered.
func (s *Storage) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT is a no-op: JWT client assertions are not offered.
func (s *Storage) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

type storedRequest struct {
	ID                string          `json:"id"`
	RequestedAt       time.Time       `json:"requested_at"`
	ClientID          string          `json:"client_id"`
	RequestedScope    []string        `json:"requested_scope"`
	GrantedScope      []string        `json:"granted_scope"`
	RequestedAudience []string        `json:"requested_audience"`
	GrantedAudience   []string        `json:"granted_audience"`
	Form              url.Values      `json:"form"`
	Session           json.RawMessage `json:"session"`
}

func (s *Storage) save(ctx context.Context, kind, signature string, r fosite.Requester, accessSignature string) error {
	form := url.Values{}
	for k, v := range r.GetRequestForm() {
		form[k] = v
	}
	for _, k := range formSecrets {
		form.Del(k)
	}
	sess, err := json.Marshal(r.GetSession())
	if err != nil {
		return err
	}
	granted := []string(r.GetGrantedScopes())
	if ss, ok := r.GetSession().(*Session); ok && kind == kindRefresh && ss.GrantScope != nil {
		// A refresh that asked for fewer scopes narrowed the access token
		// only: the new refresh token keeps the grant's (RFC 6749 section 6).
		granted = ss.GrantScope
	}
	data, err := json.Marshal(storedRequest{
		ID: r.GetID(), RequestedAt: r.GetRequestedAt(), ClientID: r.GetClient().GetID(),
		RequestedScope: r.GetRequestedScopes(), GrantedScope: granted,
		RequestedAudience: r.GetRequestedAudience(), GrantedAudience: r.GetGrantedAudience(),
		Form: form, Session: sess,
	})
	if err != nil {
		return err
	}
	row := &identity.OAuthToken{Kind: kind, Signature: signature, RequestID: r.GetID(), ClientID: r.GetClient().GetID(),
		Active: true, AccessSignature: accessSignature, RequestedAt: r.GetRequestedAt(), Data: string(data)}
	var ttype fosite.TokenType
	switch kind {
	case kindCode, kindPKCE:
		ttype = fosite.AuthorizeCode
	case kindAccess:
		ttype = fosite.AccessToken
	default:
		ttype = fosite.RefreshToken
	}
	if ss, ok := r.GetSession().(*Session); ok {
		row.Subject = ss.Subject
		row.ExpiresAt = ss.GetExpiresAt(ttype)
		if kind == kindAccess {
			row.JTI = ss.JTI
		}
	}
	if row.ExpiresAt.IsZero() {
		row.ExpiresAt = time.Now().UTC().Add(30 * 24 * time.Hour)
	}
	return s.identity.SaveOAuthToken(ctx, row)
}

// load returns the stored request of a kind and signature, its session
// decoded into session. The row's Active flag is returned too.
func (s *Storage) load(ctx context.Context, kind, signature string, session fosite.Session) (fosite.Requester, bool, error) {
	row, err := s.identity.GetOAuthToken(ctx, kind, signature)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil, false, fosite.ErrNotFound
	}
	if err != nil {
		return nil, false, err
	}
	var sr storedRequest
	if err := json.Unmarshal([]byte(row.Data), &sr); err != nil {
		return nil, false, err
	}
	client, err := s.GetClient(ctx, sr.ClientID)
	if err != nil {
		return nil, false, err
	}
	if session == nil {
		session = &Session{}
	}
	if err := json.Unmarshal(sr.Session, session); err != nil {
		return nil, false, err
	}
	req := &fosite.Request{
		ID: sr.ID, RequestedAt: sr.RequestedAt, Client: client,
		RequestedScope: sr.RequestedScope, GrantedScope: sr.GrantedScope,
		RequestedAudience: sr.RequestedAudience, GrantedAudience: sr.GrantedAudience,
		Form: sr.Form, Session: session,
	}
	if req.Form == nil {
		req.Form = url.Values{}
	}
	return req, row.Active, nil
}

// CreateAuthorizeCodeSession stores an authorization code's request.
func (s *Storage) CreateAuthorizeCodeSession(ctx context.Context, code string, r fosite.Requester) error {
	return s.save(ctx, kindCode, code, r, "")
}

// GetAuthorizeCodeSession returns a code's request; a used code returns it
// with fosite.ErrInvalidatedAuthorizeCode (fosite then revokes its tokens).
func (s *Storage) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindCode, code, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return req, fosite.ErrInvalidatedAuthorizeCode
	}
	return req, nil
}

// ErrSpent says that an authorization code or refresh token was spent by a
// parallel request between its check and its use: the token endpoint
// answers invalid_grant.
var ErrSpent = errors.New("the authorization code or refresh token was already used")

// InvalidateAuthorizeCodeSession spends a code, once: of parallel exchanges
// of the same code only the first gets past this (ErrSpent for the others).
func (s *Storage) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	spent, err := s.identity.SpendOAuthToken(ctx, kindCode, code)
	if err != nil {
		return err
	}
	if !spent {
		return ErrSpent
	}
	return nil
}

// CreatePKCERequestSession stores the PKCE challenge of a code.
func (s *Storage) CreatePKCERequestSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.save(ctx, kindPKCE, signature, r, "")
}

// GetPKCERequestSession returns the PKCE request of a code.
func (s *Storage) GetPKCERequestSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	req, _, err := s.load(ctx, kindPKCE, signature, session)
	return req, err
}

// DeletePKCERequestSession removes the PKCE request of a code.
func (s *Storage) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.identity.DeleteOAuthToken(ctx, kindPKCE, signature)
}

// CreateAccessTokenSession stores an access token's request (with its jti).
func (s *Storage) CreateAccessTokenSession(ctx context.Context, signature string, r fosite.Requester) error {
	return s.save(ctx, kindAccess, signature, r, "")
}

// GetAccessTokenSession returns an access token's request; revoked tokens are not found.
func (s *Storage) GetAccessTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindAccess, signature, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return nil, fosite.ErrNotFound
	}
	return req, nil
}

// DeleteAccessTokenSession revokes one access token (deny-listing its jti).
func (s *Storage) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	row, err := s.identity.GetOAuthToken(ctx, kindAccess, signature)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.denyList(ctx, *row, "access token deleted"); err != nil {
		return err
	}
	return s.identity.DeactivateOAuthToken(ctx, kindAccess, signature)
}

// CreateRefreshTokenSession stores a refresh token's request.
func (s *Storage) CreateRefreshTokenSession(ctx context.Context, signature, accessSignature string, r fosite.Requester) error {
	return s.save(ctx, kindRefresh, signature, r, accessSignature)
}

// GetRefreshTokenSession returns a refresh token's request; a used or
// revoked one returns it with fosite.ErrInactiveToken (reuse detection).
func (s *Storage) GetRefreshTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	req, active, err := s.load(ctx, kindRefresh, signature, session)
	if err != nil {
		return nil, err
	}
	if !active {
		return req, fosite.ErrInactiveToken
	}
	return req, nil
}

// DeleteRefreshTokenSession marks a refresh token inactive (kept, so a later
// reuse is still detected).
func (s *Storage) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.identity.DeactivateOAuthToken(ctx, kindRefresh, signature)
}

// RotateRefreshToken spends the used refresh token of a grant, once, and
// revokes the access token issued with it; the new pair is created right
// after by fosite. Of parallel refreshes with the same token only the first
// gets past this (ErrSpent, reported as inactive, for the others).
func (s *Storage) RotateRefreshToken(ctx context.Context, _, signature string) error {
	spent, err := s.identity.RotateRefreshToken(ctx, signature)
	if err != nil {
		return err
	}
	if !spent {
		return errors.Join(fosite.ErrInactiveToken, ErrSpent)
	}
	return nil
}

// RevokeRefreshToken revokes every refresh token of a grant (its family).
func (s *Storage) RevokeRefreshToken(ctx context.Context, requestID string) error {
	_, err := s.identity.DeactivateOAuthTokens(ctx, kindRefresh, requestID)
	return err
}

// RevokeAccessToken revokes every access token of a grant and deny-lists their jtis.
func (s *Storage) RevokeAccessToken(ctx context.Context, requestID string) error {
	rows, err := s.identity.DeactivateOAuthTokens(ctx, kindAccess, requestID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := s.denyList(ctx, row, "grant revoked"); err != nil {
			return err
		}
	}
	return nil
}

func (s *Storage) denyList(ctx context.Context, row identity.OAuthToken, reason string) error {
	if row.JTI == "" {
		return nil
	}
	if err := s.identity.RevokeTokenID(ctx, row.JTI, row.Subject, row.ExpiresAt, reason); err != nil {
		return errors.Join(fosite.ErrServerError, err)
	}
	return nil
}
