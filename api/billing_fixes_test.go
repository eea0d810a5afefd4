package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
)

// requestProperty returns the schema of a property of the JSON request body
// of operation opID in /openapi.json: path names properties, "[]" steps
// into an array's items; references are followed.
func requestProperty(t *testing.T, doc map[string]any, opID string, path ...string) map[string]any {
	t.Helper()
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		for range 20 {
			ref, ok := s["$ref"].(string)
			if !ok {
				return s
			}
			s, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return s
	}
	var cur map[string]any
	for _, item := range doc["paths"].(map[string]any) {
		for _, raw := range item.(map[string]any) {
			op, _ := raw.(map[string]any)
			if op == nil || op["operationId"] != opID {
				continue
			}
			body, _ := op["requestBody"].(map[string]any)
			media, _ := body["content"].(map[string]any)["application/json"].(map[string]any)
			cur, _ = media["schema"].(map[string]any)
		}
	}
	if cur == nil {
		t.Fatalf("no JSON request body for operation %s", opID)
	}
	for _, step := range path {
		cur = resolve(cur)
		if step == "[]" {
			cur, _ = cur["items"].(map[string]any)
		} else {
			props, _ := cur["properties"].(map[string]any)
			cur, _ = props[step].(map[string]any)
		}
		if cur == nil {
			t.Fatalf("%s: no %s in the request schema", opID, strings.Join(path, "."))
		}
	}
	return resolve(cur)
}

// TestBillingRequestSchemasStateRanges: the number ranges that billing
// enforces are in the request schemas of /openapi.json (docs/api.md),
// Money fields included, and a body outside them is 400 VALIDATION_ERROR
// naming the field.
func TestBillingRequestSchemasStateRanges(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var doc map[string]any
	h.do("GET", "/openapi.json", "", nil).decode(http.StatusOK, &doc)

	tests := []struct {
		op       string
		path     []string
		keywords map[string]any
	}{
		{"create-payment", []string{"amount"}, map[string]any{"exclusiveMinimum": true, "minimum": 0.0, "maximum": 100000000.0}},
		{"create-budget", []string{"amount"}, map[string]any{"exclusiveMinimum": true, "minimum": 0.0, "maximum": 100000000.0}},
		{"create-budget", []string{"thresholds"}, map[string]any{"minItems": 1.0, "maxItems": 10.0, "uniqueItems": true}},
		{"create-budget", []string{"thresholds", "[]"}, map[string]any{"minimum": 1.0, "maximum": 1000.0}},
		{"update-subscription", []string{"quantity"}, map[string]any{"minimum": 1.0, "maximum": 10000.0}},
		{"create-recurring-billing", []string{"services", "[]", "quantity"}, map[string]any{"minimum": 1.0, "maximum": 10000.0}},
		{"update-billing-preferences", []string{"tax_rate"}, map[string]any{"minimum": 0.0, "maximum": 100.0}},
		{"create-billing-account", []string{"tax_rate"}, map[string]any{"minimum": 0.0, "maximum": 100.0}},
	}
	for _, tc := range tests {
		t.Run(tc.op+" "+strings.Join(tc.path, "."), func(t *testing.T) {
			s := requestProperty(t, doc, tc.op, tc.path...)
			for k, want := range tc.keywords {
				if s[k] != want {
					t.Fatalf("%s = %v, want %v (schema %v)", k, s[k], want, s)
				}
			}
		})
	}

	svc := mustService(t, h, a)
	inv := newInvoice(t, h, a, svc, 1, 100)
	subs, _, err := billing.NewStore(h.store).CreateSubscriptions(context.Background(), tenantPrincipal(a), billing.RecurringInput{AccountID: a.account.ID,
		Services: []billing.RecurringItem{{ServiceID: svc}}})
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, method, path, key string
		body                    map[string]any
		field                   string
	}{
		{"a payment above the maximum", "POST", "/v1/billing/payments", a.liveKey,
			map[string]any{"invoice_id": inv.ID, "amount": 100000000.01, "payment_method": card("tok_visa")}, "amount"},
		{"a threshold of 0", "POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 10, "thresholds": []int{0}}, "thresholds[0]"},
		{"a threshold above 1000", "POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 10, "thresholds": []int{50, 1001}}, "thresholds[1]"},
		{"a threshold twice", "POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 10, "thresholds": []int{50, 50}}, "thresholds"},
		{"a quantity above 10000", "PUT", "/v1/billing/subscriptions/" + subs[0].ID, a.liveKey, map[string]any{"quantity": 10001}, "quantity"},
		{"a tax rate above 100", "PUT", "/v1/billing/accounts/" + a.account.ID + "/preferences", h.adminKey, map[string]any{"tax_rate": 100.01}, "tax_rate"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do(tc.method, tc.path, tc.key, tc.body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			fields, _ := e.Error.Details["fields"].([]any)
			if len(fields) != 1 || fields[0].(map[string]any)["field"] != tc.field {
				t.Fatalf("fields %+v, want one on %s", e.Error.Details, tc.field)
			}
		})
	}
	// The bounds themselves are accepted.
	h.do("POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 100000000, "thresholds": []int{1, 1000}}).decode(http.StatusCreated, nil)
	h.do("PUT", "/v1/billing/accounts/"+a.account.ID+"/preferences", h.adminKey, map[string]any{"tax_rate": 100}).decode(http.StatusOK, nil)
	h.do("PUT", "/v1/billing/accounts/"+a.account.ID+"/preferences", h.adminKey, map[string]any{"tax_rate": 0}).decode(http.StatusOK, nil)
}

// TestBillingConflictDetails: the 409 answers carry the details
// docs/billing.md lists: DUPLICATE_PAYMENT of a paid invoice {invoice_id,
// status, amount_due, processing_amount, requested_amount}, and
// INVALID_STATE_TRANSITION of cancelling a partly paid invoice {from, to,
// allowed} (and amount_paid).
func TestBillingConflictDetails(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)

	paid := newInvoice(t, h, a, svc, 1, 40)
	h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": paid.ID, "amount": 40, "payment_method": card("tok_visa")}).decode(http.StatusCreated, nil)
	e := h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": paid.ID, "amount": 12.5, "payment_method": card("tok_visa")}).
		wantError(http.StatusConflict, "DUPLICATE_PAYMENT")
	want := map[string]any{"invoice_id": paid.ID, "status": "paid", "amount_due": 0.0, "processing_amount": 0.0, "requested_amount": 12.5}
	for k, v := range want {
		if e.Error.Details[k] != v {
			t.Fatalf("details.%s = %v, want %v: %+v", k, e.Error.Details[k], v, e.Error.Details)
		}
	}
	// More than is due names the same details.
	open := newInvoice(t, h, a, svc, 1, 30)
	e = h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": open.ID, "amount": 31, "payment_method": card("tok_visa")}).
		wantError(http.StatusConflict, "DUPLICATE_PAYMENT")
	want = map[string]any{"invoice_id": open.ID, "status": "pending", "amount_due": 30.0, "processing_amount": 0.0, "requested_amount": 31.0}
	for k, v := range want {
		if e.Error.Details[k] != v {
			t.Fatalf("details.%s = %v, want %v: %+v", k, e.Error.Details[k], v, e.Error.Details)
		}
	}

	h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": open.ID, "amount": 5, "payment_method": card("tok_visa")}).decode(http.StatusCreated, nil)
	e = h.do("POST", "/v1/billing/invoices/"+open.ID+"/cancel", h.adminKey, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	if e.Error.Details["from"] != "pending" || e.Error.Details["to"] != "cancelled" || e.Error.Details["amount_paid"] != 5.0 ||
		fmt.Sprint(e.Error.Details["allowed"]) != "[paid overdue]" {
		t.Fatalf("details %+v", e.Error.Details)
	}
	e = h.do("POST", "/v1/billing/invoices/"+paid.ID+"/cancel", h.adminKey, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	if e.Error.Details["from"] != "paid" || e.Error.Details["to"] != "cancelled" || fmt.Sprint(e.Error.Details["allowed"]) != "[]" {
		t.Fatalf("details %+v", e.Error.Details)
	}
	// Paying a cancelled invoice names the move too.
	voided := newInvoice(t, h, a, svc, 1, 10)
	h.do("POST", "/v1/billing/invoices/"+voided.ID+"/cancel", h.adminKey, nil).decode(http.StatusOK, nil)
	e = h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": voided.ID, "amount": 1, "payment_method": card("tok_visa")}).
		wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	if e.Error.Details["from"] != "cancelled" || e.Error.Details["to"] != "paid" || fmt.Sprint(e.Error.Details["allowed"]) != "[]" {
		t.Fatalf("details %+v", e.Error.Details)
	}
}

// TestUsageEstimateCountsSLACredits: an invoice that an SLA credit brings
// to zero adds nothing to estimate.one_time_charges (nor to
// estimated_monthly_cost), as in cost-analysis and the invoice's total.
func TestUsageEstimateCountsSLACredits(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	svc := pricedService(t, h, a, 100_00)
	if _, created, err := billing.NewStore(h.store).IssueSLACredit(ctx, models.TenantScope(a.org.ID, models.EnvLive), billing.SLACreditInput{ServiceID: svc,
		TicketID: "tkt_fix1", SourceKey: "ticket:tkt_fix1:cycle:1:resolution", PercentBP: 1000, Reason: "resolution target missed"}); err != nil || !created {
		t.Fatalf("%v %v", created, err)
	}
	credited := newInvoice(t, h, a, svc, 1, 10)
	if len(credited.Services) != 2 || credited.Services[1].Amount != -10 || credited.Amount != 0 || credited.Status != "paid" {
		t.Fatalf("invoice %+v", credited)
	}
	type usage struct {
		EstimatedMonthlyCost float64 `json:"estimated_monthly_cost"`
		Estimate             struct {
			OneTimeCharges float64 `json:"one_time_charges"`
		} `json:"estimate"`
	}
	var costs struct {
		CurrentMonth struct {
			Total float64 `json:"total"`
		} `json:"current_month"`
	}
	var u usage
	h.do("GET", "/v1/billing/usage", a.liveKey, nil).decode(http.StatusOK, &u)
	h.do("GET", "/v1/billing/cost-analysis", a.liveKey, nil).decode(http.StatusOK, &costs)
	if u.Estimate.OneTimeCharges != 0 || u.EstimatedMonthlyCost != 0 || costs.CurrentMonth.Total != 0 {
		t.Fatalf("usage %+v, cost analysis %+v", u, costs)
	}
	newInvoice(t, h, a, svc, 2, 25)
	h.do("GET", "/v1/billing/usage", a.liveKey, nil).decode(http.StatusOK, &u)
	h.do("GET", "/v1/billing/cost-analysis", a.liveKey, nil).decode(http.StatusOK, &costs)
	if u.Estimate.OneTimeCharges != 50 || u.EstimatedMonthlyCost != 50 || costs.CurrentMonth.Total != 50 {
		t.Fatalf("usage %+v, cost analysis %+v", u, costs)
	}
}

// TestDemoPaidInvoiceIsLastMonths: the demo sandbox's paid invoice is
// issued and paid in the calendar month before the seeding, by a
// credit_card payment method with an id, so the demo's cost analysis has a
// last month and a growth (docs/sandbox.md).
func TestDemoPaidInvoiceIsLastMonths(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	seeded, err := seed.NewStore(h.store).Seed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := seed.NewStore(h.store).SeedDemoData(ctx, seeded); err != nil {
			t.Fatal(err)
		}
	}
	key := "sk_test_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(ctx, seeded.Demo.ID, key, "demo", models.RoleCustomer, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	lastMonth := billing.MonthKey(billing.MonthStart(time.Now().UTC()).AddDate(0, -1, 0))
	inMonth := func(ts, what string) {
		t.Helper()
		at, err := time.Parse(time.RFC3339, ts)
		if err != nil || billing.MonthKey(at) != lastMonth {
			t.Fatalf("%s %q is not in %s (%v)", what, ts, lastMonth, err)
		}
	}
	var inv invoiceAnswer
	h.do("GET", "/v1/billing/invoices/"+seed.DemoInvoicePaid, key, nil).decode(http.StatusOK, &inv)
	if inv.Invoice.Status != "paid" || inv.Invoice.PaidDate == nil || inv.Invoice.AmountDue != 0 {
		t.Fatalf("invoice %+v", inv.Invoice)
	}
	inMonth(inv.Invoice.IssuedAt, "issued_at")
	inMonth(*inv.Invoice.PaidDate, "paid_date")

	var pays struct {
		Payments []struct {
			PaymentID     string  `json:"payment_id"`
			Status        string  `json:"status"`
			ProcessedAt   *string `json:"processed_at"`
			CreatedAt     string  `json:"created_at"`
			PaymentMethod struct {
				ID, Type, Brand, Last4 string
			} `json:"payment_method"`
		} `json:"payments"`
	}
	h.do("GET", "/v1/billing/payments?invoice_id="+seed.DemoInvoicePaid, key, nil).decode(http.StatusOK, &pays)
	if len(pays.Payments) != 1 {
		t.Fatalf("payments %+v", pays)
	}
	p := pays.Payments[0]
	if p.Status != "successful" || p.PaymentMethod.ID != seed.DemoPaymentMethod || p.PaymentMethod.Type != "credit_card" ||
		p.PaymentMethod.Brand != "visa" || p.PaymentMethod.Last4 != "4242" || p.ProcessedAt == nil {
		t.Fatalf("payment %+v", p)
	}
	inMonth(p.CreatedAt, "payment created_at")
	inMonth(*p.ProcessedAt, "payment processed_at")

	var costs struct {
		LastMonth float64 `json:"last_month"`
		Trends    struct {
			MonthlyGrowth *float64 `json:"monthly_growth"`
		} `json:"trends"`
	}
	h.do("GET", "/v1/billing/cost-analysis", key, nil).decode(http.StatusOK, &costs)
	if costs.LastMonth != 1947 || costs.Trends.MonthlyGrowth == nil || *costs.Trends.MonthlyGrowth != 0 {
		t.Fatalf("cost analysis %+v", costs)
	}
}

// TestAmountErrorsNameTheirField: an amount with more than two decimals, or
// with an exponent, passes the schema (a number) and is refused by the
// amount's own type; the error names the field (its JSON path) and the rule.
func TestAmountErrorsNameTheirField(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	cases := []struct {
		name, path string
		body       map[string]any
		field      string
		issue      string
	}{
		{"three decimals", "/v1/billing/payments", map[string]any{"invoice_id": "inv_x", "amount": 12.345, "currency": "USD", "payment_method": card("tok_visa")},
			"amount", "at most two decimals"},
		{"an exponent", "/api/v1/billing/payments", map[string]any{"invoice_id": "inv_x", "amount": json.RawMessage("1.5e2"), "currency": "USD", "payment_method": card("tok_visa")},
			"amount", "without an exponent"},
		{"nested", "/v1/billing/invoices", map[string]any{"account_id": a.account.ID, "services": []any{map[string]any{"service_id": svc, "quantity": 1, "unit_price": 0.001}}},
			"services.unit_price", "at most two decimals"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", tc.path, a.liveKey, tc.body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			fields, _ := e.Error.Details["fields"].([]any)
			if len(fields) != 1 {
				t.Fatalf("fields %+v", e.Error.Details)
			}
			f, _ := fields[0].(map[string]any)
			if f["field"] != tc.field || !strings.Contains(fmt.Sprint(f["issue"]), tc.issue) || !strings.HasPrefix(e.Error.Message, tc.field+": ") {
				t.Fatalf("error %+v", e.Error)
			}
		})
	}
}
