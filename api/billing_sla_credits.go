package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// SLACreditItem is a service credit earned by a breached support SLA target.
type SLACreditItem struct {
	ID            string       `json:"id" example:"slacr_3fK9aZ"`
	ServiceID     string       `json:"service_id" example:"svc_3fK9aZ"`
	TicketID      string       `json:"ticket_id" example:"tkt_3fK9aZ"`
	Percent       models.Money `json:"percent" example:"10.00" doc:"Percent of the service's monthly price"`
	Amount        models.Money `json:"amount" example:"29.90" doc:"The credit, fixed when it was issued"`
	AppliedAmount models.Money `json:"applied_amount" example:"29.90" doc:"What invoices have taken so far (an invoice takes at most its subtotal)"`
	Currency      string       `json:"currency" example:"USD"`
	Reason        string       `json:"reason"`
	Status        string       `json:"status" enum:"pending,applied,void"`
	InvoiceID     *string      `json:"invoice_id" doc:"The invoice that took the credit's last part; null until applied"`
	CreatedAt     string       `json:"created_at"`
	AppliedAt     *string      `json:"applied_at"`
}

func slaCreditItem(c *billing.SLACredit) SLACreditItem {
	var inv *string
	if c.InvoiceID != "" {
		inv = &c.InvoiceID
	}
	return SLACreditItem{ID: c.ID, ServiceID: c.ServiceID, TicketID: c.TicketID, Percent: models.Money(c.PercentBP), Amount: c.Amount,
		AppliedAmount: c.AppliedAmount, Currency: c.Currency, Reason: c.Reason, Status: c.Status, InvoiceID: inv,
		CreatedAt: models.Timestamp(c.CreatedAt), AppliedAt: optTimestamp(c.AppliedAt)}
}

// SLACreditsOutput is a page of SLA credits.
type SLACreditsOutput struct {
	Body struct {
		Envelope
		SLACredits []SLACreditItem `json:"sla_credits"`
		Pagination Pagination      `json:"pagination"`
	}
}

// registerSLACredits registers the list of SLA credits: credits are issued
// by the support SLA clock and applied by invoicing, never through the API.
func (s *Server) registerSLACredits() {
	register(s, huma.Operation{OperationID: "list-sla-credits", Method: http.MethodGet, Path: "/billing/sla-credits", Summary: "List SLA credits",
		Description: "Service credits earned when a support ticket tied to a service misses its resolution target, newest first " +
			"(sortable by created_at, applied_at, status, amount). A pending credit becomes a negative sla_credit line of the service's next invoice.",
		Tags: []string{"Billing: invoices"}},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ServiceID string `query:"service_id" maxLength:"64" example:"svc_3fK9aZ"`
			Status    string `query:"status" enum:"pending,applied,void"`
			ListParams
		}) (*SLACreditsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.billing.ListSLACredits(ctx, principal(ctx), billing.SLACreditFilter{ServiceID: in.ServiceID, Status: in.Status}, pr)
			if err != nil {
				return nil, err
			}
			out := &SLACreditsOutput{}
			out.Body.SLACredits = mapSlice(rows, slaCreditItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
