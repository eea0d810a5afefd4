package api_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// quoteFixture stores a quote of tn (live) for an internet service and returns its id.
func quoteFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	var out struct {
		Quote struct {
			ID string `json:"id"`
		} `json:"quote"`
	}
	h.do("POST", "/v1/services/quotes", tn.liveKey, map[string]any{
		"services": []any{map[string]any{"type": "internet", "bandwidth": "1gbps", "sla": "premium", "location": "100 Congress Ave, Austin, TX 78701"}},
	}).decode(201, &out)
	return out.Quote.ID
}

type quoteDoc struct {
	Quote struct {
		ID              string `json:"id"`
		Status          string `json:"status"`
		AccountID       string `json:"account_id"`
		Currency        string `json:"currency"`
		BillingCycle    string `json:"billing_cycle"`
		Term            string `json:"term"`
		DiscountPercent int    `json:"discount_percent"`
		Services        []struct {
			Type                   string   `json:"type"`
			ServiceType            string   `json:"service_type"`
			Quantity               int      `json:"quantity"`
			MissingForProvisioning []string `json:"missing_for_provisioning"`
			ServiceID              string   `json:"service_id"`
			Lines                  []struct {
				Description string  `json:"description"`
				Quantity    int     `json:"quantity"`
				UnitPrice   float64 `json:"unit_price"`
				Monthly     float64 `json:"monthly"`
				OneTime     float64 `json:"one_time"`
			} `json:"lines"`
			Pricing struct {
				MonthlySubtotal float64 `json:"monthly_subtotal"`
				Discount        float64 `json:"discount"`
				Monthly         float64 `json:"monthly"`
				OneTime         float64 `json:"one_time"`
			} `json:"pricing"`
		} `json:"services"`
		Totals struct {
			OneTime         float64 `json:"one_time"`
			MonthlySubtotal float64 `json:"monthly_subtotal"`
			MonthlyDiscount float64 `json:"monthly_discount"`
			Monthly         float64 `json:"monthly"`
			PerBillingCycle float64 `json:"per_billing_cycle"`
			TermTotal       float64 `json:"term_total"`
		} `json:"totals"`
		CreatedAt string `json:"created_at"`
		ExpiresAt string `json:"expires_at"`
	} `json:"quote"`
}

func TestQuotes(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	body := map[string]any{
		"services": []any{
			map[string]any{"type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium", "location": "100 Congress Ave, Austin, TX 78701"},
			map[string]any{"type": "phone_system", "system_type": "cloud_pbx", "users": 50, "features": []string{"auto_attendant", "voicemail_to_email", "conference_bridge"},
				"phone_numbers": []any{map[string]any{"type": "local", "area_code": "512", "quantity": 10}, map[string]any{"type": "toll_free", "quantity": 2}}},
		},
		"billing_preferences": map[string]any{"cycle": "quarterly", "term": "36_months"},
	}
	var q quoteDoc
	res := h.do("POST", "/api/v1/services/quotes", a.liveKey, body)
	res.decode(201, &q)
	qq := q.Quote
	if !models.HasPrefix(qq.ID, "quo") || qq.Status != "open" || qq.AccountID != a.account.ID || qq.Currency != "USD" || qq.Term != "36_months" ||
		qq.DiscountPercent != 15 || qq.BillingCycle != "quarterly" || len(qq.Services) != 2 {
		t.Fatalf("quote %s", res.body)
	}
	created, _ := time.Parse(time.RFC3339, qq.CreatedAt)
	expires, _ := time.Parse(time.RFC3339, qq.ExpiresAt)
	if d := expires.Sub(created); d < 30*24*time.Hour-time.Second || d > 30*24*time.Hour+time.Second {
		t.Fatalf("valid for %v", d)
	}
	inet, pbx := qq.Services[0], qq.Services[1]
	// internet: 299.00 doubled twice (1gbps is the third option) × 125 % (premium); setup 500.00
	if inet.Type != "internet" || inet.ServiceType != "fiber_dedicated" || inet.Lines[0].UnitPrice != 1495 || inet.Pricing.MonthlySubtotal != 1495 ||
		inet.Pricing.Discount != 224.25 || inet.Pricing.Monthly != 1270.75 || inet.Pricing.OneTime != 500 || len(inet.MissingForProvisioning) != 0 {
		t.Fatalf("internet %+v", inet)
	}
	// phone: 19.99 × 50 users, 10 local numbers at 1.00, 2 toll-free at 2.00, conference bridge 1.50 × 50
	if pbx.Quantity != 50 || pbx.Pricing.MonthlySubtotal != 1088.5 || pbx.Pricing.Discount != 163.28 || pbx.Pricing.OneTime != 0 {
		t.Fatalf("phone %+v", pbx)
	}
	tot := qq.Totals
	if tot.MonthlySubtotal != 2583.5 || tot.MonthlyDiscount != 387.53 || tot.Monthly != 2195.97 || tot.OneTime != 500 ||
		tot.PerBillingCycle != 6587.91 || tot.TermTotal != 79554.92 {
		t.Fatalf("totals %+v", tot)
	}
	var got quoteDoc
	h.do("GET", "/v1/services/quotes/"+qq.ID, a.liveKey, nil).decode(200, &got)
	if got.Quote.ID != qq.ID || got.Quote.Totals != qq.Totals {
		t.Fatalf("get %+v", got)
	}
	h.do("GET", "/v1/services/quotes/"+qq.ID, h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/services/quotes/"+qq.ID, a.testKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/services/quotes/quo_unknown", a.liveKey, nil).wantError(404, "NOT_FOUND")

	t.Run("terms", func(t *testing.T) {
		for term, pct := range map[string]int{"1_month": 0, "11_months": 0, "12_months": 5, "24_months": 10, "60_months": 15} {
			var q quoteDoc
			h.do("POST", "/v1/services/quotes", a.liveKey, map[string]any{"services": []any{map[string]any{"type": "ai_platform"}},
				"billing_preferences": map[string]any{"term": term}}).decode(201, &q)
			if q.Quote.DiscountPercent != pct || len(q.Quote.Services[0].MissingForProvisioning) != 3 {
				t.Fatalf("%s: %+v", term, q.Quote)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		for name, tc := range map[string]struct {
			body   map[string]any
			status int
			code   string
			field  string
		}{
			"no services":            {map[string]any{"services": []any{}}, 400, "VALIDATION_ERROR", "services"},
			"unknown type":           {map[string]any{"services": []any{map[string]any{"type": "dialup"}}}, 400, "VALIDATION_ERROR", "services[0].type"},
			"bad bandwidth":          {map[string]any{"services": []any{map[string]any{"type": "fiber_business", "bandwidth": "1Gbps"}}}, 400, "VALIDATION_ERROR", "services[0].bandwidth"},
			"bad term":               {map[string]any{"services": []any{map[string]any{"type": "internet"}}, "billing_preferences": map[string]any{"term": "3_years"}}, 400, "VALIDATION_ERROR", "billing_preferences.term"},
			"bad cycle":              {map[string]any{"services": []any{map[string]any{"type": "internet"}}, "billing_preferences": map[string]any{"cycle": "weekly"}}, 400, "VALIDATION_ERROR", "billing_preferences.cycle"},
			"no users":               {map[string]any{"services": []any{map[string]any{"type": "phone_system", "users": 0}}}, 400, "VALIDATION_ERROR", "services[0].users"},
			"no agents":              {map[string]any{"services": []any{map[string]any{"type": "contact_center", "users": 0}}}, 400, "VALIDATION_ERROR", "services[0].users"},
			"several internet units": {map[string]any{"services": []any{map[string]any{"type": "fiber_dedicated", "quantity": 5}}}, 400, "VALIDATION_ERROR", "services[0].quantity"},
			"several SOCs":           {map[string]any{"services": []any{map[string]any{"type": "managed_security", "quantity": 3}}}, 400, "VALIDATION_ERROR", "services[0].quantity"},
			"AI by quantity":         {map[string]any{"services": []any{map[string]any{"type": "ai_platform", "quantity": 3}}}, 400, "VALIDATION_ERROR", "services[0].quantity"},
			"cycle beyond term":      {map[string]any{"services": []any{map[string]any{"type": "internet"}}, "billing_preferences": map[string]any{"cycle": "annual", "term": "6_months"}}, 400, "VALIDATION_ERROR", "billing_preferences.cycle"},
			"unknown field":          {map[string]any{"services": []any{map[string]any{"type": "cloud_platform", "colour": "blue"}}}, 400, "VALIDATION_ERROR", "services[0]"},
			"bad location":           {map[string]any{"services": []any{map[string]any{"type": "internet", "location": "somewhere"}}}, 400, "VALIDATION_ERROR", "services[0].location"},
			"second item bad":        {map[string]any{"services": []any{map[string]any{"type": "internet"}, map[string]any{"type": "phone_system", "users": -1}}}, 400, "VALIDATION_ERROR", "services[1].users"},
			"outside the area":       {map[string]any{"services": []any{map[string]any{"type": "internet", "location": "9 Nowhere Rd, Austin, TX 78799"}}}, 422, "LOCATION_NOT_SERVICEABLE", ""},
			"not at location":        {map[string]any{"services": []any{map[string]any{"type": "fiber_dedicated", "location": "loc_denver_lincoln"}}}, 422, "SERVICE_UNAVAILABLE_AT_LOCATION", ""},
		} {
			t.Run(name, func(t *testing.T) {
				e := h.do("POST", "/v1/services/quotes", a.liveKey, tc.body).wantError(tc.status, tc.code)
				if tc.field != "" && !strings.Contains(string(mustMarshal(e.Error.Details)), `"field":"`+tc.field) {
					t.Fatalf("want an issue for %s: %v", tc.field, e.Error.Details)
				}
			})
		}
	})

	t.Run("provisioning from a quote", func(t *testing.T) {
		var input workflows.ProvisioningInput
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ProvisioningWorkflow, mock.Anything).
			Run(func(args mock.Arguments) { input = args.Get(3).(workflows.ProvisioningInput) }).Return(mocks.NewWorkflowRun(t), nil)
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID}).wantError(400, "VALIDATION_ERROR") // two services: which?
		when := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Second)
		var acc operationDoc
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 1, "name": "Main PBX",
			"contacts":            map[string]any{"technical": "noc@example.com"},
			"deployment_schedule": map[string]any{"preferred_date": when.Format(time.RFC3339), "flexibility": "2_days"}}).decode(202, &acc)
		o := input.Order
		if o.Source != "quote" || o.QuoteID != qq.ID || o.QuoteItem != 1 || o.Kind != "phone_system" || o.MonthlyCharge.Float() != pbx.Pricing.Monthly ||
			o.TermMonths != 36 || o.Name != "Main PBX" || o.TechnicalContact != "noc@example.com" || !input.Scheduled || len(o.Numbers) != 2 {
			t.Fatalf("order %+v", o)
		}
		e := h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 1}).wantError(409, "SERVICE_CONFLICT")
		if e.Error.Details["existing_service_id"] != acc.ServiceID {
			t.Fatalf("details %v", e.Error.Details)
		}
		h.do("POST", "/v1/services", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 0}).decode(202, &acc)
		if input.Order.Kind != "internet" || input.Order.LocationID != "loc_austin_congress" || input.Order.MonthlyCharge.Float() != inet.Pricing.Monthly {
			t.Fatalf("order %+v", input.Order)
		}
		h.do("GET", "/v1/services/quotes/"+qq.ID, a.liveKey, nil).decode(200, &got)
		if got.Quote.Status != "ordered" || got.Quote.Services[0].ServiceID != acc.ServiceID {
			t.Fatalf("quote %+v", got.Quote)
		}
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 0}).wantError(409, "INVALID_STATE_TRANSITION")
		// Ordered, but that service's provisioning failed: it may be ordered again.
		sys := h.store.In(context.Background(), models.SystemScope())
		if err := sys.Model(&operations.Operation{}).Where("id = ?", acc.RequestID).Update("status", operations.OpFailed).Error; err != nil {
			t.Fatal(err)
		}
		if err := sys.Model(&services.Service{}).Where("id = ?", acc.ServiceID).Update("status", services.ServiceFailed).Error; err != nil {
			t.Fatal(err)
		}
		var again operationDoc
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 0}).decode(202, &again)
		if again.RequestID == acc.RequestID {
			t.Fatalf("the failed order answered again: %+v", again)
		}
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": qq.ID, "quote_item": 0}).wantError(409, "INVALID_STATE_TRANSITION")

		var partial quoteDoc
		h.do("POST", "/v1/services/quotes", a.liveKey, map[string]any{"services": []any{map[string]any{"type": "internet", "bandwidth": "100mbps"}}}).decode(201, &partial)
		if m := partial.Quote.Services[0].MissingForProvisioning; strings.Join(m, ",") != "service_type,sla,location" {
			t.Fatalf("missing %v", m)
		}
		e = h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": partial.Quote.ID}).wantError(400, "VALIDATION_ERROR")
		if !strings.Contains(string(mustMarshal(e.Error.Details)), "quote.services[0].location") {
			t.Fatalf("details %v", e.Error.Details)
		}
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": partial.Quote.ID, "customizations": map[string]any{"bandwidth": "1gbps"}}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": "quo_unknown"}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/services/provision", h.tenants[1].liveKey, map[string]any{"quote_id": partial.Quote.ID}).wantError(400, "VALIDATION_ERROR")

		var fresh quoteDoc
		h.do("POST", "/v1/services/quotes", a.liveKey, map[string]any{"services": []any{map[string]any{"type": "managed_security", "service_type": "managed_soc",
			"coverage": "business_hours", "services": []string{"threat_monitoring"}}}}).decode(201, &fresh)
		if err := h.store.DB.WithContext(context.Background()).Exec("UPDATE quotes SET expires_at = ? WHERE id = ?", time.Now().UTC().Add(-time.Minute), fresh.Quote.ID).Error; err != nil {
			t.Fatal(err)
		}
		h.do("POST", "/v1/services/provision", a.liveKey, map[string]any{"quote_id": fresh.Quote.ID}).wantError(409, "INVALID_STATE_TRANSITION")
		h.do("GET", "/v1/services/quotes/"+fresh.Quote.ID, a.liveKey, nil).decode(200, &got)
		if got.Quote.Status != "expired" {
			t.Fatalf("status %s", got.Quote.Status)
		}
	})
}

// TestQuoteReadsItsAccountOnce: a quote reads its billing account once,
// whether it names it or takes the organization's default; another
// organization's account is still refused.
func TestQuoteReadsItsAccountOnce(t *testing.T) {
	h := newHarness(t)
	tn := h.tenants[0]
	var reads atomic.Int64
	const name = "test:count_quote_account_reads"
	if err := h.store.DB.Callback().Query().After("gorm:query").Register(name, func(db *gorm.DB) {
		if db.Statement.Table == "billing_accounts" {
			reads.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.store.DB.Callback().Query().Remove(name) })
	item := map[string]any{"type": "internet", "bandwidth": "1gbps", "sla": "premium", "location": "100 Congress Ave, Austin, TX 78701"}
	for _, account := range []string{"", tn.account.ID} {
		reads.Store(0)
		body := map[string]any{"services": []any{item}}
		if account != "" {
			body["account_id"] = account
		}
		var q quoteDoc
		h.do("POST", "/v1/services/quotes", tn.liveKey, body).decode(201, &q)
		if q.Quote.AccountID != tn.account.ID {
			t.Fatalf("account_id %q: the quote is for %s, want %s", account, q.Quote.AccountID, tn.account.ID)
		}
		if n := reads.Load(); n != 1 {
			t.Fatalf("account_id %q: the account was read %d times, want once", account, n)
		}
	}
	e := h.do("POST", "/v1/services/quotes", tn.liveKey, map[string]any{"account_id": h.tenants[1].account.ID, "services": []any{item}}).
		wantError(400, string(models.CodeValidation))
	if !strings.Contains(e.Error.Message, "account_id") {
		t.Fatalf("another organization's account: %+v", e.Error)
	}
}
