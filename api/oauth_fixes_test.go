package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// oauthPost posts a form to an /oauth endpoint with the env's client in
// HTTP Basic and returns the status and the JSON body.
func (e *oauthEnv) oauthPost(t *testing.T, path, form string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.base+path, strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(e.client.ID, e.client.Secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

// noRedirects is a browser that keeps cookies and does not follow redirects.
func noRedirects() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// wantShownError checks an authorization answer that must be shown to the
// user (RFC 6749 section 4.1.2.1): 400 invalid_request naming the
// parameter, and no redirect.
func wantShownError(t *testing.T, how string, res *http.Response, param string) {
	t.Helper()
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var e map[string]any
	_ = json.Unmarshal(body, &e)
	if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" || e["error"] != "invalid_request" ||
		!strings.Contains(fmt.Sprint(e["error_description"]), param) {
		t.Fatalf("%s: %d Location %q %s, want 400 invalid_request naming %s, shown not redirected", how, res.StatusCode, res.Header.Get("Location"), body, param)
	}
}

// wantRedirectedError checks an authorization answer that goes back to the
// client: a redirect to its URI with error=invalid_request, the state and no code.
func wantRedirectedError(t *testing.T, how string, res *http.Response, redirect, state string) {
	t.Helper()
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode/100 != 3 || !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("%s: %d Location %q, want a redirect to %s", how, res.StatusCode, res.Header.Get("Location"), redirect)
	}
	if q := loc.Query(); q.Get("error") != "invalid_request" || q.Get("state") != state || q.Get("code") != "" {
		t.Fatalf("%s: redirected with %v", how, q)
	}
}

// TestOAuthRepeatedParametersRefused sends a parameter twice to every
// OAuth endpoint (RFC 6749 sections 3.1 and 3.2): each answers
// invalid_request naming it. At /oauth/authorize a repeated client_id or
// redirect_uri is shown to the user, not redirected (section 4.1.2.1);
// another repeated parameter goes back to the client as an error.
func TestOAuthRepeatedParametersRefused(t *testing.T) {
	e := newOAuthEnv(t)
	for _, tc := range []struct{ path, form, param string }{
		{"/oauth/token", "grant_type=client_credentials&grant_type=client_credentials", "grant_type"},
		{"/oauth/token", "grant_type=client_credentials&scope=services.read&scope=billing.read", "scope"},
		{"/oauth/token", "grant_type=refresh_token&refresh_token=a&refresh_token=b", "refresh_token"},
		{"/oauth/introspect", "token=a&token=b", "token"},
		{"/oauth/revoke", "token=a&token=b", "token"},
		{"/oauth/revoke", "token=a&token_type_hint=access_token&token_type_hint=refresh_token", "token_type_hint"},
		{"/oauth/device/code", "client_id=" + e.client.ID + "&client_id=" + e.client.ID, "client_id"},
		{"/oauth/device/code", "scope=services.read&scope=billing.read", "scope"},
	} {
		status, body := e.oauthPost(t, tc.path, tc.form)
		if status != http.StatusBadRequest || body["error"] != "invalid_request" || !strings.Contains(fmt.Sprint(body["error_description"]), tc.param) {
			t.Fatalf("%s %s: %d %v, want 400 invalid_request naming %s", tc.path, tc.form, status, body, tc.param)
		}
	}
	// Sent once, the same requests work.
	if status, body := e.oauthPost(t, "/oauth/token", "grant_type=client_credentials&scope=services.read"); status != http.StatusOK || body["scope"] != "services.read" {
		t.Fatalf("client credentials: %d %v", status, body)
	}

	conf := e.config()
	state := models.RandomString(16)
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	browser := noRedirects()
	get := func(u string) *http.Response {
		t.Helper()
		res, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	wantShownError(t, "redirect_uri twice", get(authURL+"&redirect_uri="+url.QueryEscape("https://attacker.example/cb")), "redirect_uri")
	wantShownError(t, "the same redirect_uri twice", get(authURL+"&redirect_uri="+url.QueryEscape(e.client.Redirect)), "redirect_uri")
	wantShownError(t, "client_id twice", get(authURL+"&client_id="+e.client.ID), "client_id")
	wantRedirectedError(t, "scope twice", get(authURL+"&scope=services.read"), e.client.Redirect, state)
	wantRedirectedError(t, "code_challenge twice", get(authURL+"&code_challenge="+oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())), e.client.Redirect, state)

	// The consent form reads the parameters again: a parameter added
	// twice there is refused the same way, and no code is issued.
	res := get(authURL)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("authorize page: %d %s", res.StatusCode, page)
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	form.Set("email", e.user.Email)
	form.Set("password", e.password)
	form.Set("action", "approve")
	post := func(f url.Values) *http.Response {
		t.Helper()
		res, err := browser.PostForm(e.base+"/oauth/authorize", f)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	twice := func(name, value string) url.Values {
		f := url.Values{}
		for k, v := range form {
			f[k] = append([]string(nil), v...)
		}
		f.Add(name, value)
		return f
	}
	wantShownError(t, "consent with redirect_uri twice", post(twice("redirect_uri", "https://attacker.example/cb")), "redirect_uri")
	wantRedirectedError(t, "consent with state twice", post(twice("state", "another-state")), e.client.Redirect, state)
	res = post(form)
	res.Body.Close()
	if loc, _ := url.Parse(res.Header.Get("Location")); res.StatusCode/100 != 3 || loc.Query().Get("code") == "" {
		t.Fatalf("consent sent once: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestOAuthRefreshCannotWidenScope refreshes a grant asking for a scope it
// was not given (RFC 6749 section 6): 400 invalid_scope, and the refresh
// token is not spent. Asking for the grant's scopes or fewer works: fewer
// narrow the new access token, the new refresh token keeps the grant's.
func TestOAuthRefreshCannotWidenScope(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	conf := e.config()
	conf.Scopes = []string{"services.read"}
	verifier := oauth2.GenerateVerifier()
	tok, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("scope") != "services.read" {
		t.Fatalf("granted %v", tok.Extra("scope"))
	}
	refresh := func(rt, scope string) (int, map[string]any) {
		t.Helper()
		return e.oauthPost(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "scope": {scope}}.Encode())
	}
	for _, scope := range []string{"services.read billing.read", "billing.read", "services.read auth.manage"} {
		status, body := refresh(tok.RefreshToken, scope)
		if status != http.StatusBadRequest || body["error"] != "invalid_scope" {
			t.Fatalf("refresh asking for %q: %d %v, want 400 invalid_scope", scope, status, body)
		}
	}
	status, body := refresh(tok.RefreshToken, "services.read")
	if status != http.StatusOK || body["scope"] != "services.read" {
		t.Fatalf("refresh with the grant's own scope: %d %v", status, body)
	}

	// A grant of two scopes refreshed with one: the new tokens carry that one.
	conf.Scopes = []string{"services.read", "billing.read"}
	verifier = oauth2.GenerateVerifier()
	tok, err = conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	status, body = refresh(tok.RefreshToken, "billing.read")
	if status != http.StatusOK || body["scope"] != "billing.read" {
		t.Fatalf("narrowing refresh: %d %v", status, body)
	}
	at, _ := body["access_token"].(string)
	if status, me := e.api(t, at, "/v1/users/me"); status != http.StatusOK || fmt.Sprint(me["principal"].(map[string]any)["permissions"]) != "[billing:read]" {
		t.Fatalf("narrowed access token: %d %v", status, me)
	}
	// The new refresh token keeps the grant's scopes (RFC 6749 section 6):
	// the next refresh may ask for the other one, or for both.
	rt, _ := body["refresh_token"].(string)
	status, body = refresh(rt, "services.read")
	if status != http.StatusOK || body["scope"] != "services.read" {
		t.Fatalf("refresh of a narrowed refresh for the grant's other scope: %d %v", status, body)
	}
	rt, _ = body["refresh_token"].(string)
	status, body = refresh(rt, "")
	if status != http.StatusOK || body["scope"] != "services.read billing.read" {
		t.Fatalf("refresh without scope after two narrowed ones: %d %v", status, body)
	}
	rt, _ = body["refresh_token"].(string)
	if status, body := refresh(rt, "services.read auth.manage"); status != http.StatusBadRequest || body["error"] != "invalid_scope" {
		t.Fatalf("widening beyond the grant: %d %v", status, body)
	}

	// What a narrowed refresh keeps for the refresh token is capped by the
	// user's permissions of that moment too: a scope taken from the user
	// then does not come back with the permission.
	path := "/v1/users/" + e.user.ID
	e.h.do("PATCH", path, e.h.tenants[0].liveKey, map[string]any{"permissions": []string{"services:read"}}).decode(http.StatusOK, nil)
	status, body = refresh(rt, "services.read")
	if status != http.StatusOK || body["scope"] != "services.read" {
		t.Fatalf("narrowed refresh of a user without billing:read: %d %v", status, body)
	}
	rt, _ = body["refresh_token"].(string)
	e.h.do("PATCH", path, e.h.tenants[0].liveKey, map[string]any{"permissions": []string{"services:read", "billing:read"}}).decode(http.StatusOK, nil)
	if status, body := refresh(rt, ""); status != http.StatusOK || body["scope"] != "services.read" {
		t.Fatalf("refresh after the permission came back: %d %v, want services.read only", status, body)
	}
}

// TestClientRedirectURIsMatchedExactly registers and patches clients with
// a wildcard host or user information in a redirect URI: 400
// VALIDATION_ERROR naming the entry. Loopback http stays allowed.
func TestClientRedirectURIsMatchedExactly(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	client := func(uris ...string) map[string]any {
		return map[string]any{"name": "Redirects", "redirect_uris": uris, "scopes": []string{"services.read"}}
	}
	for _, tc := range []struct {
		uris  []string
		field string
	}{
		{[]string{"https://*.example.com/cb"}, "redirect_uris[0]"},
		{[]string{"https://app.example.com/cb", "https://user:pw@app.example.com/cb"}, "redirect_uris[1]"},
		{[]string{"https://user@app.example.com/cb"}, "redirect_uris[0]"},
		{[]string{"https://%2A.example.com/cb"}, "redirect_uris[0]"},
		{[]string{"http://*.localhost/cb"}, "redirect_uris[0]"},
	} {
		got := fieldNames(h.do("POST", "/v1/auth/clients", a.liveKey, client(tc.uris...)).wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
		if got[tc.field] == "" {
			t.Fatalf("register %v: fields %v, want %s", tc.uris, got, tc.field)
		}
	}
	var c clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, client("https://app.example.com/cb", "http://127.0.0.1:8000/cb", "http://localhost:8400/cb", "http://[::1]:9/cb")).
		decode(http.StatusCreated, &c)
	path := "/v1/auth/clients/" + c.Client.ClientID
	for _, tc := range []struct {
		uris  []string
		field string
	}{
		{[]string{"https://app.example.com/cb", "https://*.example.com/cb"}, "redirect_uris[1]"},
		{[]string{"https://admin:secret@app.example.com/cb"}, "redirect_uris[0]"},
	} {
		got := fieldNames(h.do("PATCH", path, a.liveKey, map[string]any{"redirect_uris": tc.uris}).wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
		if got[tc.field] == "" {
			t.Fatalf("patch %v: fields %v, want %s", tc.uris, got, tc.field)
		}
	}
	h.do("PATCH", path, a.liveKey, map[string]any{"redirect_uris": []string{"https://other.example.com/cb"}}).decode(http.StatusOK, &c)
	if fmt.Sprint(c.Client.RedirectURIs) != "[https://other.example.com/cb]" {
		t.Fatalf("patched redirect_uris %v", c.Client.RedirectURIs)
	}

	// A client registered before these rules, with a wildcard-host URI
	// (matched exactly, so it never matched a real host): it can still be
	// renamed, and keep that URI in a new list; a new such URI is refused.
	legacy := `["https://*.example.com/cb","https://other.example.com/cb"]`
	if err := h.store.In(context.Background(), models.SystemScope()).Model(&identity.OAuthClient{}).Where("id = ?", c.Client.ClientID).Update("redirect_uris", legacy).Error; err != nil {
		t.Fatal(err)
	}
	h.do("PATCH", path, a.liveKey, map[string]any{"name": "Renamed"}).decode(http.StatusOK, &c)
	h.do("PATCH", path, a.liveKey, map[string]any{"redirect_uris": []string{"https://*.example.com/cb", "https://third.example.com/cb"}}).decode(http.StatusOK, &c)
	if c.Client.Name != "Renamed" || fmt.Sprint(c.Client.RedirectURIs) != "[https://*.example.com/cb https://third.example.com/cb]" {
		t.Fatalf("legacy client after patches: %+v", c.Client)
	}
	got := fieldNames(h.do("PATCH", path, a.liveKey, map[string]any{"redirect_uris": []string{"https://*.example.com/cb", "https://*.example.org/cb"}}).
		wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
	if got["redirect_uris[1]"] == "" || got["redirect_uris[0]"] != "" {
		t.Fatalf("legacy client, a new wildcard: fields %v", got)
	}
}

// TestAPIKeyRateLimitOfZeroRefused creates keys whose rate_limit sends 0:
// 400 VALIDATION_ERROR naming the field, not a key with the plan's limits;
// the OpenAPI schema states the minimums.
func TestAPIKeyRateLimitOfZeroRefused(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for _, tc := range []struct {
		rateLimit map[string]any
		field     string
	}{
		{map[string]any{"requests_per_minute": 0}, "rate_limit.requests_per_minute"},
		{map[string]any{"requests_per_minute": 0, "burst_limit": 20}, "rate_limit.requests_per_minute"},
		{map[string]any{"burst_limit": 0}, "rate_limit.burst_limit"},
		{map[string]any{"requests_per_minute": 60, "burst_limit": 0}, "rate_limit.burst_limit"},
		{map[string]any{"requests_per_minute": -1}, "rate_limit.requests_per_minute"},
	} {
		body := map[string]any{"name": "zero", "permissions": []string{"services:read"}, "rate_limit": tc.rateLimit}
		got := fieldNames(h.do("POST", "/v1/auth/api-keys", a.liveKey, body).wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
		if got[tc.field] == "" {
			t.Fatalf("rate_limit %v: fields %v, want %s", tc.rateLimit, got, tc.field)
		}
	}
	var k struct {
		APIKey struct {
			RateLimit map[string]any `json:"rate_limit"`
		} `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "one", "permissions": []string{"services:read"},
		"rate_limit": map[string]any{"requests_per_minute": 1, "burst_limit": 3}}).decode(http.StatusCreated, &k)
	if fmt.Sprint(k.APIKey.RateLimit["requests_per_minute"], k.APIKey.RateLimit["burst_limit"]) != "1 3" {
		t.Fatalf("the smallest limits: %v", k.APIKey.RateLimit)
	}
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "plan", "permissions": []string{"services:read"}, "rate_limit": map[string]any{}}).
		decode(http.StatusCreated, nil)

	doc := loadSchemaDoc(t, h)
	body := doc.Components.Schemas["APIKeyCreateBody"]
	if body == nil || body.Properties["rate_limit"] == nil {
		t.Fatal("no APIKeyCreateBody.rate_limit in the schema")
	}
	rl := body.Properties["rate_limit"]
	if rl.Ref != "" {
		rl = doc.Components.Schemas[strings.TrimPrefix(rl.Ref, "#/components/schemas/")]
	}
	for prop, want := range map[string]float64{"requests_per_minute": 1, "burst_limit": 3} {
		if p := rl.Properties[prop]; p == nil || p.Minimum == nil || *p.Minimum != want {
			t.Fatalf("schema of rate_limit.%s: %+v, want minimum %v", prop, p, want)
		}
	}
}
