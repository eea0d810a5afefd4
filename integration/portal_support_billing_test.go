package integration

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/testenv"
)

// TestPortalTicketsAndBilling drives Chromium through the support and
// billing pages after a SAML sign-in: a ticket opened with an attachment,
// a comment with another, both in the conversation; an invoice paid with
// a saved card through the second-factor challenge answered with the code
// e-mailed over SMTP. Every page is screenshot and checked with axe-core
// (no serious or critical violation); one at phone width must not scroll
// sideways.
func TestPortalTicketsAndBilling(t *testing.T) {
	ctx := browser(t)
	idp := testenv.SAMLIdP(t)
	smtpURL, mailbox := testenv.SMTPServer(t)
	p := startPlatform(t, platformOptions{settings: env{"SAML_IDP_METADATA_URL": idp.URL + "/metadata"}, keys: allKeys})
	mailThrough(t, p, smtpURL)
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// Fixtures through the API: a service, its invoice, a saved card.
	serviceID := p.provision()
	var inv struct {
		Invoice struct{ ID, Number string } `json:"invoice"`
	}
	if st := p.do("POST", "/v1/billing/invoices", p.liveKey, map[string]any{"account_id": p.demo.Account.ID, "notes": "Portal test",
		"services": []map[string]any{{"service_id": serviceID, "quantity": 1, "unit_price": 499}}}, &inv); st != http.StatusCreated {
		t.Fatalf("invoice: %d", st)
	}
	var pm struct {
		PaymentMethod struct{ ID string } `json:"payment_method"`
	}
	if st := p.do("POST", "/v1/billing/accounts/"+p.demo.Account.ID+"/payment-methods", p.liveKey, map[string]any{"card_token": "tok_visa", "set_default": true,
		"billing_address": map[string]any{"street": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701", "country": "US"}}, &pm); st != http.StatusCreated {
		t.Fatalf("payment method: %d", st)
	}

	ssoPerson(t, p, idp, testenv.IdPUser{Name: "ada", Email: "ada@demo.example", Password: "ada's password", CommonName: "Ada Lovelace", Groups: []string{"engineering"}})

	step, stop := context.WithTimeout(ctx, 4*time.Minute) // a deadline for a stuck page, not a measure
	defer stop()
	err := chromedp.Do(step,
		chromedp.EmulateViewport(800, 900),
		chromedp.Navigate(p.base+"/portal"),
		chromedp.Click(chromedp.CSS("#sso")),
		chromedp.WaitVisible(chromedp.CSS(`input[name="user"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="user"]`), "ada"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "ada's password"),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
		chromedp.WaitVisible(chromedp.CSS("#user-email")),
	)
	if err != nil {
		t.Fatalf("sign-in in the browser: %v; the browser is at %s", err, pageState(ctx))
	}
	check := func(name string) {
		t.Helper()
		shot, err := chromedp.Run(step, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir, "portal-"+name+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(step, chromedp.Evaluate[bool](axeSource+";true")); err != nil {
			t.Fatalf("load axe-core on %s: %v", name, err)
		}
		found, err := chromedp.Run(step, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(
			r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({id: v.id, impact: v.impact, targets: v.nodes.map(n => n.target.join(' '))}))))`,
			chromedp.EvalAwaitPromise))
		if err != nil || found != "[]" {
			t.Fatalf("axe-core on %s: %v %s", name, err, found)
		}
	}

	// A ticket with an attachment; the knowledge base is offered while typing.
	dir := t.TempDir()
	trace, capture := filepath.Join(dir, "traceroute.txt"), filepath.Join(dir, "capture.txt")
	_ = os.WriteFile(trace, []byte("1 10.0.0.1 1.2 ms\n2 * * *\n"), 0o644)
	_ = os.WriteFile(capture, []byte("cpe: link flap at 09:02\n"), 0o644)
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#nav-tickets")),
		chromedp.WaitVisible(chromedp.CSS("#ticket-list")),
	)
	if err != nil {
		t.Fatalf("tickets: %v; %s", err, pageState(ctx))
	}
	check("tickets-list")
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#new-ticket")),
		chromedp.WaitVisible(chromedp.CSS("#ticket-form")),
		chromedp.SendKeys(chromedp.CSS("#title"), "Packet loss on the Austin circuit"),
		chromedp.SetValue(chromedp.CSS("#category"), "network/connectivity"),
		chromedp.Click(chromedp.CSS(`input[name="priority"][value="high"]`)),
		chromedp.SendKeys(chromedp.CSS("#description"), "About 5% packet loss towards the data centre since 09:00."),
		chromedp.SetUploadFiles(chromedp.CSS("#attachments"), []string{trace}),
	)
	if err != nil {
		t.Fatalf("new ticket: %v; %s", err, pageState(ctx))
	}
	check("tickets-new")
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#ticket-submit")),
		chromedp.WaitVisible(chromedp.CSS("#ticket-number")),
		chromedp.SendKeys(chromedp.CSS("#content"), "A capture from the CPE is attached."),
		chromedp.SetUploadFiles(chromedp.CSS("#comment-attachments"), []string{capture}),
		chromedp.Submit(chromedp.CSS("#content")),
		chromedp.WaitVisible(chromedp.CSS("#comments .files")),
	)
	if err != nil {
		t.Fatalf("ticket and comment: %v; %s", err, pageState(ctx))
	}
	conversation, err := chromedp.Run(step, chromedp.Text(chromedp.CSS("#comments")))
	if err != nil || !strings.Contains(conversation, "A capture from the CPE is attached.") || !strings.Contains(conversation, "capture.txt") {
		t.Fatalf("conversation: %v %q", err, conversation)
	}
	description, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("section[aria-labelledby=h-desc]")))
	if !strings.Contains(description, "traceroute.txt") {
		t.Fatalf("the ticket's attachment is not shown: %q", description)
	}
	check("tickets-ticket")

	// Phone width: the ticket page does not scroll sideways.
	err = chromedp.Do(step, chromedp.EmulateViewport(375, 800, chromedp.EmulateMobile))
	if err == nil {
		var wide bool
		wide, err = chromedp.Run(step, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
		if wide {
			t.Fatal("the ticket page scrolls sideways at phone width")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	check("tickets-phone")
	if err := chromedp.Do(step, chromedp.EmulateViewport(800, 900)); err != nil {
		t.Fatal(err)
	}

	// TOTP enrolled with a token from the page: paying is challenged.
	err = chromedp.Do(step,
		chromedp.Navigate(p.base+"/portal"),
		chromedp.Click(chromedp.CSS("#get-token")),
		chromedp.WaitVisible(chromedp.CSS(`#token[data-status="200"]`)),
	)
	var token string
	if err == nil {
		token, err = chromedp.Run(step, chromedp.Text(chromedp.CSS("#token")))
	}
	if err != nil {
		t.Fatalf("token: %v", err)
	}
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

	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#nav-billing")),
		chromedp.WaitVisible(chromedp.CSS("#invoice-list")),
	)
	if err != nil {
		t.Fatalf("billing: %v; %s", err, pageState(ctx))
	}
	check("billing")
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS(`a[href="/portal/billing/invoices/`+inv.Invoice.ID+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#pay-form")),
	)
	if err != nil {
		t.Fatalf("invoice: %v; %s", err, pageState(ctx))
	}
	check("billing-invoice")
	sent := len(mailbox.Mails())
	err = chromedp.Do(step,
		chromedp.Click(chromedp.CSS("#pay-submit")),
		chromedp.WaitVisible(chromedp.CSS("#mfa-form")),
		chromedp.Click(chromedp.CSS("#mfa-send-email")),
		// The code field is on the page before the send too: wait for
		// the page the send answers with, not for the one it leaves.
		chromedp.WaitVisible(chromedp.CSS("#mfa-sent")),
		chromedp.WaitVisible(chromedp.CSS("#mfa_code")),
	)
	if err != nil {
		t.Fatalf("payment challenge: %v; %s", err, pageState(ctx))
	}
	check("billing-challenge")
	if !mailbox.WaitFor(30*time.Second, func(b *testenv.Mailbox) bool { return len(b.Mails()) > sent }) {
		t.Fatal("no e-mail code reached the SMTP server")
	}
	m := regexp.MustCompile(`code is (\d{6})`).FindStringSubmatch(mailbox.Mails()[sent].Data)
	if m == nil {
		t.Fatalf("e-mail: %+v", mailbox.Mails()[sent])
	}
	err = chromedp.Do(step,
		chromedp.SetValue(chromedp.CSS("#mfa_method"), "email"),
		chromedp.SendKeys(chromedp.CSS("#mfa_code"), m[1]),
		chromedp.Click(chromedp.CSS("#mfa-verify")),
		chromedp.WaitVisible(chromedp.CSS("#notice")),
	)
	if err != nil {
		t.Fatalf("payment after the challenge: %v; %s", err, pageState(ctx))
	}
	notice, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("#notice")))
	status, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("#invoice-status")))
	history, _ := chromedp.Run(step, chromedp.Text(chromedp.CSS("#invoice-payments")))
	if !strings.Contains(notice, "successful") || status != "paid" || !strings.Contains(history, "4242") {
		t.Fatalf("after paying: notice %q, status %q, history %q", notice, status, history)
	}
	check("billing-paid")
	var paid struct {
		Invoice struct{ Status string } `json:"invoice"`
	}
	if st := p.do("GET", "/v1/billing/invoices/"+inv.Invoice.ID, p.liveKey, nil, &paid); st != 200 || paid.Invoice.Status != "paid" {
		t.Fatalf("the API's invoice: %d %+v", st, paid)
	}
}
