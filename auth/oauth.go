package auth

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// Lifetimes of OAuth artefacts.
const (
	AuthorizeCodeTTL = 10 * time.Minute
	RefreshTokenTTL  = 30 * 24 * time.Hour
)

// Session is what a grant carries between the authorization and token
// endpoints: who the tokens act for and in which tenant.
type Session struct {
	ExpiresAt      map[fosite.TokenType]time.Time `json:"expires_at"`
	Username       string                         `json:"username"`
	Subject        string                         `json:"subject"` // usr_ (user grants) or cli_ (client credentials)
	UserID         string                         `json:"user_id,omitempty"`
	OrganizationID string                         `json:"organization_id"`
	Environment    string                         `json:"environment"`
	AuthMethod     string                         `json:"auth_method"`
	JTI            string                         `json:"jti,omitempty"` // of the access token last issued
	// ExpiresIn is the lifetime of the access token last issued, in
	// seconds (its exp less its iat): the token endpoint's expires_in.
	ExpiresIn int `json:"expires_in,omitempty"`
	// GrantScope is, during a refresh, the scopes of the grant being
	// refreshed: the new refresh token keeps them even when the refresh
	// asked for fewer (RFC 6749 section 6), which narrow only the new
	// access token.
	GrantScope []string `json:"grant_scope,omitempty"`
}

// SetExpiresAt sets the expiry of a token type.
func (s *Session) SetExpiresAt(key fosite.TokenType, exp time.Time) {
	if s.ExpiresAt == nil {
		s.ExpiresAt = map[fosite.TokenType]time.Time{}
	}
	s.ExpiresAt[key] = exp
}

// GetExpiresAt returns the expiry of a token type (zero when unset).
func (s *Session) GetExpiresAt(key fosite.TokenType) time.Time { return s.ExpiresAt[key] }

// GetUsername returns the signed-in user's e-mail ("" for clients).
func (s *Session) GetUsername() string { return s.Username }

// GetSubject returns the usr_ or cli_ id the tokens act for.
func (s *Session) GetSubject() string { return s.Subject }

// Clone returns a deep copy.
func (s *Session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	c.ExpiresAt = maps.Clone(s.ExpiresAt)
	return &c
}

// strategy issues the platform's JWTs as access tokens and fosite's HMAC
// tokens as authorization codes and refresh tokens.
type strategy struct {
	*oauth2.HMACSHAStrategy
	tokens *Tokens
}

// AccessTokenSignature returns the JWS signature part of an access token.
func (st *strategy) AccessTokenSignature(_ context.Context, token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	return parts[2]
}

// GenerateAccessToken signs the JWT of a grant: permissions from the granted scopes.
func (st *strategy) GenerateAccessToken(ctx context.Context, r fosite.Requester) (string, string, error) {
	sess, ok := r.GetSession().(*Session)
	if !ok || sess.Subject == "" {
		return "", "", fosite.ErrServerError.WithDebug("grant without a platform session")
	}
	perms := []string{}
	for _, sc := range r.GetGrantedScopes() {
		if models.ValidScope(sc) {
			perms = append(perms, models.ScopeToPermission(sc))
		}
	}
	ttl := AccessTokenTTL
	if exp := sess.GetExpiresAt(fosite.AccessToken); !exp.IsZero() {
		ttl = time.Until(exp).Round(time.Second)
	}
	issued, err := st.tokens.Issue(ctx, Grant{
		Subject: sess.Subject, OrganizationID: sess.OrganizationID, Environment: models.Environment(sess.Environment),
		Permissions: perms, Scope: strings.Join(r.GetGrantedScopes(), " "), ClientID: r.GetClient().GetID(),
		AuthMethod: sess.AuthMethod, TTL: ttl,
	})
	if err != nil {
		return "", "", fosite.ErrServerError.WithWrap(err).WithDebug(err.Error())
	}
	sess.JTI, sess.ExpiresIn = issued.JTI, issued.ExpiresIn
	sess.SetExpiresAt(fosite.AccessToken, issued.ExpiresAt)
	return issued.Token, st.AccessTokenSignature(ctx, issued.Token), nil
}

// ValidateAccessToken verifies the JWT (signature, claims, deny-list).
func (st *strategy) ValidateAccessToken(ctx context.Context, _ fosite.Requester, token string) error {
	if _, err := st.tokens.Verify(ctx, token); err != nil {
		if models.ErrorCode(err) == models.CodeTokenExpired {
			return fosite.ErrTokenExpired.WithWrap(err)
		}
		return fosite.ErrTokenSignatureMismatch.WithWrap(err)
	}
	return nil
}

// OAuth is the OAuth 2.0 authorization server (fosite): authorization code
// with PKCE S256, client credentials, refresh-token rotation with reuse
// detection, introspection and revocation, on the platform's storage and
// JWT access tokens.
type OAuth struct {
	store    *models.Store
	identity *identity.Store
	tokens   *Tokens
	storage  *Storage

	mu       sync.Mutex
	provider fosite.OAuth2Provider
	strategy *strategy
}

// NewOAuth returns the authorization server of tokens' issuer. Its HMAC
// secret is created (sealed, in the database) on first use.
func NewOAuth(store *models.Store, tokens *Tokens) *OAuth {
	return &OAuth{store: store, identity: identity.NewStore(store), tokens: tokens, storage: NewStorage(store)}
}

// Provider returns the fosite provider, building it on first use.
// Errors: INTERNAL_ERROR (no SECRETS_KEY, database).
func (o *OAuth) Provider(ctx context.Context) (fosite.OAuth2Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	secret, err := o.identity.EnsureServerSecret(ctx, "oauth_hmac")
	if err != nil {
		return nil, err
	}
	if len(secret) < 32 {
		return nil, models.Internal(errors.New("oauth secret too short"))
	}
	cfg := &fosite.Config{
		AccessTokenLifespan:            AccessTokenTTL,
		RefreshTokenLifespan:           RefreshTokenTTL,
		AuthorizeCodeLifespan:          AuthorizeCodeTTL,
		GlobalSecret:                   []byte(secret)[:32],
		EnforcePKCE:                    true,
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.DefaultAudienceMatchingStrategy,
		RefreshTokenScopes:             []string{}, // every authorization-code grant gets a refresh token
		TokenURL:                       o.tokens.Issuer() + "/oauth/token",
		AccessTokenIssuer:              o.tokens.Issuer(),
		SendDebugMessagesToClients:     false,
		MinParameterEntropy:            8,
	}
	st := &strategy{HMACSHAStrategy: compose.NewOAuth2HMACStrategy(cfg), tokens: o.tokens}
	o.strategy = st
	o.provider = compose.Compose(cfg, o.storage, st,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2PKCEFactory,
		compose.OAuth2ClientCredentialsGrantFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenIntrospectionFactory,
		compose.OAuth2TokenRevocationFactory,
	)
	return o.provider, nil
}

// Storage returns the fosite storage (clients, grants).
func (o *OAuth) Storage() *Storage { return o.storage }

// ClientSession returns the session of a client-credentials grant: the
// client acts for itself in its organization and environment.
func ClientSession(c fosite.Client) (*Session, bool) {
	cl, ok := c.(*Client)
	if !ok {
		return nil, false
	}
	return &Session{Subject: cl.GetID(), OrganizationID: cl.OrganizationID, Environment: string(cl.Environment), AuthMethod: "client_credentials"}, true
}

// UserSession returns the session of a user who signed in through client c.
// Errors: INSUFFICIENT_PERMISSIONS (the client belongs to another organization).
func UserSession(c fosite.Client, u *identity.User, method string) (*Session, error) {
	cl, ok := c.(*Client)
	if !ok {
		return nil, models.Internal(errors.New("unexpected client type"))
	}
	if cl.OrganizationID != u.OrganizationID {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "this application belongs to another organization")
	}
	return &Session{Subject: u.ID, UserID: u.ID, Username: u.Email, OrganizationID: u.OrganizationID, Environment: string(cl.Environment), AuthMethod: method}, nil
}

// Issued tokens of a grant completed outside fosite's handlers (device flow).
type GrantTokens struct {
	AccessToken  string
	RefreshToken string // "" unless the client may use refresh_token
	ExpiresIn    int
	Scope        string
}

// IssueTokens issues and stores an access token (and a refresh token when
// the client holds the refresh_token grant) for a session completed outside
// fosite's handlers, so that refresh, introspection and revocation treat
// them like any other grant. Errors: INTERNAL_ERROR.
func (o *OAuth) IssueTokens(ctx context.Context, client fosite.Client, sess *Session, scopes []string) (*GrantTokens, error) {
	if _, err := o.Provider(ctx); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	req := fosite.NewRequest()
	req.ID = models.RandomString(32)
	req.RequestedAt = now
	req.Client = client
	req.Session = sess
	for _, sc := range scopes {
		req.AppendRequestedScope(sc)
		req.GrantScope(sc)
	}
	sess.SetExpiresAt(fosite.AccessToken, now.Add(AccessTokenTTL))
	sess.SetExpiresAt(fosite.RefreshToken, now.Add(RefreshTokenTTL))
	access, accessSig, err := o.strategy.GenerateAccessToken(ctx, req)
	if err != nil {
		return nil, models.Internal(err)
	}
	if err := o.storage.CreateAccessTokenSession(ctx, accessSig, req.Sanitize(nil)); err != nil {
		return nil, models.Internal(err)
	}
	out := &GrantTokens{AccessToken: access, ExpiresIn: int(AccessTokenTTL / time.Second), Scope: strings.Join(scopes, " ")}
	if client.GetGrantTypes().Has(identity.GrantRefreshToken) {
		refresh, refreshSig, err := o.strategy.GenerateRefreshToken(ctx, req)
		if err != nil {
			return nil, models.Internal(err)
		}
		if err := o.storage.CreateRefreshTokenSession(ctx, refreshSig, accessSig, req.Sanitize(nil)); err != nil {
			return nil, models.Internal(err)
		}
		out.RefreshToken = refresh
	}
	return out, nil
}

// AuthenticateClient authenticates the client of a request (HTTP Basic,
// form secret, or client_id alone for public clients). Errors: fosite's
// invalid_client.
func (o *OAuth) AuthenticateClient(ctx context.Context, r *http.Request) (*Client, error) {
	p, err := o.Provider(ctx)
	if err != nil {
		return nil, err
	}
	f, ok := p.(*fosite.Fosite)
	if !ok {
		return nil, models.Internal(errors.New("unexpected provider type"))
	}
	if err := r.ParseForm(); err != nil {
		return nil, fosite.ErrInvalidRequest.WithWrap(err)
	}
	c, err := f.AuthenticateClient(ctx, r, r.PostForm)
	if err != nil {
		return nil, err
	}
	cl, ok := c.(*Client)
	if !ok {
		return nil, models.Internal(errors.New("unexpected client type"))
	}
	return cl, nil
}
