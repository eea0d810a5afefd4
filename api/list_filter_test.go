package api_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
)

// filterIDs lists path?query with key and returns the sorted values of
// idKey of the items under listKey.
func filterIDs(t *testing.T, h *harness, key, path, query, listKey, idKey string) []string {
	t.Helper()
	var body map[string]json.RawMessage
	h.do("GET", path+"?"+query, key, nil).decode(200, &body)
	var items []map[string]any
	if err := json.Unmarshal(body[listKey], &items); err != nil {
		t.Fatalf("%s?%s: %v", path, query, err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it[idKey].(string))
	}
	slices.Sort(out)
	return out
}

func sortedIDs(ids ...string) []string { slices.Sort(ids); return ids }

// filterCase is a filter and the ids it should select.
type filterCase struct {
	expr string
	want []string
}

// checkFilters runs each case (filter= expr, after extra) and each bad
// filter, which must be 400 VALIDATION_ERROR at its position.
func checkFilters(t *testing.T, h *harness, key, path, listKey, idKey string, cases []filterCase, bad map[string]float64) {
	t.Helper()
	for _, c := range cases {
		if got := filterIDs(t, h, key, path, "filter="+url.QueryEscape(c.expr), listKey, idKey); !slices.Equal(got, c.want) {
			t.Errorf("%s filter=%s: %v, want %v", path, c.expr, got, c.want)
		}
	}
	for expr, pos := range bad {
		e := h.do("GET", path+"?filter="+url.QueryEscape(expr), key, nil).wantError(400, "VALIDATION_ERROR")
		if e.Error.Details["position"] != pos || e.Error.Details["field"] != "filter" {
			t.Errorf("%s %q: details %v, want position %v", path, expr, e.Error.Details, pos)
		}
	}
}

// filterService stores a service of tn (live) like mustService's, changed by edit.
func filterService(t *testing.T, h *harness, tn tenant, edit func(*services.Service)) string {
	t.Helper()
	now := time.Now().UTC()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: tn.account.ID, Name: "Dedicated Fiber Internet", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &now, StatusChangedAt: now,
		MonthlyCharge: 49999, Currency: "USD"}
	if edit != nil {
		edit(svc)
	}
	if err := h.store.In(context.Background(), models.TenantScope(tn.org.ID, models.EnvLive)).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	return svc.ID
}

func TestServicesFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	fiber := filterService(t, h, a, nil)
	small := filterService(t, h, a, func(s *services.Service) {
		s.Name, s.Status, s.BandwidthMbps, s.Bandwidth, s.MonthlyCharge, s.City, s.State, s.Zip = "Branch broadband", services.ServiceDegraded, 100, "100mbps", 9950, "Dallas", "TX", "75201"
		s.LocationID = "loc_dallas_main"
	})
	pending := filterService(t, h, a, func(s *services.Service) {
		s.Name, s.Kind, s.ServiceType, s.Status, s.ActivatedAt, s.BandwidthMbps = "Front desk phones", "phone_system", "hosted_pbx", services.ServicePending, nil, 0
	})
	filterService(t, h, h.tenants[1], nil) // another organization's: never listed

	checkFilters(t, h, a.liveKey, "/v1/services", "services", "id", []filterCase{
		{"bandwidth_mbps >= 1000", sortedIDs(fiber)},
		{"status in (operational, degraded) and monthly_charge < 100.00", sortedIDs(small)},
		{`type = internet and city ~ "DALL"`, sortedIDs(small)},
		{"activated_at is null or service_type = hosted_pbx", sortedIDs(pending)},
		{"state = TX and not (status = pending) and created_at > 2000-01-01", sortedIDs(fiber, small)},
		{"account_id = " + a.account.ID + " and location_id != loc_dallas_main", sortedIDs(fiber, pending)},
		{"created_at < 2000-01-01T00:00:00Z", nil},
	}, map[string]float64{
		"status = broken":          9,
		"colour = red":             0,
		"bandwidth_mbps ~ 10":      15,
		"monthly_charge > 1.005":   17,
		"name ~ fiber and (a = 1":  23,
		"type in (internet, dial)": 19,
	})
	// filter combines with the other parameters by and.
	if got := filterIDs(t, h, a.liveKey, "/v1/services", "status=operational,pending&filter="+url.QueryEscape("name ~ fiber or name ~ desk"), "services", "id"); !slices.Equal(got, sortedIDs(fiber, pending)) {
		t.Errorf("status and filter: %v", got)
	}
}

func TestInvoicesAndPaymentsFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	big := newInvoice(t, h, a, svc, 1, 300)
	smallInv := newInvoice(t, h, a, svc, 1, 20)
	paid := newInvoice(t, h, a, svc, 1, 50)
	bSvc := mustService(t, h, h.tenants[1])
	newInvoice(t, h, h.tenants[1], bSvc, 1, 300) // another organization's
	var part, full paymentAnswer
	h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": big.ID, "amount": 100.5, "payment_method": card("tok_visa")}).decode(201, &part)
	h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": paid.ID, "amount": 50, "payment_method": card("tok_visa")}).decode(201, &full)
	e := h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": smallInv.ID, "amount": 20, "payment_method": card("tok_insufficient_funds")}).wantError(402, "INSUFFICIENT_FUNDS")
	failed, _ := e.Error.Details["payment_id"].(string)

	checkFilters(t, h, a.liveKey, "/v1/billing/invoices", "invoices", "id", []filterCase{
		{"amount >= 100", sortedIDs(big.ID)},
		{"status = paid and paid_at is not null", sortedIDs(paid.ID)},
		{"status = pending and amount_paid > 0", sortedIDs(big.ID)},
		{"paid_at is null and currency = USD and due_date > 2000-01-01", sortedIDs(big.ID, smallInv.ID)},
		{"amount in (20.00, 50) or number = nope", sortedIDs(smallInv.ID, paid.ID)},
		{"issued_at < 2000-01-01", nil},
	}, map[string]float64{
		"status = unpaid":  9,
		"amount > 1.234":   9,
		"due_date > soon":  11,
		"total > 1":        0,
		"amount ~ 1":       7,
		"paid_at = null":   10,
		"status = paid or": 16,
	})

	if failed == "" {
		t.Fatalf("no payment_id in %v", e.Error.Details)
	}
	checkFilters(t, h, a.liveKey, "/v1/billing/payments", "payments", "payment_id", []filterCase{
		{"status = failed", sortedIDs(failed)},
		{"status = successful and amount > 60", sortedIDs(part.PaymentID)},
		{"method = credit_card and amount <= 50", sortedIDs(full.PaymentID, failed)},
		{"invoice_id in (" + big.ID + ", " + paid.ID + ") and processed_at is not null", sortedIDs(part.PaymentID, full.PaymentID)},
		{"created_at > 2000-01-01 and currency != EUR", sortedIDs(part.PaymentID, full.PaymentID, failed)},
	}, map[string]float64{
		"status = declined": 9,
		"amount >= ten":     10,
		"brand = visa":      0,
	})
}

func TestEventsFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	svc := mustService(t, h, a)
	inv := newInvoice(t, h, a, svc, 1, 30)
	other := newInvoice(t, h, a, svc, 1, 40)
	bSvc := mustService(t, h, h.tenants[1])
	newInvoice(t, h, h.tenants[1], bSvc, 1, 30) // another organization's events
	var pay paymentAnswer
	h.do("POST", "/v1/billing/payments", a.liveKey, map[string]any{"invoice_id": inv.ID, "amount": 30, "payment_method": card("tok_visa")}).decode(201, &pay)

	types := func(expr string) []string {
		t.Helper()
		var l struct {
			Events []struct {
				Type       string `json:"type"`
				ResourceID string `json:"resource_id"`
			} `json:"events"`
		}
		h.do("GET", "/v1/events?limit=200&filter="+url.QueryEscape(expr), a.liveKey, nil).decode(200, &l)
		var out []string
		for _, e := range l.Events {
			out = append(out, e.Type+"@"+e.ResourceID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := types("type = invoice.created"), sortedIDs("invoice.created@"+inv.ID, "invoice.created@"+other.ID); !slices.Equal(got, want) {
		t.Errorf("type = invoice.created: %v, want %v", got, want)
	}
	if got, want := types(`resource_id = `+inv.ID+` and type ~ "CREATED"`), []string{"invoice.created@" + inv.ID}; !slices.Equal(got, want) {
		t.Errorf("resource_id and type ~: %v, want %v", got, want)
	}
	if got := types("resource_id in (" + pay.PaymentID + ") and created_at > 2000-01-01"); len(got) == 0 || !slices.Contains(got, "payment.successful@"+pay.PaymentID) {
		t.Errorf("resource_id in: %v", got)
	}
	if got := types("created_at < 2000-01-01"); len(got) != 0 {
		t.Errorf("created_at < 2000: %v", got)
	}
	for expr, pos := range map[string]float64{"kind = x": 0, "created_at > later": 13, "resource_id ~ inv": 12, "(type = a": 9} {
		e := h.do("GET", "/v1/events?filter="+url.QueryEscape(expr), a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		if e.Error.Details["position"] != pos || e.Error.Details["field"] != "filter" {
			t.Errorf("%q: details %v, want position %v", expr, e.Error.Details, pos)
		}
	}
}
