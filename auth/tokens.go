package auth

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// AccessTokenTTL is the lifetime of an access token (expires_in 3600).
const AccessTokenTTL = time.Hour

// clockSkew is the leeway allowed on exp, nbf and iat between servers.
const clockSkew = 30 * time.Second

// RateLimitClaim is the token's `rate_limit` claim.
type RateLimitClaim struct {
	RequestsPerMinute int `json:"requests_per_minute"`
}

// Claims are an access token's payload (spec 2.6): the registered claims
// plus permissions, organization_id and rate_limit, and the platform's own
// environment (live|test), scope, client_id and auth_method.
type Claims struct {
	jwt.RegisteredClaims
	Permissions    []string       `json:"permissions"`
	OrganizationID string         `json:"organization_id"`
	RateLimit      RateLimitClaim `json:"rate_limit"`
	Environment    string         `json:"environment,omitempty"`
	Scope          string         `json:"scope,omitempty"`
	ClientID       string         `json:"client_id,omitempty"`
	AuthMethod     string         `json:"auth_method,omitempty"` // password, device, saml, client_credentials
	// KeyID is the kid of the signing key that signed the token (its
	// header, not a claim): set by Parse, checked again by Recheck.
	KeyID string `json:"-"`
}

// MarshalJSON writes the claims with a single audience as a JSON string
// (`"aud": "https://api.example.com/v1"`) rather than a one-element array;
// several audiences stay an array. Parsing accepts both forms.
func (c Claims) MarshalJSON() ([]byte, error) {
	type plain Claims // no MarshalJSON: no recursion
	var aud any
	switch len(c.Audience) {
	case 0:
	case 1:
		aud = c.Audience[0]
	default:
		aud = []string(c.Audience)
	}
	// The outer aud is shallower than the embedded one, so it wins.
	return json.Marshal(struct {
		plain
		Audience any `json:"aud,omitempty"`
	}{plain(c), aud})
}

// Tokens issues and verifies the platform's RS256 access tokens:
// iss = PUBLIC_BASE_URL, aud = PUBLIC_BASE_URL + "/v1".
type Tokens struct {
	store    *models.Store
	identity *identity.Store
	keys     *KeyRing
	issuer   string
	audience string
	now      func() time.Time
}

// NewTokens returns the token service for the server at publicBaseURL; now
// is the clock (nil: the system clock).
func NewTokens(store *models.Store, publicBaseURL string, now func() time.Time) *Tokens {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	base := strings.TrimRight(publicBaseURL, "/")
	return &Tokens{store: store, identity: identity.NewStore(store), keys: NewKeyRing(store, now), issuer: base, audience: base + "/v1", now: now}
}

// Keys returns the signing key ring (JWKS, rotation).
func (t *Tokens) Keys() *KeyRing { return t.keys }

// Issuer returns the `iss` of every token.
func (t *Tokens) Issuer() string { return t.issuer }

// Audience returns the `aud` of every token.
func (t *Tokens) Audience() string { return t.audience }

// Grant says what an access token is for.
type Grant struct {
	Subject           string // usr_ or cli_ id
	OrganizationID    string
	Environment       models.Environment // "" means live
	Permissions       []string
	RequestsPerMinute int // 0: the organization plan's hourly limit / 60, rounded up
	Scope             string
	ClientID          string
	AuthMethod        string
	TTL               time.Duration // 0: AccessTokenTTL
}

// Issued is a signed access token with its identifiers.
type Issued struct {
	Token     string
	JTI       string
	KeyID     string
	ExpiresAt time.Time
	ExpiresIn int // seconds
}

// Issue signs an access token for g. Errors: VALIDATION_ERROR (bad grant), INTERNAL_ERROR.
func (t *Tokens) Issue(ctx context.Context, g Grant) (*Issued, error) {
	var v models.Validator
	v.Check(models.HasPrefix(g.Subject, models.PrefixUser) || models.HasPrefix(g.Subject, models.PrefixClient), "sub", "must be a usr_ or cli_ id")
	v.Check(models.HasPrefix(g.OrganizationID, models.PrefixOrganization), "organization_id", "must be an org_ id")
	if g.Environment == "" {
		g.Environment = models.EnvLive
	}
	v.Check(g.Environment.Valid(), "environment", "must be live or test")
	for _, p := range g.Permissions {
		v.Check(models.ValidPermission(p), "permissions", "unknown permission "+p)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if g.TTL <= 0 {
		g.TTL = AccessTokenTTL
	}
	if g.RequestsPerMinute <= 0 {
		sub, err := t.identity.ResolveTokenSubject(ctx, g.OrganizationID, g.Subject)
		if err != nil {
			return nil, err
		}
		// Rounded up, so that ×60 never lowers the plan's hourly limit.
		g.RequestsPerMinute = (sub.Organization.Limits().HourlyLimit + 59) / 60
	}
	signer, err := t.keys.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	now := t.now().UTC().Truncate(time.Second)
	exp := now.Add(g.TTL)
	perms := g.Permissions
	if perms == nil {
		perms = []string{}
	}
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    t.issuer,
			Subject:   g.Subject,
			Audience:  jwt.ClaimStrings{t.audience},
			ExpiresAt: jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        models.RandomString(32),
		},
		Permissions:    perms,
		OrganizationID: g.OrganizationID,
		RateLimit:      RateLimitClaim{RequestsPerMinute: g.RequestsPerMinute},
		Environment:    string(g.Environment),
		Scope:          g.Scope,
		ClientID:       g.ClientID,
		AuthMethod:     g.AuthMethod,
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = signer.kid
	signed, err := tok.SignedString(signer.key)
	if err != nil {
		return nil, models.Internal(err)
	}
	return &Issued{Token: signed, JTI: claims.ID, KeyID: signer.kid, ExpiresAt: exp, ExpiresIn: int(g.TTL / time.Second)}, nil
}

// LooksLikeJWT reports whether a bearer credential has the shape of a JWS
// compact serialization (three dot-separated parts).
func LooksLikeJWT(s string) bool { return strings.Count(s, ".") == 2 }

// Parse verifies a token's signature (RS256 only, key by kid), issuer,
// audience, expiry (required), not-before and issued-at, WITHOUT consulting
// the deny-list (introspection and revocation use it). Errors: INVALID_TOKEN,
// TOKEN_EXPIRED, INTERNAL_ERROR.
func (t *Tokens) Parse(ctx context.Context, raw string) (*Claims, error) {
	var keyErr error
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodRS256.Alg()}),
		jwt.WithIssuer(t.issuer),
		jwt.WithAudience(t.audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(clockSkew),
		jwt.WithTimeFunc(t.now),
	)
	claims := &Claims{}
	parsed, err := parser.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		if kid == "" {
			keyErr = models.Errorf(models.CodeInvalidToken, "the access token has no kid")
			return nil, keyErr
		}
		k, err := t.keys.PublicKey(ctx, kid)
		if err != nil {
			keyErr = err
		}
		return k, err
	})
	if err != nil {
		switch {
		case keyErr != nil && models.ErrorCode(keyErr) == models.CodeInternal:
			return nil, keyErr
		case errors.Is(err, jwt.ErrTokenExpired):
			return nil, models.Errorf(models.CodeTokenExpired, "the access token has expired; request a new one")
		case keyErr != nil:
			return nil, keyErr
		default:
			return nil, models.Errorf(models.CodeInvalidToken, "the access token is not valid: %s", reason(err))
		}
	}
	if claims.ID == "" || claims.Subject == "" || !models.HasPrefix(claims.OrganizationID, models.PrefixOrganization) {
		return nil, models.Errorf(models.CodeInvalidToken, "the access token lacks jti, sub or organization_id")
	}
	claims.KeyID, _ = parsed.Header["kid"].(string)
	if claims.Environment == "" {
		claims.Environment = string(models.EnvLive)
	}
	if !models.Environment(claims.Environment).Valid() {
		return nil, models.Errorf(models.CodeInvalidToken, "the access token's environment is not live or test")
	}
	return claims, nil
}

// Verify is Parse plus the deny-list: a revoked token is refused.
// Errors: INVALID_TOKEN, TOKEN_EXPIRED, INTERNAL_ERROR.
func (t *Tokens) Verify(ctx context.Context, raw string) (*Claims, error) {
	claims, err := t.Parse(ctx, raw)
	if err != nil {
		return nil, err
	}
	revoked, err := t.identity.TokenRevoked(ctx, claims.ID)
	if err != nil {
		return nil, err
	}
	if revoked {
		return nil, models.Errorf(models.CodeInvalidToken, "the access token has been revoked")
	}
	return claims, nil
}

// Recheck checks claims verified earlier (by Verify) again: their expiry,
// their signing key (claims.KeyID: still published, as Parse requires; a
// retired key's tokens are refused) and the deny-list.
// Errors: TOKEN_EXPIRED, INVALID_TOKEN, INTERNAL_ERROR.
func (t *Tokens) Recheck(ctx context.Context, claims *Claims) error {
	if claims.ExpiresAt == nil || !t.now().Before(claims.ExpiresAt.Add(clockSkew)) {
		return models.Errorf(models.CodeTokenExpired, "the access token has expired; request a new one")
	}
	if claims.KeyID == "" {
		return models.Errorf(models.CodeInvalidToken, "the access token has no kid")
	}
	if _, err := t.keys.PublicKey(ctx, claims.KeyID); err != nil {
		return err
	}
	revoked, err := t.identity.TokenRevoked(ctx, claims.ID)
	if err != nil {
		return err
	}
	if revoked {
		return models.Errorf(models.CodeInvalidToken, "the access token has been revoked")
	}
	return nil
}

// Revoke deny-lists a valid token (signature checked; an expired token needs
// no revocation and is accepted silently). Errors: INVALID_TOKEN, INTERNAL_ERROR.
func (t *Tokens) Revoke(ctx context.Context, raw, reason string) error {
	claims, err := t.Parse(ctx, raw)
	if models.ErrorCode(err) == models.CodeTokenExpired {
		return nil
	}
	if err != nil {
		return err
	}
	return t.identity.RevokeTokenID(ctx, claims.ID, claims.Subject, claims.ExpiresAt.Time, reason)
}

// Principal builds the request principal of verified claims: the kind from
// the subject (usr_ user, cli_ OAuth client), the role from the user (a
// client acts as a customer of its organization), permissions from the
// token (a user's narrowed to what the user holds now), and rate limits from the organization's plan lowered by the
// token's requests_per_minute. Errors: INVALID_TOKEN, INTERNAL_ERROR.
func (t *Tokens) Principal(ctx context.Context, c *Claims) (*models.Principal, error) {
	sub, err := t.identity.ResolveTokenSubject(ctx, c.OrganizationID, c.Subject)
	if err != nil {
		return nil, err
	}
	p := &models.Principal{
		ID:             c.Subject,
		OrganizationID: c.OrganizationID,
		Environment:    models.Environment(c.Environment),
		Role:           models.RoleCustomer,
		Permissions:    slices.Clone(c.Permissions),
		Limits:         models.EffectiveLimits(sub.Organization, c.RateLimit.RequestsPerMinute, 0),
	}
	switch {
	case sub.User != nil:
		p.Kind, p.UserID, p.Role = models.PrincipalUser, sub.User.ID, sub.User.Role
		if sub.Organization == nil || !sub.Organization.Provider {
			// Staff act across organizations: only the provider's own
			// people are staff, whatever a user's row says.
			p.Role = models.RoleCustomer
		}
		// A person's token carries at most what the person holds now: a
		// permission taken from the user (or a role lowered) since the
		// token was issued is gone from its next request.
		user := *sub.User
		user.Role = p.Role
		p.Permissions = narrowPermissions(p.Permissions, user.SessionPermissions())
	case models.HasPrefix(c.Subject, models.PrefixClient):
		p.Kind = models.PrincipalClient
	default:
		return nil, models.Errorf(models.CodeInvalidToken, "the access token's subject is neither a user nor a client")
	}
	return p, nil
}

// narrowPermissions returns the permissions of token that holder holds
// ("*" in token stands for all of holder's).
func narrowPermissions(token, holder []string) []string {
	if slices.Contains(token, "*") {
		return slices.Clone(holder)
	}
	h := &models.Principal{Permissions: holder}
	out := make([]string, 0, len(token))
	for _, perm := range token {
		if h.Can(perm) {
			out = append(out, perm)
		}
	}
	return out
}

func reason(err error) string {
	for _, e := range []error{jwt.ErrTokenMalformed, jwt.ErrTokenSignatureInvalid, jwt.ErrTokenInvalidAudience,
		jwt.ErrTokenInvalidIssuer, jwt.ErrTokenNotValidYet, jwt.ErrTokenUsedBeforeIssued, jwt.ErrTokenUnverifiable,
		jwt.ErrTokenRequiredClaimMissing, jwt.ErrTokenInvalidClaims} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "unverifiable token"
}
