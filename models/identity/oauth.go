package identity

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// OAuth 2.0 grant types a client may register (DECISIONS 11).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	GrantDeviceCode        = "urn:ietf:params:oauth:grant-type:device_code"
)

var oauthGrantTypes = []string{GrantAuthorizationCode, GrantRefreshToken, GrantClientCredentials, GrantDeviceCode}

// Kinds of stored OAuth artefacts (OAuthToken.Kind).
const (
	OAuthKindCode    = "code"    // an authorization code
	OAuthKindPKCE    = "pkce"    // the PKCE challenge of an authorization code
	OAuthKindAccess  = "access"  // an access token (JWT; its jti is kept for the deny-list)
	OAuthKindRefresh = "refresh" // a refresh token
)

// Audit event types of client management (client.created is in audit.go).
const (
	AuditClientUpdated       = "client.updated"
	AuditClientDeleted       = "client.deleted"
	AuditClientSecretRotated = "client.secret_rotated"
)

// OAuthClient is an OAuth 2.0 client of a tenant. Its secret is stored only
// as a bcrypt hash; public clients have none and must use PKCE.
type OAuthClient struct {
	ID string `gorm:"primaryKey;size:40" json:"client_id"`
	models.Tenant
	Name         string    `gorm:"size:200;not null" json:"name"`
	SecretHash   string    `gorm:"size:100" json:"-"`
	RedirectURIs string    `gorm:"type:text;not null" json:"-"` // JSON array
	GrantTypes   string    `gorm:"type:text;not null" json:"-"` // JSON array
	Scopes       string    `gorm:"type:text;not null" json:"-"` // JSON array of dotted scopes
	Public       bool      `gorm:"not null;default:false" json:"public"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	// SecretRotatedAt is when the secret was last replaced (nil: never).
	SecretRotatedAt *time.Time `json:"secret_rotated_at,omitempty"`
	// IPAllowList, when not empty, is where the client may call from: the
	// OAuth endpoints and every request of its access tokens (CIDR ranges).
	IPAllowList []string `gorm:"serializer:json;type:text" json:"ip_allowlist,omitempty"`
}

// Lists returns the client's redirect URIs, grant types and scopes.
func (c *OAuthClient) Lists() (redirectURIs, grantTypes, scopes []string) {
	_ = json.Unmarshal([]byte(c.RedirectURIs), &redirectURIs)
	_ = json.Unmarshal([]byte(c.GrantTypes), &grantTypes)
	_ = json.Unmarshal([]byte(c.Scopes), &scopes)
	return
}

// OAuthClientInput is the body of client registration.
type OAuthClientInput struct {
	Name         string
	RedirectURIs []string
	GrantTypes   []string
	Scopes       []string
	Public       bool
	IPAllowList  []string // IP addresses or CIDR ranges; empty: any address
}

// ScopeForPermission maps a permission (services:read) to its OAuth scope (services.read).
func ScopeForPermission(perm string) string { return strings.Replace(perm, ":", ".", 1) }

func validRedirectURI(raw string) bool { return redirectURIIssue(raw) == "" }

// redirectURIIssue says what is wrong with a redirect URI to register, or
// "" when it is fine: an absolute https URL (http only on loopback) without
// fragment, user information or wildcard, since redirect URIs are matched
// exactly.
func redirectURIIssue(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" || len(raw) > 2000 {
		return "must be an absolute https URL (http only on localhost, 127.0.0.1 or [::1]), at most 2000 characters: " + raw
	}
	host := u.Hostname()
	switch {
	case u.Scheme != "https" && !(u.Scheme == "http" && (host == "localhost" || host == "127.0.0.1" || host == "::1")):
		return "must be an absolute https URL (http only on localhost, 127.0.0.1 or [::1]): " + raw
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a fragment: " + raw
	case u.User != nil:
		return "must not contain user information (user:password@): " + raw
	case strings.Contains(u.Host, "*"):
		return "must not contain a wildcard host: redirect URIs are matched exactly: " + raw
	}
	return ""
}

// validateClient checks and normalises a client's settings (registration,
// or the result of an update): name, grant types (defaulted by the caller),
// redirect URIs and scopes. registered are the redirect URIs the client
// already has (an update): they were accepted under earlier rules and are
// matched exactly, so keeping one is not refused; only new ones are
// checked. Errors: VALIDATION_ERROR.
func validateClient(in *OAuthClientInput, registered ...string) error {
	var v models.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	v.Check(len(in.GrantTypes) > 0, "grant_types", "at least one grant type is required")
	for _, g := range in.GrantTypes {
		v.Check(slices.Contains(oauthGrantTypes, g), "grant_types", "unsupported grant type "+g+" (authorization_code, refresh_token, client_credentials, "+GrantDeviceCode+")")
	}
	in.GrantTypes = uniq(in.GrantTypes)
	v.Check(!in.Public || !slices.Contains(in.GrantTypes, GrantClientCredentials), "grant_types", "a public client cannot use client_credentials")
	needsRedirect := slices.Contains(in.GrantTypes, GrantAuthorizationCode)
	v.Check(!needsRedirect || len(in.RedirectURIs) > 0, "redirect_uris", "at least one is required for authorization_code")
	v.Check(len(in.RedirectURIs) <= 20, "redirect_uris", "at most 20")
	for i, r := range in.RedirectURIs {
		if slices.Contains(registered, r) {
			continue
		}
		if issue := redirectURIIssue(r); issue != "" {
			v.Add("redirect_uris["+strconv.Itoa(i)+"]", issue)
		}
	}
	in.RedirectURIs = uniq(in.RedirectURIs)
	v.Check(len(in.Scopes) > 0, "scopes", "at least one scope is required (services.read, ...)")
	for _, sc := range in.Scopes {
		v.Check(models.ValidScope(sc), "scopes", "unknown scope "+sc+" (dotted permissions such as services.read)")
	}
	in.Scopes = uniq(in.Scopes)
	in.IPAllowList = models.NormalizeIPAllowList(&v, "ip_allowlist", in.IPAllowList)
	return v.Err()
}

// scopePermissions maps dotted scopes to their permissions.
func scopePermissions(scopes []string) []string {
	perms := make([]string, len(scopes))
	for i, sc := range scopes {
		perms[i] = models.ScopeToPermission(sc)
	}
	return perms
}

// checkStaffScopes refuses, for a client of an organization other than the
// provider's (provider false), scopes of the permissions only staff hold
// (models.StaffPermission): a customer's client never holds them, whoever
// registers or changes it. Errors: VALIDATION_ERROR naming scopes[i].
func checkStaffScopes(provider bool, scopes []string) error {
	if provider {
		return nil
	}
	var v models.Validator
	for i, perm := range scopePermissions(scopes) {
		v.Check(!models.StaffPermission(perm), "scopes["+strconv.Itoa(i)+"]", "is a provider staff scope: a customer's client cannot hold it")
	}
	return v.Err()
}

// encodeList stores a list as a JSON array ("[]" for nil).
func encodeList(x []string) string {
	if x == nil {
		x = []string{}
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// newClientSecret returns a fresh client secret and its bcrypt hash.
// Errors: INTERNAL_ERROR.
func newClientSecret() (secret, hash string, err error) {
	secret = "cs_" + models.RandomString(48)
	h, err := bcrypt.GenerateFromPassword([]byte(secret), bcrypt.DefaultCost)
	if err != nil {
		return "", "", models.Internal(err)
	}
	return secret, string(h), nil
}

// CreateOAuthClient registers a client in p's organization and environment
// and returns it with its secret (confidential clients only; shown once).
// The client's scopes are bounded by p's permissions. Errors:
// VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS, INTERNAL_ERROR.
func (s *Store) CreateOAuthClient(ctx context.Context, p *models.Principal, in OAuthClientInput) (*OAuthClient, string, error) {
	if len(in.GrantTypes) == 0 {
		in.GrantTypes = []string{GrantAuthorizationCode, GrantRefreshToken}
	}
	if err := validateClient(&in); err != nil {
		return nil, "", err
	}
	// The client is the caller's organization's; staff are the provider's.
	if err := checkStaffScopes(p.IsStaff(), in.Scopes); err != nil {
		return nil, "", err
	}
	if !p.CanGrant(scopePermissions(in.Scopes)) {
		return nil, "", models.Errorf(models.CodeInsufficientPermissions, "a client cannot hold scopes whose permissions its creator lacks")
	}
	c := &OAuthClient{
		ID:     models.NewID(models.PrefixClient),
		Tenant: models.Tenant{OrganizationID: p.OrganizationID, Environment: p.Environment},
		Name:   in.Name, RedirectURIs: encodeList(in.RedirectURIs), GrantTypes: encodeList(in.GrantTypes), Scopes: encodeList(in.Scopes), Public: in.Public,
	}
	c.IPAllowList = in.IPAllowList
	secret := ""
	if !in.Public {
		var err error
		if secret, c.SecretHash, err = newClientSecret(); err != nil {
			return nil, "", err
		}
	}
	if err := s.In(ctx, p.OwnScope()).Create(c).Error; err != nil {
		return nil, "", models.DBErr(err)
	}
	return c, secret, nil
}

func uniq(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// LookupOAuthClient returns a client by id whatever its tenant (the OAuth
// endpoints authenticate clients before any tenant is known). Errors: NOT_FOUND.
func (s *Store) LookupOAuthClient(ctx context.Context, id string) (*OAuthClient, error) {
	var c OAuthClient
	err := s.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&c).Error
	return &c, models.NotFoundOr(err, "client")
}

var clientSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "name": "name"}

// ListOAuthClients returns a page of the clients visible to p (its
// organization and environment; provider staff see every organization of
// their environment). Errors: VALIDATION_ERROR (sort), INTERNAL_ERROR.
func (s *Store) ListOAuthClients(ctx context.Context, p *models.Principal, page models.PageRequest) ([]OAuthClient, int64, error) {
	var rows []OAuthClient
	total, err := models.Paginate(s.In(ctx, p.Scope()).Model(&OAuthClient{}), page, clientSorts, &rows)
	return rows, total, err
}

// GetOAuthClient returns one client visible to p. Errors: NOT_FOUND
// (unknown, or another tenant's), INTERNAL_ERROR.
func (s *Store) GetOAuthClient(ctx context.Context, p *models.Principal, id string) (*OAuthClient, error) {
	var c OAuthClient
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&c).Error
	return &c, models.NotFoundOr(err, "client")
}

// OAuthClientPatch is a partial update of a client: nil fields are kept.
// Whether a client is public cannot change.
type OAuthClientPatch struct {
	Name         *string
	RedirectURIs *[]string
	GrantTypes   *[]string
	Scopes       *[]string
	IPAllowList  *[]string // [] removes the allow-list
}

// UpdateOAuthClient applies a partial update to a client visible to p and
// returns the client and the names of the fields that changed. The result
// is validated like a registration, and p must hold every permission of
// the resulting scopes (whoever can repoint a client's redirect URIs can
// obtain its tokens). Taking away a scope or a grant type revokes the
// client's access tokens at once (their jtis go on the deny-list; a later
// refresh of a grant that used a removed scope or grant type is refused);
// changing the redirect URIs voids the authorization codes not yet
// exchanged; taking away the device grant voids pending device codes.
// Errors: NOT_FOUND, VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS, INTERNAL_ERROR.
func (s *Store) UpdateOAuthClient(ctx context.Context, p *models.Principal, id string, patch OAuthClientPatch) (*OAuthClient, []string, error) {
	var out OAuthClient
	var changed []string
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var c OAuthClient
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "client")
		}
		provider, err := orgIsProvider(ctx, tx, c.OrganizationID)
		if err != nil {
			return err
		}
		if err := mayManageClient(p, &c, provider, "change"); err != nil {
			return err
		}
		redirects, grants, scopes := c.Lists()
		next := OAuthClientInput{Name: c.Name, RedirectURIs: redirects, GrantTypes: grants, Scopes: scopes, Public: c.Public, IPAllowList: c.IPAllowList}
		if patch.Name != nil {
			next.Name = *patch.Name
		}
		if patch.RedirectURIs != nil {
			next.RedirectURIs = *patch.RedirectURIs
		}
		if patch.GrantTypes != nil {
			next.GrantTypes = *patch.GrantTypes
		}
		if patch.Scopes != nil {
			next.Scopes = *patch.Scopes
		}
		if patch.IPAllowList != nil {
			next.IPAllowList = *patch.IPAllowList
		}
		if err := validateClient(&next, redirects...); err != nil {
			return err
		}
		if err := checkStaffScopes(provider, next.Scopes); err != nil {
			return err
		}
		if !p.CanGrant(scopePermissions(next.Scopes)) {
			return models.Errorf(models.CodeInsufficientPermissions, "a client can only be changed by a credential that holds every permission of its scopes")
		}
		now := s.Now()
		updates := map[string]any{}
		if next.Name != c.Name {
			updates["name"], changed = next.Name, append(changed, "name")
		}
		if !sameSet(next.RedirectURIs, redirects) {
			updates["redirect_uris"], changed = encodeList(next.RedirectURIs), append(changed, "redirect_uris")
		}
		if !sameSet(next.GrantTypes, grants) {
			updates["grant_types"], changed = encodeList(next.GrantTypes), append(changed, "grant_types")
		}
		if !sameSet(next.Scopes, scopes) {
			updates["scopes"], changed = encodeList(next.Scopes), append(changed, "scopes")
		}
		if !sameSet(next.IPAllowList, c.IPAllowList) {
			updates["ip_allow_list"], changed = encodeList(next.IPAllowList), append(changed, "ip_allowlist")
		}
		if len(updates) > 0 {
			updates["updated_at"] = now
			if err := tx.Model(&OAuthClient{}).Where("id = ?", id).Updates(updates).Error; err != nil {
				return models.DBErr(err)
			}
		}
		if removesAny(scopes, next.Scopes) || removesAny(grants, next.GrantTypes) {
			if _, err := revokeClientAccessTokens(tx, id, now, "client scopes or grant types reduced"); err != nil {
				return err
			}
		}
		if removesAny(redirects, next.RedirectURIs) || !slices.Contains(next.GrantTypes, GrantAuthorizationCode) {
			err := tx.Where("client_id = ? AND ((kind = ? AND active = ?) OR kind = ?)", id, OAuthKindCode, true, OAuthKindPKCE).Delete(&OAuthToken{}).Error
			if err != nil {
				return models.DBErr(err)
			}
		}
		if !slices.Contains(next.GrantTypes, GrantDeviceCode) {
			if err := tx.Where("client_id = ?", id).Delete(&DeviceGrant{}).Error; err != nil {
				return models.DBErr(err)
			}
		}
		return models.DBErr(tx.Where("id = ?", id).Take(&out).Error)
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return &out, changed, nil
}

// RotateOAuthClientSecret replaces a confidential client's secret and
// returns the client with the new secret (shown once). The old secret stops
// working at once; tokens already issued stay valid (delete the client to
// end them). p must hold every permission of the client's scopes.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (a public client has no
// secret), INSUFFICIENT_PERMISSIONS, INTERNAL_ERROR.
func (s *Store) RotateOAuthClientSecret(ctx context.Context, p *models.Principal, id string) (*OAuthClient, string, error) {
	var out OAuthClient
	secret := ""
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var c OAuthClient
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "client")
		}
		if c.Public {
			return models.Errorf(models.CodeInvalidStateTransition, "a public client has no secret to rotate").WithDetail("public", true)
		}
		provider, err := orgIsProvider(ctx, tx, c.OrganizationID)
		if err != nil {
			return err
		}
		if err := mayManageClient(p, &c, provider, "rotate"); err != nil {
			return err
		}
		_, _, scopes := c.Lists()
		if !p.CanGrant(scopePermissions(scopes)) {
			return models.Errorf(models.CodeInsufficientPermissions, "a client's secret can only be rotated by a credential that holds every permission of its scopes")
		}
		var hash string
		if secret, hash, err = newClientSecret(); err != nil {
			return err
		}
		now := s.Now()
		if err := tx.Model(&OAuthClient{}).Where("id = ?", id).Updates(map[string]any{"secret_hash": hash, "secret_rotated_at": now, "updated_at": now}).Error; err != nil {
			return models.DBErr(err)
		}
		return models.DBErr(tx.Where("id = ?", id).Take(&out).Error)
	})
	if err != nil {
		return nil, "", models.AsError(err)
	}
	return &out, secret, nil
}

// DeleteOAuthClient deletes a client visible to p and everything it was
// given: its access tokens go on the deny-list (the API refuses them at
// once), its authorization codes, refresh tokens and device codes are
// deleted. It returns the deleted client and how many access tokens were
// revoked. Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS, INTERNAL_ERROR.
func (s *Store) DeleteOAuthClient(ctx context.Context, p *models.Principal, id string) (*OAuthClient, int64, error) {
	var c OAuthClient
	var revoked int64
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "client")
		}
		provider, err := orgIsProvider(ctx, tx, c.OrganizationID)
		if err != nil {
			return err
		}
		if err := mayManageClient(p, &c, provider, "delete"); err != nil {
			return err
		}
		if _, _, scopes := c.Lists(); !p.CanGrant(scopePermissions(scopes)) {
			return models.Errorf(models.CodeInsufficientPermissions, "a client can only be deleted by a credential that holds every permission of its scopes")
		}
		if revoked, err = revokeClientAccessTokens(tx, id, s.Now(), "client deleted"); err != nil {
			return err
		}
		if err := tx.Where("client_id = ?", id).Delete(&OAuthToken{}).Error; err != nil {
			return models.DBErr(err)
		}
		if err := tx.Where("client_id = ?", id).Delete(&DeviceGrant{}).Error; err != nil {
			return models.DBErr(err)
		}
		return models.DBErr(tx.Where("id = ?", id).Delete(&OAuthClient{}).Error)
	})
	if err != nil {
		return nil, 0, models.AsError(err)
	}
	return &c, revoked, nil
}

// revokeClientAccessTokens puts the jti of every unexpired access token of
// a client on the deny-list and marks the tokens inactive; it returns how
// many tokens it deny-listed. Errors: INTERNAL_ERROR.
func revokeClientAccessTokens(tx *gorm.DB, clientID string, now time.Time, reason string) (int64, error) {
	var rows []OAuthToken
	err := tx.Select("jti", "subject", "expires_at").
		Where("client_id = ? AND kind = ? AND expires_at > ? AND jti <> ''", clientID, OAuthKindAccess, now).Find(&rows).Error
	if err != nil {
		return 0, models.DBErr(err)
	}
	deny := make([]RevokedToken, 0, len(rows))
	for _, r := range rows {
		deny = append(deny, RevokedToken{JTI: r.JTI, Subject: r.Subject, ExpiresAt: r.ExpiresAt.UTC(), RevokedAt: now, Reason: reason})
	}
	if len(deny) > 0 {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(&deny, 500).Error; err != nil {
			return 0, models.DBErr(err)
		}
	}
	err = tx.Model(&OAuthToken{}).Where("client_id = ? AND kind = ? AND active = ?", clientID, OAuthKindAccess, true).Update("active", false).Error
	return int64(len(deny)), models.DBErr(err)
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return len(a) == len(b) && !removesAny(a, b)
}

// removesAny reports whether an item of before is missing from after.
func removesAny(before, after []string) bool {
	for _, x := range before {
		if !slices.Contains(after, x) {
			return true
		}
	}
	return false
}

// OAuthToken is one stored OAuth artefact keyed by kind and signature:
// an authorization code, a PKCE request, an access token or a refresh token.
// Data holds the serialized authorization request (scopes, form, session).
type OAuthToken struct {
	Kind            string    `gorm:"primaryKey;size:16"`
	Signature       string    `gorm:"primaryKey;size:512"`
	RequestID       string    `gorm:"size:64;not null;index"`
	ClientID        string    `gorm:"size:40;not null;index"`
	Subject         string    `gorm:"size:40"`
	Active          bool      `gorm:"not null"`
	AccessSignature string    `gorm:"size:512"` // refresh tokens: the access token issued with it
	JTI             string    `gorm:"size:64"`  // access tokens: the JWT's jti
	ExpiresAt       time.Time `gorm:"not null;index"`
	RequestedAt     time.Time `gorm:"not null"`
	Data            string    `gorm:"type:text;not null"`
}

// SaveOAuthToken stores an OAuth artefact. Errors: INTERNAL_ERROR.
func (s *Store) SaveOAuthToken(ctx context.Context, t *OAuthToken) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Clauses(clause.OnConflict{UpdateAll: true}).Create(t).Error)
}

// GetOAuthToken returns the artefact of a kind by signature. Errors: NOT_FOUND.
func (s *Store) GetOAuthToken(ctx context.Context, kind, signature string) (*OAuthToken, error) {
	var t OAuthToken
	err := s.In(ctx, models.SystemScope()).Where("kind = ? AND signature = ?", kind, signature).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.NotFound("token")
	}
	return &t, models.DBErr(err)
}

// DeleteOAuthToken removes an artefact (no error when absent). Errors: INTERNAL_ERROR.
func (s *Store) DeleteOAuthToken(ctx context.Context, kind, signature string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Where("kind = ? AND signature = ?", kind, signature).Delete(&OAuthToken{}).Error)
}

// DeactivateOAuthTokens marks every artefact of a kind and request inactive
// and returns them. Errors: INTERNAL_ERROR.
func (s *Store) DeactivateOAuthTokens(ctx context.Context, kind, requestID string) ([]OAuthToken, error) {
	var rows []OAuthToken
	db := s.In(ctx, models.SystemScope())
	if err := db.Where("kind = ? AND request_id = ? AND active = ?", kind, requestID, true).Find(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	err := db.Model(&OAuthToken{}).Where("kind = ? AND request_id = ?", kind, requestID).Update("active", false).Error
	return rows, models.DBErr(err)
}

// DeactivateOAuthToken marks one artefact inactive. Errors: INTERNAL_ERROR.
func (s *Store) DeactivateOAuthToken(ctx context.Context, kind, signature string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&OAuthToken{}).Where("kind = ? AND signature = ?", kind, signature).Update("active", false).Error)
}

// ServerSecret is a sealed secret the server generates for itself (the
// OAuth HMAC key of authorization codes and refresh tokens).
type ServerSecret struct {
	Name      string    `gorm:"primaryKey;size:40"`
	Sealed    string    `gorm:"type:text;not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// EnsureServerSecret returns the named secret, generating and sealing it on
// first use (a read, then a write only when it is missing); concurrent
// callers get the same value. Errors: INTERNAL_ERROR.
func (s *Store) EnsureServerSecret(ctx context.Context, name string) (string, error) {
	return s.EnsureServerSecretWith(ctx, name, func() (string, error) { return models.RandomString(48), nil })
}

// Device authorization (RFC 8628) statuses.
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
	DeviceConsumed = "consumed"
)

// Poll outcomes of a device grant (RFC 8628 error codes, or "" when approved).
const (
	PollPending  = "authorization_pending"
	PollSlowDown = "slow_down"
	PollDenied   = "access_denied"
	PollExpired  = "expired_token"
	PollInvalid  = "invalid_grant"
)

// userCodeAlphabet has no vowels (no words) and no look-alike characters (RFC 8628 6.1).
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// DeviceGrant is a pending device authorization: the device polls with the
// device code (stored hashed) while the user approves the user code.
type DeviceGrant struct {
	DeviceCodeHash string     `gorm:"primaryKey;size:64"`
	UserCode       string     `gorm:"size:16;not null;uniqueIndex"`
	ClientID       string     `gorm:"size:40;not null;index"`
	Scopes         string     `gorm:"type:text;not null"` // JSON array
	Status         string     `gorm:"size:16;not null"`
	UserID         string     `gorm:"size:40"`
	Interval       int        `gorm:"not null"` // seconds between polls
	LastPolledAt   *time.Time `json:"-"`
	ExpiresAt      time.Time  `gorm:"not null;index"`
	CreatedAt      time.Time  `gorm:"not null"`
}

// ScopeList returns the grant's requested scopes.
func (g *DeviceGrant) ScopeList() []string {
	var out []string
	_ = json.Unmarshal([]byte(g.Scopes), &out)
	return out
}

// NormalizeUserCode returns a user code as stored: upper case, letters only.
func NormalizeUserCode(code string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		if r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FormatUserCode returns a user code for display, XXXX-XXXX.
func FormatUserCode(code string) string {
	if len(code) == 8 {
		return code[:4] + "-" + code[4:]
	}
	return code
}

// CreateDeviceGrant starts a device authorization for a client and returns
// the device code (secret, shown once) and the grant. Errors: INTERNAL_ERROR.
func (s *Store) CreateDeviceGrant(ctx context.Context, clientID string, scopes []string, ttl time.Duration, interval int) (string, *DeviceGrant, error) {
	if scopes == nil {
		scopes = []string{}
	}
	raw, _ := json.Marshal(scopes)
	deviceCode := models.RandomString(43)
	now := s.Now()
	for attempt := 0; attempt < 5; attempt++ {
		code := make([]byte, 8)
		for i, c := range models.RandomString(8) {
			code[i] = userCodeAlphabet[int(c)%len(userCodeAlphabet)]
		}
		g := &DeviceGrant{DeviceCodeHash: models.HashSecret(deviceCode), UserCode: string(code), ClientID: clientID, Scopes: string(raw),
			Status: DevicePending, Interval: interval, ExpiresAt: now.Add(ttl), CreatedAt: now}
		err := s.In(ctx, models.SystemScope()).Create(g).Error
		if err == nil {
			return deviceCode, g, nil
		}
		if !models.IsUniqueViolation(err) {
			return "", nil, models.DBErr(err)
		}
	}
	return "", nil, models.Internal(errors.New("no free user code"))
}

// PendingDeviceGrant returns the pending, unexpired grant of a user code.
// Errors: NOT_FOUND.
func (s *Store) PendingDeviceGrant(ctx context.Context, userCode string) (*DeviceGrant, error) {
	var g DeviceGrant
	err := s.In(ctx, models.SystemScope()).Where("user_code = ? AND status = ? AND expires_at > ?", NormalizeUserCode(userCode), DevicePending, s.Now()).Take(&g).Error
	return &g, models.NotFoundOr(err, "device code")
}

// DecideDeviceGrant approves (for userID) or denies a pending grant.
// Errors: NOT_FOUND (unknown, expired or already decided).
func (s *Store) DecideDeviceGrant(ctx context.Context, userCode, userID string, approve bool) error {
	upd := map[string]any{"status": DeviceDenied}
	if approve {
		upd = map[string]any{"status": DeviceApproved, "user_id": userID}
	}
	res := s.In(ctx, models.SystemScope()).Model(&DeviceGrant{}).
		Where("user_code = ? AND status = ? AND expires_at > ?", NormalizeUserCode(userCode), DevicePending, s.Now()).Updates(upd)
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("device code")
	}
	return nil
}

// PollDeviceGrant records a poll of the device code by clientID and returns
// the grant with the outcome: "" when approved (the grant is consumed, so a
// second poll cannot get tokens again), or an RFC 8628 error code. Polling
// faster than the interval is slow_down and adds 5 seconds to the interval.
// Errors: INTERNAL_ERROR.
func (s *Store) PollDeviceGrant(ctx context.Context, deviceCode, clientID string) (*DeviceGrant, string, error) {
	db := s.In(ctx, models.SystemScope())
	var g DeviceGrant
	err := db.Where("device_code_hash = ?", models.HashSecret(deviceCode)).Take(&g).Error
	if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && g.ClientID != clientID) {
		return nil, PollInvalid, nil
	}
	if err != nil {
		return nil, "", models.DBErr(err)
	}
	now := s.Now()
	if !now.Before(g.ExpiresAt) {
		return &g, PollExpired, nil
	}
	upd := map[string]any{"last_polled_at": now}
	outcome := ""
	if g.LastPolledAt != nil && now.Sub(*g.LastPolledAt) < time.Duration(g.Interval)*time.Second && g.Status == DevicePending {
		upd["interval"] = g.Interval + 5
		outcome = PollSlowDown
	}
	if err := db.Model(&DeviceGrant{}).Where("device_code_hash = ?", g.DeviceCodeHash).Updates(upd).Error; err != nil {
		return nil, "", models.DBErr(err)
	}
	if outcome != "" {
		return &g, outcome, nil
	}
	switch g.Status {
	case DevicePending:
		return &g, PollPending, nil
	case DeviceDenied:
		return &g, PollDenied, nil
	case DeviceApproved:
		res := db.Model(&DeviceGrant{}).Where("device_code_hash = ? AND status = ?", g.DeviceCodeHash, DeviceApproved).Update("status", DeviceConsumed)
		if res.Error != nil {
			return nil, "", models.DBErr(res.Error)
		}
		if res.RowsAffected == 1 {
			return &g, "", nil
		}
	}
	return &g, PollInvalid, nil
}

// DeviceUser returns the user who approved a device grant. Errors: NOT_FOUND.
func (s *Store) DeviceUser(ctx context.Context, userID string) (*User, error) {
	var u User
	err := s.In(ctx, models.SystemScope()).Where("id = ?", userID).Take(&u).Error
	return &u, models.NotFoundOr(err, "user")
}

// ClientRateLimits authenticates an OAuth client by its secret and returns
// the rate limits of its organization's plan, which its requests to the
// OAuth endpoints count against (not the caller address's anonymous
// budget). Public clients have no secret and are not authenticated here.
// Errors: INVALID_TOKEN (unknown client, public client, wrong secret),
// INTERNAL_ERROR.
func (s *Store) ClientRateLimits(ctx context.Context, clientID, secret string) (*OAuthClient, models.RateLimits, error) {
	refused := models.Errorf(models.CodeInvalidToken, "client authentication failed")
	if !models.HasPrefix(clientID, models.PrefixClient) || len(clientID) > 40 || secret == "" || len(secret) > 200 {
		return nil, models.RateLimits{}, refused
	}
	c, err := s.LookupOAuthClient(ctx, clientID)
	if err != nil {
		if models.ErrorCode(err) == models.CodeNotFound {
			return nil, models.RateLimits{}, refused
		}
		return nil, models.RateLimits{}, err
	}
	if c.Public || c.SecretHash == "" || s.comparePassword(c.SecretHash, secret) != nil {
		return nil, models.RateLimits{}, refused
	}
	var org models.Organization
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", c.OrganizationID).Take(&org).Error; err != nil {
		return nil, models.RateLimits{}, models.DBErr(err)
	}
	l := org.Limits()
	return c, models.RateLimits{Hourly: l.HourlyLimit, Burst: l.BurstLimit, Concurrent: l.Concurrent}, nil
}

// mayManageClient is mayManage for client c: a client of the provider's
// organization (provider) signs staff in (an administrator's authorization
// code passes through its redirect URIs), so it is weighed as an
// administrator's credential and only administrators change, rotate or
// delete it. Errors: INSUFFICIENT_PERMISSIONS.
func mayManageClient(p *models.Principal, c *OAuthClient, provider bool, verb string) error {
	var role models.Role
	if provider {
		role = models.RoleAdmin
	}
	return mayManage(p, c.OrganizationID, c.Environment, role, verb)
}

// orgIsProvider reports whether organization orgID is the provider's own,
// read through db (a transaction's, when there is one).
// Errors: INTERNAL_ERROR.
func orgIsProvider(ctx context.Context, db *gorm.DB, orgID string) (bool, error) {
	var provider bool
	if err := models.Scoped(ctx, db, models.SystemScope()).Model(&models.Organization{}).Select("provider").
		Where("id = ?", orgID).Scan(&provider).Error; err != nil {
		return false, models.DBErr(err)
	}
	return provider, nil
}
