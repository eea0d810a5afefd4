package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// browserish sends a request through the app with cookies, like a browser
// that does not follow redirects.
type browserish struct {
	t       *testing.T
	h       *harness
	cookies map[string]string
}

func (b *browserish) send(method, path string, form url.Values, headers ...string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	res, err := b.h.srv.App.Test(req, -1)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.keep(res)
}

// keep keeps the cookies res sets, as a browser does, and returns res
// with its body read.
func (b *browserish) keep(res *http.Response) (*http.Response, string) {
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(b.cookies, c.Name)
			continue
		}
		b.cookies[c.Name] = c.Value
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(raw)
}

var hiddenCSRF = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// TestPortalPasswordSignIn signs in to the portal with a password, checks
// the page and its CSRF protections, the restrictions that bind the user
// (an IP allow-list that excludes the caller ends page views and token
// exchange), and sign-out.
func TestPortalPasswordSignIn(t *testing.T) {
	h := newHarness(t)
	var created struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "lin@tenant-a.example", "name": "Lin", "role": "customer",
		"organization_id": h.tenants[0].org.ID, "password": "correct horse battery"}).decode(201, &created)
	b := &browserish{t: t, h: h, cookies: map[string]string{}}

	res, page := b.send("GET", "/portal", nil)
	if res.StatusCode != 200 || !strings.Contains(page, `action="/portal/login"`) || strings.Contains(page, `id="sso"`) {
		t.Fatalf("sign-in page: %d %s", res.StatusCode, page)
	}
	if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("sign-in page headers: %v", res.Header)
	}
	csrf := hiddenCSRF.FindStringSubmatch(page)[1]
	// A form without the cookie's token is refused; a wrong password too.
	if res, _ := b.send("POST", "/portal/login", url.Values{"csrf_token": {"forged"}, "email": {"lin@tenant-a.example"}, "password": {"correct horse battery"}}); res.StatusCode != 403 {
		t.Fatalf("forged sign-in form: %d", res.StatusCode)
	}
	if res, page := b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {"lin@tenant-a.example"}, "password": {"wrong"}}); res.StatusCode != 401 || !strings.Contains(page, "wrong") {
		t.Fatalf("wrong password: %d", res.StatusCode)
	}
	res, _ = b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {"lin@tenant-a.example"}, "password": {"correct horse battery"}, "next": {"https://evil.example/"}})
	if res.StatusCode != 303 || res.Header.Get("Location") != "/portal" || b.cookies["platform_session"] == "" {
		t.Fatalf("sign-in: %d to %q, cookies %v", res.StatusCode, res.Header.Get("Location"), b.cookies)
	}
	res, page = b.send("GET", "/portal", nil)
	if res.StatusCode != 200 || !strings.Contains(page, "lin@tenant-a.example") || !strings.Contains(page, h.tenants[0].org.ID) || !strings.Contains(page, `id="get-token"`) {
		t.Fatalf("portal page: %d %s", res.StatusCode, page)
	}
	session := hiddenCSRF.FindStringSubmatch(page)[1] // the sign-out form's token is the session's
	if res, body := b.send("POST", "/v1/auth/session/token", nil, "X-CSRF-Token", session); res.StatusCode != 200 || !strings.Contains(body, `"access_token"`) {
		t.Fatalf("token exchange: %d %s", res.StatusCode, body)
	}
	// The sandbox view's button asks for a sandbox token: it sees the
	// tenant's sandbox, not live.
	if _, page := b.send("GET", "/portal?env=test", nil); !strings.Contains(page, `id="get-token" type="button" data-env="test"`) {
		t.Fatalf("the sandbox view's token button: %s", page)
	}
	if res, _ := b.send("POST", "/v1/auth/session/token?env=staging", nil, "X-CSRF-Token", session); res.StatusCode != 400 {
		t.Fatalf("token exchange for an unknown environment: %d", res.StatusCode)
	}
	for env, want := range map[string]string{"test": "test", "live": "live", "": "live"} {
		path := "/v1/auth/session/token"
		if env != "" {
			path += "?env=" + env
		}
		_, body := b.send("POST", path, nil, "X-CSRF-Token", session)
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.Unmarshal([]byte(body), &tok)
		var me struct {
			Principal struct {
				Environment string `json:"environment"`
			} `json:"principal"`
		}
		h.do("GET", "/v1/users/me", tok.AccessToken, nil).decode(200, &me)
		if me.Principal.Environment != want {
			t.Fatalf("token of env %q acts in %q, want %q", env, me.Principal.Environment, want)
		}
	}

	// An allow-list that excludes the caller binds the portal too.
	h.do("PATCH", "/v1/users/"+created.User.ID, h.adminKey, map[string]any{"ip_allowlist": []string{"203.0.113.0/24"}}).decode(200, nil)
	if res, page := b.send("GET", "/portal", nil); res.StatusCode != 403 || !strings.Contains(page, "not allowed") {
		t.Fatalf("portal outside the allow-list: %d", res.StatusCode)
	}
	if res, body := b.send("POST", "/v1/auth/session/token", nil, "X-CSRF-Token", session); res.StatusCode != 403 || !strings.Contains(body, string(models.CodeIPNotAllowed)) {
		t.Fatalf("token exchange outside the allow-list: %d %s", res.StatusCode, body)
	}
	h.do("PATCH", "/v1/users/"+created.User.ID, h.adminKey, map[string]any{"ip_allowlist": []string{}}).decode(200, nil)

	// Sign-out needs the session's token, ends the session and clears the cookie.
	if res, page := b.send("POST", "/portal/logout", url.Values{"csrf_token": {"forged"}}); res.StatusCode != 403 ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(page, "not from your session") {
		t.Fatalf("forged sign-out: %d %s, want the portal's 403 page", res.StatusCode, res.Header.Get("Content-Type"))
	}
	token := b.cookies["platform_session"]
	if res, _ := b.send("POST", "/portal/logout", url.Values{"csrf_token": {session}}); res.StatusCode != 303 || b.cookies["platform_session"] != "" {
		t.Fatalf("sign-out: %d, cookies %v", res.StatusCode, b.cookies)
	}
	b.cookies["platform_session"] = token // a kept copy of the cookie is dead too
	if res, _ := b.send("GET", "/v1/auth/session", nil); res.StatusCode != 401 {
		t.Fatalf("session after sign-out: %d", res.StatusCode)
	}
}
