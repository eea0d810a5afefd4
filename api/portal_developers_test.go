package api_test

import (
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var (
	clientSecret = regexp.MustCompile(`cs_[A-Za-z0-9]+`)
	secretID     = regexp.MustCompile(`id="secret-id">([a-z]+_[A-Za-z0-9]+)<`)
)

// clientCredentials asks /oauth/token for a client_credentials token with
// the client's id and secret and returns the status.
func clientCredentials(t *testing.T, h *harness, id, secret string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", "/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {"services.read"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	res, err := h.srv.App.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// clientCount is the number of OAuth clients of the tenant's live key.
func clientCount(t *testing.T, h *harness, key string) int {
	t.Helper()
	var list struct {
		Clients []struct {
			ClientID string `json:"client_id"`
		} `json:"clients"`
	}
	h.do("GET", "/v1/auth/clients", key, nil).decode(http.StatusOK, &list)
	return len(list.Clients)
}

// TestPortalOAuthClients registers an OAuth client from the developers
// page (its secret shown once, then never listed), rotates its secret (the
// old one stops working, the new one works), refuses a bad redirect URI
// with the API's message, and deletes it; a form without the CSRF token,
// a session without auth:manage and another organization change nothing.
func TestPortalOAuthClients(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	b, csrf := portalUser(t, h, 0, "dev@tenant-a.example", nil)

	res, page := b.send("GET", "/portal/developers", nil)
	for _, want := range []string{`id="create-client"`, `<label for="client-name">`, `<label for="client-redirects">`, `value="services.read"`, `value="client_credentials"`, `action="/portal/developers/clients"`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("developers page lacks %s: %d\n%s", want, res.StatusCode, page)
		}
	}
	form := url.Values{"name": {"Acme dashboard"}, "redirect_uris": {"https://app.example.com/callback\nhttps://app.example.com/other"},
		"grant_types": {"authorization_code", "refresh_token", "client_credentials"}, "scopes": {"services.read", "billing.read"}}

	// Without the session's CSRF token nothing is registered.
	if res, _ := b.send("POST", "/portal/developers/clients", form); res.StatusCode != http.StatusForbidden {
		t.Fatalf("client form without CSRF token: %d", res.StatusCode)
	}
	if n := clientCount(t, h, a.liveKey); n != 0 {
		t.Fatalf("a refused form registered %d clients", n)
	}
	// A redirect URI the API refuses: its message, nothing registered.
	bad := url.Values{"csrf_token": {csrf}, "name": {"bad"}, "redirect_uris": {"http://app.example.com/cb"}, "grant_types": {"authorization_code"}, "scopes": {"services.read"}}
	if res, page := b.send("POST", "/portal/developers/clients", bad); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "redirect_uris") || !strings.Contains(page, `id="error-message"`) {
		t.Fatalf("bad redirect URI: %d\n%s", res.StatusCode, page)
	}
	if n := clientCount(t, h, a.liveKey); n != 0 {
		t.Fatalf("a refused registration left %d clients", n)
	}

	form.Set("csrf_token", csrf)
	res, page = b.send("POST", "/portal/developers/clients", form)
	secret, id := clientSecret.FindString(page), secretID.FindStringSubmatch(page)
	if res.StatusCode != http.StatusCreated || secret == "" || id == nil || !strings.HasPrefix(id[1], "cli_") {
		t.Fatalf("register client: %d\n%s", res.StatusCode, page)
	}
	var got struct {
		Client struct {
			Name         string   `json:"name"`
			RedirectURIs []string `json:"redirect_uris"`
			GrantTypes   []string `json:"grant_types"`
			Scopes       []string `json:"scopes"`
		} `json:"client"`
	}
	h.do("GET", "/v1/auth/clients/"+id[1], a.liveKey, nil).decode(http.StatusOK, &got)
	if got.Client.Name != "Acme dashboard" || strings.Join(got.Client.RedirectURIs, " ") != "https://app.example.com/callback https://app.example.com/other" ||
		len(got.Client.GrantTypes) != 3 || strings.Join(got.Client.Scopes, " ") != "services.read billing.read" {
		t.Fatalf("registered client: %+v", got.Client)
	}
	if status := clientCredentials(t, h, id[1], secret); status != http.StatusOK {
		t.Fatalf("the shown secret at /oauth/token: %d", status)
	}
	_, page = b.send("GET", "/portal/developers", nil)
	if !strings.Contains(page, `data-client="`+id[1]+`"`) || strings.Contains(page, secret) || !strings.Contains(page, `action="/portal/developers/clients/`+id[1]+`/rotate"`) {
		t.Fatalf("developers page after registration (listed, secret not shown):\n%s", page)
	}

	// Another organization's session can neither rotate nor delete it.
	bo, boCSRF := portalUser(t, h, 1, "bo@tenant-b.example", nil)
	for _, action := range []string{"rotate", "delete"} {
		if res, _ := bo.send("POST", "/portal/developers/clients/"+id[1]+"/"+action, url.Values{"csrf_token": {boCSRF}}); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another organization's %s: %d", action, res.StatusCode)
		}
	}
	if res, page := bo.send("GET", "/portal/developers", nil); res.StatusCode != http.StatusOK || !strings.Contains(page, `id="clients"`) || strings.Contains(page, id[1]) {
		t.Fatalf("another organization's developers page (%d) lists the client", res.StatusCode)
	}
	// A session without auth:manage is refused (the API's 403), and nothing changes.
	wes, wesCSRF := portalUser(t, h, 0, "wes@tenant-a.example", []string{"webhooks:manage", "services:read"})
	if res, page := wes.send("GET", "/portal/developers", nil); res.StatusCode != http.StatusOK || !strings.Contains(page, `id="webhooks"`) || strings.Contains(page, `id="create-client"`) {
		t.Fatalf("the developers page without auth:manage (%d) offers the client form", res.StatusCode)
	}
	if res, page := wes.send("POST", "/portal/developers/clients", url.Values{"csrf_token": {wesCSRF}, "name": {"x"}, "grant_types": {"client_credentials"}, "scopes": {"services.read"}}); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
		t.Fatalf("registration without auth:manage: %d", res.StatusCode)
	}
	for _, action := range []string{"rotate", "delete"} {
		if res, page := wes.send("POST", "/portal/developers/clients/"+id[1]+"/"+action, url.Values{"csrf_token": {wesCSRF}}); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
			t.Fatalf("%s without auth:manage: %d", action, res.StatusCode)
		}
	}
	if n := clientCount(t, h, a.liveKey); n != 1 {
		t.Fatalf("refused actions changed the clients: %d", n)
	}
	if status := clientCredentials(t, h, id[1], secret); status != http.StatusOK {
		t.Fatalf("the secret after refused rotations: %d", status)
	}

	// Rotation: a new secret, shown once; the old one is refused.
	if res, _ := b.send("POST", "/portal/developers/clients/"+id[1]+"/rotate", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("rotation without CSRF token: %d", res.StatusCode)
	}
	res, page = b.send("POST", "/portal/developers/clients/"+id[1]+"/rotate", url.Values{"csrf_token": {csrf}})
	rotated := clientSecret.FindString(page)
	if res.StatusCode != http.StatusOK || rotated == "" || rotated == secret || !strings.Contains(page, id[1]) {
		t.Fatalf("rotate: %d\n%s", res.StatusCode, page)
	}
	if old, fresh := clientCredentials(t, h, id[1], secret), clientCredentials(t, h, id[1], rotated); old != http.StatusUnauthorized || fresh != http.StatusOK {
		t.Fatalf("after rotation: old secret %d, new secret %d", old, fresh)
	}
	if res, page := b.send("GET", "/portal/developers", nil); res.StatusCode != http.StatusOK || !strings.Contains(page, `data-client="`+id[1]+`"`) || strings.Contains(page, rotated) {
		t.Fatalf("the developers page after rotation (%d) shows the secret again", res.StatusCode)
	}

	// Deletion.
	if res, _ := b.send("POST", "/portal/developers/clients/"+id[1]+"/delete", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("deletion without CSRF token: %d", res.StatusCode)
	}
	res, _ = b.send("POST", "/portal/developers/clients/"+id[1]+"/delete", url.Values{"csrf_token": {csrf}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/developers" {
		t.Fatalf("delete: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	h.do("GET", "/v1/auth/clients/"+id[1], a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	if status := clientCredentials(t, h, id[1], rotated); status != http.StatusUnauthorized {
		t.Fatalf("a deleted client's secret: %d", status)
	}
	if _, page := b.send("GET", res.Header.Get("Location"), nil); strings.Contains(page, `data-client="`+id[1]+`"`) || !strings.Contains(page, "OAuth client deleted.") {
		t.Fatalf("developers page after deletion:\n%s", page)
	}

	// A public client has no secret: the page says so instead of showing one.
	res, _ = b.send("POST", "/portal/developers/clients", url.Values{"csrf_token": {csrf}, "name": {"CLI"}, "redirect_uris": {"http://localhost:8400/cb"},
		"grant_types": {"authorization_code"}, "scopes": {"services.read"}, "public": {"true"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/developers" {
		t.Fatalf("public client: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	_, page = b.send("GET", "/portal/developers", nil)
	if !strings.Contains(page, "Public OAuth client cli_") {
		t.Fatalf("no notice of the public client's registration:\n%s", page)
	}
	pub := regexp.MustCompile(`data-client="(cli_[^"]+)"><td><code>[^<]+</code> <span class="badge">public</span>`).FindStringSubmatch(page)
	if pub == nil {
		t.Fatalf("public client not listed as public:\n%s", page)
	}
	if strings.Contains(page, `action="/portal/developers/clients/`+pub[1]+`/rotate"`) || !strings.Contains(page, `action="/portal/developers/clients/`+pub[1]+`/delete"`) {
		t.Fatalf("a public client is offered a secret rotation, or no deletion:\n%s", page)
	}

	// A client cannot be given a scope its creator does not hold, even
	// by a hand-made form: the API refuses, nothing is registered.
	cy, cyCSRF := portalUser(t, h, 0, "cy@tenant-a.example", []string{"auth:manage", "services:read"})
	before := clientCount(t, h, a.liveKey)
	if res, page := cy.send("GET", "/portal/developers", nil); res.StatusCode != http.StatusOK || !strings.Contains(page, `value="services.read"`) || strings.Contains(page, `value="billing.write"`) {
		t.Fatalf("the scopes offered to a services:read user (%d):\n%s", res.StatusCode, page)
	}
	res, page = cy.send("POST", "/portal/developers/clients", url.Values{"csrf_token": {cyCSRF}, "name": {"wider"}, "grant_types": {"client_credentials"}, "scopes": {"services.read", "billing.write"}})
	if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
		t.Fatalf("a scope the creator lacks: %d\n%s", res.StatusCode, page)
	}
	if n := clientCount(t, h, a.liveKey); n != before {
		t.Fatalf("a refused registration changed the clients: %d, was %d", n, before)
	}
}

// webhookActive reads a subscription's active flag through the API.
func webhookActive(t *testing.T, h *harness, key, id string) bool {
	t.Helper()
	var w struct {
		Webhook struct {
			Active bool `json:"active"`
		} `json:"webhook"`
	}
	h.do("GET", "/v1/webhooks/"+id, key, nil).decode(http.StatusOK, &w)
	return w.Webhook.Active
}

// TestPortalWebhookPauseDelete pauses, resumes and deletes a webhook
// subscription from its page; a form without the CSRF token, a session
// without webhooks:manage and another organization change nothing.
func TestPortalWebhookPauseDelete(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var hook struct {
		Webhook struct{ ID string } `json:"webhook"`
	}
	h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"service.*"}}).decode(http.StatusCreated, &hook)
	id := hook.Webhook.ID
	path := "/portal/developers/webhooks/" + id
	b, csrf := portalUser(t, h, 0, "wendy@tenant-a.example", nil)

	res, page := b.send("GET", path, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="webhook-status">active<`) || !strings.Contains(page, `action="`+path+`/pause"`) ||
		!strings.Contains(page, `action="`+path+`/delete"`) || strings.Contains(page, `action="`+path+`/resume"`) {
		t.Fatalf("webhook page: %d\n%s", res.StatusCode, page)
	}
	if res, _ := b.send("POST", path+"/pause", url.Values{}); res.StatusCode != http.StatusForbidden || !webhookActive(t, h, a.liveKey, id) {
		t.Fatalf("pause without CSRF token: %d", res.StatusCode)
	}
	bo, boCSRF := portalUser(t, h, 1, "bo@tenant-b.example", nil)
	for _, action := range []string{"pause", "delete"} {
		if res, _ := bo.send("POST", path+"/"+action, url.Values{"csrf_token": {boCSRF}}); res.StatusCode != http.StatusNotFound {
			t.Fatalf("another organization's %s: %d", action, res.StatusCode)
		}
	}
	keys, keysCSRF := portalUser(t, h, 0, "kim@tenant-a.example", []string{"auth:manage", "services:read"})
	for _, action := range []string{"pause", "delete"} {
		if res, page := keys.send("POST", path+"/"+action, url.Values{"csrf_token": {keysCSRF}}); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
			t.Fatalf("%s without webhooks:manage: %d", action, res.StatusCode)
		}
	}
	if !webhookActive(t, h, a.liveKey, id) {
		t.Fatal("a refused form paused the subscription")
	}

	res, _ = b.send("POST", path+"/pause", url.Values{"csrf_token": {csrf}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != path || webhookActive(t, h, a.liveKey, id) {
		t.Fatalf("pause: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	_, page = b.send("GET", res.Header.Get("Location"), nil)
	if !strings.Contains(page, `id="webhook-status">paused<`) || !strings.Contains(page, `action="`+path+`/resume"`) || !strings.Contains(page, "Subscription paused") {
		t.Fatalf("paused webhook page:\n%s", page)
	}
	// The notice is shown once, and a link cannot put its own words in
	// the page's notice.
	if res, page := b.send("GET", path, nil); res.StatusCode != http.StatusOK || !strings.Contains(page, `id="webhook-status">paused<`) || strings.Contains(page, "Subscription paused") {
		t.Fatalf("the notice is shown again (%d):\n%s", res.StatusCode, page)
	}
	for _, link := range []string{path + "?message=Your+account+is+suspended", "/portal/developers?message=Your+account+is+suspended",
		"/portal/billing?message=Your+account+is+suspended"} {
		if res, page := b.send("GET", link, nil); res.StatusCode != http.StatusOK || strings.Contains(page, "suspended") {
			t.Fatalf("%s shows the link's words (%d):\n%s", link, res.StatusCode, page)
		}
	}
	// Nor can a cookie set by someone else, or a notice sealed for another
	// page or another session.
	forged := base64.RawURLEncoding.EncodeToString(append(make([]byte, 16), "Your account is suspended"...))
	b.cookies["platform_notice"] = forged
	if _, page := b.send("GET", path, nil); strings.Contains(page, "suspended") {
		t.Fatalf("a forged notice cookie is shown:\n%s", page)
	}
	delete(b.cookies, "platform_notice")
	b.send("POST", path+"/resume", url.Values{"csrf_token": {csrf}})
	b.send("POST", path+"/pause", url.Values{"csrf_token": {csrf}}) // a notice for the webhook's page
	if _, page := b.send("GET", "/portal/developers", nil); strings.Contains(page, "Subscription paused") {
		t.Fatal("a notice for the webhook's page is shown on the developers page")
	}
	other, _ := portalUser(t, h, 0, "wanda@tenant-a.example", nil)
	other.cookies["platform_notice"] = b.cookies["platform_notice"]
	if _, page := other.send("GET", path, nil); strings.Contains(page, "Subscription paused") {
		t.Fatal("another session's notice is shown")
	}
	if _, page := b.send("GET", path, nil); !strings.Contains(page, "Subscription paused") {
		t.Fatalf("the notice did not reach its page:\n%s", page)
	}
	res, _ = b.send("POST", path+"/resume", url.Values{"csrf_token": {csrf}})
	if res.StatusCode != http.StatusSeeOther || !webhookActive(t, h, a.liveKey, id) {
		t.Fatalf("resume: %d", res.StatusCode)
	}

	if res, _ := b.send("POST", path+"/delete", url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("delete without CSRF token: %d", res.StatusCode)
	}
	h.do("GET", "/v1/webhooks/"+id, a.liveKey, nil).decode(http.StatusOK, nil)
	res, _ = b.send("POST", path+"/delete", url.Values{"csrf_token": {csrf}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/developers" {
		t.Fatalf("delete: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	h.do("GET", "/v1/webhooks/"+id, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	if _, page := b.send("GET", res.Header.Get("Location"), nil); strings.Contains(page, path) || !strings.Contains(page, "Webhook subscription deleted.") {
		t.Fatalf("developers page after deletion:\n%s", page)
	}
	if res, _ := b.send("GET", path, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a deleted subscription's page: %d", res.StatusCode)
	}
}

// idempotencyField is a form's idempotency key as the page renders it.
var idempotencyField = regexp.MustCompile(`<form id="(create-[a-z]+)"[^>]*>\s*<h3>[^<]*</h3>\s*<input type="hidden" name="csrf_token" value="[^"]*"><input type="hidden" name="idempotency_key" value="([^"]+)">`)

// TestPortalSecretFormsPostedAgain posts each form that shows a secret
// once a second time, as a browser's reload of the answer does: the page
// shows the same key, client or signing secret and nothing more is
// created or rotated; the same key with a changed form (after going back
// to it) creates a new one; two renders of the page give two keys.
func TestPortalSecretFormsPostedAgain(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	b, csrf := portalUser(t, h, 0, "reload@tenant-a.example", nil)

	_, page := b.send("GET", "/portal/developers", nil)
	keys := map[string]string{}
	for _, m := range idempotencyField.FindAllStringSubmatch(page, -1) {
		keys[m[1]] = m[2]
	}
	_, again := b.send("GET", "/portal/developers", nil)
	if len(keys) != 3 || !strings.Contains(again, `name="idempotency_key"`) || strings.Contains(again, keys["create-key"]) {
		t.Fatalf("each form needs a new idempotency key per render: %v\n%s", keys, page)
	}

	countKeys := func() int {
		var list struct {
			Keys []struct {
				Name string `json:"name"`
			} `json:"api_keys"`
		}
		h.do("GET", "/v1/auth/api-keys", a.liveKey, nil).decode(http.StatusOK, &list)
		n := 0
		for _, k := range list.Keys {
			if strings.HasPrefix(k.Name, "reload") {
				n++
			}
		}
		return n
	}
	liveSecret := regexp.MustCompile(`sk_live_[A-Za-z0-9]+`)
	form := url.Values{"csrf_token": {csrf}, "idempotency_key": {keys["create-key"]}, "name": {"reload"}, "permissions": {"services:read"}}
	res, first := b.send("POST", "/portal/developers/keys", form)
	res2, second := b.send("POST", "/portal/developers/keys", form)
	s1, s2 := liveSecret.FindString(first), liveSecret.FindString(second)
	if res.StatusCode != http.StatusCreated || res2.StatusCode != http.StatusCreated || s1 == "" || s1 != s2 || countKeys() != 1 {
		t.Fatalf("key form posted twice: %d %d, secrets %q %q, %d keys", res.StatusCode, res2.StatusCode, s1, s2, countKeys())
	}
	id := secretID.FindStringSubmatch(first)[1]

	// Rotation posted twice rotates once: the secret shown both times works.
	rotate := url.Values{"csrf_token": {csrf}, "idempotency_key": {"portal_rotate_" + id}}
	_, r1 := b.send("POST", "/portal/developers/keys/"+id+"/rotate", rotate)
	_, r2 := b.send("POST", "/portal/developers/keys/"+id+"/rotate", rotate)
	rs1, rs2 := liveSecret.FindString(r1), liveSecret.FindString(r2)
	if rs1 == "" || rs1 != rs2 || rs1 == s1 {
		t.Fatalf("rotation posted twice: %q %q (created %q)", rs1, rs2, s1)
	}
	h.do("GET", "/v1/services", rs1, nil).decode(http.StatusOK, nil)

	// The same key with a changed form is a new request: a second key.
	form.Set("name", "reload-changed")
	res, changed := b.send("POST", "/portal/developers/keys", form)
	if s3 := liveSecret.FindString(changed); res.StatusCode != http.StatusCreated || s3 == "" || s3 == s1 || countKeys() != 2 {
		t.Fatalf("changed form with the same key: %d, %d keys\n%s", res.StatusCode, countKeys(), changed)
	}

	// An OAuth client and a webhook subscription: one each.
	cform := url.Values{"csrf_token": {csrf}, "idempotency_key": {keys["create-client"]}, "name": {"Reloaded app"},
		"grant_types": {"client_credentials"}, "scopes": {"services.read"}}
	_, c1 := b.send("POST", "/portal/developers/clients", cform)
	_, c2 := b.send("POST", "/portal/developers/clients", cform)
	if cs := clientSecret.FindString(c1); cs == "" || cs != clientSecret.FindString(c2) || clientCount(t, h, a.liveKey) != 1 {
		t.Fatalf("client form posted twice: %d clients\n%s\n%s", clientCount(t, h, a.liveKey), c1, c2)
	}
	wform := url.Values{"csrf_token": {csrf}, "idempotency_key": {keys["create-webhook"]}, "url": {publicHook}, "events": {"service.provisioned"}}
	_, w1 := b.send("POST", "/portal/developers/webhooks", wform)
	_, w2 := b.send("POST", "/portal/developers/webhooks", wform)
	// The page escapes the secret's base64 ('+' is &#43;): read it unescaped.
	whsec := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)
	w1, w2 = html.UnescapeString(w1), html.UnescapeString(w2)
	var subs struct {
		Webhooks []struct {
			ID string `json:"id"`
		} `json:"webhooks"`
	}
	h.do("GET", "/v1/webhooks", a.liveKey, nil).decode(http.StatusOK, &subs)
	if ws := whsec.FindString(w1); ws == "" || ws != whsec.FindString(w2) || len(subs.Webhooks) != 1 {
		t.Fatalf("webhook form posted twice: %d subscriptions\n%s\n%s", len(subs.Webhooks), w1, w2)
	}
}
