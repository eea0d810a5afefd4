package portal

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/api/internal/inproc"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// fakeSessions is one signed-in session whose tokens are counted.
type fakeSessions struct {
	mu     sync.Mutex
	now    func() time.Time
	perms  []string
	minted int
}

func (f *fakeSessions) Session(_ context.Context, token string) (*Session, error) {
	if token != "cookie" {
		return nil, models.Errorf(models.CodeUnauthenticated, "no session")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &Session{ID: "ps_test", UserID: "usr_1", OrganizationID: "org_1", Role: "customer", AuthMethod: "password",
		CSRFToken: "csrf-token", ExpiresAt: f.now().Add(8 * time.Hour), Permissions: f.perms}, nil
}

func (f *fakeSessions) AccessToken(_ context.Context, _ *Session, env models.Environment) (string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.minted++
	return fmt.Sprintf("token-%d-%s", f.minted, env), f.now().Add(time.Hour), nil
}

func (f *fakeSessions) Inbox(context.Context, *Session) ([]eventlog.Inbox, error) { return nil, nil }

func (f *fakeSessions) mints() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.minted
}

// apiCall is what the fake API saw of a call.
type apiCall struct {
	path, token, requestID string
}

// portalApp mounts the portal on an app whose /v1 routes record their
// calls and answer an empty object; every request gets a request id as
// the platform's middleware gives it.
func portalApp(t *testing.T, sessions Sessions, now func() time.Time) (*fiber.App, func() []apiCall) {
	t.Helper()
	var mu sync.Mutex
	var calls []apiCall
	app := fiber.New()
	n := 0
	app.Use(inproc.Adopt, func(c *fiber.Ctx) error {
		id := c.Get("X-Request-Id")
		if id == "" {
			mu.Lock()
			n++
			id = fmt.Sprintf("req_%d", n)
			mu.Unlock()
		}
		c.Set("X-Request-Id", id)
		return c.Next()
	})
	app.All("/v1/*", func(c *fiber.Ctx) error {
		mu.Lock()
		calls = append(calls, apiCall{path: c.Path(), token: strings.TrimPrefix(c.Get(fiber.HeaderAuthorization), "Bearer "), requestID: c.Get("X-Request-Id")})
		mu.Unlock()
		return c.JSON(fiber.Map{})
	})
	New(Config{Sessions: sessions, API: inproc.New(app), SessionCookie: "session", Now: now}).Mount(app)
	return app, func() []apiCall {
		mu.Lock()
		defer mu.Unlock()
		out := calls
		calls = nil
		return out
	}
}

// send sends a page request with the session's cookie.
func send(t *testing.T, app *fiber.App, method, path string, form url.Values) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Cookie", "session=cookie")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPageTokenCache: two page loads mint one access token; the test
// environment has its own; a verified second factor, a permission change
// and the token's coming expiry mint a new one; a forgotten session too.
// The API calls carry the browser's request id.
func TestPageTokenCache(t *testing.T) {
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	sessions := &fakeSessions{now: now, perms: []string{"services:read"}}
	app, calls := portalApp(t, sessions, now)

	tokensOf := func(what string, want int) string {
		t.Helper()
		got := calls()
		if len(got) == 0 {
			t.Fatalf("%s: no API call", what)
		}
		for _, c := range got {
			if c.token != got[0].token {
				t.Fatalf("%s: one page, several tokens: %+v", what, got)
			}
		}
		if n := sessions.mints(); n != want {
			t.Fatalf("%s: %d tokens minted, want %d", what, n, want)
		}
		return got[0].token
	}

	res := send(t, app, "GET", "/portal", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d", res.StatusCode)
	}
	got := calls()
	if len(got) == 0 || sessions.mints() != 1 {
		t.Fatalf("first page: calls %+v, %d tokens minted", got, sessions.mints())
	}
	first := got[0].token
	for _, c := range got {
		if c.token != first {
			t.Fatalf("first page's call %+v: want one token", c)
		}
	}
	req := httptest.NewRequest("GET", "/portal", nil)
	req.Header.Set("Cookie", "session=cookie")
	req.Header.Set("X-Request-Id", "req_page")
	if _, err := app.Test(req, -1); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls() {
		if c.token != first || c.requestID != "req_page" {
			t.Fatalf("second page's call %+v: want the cached token %q and the page's request id", c, first)
		}
	}
	if n := sessions.mints(); n != 1 {
		t.Fatalf("two page loads minted %d tokens", n)
	}

	send(t, app, "GET", "/portal?env=test", nil)
	if tok := tokensOf("test environment", 2); tok == first {
		t.Fatal("the test environment used the live token")
	}
	send(t, app, "GET", "/portal", nil)
	tokensOf("live again", 2)

	// A second factor verified in the page: the next page mints.
	res = send(t, app, "POST", "/portal/mfa/verify", url.Values{"csrf_token": {"csrf-token"}, "mfa_challenge": {"mfa_1"},
		"mfa_methods": {"totp"}, "mfa_method": {"totp"}, "mfa_code": {"123456"}, "mfa_action": {"/portal/developers/keys"}})
	if res.StatusCode != http.StatusOK {
		t.Fatalf("verify: %d", res.StatusCode)
	}
	calls()
	send(t, app, "GET", "/portal", nil)
	stepped := tokensOf("after the second factor", 3)
	if stepped == first {
		t.Fatal("the token of before the second factor was reused")
	}

	// Other permissions: another token.
	sessions.mu.Lock()
	sessions.perms = []string{"services:read", "support:read"}
	sessions.mu.Unlock()
	send(t, app, "GET", "/portal", nil)
	tokensOf("new permissions", 4)
	send(t, app, "GET", "/portal", nil)
	tokensOf("new permissions again", 4)

	// Close to its expiry the token is replaced.
	clockMu.Lock()
	clock = clock.Add(time.Hour - tokenRefresh)
	clockMu.Unlock()
	send(t, app, "GET", "/portal", nil)
	tokensOf("near the expiry", 5)

	// The session's end forgets its tokens.
	for _, id := range []string{"ps_other", "ps_test"} {
		p := New(Config{Sessions: sessions, SessionCookie: "session", Now: now})
		p.tokens.tokens[tokenKey{session: id}] = cachedToken{token: "x", expires: now().Add(time.Hour)}
		p.Forget("ps_test")
		if _, kept := p.tokens.tokens[tokenKey{session: id}]; kept != (id == "ps_other") {
			t.Fatalf("Forget(ps_test) kept %s: %v", id, kept)
		}
	}
}
