package gql

import (
	"context"
	"time"

	"github.com/vikstrous/dataloadgen"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// Batching of the loaders: a batch is sent after loaderWait or at
// loaderBatch keys, whichever comes first.
const (
	loaderWait  = 10 * time.Millisecond
	loaderBatch = 500
)

// loaders are one request's batched loaders: every nested field of a
// level asks its loader, which reads the level in one statement (keyed
// by the parents' ids) in the caller's tenant scope.
type loaders struct {
	services       *dataloadgen.Loader[string, *services.Service]
	invoices       *dataloadgen.Loader[string, *billing.Invoice]
	operationsOf   *dataloadgen.Loader[string, []operations.Operation]
	subscriptionOf *dataloadgen.Loader[string, *billing.Subscription]
	invoicesOf     *dataloadgen.Loader[string, []billing.Invoice]
	paymentsOf     *dataloadgen.Loader[string, []billing.Payment]
	commentsOf     *dataloadgen.Loader[string, []support.Comment]
}

type loadersKey struct{}

func withLoaders(ctx context.Context, l *loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

func loadersFrom(ctx context.Context) *loaders {
	l, _ := ctx.Value(loadersKey{}).(*loaders)
	return l
}

// newLoaders returns the loaders of one request.
func newLoaders(cfg *Deps) *loaders {
	opts := []dataloadgen.Option{dataloadgen.WithWait(loaderWait), dataloadgen.WithBatchCapacity(loaderBatch)}
	db := func(ctx context.Context) (*models.Principal, *gorm.DB) {
		p := models.PrincipalFrom(ctx)
		return p, cfg.Store.In(ctx, p.Scope())
	}
	l := &loaders{}
	l.services = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([]*services.Service, []error) {
		_, q := db(ctx)
		var rows []services.Service
		err := q.Where("id IN ?", ids).Find(&rows).Error
		return byID(ids, rows, func(s *services.Service) string { return s.ID }, err)
	}, opts...)
	l.invoices = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([]*billing.Invoice, []error) {
		_, q := db(ctx)
		var rows []billing.Invoice
		err := q.Where("id IN ?", ids).Find(&rows).Error
		return byID(ids, rows, func(i *billing.Invoice) string { return i.ID }, err)
	}, opts...)
	l.operationsOf = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([][]operations.Operation, []error) {
		p, q := db(ctx)
		q = operations.Readable(p, q.Model(&operations.Operation{}))
		var rows []operations.Operation
		err := ranked(q, "resource_id", ids, "created_at DESC, id", maxNested, &rows)
		return grouped(ids, rows, func(o *operations.Operation) string { return o.ResourceID }, err)
	}, opts...)
	l.subscriptionOf = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([]*billing.Subscription, []error) {
		_, q := db(ctx)
		var rows []billing.Subscription
		// The open subscription first, then the newest.
		err := ranked(q.Model(&billing.Subscription{}), "service_id", ids, "CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END, created_at DESC, id", 1, &rows)
		return byID(ids, rows, func(s *billing.Subscription) string { return s.ServiceID }, err)
	}, opts...)
	l.invoicesOf = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([][]billing.Invoice, []error) {
		_, q := db(ctx)
		var rows []billing.Invoice
		err := ranked(q.Model(&billing.Invoice{}), "subscription_id", ids, "issued_at DESC, id", maxNested, &rows)
		return grouped(ids, rows, func(i *billing.Invoice) string { return i.SubscriptionID }, err)
	}, opts...)
	l.paymentsOf = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([][]billing.Payment, []error) {
		_, q := db(ctx)
		var rows []billing.Payment
		err := ranked(q.Model(&billing.Payment{}), "invoice_id", ids, "created_at DESC, id", maxNested, &rows)
		return grouped(ids, rows, func(p *billing.Payment) string { return p.InvoiceID }, err)
	}, opts...)
	l.commentsOf = dataloadgen.NewLoader(func(ctx context.Context, ids []string) ([][]support.Comment, []error) {
		p, q := db(ctx)
		q = q.Model(&support.Comment{})
		if !p.IsStaff() {
			// Customers never see internal comments (as GET .../comments).
			q = q.Where("visibility = ?", support.VisibilityCustomer)
		}
		var rows []support.Comment
		err := ranked(q, "ticket_id", ids, "created_at ASC, id", maxNested, &rows)
		return grouped(ids, rows, func(c *support.Comment) string { return c.TicketID }, err)
	}, opts...)
	return l
}

// ranked loads, in one statement, at most per rows of q's model for each
// value of col among parents, in the order given (a window function;
// SQLite and PostgreSQL both have it). q carries the tenant scope: the
// scoping callback filters the inner query by the caller's organization
// and environment.
func ranked(q *gorm.DB, col string, parents []string, order string, per int, dest any) error {
	inner := q.Select("*, ROW_NUMBER() OVER (PARTITION BY "+col+" ORDER BY "+order+") AS graph_rank").Where(col+" IN ?", parents)
	err := q.Session(&gorm.Session{NewDB: true}).Raw("SELECT * FROM (?) AS ranked WHERE graph_rank <= ? ORDER BY "+col+", graph_rank", inner, per).Scan(dest).Error
	return models.DBErr(err)
}

// byID orders rows as keys (nil for a key without a row).
func byID[T any](keys []string, rows []T, key func(*T) string, err error) ([]*T, []error) {
	out := make([]*T, len(keys))
	if err != nil {
		return out, fill(len(keys), err)
	}
	index := make(map[string]*T, len(rows))
	for i := range rows {
		index[key(&rows[i])] = &rows[i]
	}
	for i, k := range keys {
		out[i] = index[k]
	}
	return out, nil
}

// grouped gives each key its rows, in their order.
func grouped[T any](keys []string, rows []T, key func(*T) string, err error) ([][]T, []error) {
	out := make([][]T, len(keys))
	if err != nil {
		return out, fill(len(keys), err)
	}
	index := make(map[string][]T, len(keys))
	for _, r := range rows {
		index[key(&r)] = append(index[key(&r)], r)
	}
	for i, k := range keys {
		out[i] = index[k]
	}
	return out, nil
}

// fill is err for each of n keys.
func fill(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}
