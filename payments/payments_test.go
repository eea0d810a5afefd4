package payments_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/payments"
	"github.com/telcoplatform/platform/testenv"
)

func TestSimulatorTestTokens(t *testing.T) {
	g := payments.NewSimulator()
	ctx := context.Background()
	tests := []struct {
		token   string
		amount  models.Money
		brand   string
		failure string
	}{
		{payments.TokenVisa, 100_000_00, "visa", ""},
		{payments.TokenMastercard, 1, "mastercard", ""},
		{payments.TokenAmex, 5000, "amex", ""},
		{payments.TokenInsufficientFunds, 10_00, "visa", ""},
		{payments.TokenInsufficientFunds, 10_01, "visa", billing.FailureInsufficientFunds},
		{payments.TokenDeclined, 1, "visa", billing.FailureCardDeclined},
		{payments.TokenProcessingError, 1, "visa", billing.FailureProcessingError},
	}
	for _, tc := range tests {
		t.Run(tc.token, func(t *testing.T) {
			c, err := g.Describe(ctx, tc.token)
			if err != nil || c.Brand != tc.brand || len(c.Last4) != 4 {
				t.Fatalf("describe %+v %v", c, err)
			}
			req := payments.ChargeRequest{PaymentID: "pay_abc", Token: tc.token, Amount: tc.amount, Currency: "USD"}
			out, err := g.Charge(ctx, req)
			if err != nil || out.Succeeded != (tc.failure == "") || out.FailureCode != tc.failure {
				t.Fatalf("charge %+v %v", out, err)
			}
			if tc.failure == billing.FailureInsufficientFunds && (out.Available == nil || *out.Available != payments.InsufficientFundsAvailable) {
				t.Fatalf("available %+v", out.Available)
			}
			again, _ := g.Charge(ctx, req)
			if again.TransactionID != out.TransactionID || again.Succeeded != out.Succeeded {
				t.Fatal("a repeated charge must return the first outcome")
			}
		})
	}
	if _, err := g.Describe(ctx, "tok_unknown"); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("unknown token: %v", err)
	}
	if len(payments.TestTokens()) != 6 {
		t.Fatal("documented tokens")
	}
}

// fixture is a tenant with an account, an operational-looking service row
// and an open invoice of 300.00.
type fixture struct {
	store *models.Store
	p     *models.Principal
	acct  *models.BillingAccount
	inv   *billing.Invoice
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	s, _ := testenv.SeededStore(t)
	demo, err := seed.NewStore(s).DemoOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Payments", Currency: "USD", BillingEmail: "pay@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct.ID, Name: "Fiber", Kind: "internet", ServiceType: "fiber_dedicated",
		CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "premium",
		BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701", OperationID: "prov_x"}
	if err := s.In(ctx, p.OwnScope()).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	inv, err := billing.NewStore(s).CreateInvoice(ctx, p, billing.InvoiceInput{AccountID: acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svc.ID, Quantity: 1, UnitPrice: 30000}}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: s, p: p, acct: acct, inv: inv}
}

func card(token string) *billing.PaymentMethodInput {
	return &billing.PaymentMethodInput{Type: "credit_card", CardToken: token}
}

// slowGateway holds every charge until release is closed.
type slowGateway struct {
	payments.Simulator
	charging chan string
	release  chan struct{}
}

func (g *slowGateway) Charge(ctx context.Context, req payments.ChargeRequest) (billing.PaymentOutcome, error) {
	g.charging <- req.PaymentID
	<-g.release
	return g.Simulator.Charge(ctx, req)
}

// TestAPaymentInFlightReservesTheBalance holds one payment inside the
// gateway while others try: they are refused (DUPLICATE_PAYMENT) without
// waiting for it, because the first one's reservation was committed before
// the gateway was called; when it succeeds the invoice is paid once.
func TestAPaymentInFlightReservesTheBalance(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	gw := &slowGateway{charging: make(chan string, 1), release: make(chan struct{})}
	proc := payments.NewProcessor(f.store, gw, nil)
	type result struct {
		pay *billing.Payment
		inv *billing.Invoice
		err error
	}
	first := make(chan result, 1)
	go func() {
		pay, inv, err := proc.Pay(ctx, f.p, payments.PayInput{InvoiceID: f.inv.ID, Amount: 30000, PaymentMethod: card(payments.TokenVisa)})
		first <- result{pay, inv, err}
	}()
	inFlight := <-gw.charging
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, errs[i] = proc.Pay(ctx, f.p, payments.PayInput{InvoiceID: f.inv.ID, Amount: models.Money(100 * (i + 1)), PaymentMethod: card(payments.TokenVisa)})
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if models.ErrorCode(err) != models.CodeDuplicatePayment {
			t.Fatalf("a payment while another is processing: %v", err)
		}
	}
	close(gw.release)
	r := <-first
	if r.err != nil || r.pay.ID != inFlight || r.pay.Status != billing.PaymentSuccessful || r.inv.Status != billing.InvoicePaid {
		t.Fatalf("first %+v %+v %v", r.pay, r.inv, r.err)
	}
	if _, _, err := proc.Pay(ctx, f.p, payments.PayInput{InvoiceID: f.inv.ID, Amount: 1, PaymentMethod: card(payments.TokenVisa)}); models.ErrorCode(err) != models.CodeDuplicatePayment {
		t.Fatalf("after: %v", err)
	}
}

func TestPayAnswersEachOutcome(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	proc := payments.NewProcessor(f.store, nil, nil)
	tests := []struct {
		token string
		code  models.Code
	}{
		{payments.TokenInsufficientFunds, models.CodeInsufficientFunds},
		{payments.TokenDeclined, models.CodeValidation},
		{payments.TokenProcessingError, models.CodeDependencyUnavailable},
		{"tok_unheard_of", models.CodeValidation},
		{"5555555555554444", models.CodeValidation},
	}
	for _, tc := range tests {
		t.Run(tc.token, func(t *testing.T) {
			_, _, err := proc.Pay(ctx, f.p, payments.PayInput{InvoiceID: f.inv.ID, Amount: 5000, PaymentMethod: card(tc.token)})
			if models.ErrorCode(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
	pay, inv, err := proc.Pay(ctx, f.p, payments.PayInput{InvoiceID: f.inv.ID, Amount: 5000, Currency: "usd", PaymentMethod: card(payments.TokenVisa)})
	if err != nil || pay.Status != billing.PaymentSuccessful || inv.AmountDue() != 25000 {
		t.Fatalf("partial %+v %+v %v", pay, inv, err)
	}
	other := &models.Principal{OrganizationID: "org_other", Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	// Another tenant's invoice is a bad reference in the body, as a made-up one is.
	if _, _, err := proc.Pay(ctx, other, payments.PayInput{InvoiceID: f.inv.ID, Amount: 1, PaymentMethod: card(payments.TokenVisa)}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("another tenant: %v", err)
	}
}

// failingGateway cannot be reached.
type failingGateway struct{ payments.Simulator }

func (failingGateway) Charge(context.Context, payments.ChargeRequest) (billing.PaymentOutcome, error) {
	return billing.PaymentOutcome{}, errors.New("connection refused")
}

func TestAutoPayAttemptsAreIdempotent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	scope := f.p.OwnScope()
	proc := payments.NewProcessor(f.store, nil, nil)
	res, err := proc.AutoPay(ctx, scope, f.inv.ID, 1)
	if err != nil || res.Settled || res.FailureCode != billing.FailureNoPaymentMethod {
		t.Fatalf("without auto_pay: %+v %v", res, err)
	}
	pm, acct, err := proc.AddPaymentMethod(ctx, f.p, f.acct.ID, billing.PaymentMethodInput{CardToken: payments.TokenDeclined,
		BillingAddress: &billing.BillingAddress{Street: "1 Main St", City: "Austin", Zip: "78701", Country: "us"}}, true)
	if err != nil || acct.PaymentMethodID != pm.ID {
		t.Fatalf("add %+v %v", pm, err)
	}
	on := true
	if _, err := billing.NewStore(f.store).UpdatePreferences(ctx, f.p, f.acct.ID, billing.PreferencesInput{AutoPay: &on}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the same attempt twice: one payment
		res, err = proc.AutoPay(ctx, scope, f.inv.ID, 1)
		if err != nil || res.Settled || res.FailureCode != billing.FailureCardDeclined || res.PaymentID != payments.AutoPayID(f.inv.ID, 1) {
			t.Fatalf("declined attempt: %+v %v", res, err)
		}
	}
	// The customer replaces the card; the next attempt pays.
	good, _, err := proc.AddPaymentMethod(ctx, f.p, f.acct.ID, billing.PaymentMethodInput{CardToken: payments.TokenVisa,
		BillingAddress: &billing.BillingAddress{Street: "1 Main St", City: "Austin", Zip: "78701", Country: "US"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err = proc.AutoPay(ctx, scope, f.inv.ID, 2)
	if err != nil || !res.Settled || !res.Paid {
		t.Fatalf("second attempt: %+v %v", res, err)
	}
	if res, err = proc.AutoPay(ctx, scope, f.inv.ID, 3); err != nil || !res.Settled || !res.Paid || res.PaymentID != "" {
		t.Fatalf("a paid invoice is settled: %+v %v", res, err)
	}
	hist, total, err := billing.NewStore(f.store).ListPayments(ctx, f.p, billing.PaymentFilter{InvoiceID: f.inv.ID}, models.PageRequest{Limit: 10})
	if err != nil || total != 2 || hist[0].PaymentMethodID != good.ID && hist[1].PaymentMethodID != good.ID {
		t.Fatalf("payments %+v %v", hist, err)
	}

	// A gateway that cannot be reached fails the attempt (processing_error).
	f2 := newFixture(t)
	proc2 := payments.NewProcessor(f2.store, &failingGateway{}, nil)
	if _, _, err := proc2.AddPaymentMethod(ctx, f2.p, f2.acct.ID, billing.PaymentMethodInput{CardToken: payments.TokenVisa,
		BillingAddress: &billing.BillingAddress{Street: "1 Main St", City: "Austin", Zip: "78701", Country: "US"}}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := billing.NewStore(f2.store).UpdatePreferences(ctx, f2.p, f2.acct.ID, billing.PreferencesInput{AutoPay: &on}); err != nil {
		t.Fatal(err)
	}
	res, err = proc2.AutoPay(ctx, f2.p.OwnScope(), f2.inv.ID, 1)
	if err != nil || res.Settled || res.FailureCode != billing.FailureProcessingError {
		t.Fatalf("unreachable gateway: %+v %v", res, err)
	}
}
