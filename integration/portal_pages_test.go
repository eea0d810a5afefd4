package integration

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/telcoplatform/platform/testenv"
)

// axeSource is axe-core (npm axe-core, see testdata/axe-core/VERSION), the
// accessibility checker run on every page of the browser test.
//
//go:embed testdata/axe-core/axe.min.js
var axeSource string

// screenshotDir receives the browser test's screenshots (git-ignored).
const screenshotDir = "testdata/screenshots"

// pageCheck screenshots the browser's page as name and runs axe-core on
// it: no serious or critical violation is allowed.
func pageCheck(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, name+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeSource+";true")); err != nil {
		t.Fatalf("load axe-core on %s: %v", name, err)
	}
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
		.filter(v => v.impact === 'serious' || v.impact === 'critical')
		.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target.join(' ')).join(', ')))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core on %s: %v", name, err)
	}
	if len(violations) > 0 {
		t.Fatalf("axe-core on %s:\n%s", name, strings.Join(violations, "\n"))
	}
}

// TestPortalPagesInBrowser is a customer's work in the portal, in
// Chromium, after a SAML sign-in through a real identity provider:
// subscribing a loopback receiver to service events, ordering (catalog,
// availability at an address, quote, provisioning) and following the
// operation live on its page until the service is there, creating an API
// key (shown once) and revoking it, and seeing the webhook's delivery and
// redelivering it. Every page is screenshotted into testdata/screenshots
// and checked with axe-core; the dashboard also at phone width.
func TestPortalPagesInBrowser(t *testing.T) {
	ctx := browser(t)
	idp := testenv.SAMLIdP(t)
	p := startPlatform(t, platformOptions{stepDelay: "400ms", settings: env{"SAML_IDP_METADATA_URL": idp.URL + "/metadata"}})
	receiver := newHookReceiver(t, alwaysOK)
	ssoPerson(t, p, idp, testenv.IdPUser{Name: "ada", Email: "ada@demo.example", Password: "ada's password", CommonName: "Ada Lovelace", Groups: []string{"engineering"}})

	dialogs := acceptDialogs(t, ctx)
	step, stop := context.WithTimeout(ctx, 4*time.Minute) // a deadline for a stuck page, not a measure
	defer stop()
	must := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(step, actions...); err != nil {
			t.Fatalf("%s: %v; the browser is at %s", what, err, pageState(ctx))
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(step, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v; the browser is at %s", sel, err, pageState(ctx))
		}
		return s
	}
	must("sign-in page", chromedp.EmulateViewport(1024, 768), chromedp.Navigate(p.base+"/portal"), chromedp.WaitVisible(chromedp.CSS("#sso")))
	pageCheck(t, step, "signin")
	must("SAML sign-in",
		chromedp.Click(chromedp.CSS("#sso")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), "ada"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "ada's password"),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS("#user-email")),
	)

	// A webhook subscription for service events, to the loopback receiver.
	must("subscribe", chromedp.Navigate(p.base+"/portal/developers"), chromedp.WaitVisible(chromedp.CSS("#create-webhook")),
		chromedp.SendKeys(chromedp.CSS("#wh-url"), receiver.srv.URL+"/hooks"), chromedp.Click(chromedp.CSS("#create-webhook-button")),
		chromedp.WaitVisible(chromedp.CSS("#secret")))
	webhookID := text("#secret-id")
	if !strings.HasPrefix(webhookID, "wh_") || !strings.HasPrefix(text("#secret"), "whsec_") {
		t.Fatalf("webhook secret page: %s", pageState(ctx))
	}

	// Order: catalog, availability, quote, provisioning followed live.
	must("catalog", chromedp.Navigate(p.base+"/portal/order"), chromedp.WaitVisible(chromedp.CSS("#availability-form")))
	pageCheck(t, step, "order")
	must("availability",
		chromedp.SendKeys(chromedp.CSS("#address"), "100 Congress Ave"), chromedp.SendKeys(chromedp.CSS("#city"), "Austin"),
		chromedp.SendKeys(chromedp.CSS("#state"), "TX"), chromedp.SendKeys(chromedp.CSS("#zip"), "78701"),
		chromedp.Click(chromedp.CSS("#check-availability")), chromedp.WaitVisible(chromedp.CSS("#quote-fiber_dedicated")))
	pageCheck(t, step, "availability")
	must("quote", chromedp.Click(chromedp.CSS("#quote-fiber_dedicated")), chromedp.WaitVisible(chromedp.CSS("#provision-0")))
	pageCheck(t, step, "quote")
	must("provision", chromedp.Click(chromedp.CSS("#provision-0")), chromedp.WaitVisible(chromedp.CSS("#op-progress")))
	live, err := chromedp.Run(step, chromedp.Evaluate[bool](`document.getElementById('op-progress').hasAttribute('data-stream')`))
	if err != nil || !live {
		t.Fatalf("the operation page did not open while the operation ran (%v): %s", err, pageState(ctx))
	}
	must("operation completes live", chromedp.WaitVisible(chromedp.CSS(`#op-done[data-status="completed"]`)), chromedp.WaitVisible(chromedp.CSS("#op-service")))
	if v := text("#op-status"); v != "completed" {
		t.Fatalf("operation status on the page: %q", v)
	}
	pageCheck(t, step, "operation")
	must("service page", chromedp.Click(chromedp.CSS("#op-service")), chromedp.WaitVisible(chromedp.CSS("#service-name")), chromedp.WaitVisible(chromedp.CSS("#chart-latency")))
	if v := text("#service-status"); v != "operational" {
		t.Fatalf("service status: %q", v)
	}
	serviceID := text("#service-id")
	pageCheck(t, step, "service")
	must("services", chromedp.Navigate(p.base+"/portal/services"), chromedp.WaitVisible(chromedp.CSS("#services")))
	if !strings.Contains(text("#services"), serviceID) {
		t.Fatalf("services list lacks %s", serviceID)
	}
	pageCheck(t, step, "services")
	must("operations", chromedp.Navigate(p.base+"/portal/operations"), chromedp.WaitVisible(chromedp.CSS("#operations")))
	pageCheck(t, step, "operations")

	// An API key: created with a permission, shown once, working, revoked.
	must("create a key", chromedp.Navigate(p.base+"/portal/developers"), chromedp.WaitVisible(chromedp.CSS("#create-key")),
		chromedp.SendKeys(chromedp.CSS("#key-name"), "ci"), chromedp.Click(chromedp.CSS(`input[name="permissions"][value="services:read"]`)),
		chromedp.Click(chromedp.CSS("#create-key-button")), chromedp.WaitVisible(chromedp.CSS("#secret")))
	key, keyID := text("#secret"), text("#secret-id")
	if !strings.HasPrefix(key, "sk_live_") {
		t.Fatalf("key page: %s", pageState(ctx))
	}
	pageCheck(t, step, "key-created")
	if st := p.call(t, "GET", "/v1/services", key, nil, nil, nil); st != 200 {
		t.Fatalf("the new key: %d", st)
	}
	must("revoke the key", chromedp.Navigate(p.base+"/portal/developers"), chromedp.WaitVisible(chromedp.CSS("#api-keys")))
	if strings.Contains(text("main"), key) {
		t.Fatal("the developers page shows the key's secret again")
	}
	pageCheck(t, step, "developers")
	must("revoke the key", chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-key=%q] button.revoke`, keyID))), chromedp.WaitVisible(chromedp.CSS("#message")))
	if asked := dialogs(); len(asked) != 1 || !strings.HasPrefix(asked[0], "Revoke this key?") {
		t.Fatalf("the revocation's confirmation: %q", asked)
	}
	if st := p.call(t, "GET", "/v1/services", key, nil, nil, nil); st != 401 {
		t.Fatalf("the revoked key: %d", st)
	}

	// The webhook's deliveries of the provisioning, and a redelivery.
	deadline := time.Now().Add(30 * time.Second)
	for {
		must("deliveries", chromedp.Navigate(p.base+"/portal/developers/webhooks/"+webhookID), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
		if strings.Contains(text("#deliveries"), "succeeded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery succeeded: %s", pageState(ctx))
		}
		time.Sleep(300 * time.Millisecond)
	}
	pageCheck(t, step, "webhook")
	before := receiver.total()
	must("redeliver", chromedp.Click(chromedp.CSS("button.redeliver")), chromedp.WaitVisible(chromedp.CSS("#message")))
	for receiver.total() == before {
		if time.Now().After(deadline.Add(15 * time.Second)) {
			t.Fatal("the redelivery did not reach the receiver")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for !strings.Contains(text("#deliveries"), "redelivery") {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("the delivery log lacks the redelivery: %s", pageState(ctx))
		}
		must("deliveries", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	}
	receiver.checkValid(t)

	must("dashboard", chromedp.Navigate(p.base+"/portal"), chromedp.WaitVisible(chromedp.CSS("#services")))
	if !strings.Contains(text("#services"), serviceID) {
		t.Fatalf("dashboard lacks %s", serviceID)
	}
	pageCheck(t, step, "dashboard")

	// The dashboard at phone width: nothing wider than the screen.
	must("phone width", chromedp.EmulateViewport(390, 844), chromedp.Navigate(p.base+"/portal"), chromedp.WaitVisible(chromedp.CSS("#services")))
	width, err := chromedp.Run(step, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil || width > 390 {
		t.Fatalf("the dashboard at 390 px is %d px wide (%v)", width, err)
	}
	pageCheck(t, step, "dashboard-phone")
}

// acceptDialogs accepts every JavaScript dialog the browser's page opens
// (the portal's confirmations) and returns a function that gives the
// messages of those opened since its last call.
func acceptDialogs(t *testing.T, ctx context.Context) func() []string {
	var mu sync.Mutex
	var asked []string
	err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			mu.Lock()
			asked = append(asked, d.Message)
			mu.Unlock()
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := asked
		asked = nil
		return out
	}
}
