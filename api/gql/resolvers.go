package gql

import (
	"context"
	"fmt"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
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
			return models.PageRequest{}, models.Invalid(models.FieldIssue{Field: "first", Issue: fmt.Sprintf("must be between 1 and %d", maxFirst)})
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

// cursorAt is the cursor of the item at offset i of the list pr reads:
// the REST lists' cursor of the page that starts after it, in the same
// snapshot as pr's next page (so that items created since the first page
// do not shift the pages after it).
func cursorAt(pr models.PageRequest, i int) string {
	return pr.CursorAt(i + 1)
}

// pageInfo describes the page pr of total items, n of them returned.
func pageInfo(pr models.PageRequest, total int64, n int) *PageInfo {
	info := &PageInfo{HasNextPage: pr.NextCursor(total) != "" && n > 0}
	if n > 0 {
		c := cursorAt(pr, pr.Offset+n-1)
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

// listPage reads one page of a root connection for a caller holding perm
// ("" for any credential): list reads the rows as the REST list does.
// Errors: those of caller, pageOf and list.
func listPage[T any](ctx context.Context, perm string, first *int, after *string, list func(*models.Principal, models.PageRequest) ([]T, int64, error)) ([]T, int64, models.PageRequest, error) {
	p, err := caller(ctx, perm)
	if err != nil {
		return nil, 0, models.PageRequest{}, err
	}
	pr, err := pageOf(first, after)
	if err != nil {
		return nil, 0, pr, err
	}
	rows, total, err := list(p, pr)
	return rows, total, pr, err
}

// edgesOf is a connection's edges over a page of rows: node converts a
// row, edge wraps it with its cursor.
func edgesOf[T, N, E any](pr models.PageRequest, rows []T, node func(*T) N, edge func(cursor string, node N) E) []E {
	out := make([]E, 0, len(rows))
	for i := range rows {
		out = append(out, edge(cursorAt(pr, pr.Offset+i), node(&rows[i])))
	}
	return out
}

// readOne reads one object for a caller holding perm ("" for any
// credential): get reads it as the REST route does, node converts it.
func readOne[T, N any](ctx context.Context, perm string, get func(*models.Principal) (*T, error), node func(*T) N) (N, error) {
	var zero N
	p, err := caller(ctx, perm)
	if err != nil {
		return zero, err
	}
	row, err := get(p)
	if err != nil {
		return zero, err
	}
	return node(row), nil
}

type queryResolver struct{ *resolver }

// Services lists services as GET /v1/services does.
func (r *queryResolver) Services(ctx context.Context, first *int, after *string, filter *string) (*ServiceConnection, error) {
	rows, total, pr, err := listPage(ctx, permServices, first, after, func(p *models.Principal, pr models.PageRequest) ([]services.Service, int64, error) {
		return r.cfg.Services.ListServices(ctx, p, services.ServiceFilter{Expr: text(filter)}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &ServiceConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, serviceOf, func(c string, n *Service) *ServiceEdge { return &ServiceEdge{Cursor: c, Node: n} })}, nil
}

// Service reads one service as GET /v1/services/{id} does.
func (r *queryResolver) Service(ctx context.Context, id string) (*Service, error) {
	return readOne(ctx, permServices, func(p *models.Principal) (*services.Service, error) { return r.cfg.Services.GetService(ctx, p, id) }, serviceOf)
}

// Operations lists operations as GET /v1/operations does.
func (r *queryResolver) Operations(ctx context.Context, first *int, after *string, filter *string) (*OperationConnection, error) {
	rows, total, pr, err := listPage(ctx, "", first, after, func(p *models.Principal, pr models.PageRequest) ([]operations.Operation, int64, error) {
		return r.cfg.Operations.ListOperations(ctx, p, operations.OperationFilter{Expr: text(filter)}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &OperationConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, operationOf, func(c string, n *Operation) *OperationEdge { return &OperationEdge{Cursor: c, Node: n} })}, nil
}

// Operation reads one operation as GET /v1/operations/{id} does.
func (r *queryResolver) Operation(ctx context.Context, id string) (*Operation, error) {
	return readOne(ctx, "", func(p *models.Principal) (*operations.Operation, error) {
		return r.cfg.Operations.GetOperation(ctx, p, id)
	}, operationOf)
}

// Quote reads one quote as GET /v1/services/quotes/{id} does.
func (r *queryResolver) Quote(ctx context.Context, id string) (*Quote, error) {
	return readOne(ctx, permServices, func(p *models.Principal) (*quotes.Quote, error) { return r.cfg.Quotes.GetQuote(ctx, p, id) }, quoteOf)
}

// Invoices lists invoices as GET /v1/billing/invoices does.
func (r *queryResolver) Invoices(ctx context.Context, first *int, after *string, filter *string) (*InvoiceConnection, error) {
	rows, total, pr, err := listPage(ctx, permBilling, first, after, func(p *models.Principal, pr models.PageRequest) ([]billing.Invoice, int64, error) {
		return r.cfg.Billing.ListInvoices(ctx, p, billing.InvoiceFilter{Limit: pr.Limit, Offset: pr.Offset, Expr: text(filter)})
	})
	if err != nil {
		return nil, err
	}
	return &InvoiceConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, invoiceOf, func(c string, n *Invoice) *InvoiceEdge { return &InvoiceEdge{Cursor: c, Node: n} })}, nil
}

// Invoice reads one invoice as GET /v1/billing/invoices/{id} does.
func (r *queryResolver) Invoice(ctx context.Context, id string) (*Invoice, error) {
	return readOne(ctx, permBilling, func(p *models.Principal) (*billing.Invoice, error) { return r.cfg.Billing.GetInvoiceRow(ctx, p, id) }, invoiceOf)
}

// Payments lists payments as GET /v1/billing/payments does.
func (r *queryResolver) Payments(ctx context.Context, first *int, after *string, filter *string) (*PaymentConnection, error) {
	rows, total, pr, err := listPage(ctx, permBilling, first, after, func(p *models.Principal, pr models.PageRequest) ([]billing.Payment, int64, error) {
		return r.cfg.Billing.ListPayments(ctx, p, billing.PaymentFilter{Expr: text(filter)}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &PaymentConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, paymentOf, func(c string, n *Payment) *PaymentEdge { return &PaymentEdge{Cursor: c, Node: n} })}, nil
}

// Payment reads one payment as GET /v1/billing/payments/{id} does.
func (r *queryResolver) Payment(ctx context.Context, id string) (*Payment, error) {
	return readOne(ctx, permBilling, func(p *models.Principal) (*billing.Payment, error) { return r.cfg.Billing.GetPayment(ctx, p, id) }, paymentOf)
}

// Subscriptions lists subscriptions as GET /v1/billing/subscriptions does.
func (r *queryResolver) Subscriptions(ctx context.Context, first *int, after *string) (*SubscriptionConnection, error) {
	rows, total, pr, err := listPage(ctx, permBilling, first, after, func(p *models.Principal, pr models.PageRequest) ([]billing.Subscription, int64, error) {
		return r.cfg.Billing.ListSubscriptions(ctx, p, billing.SubscriptionFilter{}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &SubscriptionConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, subscriptionOf, func(c string, n *Subscription) *SubscriptionEdge { return &SubscriptionEdge{Cursor: c, Node: n} })}, nil
}

// Subscription reads one subscription as GET /v1/billing/subscriptions/{id} does.
func (r *queryResolver) Subscription(ctx context.Context, id string) (*Subscription, error) {
	return readOne(ctx, permBilling, func(p *models.Principal) (*billing.Subscription, error) {
		return r.cfg.Billing.GetSubscription(ctx, p, id)
	}, subscriptionOf)
}

// Tickets lists tickets as GET /v1/support/tickets does.
func (r *queryResolver) Tickets(ctx context.Context, first *int, after *string, filter *string) (*TicketConnection, error) {
	rows, total, pr, err := listPage(ctx, permSupport, first, after, func(p *models.Principal, pr models.PageRequest) ([]support.Ticket, int64, error) {
		return r.cfg.Support.ListTicketRows(ctx, p, support.TicketFilter{Expr: text(filter)}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &TicketConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, ticketOf, func(c string, n *Ticket) *TicketEdge { return &TicketEdge{Cursor: c, Node: n} })}, nil
}

// Ticket reads one ticket as GET /v1/support/tickets/{id} does.
func (r *queryResolver) Ticket(ctx context.Context, id string) (*Ticket, error) {
	return readOne(ctx, permSupport, func(p *models.Principal) (*support.Ticket, error) { return r.cfg.Support.GetTicketRow(ctx, p, id) }, ticketOf)
}

// Events lists events as GET /v1/events does (the event groups the
// caller's permissions can read).
func (r *queryResolver) Events(ctx context.Context, first *int, after *string, filter *string) (*EventConnection, error) {
	rows, total, pr, err := listPage(ctx, "", first, after, func(p *models.Principal, pr models.PageRequest) ([]eventlog.Event, int64, error) {
		readable, err := events.ReadableGroups(p)
		if err != nil {
			return nil, 0, err
		}
		return r.cfg.Events.ListEvents(ctx, p, eventlog.EventFilter{Readable: readable, Expr: text(filter)}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &EventConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, eventOf, func(c string, n *Event) *EventEdge { return &EventEdge{Cursor: c, Node: n} })}, nil
}

// Event reads one event as GET /v1/events/{id} does.
func (r *queryResolver) Event(ctx context.Context, id string) (*Event, error) {
	return readOne(ctx, "", func(p *models.Principal) (*eventlog.Event, error) {
		readable, err := events.ReadableGroups(p)
		if err != nil {
			return nil, err
		}
		return r.cfg.Events.GetEvent(ctx, p, id, readable)
	}, eventOf)
}

// Webhooks lists webhook subscriptions as GET /v1/webhooks does.
func (r *queryResolver) Webhooks(ctx context.Context, first *int, after *string) (*WebhookConnection, error) {
	rows, total, pr, err := listPage(ctx, permWebhooks, first, after, func(p *models.Principal, pr models.PageRequest) ([]eventlog.WebhookSubscription, int64, error) {
		return r.cfg.Events.ListWebhooks(ctx, p, eventlog.WebhookListFilter{}, pr)
	})
	if err != nil {
		return nil, err
	}
	return &WebhookConnection{TotalCount: int(total), PageInfo: pageInfo(pr, total, len(rows)),
		Edges: edgesOf(pr, rows, webhookOf, func(c string, n *Webhook) *WebhookEdge { return &WebhookEdge{Cursor: c, Node: n} })}, nil
}

// Webhook reads one webhook subscription as GET /v1/webhooks/{id} does.
func (r *queryResolver) Webhook(ctx context.Context, id string) (*Webhook, error) {
	return readOne(ctx, permWebhooks, func(p *models.Principal) (*eventlog.WebhookSubscription, error) {
		return r.cfg.Events.GetWebhook(ctx, p, id)
	}, webhookOf)
}
