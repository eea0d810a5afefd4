package integration

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// startBillingPlatform starts the platform with the demo tenant's sandbox
// key, a 5 s webhook attempt timeout and the real retry schedule.
func startBillingPlatform(t *testing.T) *platform {
	t.Helper()
	return startPlatform(t, platformOptions{queuePrefix: "billing", webhookTimeout: 5 * time.Second, realRetries: true, keys: demoTestKey})
}

type billingInvoice struct {
	ID             string  `json:"id"`
	Status         string  `json:"status"`
	Amount         float64 `json:"amount"`
	Subtotal       float64 `json:"subtotal"`
	AmountDue      float64 `json:"amount_due"`
	Source         string  `json:"source"`
	SubscriptionID string  `json:"subscription_id"`
	Services       []struct {
		ServiceID string  `json:"service_id"`
		Amount    float64 `json:"amount"`
		Kind      string  `json:"kind"`
	} `json:"services"`
}

// waitUntil polls until cond holds, failing after a minute.
func (p *platform) waitUntil(what string, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBillingEndToEnd provisions a sandbox service, subscribes it on a
// two-second sandbox cycle, lets the workflow close periods and issue
// invoices, pays one by hand and lets auto-pay pay the next, cancels the
// subscription, reads usage and cost analysis that match the invoices, and
// checks that a webhook receiver got the billing events, signed.
func TestBillingEndToEnd(t *testing.T) {
	p := startBillingPlatform(t)
	ctx := context.Background()
	key := p.testKey
	scope := models.TenantScope(p.demo.Demo.ID, models.EnvTest)

	var accts struct {
		Accounts []struct{ ID string } `json:"accounts"`
	}
	if status := p.do("GET", "/v1/billing/accounts", key, nil, &accts); status != 200 || len(accts.Accounts) == 0 {
		t.Fatalf("sandbox accounts: %d %+v", status, accts)
	}
	acct := accts.Accounts[0].ID

	// A receiver of the billing events, verifying every signature.
	const secret = "whsec_YmlsbGluZy1pbnRlZ3JhdGlvbi1yZWNlaXZlci1zZWNyZXQ="
	hooks := newHookReceiver(t, func(string, int) int { return http.StatusNoContent }, secret)
	if status := p.do("POST", "/api/v1/billing/webhooks", key, map[string]any{"url": hooks.srv.URL, "secret": secret,
		"events": []string{"invoice.*", "payment.*", "subscription.*", "usage.*"}}, nil); status != http.StatusCreated {
		t.Fatalf("billing webhook: %d", status)
	}

	// A service, provisioned in the sandbox.
	var acc accepted
	if status := p.do("POST", "/v1/services/provision", key, map[string]any{"service_template": "internet-business-100m", "location_id": "loc_sandbox_all", "account_id": acct}, &acc); status != 202 {
		t.Fatalf("provision: %d", status)
	}
	if op := p.poll(acc.StatusURL, key, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		t.Fatalf("provisioning %+v", op)
	}
	svc := acc.ServiceID

	var pm struct {
		PaymentMethod struct{ ID string } `json:"payment_method"`
	}
	if status := p.do("POST", "/v1/billing/accounts/"+acct+"/payment-methods", key, map[string]any{"card_token": "tok_visa", "set_default": true,
		"billing_address": map[string]any{"street": "1 Sandbox Way", "city": "Testville", "state": "CA", "zip": "94000", "country": "US"}}, &pm); status != 201 {
		t.Fatalf("payment method: %d", status)
	}

	// Subscribe it on a two-second sandbox cycle.
	var subs struct {
		Subscriptions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"subscriptions"`
	}
	if status := p.do("POST", "/api/v1/billing/recurring", key, map[string]any{"account_id": acct,
		"services": []map[string]any{{"service_id": svc, "billing_cycle": "sandbox_2s", "auto_renew": true}}}, &subs); status != 201 || len(subs.Subscriptions) != 1 {
		t.Fatalf("recurring: %d %+v", status, subs)
	}
	sub := subs.Subscriptions[0].ID
	listInvoices := func() []billingInvoice {
		var list struct {
			Invoices []billingInvoice `json:"invoices"`
		}
		if status := p.do("GET", "/api/v1/billing/invoices?account_id="+acct, key, nil, &list); status != 200 {
			t.Fatalf("invoices: %d", status)
		}
		return list.Invoices
	}

	// The cycle ends: the workflow issues the period's invoice.
	var first billingInvoice
	p.waitUntil("the first invoice", func() bool {
		invs := listInvoices()
		if len(invs) == 0 {
			return false
		}
		first = invs[len(invs)-1] // oldest
		return true
	})
	// A period costs the service's own monthly charge (its pricing), not the
	// catalog's starting price (89.00).
	var priced struct {
		Service struct {
			Pricing struct {
				MonthlyCharge float64 `json:"monthly_charge"`
			} `json:"pricing"`
		} `json:"service"`
	}
	if status := p.do("GET", "/v1/services/"+svc, key, nil, &priced); status != 200 || priced.Service.Pricing.MonthlyCharge <= 0 {
		t.Fatalf("the service's pricing: %d %+v", status, priced)
	}
	if first.Status != "pending" || first.Source != "subscription" || first.SubscriptionID != sub || first.Amount != priced.Service.Pricing.MonthlyCharge || first.Amount == 89 ||
		len(first.Services) != 1 || first.Services[0].ServiceID != svc || first.Services[0].Kind != "recurring" {
		t.Fatalf("first invoice %+v", first)
	}
	var st struct {
		Subscription struct {
			Status        string `json:"status"`
			PeriodsBilled int    `json:"periods_billed"`
		} `json:"subscription"`
	}
	p.do("GET", "/v1/billing/subscriptions/"+sub, key, nil, &st)
	if st.Subscription.Status != "active" || st.Subscription.PeriodsBilled < 1 {
		t.Fatalf("subscription %+v", st.Subscription)
	}

	// A budget the first invoice already exceeds, and a declined card.
	if status := p.do("POST", "/v1/billing/budgets", key, map[string]any{"account_id": acct, "amount": 10, "thresholds": []int{100}}, nil); status != 201 {
		t.Fatalf("budget: %d", status)
	}
	if status := p.do("POST", "/v1/billing/payments", key, map[string]any{"invoice_id": first.ID, "amount": first.Amount,
		"payment_method": map[string]any{"card_token": "tok_declined"}}, nil); status != 400 {
		t.Fatalf("declined payment: %d", status)
	}

	// Pay it by hand; a second payment is a duplicate.
	var pay struct {
		PaymentID     string `json:"payment_id"`
		Status        string `json:"status"`
		InvoiceStatus string `json:"invoice_status"`
	}
	if status := p.do("POST", "/v1/billing/payments", key, map[string]any{"invoice_id": first.ID, "amount": first.Amount, "payment_method_id": pm.PaymentMethod.ID}, &pay); status != 201 ||
		pay.Status != "successful" || pay.InvoiceStatus != "paid" {
		t.Fatalf("payment: %d %+v", status, pay)
	}
	var dup struct {
		Error struct{ Code string } `json:"error"`
	}
	if status := p.do("POST", "/v1/billing/payments", key, map[string]any{"invoice_id": first.ID, "amount": first.Amount, "payment_method_id": pm.PaymentMethod.ID}, &dup); status != 409 || dup.Error.Code != "DUPLICATE_PAYMENT" {
		t.Fatalf("second payment: %d %+v", status, dup)
	}

	// With auto-pay on, the workflow pays the next invoices itself.
	if status := p.do("PUT", "/v1/billing/accounts/"+acct+"/preferences", key, map[string]any{"auto_pay": true}, nil); status != 200 {
		t.Fatalf("preferences: %d", status)
	}
	p.waitUntil("an invoice paid by auto-pay", func() bool {
		var list struct {
			Payments []struct {
				Source string `json:"source"`
				Status string `json:"status"`
			} `json:"payments"`
		}
		p.do("GET", "/v1/billing/payments?status=successful", key, nil, &list)
		for _, py := range list.Payments {
			if py.Source == "auto_pay" {
				return true
			}
		}
		return false
	})

	// Cancel now: the workflow closes the period at once and the subscription ends.
	if status := p.do("DELETE", "/v1/billing/subscriptions/"+sub+"?at_period_end=false", key, nil, &st); status != 200 {
		t.Fatalf("cancel: %d", status)
	}
	p.waitUntil("the subscription to end", func() bool {
		p.do("GET", "/v1/billing/subscriptions/"+sub, key, nil, &st)
		return st.Subscription.Status == "cancelled"
	})

	// Usage and cost analysis match the invoices.
	invs := listInvoices()
	var total float64
	var ids []string
	for _, inv := range invs {
		if inv.Status != "cancelled" {
			total += inv.Subtotal
			ids = append(ids, inv.ID)
		}
	}
	var usage struct {
		TotalUsage struct {
			DataGB int64 `json:"data_gb"`
		} `json:"total_usage"`
		Services []struct {
			ServiceID string  `json:"service_id"`
			Usage     float64 `json:"usage"`
			Unit      string  `json:"unit"`
			Cost      float64 `json:"cost"`
			Charges   []struct {
				InvoiceID string `json:"invoice_id"`
			} `json:"charges"`
		} `json:"services"`
	}
	if status := p.do("GET", "/api/v1/billing/usage?period=current_month&detailed=true", key, nil, &usage); status != 200 || len(usage.Services) != 1 {
		t.Fatalf("usage: %d %+v", status, usage)
	}
	u := usage.Services[0]
	var charged []string
	for _, c := range u.Charges {
		charged = append(charged, c.InvoiceID)
	}
	slices.Sort(charged)
	slices.Sort(ids)
	if u.ServiceID != svc || u.Unit != "GB" || u.Usage <= 0 || !near(u.Cost, total) || !slices.Equal(slices.Compact(charged), ids) {
		t.Fatalf("usage %+v, invoices %v (total %.2f)", u, ids, total)
	}
	var costs struct {
		CurrentMonth struct {
			Total     float64            `json:"total"`
			Breakdown map[string]float64 `json:"breakdown"`
		} `json:"current_month"`
		YearToDate float64 `json:"year_to_date"`
	}
	if status := p.do("GET", "/api/v1/billing/cost-analysis", key, nil, &costs); status != 200 {
		t.Fatalf("cost analysis: %d", status)
	}
	if !near(costs.CurrentMonth.Total, total) || !near(costs.CurrentMonth.Breakdown["connectivity"], total) || !near(costs.YearToDate, total) {
		t.Fatalf("cost analysis %+v, invoices total %.2f", costs, total)
	}

	// The billing events are in the outbox.
	types := func(id string) []string {
		evs, err := eventlog.NewStore(p.store).EventsFor(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.Type)
		}
		return out
	}
	if got := types(sub); !slices.Equal(got, []string{"subscription.created", "subscription.cancelled"}) {
		t.Fatalf("subscription events %v", got)
	}
	if got := types(first.ID); !slices.Equal(got, []string{"invoice.created", "invoice.paid"}) {
		t.Fatalf("invoice events %v", got)
	}
	if got := types(pay.PaymentID); !slices.Equal(got, []string{"payment.successful"}) {
		t.Fatalf("payment events %v", got)
	}

	// And the receiver got each kind, signed, with the resource in its data.
	about := func(event, object, id string) bool {
		for _, d := range hooks.received(event) {
			data, _ := d.Payload["data"].(map[string]any)
			obj, _ := data[object].(map[string]any)
			if obj["id"] == id {
				return true
			}
		}
		return false
	}
	p.waitUntil("the billing webhooks", func() bool {
		return about("subscription.created", "subscription", sub) && about("invoice.created", "invoice", first.ID) &&
			about("invoice.paid", "invoice", first.ID) && about("payment.successful", "payment", pay.PaymentID) &&
			len(hooks.received("payment.failed")) > 0 && len(hooks.received("usage.threshold")) > 0 &&
			about("subscription.cancelled", "subscription", sub)
	})
	hooks.checkValid(t)
}

// near compares two amounts of money decoded as floats.
func near(a, b float64) bool { d := a - b; return d < 0.005 && d > -0.005 }

// TestInvoiceBecomesOverdue creates a manual invoice due in two seconds:
// the API starts its InvoiceDue workflow on the real Temporal server, whose
// timer fires at the due date and whose activity marks the unpaid invoice
// overdue (invoice.overdue). Its history is recorded for the replay test.
func TestInvoiceBecomesOverdue(t *testing.T) {
	p := startPlatform(t, platformOptions{queuePrefix: "invoice", keys: demoTestKey})
	ctx := context.Background()
	key := p.testKey
	var accts struct {
		Accounts []struct{ ID string } `json:"accounts"`
	}
	if status := p.do("GET", "/v1/billing/accounts", key, nil, &accts); status != 200 || len(accts.Accounts) == 0 {
		t.Fatalf("sandbox accounts: %d %+v", status, accts)
	}
	acct := accts.Accounts[0].ID
	var acc accepted
	if status := p.do("POST", "/v1/services/provision", key, map[string]any{"service_template": "internet-business-100m", "location_id": "loc_sandbox_all", "account_id": acct}, &acc); status != 202 {
		t.Fatalf("provision: %d", status)
	}
	if op := p.poll(acc.StatusURL, key, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		t.Fatalf("provisioning %+v", op)
	}

	due := time.Now().Add(2 * time.Second).UTC()
	var created struct {
		Invoice billingInvoice `json:"invoice"`
	}
	if status := p.do("POST", "/api/v1/billing/invoices", key, map[string]any{"account_id": acct, "due_date": due.Format(time.RFC3339Nano),
		"services": []map[string]any{{"service_id": acc.ServiceID, "quantity": 1, "unit_price": 10}}}, &created); status != 201 || created.Invoice.Status != "pending" {
		t.Fatalf("create invoice: %d %+v", status, created)
	}
	id := created.Invoice.ID
	if err := p.temporal.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatalf("InvoiceDue workflow: %v", err)
	}
	if time.Now().Before(due) {
		t.Fatalf("the workflow ended before the due date %s", due)
	}
	var got struct {
		Invoice billingInvoice `json:"invoice"`
	}
	if status := p.do("GET", "/api/v1/billing/invoices/"+id, key, nil, &got); status != 200 || got.Invoice.Status != "overdue" {
		t.Fatalf("invoice after its due date: %d %+v", status, got.Invoice)
	}
	evs, err := eventlog.NewStore(p.store).EventsFor(ctx, models.TenantScope(p.demo.Demo.ID, models.EnvTest), id)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if !slices.Contains(types, "invoice.overdue") {
		t.Fatalf("events of the invoice: %v", types)
	}
}

// TestDecommissionEndsTheSubscriptionAtOnce: decommissioning a subscribed
// service ends its subscription when billing stops, with the period billed
// up to that moment, not at the end of the period (an hour here). Before,
// the subscription stayed active, counted in the recurring figures and
// accrued, until its period closed.
func TestDecommissionEndsTheSubscriptionAtOnce(t *testing.T) {
	p := startBillingPlatform(t)
	key := p.testKey
	var accts struct {
		Accounts []struct{ ID string } `json:"accounts"`
	}
	if status := p.do("GET", "/v1/billing/accounts", key, nil, &accts); status != 200 || len(accts.Accounts) == 0 {
		t.Fatalf("sandbox accounts: %d %+v", status, accts)
	}
	acct := accts.Accounts[0].ID
	var acc accepted
	if status := p.do("POST", "/v1/services/provision", key, map[string]any{"service_template": "internet-business-100m", "location_id": "loc_sandbox_all", "account_id": acct}, &acc); status != 202 {
		t.Fatalf("provision: %d", status)
	}
	if op := p.poll(acc.StatusURL, key, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		t.Fatalf("provisioning %+v", op)
	}
	var subs struct {
		Subscriptions []struct{ ID string } `json:"subscriptions"`
	}
	if status := p.do("POST", "/v1/billing/recurring", key, map[string]any{"account_id": acct,
		"services": []map[string]any{{"service_id": acc.ServiceID, "billing_cycle": "sandbox_3600s", "auto_renew": true}}}, &subs); status != 201 || len(subs.Subscriptions) != 1 {
		t.Fatalf("recurring: %d %+v", status, subs)
	}
	sub := subs.Subscriptions[0].ID
	var st struct {
		Subscription struct {
			Status        string `json:"status"`
			EndedReason   string `json:"ended_reason"`
			CurrentPeriod struct {
				End string `json:"end"`
			} `json:"current_period"`
		} `json:"subscription"`
	}
	p.waitUntil("the subscription to start", func() bool {
		p.do("GET", "/v1/billing/subscriptions/"+sub, key, nil, &st)
		return st.Subscription.Status == "active"
	})

	var dec accepted
	if status := p.do("DELETE", "/v1/services/"+acc.ServiceID, key, nil, &dec); status != 202 {
		t.Fatalf("decommission: %d", status)
	}
	if op := p.poll(dec.StatusURL, key, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		t.Fatalf("decommission %+v", op)
	}
	var svc struct {
		Service struct {
			Pricing struct {
				BillingEndedAt string `json:"billing_ended_at"`
			} `json:"pricing"`
		} `json:"service"`
	}
	p.do("GET", "/v1/services/"+acc.ServiceID, key, nil, &svc)
	p.waitUntil("the subscription to end", func() bool {
		p.do("GET", "/v1/billing/subscriptions/"+sub, key, nil, &st)
		return st.Subscription.Status == "cancelled"
	})
	if st.Subscription.EndedReason != "service_decommissioned" || svc.Service.Pricing.BillingEndedAt == "" {
		t.Fatalf("ended %+v, billing ended at %q", st.Subscription, svc.Service.Pricing.BillingEndedAt)
	}
	end, err1 := time.Parse(time.RFC3339, st.Subscription.CurrentPeriod.End)
	stopped, err2 := time.Parse(time.RFC3339, svc.Service.Pricing.BillingEndedAt)
	if err1 != nil || err2 != nil || end.Sub(stopped).Abs() > time.Second {
		t.Fatalf("the last period ends at %q, billing stopped at %q", st.Subscription.CurrentPeriod.End, svc.Service.Pricing.BillingEndedAt)
	}
}
