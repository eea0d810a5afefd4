package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// oauthEnv is the API served over real HTTP on loopback, for OAuth clients
// that no one here wrote (golang.org/x/oauth2).
type oauthEnv struct {
	h        *harness
	base     string
	password string
	user     *identity.User
	client   struct{ ID, Secret, Redirect string }
}

func newOAuthEnv(t *testing.T) *oauthEnv {
	t.Helper()
	h := newHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg, err := config.Load(func(k string) string {
		if k == "PUBLIC_BASE_URL" {
			return base
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	go func() { _ = h.srv.App.Listener(ln) }()
	t.Cleanup(func() { _ = h.srv.App.Shutdown() })

	e := &oauthEnv{h: h, base: base, password: "correct horse battery staple"}
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	e.user, err = identity.NewStore(h.store).CreateUser(context.Background(), admin, identity.UserInput{
		Email: strings.ToLower(models.RandomString(8)) + "@example.com", Name: "OAuth User", OrganizationID: h.tenants[0].org.ID, Password: e.password,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.client.Redirect = "http://127.0.0.1:9/callback"
	var reg struct {
		Client struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", h.tenants[0].liveKey, map[string]any{
		"name": "Portal", "redirect_uris": []string{e.client.Redirect},
		"grant_types": []string{"authorization_code", "refresh_token", "client_credentials"},
		"scopes":      []string{"services.read", "billing.read"},
	}).decode(http.StatusCreated, &reg)
	e.client.ID, e.client.Secret = reg.Client.ClientID, reg.Client.ClientSecret
	if !strings.HasPrefix(e.client.ID, "cli_") || !strings.HasPrefix(e.client.Secret, "cs_") {
		t.Fatalf("registered client %+v", reg.Client)
	}
	return e
}

func (e *oauthEnv) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: e.client.ID, ClientSecret: e.client.Secret, RedirectURL: e.client.Redirect,
		Scopes:   []string{"services.read", "billing.read"},
		Endpoint: oauth2.Endpoint{AuthURL: e.base + "/oauth/authorize", TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// signIn drives the sign-in page like a browser (cookie jar, form post) and
// returns the redirect the server answers with.
func (e *oauthEnv) signIn(t *testing.T, authURL, email, password, action string) *url.URL {
	t.Helper()
	res, body, _ := e.submitSignIn(t, authURL, email, password, action)
	if res.StatusCode/100 != 3 {
		t.Fatalf("sign-in answered %d: %s", res.StatusCode, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// submitSignIn opens the sign-in page of authURL in a new browser (a cookie
// jar, redirects not followed), fills in and posts its form, and returns the
// answer (body read), its body and the form it posted.
func (e *oauthEnv) submitSignIn(t *testing.T, authURL, email, password, action string) (*http.Response, []byte, url.Values) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("authorize page: %d %s", res.StatusCode, page)
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	form.Set("email", email)
	form.Set("password", password)
	form.Set("action", action)
	res, err = browser.PostForm(e.base+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, body, form
}

// authorize runs the authorization-code flow up to the code.
func (e *oauthEnv) authorize(t *testing.T, conf *oauth2.Config, verifier string) string {
	t.Helper()
	state := models.RandomString(16)
	loc := e.signIn(t, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), e.user.Email, e.password, "approve")
	if loc.Query().Get("state") != state || loc.Query().Get("code") == "" {
		t.Fatalf("callback %s: want code and state %s", loc, state)
	}
	return loc.Query().Get("code")
}

// api calls the API over HTTP with a bearer token and returns status and body.
func (e *oauthEnv) api(t *testing.T, token, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return fmt.Sprint(err)
}

func TestOAuthAuthorizationCodeWithPKCE(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	conf := e.config()

	verifier := oauth2.GenerateVerifier()
	code := e.authorize(t, conf, verifier)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("user_id") != e.user.ID || tok.Extra("scope") != "services.read billing.read" {
		t.Fatalf("token response: type %q refresh %q user_id %v scope %v", tok.TokenType, tok.RefreshToken, tok.Extra("user_id"), tok.Extra("scope"))
	}
	// fosite counts down from the expiry it has just set: an hour, less the
	// seconds the exchange took on a busy machine.
	if exp, ok := tok.Extra("expires_in").(float64); !ok || exp != 3600 {
		t.Fatalf("expires_in %v", tok.Extra("expires_in"))
	}
	status, me := e.api(t, tok.AccessToken, "/v1/users/me")
	p, _ := me["principal"].(map[string]any)
	if status != http.StatusOK || p["id"] != e.user.ID || p["type"] != "user" || fmt.Sprint(p["permissions"]) != "[services:read billing:read]" {
		t.Fatalf("API with the access token: %d %v", status, me)
	}

	// The code is single use: a second exchange fails and revokes what the first issued.
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("reused code: %v", err)
	}
	if status, body := e.api(t, tok.AccessToken, "/v1/users/me"); status != http.StatusUnauthorized {
		t.Fatalf("token of a replayed code still works: %d %v", status, body)
	}

	// A wrong verifier is refused.
	code = e.authorize(t, conf, oauth2.GenerateVerifier())
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("wrong verifier: %v", err)
	}
	// No verifier at all is refused.
	code = e.authorize(t, conf, oauth2.GenerateVerifier())
	if _, err := conf.Exchange(ctx, code); err == nil {
		t.Fatal("exchange without a verifier succeeded")
	}

	// PKCE is required, and plain is refused: the error goes back to the client.
	for name, opts := range map[string][]oauth2.AuthCodeOption{
		"no challenge":    nil,
		"plain challenge": {oauth2.SetAuthURLParam("code_challenge", verifier), oauth2.SetAuthURLParam("code_challenge_method", "plain")},
	} {
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := browser.Get(conf.AuthCodeURL("state-"+models.RandomString(8), opts...))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode/100 != 3 || loc.Query().Get("error") == "" || loc.Query().Get("code") != "" {
			t.Fatalf("%s: %d %s", name, res.StatusCode, loc)
		}
	}

	// Wrong password: the page again, no redirect; deny: access_denied to the client.
	authURL := conf.AuthCodeURL("state-"+models.RandomString(8), oauth2.S256ChallengeOption(verifier))
	res, _, form := e.submitSignIn(t, authURL, e.user.Email, "wrong password!", "approve")
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password answered %d", res.StatusCode)
	}
	// Without the CSRF cookie (another browser) the form is refused.
	res, err = http.PostForm(e.base+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("form without its cookie answered %d", res.StatusCode)
	}
	if loc := e.signIn(t, authURL, e.user.Email, "", "deny"); loc.Query().Get("error") != "access_denied" {
		t.Fatalf("deny redirected to %s", loc)
	}
}

func TestOAuthRefreshRotationAndReuse(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	conf := e.config()
	verifier := oauth2.GenerateVerifier()
	first, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func(refreshToken string) (*oauth2.Token, error) {
		return conf.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	}
	second, err := refresh(first.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if second.RefreshToken == "" || second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken {
		t.Fatal("refresh did not rotate the tokens")
	}
	if status, _ := e.api(t, second.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("refreshed access token: %d", status)
	}
	// Reusing the first refresh token is refused and revokes the whole family.
	if _, err := refresh(first.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("reused refresh token: %v", err)
	}
	if _, err := refresh(second.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("refresh token of a revoked family: %v", err)
	}
	if status, body := e.api(t, second.AccessToken, "/v1/users/me"); status != http.StatusUnauthorized || body["error"].(map[string]any)["code"] != "INVALID_TOKEN" {
		t.Fatalf("access token of a revoked family: %d %v", status, body)
	}
}

func TestOAuthClientCredentialsIntrospectionRevocation(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	cc := &clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: e.base + "/oauth/token", Scopes: []string{"services.read"}}
	tok, err := cc.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "" || tok.TokenType != "Bearer" || tok.Extra("scope") != "services.read" {
		t.Fatalf("client credentials token: %+v scope %v", tok, tok.Extra("scope"))
	}
	status, me := e.api(t, tok.AccessToken, "/v1/users/me")
	p, _ := me["principal"].(map[string]any)
	if status != http.StatusOK || p["type"] != "oauth_client" || p["id"] != e.client.ID || p["organization_id"] != e.h.tenants[0].org.ID {
		t.Fatalf("client principal: %d %v", status, me)
	}
	// A scope the client does not have is refused; a wrong secret is invalid_client.
	if _, err := (&clientcredentials.Config{ClientID: e.client.ID, ClientSecret: e.client.Secret, TokenURL: cc.TokenURL, Scopes: []string{"billing.write"}}).Token(ctx); oauthErrorCode(err) != "invalid_scope" {
		t.Fatalf("scope beyond the client's: %v", err)
	}
	if _, err := (&clientcredentials.Config{ClientID: e.client.ID, ClientSecret: "cs_wrong", TokenURL: cc.TokenURL}).Token(ctx); oauthErrorCode(err) != "invalid_client" {
		t.Fatalf("wrong secret: %v", err)
	}

	post := func(path, user, pass string, form url.Values) (int, map[string]any) {
		req, _ := http.NewRequest("POST", e.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	status, in := post("/oauth/introspect", e.client.ID, e.client.Secret, url.Values{"token": {tok.AccessToken}})
	if status != http.StatusOK || in["active"] != true || in["client_id"] != e.client.ID || in["scope"] != "services.read" {
		t.Fatalf("introspection: %d %v", status, in)
	}
	if status, in := post("/oauth/introspect", "", "", url.Values{"token": {tok.AccessToken}}); status != http.StatusUnauthorized || in["error"] == nil {
		t.Fatalf("introspection without client authentication: %d %v", status, in)
	}
	// Another organization's client, and this organization's sandbox
	// client, learn nothing about the token: it is inactive to them. The
	// bearer of another organization's token neither; this one's, yes.
	other := func(key string) (string, string) {
		var reg struct {
			Client struct {
				ClientID     string `json:"client_id"`
				ClientSecret string `json:"client_secret"`
			} `json:"client"`
		}
		e.h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "Other", "grant_types": []string{"client_credentials"},
			"scopes": []string{"services.read"}}).decode(http.StatusCreated, &reg)
		return reg.Client.ClientID, reg.Client.ClientSecret
	}
	foreignID, foreignSecret := other(e.h.tenants[1].liveKey)
	sandboxID, sandboxSecret := other(e.h.tenants[0].testKey)
	for name, c := range map[string][2]string{"another organization's client": {foreignID, foreignSecret}, "the sandbox client": {sandboxID, sandboxSecret}} {
		if status, in := post("/oauth/introspect", c[0], c[1], url.Values{"token": {tok.AccessToken}}); status != http.StatusOK || len(in) != 1 || in["active"] != false {
			t.Fatalf("introspection by %s: %d %v", name, status, in)
		}
	}
	foreignTok, err := (&clientcredentials.Config{ClientID: foreignID, ClientSecret: foreignSecret, TokenURL: cc.TokenURL, Scopes: []string{"services.read"}}).Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byBearer := func(bearer string) map[string]any {
		req, _ := http.NewRequest("POST", e.base+"/oauth/introspect", strings.NewReader(url.Values{"token": {tok.AccessToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+bearer)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return body
	}
	if in := byBearer(foreignTok.AccessToken); in["active"] != false || in["client_id"] != nil {
		t.Fatalf("introspection by another organization's bearer: %v", in)
	}
	sameOrg, err := cc.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in := byBearer(sameOrg.AccessToken); in["active"] != true {
		t.Fatalf("introspection by the same organization's bearer: %v", in)
	}
	if status, body := post("/oauth/revoke", e.client.ID, e.client.Secret, url.Values{"token": {tok.AccessToken}}); status != http.StatusOK {
		t.Fatalf("revocation: %d %v", status, body)
	}
	if status, body := e.api(t, tok.AccessToken, "/v1/users/me"); status != http.StatusUnauthorized || body["error"].(map[string]any)["code"] != "INVALID_TOKEN" {
		t.Fatalf("revoked token at the API: %d %v", status, body)
	}
	if _, in := post("/oauth/introspect", e.client.ID, e.client.Secret, url.Values{"token": {tok.AccessToken}}); in["active"] != false {
		t.Fatalf("introspection of a revoked token: %v", in)
	}
	// Issuance, refusal and revocation are audited.
	for event, client := range map[string]string{"token.issued": e.client.ID, "token.revoked": e.client.ID, "token.refused": e.client.ID} {
		var list auditList
		e.h.do("GET", "/v1/auth/audit-events?event_type="+event, e.h.adminKey, nil).decode(http.StatusOK, &list)
		if len(list.AuditEvents) == 0 || list.AuditEvents[0].ClientID != client {
			t.Fatalf("audit of %s: %+v", event, list)
		}
	}
	// OAuth errors have the RFC 6749 shape, not the API envelope.
	status, body := post("/oauth/token", e.client.ID, e.client.Secret, url.Values{"grant_type": {"password"}, "username": {"x"}, "password": {"y"}})
	if status != http.StatusBadRequest || body["error"] != "unsupported_grant_type" || body["error_description"] == nil || body["metadata"] != nil {
		t.Fatalf("unsupported grant: %d %v", status, body)
	}
}

func TestOAuthMetadataAndClientRegistration(t *testing.T) {
	e := newOAuthEnv(t)
	var md map[string]any
	e.h.do("GET", "/.well-known/oauth-authorization-server", "", nil).decode(http.StatusOK, &md)
	if md["issuer"] != e.base || md["token_endpoint"] != e.base+"/oauth/token" || md["jwks_uri"] != e.base+"/.well-known/jwks.json" ||
		fmt.Sprint(md["code_challenge_methods_supported"]) != "[S256]" {
		t.Fatalf("metadata: %v", md)
	}
	h := e.h
	key := h.tenants[0].liveKey
	h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "x", "scopes": []string{"services:read"}, "redirect_uris": []string{"https://app.example.com/cb"}}).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "x", "scopes": []string{"services.read"}, "redirect_uris": []string{"http://app.example.com/cb"}}).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "x", "scopes": []string{"services.read"}, "grant_types": []string{"client_credentials"}, "public": true}).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "x", "scopes": []string{"services.read"}, "grant_types": []string{"implicit"}}).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/clients", "", map[string]any{"name": "x", "scopes": []string{"services.read"}}).wantError(401, "UNAUTHENTICATED")
	var limited keyAnswer
	h.do("POST", "/v1/auth/api-keys", key, map[string]any{"name": "limited", "permissions": []string{"auth:manage", "services:read"}}).decode(201, &limited)
	h.do("POST", "/v1/auth/clients", limited.APIKey.Key, map[string]any{"name": "x", "scopes": []string{"billing.write"}, "grant_types": []string{"client_credentials"}}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	var pub struct {
		Client map[string]any `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", key, map[string]any{"name": "CLI", "scopes": []string{"services.read"}, "redirect_uris": []string{"http://localhost:8400/cb"}, "public": true}).decode(201, &pub)
	if pub.Client["public"] != true || pub.Client["client_secret"] != nil || fmt.Sprint(pub.Client["grant_types"]) != "[authorization_code refresh_token]" {
		t.Fatalf("public client: %v", pub.Client)
	}
}

func TestOAuthDeviceFlow(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	var reg struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
	}
	e.h.do("POST", "/v1/auth/clients", e.h.tenants[0].liveKey, map[string]any{
		"name": "TV app", "public": true, "scopes": []string{"services.read"},
		"grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code", "refresh_token"},
	}).decode(http.StatusCreated, &reg)
	conf := &oauth2.Config{ClientID: reg.Client.ClientID, Scopes: []string{"services.read"}, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: e.base + "/oauth/device/code", TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}

	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if da.UserCode == "" || da.VerificationURI != e.base+"/oauth/device" || da.Interval != 5 || da.Expiry.IsZero() {
		t.Fatalf("device authorization: %+v", da)
	}
	poll := func(deviceCode, clientID string) (int, map[string]any) {
		res, err := http.PostForm(e.base+"/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {deviceCode}, "client_id": {clientID}})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if status, body := poll(da.DeviceCode, reg.Client.ClientID); status != 400 || body["error"] != "authorization_pending" {
		t.Fatalf("first poll: %d %v", status, body)
	}
	if status, body := poll(da.DeviceCode, reg.Client.ClientID); status != 400 || body["error"] != "slow_down" {
		t.Fatalf("fast poll: %d %v", status, body)
	}
	if _, body := poll(da.DeviceCode, e.client.ID); body["error"] != "invalid_client" && body["error"] != "invalid_grant" {
		t.Fatalf("another client's poll: %v", body)
	}
	if _, body := poll("not-a-device-code", reg.Client.ClientID); body["error"] != "invalid_grant" {
		t.Fatalf("unknown device code: %v", body)
	}

	e.approveDevice(t, da.VerificationURIComplete, "approve", http.StatusOK)
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("user_id") != e.user.ID || tok.Extra("scope") != "services.read" {
		t.Fatalf("device token: %+v user %v", tok, tok.Extra("user_id"))
	}
	status, me := e.api(t, tok.AccessToken, "/v1/users/me")
	if p, _ := me["principal"].(map[string]any); status != 200 || p["id"] != e.user.ID || fmt.Sprint(p["permissions"]) != "[services:read]" {
		t.Fatalf("device token at the API: %d %v", status, me)
	}
	if _, body := poll(da.DeviceCode, reg.Client.ClientID); body["error"] != "invalid_grant" {
		t.Fatalf("device code used twice: %v", body)
	}
	// The refresh token works through the token endpoint like any other.
	next, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	if err != nil || next.AccessToken == tok.AccessToken {
		t.Fatalf("refresh of a device grant: %v", err)
	}

	// A denied device gets access_denied.
	denied, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.approveDevice(t, denied.VerificationURIComplete, "deny", http.StatusOK)
	if _, body := poll(denied.DeviceCode, reg.Client.ClientID); body["error"] != "access_denied" {
		t.Fatalf("denied device: %v", body)
	}
	// An unknown code on the page is refused.
	e.approveDevice(t, e.base+"/oauth/device?user_code=BBBB-BBBB", "approve", http.StatusNotFound)
	// A client without the device grant cannot start one.
	res, err := http.PostForm(e.base+"/oauth/device/code", url.Values{"client_id": {e.client.ID}, "client_secret": {e.client.Secret}})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != 400 || body["error"] != "unauthorized_client" {
		t.Fatalf("device code for a client without the grant: %d %v", res.StatusCode, body)
	}
}

// approveDevice opens the device page like a browser and submits the user's decision.
func (e *oauthEnv) approveDevice(t *testing.T, pageURL, action string, wantStatus int) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	u, _ := url.Parse(pageURL)
	form.Set("user_code", u.Query().Get("user_code"))
	form.Set("email", e.user.Email)
	form.Set("password", e.password)
	form.Set("action", action)
	res, err = browser.PostForm(e.base+"/oauth/device", form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != wantStatus {
		t.Fatalf("device page %s: %d, want %d: %s", action, res.StatusCode, wantStatus, body)
	}
}

// TestSignInPagesApplyRestrictions refuses the sign-in of a user whose IP
// allow-list excludes the browser, on the authorization page, and records
// the refusal with the browser's address.
func TestSignInPagesApplyRestrictions(t *testing.T) {
	e := newOAuthEnv(t)
	h := e.h
	h.do("PATCH", "/v1/users/"+e.user.ID, h.adminKey, map[string]any{"ip_allowlist": []string{"203.0.113.0/24"}}).decode(http.StatusOK, nil)
	conf := e.config()
	res, page, _ := e.submitSignIn(t, conf.AuthCodeURL("s-123456789", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), e.user.Email, e.password, "approve")
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(page), "not allowed") {
		t.Fatalf("sign-in outside the user's allow-list: %d %s", res.StatusCode, page)
	}
	var events struct {
		Events []struct {
			EventType string `json:"event_type"`
			UserID    string `json:"user_id"`
			IPAddress string `json:"ip_address"`
			Reason    string `json:"reason"`
		} `json:"audit_events"`
	}
	h.do("GET", "/v1/auth/audit-events?event_type=login.failed", h.adminKey, nil).decode(http.StatusOK, &events)
	found := false
	for _, ev := range events.Events {
		if ev.UserID == e.user.ID && ev.Reason == "IP_NOT_ALLOWED" && ev.IPAddress == "127.0.0.1" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no login.failed event with the browser's address: %+v", events.Events)
	}
	// With the allow-list removed, the same sign-in goes through.
	h.do("PATCH", "/v1/users/"+e.user.ID, h.adminKey, map[string]any{"ip_allowlist": []string{}}).decode(http.StatusOK, nil)
	e.authorize(t, conf, oauth2.GenerateVerifier())
}
