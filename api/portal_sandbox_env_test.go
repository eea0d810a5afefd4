package api_test

import (
	"context"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
)

// The sandbox view of the portal (?env=test) keeps its choice on every
// link, form and redirect: an action taken from the sandbox acts on
// sandbox data, never on live data (docs/portal.md, docs/authentication.md).

// htmlForm is a form of a page, as a browser would submit it.
type htmlForm struct {
	ID, Method, Action, Enctype string
	// Fields are its named inputs (a checkbox or radio only when checked;
	// no files).
	Fields url.Values
}

// pageParts are the links (<a href>) and forms of a page.
type pageParts struct {
	Links []string
	Forms []htmlForm
}

var (
	htmlTag  = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s"'=<>/]+(?:\s*=\s*"[^"]*")?)*)\s*/?>`)
	htmlAttr = regexp.MustCompile(`([^\s"'=<>/]+)(?:\s*=\s*"([^"]*)")?`)
)

// parsePage reads the links and forms of a portal page (the portal's
// templates quote every attribute).
func parsePage(page string) pageParts {
	var out pageParts
	var form *htmlForm
	for _, m := range htmlTag.FindAllStringSubmatch(page, -1) {
		closing, name := m[1] == "/", strings.ToLower(m[2])
		attrs := map[string]string{}
		for _, a := range htmlAttr.FindAllStringSubmatch(m[3], -1) {
			attrs[strings.ToLower(a[1])] = html.UnescapeString(a[2])
		}
		switch {
		case name == "form" && closing:
			if form != nil {
				out.Forms = append(out.Forms, *form)
				form = nil
			}
		case name == "form":
			form = &htmlForm{ID: attrs["id"], Method: strings.ToLower(attrs["method"]), Action: attrs["action"], Enctype: attrs["enctype"], Fields: url.Values{}}
		case name == "a" && !closing:
			if href, ok := attrs["href"]; ok {
				out.Links = append(out.Links, href)
			}
		case name == "input" && form != nil && attrs["name"] != "":
			_, checked := attrs["checked"]
			switch attrs["type"] {
			case "file":
				continue
			case "checkbox", "radio":
				if !checked {
					continue
				}
			}
			form.Fields.Add(attrs["name"], attrs["value"])
		}
	}
	return out
}

// form returns the page's form whose id is id, or else whose action ends
// with id.
func (p pageParts) form(t *testing.T, id string) htmlForm {
	t.Helper()
	for _, f := range p.Forms {
		if f.ID == id || pagePathOf(f.Action) != "" && strings.HasSuffix(pagePathOf(f.Action), id) {
			return f
		}
	}
	t.Fatalf("no form %s among %+v", id, p.Forms)
	return htmlForm{}
}

// pagePathOf is the path of a portal address (without query or fragment).
func pagePathOf(to string) string {
	u, err := url.Parse(to)
	if err != nil {
		return ""
	}
	return u.Path
}

// envOf is the environment an address asks for ("" none).
func envOf(to string) string {
	u, err := url.Parse(to)
	if err != nil {
		return "unparsable"
	}
	return u.Query().Get("env")
}

// formEnv is the environment a form posts in: its action's query or its
// env field (the portal reads both).
func formEnv(f htmlForm) string {
	if e := envOf(f.Action); e != "" {
		return e
	}
	return f.Fields.Get("env")
}

// portalLink reports whether href is a link to a portal page (not an
// asset).
func portalLink(href string) bool {
	return (href == "/portal" || strings.HasPrefix(href, "/portal?") || strings.HasPrefix(href, "/portal/")) && !strings.HasPrefix(href, "/portal/static/")
}

// submit sends form f as rendered, with the fields of set replacing the
// rendered ones.
func (b *browserish) submit(f htmlForm, set url.Values) (*http.Response, string) {
	b.t.Helper()
	fields := url.Values{}
	for k, v := range f.Fields {
		fields[k] = v
	}
	for k, v := range set {
		fields[k] = v
	}
	switch {
	case f.Method != "post":
		sep := "?"
		if strings.Contains(f.Action, "?") {
			sep = "&"
		}
		return b.send("GET", f.Action+sep+fields.Encode(), nil)
	case f.Enctype == "multipart/form-data":
		single := map[string]string{}
		for k := range fields {
			single[k] = fields.Get(k)
		}
		return b.sendMultipart(f.Action, single)
	}
	return b.send("POST", f.Action, fields)
}

// sandboxFixture is the sandbox data (environment test) of tenant 0 the
// pages list.
type sandboxFixture struct {
	key, client, hook, ticket, invoice, account, article string
}

// newSandboxFixture creates, with the tenant's sandbox key, an API key, an
// OAuth client, a webhook subscription, a ticket with an attachment, a
// billing account with a saved card, a service and an invoice partly paid.
func newSandboxFixture(t *testing.T, h *harness) sandboxFixture {
	t.Helper()
	a := h.tenants[0]
	var f sandboxFixture
	var key struct {
		APIKey struct{ ID string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", a.testKey, map[string]any{"name": "sandbox reader", "permissions": []string{"services:read"}}).decode(http.StatusCreated, &key)
	var cl struct {
		Client struct {
			ClientID string `json:"client_id"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", a.testKey, map[string]any{"name": "Sandbox app", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"}}).decode(http.StatusCreated, &cl)
	var hook struct {
		Webhook struct{ ID string } `json:"webhook"`
	}
	h.do("POST", "/v1/webhooks", a.testKey, map[string]any{"url": publicHook, "events": []string{"service.*"}}).decode(http.StatusCreated, &hook)
	var tk struct {
		Ticket struct{ ID string } `json:"ticket"`
	}
	h.do("POST", "/v1/support/tickets", a.testKey, map[string]any{"title": "Sandbox ticket", "description": "Only in the sandbox.", "category": "network",
		"attachments": []map[string]any{{"filename": "trace.txt", "content_type": "text/plain", "size": 5, "data": base64.StdEncoding.EncodeToString([]byte("hop 1"))}}}).decode(http.StatusCreated, &tk)
	var acct struct {
		Account struct{ ID string } `json:"account"`
	}
	h.do("POST", "/v1/billing/accounts", a.testKey, map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "sandbox@example.com"}).decode(http.StatusCreated, &acct)
	var pm struct {
		PaymentMethod struct{ ID string } `json:"payment_method"`
	}
	h.do("POST", "/v1/billing/accounts/"+acct.Account.ID+"/payment-methods", a.testKey, map[string]any{"card_token": "tok_visa", "billing_address": austinPostal, "set_default": true}).decode(http.StatusCreated, &pm)
	now := time.Now().UTC()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct.Account.ID, Name: "Sandbox Fiber", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &now, StatusChangedAt: now}
	if err := h.store.In(context.Background(), models.TenantScope(a.org.ID, models.EnvTest)).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	var inv invoiceAnswer
	h.do("POST", "/v1/billing/invoices", a.testKey, map[string]any{"account_id": acct.Account.ID,
		"services": []map[string]any{{"service_id": svc.ID, "quantity": 1, "unit_price": 100}}}).decode(http.StatusCreated, &inv)
	h.do("POST", "/v1/billing/payments", a.testKey, map[string]any{"invoice_id": inv.Invoice.ID, "amount": 10, "payment_method_id": pm.PaymentMethod.ID}).decode(http.StatusCreated, nil)
	art := newArticle(t, h, map[string]any{"title": "Diagnosing packet loss", "body": "Run a traceroute.", "category": "network", "status": "published"})
	f.key, f.client, f.hook, f.ticket = key.APIKey.ID, cl.Client.ClientID, hook.Webhook.ID, tk.Ticket.ID
	f.account, f.invoice, f.article = acct.Account.ID, inv.Invoice.ID, art.Article.ID
	// None of it is live.
	h.do("GET", "/v1/support/tickets/"+f.ticket, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/billing/invoices/"+f.invoice, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	return f
}

// TestPortalSandboxPagesKeepEnv renders each page of the sandbox view
// (?env=test) and checks that every portal link and every form on it keeps
// env=test (the dashboard's switch to live excepted), that the list items
// (keys, clients, webhooks, tickets, attachments, invoices, payments) are
// linked and their links open in the sandbox; and that the live view's
// pages carry no env at all.
func TestPortalSandboxPagesKeepEnv(t *testing.T) {
	h := newHarness(t)
	f := newSandboxFixture(t, h)
	b, _ := portalUser(t, h, 0, "sandy@tenant-a.example", nil)

	_, ticketPage := b.send("GET", "/portal/tickets/"+f.ticket+"?env=test", nil)
	att := regexp.MustCompile(`/portal/tickets/attachments/(att_[A-Za-z0-9]+)`).FindStringSubmatch(ticketPage)
	if att == nil {
		t.Fatalf("the sandbox ticket's page lists no attachment:\n%s", ticketPage)
	}
	res, body := b.send("GET", "/portal/tickets/knowledge?q=packet+loss&env=test", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"url":"/portal/tickets/knowledge/`+f.article+`?env=test"`) {
		t.Errorf("the sandbox's knowledge suggestions do not link in the sandbox: %d %s", res.StatusCode, body)
	}

	dev, hook, tkt, inv := "/portal/developers", "/portal/developers/webhooks/"+f.hook, "/portal/tickets/"+f.ticket, "/portal/billing/invoices/"+f.invoice
	for _, tc := range []struct {
		name, path string
		status     int
		// links and actions the page must offer (each kept in the sandbox).
		links, actions []string
	}{
		{"dashboard", "/portal", http.StatusOK, []string{"/portal", "/portal/services", "/portal/order", "/portal/operations", "/portal/tickets", "/portal/billing", dev}, []string{"/portal/logout"}},
		{"developers", dev, http.StatusOK, []string{hook},
			[]string{dev + "/keys", dev + "/keys/" + f.key + "/rotate", dev + "/keys/" + f.key + "/revoke", dev + "/clients", dev + "/clients/" + f.client + "/rotate",
				dev + "/clients/" + f.client + "/delete", dev + "/webhooks"}},
		{"webhook", hook, http.StatusOK, []string{hook, dev}, []string{hook + "/pause", hook + "/delete"}},
		{"tickets", "/portal/tickets", http.StatusOK, []string{"/portal/tickets/new", tkt}, []string{"/portal/tickets"}},
		{"new ticket", "/portal/tickets/new", http.StatusOK, nil, []string{"/portal/tickets"}},
		{"ticket", tkt, http.StatusOK, []string{"/portal/tickets", "/portal/tickets/attachments/" + att[1]}, []string{tkt + "/comments", tkt + "/escalate"}},
		{"article", "/portal/tickets/knowledge/" + f.article, http.StatusOK, []string{"/portal/tickets/new"}, nil},
		{"billing", "/portal/billing", http.StatusOK, []string{inv}, []string{"/portal/billing", "/portal/billing/budgets"}},
		{"invoice", inv, http.StatusOK, []string{"/portal/billing", inv + ".pdf", inv + ".html"}, []string{inv + "/pay"}},
		{"services", "/portal/services", http.StatusOK, nil, []string{"/portal/services"}},
		{"operations", "/portal/operations", http.StatusOK, nil, nil},
		{"order", "/portal/order", http.StatusOK, nil, []string{"/portal/order/availability"}},
		{"not found", "/portal/tickets/tkt_missing", http.StatusNotFound, []string{"/portal"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, page := b.send("GET", tc.path+"?env=test", nil)
			if res.StatusCode != tc.status || !strings.Contains(page, "sandbox data") {
				t.Fatalf("%s in the sandbox: %d\n%s", tc.path, res.StatusCode, page)
			}
			parts := parsePage(page)
			links := map[string]bool{}
			for _, href := range parts.Links {
				if !portalLink(href) || envOf(href) == "live" { // the switch to the live view
					continue
				}
				if envOf(href) != "test" {
					t.Errorf("link %s leaves the sandbox", href)
				}
				links[pagePathOf(href)] = true
			}
			actions := map[string]bool{}
			for _, form := range parts.Forms {
				if formEnv(form) != "test" {
					t.Errorf("form %s (%s %s, fields %v) leaves the sandbox", form.ID, form.Method, form.Action, form.Fields)
				}
				actions[pagePathOf(form.Action)] = true
			}
			for _, want := range tc.links {
				if !links[want] {
					t.Errorf("no link to %s in the sandbox (links %v)", want, parts.Links)
				}
			}
			for _, want := range tc.actions {
				if !actions[want] {
					t.Errorf("no form to %s in the sandbox (forms %+v)", want, parts.Forms)
				}
			}
			// The page's links open in the sandbox: a sandbox item's page is there.
			for _, href := range parts.Links {
				if portalLink(href) && envOf(href) == "test" && strings.Contains(href, "_") {
					if res, _ := b.send("GET", href, nil); res.StatusCode != http.StatusOK {
						t.Errorf("the sandbox link %s: %d", href, res.StatusCode)
					}
				}
			}
		})
	}

	// The live view is unchanged: no link or form carries an environment
	// (but the switch to the sandbox), and the sandbox's items are not there.
	for _, path := range []string{"/portal", dev, "/portal/tickets", "/portal/tickets/new", "/portal/billing", "/portal/services", "/portal/order"} {
		res, page := b.send("GET", path, nil)
		if res.StatusCode != http.StatusOK || !strings.Contains(page, "live data") || strings.Contains(page, f.ticket) || strings.Contains(page, f.invoice) || strings.Contains(page, f.key) {
			t.Fatalf("live %s: %d\n%s", path, res.StatusCode, page)
		}
		parts := parsePage(page)
		for _, href := range parts.Links {
			if portalLink(href) && envOf(href) != "" && href != "/portal?env=test" {
				t.Errorf("live %s links to %s", path, href)
			}
		}
		for _, form := range parts.Forms {
			if formEnv(form) != "" {
				t.Errorf("live %s has a form %s in %q", path, form.Action, formEnv(form))
			}
		}
	}
}

// TestPortalSandboxActions takes actions from the sandbox view with its
// forms as rendered: a key created there is an sk_test_ key, revoking it
// works (the sandbox key is found) and goes back to the sandbox; a ticket
// opened there is a sandbox ticket (not seen by a live credential), and the
// redirects after it and after a comment keep env=test; pausing a sandbox
// webhook and adding a budget on a sandbox account act on the sandbox. The
// same forms in the live view act on live data.
func TestPortalSandboxActions(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	f := newSandboxFixture(t, h)
	b, _ := portalUser(t, h, 0, "sandy@tenant-a.example", nil)
	testSecret, liveSecret := regexp.MustCompile(`sk_test_[A-Za-z0-9]+`), regexp.MustCompile(`sk_live_[A-Za-z0-9]+`)

	// An API key created from the sandbox view is a sandbox key.
	_, page := b.send("GET", "/portal/developers?env=test", nil)
	res, page := b.submit(parsePage(page).form(t, "create-key"), url.Values{"name": {"from the sandbox"}, "permissions": {"services:read"}})
	secret, id := testSecret.FindString(page), secretID.FindStringSubmatch(page)
	if res.StatusCode != http.StatusCreated || secret == "" || id == nil || liveSecret.MatchString(page) {
		t.Fatalf("key created from the sandbox view: %d\n%s", res.StatusCode, page)
	}
	h.do("GET", "/v1/services", secret, nil).decode(http.StatusOK, nil)
	for _, href := range parsePage(page).Links {
		if portalLink(href) && envOf(href) != "test" {
			t.Errorf("the new key's page links to %s", href)
		}
	}
	// Revoked from the sandbox view: found, revoked, and back to the sandbox.
	_, page = b.send("GET", "/portal/developers?env=test", nil)
	res, _ = b.submit(parsePage(page).form(t, "/keys/"+id[1]+"/revoke"), nil)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || pagePathOf(loc) != "/portal/developers" || envOf(loc) != "test" {
		t.Fatalf("revoke from the sandbox view: %d to %q", res.StatusCode, loc)
	}
	if r := h.do("GET", "/v1/services", secret, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("the revoked sandbox key still works: %d", r.status)
	}
	res, page = b.send("GET", res.Header.Get("Location"), nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Key revoked.") || !strings.Contains(page, "sandbox data") {
		t.Fatalf("the page after the revocation: %d\n%s", res.StatusCode, page)
	}

	// A ticket opened from the sandbox view is a sandbox ticket.
	_, page = b.send("GET", "/portal/tickets/new?env=test", nil)
	res, _ = b.submit(parsePage(page).form(t, "ticket-form"), url.Values{"title": {"Opened in the sandbox"}, "description": {"Test data."}, "category": {"network"}, "priority": {"low"}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !ticketLink.MatchString(loc) || envOf(loc) != "test" {
		t.Fatalf("ticket opened from the sandbox view: %d to %q", res.StatusCode, loc)
	}
	ticketID := ticketLink.FindStringSubmatch(loc)[1]
	h.do("GET", "/v1/support/tickets/"+ticketID, a.testKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/support/tickets/"+ticketID, a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	res, page = b.send("GET", loc, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "opened.") || !strings.Contains(page, "Opened in the sandbox") {
		t.Fatalf("the redirect after opening a sandbox ticket: %d\n%s", res.StatusCode, page)
	}
	// A comment from there: the redirect keeps the sandbox before its fragment.
	res, _ = b.submit(parsePage(page).form(t, "comment-form"), url.Values{"content": {"More sandbox detail."}})
	loc = res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || loc != "/portal/tickets/"+ticketID+"?env=test#conversation" {
		t.Fatalf("comment from the sandbox view: %d to %q", res.StatusCode, loc)
	}
	if res, page := b.send("GET", loc, nil); res.StatusCode != http.StatusOK || !strings.Contains(page, "Your comment was added.") || !strings.Contains(page, "More sandbox detail.") {
		t.Fatalf("the ticket after the comment: %d\n%s", res.StatusCode, page)
	}

	// Pausing the sandbox's webhook from its sandbox page.
	hook := "/portal/developers/webhooks/" + f.hook
	_, page = b.send("GET", hook+"?env=test", nil)
	res, _ = b.submit(parsePage(page).form(t, "/pause"), nil)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != hook+"?env=test" || webhookActive(t, h, a.testKey, f.hook) {
		t.Fatalf("pause from the sandbox view: %d to %q", res.StatusCode, loc)
	}
	if _, page := b.send("GET", hook+"?env=test", nil); !strings.Contains(page, "Subscription paused") || !strings.Contains(page, `id="webhook-status">paused<`) {
		t.Fatalf("the webhook after the pause:\n%s", page)
	}

	// A budget added from the sandbox's billing page is on the sandbox's account.
	_, page = b.send("GET", "/portal/billing?env=test", nil)
	budgetForm := parsePage(page).form(t, "create-budget")
	res, _ = b.submit(budgetForm, url.Values{"account_id": {f.account}, "amount": {"750.00"}, "period": {"monthly"}, "thresholds": {"50, 100"}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/portal/billing?env=test" {
		t.Fatalf("budget from the sandbox view: %d to %q", res.StatusCode, loc)
	}
	if got := budgets(t, h, a.testKey); len(got.Budgets) != 1 || got.Budgets[0].AccountID != f.account {
		t.Fatalf("sandbox budgets: %+v", got)
	}
	if got := budgets(t, h, a.liveKey); len(got.Budgets) != 0 {
		t.Fatalf("a sandbox budget reached live data: %+v", got)
	}

	// The live view's forms act on live data, and redirect without env.
	_, page = b.send("GET", "/portal/developers", nil)
	res, page = b.submit(parsePage(page).form(t, "create-key"), url.Values{"name": {"live"}, "permissions": {"services:read"}})
	if res.StatusCode != http.StatusCreated || !liveSecret.MatchString(page) || testSecret.MatchString(page) {
		t.Fatalf("key created from the live view: %d\n%s", res.StatusCode, page)
	}
	_, page = b.send("GET", "/portal/tickets/new", nil)
	res, _ = b.submit(parsePage(page).form(t, "ticket-form"), url.Values{"title": {"Opened live"}, "description": {"Live data."}, "category": {"network"}, "priority": {"low"}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !ticketLink.MatchString(loc) || strings.Contains(loc, "env") {
		t.Fatalf("ticket opened from the live view: %d to %q", res.StatusCode, loc)
	}
	h.do("GET", "/v1/support/tickets/"+ticketLink.FindStringSubmatch(res.Header.Get("Location"))[1], a.liveKey, nil).decode(http.StatusOK, nil)
}

// TestPortalSandboxSecondFactor creates a key from the sandbox view as a
// user with TOTP enrolled: the challenge's forms keep the sandbox (and do
// not carry env as one of the action's own fields), and the action, sent
// again after the code, creates an sk_test_ key.
func TestPortalSandboxSecondFactor(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	b, _ := portalUser(t, h, 0, "mia@tenant-a.example", nil)
	var me struct {
		Users []identity.User `json:"users"`
	}
	h.do("GET", "/v1/users?email=mia@tenant-a.example", h.adminKey, nil).decode(http.StatusOK, &me)
	var u *identity.User
	for i := range me.Users {
		if me.Users[i].Email == "mia@tenant-a.example" {
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
	clock = clock.Add(30 * time.Second)

	_, page := b.send("GET", "/portal/developers?env=test", nil)
	res, page := b.submit(parsePage(page).form(t, "create-key"), url.Values{"name": {"sandbox with mfa"}, "permissions": {"services:read"}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, `id="mfa-form"`) {
		t.Fatalf("challenged sandbox action: %d\n%s", res.StatusCode, page)
	}
	parts := parsePage(page)
	for _, form := range parts.Forms {
		if formEnv(form) != "test" || len(form.Fields["env"]) > 1 || form.Fields.Get("f.env") != "" {
			t.Errorf("challenge form %s (%s): fields %v", form.ID, form.Action, form.Fields)
		}
	}
	code, _ = totp.GenerateCode(setup.Secret, clock)
	res, page = b.submit(parts.form(t, "mfa-form"), url.Values{"mfa_method": {"totp"}, "mfa_code": {code}})
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="mfa-continue"`) || !strings.Contains(page, "sandbox data") {
		t.Fatalf("verified in the sandbox: %d\n%s", res.StatusCode, page)
	}
	cont := parsePage(page).form(t, "mfa-continue")
	if formEnv(cont) != "test" || len(cont.Fields["env"]) > 1 || cont.Fields.Get("name") != "sandbox with mfa" {
		t.Fatalf("continue form: %+v", cont)
	}
	res, page = b.submit(cont, nil)
	if res.StatusCode != http.StatusCreated || !regexp.MustCompile(`sk_test_[A-Za-z0-9]+`).MatchString(page) {
		t.Fatalf("the sandbox action after the second factor: %d\n%s", res.StatusCode, page)
	}
}
