package api_test

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v3"
	josejwt "github.com/go-jose/go-jose/v3/jwt"
	"github.com/golang-jwt/jwt/v5"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/redisconn"
)

// tokenUser creates a customer user in tenant i and returns it.
func (h *harness) tokenUser(i int) *identity.User {
	h.t.Helper()
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	u, err := identity.NewStore(h.store).CreateUser(context.Background(), admin, identity.UserInput{
		Email: models.RandomString(10) + "@example.com", Name: "Token User", OrganizationID: h.tenants[i].org.ID, Password: "correct horse battery",
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return u
}

func (h *harness) issue(tokens *auth.Tokens, g auth.Grant) *auth.Issued {
	h.t.Helper()
	iss, err := tokens.Issue(context.Background(), g)
	if err != nil {
		h.t.Fatal(err)
	}
	return iss
}

type meBody struct {
	Principal struct {
		Type           string   `json:"type"`
		ID             string   `json:"id"`
		OrganizationID string   `json:"organization_id"`
		Environment    string   `json:"environment"`
		Role           string   `json:"role"`
		Permissions    []string `json:"permissions"`
		User           *struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"principal"`
}

func TestAccessTokenIsACredential(t *testing.T) {
	h := newHarness(t)
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read", "billing:read"}, AuthMethod: "password"})

	var me meBody
	h.do("GET", "/v1/users/me", tok.Token, nil).decode(http.StatusOK, &me)
	p := me.Principal
	if p.Type != "user" || p.ID != u.ID || p.OrganizationID != u.OrganizationID || p.Environment != "live" || p.Role != "customer" || p.User == nil || p.User.ID != u.ID {
		t.Fatalf("principal of a user token: %+v", p)
	}
	// The token holds services:read and billing:read only.
	h.do("GET", "/v1/services/catalog", tok.Token, nil).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/api-keys", tok.Token, map[string]any{"name": "x", "permissions": []string{"services:read"}}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")

	// Tenancy: the token sees its own organization's data only.
	h.do("GET", "/v1/billing/accounts/"+h.tenants[0].account.ID, tok.Token, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/billing/accounts/"+h.tenants[1].account.ID, tok.Token, nil).wantError(http.StatusNotFound, "NOT_FOUND")

	// A client-credentials style token (cli_ subject) acts as its organization.
	cli := h.issue(h.srv.Tokens(), auth.Grant{Subject: models.NewID(models.PrefixClient), OrganizationID: h.tenants[1].org.ID, Environment: models.EnvTest, Permissions: []string{"*"}})
	h.do("GET", "/v1/users/me", cli.Token, nil).decode(http.StatusOK, &me)
	if me.Principal.Type != "oauth_client" || me.Principal.OrganizationID != h.tenants[1].org.ID || me.Principal.Environment != "test" {
		t.Fatalf("principal of a client token: %+v", me.Principal)
	}
}

// TestAccessTokenVerifiesWithAnIndependentLibrary checks the token and the
// JWKS against go-jose, a JOSE implementation not used to sign them.
func TestAccessTokenVerifiesWithAnIndependentLibrary(t *testing.T) {
	h := newHarness(t)
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read", "billing:read"}})

	res := h.do("GET", "/.well-known/jwks.json", "", nil).decode(http.StatusOK, nil)
	var raw map[string][]map[string]any
	if err := json.Unmarshal(res.body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range raw["keys"] {
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[private]; ok {
				t.Fatalf("JWKS publishes private member %q", private)
			}
		}
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(res.body, &set); err != nil {
		t.Fatal(err)
	}

	parsed, err := josejwt.ParseSigned(tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	hdr := parsed.Headers[0]
	if hdr.Algorithm != "RS256" || hdr.KeyID == "" || hdr.ExtraHeaders["typ"] != "JWT" {
		t.Fatalf("header: alg %s kid %q typ %v", hdr.Algorithm, hdr.KeyID, hdr.ExtraHeaders["typ"])
	}
	keys := set.Key(hdr.KeyID)
	if len(keys) != 1 {
		t.Fatalf("JWKS has %d keys with kid %s", len(keys), hdr.KeyID)
	}
	if keys[0].Algorithm != "RS256" || keys[0].Use != "sig" {
		t.Fatalf("JWK alg %q use %q", keys[0].Algorithm, keys[0].Use)
	}
	if _, ok := keys[0].Key.(*rsa.PublicKey); !ok {
		t.Fatalf("JWK is %T, want an RSA public key", keys[0].Key)
	}
	var std josejwt.Claims
	var own struct {
		Permissions    []string `json:"permissions"`
		OrganizationID string   `json:"organization_id"`
		RateLimit      struct {
			RequestsPerMinute int `json:"requests_per_minute"`
		} `json:"rate_limit"`
	}
	if err := parsed.Claims(keys[0].Key, &std, &own); err != nil {
		t.Fatalf("signature does not verify against the JWKS: %v", err)
	}
	base := h.srv.Tokens().Issuer()
	if err := std.Validate(josejwt.Expected{Issuer: base, Audience: josejwt.Audience{base + "/v1"}, Subject: u.ID, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if std.ID == "" || std.IssuedAt == nil || std.NotBefore == nil || std.Expiry == nil ||
		std.Expiry.Time().Sub(std.IssuedAt.Time()) != time.Hour {
		t.Fatalf("registered claims: %+v", std)
	}
	org := h.tenants[0].org
	if own.OrganizationID != org.ID || strings.Join(own.Permissions, ",") != "services:read,billing:read" ||
		own.RateLimit.RequestsPerMinute != (org.Limits().HourlyLimit+59)/60 || own.RateLimit.RequestsPerMinute == 0 {
		t.Fatalf("platform claims: %+v (plan hourly %d)", own, org.Limits().HourlyLimit)
	}
}

func TestAccessTokenRefusals(t *testing.T) {
	h := newHarness(t)
	u := h.tokenUser(0)
	tokens := h.srv.Tokens()
	grant := auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"*"}}
	good := h.issue(tokens, grant)
	h.do("GET", "/v1/users/me", good.Token, nil).decode(http.StatusOK, nil)

	// Same keys (same database), another issuer and audience.
	foreign := h.issue(auth.NewTokens(h.store, "https://elsewhere.example", nil), grant)
	// Same keys, issued two hours ago: expired an hour ago.
	past := auth.NewTokens(h.store, tokens.Issuer(), func() time.Time { return time.Now().Add(-2 * time.Hour) })
	expired := h.issue(past, grant)
	// Not valid for another hour.
	future := h.issue(auth.NewTokens(h.store, tokens.Issuer(), func() time.Time { return time.Now().Add(time.Hour) }), grant)

	parts := strings.Split(good.Token, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	elevated := strings.Replace(string(payload), u.OrganizationID, h.tenants[1].org.ID, 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(elevated)) + "." + parts[2]

	// Algorithm confusion: HS256 keyed with the public key's bytes, and alg none.
	jwks := h.do("GET", "/.well-known/jwks.json", "", nil)
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": tokens.Issuer(), "aud": tokens.Audience(), "sub": u.ID,
		"exp": time.Now().Add(time.Hour).Unix(), "jti": "x", "organization_id": u.OrganizationID, "permissions": []string{"*"}})
	hs.Header["kid"] = good.KeyID
	hsToken, err := hs.SignedString(jwks.body)
	if err != nil {
		t.Fatal(err)
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, hs.Claims)
	none.Header["kid"] = good.KeyID
	noneToken, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	unknownKid := jwt.NewWithClaims(jwt.SigningMethodHS256, hs.Claims)
	unknownKid.Header["kid"] = "rsa_doesnotexist"
	unknownKidToken, _ := unknownKid.SignedString([]byte("secret"))

	for _, tc := range []struct {
		name, token, code string
	}{
		{"wrong audience and issuer", foreign.Token, "INVALID_TOKEN"},
		{"expired", expired.Token, "TOKEN_EXPIRED"},
		{"not yet valid", future.Token, "INVALID_TOKEN"},
		{"tampered payload", tampered, "INVALID_TOKEN"},
		{"HS256 with the public key", hsToken, "INVALID_TOKEN"},
		{"alg none", noneToken, "INVALID_TOKEN"},
		{"unknown kid", unknownKidToken, "INVALID_TOKEN"},
		{"not a JWT", "hello", "INVALID_TOKEN"},
		{"three garbage parts", "a.b.c", "INVALID_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.do("GET", "/v1/users/me", tc.token, nil).wantError(http.StatusUnauthorized, tc.code)
		})
	}

	// Revocation is checked on every request.
	if err := tokens.Revoke(context.Background(), good.Token, "test"); err != nil {
		t.Fatal(err)
	}
	e := h.do("GET", "/v1/users/me", good.Token, nil).wantError(http.StatusUnauthorized, "INVALID_TOKEN")
	if !strings.Contains(e.Error.Message, "revoked") {
		t.Fatalf("revoked token message: %q", e.Error.Message)
	}
	// Revoking an expired token is a no-op, revoking twice is fine.
	if err := tokens.Revoke(context.Background(), expired.Token, "test"); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Revoke(context.Background(), good.Token, "again"); err != nil {
		t.Fatal(err)
	}
}

func TestSigningKeyRotation(t *testing.T) {
	h := newHarness(t)
	u := h.tokenUser(0)
	tokens := h.srv.Tokens()
	grant := auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read"}}
	old := h.issue(tokens, grant)
	kid, err := tokens.Keys().Rotate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fresh := h.issue(tokens, grant)
	if fresh.KeyID != kid || old.KeyID == kid {
		t.Fatalf("after rotation the new token's kid is %s, want %s (old %s)", fresh.KeyID, kid, old.KeyID)
	}
	var set struct {
		Keys []struct{ Kid string } `json:"keys"`
	}
	h.do("GET", "/.well-known/jwks.json", "", nil).decode(http.StatusOK, &set)
	if len(set.Keys) != 2 {
		t.Fatalf("JWKS during rotation has %d keys, want 2", len(set.Keys))
	}
	// A second server instance on the same database learns the new key.
	other := auth.NewTokens(h.store, tokens.Issuer(), nil)
	for _, tok := range []*auth.Issued{old, fresh} {
		if _, err := other.Verify(context.Background(), tok.Token); err != nil {
			t.Fatalf("other instance: %v", err)
		}
		h.do("GET", "/v1/users/me", tok.Token, nil).decode(http.StatusOK, nil)
	}
	if err := tokens.Keys().RetireKey(context.Background(), old.KeyID); err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/v1/users/me", old.Token, nil).wantError(http.StatusUnauthorized, "INVALID_TOKEN")
	h.do("GET", "/v1/users/me", fresh.Token, nil).decode(http.StatusOK, nil)
}

// TestAccessTokenRateLimits checks that a token's principal carries its
// organization plan's limits, lowered by the token's requests_per_minute.
func TestAccessTokenRateLimits(t *testing.T) {
	h := newHarness(t)
	embedded, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	h.withLimiter(embedded)
	u := h.tokenUser(0)
	plan := h.tenants[0].org.Limits()
	for _, tc := range []struct {
		rpm       int
		wantLimit int
	}{
		{0, plan.HourlyLimit}, // the plan's rate
		{2, 120},              // lowered by the token
	} {
		tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read"}, RequestsPerMinute: tc.rpm})
		res := h.do("GET", "/v1/services/catalog", tok.Token, nil).decode(http.StatusOK, nil)
		if got := res.header.Get("X-RateLimit-Limit"); got != strconv.Itoa(tc.wantLimit) {
			t.Fatalf("requests_per_minute %d: X-RateLimit-Limit %s, want %d", tc.rpm, got, tc.wantLimit)
		}
	}
}
