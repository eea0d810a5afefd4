package api_test

import (
	"bytes"
	"compress/zlib"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/api/portal"
	"github.com/telcoplatform/platform/models/identity"
)

// portalUserOf creates a user with a password (role and, when given, a
// narrower permission list) and signs it in to the portal; it returns the
// browser and the session's CSRF token.
func portalUserOf(t *testing.T, h *harness, orgID, email, role string, perms []string) (*browserish, string) {
	t.Helper()
	body := map[string]any{"email": email, "name": "User " + email, "role": role, "organization_id": orgID, "password": "correct horse battery"}
	if perms != nil {
		body["permissions"] = perms
	}
	h.do("POST", "/v1/users", h.adminKey, body).decode(201, nil)
	b := &browserish{t: t, h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/portal", nil)
	csrf := hiddenCSRF.FindStringSubmatch(page)[1]
	if res, _ := b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {email}, "password": {"correct horse battery"}}); res.StatusCode != 303 {
		t.Fatalf("sign-in of %s: %d", email, res.StatusCode)
	}
	_, page = b.send("GET", "/portal", nil)
	m := hiddenCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no session for %s: %s", email, page)
	}
	return b, m[1]
}

// upload is a file of a multipart form.
type upload struct{ field, name, contentType, content string }

// sendMultipart posts a multipart form with files, like a browser.
func (b *browserish) sendMultipart(path string, fields map[string]string, files ...upload) (*http.Response, string) {
	b.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	for _, f := range files {
		hdr := textproto.MIMEHeader{}
		hdr.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.name+`"`)
		hdr.Set("Content-Type", f.contentType)
		part, _ := w.CreatePart(hdr)
		_, _ = part.Write([]byte(f.content))
	}
	_ = w.Close()
	req, _ := http.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	res, err := b.h.srv.App.Test(req, -1)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.keep(res)
}

var (
	ticketLink     = regexp.MustCompile(`/portal/tickets/(tkt_[A-Za-z0-9]+)`)
	attachmentLink = regexp.MustCompile(`/portal/tickets/attachments/(att_[A-Za-z0-9]+)">([^<]+)<`)
)

// TestPortalTickets opens a ticket with an attachment through the portal,
// comments with another, reads the conversation and downloads the files;
// checks the CSRF refusal, the knowledge-base suggestions, another
// organization's 404, an agent's view across organizations and the
// navigation by permission.
func TestPortalTickets(t *testing.T) {
	h := newHarness(t)
	lin, csrf := portalUserOf(t, h, h.tenants[0].org.ID, "lin@tenant-a.example", "customer", nil)

	res, page := lin.send("GET", "/portal/tickets/new", nil)
	if res.StatusCode != 200 || !strings.Contains(page, `id="nav-tickets"`) || !strings.Contains(page, `enctype="multipart/form-data"`) ||
		!strings.Contains(page, `value="network/connectivity"`) || !strings.Contains(page, `src="/portal/static/tickets.js"`) {
		t.Fatalf("new-ticket form: %d %s", res.StatusCode, page)
	}
	fields := map[string]string{"title": "Packet loss on the NYC circuit", "description": "About 5% loss since 09:00.", "category": "network/connectivity", "priority": "high"}
	// Without the session's token the form is refused, and nothing is opened.
	if res, _ := lin.sendMultipart("/portal/tickets", fields, upload{"attachments", "trace.txt", "text/plain", "hop 1"}); res.StatusCode != 403 {
		t.Fatalf("ticket form without CSRF token: %d", res.StatusCode)
	}
	var none struct {
		Tickets []any `json:"tickets"`
	}
	h.do("GET", "/v1/support/tickets", h.tenants[0].liveKey, nil).decode(200, &none)
	if len(none.Tickets) != 0 {
		t.Fatalf("a refused form opened a ticket: %v", none.Tickets)
	}
	// A file type the API refuses comes back as the form with its message and the typed values.
	fields["csrf_token"] = csrf
	res, page = lin.sendMultipart("/portal/tickets", fields, upload{"attachments", "tool.exe", "application/x-msdownload", "MZ"})
	if res.StatusCode != 400 || !strings.Contains(page, `id="form-error"`) || !strings.Contains(page, "content_type") || !strings.Contains(page, "Packet loss on the NYC circuit") {
		t.Fatalf("refused attachment: %d %s", res.StatusCode, page)
	}
	res, _ = lin.sendMultipart("/portal/tickets", fields, upload{"attachments", "trace.txt", "text/plain", "hop 1 10.0.0.1 2ms"})
	loc := res.Header.Get("Location")
	if res.StatusCode != 303 || !ticketLink.MatchString(loc) {
		t.Fatalf("open a ticket: %d to %q", res.StatusCode, loc)
	}
	ticketID := ticketLink.FindStringSubmatch(loc)[1]
	res, page = lin.send("GET", loc, nil)
	if res.StatusCode != 200 || !strings.Contains(page, "opened.") || !strings.Contains(page, "Packet loss on the NYC circuit") || !strings.Contains(page, `id="sla-response"`) ||
		!strings.Contains(page, `class="countdown"`) || !strings.Contains(page, "trace.txt") || !strings.Contains(page, `id="comment-form"`) {
		t.Fatalf("ticket page: %d %s", res.StatusCode, page)
	}
	// A comment with an attachment joins the conversation.
	res, _ = lin.sendMultipart("/portal/tickets/"+ticketID+"/comments", map[string]string{"csrf_token": csrf, "content": "Here is a capture from the CPE."},
		upload{"attachments", "capture.log", "text/plain", "cpe log line"})
	if res.StatusCode != 303 {
		t.Fatalf("comment: %d", res.StatusCode)
	}
	_, page = lin.send("GET", "/portal/tickets/"+ticketID, nil)
	conv := page[strings.Index(page, `id="comments"`):]
	if !strings.Contains(conv, "Here is a capture from the CPE.") || !strings.Contains(conv, "capture.log") {
		t.Fatalf("conversation: %s", conv)
	}
	files := map[string]string{}
	for _, m := range attachmentLink.FindAllStringSubmatch(page, -1) {
		files[m[2]] = m[1]
	}
	res, body := lin.send("GET", "/portal/tickets/attachments/"+files["capture.log"], nil)
	if res.StatusCode != 200 || body != "cpe log line" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("attachment download: %d %q %v", res.StatusCode, body, res.Header)
	}
	// A customer's escalation raises the priority to critical.
	if res, _ := lin.send("POST", "/portal/tickets/"+ticketID+"/escalate", url.Values{"csrf_token": {csrf}, "reason": {"The whole office is down"}}); res.StatusCode != 303 {
		t.Fatalf("escalate: %d", res.StatusCode)
	}
	if _, page := lin.send("GET", "/portal/tickets/"+ticketID, nil); !strings.Contains(page, `id="ticket-priority">critical<`) {
		t.Fatalf("escalated ticket: %s", page)
	}

	// The knowledge base is offered while typing (the portal's JSON).
	newArticle(t, h, map[string]any{"title": "Diagnosing packet loss", "body": "Run a traceroute and attach it.", "category": "network", "status": "published"})
	res, body = lin.send("GET", "/portal/tickets/knowledge?q=packet+loss", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `"title":"Diagnosing packet loss"`) || !strings.Contains(body, `"url":"/portal/tickets/knowledge/`) {
		t.Fatalf("knowledge search: %d %s", res.StatusCode, body)
	}

	// Another organization's customer sees neither the ticket nor its files.
	bo, _ := portalUserOf(t, h, h.tenants[1].org.ID, "bo@tenant-b.example", "customer", nil)
	if res, page := bo.send("GET", "/portal/tickets/"+ticketID, nil); res.StatusCode != 404 || !strings.Contains(page, `id="error-message"`) {
		t.Fatalf("another organization's ticket: %d", res.StatusCode)
	}
	if res, _ := bo.send("GET", "/portal/tickets/attachments/"+files["trace.txt"], nil); res.StatusCode != 404 {
		t.Fatalf("another organization's attachment: %d", res.StatusCode)
	}
	if _, page := bo.send("GET", "/portal/tickets", nil); strings.Contains(page, ticketID) || !strings.Contains(page, "0 tickets") {
		t.Fatalf("another organization's list shows the ticket: %s", page)
	}
	bobTicket := map[string]any{"title": "Voice quality", "description": "Echo on calls.", "category": "voice"}
	h.do("POST", "/v1/support/tickets", h.tenants[1].liveKey, bobTicket).decode(201, nil)

	// An agent of the provider sees both organizations' tickets, with their customers.
	prov, err := identity.NewStore(h.store).EnsureProviderOrganization(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := portalUserOf(t, h, prov.ID, "alex@provider.example", "agent", nil)
	res, page = agent.send("GET", "/portal/tickets", nil)
	if res.StatusCode != 200 || !strings.Contains(page, ticketID) || !strings.Contains(page, "Voice quality") || !strings.Contains(page, "across every organization") {
		t.Fatalf("agent's list: %d %s", res.StatusCode, page)
	}
	if res, page := agent.send("GET", "/portal/tickets/"+ticketID, nil); res.StatusCode != 200 || !strings.Contains(page, `id="level"`) || !strings.Contains(page, "Internal note") {
		t.Fatalf("agent's ticket page: %d %s", res.StatusCode, page)
	}

	// Navigation follows the session's permissions; the API refuses the rest.
	sam, _ := portalUserOf(t, h, h.tenants[0].org.ID, "sam@tenant-a.example", "customer", []string{"support:read", "support:create"})
	_, page = sam.send("GET", "/portal/tickets", nil)
	if !strings.Contains(page, `id="nav-tickets"`) || strings.Contains(page, `id="nav-billing"`) || !strings.Contains(page, ticketID) {
		t.Fatalf("navigation without billing:read: %s", page)
	}
	if res, _ := sam.send("GET", "/portal/billing", nil); res.StatusCode != 403 {
		t.Fatalf("billing without billing:read: %d", res.StatusCode)
	}
}

// TestPortalBilling reads an invoice with its lines, as a PDF and as a
// print page, pays it with a saved card through the second-factor
// challenge in the page, and checks the payment history, the charts,
// CSRF and another organization's 404.
func TestPortalBilling(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	a := h.tenants[0]
	inv := newInvoice(t, h, a, mustService(t, h, a), 2, 1234.5)
	var pm struct {
		PaymentMethod struct{ ID string } `json:"payment_method"`
	}
	h.do("POST", "/v1/billing/accounts/"+a.account.ID+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_visa", "billing_address": austinPostal, "set_default": true}).decode(201, &pm)
	h.do("POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 5000, "period": "monthly", "thresholds": []int{50, 80, 100}}).decode(201, nil)

	lin, csrf := portalUserOf(t, h, a.org.ID, "lin@tenant-a.example", "customer", nil)
	res, page := lin.send("GET", "/portal/billing", nil)
	if res.StatusCode != 200 || !strings.Contains(page, inv.Number) || !strings.Contains(page, `id="cost-chart"`) || !strings.Contains(page, `id="usage-chart"`) ||
		!strings.Contains(page, `<rect class="bar"`) || !strings.Contains(page, `id="budget-list"`) || !strings.Contains(page, "2,469.00 USD") {
		t.Fatalf("billing page: %d %s", res.StatusCode, page)
	}
	res, page = lin.send("GET", "/portal/billing/invoices/"+inv.ID, nil)
	if res.StatusCode != 200 || !strings.Contains(page, "Dedicated Fiber Internet") || !strings.Contains(page, "1,234.50 USD") || !strings.Contains(page, `value="`+pm.PaymentMethod.ID+`"`) {
		t.Fatalf("invoice page: %d %s", res.StatusCode, page)
	}

	// The PDF: a PDF document whose (deflated) page holds the number and the total.
	res, body := lin.send("GET", "/portal/billing/invoices/"+inv.ID+".pdf", nil)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(body, "%PDF-") {
		t.Fatalf("invoice PDF: %d %q", res.StatusCode, body[:min(len(body), 40)])
	}
	text := pdfText(t, body)
	if !strings.Contains(text, "(Invoice "+inv.Number+")") || !strings.Contains(text, "(2,469.00 USD)") || !strings.Contains(text, "(1,234.50 USD)") {
		t.Fatalf("the PDF's page does not show the invoice: %s", text)
	}
	res, body = lin.send("GET", "/portal/billing/invoices/"+inv.ID+".html?download=1", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `id="invoice-number">Invoice `+inv.Number) || !strings.Contains(res.Header.Get("Content-Disposition"), inv.Number+".html") ||
		res.Header.Get("Content-Security-Policy") != portal.CSP {
		t.Fatalf("print page: %d %v %s", res.StatusCode, res.Header, body)
	}

	// Another organization sees none of it.
	bo, _ := portalUserOf(t, h, h.tenants[1].org.ID, "bo@tenant-b.example", "customer", nil)
	for _, path := range []string{"", ".pdf", ".html"} {
		if res, _ := bo.send("GET", "/portal/billing/invoices/"+inv.ID+path, nil); res.StatusCode != 404 {
			t.Fatalf("another organization's invoice%s: %d", path, res.StatusCode)
		}
	}
	if _, page := bo.send("GET", "/portal/billing", nil); strings.Contains(page, inv.Number) {
		t.Fatal("another organization's billing lists the invoice")
	}

	// The user enrols TOTP: paying is challenged in the page.
	_, tokenBody := lin.send("POST", "/v1/auth/session/token", nil, "X-CSRF-Token", csrf)
	token := regexp.MustCompile(`"access_token":"([^"]+)"`).FindStringSubmatch(tokenBody)[1]
	var setup struct {
		Secret string `json:"secret"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", token, nil).decode(200, &setup)
	code, _ := totp.GenerateCode(setup.Secret, clock)
	h.do("POST", "/v1/auth/mfa/verify", token, map[string]any{"method": "totp", "code": code}).decode(200, nil)

	payForm := url.Values{"payment_method_id": {pm.PaymentMethod.ID}, "amount": {"2469.00"}}
	if res, _ := lin.send("POST", "/portal/billing/invoices/"+inv.ID+"/pay", payForm); res.StatusCode != 403 {
		t.Fatalf("payment without CSRF token: %d", res.StatusCode)
	}
	payForm.Set("csrf_token", csrf)
	res, page = lin.send("POST", "/portal/billing/invoices/"+inv.ID+"/pay", payForm)
	challenge := regexp.MustCompile(`name="mfa_challenge" value="([^"]+)"`).FindStringSubmatch(page)
	if res.StatusCode != 401 || challenge == nil || !strings.Contains(page, `name="mfa_action" value="/portal/billing/invoices/`+inv.ID+`/pay"`) {
		t.Fatalf("payment challenge: %d %s", res.StatusCode, page)
	}
	clock = clock.Add(30 * time.Second) // the next code
	code, _ = totp.GenerateCode(setup.Secret, clock)
	res, page = lin.send("POST", "/portal/mfa/verify", url.Values{"csrf_token": {csrf}, "mfa_challenge": {challenge[1]}, "mfa_methods": {"totp"}, "mfa_method": {"totp"},
		"mfa_code": {code}, "mfa_action": {"/portal/billing/invoices/" + inv.ID + "/pay"}, "f.payment_method_id": {pm.PaymentMethod.ID}, "f.amount": {"2469.00"}})
	if res.StatusCode != 200 || !strings.Contains(page, `id="mfa-continue"`) {
		t.Fatalf("verify: %d %s", res.StatusCode, page)
	}
	payForm.Set("mfa_challenge_id", challenge[1])
	res, _ = lin.send("POST", "/portal/billing/invoices/"+inv.ID+"/pay", payForm)
	if res.StatusCode != 303 {
		t.Fatalf("payment after the challenge: %d", res.StatusCode)
	}
	_, page = lin.send("GET", res.Header.Get("Location"), nil)
	if !strings.Contains(page, "2,469.00 USD: successful") || !strings.Contains(page, `id="invoice-status">paid<`) || strings.Contains(page, `id="pay-form"`) ||
		!strings.Contains(page, "…4242") {
		t.Fatalf("paid invoice: %s", page)
	}
	if _, page := lin.send("GET", "/portal/billing", nil); !strings.Contains(page, "successful") || !strings.Contains(page, "2,469.00 USD") {
		t.Fatalf("payment history: %s", page)
	}
}

// pdfText returns the inflated content streams of a PDF.
func pdfText(t *testing.T, doc string) string {
	t.Helper()
	var out strings.Builder
	for rest := doc; ; {
		i := strings.Index(rest, "stream\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("stream\n"):]
		j := strings.Index(rest, "endstream")
		if j < 0 {
			break
		}
		if zr, err := zlib.NewReader(strings.NewReader(rest[:j])); err == nil {
			raw, _ := io.ReadAll(zr)
			out.Write(raw)
		}
		rest = rest[j:]
	}
	if out.Len() == 0 {
		t.Fatal("no content stream in the PDF")
	}
	return out.String()
}
