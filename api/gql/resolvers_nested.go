package gql

import (
	"context"
	"fmt"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// nestedLimit is the items a nested list returns for first.
func nestedLimit(first *int) (int, error) {
	if first == nil {
		return nestedFirst, nil
	}
	if *first < 1 || *first > maxNested {
		return 0, models.Invalid(models.FieldIssue{Field: "first", Issue: fmt.Sprintf("must be between 1 and %d", maxNested)})
	}
	return *first, nil
}

// children loads the nested list of parent through load (one statement
// for every parent of the level) and converts its first items.
func children[T, U any](ctx context.Context, perm, parent string, first *int, load func(*loaders) func(context.Context, string) ([]T, error), conv func(*T) *U) ([]*U, error) {
	if _, err := caller(ctx, perm); err != nil {
		return nil, err
	}
	n, err := nestedLimit(first)
	if err != nil {
		return nil, err
	}
	rows, err := load(loadersFrom(ctx))(ctx, parent)
	if err != nil {
		return nil, err
	}
	return mapAll(rows[:min(n, len(rows))], conv), nil
}

// one loads the object id names through load, nil when there is none
// (or the caller cannot see it).
func one[T, U any](ctx context.Context, perm, id string, load func(*loaders) func(context.Context, string) (*T, error), conv func(*T) *U) (*U, error) {
	if _, err := caller(ctx, perm); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, nil
	}
	row, err := load(loadersFrom(ctx))(ctx, id)
	if err != nil || row == nil {
		return nil, err
	}
	return conv(row), nil
}

type serviceResolver struct{ *resolver }

// Operations are the service's operations, batched by service.
func (r *serviceResolver) Operations(ctx context.Context, obj *Service, first *int) ([]*Operation, error) {
	return children(ctx, "", obj.ID, first, func(l *loaders) func(context.Context, string) ([]operations.Operation, error) {
		return l.operationsOf.Load
	}, operationOf)
}

// Subscription is the service's subscription, batched by service.
func (r *serviceResolver) Subscription(ctx context.Context, obj *Service) (*Subscription, error) {
	return one(ctx, permBilling, obj.ID, func(l *loaders) func(context.Context, string) (*billing.Subscription, error) {
		return l.subscriptionOf.Load
	}, subscriptionOf)
}

type operationResolver struct{ *resolver }

// Service is the operation's service, when its resource is one.
func (r *operationResolver) Service(ctx context.Context, obj *Operation) (*Service, error) {
	return one(ctx, permServices, obj.ResourceID, func(l *loaders) func(context.Context, string) (*services.Service, error) { return l.services.Load }, serviceOf)
}

type subscriptionResolver struct{ *resolver }

// Service is the subscribed service.
func (r *subscriptionResolver) Service(ctx context.Context, obj *Subscription) (*Service, error) {
	return one(ctx, permServices, obj.ServiceID, func(l *loaders) func(context.Context, string) (*services.Service, error) { return l.services.Load }, serviceOf)
}

// Invoices are the subscription's invoices, batched by subscription.
func (r *subscriptionResolver) Invoices(ctx context.Context, obj *Subscription, first *int) ([]*Invoice, error) {
	return children(ctx, permBilling, obj.ID, first, func(l *loaders) func(context.Context, string) ([]billing.Invoice, error) { return l.invoicesOf.Load }, invoiceOf)
}

type invoiceResolver struct{ *resolver }

// Payments are the invoice's payments, batched by invoice.
func (r *invoiceResolver) Payments(ctx context.Context, obj *Invoice, first *int) ([]*Payment, error) {
	return children(ctx, permBilling, obj.ID, first, func(l *loaders) func(context.Context, string) ([]billing.Payment, error) { return l.paymentsOf.Load }, paymentOf)
}

type paymentResolver struct{ *resolver }

// Invoice is the invoice paid.
func (r *paymentResolver) Invoice(ctx context.Context, obj *Payment) (*Invoice, error) {
	return one(ctx, permBilling, obj.InvoiceID, func(l *loaders) func(context.Context, string) (*billing.Invoice, error) { return l.invoices.Load }, invoiceOf)
}

type ticketResolver struct{ *resolver }

// Comments are the ticket's comments the caller may see, batched by ticket.
func (r *ticketResolver) Comments(ctx context.Context, obj *Ticket, first *int) ([]*TicketComment, error) {
	return children(ctx, permSupport, obj.ID, first, func(l *loaders) func(context.Context, string) ([]support.Comment, error) { return l.commentsOf.Load }, commentOf)
}
