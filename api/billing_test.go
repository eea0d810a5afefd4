package api_test

import (
	"cmp"
	"context"
	"fmt"
	"github.com/telcoplatform/platform/webhooks"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
)

type lineDoc struct {
	ServiceID   string  `json:"service_id"`
	Description string  `json:"description"`
	Amount      float64 `json:"amount"`
	Quantity    int64   `json:"quantity"`
	UnitPrice   float64 `json:"unit_price"`
	Kind        string  `json:"kind"`
	Category    string  `json:"category"`
}

type invoiceDoc struct {
	ID         string    `json:"id"`
	Number     string    `json:"number"`
	Status     string    `json:"status"`
	Amount     float64   `json:"amount"`
	Currency   string    `json:"currency"`
	DueDate    string    `json:"due_date"`
	PaidDate   *string   `json:"paid_date"`
	Services   []lineDoc `json:"services"`
	AccountID  string    `json:"account_id"`
	Subtotal   float64   `json:"subtotal"`
	Tax        float64   `json:"tax"`
	AmountPaid float64   `json:"amount_paid"`
	AmountDue  float64   `json:"amount_due"`
	IssuedAt   string    `json:"issued_at"`
}

type invoiceAnswer struct {
	Invoice invoiceDoc `json:"invoice"`
}

type paymentAnswer struct {
	PaymentID       string  `json:"payment_id"`
	Status          string  `json:"status"`
	Amount          float64 `json:"amount"`
	Currency        string  `json:"currency"`
	ProcessedAt     *string `json:"processed_at"`
	TransactionID   string  `json:"transaction_id"`
	InvoiceID       string  `json:"invoice_id"`
	InvoiceStatus   string  `json:"invoice_status"`
	AmountRemaining float64 `json:"amount_remaining"`
	FailureCode     string  `json:"failure_code"`
	PaymentMethod   struct {
		ID    string `json:"id"`
		Brand string `json:"brand"`
		Last4 string `json:"last4"`
	} `json:"payment_method"`
}

type pmAnswer struct {
	PaymentMethod struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Brand   string `json:"brand"`
		Last4   string `json:"last4"`
		Default bool   `json:"default"`
	} `json:"payment_method"`
}

type subscriptionDoc struct {
	ID                string  `json:"id"`
	Status            string  `json:"status"`
	ServiceID         string  `json:"service_id"`
	BillingCycle      string  `json:"billing_cycle"`
	PendingCycle      string  `json:"pending_billing_cycle"`
	AutoRenew         bool    `json:"auto_renew"`
	Quantity          int     `json:"quantity"`
	UnitPrice         float64 `json:"unit_price"`
	CancelAt          *string `json:"cancel_at"`
	CancelAtPeriodEnd bool    `json:"cancel_at_period_end"`
	CurrentPeriod     struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"current_period"`
	Workflow struct {
		ID string `json:"id"`
	} `json:"workflow"`
}

var austinPostal = map[string]any{"street": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701", "country": "US"}

// card is the payment_method object of a payment with token.
func card(token string) map[string]any {
	return map[string]any{"type": "credit_card", "card_token": token, "billing_address": austinPostal}
}

// newInvoice creates, through the API, an invoice of tn's account for its
// service svc: quantity × unit price, no tax unless the account has one.
func newInvoice(t testing.TB, h *harness, tn tenant, svc string, quantity int, unitPrice float64) invoiceDoc {
	t.Helper()
	var inv invoiceAnswer
	h.do("POST", "/api/v1/billing/invoices", tn.liveKey, map[string]any{"account_id": tn.account.ID,
		"services": []map[string]any{{"service_id": svc, "quantity": quantity, "unit_price": unitPrice}}, "notes": "fixture"}).decode(201, &inv)
	return inv.Invoice
}

// eventTypes returns the outbox event types about resourceID, oldest first.
func eventTypes(t testing.TB, h *harness, tn tenant, resourceID string) []string {
	t.Helper()
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(tn.org.ID, models.EnvLive), resourceID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// billingFixtures creates, for tn (live), a saved payment method, an
// invoice with a partial payment, and a subscription (pending, without a
// workflow), and returns them by path parameter name.
func billingFixtures(t testing.TB, h *harness, tn tenant, serviceID string) map[string]string {
	t.Helper()
	var pm pmAnswer
	h.do("POST", "/v1/billing/accounts/"+tn.account.ID+"/payment-methods", tn.liveKey, map[string]any{"card_token": "tok_visa", "billing_address": austinPostal}).decode(201, &pm)
	inv := newInvoice(t, h, tn, serviceID, 1, 100)
	var pay paymentAnswer
	h.do("POST", "/v1/billing/payments", tn.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 10, "payment_method_id": pm.PaymentMethod.ID}).decode(201, &pay)
	subs, _, err := billing.NewStore(h.store).CreateSubscriptions(context.Background(), tenantPrincipal(tn), billing.RecurringInput{AccountID: tn.account.ID,
		Services: []billing.RecurringItem{{ServiceID: serviceID}}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"invoice_id": inv.ID, "payment_id": pay.PaymentID, "payment_method_id": pm.PaymentMethod.ID, "subscription_id": subs[0].ID}
}

// keyWith creates a key of tn (live) holding only perms.
func keyWith(t testing.TB, h *harness, tn tenant, perms ...string) string {
	t.Helper()
	var key struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", tn.liveKey, map[string]any{"name": "limited " + strings.Join(perms, ","), "permissions": perms}).decode(201, &key)
	return key.APIKey.Key
}

func TestBillingAccountsAndPaymentMethods(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	acctPath := "/api/v1/billing/accounts/" + a.account.ID

	t.Run("a currency without two minor digits is refused", func(t *testing.T) {
		// Amounts have two decimals: 0.50 JPY would be half a yen.
		for _, cur := range []string{"JPY", "KRW", "XYZ"} {
			e := h.do("POST", "/v1/billing/accounts", a.liveKey, map[string]any{"name": "Yen", "currency": cur, "billing_email": "ap@example.com"}).
				wantError(400, "VALIDATION_ERROR")
			if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "currency") {
				t.Fatalf("%s: %+v", cur, e.Error)
			}
		}
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"currency": "JPY"}).wantError(400, "VALIDATION_ERROR")
	})
	t.Run("create with contact and tax rate", func(t *testing.T) {
		var out struct {
			Account struct {
				ID             string
				TaxRate        float64                      `json:"tax_rate"`
				BillingContact struct{ Name, Email string } `json:"billing_contact"`
			} `json:"account"`
		}
		// The tax rate is the provider's to set: a customer is refused, provider billing staff set it.
		e := h.do("POST", "/v1/billing/accounts", a.liveKey, map[string]any{"name": "Taxed", "currency": "USD", "billing_email": "ap@example.com",
			"billing_contact_name": "Accounts Payable", "tax_rate": 0}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		if e.Error.Details["field"] != "tax_rate" {
			t.Fatalf("details %+v", e.Error.Details)
		}
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"tax_rate": 0}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		// Whatever the value within the schema's 0 to 100: the field is not the customer's to send.
		e = h.do("POST", "/v1/billing/accounts", a.liveKey, map[string]any{"name": "Taxed", "currency": "USD", "billing_email": "ap@example.com", "tax_rate": 100}).
			wantError(403, "INSUFFICIENT_PERMISSIONS")
		if e.Error.Details["field"] != "tax_rate" {
			t.Fatalf("details %+v", e.Error.Details)
		}
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"tax_rate": 99.99}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		// Outside it the body is malformed: the schema refuses it before the operation runs (docs/api.md).
		h.do("POST", "/v1/billing/accounts", a.liveKey, map[string]any{"name": "Taxed", "currency": "USD", "billing_email": "ap@example.com", "tax_rate": -50}).
			wantError(400, "VALIDATION_ERROR")
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"tax_rate": 500}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/billing/accounts", h.adminKey, map[string]any{"name": "Taxed", "currency": "USD", "billing_email": "ap@example.com",
			"billing_contact_name": "Accounts Payable", "tax_rate": 8.25, "organization_id": a.org.ID}).decode(201, &out)
		if out.Account.TaxRate != 8.25 || out.Account.BillingContact.Name != "Accounts Payable" || out.Account.BillingContact.Email != "ap@example.com" {
			t.Fatalf("account %+v", out.Account)
		}
		h.do("POST", "/v1/billing/accounts", h.adminKey, map[string]any{"name": "x", "currency": "USD", "billing_email": "ap@example.com", "tax_rate": 120, "organization_id": a.org.ID}).wantError(400, "VALIDATION_ERROR")
	})

	var visa, mc pmAnswer
	t.Run("payment methods hold tokens, never card numbers", func(t *testing.T) {
		h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"type": "credit_card", "card_token": "tok_visa", "billing_address": austinPostal}).decode(201, &visa)
		if !models.HasPrefix(visa.PaymentMethod.ID, "pm") || visa.PaymentMethod.Brand != "visa" || visa.PaymentMethod.Last4 != "4242" || visa.PaymentMethod.Default {
			t.Fatalf("payment method %+v", visa.PaymentMethod)
		}
		res := h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_mastercard", "billing_address": austinPostal, "set_default": true}).decode(201, &mc)
		if !mc.PaymentMethod.Default || strings.Contains(string(res.body), "tok_") {
			t.Fatalf("default method, without its token: %s", res.body)
		}
		e := h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"card_token": "4242 4242 4242 4242", "billing_address": austinPostal}).wantError(400, "VALIDATION_ERROR")
		if !strings.Contains(e.Error.Message, "card number") || strings.Contains(fmt.Sprint(e.Error.Details), "4242 4242") {
			t.Fatalf("a card number must be refused without echoing it: %+v", e.Error)
		}
		h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_unknown", "billing_address": austinPostal}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_visa"}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", acctPath+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_visa", "billing_address": map[string]any{"street": "1 A St", "city": "X", "zip": "1", "country": "USA"}}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/billing/accounts/"+a.account.ID+"/payment-methods", b.liveKey, map[string]any{"card_token": "tok_visa", "billing_address": austinPostal}).wantError(404, "NOT_FOUND")
		h.do("POST", acctPath+"/payment-methods", keyWith(t, h, a, "billing:read"), map[string]any{"card_token": "tok_visa", "billing_address": austinPostal}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		var list struct {
			PaymentMethods []struct{ ID string } `json:"payment_methods"`
		}
		h.do("GET", acctPath+"/payment-methods", a.liveKey, nil).decode(200, &list)
		if len(list.PaymentMethods) != 2 {
			t.Fatalf("methods %+v", list)
		}
	})

	t.Run("GET the account: balance, contact, payment methods, preferences, plan", func(t *testing.T) {
		inv := newInvoice(t, h, a, mustService(t, h, a), 2, 50.5)
		var out struct {
			Account struct {
				Balance        float64                `json:"balance"`
				BillingContact struct{ Email string } `json:"billing_contact"`
				PaymentMethods []struct{ ID string }  `json:"payment_methods"`
				Preferences    struct {
					PaymentMethodID string `json:"payment_method_id"`
					BillingCycle    string `json:"billing_cycle"`
				} `json:"preferences"`
				Plan struct {
					Name     string  `json:"name"`
					Included int64   `json:"monthly_included_requests"`
					Overage  float64 `json:"overage_price_per_request"`
				} `json:"plan"`
				OpenInvoices int64 `json:"open_invoices"`
			} `json:"account"`
		}
		h.do("GET", acctPath, a.liveKey, nil).decode(200, &out)
		ac := out.Account
		if ac.Balance != inv.Amount || ac.BillingContact.Email != "billing@example.com" || len(ac.PaymentMethods) != 2 || ac.Preferences.PaymentMethodID != mc.PaymentMethod.ID ||
			ac.Plan.Name != "business" || ac.Plan.Included != 500000 || ac.Plan.Overage != 0.0008 || ac.OpenInvoices != 1 {
			t.Fatalf("account %+v", ac)
		}
		h.do("GET", acctPath, b.liveKey, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/api/v1/billing/accounts/acct_missing", a.liveKey, nil).wantError(404, "NOT_FOUND")
	})

	t.Run("PUT preferences", func(t *testing.T) {
		var out struct {
			Account struct{ Preferences prefsDoc } `json:"account"`
		}
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"billing_cycle": "quarterly", "auto_pay": true, "payment_method_id": visa.PaymentMethod.ID, "invoice_delivery": "portal"}).decode(200, &out)
		if p := out.Account.Preferences; p.BillingCycle != "quarterly" || !p.AutoPay || p.PaymentMethodID != visa.PaymentMethod.ID || p.InvoiceDelivery != "portal" {
			t.Fatalf("preferences %+v", p)
		}
		for name, body := range map[string]map[string]any{
			"unknown method":           {"payment_method_id": "pm_unknown"},
			"another tenant's method":  {"payment_method_id": "pm_" + models.RandomString(20)},
			"auto_pay without method":  {"payment_method_id": ""},
			"bad cycle":                {"billing_cycle": "weekly"},
			"currency with invoices":   {"currency": "EUR"},
			"bad delivery":             {"invoice_delivery": "pigeon"},
			"method of the wrong type": {"payment_method_id": "acct_x"},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("PUT", acctPath+"/preferences", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
			})
		}
		h.do("PUT", acctPath+"/preferences", b.liveKey, map[string]any{"auto_pay": false}).wantError(404, "NOT_FOUND")
		// A tax rate out of range is the staff's mistake to hear about (a customer is 403, above).
		h.do("PUT", acctPath+"/preferences", h.adminKey, map[string]any{"tax_rate": -1}).wantError(400, "VALIDATION_ERROR")
	})

	t.Run("DELETE a payment method", func(t *testing.T) {
		del := acctPath + "/payment-methods/" + visa.PaymentMethod.ID
		h.do("DELETE", del, a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION") // auto_pay uses it
		h.do("PUT", acctPath+"/preferences", a.liveKey, map[string]any{"auto_pay": false}).decode(200, nil)
		h.do("DELETE", del, b.liveKey, nil).wantError(404, "NOT_FOUND")
		if res := h.do("DELETE", del, a.liveKey, nil); res.status != 204 {
			t.Fatalf("delete: %d %s", res.status, res.body)
		}
		h.do("DELETE", del, a.liveKey, nil).wantError(404, "NOT_FOUND")
		var out struct {
			Account struct{ Preferences prefsDoc } `json:"account"`
		}
		h.do("GET", acctPath, a.liveKey, nil).decode(200, &out)
		if out.Account.Preferences.PaymentMethodID != "" {
			t.Fatalf("a removed method stays the account's default: %+v", out.Account.Preferences)
		}
	})
}

// mustService stores an operational 1 Gbps dedicated internet service of
// tn's account (live), with one telemetry sample, without provisioning it.
func mustService(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	ctx := context.Background()
	scope := models.TenantScope(tn.org.ID, models.EnvLive)
	now := time.Now().UTC()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: tn.account.ID, Name: "Dedicated Fiber Internet", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &now, StatusChangedAt: now}
	if err := h.store.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, simulator.Sample(svc.ID, svc.SLA, svc.Status, now)); err != nil {
		t.Fatal(err)
	}
	return svc.ID
}

func TestInvoicesEndpoints(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc := mustService(t, h, a)
	h.do("PUT", "/v1/billing/accounts/"+a.account.ID+"/preferences", h.adminKey, map[string]any{"tax_rate": 8.25}).decode(200, nil)

	var created invoiceAnswer
	t.Run("POST creates lines, totals, tax and due date, and invoice.created", func(t *testing.T) {
		due := time.Now().UTC().Add(10 * 24 * time.Hour).Truncate(time.Second)
		h.do("POST", "/api/v1/billing/invoices", a.liveKey, map[string]any{"account_id": a.account.ID, "due_date": due.Format(time.RFC3339), "notes": "November",
			"services": []map[string]any{{"service_id": svc, "quantity": 2, "unit_price": 149.99}, {"service_id": svc, "quantity": 1, "unit_price": 0.01}}}).decode(201, &created)
		inv := created.Invoice
		if !models.HasPrefix(inv.ID, "inv") || !strings.HasPrefix(inv.Number, "INV-") || inv.Status != "pending" || inv.Currency != "USD" ||
			inv.Subtotal != 299.99 || inv.Tax != 24.75 || inv.Amount != 324.74 || inv.AmountDue != 324.74 || inv.DueDate != due.Format(time.RFC3339) ||
			len(inv.Services) != 2 || inv.Services[0].Amount != 299.98 || inv.Services[0].Quantity != 2 || inv.Services[0].ServiceID != svc || inv.PaidDate != nil {
			t.Fatalf("invoice %+v", inv)
		}
		if got := eventTypes(t, h, a, inv.ID); !slices.Equal(got, []string{"invoice.created"}) {
			t.Fatalf("events %v", got)
		}
		var def invoiceAnswer
		h.do("POST", "/v1/billing/invoices", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 10}}}).decode(201, &def)
		issued, _ := time.Parse(time.RFC3339, def.Invoice.IssuedAt)
		dueAt, _ := time.Parse(time.RFC3339, def.Invoice.DueDate)
		if dueAt.Sub(issued) != 30*24*time.Hour || def.Invoice.Number == inv.Number {
			t.Fatalf("default due date / numbering: %+v", def.Invoice)
		}
	})
	t.Run("POST errors", func(t *testing.T) {
		other := mustService(t, h, b)
		for name, tc := range map[string]struct {
			body  any
			field string
		}{
			"no services":           {map[string]any{"account_id": a.account.ID, "services": []any{}}, "services"},
			"unknown account":       {map[string]any{"account_id": "acct_missing", "services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 1}}}, "account_id"},
			"another tenant's svc":  {map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": other, "quantity": 1, "unit_price": 1}}}, "services[0].service_id"},
			"zero quantity":         {map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc, "quantity": 0, "unit_price": 1}}}, "services[0].quantity"},
			"negative price":        {map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": -1}}}, "services[0].unit_price"},
			"due date in the past":  {map[string]any{"account_id": a.account.ID, "due_date": "2020-01-01T00:00:00Z", "services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 1}}}, "due_date"},
			"three decimals":        {map[string]any{"account_id": a.account.ID, "services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 1.005}}}, ""},
			"missing account field": {map[string]any{"services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 1}}}, "account_id"},
			"above the invoice bound": {map[string]any{"account_id": a.account.ID, "services": []map[string]any{
				{"service_id": svc, "quantity": 1_000_000, "unit_price": 1000}, {"service_id": svc, "quantity": 1, "unit_price": 0.01}}}, "services"},
		} {
			t.Run(name, func(t *testing.T) {
				e := h.do("POST", "/api/v1/billing/invoices", a.liveKey, tc.body).wantError(400, "VALIDATION_ERROR")
				if tc.field != "" && !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), tc.field) {
					t.Fatalf("field %s not named: %+v", tc.field, e.Error)
				}
			})
		}
		h.do("POST", "/api/v1/billing/invoices", keyWith(t, h, a, "billing:read"), map[string]any{"account_id": a.account.ID}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", "/api/v1/billing/invoices", "", map[string]any{"account_id": a.account.ID}).wantError(401, "UNAUTHENTICATED")
	})
	t.Run("GET one", func(t *testing.T) {
		var got invoiceAnswer
		h.do("GET", "/api/v1/billing/invoices/"+created.Invoice.ID, a.liveKey, nil).decode(200, &got)
		if got.Invoice.ID != created.Invoice.ID || len(got.Invoice.Services) != 2 {
			t.Fatalf("invoice %+v", got.Invoice)
		}
		h.do("GET", "/api/v1/billing/invoices/"+created.Invoice.ID, b.liveKey, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/api/v1/billing/invoices/"+created.Invoice.ID, a.testKey, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/api/v1/billing/invoices/inv_missing", a.liveKey, nil).wantError(404, "NOT_FOUND")
	})
	t.Run("GET list: limit, offset, status, dates, total_count, has_more", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			newInvoice(t, h, a, svc, 1, float64(i+1))
		}
		type list struct {
			Invoices   []invoiceDoc `json:"invoices"`
			TotalCount int64        `json:"total_count"`
			HasMore    bool         `json:"has_more"`
		}
		var all, page, second list
		h.do("GET", "/api/v1/billing/invoices", a.liveKey, nil).decode(200, &all)
		if all.TotalCount != 5 || len(all.Invoices) != 5 || all.HasMore {
			t.Fatalf("list %+v", all)
		}
		h.do("GET", "/api/v1/billing/invoices?limit=2", a.liveKey, nil).decode(200, &page)
		h.do("GET", "/api/v1/billing/invoices?limit=2&offset=4", a.liveKey, nil).decode(200, &second)
		if len(page.Invoices) != 2 || !page.HasMore || page.TotalCount != 5 || len(second.Invoices) != 1 || second.HasMore || page.Invoices[0].ID != all.Invoices[0].ID {
			t.Fatalf("pages %+v / %+v", page, second)
		}
		var pending, paid, ranged, empty list
		h.do("GET", "/api/v1/billing/invoices?status=pending", a.liveKey, nil).decode(200, &pending)
		h.do("GET", "/api/v1/billing/invoices?status=paid", a.liveKey, nil).decode(200, &paid)
		today := time.Now().UTC().Format("2006-01-02")
		h.do("GET", "/api/v1/billing/invoices?date_from="+today+"&date_to="+today, a.liveKey, nil).decode(200, &ranged)
		h.do("GET", "/api/v1/billing/invoices?date_to=2020-01-01", a.liveKey, nil).decode(200, &empty)
		if pending.TotalCount != 5 || paid.TotalCount != 0 || ranged.TotalCount != 5 || empty.TotalCount != 0 {
			t.Fatalf("filters: %d %d %d %d", pending.TotalCount, paid.TotalCount, ranged.TotalCount, empty.TotalCount)
		}
		var other list
		h.do("GET", "/api/v1/billing/invoices", b.liveKey, nil).decode(200, &other)
		if other.TotalCount != 0 {
			t.Fatalf("another tenant sees %d invoices", other.TotalCount)
		}
		// The parameters every list takes: per_page (an alias of limit),
		// page and cursor (next_cursor), in the invoices' own shape.
		type cursorList struct {
			Invoices   []invoiceDoc `json:"invoices"`
			HasMore    bool         `json:"has_more"`
			NextCursor *string      `json:"next_cursor"`
		}
		var perPage, page2, byCursor, last cursorList
		h.do("GET", "/api/v1/billing/invoices?per_page=2", a.liveKey, nil).decode(200, &perPage)
		h.do("GET", "/api/v1/billing/invoices?page=2&per_page=2", a.liveKey, nil).decode(200, &page2)
		if len(perPage.Invoices) != 2 || perPage.NextCursor == nil || len(page2.Invoices) != 2 || page2.Invoices[0].ID != all.Invoices[2].ID {
			t.Fatalf("per_page and page: %+v / %+v", perPage, page2)
		}
		h.do("GET", "/api/v1/billing/invoices?per_page=2&cursor="+*perPage.NextCursor, a.liveKey, nil).decode(200, &byCursor)
		h.do("GET", "/api/v1/billing/invoices?page=3&limit=2", a.liveKey, nil).decode(200, &last)
		if len(byCursor.Invoices) != 2 || byCursor.Invoices[0].ID != all.Invoices[2].ID || len(last.Invoices) != 1 || last.HasMore || last.NextCursor != nil {
			t.Fatalf("cursor and last page: %+v / %+v", byCursor, last)
		}
		for _, q := range []string{"limit=0", "limit=201", "offset=-1", "status=late", "date_from=yesterday", "date_from=2026-02-01&date_to=2026-01-01",
			"per_page=500", "page=0", "cursor=abc", "sort=colour:asc", "sort=amount:sideways", "date_from=2026-02-02&date_to=2026-02-01"} {
			h.do("GET", "/api/v1/billing/invoices?"+q, a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		}
		h.do("GET", "/api/v1/billing/invoices?limit=200", a.liveKey, nil).decode(200, nil)
		// sort orders the whole list, not only the page.
		var asc, desc struct {
			Invoices []struct {
				Amount float64 `json:"amount"`
			} `json:"invoices"`
		}
		h.do("GET", "/v1/billing/invoices?sort=amount:asc", a.liveKey, nil).decode(200, &asc)
		h.do("GET", "/v1/billing/invoices?sort=amount:desc&limit=1", a.liveKey, nil).decode(200, &desc)
		if len(asc.Invoices) < 2 || len(desc.Invoices) != 1 || desc.Invoices[0].Amount != asc.Invoices[len(asc.Invoices)-1].Amount ||
			!slices.IsSortedFunc(asc.Invoices, func(x, y struct {
				Amount float64 `json:"amount"`
			}) int {
				return cmp.Compare(x.Amount, y.Amount)
			}) {
			t.Fatalf("sorted by amount: %+v, largest %+v", asc.Invoices, desc.Invoices)
		}
	})
	t.Run("cancel: provider staff only, open invoices only", func(t *testing.T) {
		inv := newInvoice(t, h, a, svc, 1, 20)
		// A customer, even with every permission, cannot void the provider's invoice; neither can another tenant.
		for _, key := range []string{a.liveKey, b.liveKey} {
			h.do("POST", "/v1/billing/invoices/"+inv.ID+"/cancel", key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		}
		var out invoiceAnswer
		h.do("POST", "/v1/billing/invoices/"+inv.ID+"/cancel", h.adminKey, map[string]any{"reason": "billed twice"}).decode(200, &out)
		if out.Invoice.Status != "cancelled" || out.Invoice.AmountDue != 0 {
			t.Fatalf("cancelled %+v", out.Invoice)
		}
		if got := eventTypes(t, h, a, inv.ID); !slices.Contains(got, "invoice.cancelled") {
			t.Fatalf("events %v", got)
		}
		h.do("POST", "/v1/billing/invoices/"+inv.ID+"/cancel", h.adminKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		paid := newInvoice(t, h, a, svc, 1, 20)
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": paid.ID, "amount": 21.65, "payment_method": card("tok_visa")}).decode(201, nil)
		e := h.do("POST", "/v1/billing/invoices/"+paid.ID+"/cancel", h.adminKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		if e.Error.Details["from"] != "paid" {
			t.Fatalf("details %+v", e.Error.Details)
		}
		partly := newInvoice(t, h, a, svc, 1, 20)
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": partly.ID, "amount": 1, "payment_method": card("tok_visa")}).decode(201, nil)
		h.do("POST", "/v1/billing/invoices/"+partly.ID+"/cancel", h.adminKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 1, "payment_method": card("tok_visa")}).wantError(409, "INVALID_STATE_TRANSITION")
	})
}

func TestPaymentsEndpoints(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc := mustService(t, h, a)
	inv := newInvoice(t, h, a, svc, 1, 300)

	t.Run("partial payment leaves the invoice pending", func(t *testing.T) {
		var pay paymentAnswer
		h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 100.5, "currency": "USD", "payment_method": card("tok_visa")}).decode(201, &pay)
		if !models.HasPrefix(pay.PaymentID, "pay") || pay.Status != "successful" || pay.Amount != 100.5 || pay.Currency != "USD" || pay.ProcessedAt == nil ||
			!strings.HasPrefix(pay.TransactionID, "txn_") || pay.InvoiceStatus != "pending" || pay.AmountRemaining != 199.5 || pay.PaymentMethod.Last4 != "4242" {
			t.Fatalf("payment %+v", pay)
		}
		if got := eventTypes(t, h, a, pay.PaymentID); !slices.Equal(got, []string{"payment.successful"}) {
			t.Fatalf("events %v", got)
		}
	})
	t.Run("refused payments are recorded and emit payment.failed", func(t *testing.T) {
		e := h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 50, "payment_method": card("tok_insufficient_funds")}).wantError(402, "INSUFFICIENT_FUNDS")
		d := e.Error.Details
		if !models.HasPrefix(fmt.Sprint(d["payment_method_id"]), "pm") || d["required_amount"] != 50.0 || d["available_amount"] != 10.0 {
			t.Fatalf("details %+v", d)
		}
		if got := eventTypes(t, h, a, fmt.Sprint(d["payment_id"])); !slices.Equal(got, []string{"payment.failed"}) {
			t.Fatalf("events %v", got)
		}
		e = h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 50, "payment_method": card("tok_declined")}).wantError(400, "VALIDATION_ERROR")
		if e.Error.Details["decline_code"] != "card_declined" || !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "payment_method.card_token") {
			t.Fatalf("declined %+v", e.Error)
		}
		res := h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 50, "payment_method": card("tok_processing_error")})
		res.wantError(503, "DEPENDENCY_UNAVAILABLE")
		if res.header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
		var failed struct {
			Payments []paymentAnswer `json:"payments"`
		}
		h.do("GET", "/api/v1/billing/payments?status=failed&invoice_id="+inv.ID, a.liveKey, nil).decode(200, &failed)
		if len(failed.Payments) != 3 {
			t.Fatalf("failed payments %+v", failed)
		}
		var got invoiceAnswer
		h.do("GET", "/v1/billing/invoices/"+inv.ID, a.liveKey, nil).decode(200, &got)
		if got.Invoice.AmountPaid != 100.5 || got.Invoice.Status != "pending" {
			t.Fatalf("failures changed the invoice: %+v", got.Invoice)
		}
		var methods struct {
			PaymentMethods []any `json:"payment_methods"`
		}
		h.do("GET", "/v1/billing/accounts/"+a.account.ID+"/payment-methods", a.liveKey, nil).decode(200, &methods)
		if len(methods.PaymentMethods) != 0 {
			t.Fatalf("a card sent with a payment is not saved on the account: %+v", methods)
		}
		// Small charges pass on the low-balance card.
		h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 9.5, "payment_method": card("tok_insufficient_funds")}).decode(201, nil)
	})
	t.Run("more than is due, and a second full payment, are DUPLICATE_PAYMENT", func(t *testing.T) {
		e := h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 190.01, "payment_method": card("tok_visa")}).wantError(409, "DUPLICATE_PAYMENT")
		if e.Error.Details["amount_due"] != 190.0 {
			t.Fatalf("details %+v", e.Error.Details)
		}
		var pay paymentAnswer
		h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 190, "payment_method": card("tok_amex")}, "Idempotency-Key", "pay-rest").decode(201, &pay)
		if pay.InvoiceStatus != "paid" || pay.AmountRemaining != 0 {
			t.Fatalf("final payment %+v", pay)
		}
		replay := h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 190, "payment_method": card("tok_amex")}, "Idempotency-Key", "pay-rest").decode(201, nil)
		if replay.header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("the retry with the same key was not replayed")
		}
		h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 190, "payment_method": card("tok_amex")}).wantError(409, "DUPLICATE_PAYMENT")
		h.do("POST", "/api/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 190, "payment_method": card("tok_amex")}, "Idempotency-Key", "pay-other").wantError(409, "DUPLICATE_PAYMENT")
		if got := eventTypes(t, h, a, inv.ID); !slices.Equal(got, []string{"invoice.created", "invoice.paid"}) {
			t.Fatalf("invoice events %v", got)
		}
		var got invoiceAnswer
		h.do("GET", "/v1/billing/invoices/"+inv.ID, a.liveKey, nil).decode(200, &got)
		if got.Invoice.Status != "paid" || got.Invoice.PaidDate == nil || got.Invoice.AmountPaid != 300 {
			t.Fatalf("invoice %+v", got.Invoice)
		}
	})
	t.Run("a saved payment method pays too", func(t *testing.T) {
		other := newInvoice(t, h, a, svc, 1, 5)
		var pm pmAnswer
		h.do("POST", "/v1/billing/accounts/"+a.account.ID+"/payment-methods", a.liveKey, map[string]any{"card_token": "tok_mastercard", "billing_address": austinPostal}).decode(201, &pm)
		var pay paymentAnswer
		h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": other.ID, "amount": 5, "payment_method_id": pm.PaymentMethod.ID}).decode(201, &pay)
		if pay.PaymentMethod.ID != pm.PaymentMethod.ID || pay.InvoiceStatus != "paid" {
			t.Fatalf("payment %+v", pay)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		open := newInvoice(t, h, a, svc, 1, 5)
		for name, body := range map[string]map[string]any{
			"no invoice":        {"amount": 1, "payment_method": card("tok_visa")},
			"malformed invoice": {"invoice_id": "nope", "amount": 1, "payment_method": card("tok_visa")},
			"no amount":         {"invoice_id": open.ID, "payment_method": card("tok_visa")},
			"negative amount":   {"invoice_id": open.ID, "amount": -5, "payment_method": card("tok_visa")},
			"no method":         {"invoice_id": open.ID, "amount": 1},
			"two methods":       {"invoice_id": open.ID, "amount": 1, "payment_method": card("tok_visa"), "payment_method_id": "pm_x"},
			"card number":       {"invoice_id": open.ID, "amount": 1, "payment_method": card("4242424242424242")},
			"unknown token":     {"invoice_id": open.ID, "amount": 1, "payment_method": card("tok_nope")},
			"unknown method":    {"invoice_id": open.ID, "amount": 1, "payment_method_id": "pm_nope"},
			"wrong currency":    {"invoice_id": open.ID, "amount": 1, "currency": "EUR", "payment_method": card("tok_visa")},
			"bad type":          {"invoice_id": open.ID, "amount": 1, "payment_method": map[string]any{"type": "cash", "card_token": "tok_visa"}},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("POST", "/api/v1/billing/payments", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
			})
		}
		// An invoice_id naming nothing the caller may see is a bad reference
		// in the body, the same answer for another tenant's as for a made-up one.
		for key, id := range map[string]string{a.liveKey: "inv_missing", b.liveKey: open.ID} {
			e := h.do("POST", "/api/v1/billing/payments", key, map[string]any{"invoice_id": id, "amount": 1, "payment_method": card("tok_visa")}).wantError(400, "VALIDATION_ERROR")
			if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "invoice_id") {
				t.Fatalf("%s: %+v", id, e.Error)
			}
		}
		h.do("POST", "/api/v1/billing/payments", keyWith(t, h, a, "billing:read"), map[string]any{"invoice_id": open.ID, "amount": 1, "payment_method": card("tok_visa")}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("GET payments: history, filters, one", func(t *testing.T) {
		var list struct {
			Payments   []paymentAnswer `json:"payments"`
			Pagination pageDoc         `json:"pagination"`
		}
		h.do("GET", "/api/v1/billing/payments?invoice_id="+inv.ID+"&status=successful", a.liveKey, nil).decode(200, &list)
		if len(list.Payments) != 3 || list.Pagination.Total != 3 {
			t.Fatalf("history %+v", list)
		}
		h.do("GET", "/api/v1/billing/payments", b.liveKey, nil).decode(200, &list)
		if list.Pagination.Total != 0 {
			t.Fatalf("another tenant sees payments: %+v", list)
		}
		h.do("GET", "/api/v1/billing/payments?limit=1", a.liveKey, nil).decode(200, &list)
		if len(list.Payments) != 1 || list.Pagination.Total < 5 || list.Pagination.NextCursor == "" {
			t.Fatalf("page %+v", list.Pagination)
		}
		var one paymentAnswer
		h.do("GET", "/api/v1/billing/payments/"+list.Payments[0].PaymentID, a.liveKey, nil).decode(200, &one)
		if one.PaymentID != list.Payments[0].PaymentID {
			t.Fatalf("payment %+v", one)
		}
		h.do("GET", "/api/v1/billing/payments/"+one.PaymentID, b.liveKey, nil).wantError(404, "NOT_FOUND")
		h.do("GET", "/api/v1/billing/payments?status=lost", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/api/v1/billing/payments?date_from=soon", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		for _, q := range []string{"date_from=2026-11-29&date_to=2026-11-28", "date_from=2026-11-29T00:00:00Z&date_to=2026-11-28", "date_from=2026-11-29T00:00:00Z&date_to=2026-11-28T23:00:00Z"} {
			h.do("GET", "/v1/billing/payments?"+q, a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		}
		for _, q := range []string{"date_from=2026-11-29&date_to=2026-11-29", "date_from=2026-11-29T12:00:00Z&date_to=2026-11-29"} {
			h.do("GET", "/v1/billing/payments?"+q, a.liveKey, nil).decode(200, nil)
		}
	})
}

// pageDoc mirrors api.Pagination for decoding.
type pageDoc struct {
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	Total      int64  `json:"total"`
	Pages      int    `json:"pages"`
	NextCursor string `json:"next_cursor"`
}

// prefsDoc mirrors api.Preferences for decoding.
type prefsDoc struct {
	BillingCycle    string `json:"billing_cycle"`
	AutoPay         bool   `json:"auto_pay"`
	PaymentMethodID string `json:"payment_method_id"`
	InvoiceDelivery string `json:"invoice_delivery"`
}

func TestConcurrentPaymentsThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	inv := newInvoice(t, h, a, mustService(t, h, a), 1, 250)
	const n = 8
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := fmt.Sprintf(`{"invoice_id":%q,"amount":250,"payment_method":{"card_token":"tok_visa"}}`, inv.ID)
			req := httptest.NewRequest("POST", "/v1/billing/payments", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.liveKey)
			res, err := h.srv.App.Test(req, -1)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses[i] = res.StatusCode
		}(i)
	}
	wg.Wait()
	created, conflicts := 0, 0
	for _, s := range statuses {
		switch s {
		case 201:
			created++
		case 409:
			conflicts++
		}
	}
	if created != 1 || conflicts != n-1 {
		t.Fatalf("statuses %v: want exactly one 201 and %d 409", statuses, n-1)
	}
	var got invoiceAnswer
	h.do("GET", "/v1/billing/invoices/"+inv.ID, a.liveKey, nil).decode(200, &got)
	if got.Invoice.Status != "paid" || got.Invoice.AmountPaid != 250 {
		t.Fatalf("invoice %+v", got.Invoice)
	}
}

// closedPeriod creates a monthly subscription of tn's service through the
// store and closes its first period, issuing its invoice.

// TestInvoiceAmountsStayBounded (attack): a customer cannot make totals
// overflow. An invoice above 1,000,000,000.00 before tax is refused; ten
// at that bound keep every total summed over them exact: the account's
// balance, the cost analysis, the cost analytics (they once wrapped to
// negative numbers or failed with 500).
func TestInvoiceAmountsStayBounded(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	line := map[string]any{"service_id": svc, "quantity": 1_000_000, "unit_price": 1000} // 1,000,000,000.00
	h.do("POST", "/v1/billing/invoices", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []any{line, line}}).
		wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	for range 10 {
		h.do("POST", "/v1/billing/invoices", a.liveKey, map[string]any{"account_id": a.account.ID, "services": []any{line}}).decode(http.StatusCreated, nil)
	}
	const want = 10 * 1_000_000_000.0
	var acct struct {
		Account struct {
			Balance float64 `json:"balance"`
		} `json:"account"`
	}
	h.do("GET", "/v1/billing/accounts/"+a.account.ID, a.liveKey, nil).decode(http.StatusOK, &acct)
	if acct.Account.Balance != want {
		t.Fatalf("balance %v, want %v", acct.Account.Balance, want)
	}
	h.do("GET", "/v1/billing/accounts", h.adminKey, nil).decode(http.StatusOK, nil)
	var c struct {
		CurrentMonth struct {
			Total float64 `json:"total"`
		} `json:"current_month"`
	}
	h.do("GET", "/v1/billing/cost-analysis", a.liveKey, nil).decode(http.StatusOK, &c)
	if c.CurrentMonth.Total < want {
		t.Fatalf("cost analysis total %v, want at least %v", c.CurrentMonth.Total, want)
	}
	h.do("GET", "/v1/analytics/costs?period=current_month", a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/billing/usage", a.liveKey, nil).decode(http.StatusOK, nil)
}

// TestInvoiceEventsKeepTwoDecimals: money in an event stays a number with
// two decimals once stored: the webhook payload built from the event log
// and the event list send 0.30 (not 0.3), and an invoice no subscription
// issued has subscription_id null (not "").
func TestInvoiceEventsKeepTwoDecimals(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	var inv invoiceAnswer
	h.do("POST", "/v1/billing/invoices", a.liveKey, map[string]any{"account_id": a.account.ID,
		"services": []map[string]any{{"service_id": svc, "quantity": 3, "unit_price": 0.10}}}).decode(http.StatusCreated, &inv)
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), inv.Invoice.ID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v %v", evs, err)
	}
	payload, err := webhooks.Payload(evs[0].ID, evs[0].Type, evs[0].CreatedAt, evs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	listed := h.do("GET", "/v1/events?type=invoice.created", a.liveKey, nil).decode(http.StatusOK, nil)
	for name, body := range map[string]string{"webhook payload": string(payload), "event list": string(listed.body)} {
		for _, want := range []string{`"amount":0.30`, `"amount_due":0.30`, `"amount_paid":0.00`, `"subscription_id":null`} {
			if !strings.Contains(body, want) {
				t.Fatalf("%s lacks %s: %s", name, want, body)
			}
		}
	}
}
