package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/workflows"
)

// InvoiceLineItem is one charge of an invoice (the spec's `services` item).
type InvoiceLineItem struct {
	ServiceID   string       `json:"service_id,omitempty" example:"svc_3fK9aZ" doc:"Absent for charges of no service (API overage)"`
	Description string       `json:"description"`
	Amount      models.Money `json:"amount" example:"299.00"`
	Quantity    int64        `json:"quantity" example:"1"`
	UnitPrice   models.Money `json:"unit_price" example:"299.00" doc:"Price of one unit for a full period; a prorated recurring line's amount is less than quantity × unit_price"`
	Kind        string       `json:"kind" enum:"service,recurring,usage,overage,sla_credit" doc:"sla_credit: an SLA credit, a negative amount"`
	Category    string       `json:"category" example:"connectivity"`
	PeriodStart *string      `json:"period_start,omitempty"`
	PeriodEnd   *string      `json:"period_end,omitempty"`
}

// InvoiceItem is an invoice (spec 2.3 plus its totals and lifecycle dates).
type InvoiceItem struct {
	ID             string            `json:"id" example:"inv_3fK9aZ"`
	Number         string            `json:"number" example:"INV-000123"`
	Status         string            `json:"status" enum:"pending,paid,overdue,cancelled"`
	Amount         models.Money      `json:"amount" example:"324.67" doc:"Total, tax included"`
	Currency       string            `json:"currency" example:"USD"`
	DueDate        string            `json:"due_date"`
	PaidDate       *string           `json:"paid_date"`
	Services       []InvoiceLineItem `json:"services"`
	AccountID      string            `json:"account_id"`
	Subtotal       models.Money      `json:"subtotal"`
	Tax            models.Money      `json:"tax"`
	TaxRate        models.Money      `json:"tax_rate" example:"8.25" doc:"Percent"`
	AmountPaid     models.Money      `json:"amount_paid"`
	AmountDue      models.Money      `json:"amount_due"`
	Source         string            `json:"source" enum:"manual,subscription"`
	SubscriptionID string            `json:"subscription_id,omitempty"`
	PeriodStart    *string           `json:"period_start,omitempty"`
	PeriodEnd      *string           `json:"period_end,omitempty"`
	Notes          string            `json:"notes,omitempty"`
	IssuedAt       string            `json:"issued_at"`
	OverdueAt      *string           `json:"overdue_at"`
	CancelledAt    *string           `json:"cancelled_at"`
	UpdatedAt      string            `json:"updated_at"`
}

func invoiceLineItem(l *billing.InvoiceLine) InvoiceLineItem {
	return InvoiceLineItem{ServiceID: l.ServiceID, Description: l.Description, Amount: l.Amount, Quantity: l.Quantity, UnitPrice: l.UnitPrice,
		Kind: l.Kind, Category: l.Category, PeriodStart: optTimestamp(l.PeriodStart), PeriodEnd: optTimestamp(l.PeriodEnd)}
}

func invoiceItem(inv *billing.Invoice) InvoiceItem {
	return InvoiceItem{
		ID: inv.ID, Number: inv.Number, Status: string(inv.Status), Amount: inv.Total, Currency: inv.Currency,
		DueDate: models.Timestamp(inv.DueDate), PaidDate: optTimestamp(inv.PaidAt), Services: mapSlice(inv.Lines, invoiceLineItem),
		AccountID: inv.AccountID, Subtotal: inv.Subtotal, Tax: inv.Tax, TaxRate: models.Money(inv.TaxRateBP), AmountPaid: inv.AmountPaid,
		AmountDue: inv.AmountDue(), Source: inv.Source, SubscriptionID: inv.SubscriptionID, PeriodStart: optTimestamp(inv.PeriodStart),
		PeriodEnd: optTimestamp(inv.PeriodEnd), Notes: inv.Notes, IssuedAt: models.Timestamp(inv.IssuedAt),
		OverdueAt: optTimestamp(inv.OverdueAt), CancelledAt: optTimestamp(inv.CancelledAt), UpdatedAt: models.Timestamp(inv.UpdatedAt),
	}
}

// InvoiceOutput wraps one invoice.
type InvoiceOutput struct {
	Status int
	Body   struct {
		Envelope
		Invoice InvoiceItem `json:"invoice"`
	}
}

// InvoicesOutput is the invoice list response.
type InvoicesOutput struct {
	Body struct {
		Envelope
		Invoices   []InvoiceItem `json:"invoices"`
		TotalCount int64         `json:"total_count"`
		HasMore    bool          `json:"has_more"`
		NextCursor *string       `json:"next_cursor" nullable:"true" doc:"Cursor of the next page (pass as cursor); null on the last page"`
	}
}

// InvoiceLineBody is one service of the invoice create body.
type InvoiceLineBody struct {
	ServiceID string       `json:"service_id" maxLength:"64" example:"svc_3fK9aZ"`
	Quantity  int64        `json:"quantity" minimum:"1" maximum:"1000000" example:"1"`
	UnitPrice models.Money `json:"unit_price" minimum:"0" maximum:"100000000" example:"299.00"`
}

// InvoiceBody is the invoice create body.
type InvoiceBody struct {
	AccountID string            `json:"account_id" maxLength:"64" example:"acct_3fK9aZ"`
	Services  []InvoiceLineBody `json:"services" minItems:"1" maxItems:"100" doc:"1 to 100 lines"`
	DueDate   *time.Time        `json:"due_date,omitempty" doc:"Default: 30 days after issue"`
	Notes     string            `json:"notes,omitempty" maxLength:"2000"`
}

type invoicePath struct {
	ID string `path:"invoice_id" maxLength:"64" example:"inv_3fK9aZ"`
}

// dateBound parses a date_from/date_to value: an RFC 3339 time, or a date
// (date_to of a date includes the whole day). Errors: VALIDATION_ERROR.
func dateBound(field, v string, end bool) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		t = t.UTC()
		return &t, nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a date (2026-11-01) or an RFC 3339 time"})
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return &t, nil
}

// dateRange reads date_from and date_to (dateBound: date_to of a date
// includes that day) and refuses a date_to before date_from
// (date_from=2026-11-29&date_to=2026-11-28). Errors: VALIDATION_ERROR.
func dateRange(fromText, toText string) (from, to *time.Time, err error) {
	if from, err = dateBound("date_from", fromText, false); err != nil {
		return nil, nil, err
	}
	if to, err = dateBound("date_to", toText, true); err != nil {
		return nil, nil, err
	}
	// A date's bound is the next day's start, so a date_to the day before
	// date_from ends where date_from begins.
	if from != nil && to != nil && (to.Before(*from) || (len(toText) == len("2006-01-02") && !to.After(*from))) {
		return nil, nil, models.Invalid(models.FieldIssue{Field: "date_to", Issue: "must not be before date_from"})
	}
	return from, to, nil
}

func (s *Server) registerInvoices() {
	tags := []string{"Billing: invoices"}
	register(s, huma.Operation{OperationID: "list-invoices", Method: http.MethodGet, Path: "/billing/invoices", Summary: "List invoices", Tags: tags,
		Description: "Newest first. date_from and date_to bound the issue date (a date or an RFC 3339 time; date_to of a date includes that day). " +
			"filter= takes an expression of the filter language (docs/filtering.md)."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			Limit     int    `query:"limit" minimum:"1" maximum:"200" doc:"Invoices per page (1-200, default 50)"`
			PerPage   int    `query:"per_page" minimum:"1" maximum:"200" doc:"Alias of limit"`
			Offset    int    `query:"offset" minimum:"0" maximum:"2147483647" doc:"Invoices to skip"`
			Page      int    `query:"page" minimum:"1" doc:"1-based page number (instead of offset)"`
			Cursor    string `query:"cursor" maxLength:"200" doc:"Opaque cursor from next_cursor (instead of offset or page)"`
			Sort      string `query:"sort" maxLength:"200" example:"due_date:asc" doc:"field:asc|desc, comma-separated: issued_at (default, newest first), due_date, created_at, amount, amount_paid, status, number"`
			Status    string `query:"status" enum:"pending,paid,overdue,cancelled"`
			DateFrom  string `query:"date_from" maxLength:"40" example:"2026-11-01"`
			DateTo    string `query:"date_to" maxLength:"40" example:"2026-11-30"`
			AccountID string `query:"account_id" maxLength:"64"`
			Filter    string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over status, number, account_id, source, subscription_id (null for a manual invoice), currency, amount (the total), subtotal, tax and amount_paid (money), issued_at, due_date, paid_at (null until paid), created_at and updated_at; combined with the other filters by and. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"status in (pending, overdue) and amount >= 100.00"`
		}) (*InvoicesOutput, error) {
			from, to, err := dateRange(in.DateFrom, in.DateTo)
			if err != nil {
				return nil, err
			}
			pr, err := models.ParsePage(models.ListQuery{Limit: in.Limit, PerPage: in.PerPage, Offset: in.Offset, Page: in.Page, Cursor: in.Cursor, Sort: in.Sort})
			if err != nil {
				return nil, err
			}
			invs, total, err := s.billing.ListInvoices(ctx, principal(ctx), billing.InvoiceFilter{Status: in.Status, AccountID: in.AccountID, From: from, To: to,
				Limit: pr.Limit, Offset: pr.Offset, Sort: pr.Sort, Expr: in.Filter})
			if err != nil {
				return nil, err
			}
			out := &InvoicesOutput{}
			out.Body.Invoices = mapSlice(invs, invoiceItem)
			out.Body.TotalCount = total
			out.Body.HasMore = int64(pr.Offset+len(invs)) < total
			if next := pr.NextCursor(total); next != "" {
				out.Body.NextCursor = &next
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-invoice", Method: http.MethodGet, Path: "/billing/invoices/{invoice_id}", Summary: "Get an invoice", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *invoicePath) (*InvoiceOutput, error) {
			inv, err := s.billing.GetInvoice(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &InvoiceOutput{Status: http.StatusOK}
			out.Body.Invoice = invoiceItem(inv)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "create-invoice", Method: http.MethodPost, Path: "/billing/invoices", Summary: "Create an invoice", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "One line per service (quantity × unit_price), tax at the account's tax_rate, due on due_date (default 30 days). " +
			"Emits invoice.created; at the due date an unpaid invoice becomes overdue (invoice.overdue). See docs/billing.md."},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct{ Body InvoiceBody }) (*InvoiceOutput, error) {
			p := principal(ctx)
			mi := billing.InvoiceInput{ID: models.NewID(models.PrefixInvoice), AccountID: in.Body.AccountID, DueDate: in.Body.DueDate, Notes: in.Body.Notes}
			for _, l := range in.Body.Services {
				mi.Lines = append(mi.Lines, billing.InvoiceLineInput{ServiceID: l.ServiceID, Quantity: l.Quantity, UnitPrice: l.UnitPrice})
			}
			if _, scope, err := s.billing.ValidateInvoice(ctx, p, mi); err != nil {
				return nil, err
			} else if err := s.watchDueDate(ctx, scope, mi); err != nil {
				return nil, err
			}
			inv, err := s.billing.CreateInvoice(ctx, p, mi)
			if err != nil {
				return nil, err
			}
			out := &InvoiceOutput{Status: http.StatusCreated}
			out.Body.Invoice = invoiceItem(inv)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "cancel-invoice", Method: http.MethodPost, Path: "/billing/invoices/{invoice_id}/cancel", Summary: "Cancel (void) an invoice", Tags: tags,
		Description: "Provider staff only (permission billing:admin; administrators hold it), challenged with a second factor for users, and audited (invoice.voided). " +
			"Only an open invoice without payments can be cancelled; a paid, cancelled or partly paid invoice is 409 INVALID_STATE_TRANSITION. " +
			"Cancelling resolves the invoice's open dispute and writes invoice.cancelled. Customers dispute an invoice instead: POST /billing/invoices/{invoice_id}/disputes."},
		access{permission: models.PermissionBillingAdmin, staff: true, mfa: true}, func(ctx context.Context, in *struct {
			ID   string `path:"invoice_id" maxLength:"64" example:"inv_3fK9aZ"`
			Body *struct {
				Reason string `json:"reason,omitempty" maxLength:"500" doc:"why the invoice is voided (kept in the event, the audit trail and the resolved dispute)"`
			}
		}) (*InvoiceOutput, error) {
			reason := ""
			if in.Body != nil {
				reason = in.Body.Reason
			}
			p := principal(ctx)
			inv, err := s.billing.CancelInvoice(ctx, p, in.ID, reason)
			if err != nil {
				return nil, err
			}
			ev := identity.AuditEvent{EventType: identity.AuditInvoiceVoided, OrganizationID: inv.OrganizationID, UserID: p.UserID,
				SessionID: inv.ID, Reason: strings.TrimSpace("by " + p.ID + ": " + reason)}
			if p.Kind == models.PrincipalClient {
				ev.ClientID = p.ID
			}
			s.audit(ctx, ev)
			out := &InvoiceOutput{Status: http.StatusOK}
			out.Body.Invoice = invoiceItem(inv)
			return out, nil
		})
	s.registerDisputes(tags)
}

// watchDueDate starts the InvoiceDue workflow of a manual invoice about to
// be created (workflow id: the invoice id), so that it becomes overdue at
// its due date. It runs before the invoice is written: if the workflow
// engine is unavailable nothing is created (DEPENDENCY_UNAVAILABLE); a
// workflow whose invoice was never written finds nothing to mark. Without
// a configured workflow engine (handler tests) the invoice is not watched.
func (s *Server) watchDueDate(ctx context.Context, scope models.Scope, mi billing.InvoiceInput) error {
	if s.temporal == nil {
		return nil
	}
	due := s.now().Add(billing.PaymentTermDays * 24 * time.Hour)
	if mi.DueDate != nil {
		due = mi.DueDate.UTC()
	}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: mi.ID, Priority: workflows.Interactive,
		OrganizationID: scope.OrganizationID, Environment: scope.Environment, OperationType: workflows.OperationTypeInvoice, ResourceID: mi.ID,
		Summary: fmt.Sprintf("Invoice %s due %s for %s (%s)", mi.ID, due.Format(time.DateOnly), scope.OrganizationID, scope.Environment),
		Link:    s.cfg.PublicBaseURL + "/v1/billing/invoices/" + mi.ID})
	startCtx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	in := workflows.InvoiceDueInput{InvoiceID: mi.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, DueAt: due}
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.InvoiceDueWorkflow, in); err != nil {
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return e
	}
	return nil
}
