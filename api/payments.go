package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/payments"
)

// PaymentMethodSummary names the card a payment was made with.
type PaymentMethodSummary struct {
	ID    string `json:"id" example:"pm_3fK9aZ"`
	Type  string `json:"type" example:"credit_card"`
	Brand string `json:"brand,omitempty" example:"visa"`
	Last4 string `json:"last4,omitempty" example:"4242"`
}

// PaymentItem is the payment response of spec 2.3 with the invoice's state
// after the payment; the payment history lists the same shape.
type PaymentItem struct {
	PaymentID       string               `json:"payment_id" example:"pay_3fK9aZ"`
	Status          string               `json:"status" enum:"processing,successful,failed"`
	Amount          models.Money         `json:"amount" example:"299.00"`
	Currency        string               `json:"currency" example:"USD"`
	ProcessedAt     *string              `json:"processed_at"`
	TransactionID   string               `json:"transaction_id,omitempty" example:"txn_3fK9aZ"`
	InvoiceID       string               `json:"invoice_id" example:"inv_3fK9aZ"`
	AccountID       string               `json:"account_id"`
	Source          string               `json:"source" enum:"api,auto_pay"`
	PaymentMethod   PaymentMethodSummary `json:"payment_method"`
	FailureCode     string               `json:"failure_code,omitempty" enum:"insufficient_funds,card_declined,processing_error"`
	FailureMessage  string               `json:"failure_message,omitempty"`
	CreatedAt       string               `json:"created_at"`
	InvoiceStatus   string               `json:"invoice_status,omitempty" enum:"pending,paid,overdue,cancelled" doc:"The invoice after this payment (POST only)"`
	AmountRemaining *models.Money        `json:"amount_remaining,omitempty" doc:"What the invoice still asks for after this payment (POST only)"`
}

func paymentItem(p *billing.Payment) PaymentItem {
	return PaymentItem{
		PaymentID: p.ID, Status: string(p.Status), Amount: p.Amount, Currency: p.Currency, ProcessedAt: optTimestamp(p.ProcessedAt),
		TransactionID: p.TransactionID, InvoiceID: p.InvoiceID, AccountID: p.AccountID, Source: p.Source,
		PaymentMethod: PaymentMethodSummary{ID: p.PaymentMethodID, Type: p.MethodType, Brand: p.CardBrand, Last4: p.CardLast4},
		FailureCode:   p.FailureCode, FailureMessage: p.FailureMessage, CreatedAt: models.Timestamp(p.CreatedAt),
	}
}

// PaymentOutput is one payment (spec 2.3 payment response).
type PaymentOutput struct {
	Status int
	Body   struct {
		Envelope
		PaymentItem
	}
}

// PaymentsOutput is a page of the payment history.
type PaymentsOutput struct {
	Body struct {
		Envelope
		Payments   []PaymentItem `json:"payments"`
		Pagination Pagination    `json:"pagination"`
	}
}

// PaymentBody is the payment request; payment_method_id pays
// with a saved method instead of a card.
type PaymentBody struct {
	InvoiceID       string             `json:"invoice_id" required:"true" minLength:"1" maxLength:"64" example:"inv_3fK9aZ" doc:"Required"`
	Amount          models.Money       `json:"amount" required:"true" exclusiveMinimum:"0" maximum:"100000000" example:"299.00" doc:"Required: more than 0, at most 100000000.00 and at most what the invoice still asks for; less is a partial payment"`
	Currency        string             `json:"currency,omitempty" maxLength:"3" doc:"Optional; must be the invoice's"`
	PaymentMethod   *PaymentMethodBody `json:"payment_method,omitempty" doc:"A card to charge; one of payment_method and payment_method_id is required"`
	PaymentMethodID string             `json:"payment_method_id,omitempty" maxLength:"64" doc:"A saved payment method of the invoice's account; one of payment_method and payment_method_id is required"`
}

func (s *Server) registerPayments() {
	tags := []string{"Billing: payments"}
	proc := payments.NewProcessor(s.store, payments.NewSimulator(), s.log)
	register(s, huma.Operation{OperationID: "create-payment", Method: http.MethodPost, Path: "/billing/payments", Summary: "Pay an invoice", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Charges the card (or saved payment method) through the payment gateway. A partial payment leaves the invoice pending with the rest due; " +
			"the payment that completes it marks it paid (payment.successful, invoice.paid). A refused payment is recorded and emits payment.failed: " +
			"402 INSUFFICIENT_FUNDS (details: payment_method_id, required_amount, available_amount), 400 VALIDATION_ERROR for a declined card, " +
			"503 DEPENDENCY_UNAVAILABLE for a gateway failure. Paying a paid invoice, or more than is due, is 409 DUPLICATE_PAYMENT. " +
			"Send Idempotency-Key to retry safely. Test tokens: docs/billing.md."},
		access{permission: "billing:write", sensitive: true}, func(ctx context.Context, in *struct{ Body PaymentBody }) (*PaymentOutput, error) {
			b := in.Body
			pay, inv, err := proc.Pay(ctx, principal(ctx), payments.PayInput{InvoiceID: b.InvoiceID, Amount: b.Amount, Currency: b.Currency,
				PaymentMethod: b.PaymentMethod.input(), PaymentMethodID: b.PaymentMethodID})
			if err != nil {
				return nil, s.billing.ExplainDuplicatePayment(ctx, principal(ctx), err, b.InvoiceID, b.Amount)
			}
			out := &PaymentOutput{Status: http.StatusCreated}
			out.Body.PaymentItem = paymentItem(pay)
			due := inv.AmountDue()
			out.Body.InvoiceStatus, out.Body.AmountRemaining = string(inv.Status), &due
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-payments", Method: http.MethodGet, Path: "/billing/payments", Summary: "Payment history", Tags: tags,
		Description: "Newest first; filters invoice_id, account_id, status, date_from and date_to (creation time); " +
			"filter= takes an expression of the filter language (docs/filtering.md)."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ListParams
			InvoiceID string `query:"invoice_id" maxLength:"64"`
			AccountID string `query:"account_id" maxLength:"64"`
			Status    string `query:"status" enum:"processing,successful,failed"`
			DateFrom  string `query:"date_from" maxLength:"40"`
			DateTo    string `query:"date_to" maxLength:"40"`
			Filter    string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over status, amount (money), currency, method (the payment method's type), invoice_id, account_id, source, created_at and processed_at (null until processed); combined with the other filters by and. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"status = failed and amount > 50.00"`
		}) (*PaymentsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			from, to, err := dateRange(in.DateFrom, in.DateTo)
			if err != nil {
				return nil, err
			}
			pays, total, err := s.billing.ListPayments(ctx, principal(ctx), billing.PaymentFilter{InvoiceID: in.InvoiceID, AccountID: in.AccountID, Status: in.Status, From: from, To: to, Expr: in.Filter}, pr)
			if err != nil {
				return nil, err
			}
			out := &PaymentsOutput{}
			out.Body.Payments = mapSlice(pays, paymentItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-payment", Method: http.MethodGet, Path: "/billing/payments/{payment_id}", Summary: "Get a payment", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ID string `path:"payment_id" maxLength:"64" example:"pay_3fK9aZ"`
		}) (*PaymentOutput, error) {
			pay, err := s.billing.GetPayment(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &PaymentOutput{Status: http.StatusOK}
			out.Body.PaymentItem = paymentItem(pay)
			return out, nil
		})
}
