package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// DisputeItem is a customer's dispute of an invoice.
type DisputeItem struct {
	ID          string  `json:"id" example:"dsp_3fK9aZ"`
	InvoiceID   string  `json:"invoice_id"`
	Reason      string  `json:"reason" enum:"incorrect_amount,service_not_received,duplicate_charge,cancelled_service,other"`
	Description string  `json:"description"`
	Status      string  `json:"status" enum:"open,resolved"`
	Resolution  string  `json:"resolution,omitempty"`
	CreatedBy   string  `json:"created_by" doc:"the credential (ak_, usr_, cli_, cert_) that opened it"`
	CreatedAt   string  `json:"created_at"`
	ResolvedAt  *string `json:"resolved_at"`
}

func disputeItem(d *billing.InvoiceDispute) DisputeItem {
	return DisputeItem{ID: d.ID, InvoiceID: d.InvoiceID, Reason: d.Reason, Description: d.Description, Status: d.Status,
		Resolution: d.Resolution, CreatedBy: d.CreatedBy, CreatedAt: models.Timestamp(d.CreatedAt), ResolvedAt: optTimestamp(d.ResolvedAt)}
}

// DisputeOutput wraps one dispute.
type DisputeOutput struct {
	Status int
	Body   struct {
		Envelope
		Dispute DisputeItem `json:"dispute"`
	}
}

// DisputesOutput is a page of an invoice's disputes.
type DisputesOutput struct {
	Body struct {
		Envelope
		Disputes   []DisputeItem `json:"disputes"`
		Pagination Pagination    `json:"pagination"`
	}
}

// DisputeBody is the body of an invoice dispute.
type DisputeBody struct {
	Reason      string `json:"reason" enum:"incorrect_amount,service_not_received,duplicate_charge,cancelled_service,other"`
	Description string `json:"description,omitempty" maxLength:"4000" doc:"required when reason is other"`
}

// registerDisputes registers the invoice disputes: how a customer objects
// to an invoice, which only provider staff can cancel.
func (s *Server) registerDisputes(tags []string) {
	register(s, huma.Operation{OperationID: "create-invoice-dispute", Method: http.MethodPost, Path: "/billing/invoices/{invoice_id}/disputes", Summary: "Dispute an invoice",
		Description: "Records the caller's objection to an invoice and writes invoice.disputed, so that provider staff review it (they resolve it, for example by cancelling the invoice). " +
			"While a dispute is open, auto-pay does not charge the invoice. One open dispute per invoice; a cancelled invoice cannot be disputed (409 INVALID_STATE_TRANSITION).",
		Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			ID   string `path:"invoice_id" maxLength:"64" example:"inv_3fK9aZ"`
			Body DisputeBody
		}) (*DisputeOutput, error) {
			d, err := s.billing.DisputeInvoice(ctx, principal(ctx), in.ID, billing.DisputeInput{Reason: in.Body.Reason, Description: in.Body.Description})
			if err != nil {
				return nil, err
			}
			out := &DisputeOutput{Status: http.StatusCreated}
			out.Body.Dispute = disputeItem(d)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-invoice-disputes", Method: http.MethodGet, Path: "/billing/invoices/{invoice_id}/disputes", Summary: "List an invoice's disputes",
		Description: "Open and resolved disputes of the invoice, newest first (sortable by created_at, status).", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ID string `path:"invoice_id" maxLength:"64" example:"inv_3fK9aZ"`
			ListParams
		}) (*DisputesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.billing.ListInvoiceDisputes(ctx, principal(ctx), in.ID, pr)
			if err != nil {
				return nil, err
			}
			out := &DisputesOutput{}
			out.Body.Disputes = mapSlice(rows, disputeItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
