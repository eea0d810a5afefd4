package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// clientAnswer is the answer of the client endpoints.
type clientAnswer struct {
	Client struct {
		ClientID        string   `json:"client_id"`
		ClientSecret    string   `json:"client_secret"`
		Name            string   `json:"name"`
		RedirectURIs    []string `json:"redirect_uris"`
		GrantTypes      []string `json:"grant_types"`
		Scopes          []string `json:"scopes"`
		Public          bool     `json:"public"`
		OrganizationID  string   `json:"organization_id"`
		Environment     string   `json:"environment"`
		CreatedAt       string   `json:"created_at"`
		UpdatedAt       string   `json:"updated_at"`
		SecretRotatedAt *string  `json:"secret_rotated_at"`
	} `json:"client"`
}

// clientFixture registers a confidential client of tn (live) and returns its id.
func clientFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	var c clientAnswer
	h.do("POST", "/v1/auth/clients", tn.liveKey, map[string]any{
		"name": "Fixture client", "redirect_uris": []string{"https://app.example.com/cb"}, "scopes": []string{"services.read"},
	}).decode(http.StatusCreated, &c)
	return c.Client.ClientID
}

// limitedKey creates a key of tn (live) with only perms and returns its secret.
func limitedKey(t testing.TB, h *harness, tn tenant, perms ...string) string {
	t.Helper()
	var key keyAnswer
	h.do("POST", "/v1/auth/api-keys", tn.liveKey, map[string]any{"name": "limited", "permissions": perms}).decode(http.StatusCreated, &key)
	return key.APIKey.Key
}

// auditTypes returns the event types recorded for a client, oldest first.
func auditTypes(t testing.TB, h *harness, clientID string) []string {
	t.Helper()
	var out struct {
		AuditEvents []struct {
			EventType string `json:"event_type"`
			ClientID  string `json:"client_id"`
			Reason    string `json:"reason"`
		} `json:"audit_events"`
	}
	h.do("GET", "/v1/auth/audit-events?limit=200&sort=timestamp:asc", h.adminKey, nil).decode(http.StatusOK, &out)
	var types []string
	for _, e := range out.AuditEvents {
		if e.ClientID == clientID && strings.HasPrefix(e.EventType, "client.") {
			types = append(types, e.EventType)
		}
	}
	return types
}

// TestOAuthClientReadAndList reads and lists clients: secrets never appear,
// the standard pagination applies, and neither another tenant, the owner's
// sandbox nor a key without auth:manage sees them.
func TestOAuthClientReadAndList(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	var ids []string
	for range 3 {
		ids = append(ids, clientFixture(t, h, a))
	}
	var one clientAnswer
	res := h.do("GET", "/v1/auth/clients/"+ids[0], a.liveKey, nil).decode(http.StatusOK, &one)
	if strings.Contains(string(res.body), "client_secret") || strings.Contains(string(res.body), "cs_") {
		t.Fatalf("GET shows a secret: %s", res.body)
	}
	c := one.Client
	if c.ClientID != ids[0] || c.Name != "Fixture client" || c.OrganizationID != a.org.ID || c.Environment != "live" || c.Public ||
		strings.Join(c.Scopes, " ") != "services.read" || strings.Join(c.GrantTypes, " ") != "authorization_code refresh_token" || c.UpdatedAt == "" || c.SecretRotatedAt != nil {
		t.Fatalf("client %+v", c)
	}

	var page struct {
		Clients    []map[string]any `json:"clients"`
		Pagination struct {
			Page, PerPage, Pages int
			Total                int64
			NextCursor           string `json:"next_cursor"`
		} `json:"pagination"`
	}
	res = h.do("GET", "/v1/auth/clients?limit=2&sort=created_at:asc", a.liveKey, nil).decode(http.StatusOK, &page)
	if len(page.Clients) != 2 || page.Pagination.Total != 3 || page.Pagination.Pages != 2 || page.Pagination.NextCursor == "" || page.Clients[0]["client_id"] != ids[0] {
		t.Fatalf("first page: %s", res.body)
	}
	if strings.Contains(string(res.body), "client_secret") {
		t.Fatalf("the list shows a secret: %s", res.body)
	}
	res = h.do("GET", "/v1/auth/clients?limit=2&sort=created_at:asc&cursor="+page.Pagination.NextCursor, a.liveKey, nil).decode(http.StatusOK, &page)
	if len(page.Clients) != 1 || page.Clients[0]["client_id"] != ids[2] {
		t.Fatalf("second page: %s", res.body)
	}
	h.do("GET", "/v1/auth/clients?limit=500", a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("GET", "/v1/auth/clients?sort=secret:asc", a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	// Other tenants and the sandbox see nothing; no auth:manage is 403.
	for _, key := range []string{b.liveKey, a.testKey} {
		res := h.do("GET", "/v1/auth/clients", key, nil).decode(http.StatusOK, &page)
		if len(page.Clients) != 0 || strings.Contains(string(res.body), ids[0]) {
			t.Fatalf("another tenant's list: %s", res.body)
		}
		h.do("GET", "/v1/auth/clients/"+ids[0], key, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	}
	reader := limitedKey(t, h, a, "services:read")
	h.do("GET", "/v1/auth/clients", reader, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("GET", "/v1/auth/clients/"+ids[0], reader, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("GET", "/v1/auth/clients/"+ids[0], "", nil).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
}

// TestOAuthClientUpdate changes a client with PATCH: fields are validated
// like a registration, bad bodies are 400, scopes beyond the caller's
// permissions 403, other tenants 404; removing a scope revokes the client's
// access tokens at the API.
func TestOAuthClientUpdate(t *testing.T) {
	e := newOAuthEnv(t)
	h, a, b := e.h, e.h.tenants[0], e.h.tenants[1]
	ctx := context.Background()
	path := "/v1/auth/clients/" + e.client.ID

	cc := &clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: e.base + "/oauth/token"}
	before, err := cc.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := e.api(t, before.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("client credentials token before the update: %d", status)
	}

	// A rename changes only the name and keeps the tokens.
	var c clientAnswer
	res := h.do("PATCH", path, a.liveKey, map[string]any{"name": "  Portal v2 "}).decode(http.StatusOK, &c)
	if c.Client.Name != "Portal v2" || strings.Join(c.Client.Scopes, " ") != "services.read billing.read" || len(c.Client.RedirectURIs) != 1 ||
		c.Client.ClientSecret != "" || strings.Contains(string(res.body), "cs_") {
		t.Fatalf("renamed: %s", res.body)
	}
	if status, _ := e.api(t, before.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("a rename revoked the tokens: %d", status)
	}

	for name, body := range map[string]any{
		"empty name":             map[string]any{"name": " "},
		"unknown scope":          map[string]any{"scopes": []string{"services.fly"}},
		"no scopes":              map[string]any{"scopes": []string{}},
		"star scope":             map[string]any{"scopes": []string{"*"}},
		"no grant types":         map[string]any{"grant_types": []string{}},
		"unknown grant type":     map[string]any{"grant_types": []string{"password"}},
		"ftp redirect":           map[string]any{"redirect_uris": []string{"ftp://example.com/cb"}},
		"http redirect":          map[string]any{"redirect_uris": []string{"http://example.com/cb"}},
		"code without redirects": map[string]any{"redirect_uris": []string{}},
		"public cannot change":   map[string]any{"public": true},
		"secret cannot be set":   map[string]any{"client_secret": "cs_mine"},
		"wrong type":             map[string]any{"scopes": "services.read"},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("PATCH", path, a.liveKey, body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		})
	}
	h.do("PATCH", path, a.liveKey, `{"name": `).wantError(http.StatusBadRequest, "INVALID_JSON")
	// A public client cannot gain client_credentials.
	var pub clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "CLI", "public": true, "redirect_uris": []string{"http://127.0.0.1:8000/cb"}, "scopes": []string{"services.read"}}).
		decode(http.StatusCreated, &pub)
	h.do("PATCH", "/v1/auth/clients/"+pub.Client.ClientID, a.liveKey, map[string]any{"grant_types": []string{"client_credentials"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	// Tenancy and permissions.
	h.do("PATCH", path, b.liveKey, map[string]any{"name": "stolen"}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("PATCH", path, a.testKey, map[string]any{"name": "stolen"}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("PATCH", path, limitedKey(t, h, a, "services:read"), map[string]any{"name": "x"}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	manager := limitedKey(t, h, a, "auth:manage", "services:read")
	h.do("PATCH", path, manager, map[string]any{"scopes": []string{"services.read", "services.write"}}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", path, manager, map[string]any{"name": "x"}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS") // it holds billing.read, the manager does not
	h.do("PATCH", "/v1/auth/clients/cli_nonexistent", a.liveKey, map[string]any{"name": "x"}).wantError(http.StatusNotFound, "NOT_FOUND")

	// Removing a scope revokes the access tokens; new ones get what is left.
	c = clientAnswer{}
	res = h.do("PATCH", path, a.liveKey, map[string]any{"scopes": []string{"services.read"}, "grant_types": []string{"client_credentials", "authorization_code", "refresh_token"}}).decode(http.StatusOK, &c)
	if strings.Join(c.Client.Scopes, " ") != "services.read" || c.Client.UpdatedAt < c.Client.CreatedAt {
		t.Fatalf("narrowed: %s", res.body)
	}
	if status, body := e.api(t, before.AccessToken, "/v1/users/me"); status != http.StatusUnauthorized || body["error"].(map[string]any)["code"] != "INVALID_TOKEN" {
		t.Fatalf("a token with a removed scope still works: %d %v", status, body)
	}
	if _, err := (&clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: cc.TokenURL, Scopes: []string{"billing.read"}}).Token(ctx); oauthErrorCode(err) != "invalid_scope" {
		t.Fatalf("a removed scope: %v", err)
	}
	after, err := cc.Token(ctx)
	if err != nil || after.Extra("scope") != "services.read" {
		t.Fatalf("a token after the update: %v %v", after, err)
	}
	if status, _ := e.api(t, after.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("a new token after the update: %d", status)
	}
	if got := strings.Join(auditTypes(t, h, e.client.ID), " "); got != "client.created client.updated client.updated" {
		t.Fatalf("audit events %q", got)
	}
}

// TestOAuthClientSecretRotation rotates a confidential client's secret: the
// new one is shown once, the old one is refused at /oauth/token at once; a
// public client has no secret (409).
func TestOAuthClientSecretRotation(t *testing.T) {
	e := newOAuthEnv(t)
	h, a, b := e.h, e.h.tenants[0], e.h.tenants[1]
	ctx := context.Background()
	path := "/v1/auth/clients/" + e.client.ID + "/rotate-secret"
	tokenURL := e.base + "/oauth/token"
	old := &clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: tokenURL}
	issued, err := old.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}

	h.do("POST", path, b.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", path, limitedKey(t, h, a, "services:read"), nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", path, limitedKey(t, h, a, "auth:manage"), nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS") // lacks the client's scopes

	var c clientAnswer
	h.do("POST", path, a.liveKey, nil).decode(http.StatusOK, &c)
	if !strings.HasPrefix(c.Client.ClientSecret, "cs_") || c.Client.ClientSecret == e.client.Secret || c.Client.SecretRotatedAt == nil {
		t.Fatalf("rotation answer %+v", c.Client)
	}
	if _, err := old.Token(ctx); oauthErrorCode(err) != "invalid_client" {
		t.Fatalf("the old secret after rotation: %v", err)
	}
	fresh := &clientcredentials.Config{ClientID: e.client.ID, ClientSecret: c.Client.ClientSecret, TokenURL: tokenURL}
	if _, err := fresh.Token(ctx); err != nil {
		t.Fatalf("the new secret: %v", err)
	}
	// The authorization-code exchange authenticates with the new secret only.
	conf := e.config()
	verifier := oauth2.GenerateVerifier()
	if _, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier)); oauthErrorCode(err) != "invalid_client" {
		t.Fatalf("code exchange with the old secret: %v", err)
	}
	conf.ClientSecret = c.Client.ClientSecret
	if _, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier)); err != nil {
		t.Fatalf("code exchange with the new secret: %v", err)
	}
	// Tokens issued before the rotation stay valid (documented).
	if status, _ := e.api(t, issued.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("a token issued before the rotation: %d", status)
	}
	var read clientAnswer
	res := h.do("GET", "/v1/auth/clients/"+e.client.ID, a.liveKey, nil).decode(http.StatusOK, &read)
	if read.Client.ClientSecret != "" || read.Client.SecretRotatedAt == nil || strings.Contains(string(res.body), "cs_") {
		t.Fatalf("GET after rotation: %s", res.body)
	}

	var pub clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "CLI", "public": true, "redirect_uris": []string{"http://127.0.0.1:8000/cb"}, "scopes": []string{"services.read"}}).
		decode(http.StatusCreated, &pub)
	e409 := h.do("POST", "/v1/auth/clients/"+pub.Client.ClientID+"/rotate-secret", a.liveKey, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	if e409.Error.Details["public"] != true {
		t.Fatalf("409 details %v", e409.Error.Details)
	}
	if got := strings.Join(auditTypes(t, h, e.client.ID), " "); got != "client.created client.secret_rotated" {
		t.Fatalf("audit events %q", got)
	}
}

// TestOAuthClientDelete deletes a client: its access tokens (authorization
// code and client credentials) are refused by the API at once, its refresh
// token and its credentials stop working, and it is gone (404).
func TestOAuthClientDelete(t *testing.T) {
	e := newOAuthEnv(t)
	h, a, b := e.h, e.h.tenants[0], e.h.tenants[1]
	ctx := context.Background()
	path := "/v1/auth/clients/" + e.client.ID

	conf := e.config()
	verifier := oauth2.GenerateVerifier()
	user, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	cc := &clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: e.base + "/oauth/token"}
	machine, err := cc.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{user.AccessToken, machine.AccessToken} {
		if status, _ := e.api(t, tok, "/v1/users/me"); status != http.StatusOK {
			t.Fatalf("token before the deletion: %d", status)
		}
	}

	h.do("DELETE", path, b.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("DELETE", path, a.testKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("DELETE", path, limitedKey(t, h, a, "services:read"), nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if res := h.do("DELETE", path, a.liveKey, nil); res.status != http.StatusNoContent || len(res.body) != 0 {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}

	for name, tok := range map[string]string{"authorization code": user.AccessToken, "client credentials": machine.AccessToken} {
		if status, body := e.api(t, tok, "/v1/users/me"); status != http.StatusUnauthorized || body["error"].(map[string]any)["code"] != "INVALID_TOKEN" {
			t.Fatalf("%s token of a deleted client: %d %v", name, status, body)
		}
	}
	expired := &oauth2.Token{AccessToken: user.AccessToken, RefreshToken: user.RefreshToken, Expiry: time.Now().Add(-time.Hour)}
	if _, err := conf.TokenSource(ctx, expired).Token(); err == nil {
		t.Fatal("the refresh token of a deleted client still works")
	}
	if _, err := cc.Token(ctx); oauthErrorCode(err) != "invalid_client" {
		t.Fatalf("client credentials of a deleted client: %v", err)
	}
	h.do("GET", path, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("DELETE", path, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	if got := strings.Join(auditTypes(t, h, e.client.ID), " "); got != "client.created client.deleted" {
		t.Fatalf("audit events %q", got)
	}
}
