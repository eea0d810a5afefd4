package payments

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// Processor pays invoices through a gateway. Every payment goes through the
// same three steps: reserve the amount on the invoice (models.BeginPayment,
// which locks the invoice row, so two concurrent payments can never both
// take the same balance), charge the gateway outside any transaction, and
// record the outcome with its events (models.FinishPayment).
type Processor struct {
	store   *models.Store
	billing *billing.Store
	gw      Gateway
	log     *slog.Logger
}

// NewProcessor returns a processor over store charging through gw (the
// simulator when gw is nil).
func NewProcessor(store *models.Store, gw Gateway, log *slog.Logger) *Processor {
	if gw == nil {
		gw = NewSimulator()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Processor{store: store, billing: billing.NewStore(store), gw: gw, log: log}
}

// PayInput is the payment request (spec 2.3): the invoice, the amount, and
// either a card (payment_method: type, card_token, billing_address) or a
// saved payment method of the invoice's account (payment_method_id).
type PayInput struct {
	InvoiceID       string
	Amount          models.Money
	Currency        string
	PaymentMethod   *billing.PaymentMethodInput
	PaymentMethodID string
}

func (in *PayInput) validate() error {
	var v models.Validator
	v.Check(in.InvoiceID != "", "invoice_id", "is required")
	v.Check(in.InvoiceID == "" || models.HasPrefix(in.InvoiceID, models.PrefixInvoice), "invoice_id", "must be an invoice id (inv_...)")
	v.Check(in.Amount > 0, "amount", "must be more than 0")
	switch {
	case in.PaymentMethod == nil && in.PaymentMethodID == "":
		v.Add("payment_method", "is required (or payment_method_id)")
	case in.PaymentMethod != nil && in.PaymentMethodID != "":
		v.Add("payment_method_id", "send either payment_method or payment_method_id, not both")
	case in.PaymentMethod != nil:
		if err := in.PaymentMethod.Validate("payment_method.", false); err != nil {
			for _, fi := range models.AsError(err).Details["fields"].([]models.FieldIssue) {
				v.Add(fi.Field, fi.Issue)
			}
		}
	}
	return v.Err()
}

// Pay pays (part of) an invoice visible to p and returns the payment and
// the invoice after it. A partial payment leaves the invoice pending (or
// overdue) with the rest due; the payment that completes it marks it paid.
// A refused payment is recorded (status failed, payment.failed) and
// answered with its error. Errors: VALIDATION_ERROR (body, unknown token,
// declined card, an invoice_id that names no invoice p may see), DUPLICATE_PAYMENT (already paid, or
// more than is due), INVALID_STATE_TRANSITION (cancelled invoice),
// INSUFFICIENT_FUNDS, DEPENDENCY_UNAVAILABLE (gateway failure).
func (pr *Processor) Pay(ctx context.Context, p *models.Principal, in PayInput) (*billing.Payment, *billing.Invoice, error) {
	if err := in.validate(); err != nil {
		return nil, nil, err
	}
	inv, err := pr.billing.GetInvoice(ctx, p, in.InvoiceID)
	if models.ErrorCode(err) == models.CodeNotFound {
		// A reference in the body: the same answer for another tenant's
		// invoice as for a made-up id.
		return nil, nil, models.Invalid(models.FieldIssue{Field: "invoice_id", Issue: "no invoice " + in.InvoiceID + " in this organization"})
	}
	if err != nil {
		return nil, nil, err
	}
	scope := models.TenantScope(inv.OrganizationID, inv.Environment)
	if in.Currency != "" && !strings.EqualFold(in.Currency, inv.Currency) {
		return nil, nil, models.Invalid(models.FieldIssue{Field: "currency", Issue: fmt.Sprintf("invoice %s is in %s", inv.ID, inv.Currency)})
	}
	if inv.Status == billing.InvoicePaid {
		// Fast answer; BeginPayment decides under the row lock.
		return nil, nil, models.Errorf(models.CodeDuplicatePayment, "invoice %s is already paid", inv.ID).
			WithDetail("invoice_id", inv.ID).WithDetail("status", string(inv.Status))
	}
	var pm *billing.PaymentMethod
	field := "payment_method_id"
	if in.PaymentMethodID != "" {
		if pm, err = pr.billing.ResolvePaymentMethodID(ctx, scope, inv.AccountID, in.PaymentMethodID, "payment_method_id"); err != nil {
			return nil, nil, err
		}
	} else {
		field = "payment_method.card_token"
		card, err := pr.gw.Describe(ctx, in.PaymentMethod.CardToken)
		if err != nil {
			return nil, nil, renameField(err, field)
		}
		acct := &models.BillingAccount{ID: inv.AccountID, Tenant: models.Tenant{OrganizationID: inv.OrganizationID, Environment: inv.Environment}}
		pm = billing.NewPaymentMethod(acct, *in.PaymentMethod, card, false)
		if err := pr.billing.SavePaymentMethod(ctx, pm); err != nil {
			return nil, nil, err
		}
	}
	pay, err := pr.billing.BeginPayment(ctx, scope, billing.PaymentStart{Invoice: inv.ID, Amount: in.Amount, Currency: in.Currency, Method: pm, Source: billing.PaymentSourceAPI})
	if err != nil {
		return nil, nil, err
	}
	pay, inv, err = pr.charge(context.WithoutCancel(ctx), scope, pay, pm)
	if err != nil {
		return nil, nil, err
	}
	return pay, inv, billing.PaymentError(pay, field)
}

// charge asks the gateway to charge a processing payment and records the
// outcome (a gateway that cannot be reached fails the payment).
func (pr *Processor) charge(ctx context.Context, scope models.Scope, pay *billing.Payment, pm *billing.PaymentMethod) (*billing.Payment, *billing.Invoice, error) {
	out, err := pr.gw.Charge(ctx, ChargeRequest{PaymentID: pay.ID, Token: pm.Token, Amount: pay.Amount, Currency: pay.Currency, Description: "invoice " + pay.InvoiceID})
	if err != nil {
		pr.log.WarnContext(ctx, "the payment gateway failed", "payment_id", pay.ID, "error", err)
		out = billing.PaymentOutcome{FailureCode: billing.FailureProcessingError, FailureMessage: "the payment gateway could not be reached"}
	}
	return pr.billing.FinishPayment(ctx, scope, pay.ID, out)
}

func renameField(err error, field string) error {
	e := models.AsError(err)
	if e.Code != models.CodeValidation {
		return e
	}
	fields, _ := e.Details["fields"].([]models.FieldIssue)
	for i := range fields {
		fields[i].Field = field
	}
	return models.Invalid(fields...)
}

// AutoPayResult is what one auto-pay attempt did.
type AutoPayResult struct {
	// Settled is true when the invoice no longer needs collecting (paid,
	// or cancelled); Paid says whether it is paid.
	Settled     bool   `json:"settled"`
	Paid        bool   `json:"paid"`
	PaymentID   string `json:"payment_id,omitempty"`
	FailureCode string `json:"failure_code,omitempty"`
}

// AutoPayID returns the id of attempt n of the auto-pay of an invoice:
// fixed, so a retried activity finds the payment its first try made.
func AutoPayID(invoiceID string, attempt int) string {
	return fmt.Sprintf("%s_%s_a%d", models.PrefixPayment, strings.TrimPrefix(invoiceID, models.PrefixInvoice+"_"), attempt)
}

// AutoPay makes attempt n to charge what an invoice still asks for to the
// payment method auto-pay uses (its subscription's, else its account's).
// Running it again for the same attempt returns that attempt's result.
// Errors: NOT_FOUND.
func (pr *Processor) AutoPay(ctx context.Context, scope models.Scope, invoiceID string, attempt int) (*AutoPayResult, error) {
	id := AutoPayID(invoiceID, attempt)
	var pay *billing.Payment
	var pm *billing.PaymentMethod
	if prior, err := pr.billing.PaymentIn(ctx, scope, id); err == nil {
		if prior.Status != billing.PaymentProcessing {
			return pr.autoPayResult(ctx, scope, invoiceID, prior)
		}
		if pm, err = pr.billing.AnyPaymentMethodIn(ctx, scope, prior.PaymentMethodID); err != nil {
			return nil, err
		}
		pay = prior
	} else if models.ErrorCode(err) != models.CodeNotFound {
		return nil, err
	}
	if pay == nil {
		t, err := pr.billing.AutoPayTargetOf(ctx, scope, invoiceID)
		if err != nil {
			return nil, err
		}
		if !t.Invoice.Status.Open() {
			return &AutoPayResult{Settled: true, Paid: t.Invoice.Status == billing.InvoicePaid}, nil
		}
		if t.Disputed {
			return &AutoPayResult{FailureCode: billing.FailureInvoiceDisputed}, nil
		}
		if t.Method == nil {
			return &AutoPayResult{FailureCode: billing.FailureNoPaymentMethod}, nil
		}
		pm = t.Method
		pay, err = pr.billing.BeginPayment(ctx, scope, billing.PaymentStart{ID: id, Invoice: invoiceID, Amount: t.Invoice.AmountDue(), Method: pm, Source: billing.PaymentSourceAutoPay})
		switch {
		case err == nil:
		case models.ErrorCode(err) == models.CodeDuplicatePayment || models.ErrorCode(err) == models.CodeInvalidStateTransition:
			// Paid meanwhile, or another payment is processing: look again later.
			inv, ierr := pr.billing.InvoiceIn(ctx, scope, invoiceID)
			if ierr != nil {
				return nil, ierr
			}
			return &AutoPayResult{Settled: !inv.Status.Open(), Paid: inv.Status == billing.InvoicePaid, FailureCode: "payment_in_progress"}, nil
		default:
			return nil, err
		}
	}
	pay, _, err := pr.charge(ctx, scope, pay, pm)
	if err != nil {
		return nil, err
	}
	return pr.autoPayResult(ctx, scope, invoiceID, pay)
}

func (pr *Processor) autoPayResult(ctx context.Context, scope models.Scope, invoiceID string, pay *billing.Payment) (*AutoPayResult, error) {
	inv, err := pr.billing.InvoiceIn(ctx, scope, invoiceID)
	if err != nil {
		return nil, err
	}
	return &AutoPayResult{Settled: !inv.Status.Open(), Paid: inv.Status == billing.InvoicePaid, PaymentID: pay.ID, FailureCode: pay.FailureCode}, nil
}

// AddPaymentMethod saves a tokenised card on an account visible to p (the
// gateway describes the token: brand, last four digits, expiry) and, with
// setDefault, makes it the account's payment method. It returns the method
// and the account after the change. Errors: NOT_FOUND (account),
// VALIDATION_ERROR (body, unknown token).
func (pr *Processor) AddPaymentMethod(ctx context.Context, p *models.Principal, accountID string, in billing.PaymentMethodInput, setDefault bool) (*billing.PaymentMethod, *models.BillingAccount, error) {
	acct, err := pr.billing.GetAccount(ctx, p, accountID)
	if err != nil {
		return nil, nil, err
	}
	if err := in.Validate("", true); err != nil {
		return nil, nil, err
	}
	card, err := pr.gw.Describe(ctx, in.CardToken)
	if err != nil {
		return nil, nil, renameField(err, "card_token")
	}
	pm := billing.NewPaymentMethod(acct, in, card, true)
	if err := pr.billing.SavePaymentMethod(ctx, pm); err != nil {
		return nil, nil, err
	}
	if setDefault {
		id := pm.ID
		if acct, err = pr.billing.UpdatePreferences(ctx, p, accountID, billing.PreferencesInput{PaymentMethodID: &id}); err != nil {
			return nil, nil, err
		}
	}
	return pm, acct, nil
}
