package api_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// post calls the API over HTTP with a bearer token and a JSON body and returns the status.
func (e *oauthEnv) post(t *testing.T, token, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", e.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestOAuthUserTokensCappedByRole signs a provider agent in through a
// client that holds services.write: the authorization code, its refresh
// and the device flow all give the agent only what the agent role permits.
func TestOAuthUserTokensCappedByRole(t *testing.T) {
	e := newOAuthEnv(t)
	h := e.h
	ctx := context.Background()
	provider, err := identity.NewStore(h.store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	agent, err := identity.NewStore(h.store).CreateUser(ctx, admin, identity.UserInput{Email: "agent-" + strings.ToLower(models.RandomString(8)) + "@staff.example",
		Name: "Agent", Role: models.RoleAgent, OrganizationID: provider.ID, Password: e.password})
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Client struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", h.adminKey, map[string]any{
		"name": "Staff tool", "redirect_uris": []string{e.client.Redirect},
		"grant_types": []string{"authorization_code", "refresh_token"},
		"scopes":      []string{"services.read", "services.write"},
	}).decode(http.StatusCreated, &reg)
	conf := &oauth2.Config{ClientID: reg.Client.ClientID, ClientSecret: reg.Client.ClientSecret, RedirectURL: e.client.Redirect,
		Scopes:   []string{"services.read", "services.write"},
		Endpoint: oauth2.Endpoint{AuthURL: e.base + "/oauth/authorize", TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	e.user = agent

	check := func(how string, tok *oauth2.Token) {
		t.Helper()
		if tok.Extra("scope") != "services.read" {
			t.Fatalf("%s: scope %v, want services.read only", how, tok.Extra("scope"))
		}
		status, me := e.api(t, tok.AccessToken, "/v1/users/me")
		if p, _ := me["principal"].(map[string]any); status != http.StatusOK || fmt.Sprint(p["permissions"]) != "[services:read]" {
			t.Fatalf("%s: principal %d %v", how, status, me)
		}
		if status := e.post(t, tok.AccessToken, "/v1/services/bulk/modify", `{}`); status != http.StatusForbidden {
			t.Fatalf("%s: a call needing services:write answered %d, want 403", how, status)
		}
	}
	verifier := oauth2.GenerateVerifier()
	tok, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	check("authorization code", tok)
	next, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	check("refresh", next)

	// x/oauth2 starts the device flow without a client secret: a public client.
	var pub struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", h.adminKey, map[string]any{
		"name": "Staff CLI", "public": true, "scopes": []string{"services.read", "services.write"},
		"grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code"},
	}).decode(http.StatusCreated, &pub)
	conf = &oauth2.Config{ClientID: pub.Client.ClientID, Scopes: []string{"services.read", "services.write"}, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: e.base + "/oauth/device/code", TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.approveDevice(t, da.VerificationURIComplete, "approve", http.StatusOK)
	dev, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatal(err)
	}
	check("device flow", dev)
}

// parallel runs fn n times at once and returns how many calls succeeded.
func parallel(n int, fn func() error) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if fn() == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return ok
}

// TestOAuthExchangesAreAtomic sends the same authorization code, then the
// same refresh token, in parallel: exactly one request gets tokens. A
// refresh revokes the access token it replaces.
func TestOAuthExchangesAreAtomic(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	conf := e.config()
	verifier := oauth2.GenerateVerifier()
	code := e.authorize(t, conf, verifier)
	if n := parallel(8, func() error { _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); return err }); n != 1 {
		t.Fatalf("%d parallel exchanges of one code succeeded, want 1", n)
	}

	verifier = oauth2.GenerateVerifier()
	first, err := conf.Exchange(ctx, e.authorize(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func(rt string) (*oauth2.Token, error) {
		return conf.TokenSource(ctx, &oauth2.Token{RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)}).Token()
	}
	second, err := refresh(first.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := e.api(t, first.AccessToken, "/v1/users/me"); status != http.StatusUnauthorized {
		t.Fatalf("the access token replaced by a refresh still works: %d %v", status, body)
	}
	if status, _ := e.api(t, second.AccessToken, "/v1/users/me"); status != http.StatusOK {
		t.Fatalf("the refreshed access token: %d", status)
	}
	if n := parallel(8, func() error { _, err := refresh(second.RefreshToken); return err }); n != 1 {
		t.Fatalf("%d parallel refreshes with one refresh token succeeded, want 1", n)
	}
}

// TestDeviceDenyNeedsASignedInUser posts "deny" for a pending user code
// from a browser with the page's CSRF token but no sign-in: it is refused
// and the device can still be approved.
func TestDeviceDenyNeedsASignedInUser(t *testing.T) {
	e := newOAuthEnv(t)
	ctx := context.Background()
	var reg struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
	}
	e.h.do("POST", "/v1/auth/clients", e.h.tenants[0].liveKey, map[string]any{
		"name": "TV app", "public": true, "scopes": []string{"services.read"},
		"grant_types": []string{"urn:ietf:params:oauth:grant-type:device_code"},
	}).decode(http.StatusCreated, &reg)
	conf := &oauth2.Config{ClientID: reg.Client.ClientID, Scopes: []string{"services.read"}, Endpoint: oauth2.Endpoint{
		DeviceAuthURL: e.base + "/oauth/device/code", TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(da.VerificationURIComplete)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(string(page), -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if form.Get("csrf_token") == "" {
		t.Fatalf("device page without a CSRF token: %s", page)
	}
	form.Set("user_code", da.UserCode)
	form.Set("action", "deny")
	res, err = browser.PostForm(e.base+"/oauth/device", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous deny answered %d, want 401", res.StatusCode)
	}
	e.approveDevice(t, da.VerificationURIComplete, "approve", http.StatusOK)
	if _, err := conf.DeviceAccessToken(ctx, da); err != nil {
		t.Fatalf("the device after an anonymous deny: %v", err)
	}
}
