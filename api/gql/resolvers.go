package gql

import (
	"context"
	"math"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// Permissions of the graph's fields: those of the REST routes that read
// the same resources.
const (
	permServices = "services:read"
	permBilling  = "billing:read"
	permSupport  = support.PermissionRead
	permWebhooks = "webhooks:manage"
)

// resolver is the root of the hand-written resolvers.
type resolver struct{ cfg *Deps }

// Query returns the root query's resolvers.
func (r *resolver) Query() QueryResolver { return &queryResolver{r} }

// Service returns Service's field resolvers.
func (r *resolver) Service() ServiceResolver { return &serviceResolver{r} }

// Operation returns Operation's field resolvers.
func (r *resolver) Operation() OperationResolver { return &operationResolver{r} }

// Subscription returns Subscription's field resolvers.
func (r *resolver) Subscription() SubscriptionResolver { return &subscriptionResolver{r} }

// Invoice returns Invoice's field resolvers.
func (r *resolver) Invoice() InvoiceResolver { return &invoiceResolver{r} }

// Payment returns Payment's field resolvers.
func (r *resolver) Payment() PaymentResolver { return &paymentResolver{r} }

// Ticket returns Ticket's field resolvers.
func (r *resolver) Ticket() TicketResolver { return &ticketResolver{r} }

// caller returns the request's principal when it holds perm ("" for any
// credential). Errors: UNAUTHENTICATED, INSUFFICIENT_PERMISSIONS.
func caller(ctx context.Context, perm string) (*models.Principal, error) {
	p := models.PrincipalFrom(ctx)
	if p == nil {
		return nil, models.Errorf(models.CodeUnauthenticated, "the graph needs a credential")
	}
	if perm != "" && !p.Can(perm) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "this field needs permission %s", perm).WithDetail("required_permission", perm)
	}
	return p, nil
}

// pageOf is the page a connection's first and after select, as a REST
// list's limit and cursor would. Errors: VALIDATION_ERROR.
func pageOf(first *int, after *string) (models.PageRequest, error) {
	q := models.ListQuery{Limit: defaultFirst}
	if first != nil {
		if *first < 1 || *first > maxFirst {
			return models.PageRequest{}, models.Invalid(models.FieldIssue{Field: "first", Issue: "must be between 1 and 200"})
		}
		q.Limit = *first
	}
	if after != nil {
		q.Cursor = *after
	}
	pr, err := models.ParsePage(q)
	if err != nil {
		return models.PageRequest{}, models.Invalid(models.FieldIssue{Field: "after", Issue: "is not a cursor returned by this API"})
	}
	return pr, nil
}

// cursorAt is the cursor of the item at offset i of a list: the REST
// lists' cursor of the page that starts after it.
func cursorAt(i int) string {
	return models.PageRequest{Offset: i, Limit: 1}.NextCursor(math.MaxInt64)
}

// pageInfo describes the page pr of total items, n of them returned.
func pageInfo(pr models.PageRequest, total int64, n int) *PageInfo {
	info := &PageInfo{HasNextPage: pr.NextCursor(total) != "" && n > 0}
	if n > 0 {
		c := cursorAt(pr.Offset + n - 1)
		info.EndCursor = &c
	}
	return info
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type queryResolver struct{ *resolver }

// Services lists services as GET /v1/services does.
func (r *queryResolver) Services(ctx context.Context, first *int, after *string, filter *string) (*ServiceConnection, error) {
	p, err := caller(ctx, permServices)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Services.ListServices(ctx, p, services.ServiceFilter{Expr: text(filter)}, pr)
	if err != nil {
		return nil, err
	}
	out := &ServiceConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*ServiceEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &ServiceEdge{Cursor: cursorAt(pr.Offset + i), Node: serviceOf(&rows[i])})
	}
	return out, nil
}

// Service reads one service as GET /v1/services/{id} does.
func (r *queryResolver) Service(ctx context.Context, id string) (*Service, error) {
	p, err := caller(ctx, permServices)
	if err != nil {
		return nil, err
	}
	s, err := r.cfg.Services.GetService(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return serviceOf(s), nil
}

// Operations lists operations as GET /v1/operations does.
func (r *queryResolver) Operations(ctx context.Context, first *int, after *string, filter *string) (*OperationConnection, error) {
	p, err := caller(ctx, "")
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Operations.ListOperations(ctx, p, operations.OperationFilter{Expr: text(filter)}, pr)
	if err != nil {
		return nil, err
	}
	out := &OperationConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*OperationEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &OperationEdge{Cursor: cursorAt(pr.Offset + i), Node: operationOf(&rows[i])})
	}
	return out, nil
}

// Operation reads one operation as GET /v1/operations/{id} does.
func (r *queryResolver) Operation(ctx context.Context, id string) (*Operation, error) {
	p, err := caller(ctx, "")
	if err != nil {
		return nil, err
	}
	op, err := r.cfg.Operations.GetOperation(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return operationOf(op), nil
}

// Quote reads one quote as GET /v1/services/quotes/{id} does.
func (r *queryResolver) Quote(ctx context.Context, id string) (*Quote, error) {
	p, err := caller(ctx, permServices)
	if err != nil {
		return nil, err
	}
	q, err := r.cfg.Quotes.GetQuote(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return quoteOf(q), nil
}

// Invoices lists invoices as GET /v1/billing/invoices does.
func (r *queryResolver) Invoices(ctx context.Context, first *int, after *string, filter *string) (*InvoiceConnection, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Billing.ListInvoices(ctx, p, billing.InvoiceFilter{Limit: pr.Limit, Offset: pr.Offset, Expr: text(filter)})
	if err != nil {
		return nil, err
	}
	out := &InvoiceConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*InvoiceEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &InvoiceEdge{Cursor: cursorAt(pr.Offset + i), Node: invoiceOf(&rows[i])})
	}
	return out, nil
}

// Invoice reads one invoice as GET /v1/billing/invoices/{id} does.
func (r *queryResolver) Invoice(ctx context.Context, id string) (*Invoice, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	inv, err := r.cfg.Billing.GetInvoice(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return invoiceOf(inv), nil
}

// Payments lists payments as GET /v1/billing/payments does.
func (r *queryResolver) Payments(ctx context.Context, first *int, after *string, filter *string) (*PaymentConnection, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Billing.ListPayments(ctx, p, billing.PaymentFilter{Expr: text(filter)}, pr)
	if err != nil {
		return nil, err
	}
	out := &PaymentConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*PaymentEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &PaymentEdge{Cursor: cursorAt(pr.Offset + i), Node: paymentOf(&rows[i])})
	}
	return out, nil
}

// Payment reads one payment as GET /v1/billing/payments/{id} does.
func (r *queryResolver) Payment(ctx context.Context, id string) (*Payment, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	pay, err := r.cfg.Billing.GetPayment(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return paymentOf(pay), nil
}

// Subscriptions lists subscriptions as GET /v1/billing/subscriptions does.
func (r *queryResolver) Subscriptions(ctx context.Context, first *int, after *string) (*SubscriptionConnection, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Billing.ListSubscriptions(ctx, p, billing.SubscriptionFilter{}, pr)
	if err != nil {
		return nil, err
	}
	out := &SubscriptionConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*SubscriptionEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &SubscriptionEdge{Cursor: cursorAt(pr.Offset + i), Node: subscriptionOf(&rows[i])})
	}
	return out, nil
}

// Subscription reads one subscription as GET /v1/billing/subscriptions/{id} does.
func (r *queryResolver) Subscription(ctx context.Context, id string) (*Subscription, error) {
	p, err := caller(ctx, permBilling)
	if err != nil {
		return nil, err
	}
	sub, err := r.cfg.Billing.GetSubscription(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return subscriptionOf(sub), nil
}

// Tickets lists tickets as GET /v1/support/tickets does.
func (r *queryResolver) Tickets(ctx context.Context, first *int, after *string, filter *string) (*TicketConnection, error) {
	p, err := caller(ctx, permSupport)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Support.ListTickets(ctx, p, support.TicketFilter{Expr: text(filter)}, pr)
	if err != nil {
		return nil, err
	}
	out := &TicketConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*TicketEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &TicketEdge{Cursor: cursorAt(pr.Offset + i), Node: ticketOf(&rows[i])})
	}
	return out, nil
}

// Ticket reads one ticket as GET /v1/support/tickets/{id} does.
func (r *queryResolver) Ticket(ctx context.Context, id string) (*Ticket, error) {
	p, err := caller(ctx, permSupport)
	if err != nil {
		return nil, err
	}
	t, err := r.cfg.Support.GetTicket(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return ticketOf(t), nil
}

// Events lists events as GET /v1/events does.
func (r *queryResolver) Events(ctx context.Context, first *int, after *string, filter *string) (*EventConnection, error) {
	p, err := caller(ctx, "")
	if err != nil {
		return nil, err
	}
	readable, err := events.ReadableGroups(p)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Events.ListEvents(ctx, p, eventlog.EventFilter{Readable: readable, Expr: text(filter)}, pr)
	if err != nil {
		return nil, err
	}
	out := &EventConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*EventEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &EventEdge{Cursor: cursorAt(pr.Offset + i), Node: eventOf(&rows[i])})
	}
	return out, nil
}

// Event reads one event as GET /v1/events/{id} does.
func (r *queryResolver) Event(ctx context.Context, id string) (*Event, error) {
	p, err := caller(ctx, "")
	if err != nil {
		return nil, err
	}
	readable, err := events.ReadableGroups(p)
	if err != nil {
		return nil, err
	}
	ev, err := r.cfg.Events.GetEvent(ctx, p, id, readable)
	if err != nil {
		return nil, err
	}
	return eventOf(ev), nil
}

// Webhooks lists webhook subscriptions as GET /v1/webhooks does.
func (r *queryResolver) Webhooks(ctx context.Context, first *int, after *string) (*WebhookConnection, error) {
	p, err := caller(ctx, permWebhooks)
	if err != nil {
		return nil, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, err
	}
	rows, total, err := r.cfg.Events.ListWebhooks(ctx, p, eventlog.WebhookListFilter{}, pr)
	if err != nil {
		return nil, err
	}
	out := &WebhookConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)), Edges: []*WebhookEdge{}}
	for i := range rows {
		out.Edges = append(out.Edges, &WebhookEdge{Cursor: cursorAt(pr.Offset + i), Node: webhookOf(&rows[i])})
	}
	return out, nil
}

// Webhook reads one webhook subscription as GET /v1/webhooks/{id} does.
func (r *queryResolver) Webhook(ctx context.Context, id string) (*Webhook, error) {
	p, err := caller(ctx, permWebhooks)
	if err != nil {
		return nil, err
	}
	w, err := r.cfg.Events.GetWebhook(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return webhookOf(w), nil
}
