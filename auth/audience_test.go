package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

// TestAudienceIsASingleString: tokens carry `aud` as one JSON string (the
// API address), and verification accepts a string or an array holding it.
func TestAudienceIsASingleString(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(store).CreateOrganization(ctx, admin, identity.OrganizationInput{Name: "Aud org", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	tokens := NewTokens(store, "https://api.example.com", nil)
	iss, err := tokens.Issue(ctx, Grant{Subject: models.NewID(models.PrefixClient), OrganizationID: org.ID, RequestsPerMinute: 10})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(iss.Token, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if claims["aud"] != "https://api.example.com/v1" {
		t.Fatalf("aud = %#v, want the string https://api.example.com/v1", claims["aud"])
	}
	if _, err := tokens.Parse(ctx, iss.Token); err != nil {
		t.Fatalf("string aud refused: %v", err)
	}

	// A token whose aud is an array (as issued before) is still accepted.
	signer, err := tokens.keys.signingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(aud any) string {
		c := jwt.MapClaims{"iss": tokens.Issuer(), "sub": models.NewID(models.PrefixClient), "aud": aud, "exp": jwt.NewNumericDate(tokens.now().Add(600e9)),
			"iat": jwt.NewNumericDate(tokens.now()), "jti": "jti-" + models.RandomString(8), "organization_id": org.ID}
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tok.Header["kid"] = signer.kid
		raw, err := tok.SignedString(signer.key)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, tc := range []struct {
		name string
		aud  any
		ok   bool
	}{
		{"array", []string{"https://api.example.com/v1"}, true},
		{"array with another", []string{"https://other.example.com", "https://api.example.com/v1"}, true},
		{"other string", "https://other.example.com/v1", false},
	} {
		_, err := tokens.Parse(ctx, sign(tc.aud))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
