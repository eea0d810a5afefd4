package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// TestSupportSLABreachEndToEnd runs a ticket's SLA clock on the real
// stack: a premium network policy with one-minute targets, a 10 % credit
// and a ladder (escalate and mail the duty desk at the breach) governs a
// critical ticket on the customer's premium service; nobody answers. The
// ticket's TicketSLA workflow wakes on its durable timers, with no polling:
// both targets breach (two signed sla.breach webhooks), the ladder
// escalates the ticket (ticket.escalated) and the duty desk's e-mail
// reaches a real SMTP server; the credit appears on the service's next
// invoice as a negative line. An edit of the policy meanwhile reaches the
// open ticket through the SLARetime fan-out.
func TestSupportSLABreachEndToEnd(t *testing.T) {
	if testenv.IsPostgres() {
		// It waits out real one-minute targets; the clocks' database work
		// runs on PostgreSQL in the workflow, model and API tests.
		t.Skip("the end-to-end SLA run is the SQLite one")
	}
	t.Parallel() // it mostly waits for the targets: beside the other parallel tests
	smtpURL, mailbox := testenv.SMTPServer(t)
	m := metrics.New()
	p := startPlatform(t, platformOptions{queuePrefix: "support-sla", webhookTimeout: testAttemptTimeout, keys: demoLiveKey, metrics: m})
	mailer, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	startNotifier(t, notify.NewDispatcher(p.store, notify.Options{Email: mailer, PollInterval: 100 * time.Millisecond}))
	ctx := context.Background()
	if _, err := support.NewStore(p.store).SeedAgents(ctx); err != nil {
		t.Fatal(err)
	}
	staff := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(p.store).EnsureAPIKey(ctx, p.demo.Provider.ID, staff, "staff", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	customerID := p.demo.Demo.CustomerID
	serviceID := p.provision() // a premium service: the ticket's tier

	// The policy of premium network tickets: one-minute critical targets.
	const duty = "duty-desk@provider.example"
	var pol struct {
		Policy struct{ ID string } `json:"policy"`
	}
	if st := p.do("POST", "/v1/support/sla-policies", staff, map[string]any{"name": "Premium network (test)", "tier": "premium", "category": "network",
		"credit_percent": 10, "targets": map[string]any{"critical": map[string]any{"response_time": "1m", "resolution_time": "1m"}},
		"escalation": []map[string]any{{"metric": "resolution", "at_percent": 100, "action": "escalate"},
			{"metric": "resolution", "at_percent": 100, "action": "notify", "recipients": []string{duty}}}}, &pol); st != http.StatusCreated {
		t.Fatalf("create the policy: %d", st)
	}
	hooks := newHookReceiver(t, alwaysOK, hookSecret1)
	p.subscribe("/v1/support/webhooks", p.liveKey, map[string]any{"url": hooks.srv.URL + "/sla", "events": []string{"sla.*", "ticket.escalated"},
		"secret": hookSecret1, "filters": map[string]any{"customer_ids": []string{customerID}}})

	var created struct {
		Ticket supportTicket `json:"ticket"`
	}
	if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": "Circuit down", "description": "No light since 09:00",
		"category": "network", "priority": "critical", "service_affected": serviceID}, &created); st != http.StatusCreated {
		t.Fatalf("create the ticket: %d", st)
	}
	tk := created.Ticket
	// An edit of the policy reaches the open ticket at once (SLARetime signals its workflow).
	if st := p.do("PATCH", "/v1/support/sla-policies/"+pol.Policy.ID, staff, map[string]any{"description": "one-minute targets for the test"}, nil); st != http.StatusOK {
		t.Fatalf("edit the policy: %d", st)
	}

	// The operator reads the ticket's clocks in the Temporal UI: the summary,
	// and the next breach in the current details once the workflow synced.
	slaID := workflows.TicketSLAID(tk.ID)
	desc, err := p.temporal.DescribeWorkflowExecution(ctx, slaID, "")
	if err != nil {
		t.Fatal(err)
	}
	var summary string
	if err := converter.GetDefaultDataConverter().FromPayload(desc.GetExecutionConfig().GetUserMetadata().GetSummary(), &summary); err != nil ||
		!strings.HasPrefix(summary, "SLA clocks of ticket "+tk.ID+" (critical priority)") {
		t.Fatalf("summary %q (%v)", summary, err)
	}
	for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		qv, err := p.temporal.QueryWorkflow(ctx, slaID, "", "__temporal_workflow_metadata")
		var meta sdkpb.WorkflowMetadata
		if err == nil && qv.Get(&meta) == nil && strings.Contains(meta.GetCurrentDetails(), "**Next breach**") &&
			strings.Contains(meta.GetCurrentDetails(), "`resolution`") {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("current details of %s: %q (%v)", slaID, meta.GetCurrentDetails(), err)
		}
	}

	// Both targets breach at their minute: one signed sla.breach each, then the ladder escalates.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		breaches := hooks.ticketDeliveries(t, "sla.breach", tk.ID)
		if len(breaches) >= 2 && len(hooks.ticketDeliveries(t, "ticket.escalated", tk.ID)) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes: %d sla.breach, %d ticket.escalated deliveries", len(breaches), len(hooks.ticketDeliveries(t, "ticket.escalated", tk.ID)))
		}
		time.Sleep(500 * time.Millisecond)
	}
	hooks.checkValid(t)
	var metrics []string
	for _, d := range hooks.ticketDeliveries(t, "sla.breach", tk.ID) {
		data := d.Payload["data"].(map[string]any)
		sla := data["sla"].(map[string]any)
		metrics = append(metrics, sla["metric"].(string))
		if data["ticket"].(map[string]any)["customer_id"] != customerID || sla["target"] != "1m" || d.Sigs != 1 {
			t.Fatalf("sla.breach %+v", d.Payload)
		}
	}
	slices.Sort(metrics)
	if strings.Join(metrics, ",") != "resolution,response" {
		t.Fatalf("breached metrics %v: want each once", metrics)
	}
	esc := hooks.ticketDeliveries(t, "ticket.escalated", tk.ID)[0].Payload["data"].(map[string]any)["ticket"].(map[string]any)
	if esc["status"] != "escalated" || esc["escalation_level"] != float64(1) || !strings.Contains(esc["escalation_reason"].(string), "resolution SLA") {
		t.Fatalf("ticket.escalated %+v", esc)
	}
	if !mailbox.WaitFor(60*time.Second, func(b *testenv.Mailbox) bool {
		for _, m := range b.Mails() {
			if slices.Contains(m.To, duty) && strings.Contains(m.Data, tk.Number) {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the duty desk's e-mail did not reach the SMTP server")
	}

	// The SLA status tells why: both breached, the ledger's running segments.
	var status struct {
		SLAStatus struct {
			SLATier        string                  `json:"sla_tier"`
			PolicyID       string                  `json:"policy_id"`
			ResponseTime   struct{ Status string } `json:"response_time"`
			ResolutionTime struct{ Status string } `json:"resolution_time"`
			Ledger         []struct{ Kind string } `json:"ledger"`
		} `json:"sla_status"`
	}
	if st := p.do("GET", "/v1/support/tickets/"+tk.ID+"/sla?include=ledger", p.liveKey, nil, &status); st != http.StatusOK {
		t.Fatalf("sla status: %d", st)
	}
	if s := status.SLAStatus; s.SLATier != "premium" || s.PolicyID != pol.Policy.ID || s.ResponseTime.Status != "breached" || s.ResolutionTime.Status != "breached" || len(s.Ledger) < 2 {
		t.Fatalf("sla status %+v", s)
	}

	// The credit: 10 % of the service's monthly price, once, on its next invoice.
	var credits struct {
		Credits []struct {
			ServiceID string  `json:"service_id"`
			TicketID  string  `json:"ticket_id"`
			Amount    float64 `json:"amount"`
			Status    string  `json:"status"`
		} `json:"sla_credits"`
	}
	p.waitUntil("the SLA credit", func() bool {
		return p.do("GET", "/v1/billing/sla-credits?service_id="+serviceID, p.liveKey, nil, &credits) == http.StatusOK && len(credits.Credits) == 1
	})
	if c := credits.Credits[0]; c.TicketID != tk.ID || c.Amount <= 0 || c.Status != "pending" {
		t.Fatalf("credit %+v", c)
	}
	var inv struct {
		Invoice billingInvoice `json:"invoice"`
	}
	if st := p.do("POST", "/v1/billing/invoices", p.liveKey, map[string]any{"account_id": p.demo.Account.ID,
		"due_date": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"services": []map[string]any{{"service_id": serviceID, "quantity": 1, "unit_price": 1000}}}, &inv); st != http.StatusCreated {
		t.Fatalf("invoice: %d", st)
	}
	var creditLine float64
	for _, l := range inv.Invoice.Services {
		if l.Kind == "sla_credit" && l.ServiceID == serviceID {
			creditLine += l.Amount
		}
	}
	if creditLine != -credits.Credits[0].Amount {
		t.Fatalf("the invoice's credit line %v, want %v: %+v", creditLine, -credits.Credits[0].Amount, inv.Invoice.Services)
	}
	// The breaches and the ladder's steps are counted where the SLA
	// activity records them.
	scrape := httptest.NewRecorder()
	m.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{`platform_sla_breaches_total{metric="response"} 1`, `platform_sla_breaches_total{metric="resolution"} 1`, `platform_sla_escalations_total{`} {
		if !strings.Contains(scrape.Body.String(), want) {
			t.Errorf("the scrape lacks %s", want)
		}
	}
	recordHistories(t, p.temporal)
}
