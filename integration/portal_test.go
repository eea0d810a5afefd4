package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
	"golang.org/x/oauth2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
)

// browser starts headless Chromium (Debian's package) driven by chromedp.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is missing: .ci/run installs it")
		}
		t.Skip("chromium is not installed (Debian package chromium): the portal test drives a real browser")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser: no timeout on this first call
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// mailThrough has the platform's notifier send its e-mail through the SMTP
// server at smtpURL.
func mailThrough(t *testing.T, p *platform, smtpURL string) {
	t.Helper()
	mailer, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	startNotifier(t, notify.NewDispatcher(p.store, notify.Options{Email: mailer, PollInterval: 100 * time.Millisecond}))
}

// ssoPerson makes the identity provider know the platform (its SAML
// metadata) and the person u, who is also a user of the demo tenant.
func ssoPerson(t *testing.T, p *platform, idp *testenv.IdP, u testenv.IdPUser) {
	t.Helper()
	res, err := http.Get(p.base + "/saml/metadata")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	idp.AddServiceProvider(t, "platform", md)
	idp.AddUser(t, u)
	p.createUser(t, u.Email, u.CommonName)
}

// TestPortalSingleSignOnEndToEnd is a person's whole path through the
// portal with real peers: a browser signs in through a real SAML identity
// provider, lands on the portal with an HttpOnly session, takes an API
// token from the page, enrols TOTP, gets challenged when provisioning,
// receives the e-mail code from a real SMTP server, provisions on the real
// Temporal dev server, and sees the service and the operation in the portal.
func TestPortalSingleSignOnEndToEnd(t *testing.T) {
	ctx := browser(t)
	idp := testenv.SAMLIdP(t)
	smtpURL, mailbox := testenv.SMTPServer(t)
	p := startPlatform(t, platformOptions{settings: env{"SAML_IDP_METADATA_URL": idp.URL + "/metadata"}, keys: allKeys})
	mailThrough(t, p, smtpURL)
	// The IdP knows the platform (its metadata) and a person of the demo tenant.
	ssoPerson(t, p, idp, testenv.IdPUser{Name: "grace", Email: "grace@demo.example", Password: "grace's password", CommonName: "Grace Hopper", Groups: []string{"engineering"}})

	// Sign in: portal -> "Sign in with single sign-on" -> IdP form -> auto-post to the ACS -> portal.
	step, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	err := chromedp.Do(step,
		chromedp.Navigate(p.base+"/portal"),
		chromedp.Click(chromedp.CSS("#sso")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), "grace"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "grace's password"),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS("#user-email")),
	)
	if err != nil {
		t.Fatalf("sign-in in the browser: %v; the browser is at %s", err, pageState(ctx))
	}
	email, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("#user-email")))
	cookies, err := chromedp.Run(step, chromedp.Evaluate[string](`document.cookie`))
	if err != nil {
		t.Fatal(err)
	}
	if email != "grace@demo.example" || strings.Contains(cookies, "platform_session") {
		t.Fatalf("portal shows %q; scripts see cookies %q (the session cookie must be HttpOnly)", email, cookies)
	}

	// The page's button exchanges the session for an API token.
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#get-token")),
		chromedp.WaitVisible(chromedp.CSS(`#token[data-status="200"]`)),
	)
	var token string
	if err == nil {
		token, err = chromedp.Run(step, chromedp.Text(chromedp.CSS("#token")))
	}
	if err != nil || strings.Count(token, ".") != 2 {
		t.Fatalf("token from the portal: %q %v", token, err)
	}

	// With it: enrol TOTP, then provisioning is challenged and the e-mail code arrives by SMTP.
	var setup struct {
		Secret string `json:"secret"`
	}
	if st := p.call(t, "POST", "/v1/auth/mfa/totp/setup", token, nil, nil, &setup); st != 200 {
		t.Fatalf("TOTP setup: %d", st)
	}
	code, _ := totp.GenerateCode(setup.Secret, time.Now())
	if st := p.call(t, "POST", "/v1/auth/mfa/verify", token, map[string]any{"method": "totp", "code": code}, nil, nil); st != 200 {
		t.Fatalf("TOTP confirmation: %d", st)
	}
	order := map[string]any{
		"account_id": p.demo.Account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium", "billing_cycle": "monthly",
		"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"},
	}
	var challenge struct {
		Error       string   `json:"error"`
		ChallengeID string   `json:"challenge_id"`
		Methods     []string `json:"methods"`
	}
	if st := p.call(t, "POST", "/v1/services/connectivity/internet", token, order, nil, &challenge); st != 401 || challenge.Error != "mfa_required" {
		t.Fatalf("provisioning without a second factor: %d %+v", st, challenge)
	}
	if st := p.call(t, "POST", "/v1/auth/mfa/challenges/"+challenge.ChallengeID+"/send", token, map[string]any{"method": "email"}, nil, nil); st != 202 {
		t.Fatalf("send an e-mail code: %d", st)
	}
	if !mailbox.WaitFor(30*time.Second, func(b *testenv.Mailbox) bool { return len(b.Mails()) > 0 }) {
		t.Fatal("no e-mail reached the SMTP server")
	}
	mail := mailbox.Mails()[0]
	m := regexp.MustCompile(`code is (\d{6})`).FindStringSubmatch(mail.Data)
	if mail.To[0] != "grace@demo.example" || m == nil {
		t.Fatalf("e-mail: %+v", mail)
	}
	if st := p.call(t, "POST", "/v1/auth/mfa/verify", token, map[string]any{"challenge_id": challenge.ChallengeID, "method": "email", "code": m[1]}, nil, nil); st != 200 {
		t.Fatalf("verify the e-mail code: %d", st)
	}
	var raw json.RawMessage
	st := p.call(t, "POST", "/v1/services/connectivity/internet", token, order, map[string]string{"X-MFA-Challenge-Id": challenge.ChallengeID}, &raw)
	var acc accepted
	if err := json.Unmarshal(raw, &acc); st != 202 || err != nil {
		t.Fatalf("provisioning after the second factor: %d %s", st, raw)
	}
	op := p.poll(acc.StatusURL, token, func(op *operation) bool { return terminal(op.Status) })
	if op.Status != "completed" {
		t.Fatalf("provisioning ended %s", op.Status)
	}

	// The portal lists the new service and the operation.
	step2, stop2 := context.WithTimeout(ctx, time.Minute)
	defer stop2()
	err = chromedp.Do(step2, chromedp.Navigate(p.base+"/portal"), chromedp.WaitVisible(chromedp.CSS("#services")))
	var services, operations string
	if err == nil {
		services, err = chromedp.Run(step2, chromedp.Text(chromedp.CSS("#services")))
	}
	if err == nil {
		operations, err = chromedp.Run(step2, chromedp.Text(chromedp.CSS("#operations")))
	}
	if err != nil || !strings.Contains(services, acc.ServiceID) || !strings.Contains(services, "operational") || !strings.Contains(operations, acc.RequestID) {
		t.Fatalf("portal after provisioning (%v):\nservices: %s\noperations: %s", err, services, operations)
	}
	// An application asks for access (authorization code + PKCE with the
	// seeded public client, golang.org/x/oauth2 on its side): the signed-in
	// browser approves without a password, the redirect reaches the
	// application's loopback address, and the code becomes a token.
	received := make(chan string, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case received <- r.URL.RawQuery:
		default:
		}
		_, _ = io.WriteString(w, "<p id=done>You can close this window.</p>")
	}))
	defer callback.Close()
	conf := &oauth2.Config{ClientID: seed.DemoClientID, RedirectURL: callback.URL + "/callback", Scopes: []string{"services.read"},
		Endpoint: oauth2.Endpoint{AuthURL: p.base + "/oauth/authorize", TokenURL: p.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	err = chromedp.Do(step2,
		chromedp.Navigate(conf.AuthCodeURL("state-from-the-app", oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(chromedp.CSS("#session-user")),
		chromedp.Click(chromedp.CSS(`button[value="approve"]`)),
		chromedp.WaitVisible(chromedp.CSS("#done")),
	)
	if err != nil {
		t.Fatalf("authorization in the browser: %v; the browser is at %s", err, pageState(ctx))
	}
	query, _ := url.ParseQuery(<-received)
	if query.Get("state") != "state-from-the-app" || query.Get("code") == "" {
		t.Fatalf("redirect to the application: %v", query)
	}
	appToken, err := conf.Exchange(context.Background(), query.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	var me struct {
		Principal struct {
			User struct {
				Email string `json:"email"`
			} `json:"user"`
		} `json:"principal"`
	}
	if st := p.call(t, "GET", "/v1/users/me", appToken.AccessToken, nil, nil, &me); st != 200 || me.Principal.User.Email != "grace@demo.example" {
		t.Fatalf("the application's token: %d %+v", st, me)
	}
	err = chromedp.Do(step2, chromedp.Navigate(p.base+"/portal"), chromedp.WaitVisible(chromedp.CSS("#sign-out")))
	if err != nil {
		t.Fatal(err)
	}

	// Signing out ends the session; the page offers sign-in again.
	err = chromedp.Do(step2, chromedp.Click(chromedp.CSS("#sign-out")), chromedp.WaitVisible(chromedp.CSS("#sso")))
	if err != nil {
		t.Fatalf("sign-out: %v", err)
	}
}

// createUser adds a person of the demo tenant (no password: they sign in through SAML).
func (p *platform) createUser(t *testing.T, email, name string) {
	t.Helper()
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	if _, err := identity.NewStore(p.store).CreateUser(context.Background(), admin, identity.UserInput{Email: email, Name: name, Role: models.RoleCustomer, OrganizationID: p.demo.Demo.ID}); err != nil {
		t.Fatal(err)
	}
}

// call sends a JSON request with a bearer credential and extra headers,
// decoding the answer into out; it returns the status.
func (p *platform) call(t *testing.T, method, path, credential string, body any, headers map[string]string, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, p.base+path, r)
	req.Header.Set("Authorization", "Bearer "+credential)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := p.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// startNotifier runs the notification outbox's dispatcher for the test.
func startNotifier(t *testing.T, d *notify.Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// pageState describes the browser's page for a failure message.
func pageState(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText.slice(0, 2000)`))
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	return state
}
