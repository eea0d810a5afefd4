package api_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/api/portal"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models/identity"
)

// portalUser creates a customer of tenant i with a password (and the
// permissions given, nil for the role's) and signs them in to the portal.
func portalUser(t *testing.T, h *harness, i int, email string, perms []string) (*browserish, string) {
	t.Helper()
	return portalUserOf(t, h, h.tenants[i].org.ID, email, "customer", perms)
}

var inlineScript = regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]+</script>|\sstyle="|<style`)

// TestPortalPages walks the portal's pages as a customer: the dashboard
// under the strict CSP (no inline script or style), the embedded assets,
// a service page with its server-drawn charts, another tenant's service
// (the 404 page), the order flow up to a quote, an API key created (its
// secret shown once) and revoked, and a form without the session's CSRF
// token refused.
func TestPortalPages(t *testing.T) {
	h := newHarness(t)
	_, mine := provisionedFixture(t, h, h.tenants[0])
	_, theirs := provisionedFixture(t, h, h.tenants[1])
	b, csrf := portalUser(t, h, 0, "pat@tenant-a.example", nil)

	res, page := b.send("GET", "/portal", nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") != portal.CSP || strings.Contains(res.Header.Get("Content-Security-Policy"), "unsafe-inline") {
		t.Fatalf("dashboard: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	if inlineScript.MatchString(page) || !strings.Contains(page, mine) || strings.Contains(page, theirs) || strings.Contains(page, "no value") {
		t.Fatalf("dashboard page:\n%s", page)
	}
	for _, id := range []string{`id="nav-services"`, `id="nav-order"`, `id="nav-developers"`, `id="get-token"`, `id="operations"`} {
		if !strings.Contains(page, id) {
			t.Fatalf("dashboard lacks %s", id)
		}
	}
	for path, typ := range map[string]string{"/portal/static/portal.js": "javascript", "/portal/static/portal.css": "text/css"} {
		if res, body := b.send("GET", path, nil); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), typ) || len(body) < 100 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}

	res, page = b.send("GET", "/portal/services/"+mine+"?period=7d", nil)
	if res.StatusCode != 200 || !strings.Contains(page, `id="chart-latency"`) || !strings.Contains(page, "<svg") || !strings.Contains(page, `id="actions"`) || inlineScript.MatchString(page) {
		t.Fatalf("service page: %d\n%s", res.StatusCode, page)
	}
	if res, page := b.send("GET", "/portal/services/"+theirs, nil); res.StatusCode != 404 || !strings.Contains(page, `id="error-heading"`) || strings.Contains(page, theirs+"</code>") {
		t.Fatalf("another tenant's service: %d\n%s", res.StatusCode, page)
	}
	if res, page := b.send("GET", "/portal/services?status=operational&search=Fiber", nil); res.StatusCode != 200 || !strings.Contains(page, mine) {
		t.Fatalf("services list: %d", res.StatusCode)
	}

	// The order flow up to the quote.
	res, page = b.send("POST", "/portal/order/availability", url.Values{"csrf_token": {csrf}, "address": {"100 Congress Ave"}, "city": {"Austin"}, "state": {"TX"}, "zip": {"78701"}})
	if res.StatusCode != 200 || !strings.Contains(page, "loc_austin_congress") || !strings.Contains(page, `id="quote-fiber_dedicated"`) {
		t.Fatalf("availability: %d\n%s", res.StatusCode, page)
	}
	res, page = b.send("POST", "/portal/order/availability", url.Values{"csrf_token": {csrf}, "address": {"1 Nowhere Rd"}, "city": {"Nome"}, "state": {"AK"}, "zip": {"99762"}})
	if res.StatusCode != 200 || !strings.Contains(page, `id="availability-refusal"`) {
		t.Fatalf("availability outside the service area: %d\n%s", res.StatusCode, page)
	}
	res, _ = b.send("POST", "/portal/order/quote", url.Values{"csrf_token": {csrf}, "service": {"internet-fiber-dedicated"}, "location_id": {"loc_austin_congress"}, "bandwidth": {"1gbps"}, "sla": {"premium"}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/portal/order/quotes/quo_") {
		t.Fatalf("quote: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, page := b.send("GET", res.Header.Get("Location"), nil); res.StatusCode != 200 || !strings.Contains(page, `id="provision-0"`) {
		t.Fatalf("quote page: %d\n%s", res.StatusCode, page)
	}

	// CSRF: a form without the session's token is refused, and creates nothing.
	if res, _ := b.send("POST", "/portal/developers/keys", url.Values{"name": {"forged"}, "permissions": {"services:read"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("key form without CSRF token: %d", res.StatusCode)
	}
	// The wrong token differs from the right one in its first character
	// (whatever that character is).
	wrong := "x" + csrf[1:]
	if csrf[0] == 'x' {
		wrong = "y" + csrf[1:]
	}
	if res, _ := b.send("POST", "/portal/developers/keys", url.Values{"csrf_token": {wrong}, "name": {"forged"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("key form with a wrong CSRF token: %d", res.StatusCode)
	}
	res, page = b.send("POST", "/portal/developers/keys", url.Values{"csrf_token": {csrf}, "name": {"ci"}, "permissions": {"services:read"}})
	secret := regexp.MustCompile(`sk_live_[A-Za-z0-9]+`).FindString(page)
	keyID := regexp.MustCompile(`id="secret-id">(ak_[A-Za-z0-9]+)<`).FindStringSubmatch(page)
	if res.StatusCode != http.StatusCreated || secret == "" || keyID == nil {
		t.Fatalf("create key: %d\n%s", res.StatusCode, page)
	}
	h.do("GET", "/v1/services", secret, nil).decode(200, nil) // the key works, with what it was given
	if _, page := b.send("GET", "/portal/developers", nil); strings.Contains(page, secret) || strings.Count(page, "forged") > 0 {
		t.Fatalf("developers page shows the secret again or a forged key")
	}
	if res, _ := b.send("POST", "/portal/developers/keys/"+keyID[1]+"/revoke", url.Values{"csrf_token": {csrf}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if r := h.do("GET", "/v1/services", secret, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("revoked key still works: %d", r.status)
	}
}

// TestPortalPermissions signs in a customer whose sessions carry
// services:read only: the navigation offers neither ordering nor the
// developers' area, the service page shows no actions, and the actions
// themselves are refused by the API (the portal's 403 page).
func TestPortalPermissions(t *testing.T) {
	h := newHarness(t)
	_, mine := provisionedFixture(t, h, h.tenants[0])
	b, csrf := portalUser(t, h, 0, "reader@tenant-a.example", []string{"services:read"})
	_, page := b.send("GET", "/portal", nil)
	if !strings.Contains(page, `id="nav-services"`) || strings.Contains(page, `id="nav-order"`) || strings.Contains(page, `id="nav-developers"`) {
		t.Fatalf("read-only navigation:\n%s", page)
	}
	if res, page := b.send("GET", "/portal/services/"+mine, nil); res.StatusCode != 200 || strings.Contains(page, `id="actions"`) {
		t.Fatalf("read-only service page: %d", res.StatusCode)
	}
	if res, page := b.send("POST", "/portal/services/"+mine+"/decommission", url.Values{"csrf_token": {csrf}, "reason": {"test"}}); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
		t.Fatalf("read-only decommission: %d\n%s", res.StatusCode, page)
	}
	if res, _ := b.send("POST", "/portal/developers/keys", url.Values{"csrf_token": {csrf}, "name": {"k"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("read-only key creation: %d", res.StatusCode)
	}
	if res, _ := b.send("GET", "/portal/developers", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("read-only developers page: %d", res.StatusCode)
	}
	// Signed out, a page is the sign-in form.
	delete(b.cookies, "platform_session")
	if res, page := b.send("GET", "/portal/services", nil); res.StatusCode != 200 || !strings.Contains(page, `action="/portal/login"`) {
		t.Fatalf("signed-out page: %d", res.StatusCode)
	}
}

// formFields reads the named inputs of the form with id in page.
func formFields(t *testing.T, page, id string) url.Values {
	t.Helper()
	start := strings.Index(page, `id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no form %s in:\n%s", id, page)
	}
	form := page[start:]
	form = form[:strings.Index(form, "</form>")]
	out := url.Values{}
	for _, m := range regexp.MustCompile(`<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"`).FindAllStringSubmatch(form, -1) {
		out.Add(m[1], html.UnescapeString(m[2]))
	}
	return out
}

// TestPortalSecondFactor creates an API key from the portal as a user
// with TOTP enrolled: the API's mfa_required becomes the challenge form in
// the page, carrying the form's fields; a wrong code is refused there; the
// right one leads to the continue form, whose post creates the key.
func TestPortalSecondFactor(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	b, csrf := portalUser(t, h, 0, "ines@tenant-a.example", nil)
	var me struct {
		Users []identity.User `json:"users"`
	}
	h.do("GET", "/v1/users?email=ines@tenant-a.example", h.adminKey, nil).decode(http.StatusOK, &me)
	var u *identity.User
	for i := range me.Users {
		if me.Users[i].Email == "ines@tenant-a.example" {
			u = &me.Users[i]
		}
	}
	if u == nil {
		t.Fatalf("user not found: %+v", me)
	}
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"auth:manage"}, AuthMethod: "password"}).Token
	var setup struct {
		Secret string `json:"secret"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).decode(http.StatusOK, &setup)
	code, _ := totp.GenerateCode(setup.Secret, clock)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": code}).decode(http.StatusOK, nil)
	clock = clock.Add(30 * time.Second) // a fresh code for the challenge

	res, page := b.send("POST", "/portal/developers/keys", url.Values{"csrf_token": {csrf}, "name": {"with mfa"}, "permissions": {"services:read"}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `id="mfa-form"`) {
		t.Fatalf("challenged action: %d\n%s", res.StatusCode, page)
	}
	fields := formFields(t, page, "mfa-form")
	if fields.Get("f.name") != "with mfa" || fields.Get("f.permissions") != "services:read" || fields.Get("mfa_action") != "/portal/developers/keys" || !strings.HasPrefix(fields.Get("mfa_challenge"), "mfa_") {
		t.Fatalf("challenge form fields: %v", fields)
	}
	fields.Set("mfa_method", "totp")
	fields.Set("mfa_code", "000000")
	if res, page := b.send("POST", "/portal/mfa/verify", fields); res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `role="alert"`) {
		t.Fatalf("wrong code: %d", res.StatusCode)
	}
	code, _ = totp.GenerateCode(setup.Secret, clock)
	fields.Set("mfa_code", code)
	res, page = b.send("POST", "/portal/mfa/verify", fields)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="mfa-continue"`) {
		t.Fatalf("verified: %d\n%s", res.StatusCode, page)
	}
	again := formFields(t, page, "mfa-continue")
	if again.Get("mfa_challenge_id") != fields.Get("mfa_challenge") || again.Get("name") != "with mfa" {
		t.Fatalf("continue form: %v", again)
	}
	res, page = b.send("POST", "/portal/developers/keys", again)
	if res.StatusCode != http.StatusCreated || !regexp.MustCompile(`sk_live_[A-Za-z0-9]+`).MatchString(page) {
		t.Fatalf("the action after the second factor: %d\n%s", res.StatusCode, page)
	}
}
