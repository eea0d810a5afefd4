package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

func TestInvoiceTransitions(t *testing.T) {
	tests := []struct {
		from, to billing.InvoiceStatus
		ok       bool
	}{
		{billing.InvoicePending, billing.InvoicePaid, true},
		{billing.InvoicePending, billing.InvoiceOverdue, true},
		{billing.InvoicePending, billing.InvoiceCancelled, true},
		{billing.InvoiceOverdue, billing.InvoicePaid, true},
		{billing.InvoiceOverdue, billing.InvoiceCancelled, true},
		{billing.InvoiceOverdue, billing.InvoicePending, false},
		{billing.InvoicePaid, billing.InvoiceCancelled, false},
		{billing.InvoicePaid, billing.InvoicePending, false},
		{billing.InvoicePaid, billing.InvoiceOverdue, false},
		{billing.InvoiceCancelled, billing.InvoicePaid, false},
		{billing.InvoiceCancelled, billing.InvoicePending, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s to %s", tc.from, tc.to), func(t *testing.T) {
			err := billing.CheckInvoiceTransition(tc.from, tc.to)
			if tc.ok != (err == nil) {
				t.Fatalf("got %v", err)
			}
			if err != nil && models.ErrorCode(err) != models.CodeInvalidStateTransition {
				t.Fatalf("code %s", models.ErrorCode(err))
			}
		})
	}
}

func TestPeriodEnd(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		start  string
		cycle  string
		anchor int
		want   string
	}{
		{"2026-01-15T10:00:00Z", "monthly", 15, "2026-02-15T10:00:00Z"},
		{"2026-01-31T10:00:00Z", "monthly", 31, "2026-02-28T10:00:00Z"},
		{"2026-02-28T10:00:00Z", "monthly", 31, "2026-03-31T10:00:00Z"},
		{"2028-01-31T00:00:00Z", "monthly", 31, "2028-02-29T00:00:00Z"},
		{"2026-12-31T23:59:59Z", "monthly", 31, "2027-01-31T23:59:59Z"},
		{"2026-03-31T10:00:00Z", "quarterly", 31, "2026-06-30T10:00:00Z"},
		{"2026-11-30T10:00:00Z", "quarterly", 30, "2027-02-28T10:00:00Z"},
		{"2028-02-29T00:00:00Z", "annual", 29, "2029-02-28T00:00:00Z"},
		{"2026-05-01T00:00:00Z", "sandbox_5s", 1, "2026-05-01T00:00:05Z"},
	}
	for _, tc := range tests {
		t.Run(tc.cycle+" from "+tc.start, func(t *testing.T) {
			if got := billing.PeriodEnd(at(tc.start), tc.cycle, tc.anchor); !got.Equal(at(tc.want)) {
				t.Fatalf("got %s, want %s", got.Format(time.RFC3339), tc.want)
			}
		})
	}
}

func TestCyclesAndBillingDelays(t *testing.T) {
	tests := []struct {
		cycle           string
		env             models.Environment
		valid           bool
		months          int
		dunning         []time.Duration
		termAuto, termM time.Duration
	}{
		{"monthly", models.EnvLive, true, 1, []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour}, 168 * time.Hour, 720 * time.Hour},
		{"quarterly", models.EnvLive, true, 3, []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour}, 168 * time.Hour, 720 * time.Hour},
		{"annual", models.EnvTest, true, 12, []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour}, 168 * time.Hour, 720 * time.Hour},
		{"sandbox_10s", models.EnvTest, true, 1, []time.Duration{time.Second, 3 * time.Second, 7 * time.Second}, 7 * time.Second, 30 * time.Second},
		{"sandbox_10s", models.EnvLive, false, 1, nil, 0, 0},
		{"sandbox_0s", models.EnvTest, false, 1, nil, 0, 0},
		{"sandbox_3601s", models.EnvTest, false, 1, nil, 0, 0},
		{"weekly", models.EnvLive, false, 1, nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.cycle+" "+string(tc.env), func(t *testing.T) {
			if got := billing.ValidCycle(tc.cycle, tc.env); got != tc.valid {
				t.Fatalf("valid %v", got)
			}
			if !tc.valid {
				return
			}
			if got := billing.CycleMonths(tc.cycle); got != tc.months {
				t.Fatalf("months %d", got)
			}
			if got := billing.DunningSchedule(tc.cycle); !slices.Equal(got, tc.dunning) {
				t.Fatalf("dunning %v", got)
			}
			if a, m := billing.PaymentTerm(tc.cycle, true), billing.PaymentTerm(tc.cycle, false); a != tc.termAuto || m != tc.termM {
				t.Fatalf("terms %v %v", a, m)
			}
		})
	}
}

func TestCheckCardToken(t *testing.T) {
	tests := []struct {
		token, issue string
	}{
		{"tok_visa", ""},
		{"tok_insufficient_funds", ""},
		{"", "is required"},
		{"4242424242424242", "card number"},
		{"4242 4242 4242 4242", "card number"},
		{"4242-4242-4242-4242", "card number"},
		{"visa", "tok_"},
		{"tok_", "tok_"},
		{"tok_bad token", "tok_"},
	}
	for _, tc := range tests {
		t.Run(tc.token, func(t *testing.T) {
			err := billing.CheckCardToken("card_token", tc.token)
			if tc.issue == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if models.ErrorCode(err) != models.CodeValidation || !strings.Contains(err.Error(), tc.issue) {
				t.Fatalf("got %v, want an issue with %q", err, tc.issue)
			}
			if strings.Contains(err.Error(), "4242424242424242") {
				t.Fatal("the error echoes the card number")
			}
		})
	}
}

func TestTaxAndOverageRounding(t *testing.T) {
	tests := []struct {
		subtotal models.Money
		rateBP   int
		want     models.Money
	}{
		{29999, 825, 2475}, // 24.749175 → 24.75
		{100, 825, 8},      // 0.0825 → 0.08
		{1000, 0, 0},
		{33333, 1000, 3333}, // 333.33 × 10% = 33.333 → 33.33
		{50, 1000, 5},       // 0.05
		{5, 1000, 1},        // 0.005 → 0.01 (half up)
		{12345678, 2000, 2469136},
	}
	for _, tc := range tests {
		if got := billing.TaxOn(tc.subtotal, tc.rateBP); got != tc.want {
			t.Errorf("TaxOn(%s, %d) = %s, want %s", tc.subtotal, tc.rateBP, got, tc.want)
		}
	}
	for micros, cents := range map[int64]models.Money{0: 0, 4_999: 0, 5_000: 1, 10_000: 1, 10_000_000: 1000, 8_000_000_000: 8000_00} {
		if got := billing.OverageCents(micros); got != cents {
			t.Errorf("OverageCents(%d) = %s, want %s", micros, got, cents)
		}
	}
}

func TestBudgetPeriod(t *testing.T) {
	at := time.Date(2026, 8, 17, 13, 0, 0, 0, time.UTC)
	tests := []struct {
		period     string
		start, end time.Time
	}{
		{"monthly", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
		{"quarterly", time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)},
		{"annual", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		if s, e := billing.BudgetPeriod(tc.period, at); !s.Equal(tc.start) || !e.Equal(tc.end) {
			t.Errorf("%s: %s - %s", tc.period, s, e)
		}
	}
}

// billingTenant creates an organization on plan with a USD account and one
// operational internet service (without a workflow), acting at clock.
func billingTenant(t *testing.T, s *models.Store, name string, plan models.Plan) (*models.Principal, *models.BillingAccount, *services.Service) {
	t.Helper()
	ctx := context.Background()
	org, err := identity.NewStore(s).CreateOrganization(ctx, admin(t, s), identity.OrganizationInput{Name: name, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return p, acct, operationalService(t, s, p, acct)
}

func operationalService(t *testing.T, s *models.Store, p *models.Principal, acct *models.BillingAccount) *services.Service {
	t.Helper()
	ctx := context.Background()
	scope := p.OwnScope()
	now := s.Now()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct.ID, Name: "Dedicated Fiber Internet", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &now, StatusChangedAt: now}
	if err := s.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	sample := &telemetry.TelemetrySample{ServiceID: svc.ID, At: now, Up: true, LatencyMs: 10, UtilizationPct: 40}
	if err := telemetry.NewStore(s).RecordTelemetry(ctx, scope, sample); err != nil {
		t.Fatal(err)
	}
	return svc
}

func visaMethod(acct *models.BillingAccount) *billing.PaymentMethod {
	return billing.NewPaymentMethod(acct, billing.PaymentMethodInput{Type: "credit_card", CardToken: "tok_visa"}, billing.Card{Brand: "visa", Last4: "4242"}, true)
}

func typesOf(t *testing.T, s *models.Store, scope models.Scope, id string) []string {
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

func TestInvoicePaymentLifecycle(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct, svc := billingTenant(t, s, "Payer", models.PlanBusiness)
	scope := p.OwnScope()
	pm := visaMethod(acct)
	if err := billing.NewStore(s).SavePaymentMethod(ctx, pm); err != nil {
		t.Fatal(err)
	}
	inv, err := billing.NewStore(s).CreateInvoice(ctx, p, billing.InvoiceInput{AccountID: acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svc.ID, Quantity: 3, UnitPrice: 10000}}})
	if err != nil || inv.Total != 30000 || inv.Status != billing.InvoicePending || inv.Number != "INV-000001" {
		t.Fatalf("%+v %v", inv, err)
	}
	pay := func(amount models.Money, out billing.PaymentOutcome) (*billing.Payment, *billing.Invoice, error) {
		started, err := billing.NewStore(s).BeginPayment(ctx, scope, billing.PaymentStart{Invoice: inv.ID, Amount: amount, Method: pm, Source: billing.PaymentSourceAPI})
		if err != nil {
			return nil, nil, err
		}
		return billing.NewStore(s).FinishPayment(ctx, scope, started.ID, out)
	}
	ok := billing.PaymentOutcome{Succeeded: true, TransactionID: "txn_1"}

	p1, after, err := pay(10000, ok)
	if err != nil || p1.Status != billing.PaymentSuccessful || after.Status != billing.InvoicePending || after.AmountDue() != 20000 {
		t.Fatalf("partial: %+v %+v %v", p1, after, err)
	}
	avail := models.Money(500)
	p2, after, err := pay(5000, billing.PaymentOutcome{FailureCode: billing.FailureInsufficientFunds, Available: &avail})
	if err != nil || p2.Status != billing.PaymentFailed || after.AmountDue() != 20000 {
		t.Fatalf("failed: %+v %+v %v", p2, after, err)
	}
	e := models.AsError(billing.PaymentError(p2, "payment_method.card_token"))
	if e.Code != models.CodeInsufficientFunds || e.Details["available_amount"] != models.Money(500) || e.Details["required_amount"] != models.Money(5000) || e.Details["payment_method_id"] != pm.ID {
		t.Fatalf("error %+v", e)
	}
	if _, _, err := pay(20001, ok); models.ErrorCode(err) != models.CodeDuplicatePayment {
		t.Fatalf("more than due: %v", err)
	}
	if _, _, err := pay(0, ok); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("zero: %v", err)
	}
	if _, err := billing.NewStore(s).MarkInvoiceOverdue(ctx, scope, inv.ID); err != nil {
		t.Fatal(err)
	}
	p3, after, err := pay(20000, ok)
	if err != nil || after.Status != billing.InvoicePaid || after.PaidAt == nil || after.AmountPaid != 30000 {
		t.Fatalf("rest: %+v %+v %v", p3, after, err)
	}
	if again, _, err := billing.NewStore(s).FinishPayment(ctx, scope, p3.ID, billing.PaymentOutcome{FailureCode: billing.FailureCardDeclined}); err != nil || again.Status != billing.PaymentSuccessful {
		t.Fatalf("finishing twice changed the payment: %+v %v", again, err)
	}
	if _, _, err := pay(1, ok); models.ErrorCode(err) != models.CodeDuplicatePayment {
		t.Fatalf("a paid invoice: %v", err)
	}
	if got, want := typesOf(t, s, scope, inv.ID), []string{"invoice.created", "invoice.overdue", "invoice.paid"}; !slices.Equal(got, want) {
		t.Fatalf("invoice events %v, want %v", got, want)
	}
	for id, want := range map[string]string{p1.ID: "payment.successful", p2.ID: "payment.failed", p3.ID: "payment.successful"} {
		if got := typesOf(t, s, scope, id); !slices.Equal(got, []string{want}) {
			t.Fatalf("payment %s events %v", id, got)
		}
	}
	staff := &models.Principal{ID: "ak_staff", OrganizationID: "org_provider", Environment: scope.Environment, Role: models.RoleAdmin, Permissions: []string{"*"}}
	if _, err := billing.NewStore(s).CancelInvoice(ctx, staff, inv.ID, ""); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("cancelling a paid invoice: %v", err)
	}
	if got, err := billing.NewStore(s).MarkInvoiceOverdue(ctx, scope, inv.ID); err != nil || got.Status != billing.InvoicePaid {
		t.Fatalf("a paid invoice became %v (%v)", got.Status, err)
	}
	acctNow, err := billing.NewStore(s).GetAccount(ctx, p, acct.ID)
	if err != nil || acctNow.Balance != 0 {
		t.Fatalf("balance %v %v", acctNow.Balance, err)
	}
}

// TestConcurrentPaymentsNeverBothSucceed races payments of the whole
// balance of one invoice: the invoice row lock and the processing
// reservation let exactly one through, on SQLite and on PostgreSQL.
func TestConcurrentPaymentsNeverBothSucceed(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct, svc := billingTenant(t, s, "Racer", models.PlanBusiness)
	scope := p.OwnScope()
	pm := visaMethod(acct)
	if err := billing.NewStore(s).SavePaymentMethod(ctx, pm); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		inv, err := billing.NewStore(s).CreateInvoice(ctx, p, billing.InvoiceInput{AccountID: acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svc.ID, Quantity: 1, UnitPrice: 12345}}})
		if err != nil {
			t.Fatal(err)
		}
		const n = 10
		var wg sync.WaitGroup
		results := make([]error, n)
		payments := make([]*billing.Payment, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				payments[i], results[i] = billing.NewStore(s).BeginPayment(ctx, scope, billing.PaymentStart{Invoice: inv.ID, Amount: 12345, Method: pm, Source: billing.PaymentSourceAPI})
			}(i)
		}
		wg.Wait()
		winner := -1
		for i, err := range results {
			switch {
			case err == nil && winner == -1:
				winner = i
			case err == nil:
				t.Fatalf("round %d: two payments reserved the same balance", round)
			case models.ErrorCode(err) != models.CodeDuplicatePayment:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no payment got through: %v", round, results)
		}
		if round == 1 {
			// A failure releases the reservation: the next payment goes through.
			if _, _, err := billing.NewStore(s).FinishPayment(ctx, scope, payments[winner].ID, billing.PaymentOutcome{FailureCode: billing.FailureCardDeclined}); err != nil {
				t.Fatal(err)
			}
			retry, err := billing.NewStore(s).BeginPayment(ctx, scope, billing.PaymentStart{Invoice: inv.ID, Amount: 12345, Method: pm, Source: billing.PaymentSourceAPI})
			if err != nil {
				t.Fatal(err)
			}
			payments[winner] = retry
		}
		_, after, err := billing.NewStore(s).FinishPayment(ctx, scope, payments[winner].ID, billing.PaymentOutcome{Succeeded: true, TransactionID: "txn"})
		if err != nil || after.Status != billing.InvoicePaid || after.AmountPaid != 12345 {
			t.Fatalf("round %d: %+v %v", round, after, err)
		}
	}
}

// clock is a settable time source for the store.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(s string) {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.now = v
	c.mu.Unlock()
}

func TestSubscriptionPeriodsProrationAndCancellation(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := &clock{}
	c.set("2026-01-31T10:00:00Z")
	s.Now = c.Now
	p, acct, svc := billingTenant(t, s, "Subscriber", models.PlanBusiness)
	scope := p.OwnScope()
	subs, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	sub := subs[0]
	if sub.Status != billing.SubscriptionPending || sub.UnitPrice != 29900 || sub.BillingCycle != "monthly" || sub.AnchorDay != 31 ||
		!sub.CurrentPeriodEnd.Equal(time.Date(2026, 2, 28, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("subscription %+v", sub)
	}
	if _, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}}}); models.ErrorCode(err) != models.CodeAlreadyExists {
		t.Fatalf("a second subscription of the service: %v", err)
	}
	for range 2 {
		if got, err := billing.NewStore(s).BeginSubscription(ctx, scope, sub.ID); err != nil || got.Status != billing.SubscriptionActive {
			t.Fatalf("begin %+v %v", got, err)
		}
	}
	if got := typesOf(t, s, scope, sub.ID); !slices.Equal(got, []string{"subscription.created"}) {
		t.Fatalf("events %v", got)
	}

	// Half-way through February's period (14 of 28 days) the quantity goes to 3.
	c.set("2026-02-14T10:00:00Z")
	if _, err := billing.NewStore(s).UpdateSubscription(ctx, p, sub.ID, billing.SubscriptionPatch{Quantity: ptr(3)}); err != nil {
		t.Fatal(err)
	}
	c.set("2026-02-28T10:00:05Z")
	first, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := billing.NewStore(s).InvoiceIn(ctx, scope, first.InvoiceID)
	if err != nil {
		t.Fatal(err)
	}
	if first.Ended || first.Total != 14950+44850 || len(inv.Lines) != 2 || inv.Lines[0].Amount != 14950 || inv.Lines[1].Amount != 44850 ||
		inv.Lines[1].Quantity != 3 || !strings.Contains(inv.Lines[0].Description, "prorated: 50.0%") || inv.Lines[0].Category != "connectivity" ||
		inv.SubscriptionID != sub.ID || inv.Source != billing.InvoiceSourceSubscription || !first.NextStart.Equal(sub.CurrentPeriodEnd) ||
		!first.NextEnd.Equal(time.Date(2026, 3, 31, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("first close %+v, invoice %+v", first, inv)
	}
	again, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
	if err != nil || again.InvoiceID != first.InvoiceID || again.Total != first.Total {
		t.Fatalf("closing twice: %+v %v", again, err)
	}

	// March: full period at quantity 3; the change to quarterly applies from April.
	if _, err := billing.NewStore(s).UpdateSubscription(ctx, p, sub.ID, billing.SubscriptionPatch{BillingCycle: ptr("quarterly")}); err != nil {
		t.Fatal(err)
	}
	c.set("2026-03-31T10:00:01Z")
	second, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: first.NextStart, CloseAt: first.NextEnd})
	if err != nil || second.Total != 3*29900 || second.Cycle != "quarterly" || !second.NextEnd.Equal(time.Date(2026, 6, 30, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("second close %+v %v", second, err)
	}

	// Cancelled now, 45 of the quarter's 91 days in: billed up to now.
	c.set("2026-05-15T10:00:00Z")
	cur, err := billing.NewStore(s).CancelSubscription(ctx, p, sub.ID, false)
	if err != nil || cur.CancelAt == nil || !cur.CancelAt.Equal(c.Now()) {
		t.Fatalf("cancel %+v %v", cur, err)
	}
	if later, err := billing.NewStore(s).CancelSubscription(ctx, p, sub.ID, true); err != nil || !later.CancelAt.Equal(c.Now()) {
		t.Fatalf("a later cancellation must not postpone the earlier one: %+v %v", later, err)
	}
	final, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: second.NextStart, CloseAt: *cur.CancelAt})
	if err != nil || !final.Ended || final.EndedReason != billing.EndedCancelled || final.Total != 133071 {
		t.Fatalf("final close %+v %v", final, err)
	}
	ended, _ := billing.NewStore(s).SubscriptionIn(ctx, scope, sub.ID)
	if ended.Status != billing.SubscriptionCancelled || ended.CancelledAt == nil || ended.PeriodsBilled != 3 {
		t.Fatalf("ended %+v", ended)
	}
	if got := typesOf(t, s, scope, sub.ID); !slices.Equal(got, []string{"subscription.created", "subscription.cancelled"}) {
		t.Fatalf("events %v", got)
	}
	if _, err := billing.NewStore(s).CancelSubscription(ctx, p, sub.ID, true); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("cancelling an ended subscription: %v", err)
	}
	if _, err := billing.NewStore(s).UpdateSubscription(ctx, p, sub.ID, billing.SubscriptionPatch{Quantity: ptr(1)}); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("changing an ended subscription: %v", err)
	}
	// The service may be subscribed again once the subscription has ended.
	if _, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}}}); err != nil {
		t.Fatal(err)
	}

	costs, err := billing.NewStore(s).Costs(ctx, p, "", c.Now())
	if err != nil {
		t.Fatal(err)
	}
	if costs.CurrentMonth != 133071 || costs.Breakdown["connectivity"] != 133071 || costs.LastMonth != 0 || costs.MonthlyGrowth != nil ||
		costs.YearToDate != 59800+89700+133071 || costs.Months[8].Total != 59800 || costs.Months[9].Total != 89700 {
		t.Fatalf("costs %+v", costs)
	}
	usage, err := billing.NewStore(s).Usage(ctx, p, billing.UsageQuery{Period: billing.PeriodCurrentYear, Now: c.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if usage.TotalUsage[billing.MetricDataGB] <= 0 || len(usage.Services) != 1 || usage.Services[0].Cost != 59800+89700+133071 || usage.Services[0].Unit != "GB" {
		t.Fatalf("usage %+v", usage)
	}
}

func ptr[T any](v T) *T { return &v }

func TestDecommissionedServiceStopsBilling(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	// The column the services area records the end of billing in (added
	// here, before any query on services, when its migration has not).
	db := s.In(ctx, models.SystemScope())
	if !db.Migrator().HasColumn(&services.Service{}, "billing_ended_at") {
		if err := db.Exec("ALTER TABLE services ADD COLUMN billing_ended_at timestamp").Error; err != nil {
			t.Fatal(err)
		}
	}
	c := &clock{}
	c.set("2026-04-01T00:00:00Z")
	s.Now = c.Now
	p, acct, svc := billingTenant(t, s, "Leaver", models.PlanBusiness)
	scope := p.OwnScope()
	other := operationalService(t, s, p, acct)
	subs, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}, {ServiceID: other.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	// svc is decommissioned 10 of April's 30 days in (its status tells).
	c.set("2026-04-11T00:00:00Z")
	for _, to := range []services.ServiceStatus{services.ServiceDecommissioning, services.ServiceDecommissioned} {
		if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, svc.ID, to); err != nil {
			t.Fatal(err)
		}
	}
	// other's billing ends 20 days in, as the services area records it.
	if err := db.Exec("UPDATE services SET billing_ended_at = ? WHERE id = ?", time.Date(2026, 4, 21, 0, 0, 0, 0, time.UTC), other.ID).Error; err != nil {
		t.Fatal(err)
	}
	c.set("2026-05-01T00:00:00Z")
	want := map[string]models.Money{svc.ID: 9967, other.ID: 19933} // 299.00 × 10/30, × 20/30
	for _, sub := range subs {
		if _, err := billing.NewStore(s).BeginSubscription(ctx, scope, sub.ID); err != nil {
			t.Fatal(err)
		}
		res, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
		if err != nil || !res.Ended || res.EndedReason != billing.EndedDecommissioned || res.Total != want[sub.ServiceID] {
			t.Fatalf("%s: %+v %v", sub.ServiceID, res, err)
		}
	}
}

func TestAPIOverageIsBilledOnce(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := &clock{}
	c.set("2026-07-01T00:00:00Z")
	s.Now = c.Now
	p, acct, svc := billingTenant(t, s, "Chatty", models.PlanDeveloper)
	scope := p.OwnScope()
	svc2 := operationalService(t, s, p, acct)
	subs, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}, {ServiceID: svc2.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	// June: 60,000 requests on the developer plan (50,000 included, 0.001 USD each beyond).
	// August has not ended when July's periods close: it is not billed.
	requests := map[string]int64{"2026-05": 10, "2026-06": 60_000, "2026-08": 999_999}
	var overage []billing.InvoiceLine
	for _, sub := range subs {
		if _, err := billing.NewStore(s).BeginSubscription(ctx, scope, sub.ID); err != nil {
			t.Fatal(err)
		}
		res, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd, APIRequests: requests})
		if err != nil {
			t.Fatal(err)
		}
		inv, err := billing.NewStore(s).InvoiceIn(ctx, scope, res.InvoiceID)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range inv.Lines {
			if l.Kind == billing.LineOverage {
				overage = append(overage, l)
			}
		}
	}
	if len(overage) != 1 || overage[0].Amount != 1000 || overage[0].Category != billing.CategoryPlatform || !strings.Contains(overage[0].Description, "10000 at 0.001 USD") {
		t.Fatalf("overage lines %+v", overage)
	}
	usage, err := billing.NewStore(s).Usage(ctx, p, billing.UsageQuery{Period: billing.PeriodCurrentYear, Now: time.Date(2026, 8, 15, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if usage.TotalUsage[billing.MetricAPICalls] != 60_010 {
		t.Fatalf("api calls from the records: %d", usage.TotalUsage[billing.MetricAPICalls])
	}
}

func TestAutoPayTargetAndOverdue(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct, svc := billingTenant(t, s, "Auto", models.PlanBusiness)
	scope := p.OwnScope()
	inv, err := billing.NewStore(s).CreateInvoice(ctx, p, billing.InvoiceInput{AccountID: acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svc.ID, Quantity: 1, UnitPrice: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := billing.NewStore(s).AutoPayTargetOf(ctx, scope, inv.ID)
	if err != nil || tgt.Method != nil {
		t.Fatalf("without auto_pay: %+v %v", tgt, err)
	}
	pm := visaMethod(acct)
	if err := billing.NewStore(s).SavePaymentMethod(ctx, pm); err != nil {
		t.Fatal(err)
	}
	if _, err := billing.NewStore(s).UpdatePreferences(ctx, p, acct.ID, billing.PreferencesInput{AutoPay: ptr(true), PaymentMethodID: &pm.ID}); err != nil {
		t.Fatal(err)
	}
	if tgt, err = billing.NewStore(s).AutoPayTargetOf(ctx, scope, inv.ID); err != nil || tgt.Method == nil || tgt.Method.ID != pm.ID {
		t.Fatalf("with auto_pay: %+v %v", tgt, err)
	}
	if err := billing.NewStore(s).RemovePaymentMethod(ctx, p, acct.ID, pm.ID); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("removing the auto_pay method: %v", err)
	}
	for range 2 {
		got, err := billing.NewStore(s).MarkInvoiceOverdue(ctx, scope, inv.ID)
		if err != nil || got.Status != billing.InvoiceOverdue || got.OverdueAt == nil {
			t.Fatalf("%+v %v", got, err)
		}
	}
	if got := typesOf(t, s, scope, inv.ID); !slices.Equal(got, []string{"invoice.created", "invoice.overdue"}) {
		t.Fatalf("events %v", got)
	}
	if _, err := billing.NewStore(s).MarkInvoiceOverdue(ctx, scope, "inv_missing"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("missing: %v", err)
	}
	d, err := billing.NewStore(s).GetAccountDetail(ctx, p, acct.ID)
	if err != nil || d.OverdueAmount != 100 || d.Account.Balance != 100 || d.OpenInvoices != 1 || len(d.PaymentMethods) != 1 || d.Plan != models.PlanBusiness {
		t.Fatalf("detail %+v %v", d, err)
	}
}

// TestSubscriptionPricedAtTheServicesCharge: a subscription bills the
// service's own monthly charge (its quote's price, kept up to date by its
// changes), not the catalog's starting price; a change of that charge
// applies from the next period, and a service without one is billed the
// catalog's starting price.
func TestSubscriptionPricedAtTheServicesCharge(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	c := &clock{}
	c.set("2026-03-01T00:00:00Z")
	s.Now = c.Now
	p, acct, svc := billingTenant(t, s, "Quoted", models.PlanBusiness)
	scope := p.OwnScope()
	setCharge := func(m models.Money) {
		t.Helper()
		if err := s.In(ctx, scope).Model(&services.Service{}).Where("id = ?", svc.ID).Updates(map[string]any{"monthly_charge": m, "currency": "USD"}).Error; err != nil {
			t.Fatal(err)
		}
	}
	setCharge(127075)
	subs, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svc.ID}}})
	if err != nil || subs[0].UnitPrice != 127075 || subs[0].MonthlyRunRate() != 127075 {
		t.Fatalf("subscription of a service at 1,270.75: %+v %v", subs, err)
	}
	sub := subs[0]

	// Scaled mid-March: March is billed at the old charge, April at the new.
	c.set("2026-03-15T00:00:00Z")
	setCharge(306255)
	c.set("2026-04-01T00:00:01Z")
	first, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: sub.CurrentPeriodStart, CloseAt: sub.CurrentPeriodEnd})
	if err != nil || first.Total != 127075 {
		t.Fatalf("March: %+v %v", first, err)
	}
	c.set("2026-05-01T00:00:01Z")
	second, err := billing.NewStore(s).CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{SubscriptionID: sub.ID, PeriodStart: first.NextStart, CloseAt: first.NextEnd})
	if err != nil || second.Total != 306255 {
		t.Fatalf("April: %+v %v", second, err)
	}

	// Its charge covers its units: a quantity would count them twice.
	subs2, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: operationalService(t, s, p, acct).ID}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.In(ctx, scope).Model(&services.Service{}).Where("id = ?", subs2[0].ServiceID).Update("monthly_charge", 50000).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := billing.NewStore(s).UpdateSubscription(ctx, p, subs2[0].ID, billing.SubscriptionPatch{Quantity: ptr(5)}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a quantity on a service billed its own charge: %v", err)
	}
	quantity := operationalService(t, s, p, acct)
	if err := s.In(ctx, scope).Model(&services.Service{}).Where("id = ?", quantity.ID).Update("monthly_charge", 50000).Error; err != nil {
		t.Fatal(err)
	}
	if _, _, err := billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: quantity.ID, Quantity: 5}}}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a subscription with a quantity of a service billed its own charge: %v", err)
	}

	// A service without a charge of its own: the catalog's starting price.
	bare := operationalService(t, s, p, acct)
	subs, _, err = billing.NewStore(s).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: bare.ID}}})
	if err != nil || subs[0].UnitPrice != 29900 {
		t.Fatalf("subscription of a service without a charge: %+v %v", subs, err)
	}
}
