package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

var samlInput = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)"`)
var formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)

func TestSAMLSingleSignOn(t *testing.T) {
	h := newHarness(t)
	idp := testenv.SAMLIdP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	org := h.tenants[1].org.ID
	provider, err := identity.NewStore(h.store).EnsureProviderOrganization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"PUBLIC_BASE_URL": base, "SAML_IDP_METADATA_URL": idp.URL + "/metadata",
			"SAML_DOMAINS":     "sso.example.com=" + org + ",staff.example.com=" + provider.ID,
			"SAML_GROUP_ROLES": "ops=admin,noc=admin,helpdesk=agent"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	go func() { _ = h.srv.App.Listener(ln) }()
	t.Cleanup(func() { _ = h.srv.App.Shutdown() })

	// Register the service provider and two users at the IdP.
	res, err := http.Get(base + "/saml/metadata")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(md, []byte(`Name="email"`)) || !bytes.Contains(md, []byte(base+"/saml/acs")) {
		t.Fatalf("SP metadata: %d %s", res.StatusCode, md)
	}
	// Only the binding the ACS serves (HTTP-POST), and no empty NameIDFormat.
	if bytes.Count(md, []byte("<AssertionConsumerService ")) != 1 || !bytes.Contains(md, []byte(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"`)) ||
		bytes.Contains(md, []byte("HTTP-Artifact")) || bytes.Contains(md, []byte("<NameIDFormat></NameIDFormat>")) {
		t.Fatalf("SP metadata advertises what the server does not serve: %s", md)
	}
	idp.AddServiceProvider(t, "platform", md)
	for _, u := range []testenv.IdPUser{
		{Name: "ada", Email: "ada@sso.example.com", Password: "ada password", CommonName: "Ada Lovelace", Groups: []string{"ops"}},
		{Name: "eve", Email: "eve@elsewhere.example", Password: "eve password"},
		{Name: "pat", Email: "pat@staff.example.com", Password: "pat password", Groups: []string{"helpdesk"}},
		{Name: "sam", Email: "sam@staff.example.com", Password: "sam password", Groups: []string{"helpdesk", "noc"}},
	} {
		idp.AddUser(t, u)
	}

	// login drives the browser part: SP -> IdP login form -> auto-post form
	// -> ACS. The browser's cookies are kept by the response's RelayState
	// (the request id), for acs to post like that browser.
	jars := map[string]http.CookieJar{}
	login := func(user, password, relay string) (samlResponse url.Values, acsURL string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar}
		res, err := browser.Get(base + "/saml/sso?RelayState=" + url.QueryEscape(relay))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		form := url.Values{"user": {user}, "password": {password}}
		for _, m := range samlInput.FindAllStringSubmatch(string(page), -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		if form.Get("SAMLRequest") == "" {
			t.Fatalf("IdP login page without SAMLRequest: %s", page)
		}
		loginAction := formAction.FindStringSubmatch(string(page))
		if loginAction == nil {
			t.Fatalf("IdP login page without a form: %s", page)
		}
		res, err = browser.PostForm(html.UnescapeString(loginAction[1]), form) // signs in and answers the auto-post form
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(res.Body)
		res.Body.Close()
		post := url.Values{}
		for _, m := range samlInput.FindAllStringSubmatch(string(page), -1) {
			post.Set(m[1], html.UnescapeString(m[2]))
		}
		action := formAction.FindStringSubmatch(string(page))
		if post.Get("SAMLResponse") == "" || action == nil {
			t.Fatalf("IdP answer without SAMLResponse: %s", page)
		}
		jars[post.Get("RelayState")] = jar
		return post, html.UnescapeString(action[1])
	}
	// acsIn posts the IdP's answer like the auto-post form in the browser
	// of jar (nil: a browser without cookies); it answers the status, the
	// redirect target and the session cookie, or the error body. acs posts
	// from the browser that started the sign-in.
	type acsAnswer struct {
		status   int
		location string
		cookie   *http.Cookie
		body     map[string]any
	}
	acsIn := func(jar http.CookieJar, form url.Values) acsAnswer {
		t.Helper()
		noRedirect := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noRedirect.PostForm(base+"/saml/acs", form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		a := acsAnswer{status: res.StatusCode, location: res.Header.Get("Location")}
		for _, c := range res.Cookies() {
			if c.Name == "platform_session" {
				a.cookie = c
			}
		}
		_ = json.NewDecoder(res.Body).Decode(&a.body)
		return a
	}
	acs := func(form url.Values) acsAnswer {
		t.Helper()
		return acsIn(jars[form.Get("RelayState")], form)
	}
	// session calls the session API with the cookie (and a CSRF token).
	session := func(method, path string, cookie *http.Cookie, csrf string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
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

	form, action := login("ada", "ada password", "/portal?tab=services")
	if action != base+"/saml/acs" || form.Get("RelayState") == "" || strings.Contains(form.Get("RelayState"), "portal") {
		t.Fatalf("IdP posts to %s with RelayState %q (want our opaque request id, the target kept server-side)", action, form.Get("RelayState"))
	}
	first := acs(form)
	if first.status != 303 || first.location != "/portal?tab=services" || first.cookie == nil || !first.cookie.HttpOnly || first.cookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("ACS: %d to %q, cookie %+v %v", first.status, first.location, first.cookie, first.body)
	}
	st, sess := session("GET", "/v1/auth/session", first.cookie, "")
	info, _ := sess["session"].(map[string]any)
	if st != 200 || info["email"] != "ada@sso.example.com" || info["role"] != "customer" || info["authentication_method"] != "saml" || fmt.Sprint(info["groups"]) != "[ops]" {
		t.Fatalf("session: %d %v", st, sess)
	}
	csrf, _ := info["csrf_token"].(string)
	if st, body := session("POST", "/v1/auth/session/token", first.cookie, "not-the-token"); st != 403 {
		t.Fatalf("token exchange with a wrong CSRF token: %d %v", st, body)
	}
	if st, body := session("POST", "/v1/auth/session/token", nil, csrf); st != 401 {
		t.Fatalf("token exchange without the cookie: %d %v", st, body)
	}
	st, tok := session("POST", "/v1/auth/session/token", first.cookie, csrf)
	if st != 200 || tok["token_type"] != "Bearer" || tok["access_token"] == nil || tok["user_id"] != info["user_id"] {
		t.Fatalf("token exchange: %d %v", st, tok)
	}
	st, me := (&oauthEnv{base: base}).api(t, tok["access_token"].(string), "/v1/users/me")
	p, _ := me["principal"].(map[string]any)
	u, _ := p["user"].(map[string]any)
	if st != 200 || p["type"] != "user" || p["organization_id"] != org || u["email"] != "ada@sso.example.com" {
		t.Fatalf("SAML user at the API: %d %v", st, me)
	}
	// The API does not take the cookie as a credential.
	if st, body := session("GET", "/v1/users/me", first.cookie, ""); st != 401 {
		t.Fatalf("cookie at the API: %d %v", st, body)
	}
	// A response is accepted once.
	if a := acs(form); a.status != 401 || a.cookie != nil {
		t.Fatalf("replayed SAML response: %d %v", a.status, a.body)
	}
	// A tampered response fails the signature (or decryption) check.
	form, _ = login("ada", "ada password", "")
	raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
	tampered := bytes.Clone(raw)
	if i := bytes.Index(tampered, []byte("CipherValue>")); i >= 0 { // encrypted assertion: corrupt the ciphertext
		j := i + len("CipherValue>") + 20
		tampered[j] ^= 0x01
		if tampered[j] == '<' || tampered[j] == '=' {
			tampered[j] = 'A'
		}
	} else {
		tampered = bytes.Replace(tampered, []byte("ada@sso.example.com"), []byte("adm@sso.example.com"), -1)
	}
	if bytes.Equal(tampered, raw) {
		t.Fatal("the test did not manage to tamper with the response")
	}
	form.Set("SAMLResponse", base64.StdEncoding.EncodeToString(tampered))
	if a := acs(form); a.status != 401 {
		t.Fatalf("tampered SAML response: %d %v", a.status, a.body)
	}
	// The second login finds the user created the first time; an absolute
	// RelayState is not honoured (the browser goes to the portal).
	form, _ = login("ada", "ada password", "https://evil.example/steal")
	second := acs(form)
	if second.status != 303 || second.location != "/portal" || second.cookie == nil || second.cookie.Value == first.cookie.Value {
		t.Fatalf("second login: %d %q %v", second.status, second.location, second.body)
	}
	if _, sess2 := session("GET", "/v1/auth/session", second.cookie, ""); sess2["session"].(map[string]any)["user_id"] != info["user_id"] {
		t.Fatalf("second login is another user: %v", sess2)
	}
	// Signing out ends the session: no more token exchange.
	if st, _ := session("DELETE", "/v1/auth/session", second.cookie, "wrong"); st != 403 {
		t.Fatalf("sign-out with a wrong CSRF token: %d", st)
	}
	_, sess2 := session("GET", "/v1/auth/session", second.cookie, "")
	if st, _ := session("DELETE", "/v1/auth/session", second.cookie, sess2["session"].(map[string]any)["csrf_token"].(string)); st != 204 {
		t.Fatalf("sign-out: %d", st)
	}
	if st, _ := session("GET", "/v1/auth/session", second.cookie, ""); st != 401 {
		t.Fatalf("session after sign-out: %d", st)
	}
	// A user outside the configured domains is not created.
	form, _ = login("eve", "eve password", "")
	if a := acs(form); a.status != 403 || fmt.Sprint(a.body["error"].(map[string]any)["code"]) != "ACCESS_RESTRICTED" {
		t.Fatalf("user outside the domains: %d %v", a.status, a.body)
	}
	// ... and the refusal is a failed sign-in in the audit log.
	failed, _, err := identity.NewStore(h.store).ListAuditEvents(context.Background(), &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}},
		identity.AuditFilter{EventType: identity.AuditLoginFailed}, models.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(failed, func(ev identity.AuditEvent) bool {
		return ev.AuthenticationMethod == "saml" && strings.HasPrefix(ev.Reason, "ACCESS_RESTRICTED") && strings.Contains(ev.Reason, "eve@")
	}) {
		t.Fatalf("no login.failed audit event for the refused user: %+v", failed)
	}
	// Groups map to roles, the highest wins, and staff roles go only to the
	// provider's own users: ada's "ops" group (mapped to admin) left her a
	// customer of her tenant above.
	for _, c := range []struct{ user, password, role string }{{"pat", "pat password", "agent"}, {"sam", "sam password", "admin"}} {
		form, _ := login(c.user, c.password, "")
		a := acs(form)
		if a.status != 303 || a.cookie == nil {
			t.Fatalf("%s: %d %v", c.user, a.status, a.body)
		}
		if _, got := session("GET", "/v1/auth/session", a.cookie, ""); got["session"].(map[string]any)["role"] != c.role {
			t.Fatalf("%s's role: %v, want %s", c.user, got, c.role)
		}
	}
	// IdP-initiated responses (no InResponseTo) are refused.
	unsolicited := strings.Replace(string(raw), "InResponseTo=", "X-InResponseTo=", 1)
	if a := acs(url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString([]byte(unsolicited))}}); a.status != 401 {
		t.Fatalf("unsolicited response: %d", a.status)
	}

	t.Run("a response is accepted only in the browser that started the sign-in", func(t *testing.T) {
		form, _ := login("ada", "ada password", "")
		other, _ := login("ada", "ada password", "") // the attacker's own, finished sign-in
		for name, jar := range map[string]http.CookieJar{"no cookie": nil, "another sign-in's cookie": jars[other.Get("RelayState")]} {
			if a := acsIn(jar, form); a.status != 401 || a.cookie != nil {
				t.Fatalf("%s: %d %v", name, a.status, a.body)
			}
		}
		if a := acs(form); a.status != 303 || a.cookie == nil { // the refusals did not spend the request
			t.Fatalf("the starting browser after refusals elsewhere: %d %v", a.status, a.body)
		}
	})
	t.Run("a forged response does not spend the request", func(t *testing.T) {
		form, _ := login("ada", "ada password", "")
		raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
		forged := url.Values{"RelayState": {form.Get("RelayState")}, "SAMLResponse": {base64.StdEncoding.EncodeToString(
			bytes.Replace(raw, []byte("<saml:Issuer"), []byte("<saml:Issuer Forged=\"1\""), 1))}}
		if bytes.Equal([]byte(forged.Get("SAMLResponse")), []byte(form.Get("SAMLResponse"))) {
			t.Fatal("the test did not manage to forge the response")
		}
		if a := acs(forged); a.status != 401 {
			t.Fatalf("forged response: %d %v", a.status, a.body)
		}
		if a := acs(form); a.status != 303 || a.cookie == nil {
			t.Fatalf("the real response after a forged one: %d %v", a.status, a.body)
		}
	})
	t.Run("existing users only of the trusted domain's organization, never provider staff", func(t *testing.T) {
		admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
		for _, u := range []identity.UserInput{
			{Email: "boss@sso.example.com", Name: "Provider admin", Role: models.RoleAdmin, OrganizationID: provider.ID},
			{Email: "tina@sso.example.com", Name: "Other tenant", OrganizationID: h.tenants[0].org.ID},
			{Email: "tom@tenant-a.example", Name: "Untrusted domain", OrganizationID: h.tenants[0].org.ID},
		} {
			if _, err := identity.NewStore(h.store).CreateUser(context.Background(), admin, u); err != nil {
				t.Fatal(err)
			}
			name := strings.SplitN(u.Email, "@", 2)[0]
			idp.AddUser(t, testenv.IdPUser{Name: name, Email: u.Email, Password: name + " password", Groups: []string{"ops"}})
			form, _ := login(name, name+" password", "")
			if a := acs(form); a.status != 403 || a.cookie != nil || fmt.Sprint(a.body["error"].(map[string]any)["code"]) != "ACCESS_RESTRICTED" {
				t.Fatalf("%s signed in through the IdP: %d %v", u.Email, a.status, a.body)
			}
		}
	})
}

// TestSAMLMetadataErrorsAreNotAnswered points SAML at an identity provider
// that cannot be reached: the anonymous answer is a generic 503, without
// the address or the network error.
func TestSAMLMetadataErrorsAreNotAnswered(t *testing.T) {
	h := newHarness(t)
	marker := "idp-" + strings.ToLower(models.RandomString(12))
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"SAML_IDP_METADATA_URL": "http://127.0.0.1:1/" + marker}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	for _, path := range []string{"/saml/sso", "/saml/metadata"} {
		res := h.do("GET", path, "", nil)
		res.wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
		if body := string(res.body); strings.Contains(body, marker) || strings.Contains(body, "127.0.0.1") || strings.Contains(body, "refused") {
			t.Fatalf("%s answers the fetch error: %s", path, body)
		}
	}
}
