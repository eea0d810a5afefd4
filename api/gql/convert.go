package gql

import (
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// The graph's types from the stores' models.

func serviceOf(s *services.Service) *Service {
	return &Service{ID: s.ID, Name: s.Name, Kind: s.Kind, ServiceType: s.ServiceType, Status: string(s.Status), AccountID: s.AccountID,
		Bandwidth: s.Bandwidth, LocationID: s.LocationID, City: s.City, State: s.State, MonthlyCharge: s.MonthlyCharge.Float(),
		Currency: s.Currency, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
}

func operationOf(o *operations.Operation) *Operation {
	return &Operation{ID: o.ID, Type: string(o.Type), Status: string(o.Status), ResourceID: o.ResourceID,
		CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), FinishedAt: o.FinishedAt}
}

func quoteOf(q *quotes.Quote) *Quote {
	return &Quote{ID: q.ID, Status: q.Status, AccountID: q.AccountID, BillingCycle: q.BillingCycle, TermMonths: q.TermMonths,
		Currency: q.Currency, MonthlyTotal: q.MonthlyTotal.Float(), OneTimeTotal: q.OneTimeTotal.Float(), TermTotal: q.TermTotal.Float(),
		ExpiresAt: q.ExpiresAt.UTC(), CreatedAt: q.CreatedAt.UTC()}
}

func subscriptionOf(s *billing.Subscription) *Subscription {
	return &Subscription{ID: s.ID, AccountID: s.AccountID, ServiceID: s.ServiceID, Status: string(s.Status), BillingCycle: s.BillingCycle,
		Quantity: s.Quantity, UnitPrice: s.UnitPrice.Float(), Currency: s.Currency, CurrentPeriodStart: s.CurrentPeriodStart.UTC(),
		CurrentPeriodEnd: s.CurrentPeriodEnd.UTC(), CreatedAt: s.CreatedAt.UTC()}
}

func invoiceOf(i *billing.Invoice) *Invoice {
	return &Invoice{ID: i.ID, Number: i.Number, Status: string(i.Status), AccountID: i.AccountID, SubscriptionID: optional(i.SubscriptionID),
		Currency: i.Currency, Subtotal: i.Subtotal.Float(), Tax: i.Tax.Float(), Total: i.Total.Float(), AmountPaid: i.AmountPaid.Float(),
		IssuedAt: i.IssuedAt.UTC(), DueDate: i.DueDate.UTC(), PaidAt: i.PaidAt, CreatedAt: i.CreatedAt.UTC()}
}

func paymentOf(p *billing.Payment) *Payment {
	return &Payment{ID: p.ID, InvoiceID: p.InvoiceID, AccountID: p.AccountID, Amount: p.Amount.Float(), Currency: p.Currency,
		Status: string(p.Status), MethodType: p.MethodType, ProcessedAt: p.ProcessedAt, CreatedAt: p.CreatedAt.UTC()}
}

func ticketOf(t *support.Ticket) *Ticket {
	return &Ticket{ID: t.ID, Number: t.Number, Title: t.Title, Status: t.Status, Priority: t.Priority, Category: t.Category,
		ServiceAffected: optional(t.ServiceAffected), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

func commentOf(c *support.Comment) *TicketComment {
	return &TicketComment{ID: c.ID, TicketID: c.TicketID, Content: c.Content, Type: c.Type, Visibility: c.Visibility,
		AuthorType: c.AuthorType, AuthorName: optional(c.AuthorName), CreatedAt: c.CreatedAt.UTC()}
}

func eventOf(e *eventlog.Event) *Event {
	return &Event{ID: e.ID, Type: e.Type, ResourceID: e.ResourceID, CreatedAt: e.CreatedAt.UTC()}
}

func webhookOf(w *eventlog.WebhookSubscription) *Webhook {
	events := w.Events
	if events == nil {
		events = []string{}
	}
	return &Webhook{ID: w.ID, Area: w.Area, URL: w.URL, Description: optional(w.Description), Events: events, Active: w.Active, CreatedAt: w.CreatedAt.UTC()}
}

// optional is nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// mapAll converts a slice of models.
func mapAll[T, U any](in []T, f func(*T) *U) []*U {
	out := make([]*U, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}
