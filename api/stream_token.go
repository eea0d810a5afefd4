package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
)

// Stream tokens: browsers cannot set headers on a WebSocket, so
// POST /v1/stream/token mints a short-lived token for ?token=.
const (
	// StreamTokenTTL is how long a stream token opens a stream.
	StreamTokenTTL     = 60 * time.Second
	streamTokenPrefix  = "stk_"
	streamTokenBinding = "stream-token"
)

// streamTokenClaims is what a stream token seals: a reference to the
// minting credential, never the credential itself (a token leaked with
// the sealing key reveals no secret): its kind, the API key's id or the
// access token's claims (its payload, which the token's holder could read
// anyway, without its signature) with the kid of the key that signed it,
// the path it opens, when it expires, and its id (single use). The stream
// re-resolves the principal from the store: a key revoked, a token
// deny-listed or its signing key retired meanwhile is refused.
type streamTokenClaims struct {
	Kind       string       `json:"k"`             // streamRefAPIKey or streamRefAccessToken
	KeyID      string       `json:"key,omitempty"` // the API key's id
	Token      *auth.Claims `json:"tok,omitempty"` // the access token's claims
	SigningKey string       `json:"kid,omitempty"` // the access token's kid (Token.KeyID, which Claims do not marshal)
	Path       string       `json:"path"`
	Expires    int64        `json:"exp"`
	ID         string       `json:"jti"`
}

// Kinds of credential a stream token refers to.
const (
	streamRefAPIKey      = "api_key"
	streamRefAccessToken = "access_token"
)

// streamRef is the reference a stream token seals to the credential that
// minted it (see streamTokenClaims).
type streamRef struct {
	kind  string
	keyID string
	token *auth.Claims
}

// streamRefKey holds, among a request's locals, the reference to the
// credential it authenticated with.
type streamRefKey struct{}

// usedStreamTokens remembers spent tokens when there is no Redis.
type usedStreamTokens struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// spend records id as used until exp; false when it already was.
func (u *usedStreamTokens) spend(id string, exp, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, t := range u.seen {
		if now.After(t) {
			delete(u.seen, k)
		}
	}
	if _, ok := u.seen[id]; ok {
		return false
	}
	u.seen[id] = exp
	return true
}

// mintStreamToken seals a reference to a credential into a stream token.
func (s *Server) mintStreamToken(ref streamRef) (string, time.Time, error) {
	if s.store.Sealer == nil {
		return "", time.Time{}, models.Errorf(models.CodeDependencyUnavailable, "stream tokens need SECRETS_KEY")
	}
	exp := s.now().Add(StreamTokenTTL)
	claims := streamTokenClaims{Kind: ref.kind, KeyID: ref.keyID, Token: ref.token, Path: "/v1/stream", Expires: exp.Unix(), ID: models.RandomString(20)}
	if ref.token != nil {
		claims.SigningKey = ref.token.KeyID
	}
	raw, err := json.Marshal(claims)
	if err != nil {
		return "", time.Time{}, models.Internal(err)
	}
	sealed := s.store.Sealer.Seal(streamTokenBinding, string(raw))
	return streamTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(sealed)), exp, nil
}

// openStreamToken returns the claims of a stream token, spending the
// token. Errors: INVALID_TOKEN (malformed, expired or already used).
func (s *Server) openStreamToken(ctx context.Context, token string) (*streamTokenClaims, error) {
	invalid := models.Errorf(models.CodeInvalidToken, "the stream token is invalid, expired or already used; mint another with POST /v1/stream/token")
	rest, ok := strings.CutPrefix(token, streamTokenPrefix)
	if !ok || s.store.Sealer == nil {
		return nil, invalid
	}
	sealed, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, invalid
	}
	plain, err := s.store.Sealer.Open(streamTokenBinding, string(sealed))
	if err != nil {
		return nil, invalid
	}
	var claims streamTokenClaims
	if json.Unmarshal([]byte(plain), &claims) != nil || claims.ID == "" || !isStreamPath(claims.Path) ||
		(claims.Kind == streamRefAPIKey) == (claims.Token != nil) || (claims.Kind != streamRefAPIKey && claims.Kind != streamRefAccessToken) {
		return nil, invalid
	}
	if claims.Token != nil {
		claims.Token.KeyID = claims.SigningKey // Tokens.Recheck checks it
	}
	exp := time.Unix(claims.Expires, 0)
	now := s.now()
	if !now.Before(exp) {
		return nil, invalid
	}
	if s.redis != nil {
		fresh, err := s.redis.SetNX(ctx, "streamtoken:"+claims.ID, 1, exp.Sub(now)+time.Second).Result()
		if err == nil && !fresh {
			return nil, invalid
		}
		if err == nil {
			return &claims, nil
		}
		// Redis unreachable: this instance's memory decides.
	}
	if !s.spentTokens.spend(claims.ID, exp, now) {
		return nil, invalid
	}
	return &claims, nil
}

// streamTokenFor returns the claims of a stream request's ?token=: ok is
// false when the request is not such a request.
func (s *Server) streamTokenFor(c *fiber.Ctx) (claims *streamTokenClaims, ok bool, err error) {
	token := c.Query("token")
	if token == "" || !isStreamPath(c.Path()) {
		return nil, false, nil
	}
	claims, err = s.openStreamToken(c.UserContext(), token)
	return claims, true, err
}

// resolveStreamToken authenticates a stream request by its token's
// reference: the API key read again by id (revoked, expired or outside its
// allow-list: refused), or the access token's claims checked again
// against their expiry, their signing key and the deny-list (Recheck:
// as the bearer token itself would be), then the restrictions that bind
// the credential, as resolveCredential and resolveAccessToken do. The
// stream's credential checks re-resolve the same reference. Errors: those
// of AuthenticateAPIKeyByID, Tokens.Recheck, Tokens.Principal and restrict.
func (s *Server) resolveStreamToken(c *fiber.Ctx, claims *streamTokenClaims, ip netip.Addr) error {
	ctx := c.UserContext()
	if claims.Kind == streamRefAPIKey {
		keyID := claims.KeyID
		auth, err := s.identity.AuthenticateAPIKeyByID(ctx, s.keys, keyID, ip)
		if err != nil {
			return err
		}
		if err := auth.Policy.Check(s.store.Now(), s.origin(ip)); err != nil {
			return err
		}
		s.keyUsage.Record(auth.Key.ID, s.now())
		c.SetUserContext(models.WithPrincipal(ctx, auth.Principal))
		setCredentialCheck(c, func(ctx context.Context) error {
			_, err := s.identity.AuthenticateAPIKeyByID(ctx, s.keys, keyID, ip)
			return err
		})
		return nil
	}
	tok := claims.Token
	if err := s.tokens.Recheck(ctx, tok); err != nil {
		return err
	}
	p, err := s.tokens.Principal(ctx, tok)
	if err != nil {
		return err
	}
	if err := s.restrict(c, p, tok.ClientID, ip); err != nil {
		return err
	}
	c.SetUserContext(models.WithPrincipal(ctx, p))
	setCredentialCheck(c, func(ctx context.Context) error {
		if err := s.tokens.Recheck(ctx, tok); err != nil {
			return err
		}
		_, err := s.tokens.Principal(ctx, tok)
		return err
	})
	return nil
}

// isStreamPath reports whether path is GET /v1/stream's.
func isStreamPath(path string) bool {
	path = strings.ToLower(strings.TrimSuffix(path, "/")) // as the router matches it
	return path == "/v1/stream" || path == "/api/v1/stream"
}

// StreamTokenOutput is a minted stream token.
type StreamTokenOutput struct {
	Status int
	Body   struct {
		Envelope
		Token     string `json:"token" example:"stk_djIuM2Y..." doc:"Pass it as ?token= to GET /v1/stream (once, within expires_in seconds)"`
		ExpiresAt string `json:"expires_at"`
		ExpiresIn int    `json:"expires_in" example:"60"`
	}
}

// StreamInput documents GET /v1/stream's parameters (the stream itself is
// served outside huma: see streamRoute).
type StreamInput struct {
	Types       string `query:"types" maxLength:"2000" example:"service.*,ticket.escalated" doc:"Event names or group patterns (service.*), comma-separated or repeated; default every event your credential may read"`
	ResourceID  string `query:"resource_id" maxLength:"4000" example:"svc_3fK9aZ" doc:"Only events about these resources (comma-separated or repeated)"`
	Operations  string `query:"operations" maxLength:"4000" example:"prov_3fK9aZ" doc:"Operations to follow: their documents as operation messages whenever they change, until they end"`
	After       string `query:"after" maxLength:"64" example:"evt_3fK9aZ" doc:"Resume after this event (as Last-Event-ID): every later event within the retention is sent first"`
	Token       string `query:"token" maxLength:"2000" doc:"A stream token from POST /v1/stream/token, instead of the usual headers (browsers' WebSocket)"`
	LastEventID string `header:"Last-Event-ID" maxLength:"64" doc:"Resume after this event (Server-Sent Events reconnections send it)"`
}

func (s *Server) registerStream() {
	tags := []string{"Events"}
	for _, prefix := range []string{"/v1", "/api/v1"} {
		s.App.Get(prefix+"/stream", s.streamRoute)
	}
	register(s, huma.Operation{OperationID: "open-stream", Method: http.MethodGet, Path: "/stream", Summary: "Real-time stream of events",
		Tags: tags, Description: "Your organization's events as they happen (the webhook event catalogue, the same payloads), filtered by type " +
			"patterns and resource ids, and the progress of the operations you follow. Open it as a WebSocket (an upgrade request) or, with " +
			"`Accept: text/event-stream`, as Server-Sent Events; a plain GET answers 400. Resume with `after` or `Last-Event-ID`: no event " +
			"within the retention is lost. A stream counts against your concurrency limit and the per-tenant stream cap, and ends when its " +
			"credential is revoked or when the client falls behind (`" + slowConsumerCode + "`). See docs/realtime.md. " + eventsReadDoc,
		Responses: map[string]*huma.Response{"101": {Description: "WebSocket: one JSON message per event"},
			"200": {Description: "Server-Sent Events", Content: map[string]*huma.MediaType{
				"text/event-stream": {Schema: &huma.Schema{Type: "string", Description: "`id:` the event id, `event:` its name, `data:` its webhook payload; `event: operation` for followed operations"}}}}}},
		access{}, func(ctx context.Context, in *StreamInput) (*struct{}, error) {
			return nil, models.Invalid(models.FieldIssue{Field: "Accept", Issue: "open the stream as a WebSocket (an upgrade request) or with Accept: text/event-stream"})
		})
	register(s, huma.Operation{OperationID: "create-stream-token", Method: http.MethodPost, Path: "/stream/token", Summary: "Mint a stream token",
		Tags: tags, DefaultStatus: http.StatusCreated, Description: "A token that opens one real-time stream (GET /v1/stream?token=...) with " +
			"this request's credential, within 60 seconds, once: for browsers, whose WebSocket cannot send headers. The stream has exactly " +
			"the credential's organization, environment and permissions, and ends when the credential is revoked. API keys and access tokens only."},
		access{}, func(ctx context.Context, _ *struct{}) (*StreamTokenOutput, error) {
			ref, _ := ctx.Value(streamCredentialKey{}).(streamRef)
			if ref.kind == "" {
				return nil, models.Errorf(models.CodeValidation, "stream tokens are minted for API keys and access tokens sent in Authorization or X-API-Key")
			}
			if _, err := events.ReadableGroups(principal(ctx)); err != nil {
				return nil, err
			}
			tok, exp, err := s.mintStreamToken(ref)
			if err != nil {
				return nil, err
			}
			out := &StreamTokenOutput{Status: http.StatusCreated}
			out.Body.Token, out.Body.ExpiresAt, out.Body.ExpiresIn = tok, models.Timestamp(exp), int(StreamTokenTTL/time.Second)
			return out, nil
		})
}

// streamCredentialKey holds, in a request's context, the reference to the
// credential it authenticated with (API key or access token: a streamRef),
// for POST /v1/stream/token.
type streamCredentialKey struct{}
