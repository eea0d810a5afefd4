package portal

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/telcoplatform/platform/models"
)

// Access tokens of the pages: a page calls the API with an access token
// minted for its session (Sessions.AccessToken). One token serves the
// session's pages in an environment until tokenRefresh before it expires,
// so a page load does not sign a token. The token is minted again when
// what it carries changes: another permission set, role, organization or
// authentication method gives another key (the session is read afresh on
// every page), and a verified second factor or the end of the session
// forgets the session's tokens (Portal.Forget).
const (
	// tokenRefresh is how long before its expiry a cached token is
	// replaced.
	tokenRefresh = time.Minute
	// maxCachedTokens bounds the cache: beyond it the expired entries go,
	// then every entry.
	maxCachedTokens = 10000
)

// tokenKey is what a cached token was minted for.
type tokenKey struct {
	session string
	env     models.Environment
	grant   string // user, organization, role, authentication method and permissions
}

// cachedToken is a minted token and its expiry.
type cachedToken struct {
	token   string
	expires time.Time
}

// tokenCache holds the access tokens minted for sessions.
type tokenCache struct {
	mu     sync.Mutex
	now    func() time.Time
	tokens map[tokenKey]cachedToken
}

func newTokenCache(now func() time.Time) *tokenCache {
	if now == nil {
		now = time.Now
	}
	return &tokenCache{now: now, tokens: map[tokenKey]cachedToken{}}
}

// keyOf is the cache key of s's token in env.
func keyOf(s *Session, env models.Environment) tokenKey {
	grant := strings.Join([]string{s.UserID, s.OrganizationID, s.Role, s.AuthMethod, strings.Join(s.Permissions, " ")}, "\x00")
	return tokenKey{session: s.ID, env: env, grant: grant}
}

// token returns s's token in env: the cached one while it has more than
// tokenRefresh to live, or one mint returns (then cached).
func (tc *tokenCache) token(ctx context.Context, s *Session, env models.Environment,
	mint func(context.Context, *Session, models.Environment) (string, time.Time, error)) (string, error) {
	key := keyOf(s, env)
	tc.mu.Lock()
	if t, ok := tc.tokens[key]; ok && tc.now().Add(tokenRefresh).Before(t.expires) {
		tc.mu.Unlock()
		return t.token, nil
	}
	tc.mu.Unlock()
	token, expires, err := mint(ctx, s, env)
	if err != nil {
		return "", err
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if len(tc.tokens) >= maxCachedTokens {
		now := tc.now()
		for k, t := range tc.tokens {
			if !now.Before(t.expires) {
				delete(tc.tokens, k)
			}
		}
		if len(tc.tokens) >= maxCachedTokens {
			clear(tc.tokens)
		}
	}
	tc.tokens[key] = cachedToken{token: token, expires: expires}
	return token, nil
}

// forget drops the tokens of the session with audit id session.
func (tc *tokenCache) forget(session string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for k := range tc.tokens {
		if k.session == session {
			delete(tc.tokens, k)
		}
	}
}

// Forget drops the access tokens cached for the session with audit id
// session (Session.ID): its pages mint a new one. Called when the session
// ends; the portal calls it itself when a second factor is verified.
func (p *Portal) Forget(session string) { p.tokens.forget(session) }
