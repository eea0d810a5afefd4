package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/filter"
)

// PaymentStatus is a payment's state: processing while the gateway is
// asked, then successful or failed (final).
type PaymentStatus string

// Payment states.
const (
	PaymentProcessing PaymentStatus = "processing"
	PaymentSuccessful PaymentStatus = "successful"
	PaymentFailed     PaymentStatus = "failed"
)

// Valid reports whether s is a known payment status.
func (s PaymentStatus) Valid() bool {
	return s == PaymentProcessing || s == PaymentSuccessful || s == PaymentFailed
}

// Why a payment failed (failure_code).
const (
	FailureInsufficientFunds = "insufficient_funds"
	FailureCardDeclined      = "card_declined"
	FailureProcessingError   = "processing_error"
	FailureNoPaymentMethod   = "no_payment_method"
	// FailureInvoiceDisputed: auto-pay skipped an invoice with an open dispute.
	FailureInvoiceDisputed = "invoice_disputed"
)

// Payment sources.
const (
	PaymentSourceAPI     = "api"
	PaymentSourceAutoPay = "auto_pay"
)

// Payment is one attempt to pay (part of) an invoice (pay_). A processing
// payment reserves its amount of the invoice's balance, so two payments can
// never together pay more than is due.
type Payment struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	InvoiceID       string         `gorm:"size:40;not null;index"`
	AccountID       string         `gorm:"size:40;not null;index"`
	Amount          models.Money   `gorm:"not null"`
	Currency        string         `gorm:"size:3;not null"`
	Status          PaymentStatus  `gorm:"size:20;not null;index"`
	Source          string         `gorm:"size:20;not null"`
	PaymentMethodID string         `gorm:"size:40;not null"`
	MethodType      string         `gorm:"size:20;not null"`
	CardBrand       string         `gorm:"size:20"`
	CardLast4       string         `gorm:"size:4"`
	TransactionID   string         `gorm:"size:80"`
	FailureCode     string         `gorm:"size:40"`
	FailureMessage  string         `gorm:"size:300"`
	Details         map[string]any `gorm:"serializer:json;type:text"`
	ProcessedAt     *time.Time
	CreatedAt       time.Time `gorm:"index"`
	UpdatedAt       time.Time
}

// PaymentStart is a payment about to be sent to the gateway.
type PaymentStart struct {
	ID       string // chosen by the caller (also the gateway's idempotency key)
	Invoice  string
	Amount   models.Money
	Currency string // optional; must match the invoice's
	Method   *PaymentMethod
	Source   string
}

// PaymentOutcome is what the gateway answered.
type PaymentOutcome struct {
	Succeeded      bool
	TransactionID  string
	FailureCode    string
	FailureMessage string
	Available      *models.Money // funds the card had, for insufficient_funds
}

// BeginPayment reserves amount of an open invoice for a new processing
// payment, in one transaction that locks the invoice row: a paid invoice,
// or an amount beyond what is due less what other payments are processing,
// is refused. Errors: NOT_FOUND, DUPLICATE_PAYMENT (DuplicatePaymentError),
// INVALID_STATE_TRANSITION (cancelled), VALIDATION_ERROR (amount, currency).
func (s *Store) BeginPayment(ctx context.Context, scope models.Scope, in PaymentStart) (*Payment, error) {
	var v models.Validator
	v.Check(in.Amount > 0, "amount", "must be more than 0")
	v.Check(in.Amount <= maxUnitPrice, "amount", "must be at most 100000000.00")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var pay *Payment
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		inv, err := lockInvoice(tx, in.Invoice)
		if err != nil {
			return err
		}
		if in.Currency != "" && !strings.EqualFold(in.Currency, inv.Currency) {
			return models.Invalid(models.FieldIssue{Field: "currency", Issue: fmt.Sprintf("invoice %s is in %s", inv.ID, inv.Currency)})
		}
		if inv.Status == InvoiceCancelled {
			return models.Errorf(models.CodeInvalidStateTransition, "invoice %s is cancelled and cannot be paid", inv.ID).WithDetail("invoice_id", inv.ID).WithDetail("status", string(inv.Status)).
				WithDetail("from", string(inv.Status)).WithDetail("to", string(InvoicePaid)).WithDetail("allowed", invoiceMoves(inv.Status))
		}
		processing, err := processingAmount(tx, inv.ID)
		if err != nil {
			return err
		}
		if inv.Status == InvoicePaid || in.Amount > inv.AmountDue()-processing {
			return DuplicatePaymentError(inv, processing, in.Amount)
		}
		pay = &Payment{ID: in.ID, InvoiceID: inv.ID, AccountID: inv.AccountID, Amount: in.Amount, Currency: inv.Currency, Status: PaymentProcessing,
			Source: in.Source, PaymentMethodID: in.Method.ID, MethodType: in.Method.Type, CardBrand: in.Method.Brand, CardLast4: in.Method.Last4}
		if pay.ID == "" {
			pay.ID = models.NewID(models.PrefixPayment)
		}
		return models.DBErr(tx.Create(pay).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return pay, nil
}

// processingAmount returns what the processing payments of an invoice
// reserve of its balance.
func processingAmount(tx *gorm.DB, invoiceID string) (models.Money, error) {
	var processing struct{ Sum int64 }
	if err := tx.Model(&Payment{}).Select("COALESCE(SUM(amount), 0) AS sum").Where("invoice_id = ? AND status = ?", invoiceID, PaymentProcessing).Scan(&processing).Error; err != nil {
		return 0, models.DBErr(err)
	}
	return models.Money(processing.Sum), nil
}

// DuplicatePaymentError is the DUPLICATE_PAYMENT answer to a payment of
// requested that inv cannot take: it is paid, or requested is more than
// what it still asks for less what processing payments reserve. Its
// details are those docs/billing.md lists: invoice_id, status, amount_due,
// processing_amount and requested_amount (and paid_date once paid).
func DuplicatePaymentError(inv *Invoice, processing, requested models.Money) *models.Error {
	var e *models.Error
	if inv.Status == InvoicePaid {
		e = models.Errorf(models.CodeDuplicatePayment, "invoice %s is already paid", inv.ID)
		if inv.PaidAt != nil {
			e.WithDetail("paid_date", models.Timestamp(*inv.PaidAt))
		}
	} else {
		msg := fmt.Sprintf("the payment of %s exceeds what invoice %s still asks for (%s)", requested, inv.ID, inv.AmountDue()-processing)
		if processing > 0 {
			msg += ": another payment of it is being processed"
		}
		e = models.Errorf(models.CodeDuplicatePayment, "%s", msg)
	}
	return e.WithDetail("invoice_id", inv.ID).WithDetail("status", string(inv.Status)).WithDetail("amount_due", inv.AmountDue()).
		WithDetail("processing_amount", processing).WithDetail("requested_amount", requested)
}

// ExplainDuplicatePayment completes a DUPLICATE_PAYMENT error about paying
// requested of invoice invoiceID (visible to p) that lacks the documented
// details (a quick refusal made before the invoice row was locked names
// only invoice_id and status): it adds amount_due, processing_amount and
// requested_amount as the invoice stands now. Any other error, or one
// already complete, is returned as it is.
func (s *Store) ExplainDuplicatePayment(ctx context.Context, p *models.Principal, err error, invoiceID string, requested models.Money) error {
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeDuplicatePayment {
		return err
	}
	if _, ok := e.Details["amount_due"]; ok {
		return err
	}
	inv, gerr := s.GetInvoice(ctx, p, invoiceID)
	if gerr != nil {
		return err
	}
	processing, perr := processingAmount(s.In(ctx, models.TenantScope(inv.OrganizationID, inv.Environment)), inv.ID)
	if perr != nil {
		return err
	}
	full := DuplicatePaymentError(inv, processing, requested)
	for k, v := range full.Details {
		if _, ok := e.Details[k]; !ok {
			e.WithDetail(k, v)
		}
	}
	return e
}

// FinishPayment records the gateway's outcome of a processing payment in one
// transaction: a success adds the amount to the invoice (paid when nothing
// is left: payment.successful and invoice.paid), a failure releases the
// reservation (payment.failed). Finishing a finished payment returns it
// unchanged. Errors: NOT_FOUND.
func (s *Store) FinishPayment(ctx context.Context, scope models.Scope, paymentID string, out PaymentOutcome) (*Payment, *Invoice, error) {
	var pay Payment
	var inv *Invoice
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", paymentID).Take(&pay).Error; err != nil {
			return models.NotFoundOr(err, "payment")
		}
		var err error
		if inv, err = lockInvoice(tx, pay.InvoiceID); err != nil {
			return err
		}
		if pay.Status != PaymentProcessing {
			return nil
		}
		now := s.Now()
		pay.ProcessedAt, pay.UpdatedAt = &now, now
		if !out.Succeeded {
			pay.Status, pay.FailureCode, pay.FailureMessage = PaymentFailed, out.FailureCode, models.Truncate(out.FailureMessage, 300)
			if out.Available != nil {
				pay.Details = map[string]any{"available_cents": int64(*out.Available)}
			}
			if err := tx.Model(&Payment{}).Where("id = ?", pay.ID).Select("status", "failure_code", "failure_message", "details", "processed_at", "updated_at").Updates(&pay).Error; err != nil {
				return models.DBErr(err)
			}
			return eventlog.RecordEvent(tx, eventlog.NewEvent(EventPaymentFailed, pay.ID, PaymentEventData(&pay, inv)))
		}
		pay.Status, pay.TransactionID = PaymentSuccessful, out.TransactionID
		if err := tx.Model(&Payment{}).Where("id = ?", pay.ID).Select("status", "transaction_id", "processed_at", "updated_at").Updates(&pay).Error; err != nil {
			return models.DBErr(err)
		}
		inv.AmountPaid += pay.Amount
		updates := map[string]any{"amount_paid": inv.AmountPaid, "updated_at": now}
		paid := inv.AmountPaid >= inv.Total && inv.Status.Open()
		if paid {
			if err := CheckInvoiceTransition(inv.Status, InvoicePaid); err != nil {
				return err
			}
			inv.Status, inv.PaidAt = InvoicePaid, &now
			updates["status"], updates["paid_at"] = InvoicePaid, now
		}
		if err := tx.Model(&Invoice{}).Where("id = ?", inv.ID).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(EventPaymentSuccessful, pay.ID, PaymentEventData(&pay, inv))); err != nil {
			return err
		}
		if paid {
			return eventlog.RecordEvent(tx, eventlog.NewEvent(EventInvoicePaid, inv.ID, InvoiceEventData(inv)))
		}
		return nil
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return &pay, inv, nil
}

// PaymentEventData is the data of the payment.* events.
func PaymentEventData(p *Payment, inv *Invoice) map[string]any {
	d := map[string]any{
		"payment": map[string]any{
			"id": p.ID, "status": string(p.Status), "amount": p.Amount, "currency": p.Currency,
			"invoice_id": p.InvoiceID, "account_id": p.AccountID, "payment_method_id": p.PaymentMethodID,
			"source": p.Source, "transaction_id": p.TransactionID, "failure_code": p.FailureCode, "failure_message": p.FailureMessage,
		},
	}
	if p.ProcessedAt != nil {
		d["payment"].(map[string]any)["processed_at"] = models.Timestamp(*p.ProcessedAt)
	}
	if inv != nil {
		d["invoice"] = map[string]any{"id": inv.ID, "number": inv.Number, "status": string(inv.Status), "amount_due": inv.AmountDue()}
	}
	return d
}

// PaymentError returns the error a failed payment is answered with:
// insufficient funds is INSUFFICIENT_FUNDS (402) with the specification's
// details; a declined card is VALIDATION_ERROR on card_token; a gateway
// failure is DEPENDENCY_UNAVAILABLE (503, retry_after). It returns nil for
// a payment that did not fail.
func PaymentError(p *Payment, field string) error {
	if p.Status != PaymentFailed {
		return nil
	}
	switch p.FailureCode {
	case FailureInsufficientFunds:
		e := models.Errorf(models.CodeInsufficientFunds, "the payment method does not have enough funds for %s %s", p.Amount, p.Currency).
			WithDetail("payment_method_id", p.PaymentMethodID).WithDetail("required_amount", p.Amount).WithDetail("payment_id", p.ID)
		switch avail := p.Details["available_cents"].(type) {
		case int64:
			e.WithDetail("available_amount", models.Money(avail))
		case float64: // read back from the JSON column
			e.WithDetail("available_amount", models.Money(avail))
		}
		return e
	case FailureCardDeclined:
		e := models.Invalid(models.FieldIssue{Field: field, Issue: "was declined by the card issuer"})
		e.Message = "the card was declined"
		return e.WithDetail("payment_id", p.ID).WithDetail("decline_code", p.FailureCode)
	default:
		return models.Errorf(models.CodeDependencyUnavailable, "the payment gateway could not process the payment; retry later").
			WithDetail("payment_id", p.ID).WithDetail("retry_after", 5)
	}
}

// GetPayment returns one payment visible to p. Errors: NOT_FOUND.
func (s *Store) GetPayment(ctx context.Context, p *models.Principal, id string) (*Payment, error) {
	var pay Payment
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&pay).Error
	return &pay, models.NotFoundOr(err, "payment")
}

// PaymentFilter narrows the payment history.
type PaymentFilter struct {
	InvoiceID string
	AccountID string
	Status    string
	From, To  *time.Time
	// Expr is a filter expression over PaymentFilterSchema's fields
	// (docs/filtering.md); empty: no such filter.
	Expr string
}

var paymentSorts = models.SortFields{"created_at": "created_at", "amount": "amount", "status": "status"}

// ListPayments returns a page of the payments visible to p, newest first.
// Errors: VALIDATION_ERROR.
func (s *Store) ListPayments(ctx context.Context, p *models.Principal, f PaymentFilter, page models.PageRequest) ([]Payment, int64, error) {
	var v models.Validator
	if f.Status != "" {
		v.Check(PaymentStatus(f.Status).Valid(), "status", "must be processing, successful or failed")
	}
	if f.From != nil && f.To != nil {
		v.Check(!f.To.Before(*f.From), "date_to", "must not be before date_from")
	}
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	q := s.In(ctx, p.Scope()).Model(&Payment{})
	if strings.TrimSpace(f.Expr) != "" {
		expr, err := filter.Compile(PaymentFilterSchema(), f.Expr)
		if err != nil {
			return nil, 0, err
		}
		q = q.Where(expr.SQL, expr.Args...)
	}
	if f.InvoiceID != "" {
		q = q.Where("invoice_id = ?", f.InvoiceID)
	}
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.From != nil {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	out := []Payment{}
	total, err := models.Paginate(q, page, paymentSorts, &out)
	return out, total, err
}

// PaymentIn returns one payment in scope. Errors: NOT_FOUND.
func (s *Store) PaymentIn(ctx context.Context, scope models.Scope, id string) (*Payment, error) {
	var pay Payment
	err := s.In(ctx, scope).Where("id = ?", id).Take(&pay).Error
	return &pay, models.NotFoundOr(err, "payment")
}
