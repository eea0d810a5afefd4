package billing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/testenv"
)

// tenant is an organization with a USD billing account and its principal.
type tenant struct {
	p    *models.Principal
	acct *models.BillingAccount
}

func (tn tenant) scope() models.Scope { return tn.p.OwnScope() }

func newTenant(t *testing.T, s *models.Store, name string, taxBP int) tenant {
	t.Helper()
	ctx := context.Background()
	provider, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_admin", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: name, Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if taxBP != 0 {
		if err := s.In(ctx, p.OwnScope()).Model(&models.BillingAccount{}).Where("id = ?", acct.ID).Update("tax_rate_bp", taxBP).Error; err != nil {
			t.Fatal(err)
		}
		acct.TaxRateBP = taxBP
	}
	return tenant{p: p, acct: acct}
}

// service stores an operational service of tn whose own monthly charge is monthly.
func (tn tenant) service(t *testing.T, s *models.Store, monthly models.Money) *services.Service {
	t.Helper()
	now := s.Now()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: tn.acct.ID, Name: "Dedicated Fiber Internet", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &now, StatusChangedAt: now,
		MonthlyCharge: monthly, Currency: "USD"}
	if err := s.In(context.Background(), tn.scope()).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	return svc
}

func eventsOf(t *testing.T, s *models.Store, scope models.Scope, id string) []string {
	t.Helper()
	evs, err := eventlog.NewStore(s).EventsFor(context.Background(), scope, id)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestIssueSLACredit(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	b := billing.NewStore(s)
	a, other := newTenant(t, s, "Credited", 0), newTenant(t, s, "Other", 0)
	svc, free, foreign := a.service(t, s, 500_00), a.service(t, s, 0), other.service(t, s, 100_00)
	subscribed := a.service(t, s, 0)
	subs, _, err := b.CreateSubscriptions(ctx, a.p, billing.RecurringInput{AccountID: a.acct.ID, Services: []billing.RecurringItem{{ServiceID: subscribed.ID, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	subMonthly := subs[0].MonthlyRunRate()

	tests := []struct {
		name    string
		scope   models.Scope
		in      billing.SLACreditInput
		code    models.Code
		field   string
		amount  models.Money
		created bool
	}{
		{"ten percent of the monthly charge", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_1", SourceKey: "ticket:tkt_1:cycle:1:resolution", PercentBP: 1000, Reason: "resolution target missed"}, "", "", 50_00, true},
		{"the same key again", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_1", SourceKey: "ticket:tkt_1:cycle:1:resolution", PercentBP: 2000}, "", "", 50_00, false},
		{"rounded to the cent", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_2", SourceKey: "ticket:tkt_2:cycle:1:resolution", PercentBP: 333}, "", "", 16_65, true},
		{"a whole month", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_3", SourceKey: "ticket:tkt_3:cycle:1:resolution", PercentBP: 10_000}, "", "", 500_00, true},
		{"the subscription's run rate", a.scope(), billing.SLACreditInput{ServiceID: subscribed.ID, TicketID: "tkt_4", SourceKey: "ticket:tkt_4:cycle:1:resolution", PercentBP: 500}, "", "", subMonthly * 5 / 100, true},
		{"percent zero", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_5", SourceKey: "k5", PercentBP: 0}, models.CodeValidation, "percent_bp", 0, false},
		{"percent above 100", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_5", SourceKey: "k5", PercentBP: 10_001}, models.CodeValidation, "percent_bp", 0, false},
		{"no source key", a.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_5", PercentBP: 100}, models.CodeValidation, "source_key", 0, false},
		{"not a service id", a.scope(), billing.SLACreditInput{ServiceID: "inv_1", TicketID: "tkt_5", SourceKey: "k5", PercentBP: 100}, models.CodeValidation, "service_id", 0, false},
		{"unknown service", a.scope(), billing.SLACreditInput{ServiceID: "svc_missing", TicketID: "tkt_5", SourceKey: "k5", PercentBP: 100}, models.CodeNotFound, "", 0, false},
		{"another tenant's service", a.scope(), billing.SLACreditInput{ServiceID: foreign.ID, TicketID: "tkt_5", SourceKey: "k5", PercentBP: 100}, models.CodeNotFound, "", 0, false},
		{"the sandbox of the owner", models.TenantScope(a.p.OrganizationID, models.EnvTest), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_5", SourceKey: "k5", PercentBP: 100}, models.CodeNotFound, "", 0, false},
		{"a service priced zero", a.scope(), billing.SLACreditInput{ServiceID: free.ID, TicketID: "tkt_6", SourceKey: "k6", PercentBP: 1000}, models.CodeValidation, "service_id", 0, false},
	}
	ids := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, created, err := b.IssueSLACredit(ctx, tc.scope, tc.in)
			if tc.code != "" {
				if models.ErrorCode(err) != tc.code || c != nil {
					t.Fatalf("got %+v %v, want %s", c, err, tc.code)
				}
				if tc.field != "" {
					fields := models.AsError(err).Details["fields"].([]models.FieldIssue)
					if len(fields) != 1 || fields[0].Field != tc.field {
						t.Fatalf("fields %+v, want %s", fields, tc.field)
					}
				}
				return
			}
			if err != nil || created != tc.created || c.Amount != tc.amount || c.Currency != "USD" || c.Status != billing.SLACreditPending ||
				!strings.HasPrefix(c.ID, billing.PrefixSLACredit+"_") || c.OrganizationID != a.p.OrganizationID {
				t.Fatalf("got %+v created=%v %v", c, created, err)
			}
			if prev, ok := ids[tc.in.SourceKey]; ok && prev != c.ID {
				t.Fatalf("key %s gave %s then %s", tc.in.SourceKey, prev, c.ID)
			}
			ids[tc.in.SourceKey] = c.ID
			if got := eventsOf(t, s, a.scope(), c.ID); len(got) != 1 || got[0] != billing.EventSLACreditIssued {
				t.Fatalf("events %v", got)
			}
		})
	}
	if n := countCredits(t, s, a.scope()); n != 4 {
		t.Fatalf("%d credits stored, want 4", n)
	}
	if n := countCredits(t, s, other.scope()); n != 0 {
		t.Fatalf("%d credits in the other tenant", n)
	}
}

func countCredits(t *testing.T, s *models.Store, scope models.Scope) int64 {
	t.Helper()
	var n int64
	if err := s.In(context.Background(), scope).Model(&billing.SLACredit{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSLACreditsApplyToTheNextInvoice issues credits, then invoices, and
// checks the credit lines, the totals and what each credit became.
func TestSLACreditsApplyToTheNextInvoice(t *testing.T) {
	type invoiceWant struct {
		service  int          // index into the tenant's services
		charge   models.Money // one manual line of this amount
		credit   models.Money // the credit line(s) together (negative)
		subtotal models.Money
		total    models.Money // with 10% tax
		status   billing.InvoiceStatus
	}
	type creditWant struct {
		status  string
		applied models.Money
		invoice int // index of the invoice that took its last part; -1: none
	}
	tests := []struct {
		name     string
		credits  []int // service index of each credit of 10% of 500.00 (50.00)
		invoices []invoiceWant
		want     []creditWant
	}{
		{"fits in one invoice", []int{0},
			[]invoiceWant{{0, 300_00, -50_00, 250_00, 275_00, billing.InvoicePending}},
			[]creditWant{{billing.SLACreditApplied, 50_00, 0}}},
		{"two credits on one invoice", []int{0, 0},
			[]invoiceWant{{0, 300_00, -100_00, 200_00, 220_00, billing.InvoicePending}},
			[]creditWant{{billing.SLACreditApplied, 50_00, 0}, {billing.SLACreditApplied, 50_00, 0}}},
		{"capped at the subtotal, the rest on the next invoice", []int{0},
			[]invoiceWant{{0, 30_00, -30_00, 0, 0, billing.InvoicePaid}, {0, 100_00, -20_00, 80_00, 88_00, billing.InvoicePending}},
			[]creditWant{{billing.SLACreditApplied, 50_00, 1}}},
		{"still pending after a capped invoice", []int{0},
			[]invoiceWant{{0, 30_00, -30_00, 0, 0, billing.InvoicePaid}},
			[]creditWant{{billing.SLACreditPending, 30_00, -1}}},
		{"another service's invoice takes nothing", []int{0},
			[]invoiceWant{{1, 300_00, 0, 300_00, 330_00, billing.InvoicePending}},
			[]creditWant{{billing.SLACreditPending, 0, -1}}},
		{"applied once", []int{0},
			[]invoiceWant{{0, 300_00, -50_00, 250_00, 275_00, billing.InvoicePending}, {0, 300_00, 0, 300_00, 330_00, billing.InvoicePending}},
			[]creditWant{{billing.SLACreditApplied, 50_00, 0}}},
	}
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	b := billing.NewStore(s)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tn := newTenant(t, s, "Applied "+string(rune('A'+i)), 1000)
			svcs := []*services.Service{tn.service(t, s, 500_00), tn.service(t, s, 500_00)}
			var credits []*billing.SLACredit
			for j, si := range tc.credits {
				c, _, err := b.IssueSLACredit(ctx, tn.scope(), billing.SLACreditInput{ServiceID: svcs[si].ID, TicketID: "tkt_" + string(rune('a'+j)),
					SourceKey: "ticket:" + tn.acct.ID + ":" + string(rune('a'+j)), PercentBP: 1000, Reason: "resolution target missed"})
				if err != nil {
					t.Fatal(err)
				}
				credits = append(credits, c)
			}
			var invs []*billing.Invoice
			for _, w := range tc.invoices {
				inv, err := b.CreateInvoice(ctx, tn.p, billing.InvoiceInput{AccountID: tn.acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svcs[w.service].ID, Quantity: 1, UnitPrice: w.charge}}})
				if err != nil {
					t.Fatal(err)
				}
				stored, err := b.InvoiceIn(ctx, tn.scope(), inv.ID)
				if err != nil {
					t.Fatal(err)
				}
				var credit, sum models.Money
				for _, l := range stored.Lines {
					sum += l.Amount
					if l.Kind == billing.LineCredit {
						credit += l.Amount
						if l.Quantity != 1 || l.UnitPrice != l.Amount || l.Amount >= 0 || l.ServiceID != svcs[w.service].ID || !strings.Contains(l.Description, "ticket tkt_") {
							t.Fatalf("credit line %+v", l)
						}
					}
				}
				if credit != w.credit || sum != stored.Subtotal || stored.Subtotal != w.subtotal || stored.Tax != billing.TaxOn(w.subtotal, 1000) ||
					stored.Total != w.total || stored.Status != w.status {
					t.Fatalf("invoice %+v (credit %s), want %+v", stored, credit, w)
				}
				invs = append(invs, stored)
			}
			for j, w := range tc.want {
				var c billing.SLACredit
				if err := s.In(ctx, tn.scope()).Where("id = ?", credits[j].ID).Take(&c).Error; err != nil {
					t.Fatal(err)
				}
				wantInvoice := ""
				if w.invoice >= 0 {
					wantInvoice = invs[w.invoice].ID
				}
				if c.Status != w.status || c.AppliedAmount != w.applied || c.InvoiceID != wantInvoice || (c.AppliedAt != nil) != (w.status == billing.SLACreditApplied) {
					t.Fatalf("credit %d: %+v, want %+v", j, c, w)
				}
			}
		})
	}
}

func TestSLACreditOnASubscriptionInvoice(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	b := billing.NewStore(s)
	tn := newTenant(t, s, "Subscribed", 0)
	svc := tn.service(t, s, 0)
	subs, _, err := b.CreateSubscriptions(ctx, tn.p, billing.RecurringInput{AccountID: tn.acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	sub := subs[0]
	if _, err := b.BeginSubscription(ctx, tn.scope(), sub.ID); err != nil {
		t.Fatal(err)
	}
	c, _, err := b.IssueSLACredit(ctx, tn.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_sub", SourceKey: "ticket:tkt_sub:cycle:1:resolution", PercentBP: 2500})
	if err != nil || c.Amount != sub.MonthlyRunRate()/4 {
		t.Fatalf("%+v %v", c, err)
	}
	closed, err := b.CloseSubscriptionPeriod(ctx, tn.scope(), billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := b.InvoiceIn(ctx, tn.scope(), closed.InvoiceID)
	if err != nil {
		t.Fatal(err)
	}
	var recurring, credit models.Money
	for _, l := range inv.Lines {
		switch l.Kind {
		case billing.LineRecurring:
			recurring += l.Amount
		case billing.LineCredit:
			credit += l.Amount
		}
	}
	if credit != -c.Amount || inv.Subtotal != recurring-c.Amount || inv.Total != inv.Subtotal {
		t.Fatalf("invoice %+v lines %+v", inv, inv.Lines)
	}
	page, _ := models.ParsePage(models.ListQuery{})
	got, total, err := b.ListSLACredits(ctx, tn.p, billing.SLACreditFilter{Status: billing.SLACreditApplied}, page)
	if err != nil || total != 1 || got[0].InvoiceID != inv.ID {
		t.Fatalf("%+v %d %v", got, total, err)
	}
}

func TestListSLACredits(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	b := billing.NewStore(s)
	a, other := newTenant(t, s, "Lister", 0), newTenant(t, s, "Stranger", 0)
	s1, s2, so := a.service(t, s, 100_00), a.service(t, s, 100_00), other.service(t, s, 100_00)
	issue := func(tn tenant, svc *services.Service, key string) {
		t.Helper()
		if _, _, err := b.IssueSLACredit(ctx, tn.scope(), billing.SLACreditInput{ServiceID: svc.ID, TicketID: "tkt_" + key, SourceKey: key, PercentBP: 100}); err != nil {
			t.Fatal(err)
		}
	}
	issue(a, s1, "a1")
	issue(a, s1, "a2")
	issue(a, s2, "a3")
	issue(other, so, "o1")
	if _, err := b.CreateInvoice(ctx, a.p, billing.InvoiceInput{AccountID: a.acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: s2.ID, Quantity: 1, UnitPrice: 100_00}}}); err != nil {
		t.Fatal(err)
	}
	sandbox := &models.Principal{ID: "ak_sandbox", OrganizationID: a.p.OrganizationID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	page, _ := models.ParsePage(models.ListQuery{})
	tests := []struct {
		name   string
		p      *models.Principal
		filter billing.SLACreditFilter
		want   int64
		code   models.Code
	}{
		{"all of the tenant", a.p, billing.SLACreditFilter{}, 3, ""},
		{"one service", a.p, billing.SLACreditFilter{ServiceID: s1.ID}, 2, ""},
		{"pending", a.p, billing.SLACreditFilter{Status: billing.SLACreditPending}, 2, ""},
		{"applied", a.p, billing.SLACreditFilter{Status: billing.SLACreditApplied}, 1, ""},
		{"another tenant's service", a.p, billing.SLACreditFilter{ServiceID: so.ID}, 0, ""},
		{"the other tenant", other.p, billing.SLACreditFilter{}, 1, ""},
		{"the owner's sandbox", sandbox, billing.SLACreditFilter{}, 0, ""},
		{"unknown status", a.p, billing.SLACreditFilter{Status: "lost"}, 0, models.CodeValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, total, err := b.ListSLACredits(ctx, tc.p, tc.filter, page)
			if tc.code != "" || err != nil {
				if models.ErrorCode(err) != tc.code {
					t.Fatalf("err %v, want %s", err, tc.code)
				}
				return
			}
			if total != tc.want || int64(len(got)) != tc.want {
				t.Fatalf("%d (%d rows), want %d", total, len(got), tc.want)
			}
			for _, c := range got {
				if c.OrganizationID != tc.p.OrganizationID || c.Environment != tc.p.Environment {
					t.Fatalf("row of another tenant: %+v", c)
				}
			}
		})
	}
}
