package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/payments"
	"github.com/telcoplatform/platform/workflows"
)

// APIUsage reads an organization's API requests of a calendar month (the
// rate limiter's monthly counters; *ratelimit.Limiter implements it).
type APIUsage interface {
	MonthlyUsage(ctx context.Context, orgID string, month time.Time) (requests, units int64, err error)
}

// Billing holds the dependencies of the billing activities, registered by
// worker.RegisterActivities under the names "Billing.<Method>"
// (workflows.BillingActivities). Each is
// idempotent: closing a period, paying an attempt or marking an invoice
// overdue twice does it once.
type Billing struct {
	store   *models.Store
	billing *billing.Store
	pay     *payments.Processor
	usage   APIUsage // nil: API overage is not billed
	log     *slog.Logger
}

// NewBilling returns the billing activities over store, charging through
// gw (nil: the simulator) and reading API usage from usage (nil: none).
func NewBilling(store *models.Store, gw payments.Gateway, usage APIUsage, log *slog.Logger) *Billing {
	if log == nil {
		log = slog.Default()
	}
	return &Billing{store: store, billing: billing.NewStore(store), pay: payments.NewProcessor(store, gw, log), usage: usage, log: log}
}

// billingError converts err for Temporal (ApplicationError, RetryByCode)
// and logs it with the activity's name, what, and the id it was about.
func (a *Billing) billingError(ctx context.Context, what, id string, err error) error {
	return failed(ctx, a.log, err, "activity", what, "id", id)
}

// BeginSubscription activates a pending subscription (subscription.created)
// and returns its current period and recorded cancellation.
// Errors: NOT_FOUND.
func (a *Billing) BeginSubscription(ctx context.Context, in workflows.SubscriptionInput) (*workflows.SubscriptionState, error) {
	sub, err := a.billing.BeginSubscription(ctx, in.Scope(), in.SubscriptionID)
	if err != nil {
		return nil, a.billingError(ctx, "begin_subscription", in.SubscriptionID, err)
	}
	return &workflows.SubscriptionState{Status: sub.Status, Cycle: sub.BillingCycle, PeriodStart: sub.CurrentPeriodStart,
		PeriodEnd: sub.CurrentPeriodEnd, CancelAt: sub.CancelAt}, nil
}

// ClosePeriod closes a subscription period: it reads the organization's
// API requests of the months that may be billed for overage (live only),
// then lets the store rate the period and issue the invoice.
// Errors: NOT_FOUND.
func (a *Billing) ClosePeriod(ctx context.Context, in workflows.ClosePeriodInput) (*workflows.ClosePeriodResult, error) {
	scope := models.TenantScope(in.OrganizationID, in.Environment)
	requests := map[string]int64{}
	if a.usage != nil && in.Environment == models.EnvLive {
		for _, m := range billing.OverageMonths(in.CloseAt) {
			n, _, err := a.usage.MonthlyUsage(ctx, in.OrganizationID, m)
			if err != nil {
				// Counters unavailable: bill the overage on a later close.
				a.log.WarnContext(ctx, "API usage unavailable; overage not billed this period", "organization_id", in.OrganizationID, "month", billing.MonthKey(m), "error", err)
				continue
			}
			requests[billing.MonthKey(m)] = n
		}
	}
	res, err := a.billing.CloseSubscriptionPeriod(ctx, scope, billing.CloseInput{
		SubscriptionID: in.SubscriptionID, PeriodStart: in.PeriodStart, CloseAt: in.CloseAt, APIRequests: requests,
	})
	if err != nil {
		return nil, a.billingError(ctx, "close_period", in.SubscriptionID, err)
	}
	return &workflows.ClosePeriodResult{InvoiceID: res.InvoiceID, InvoiceStatus: res.InvoiceStatus, Total: res.Total, DueAt: res.DueAt,
		AutoPay: res.AutoPay, Ended: res.Ended, EndedReason: res.EndedReason, Cycle: res.Cycle}, nil
}

// AutoPay makes one auto-pay attempt on an invoice (payment.successful and
// invoice.paid, or payment.failed). Errors: NOT_FOUND.
func (a *Billing) AutoPay(ctx context.Context, in workflows.InvoiceActionInput) (*workflows.AutoPayOutcome, error) {
	res, err := a.pay.AutoPay(ctx, models.TenantScope(in.OrganizationID, in.Environment), in.InvoiceID, in.Attempt)
	if err != nil {
		return nil, a.billingError(ctx, "auto_pay", in.InvoiceID, err)
	}
	return &workflows.AutoPayOutcome{Settled: res.Settled, Paid: res.Paid, PaymentID: res.PaymentID, FailureCode: res.FailureCode}, nil
}

// MarkOverdue marks an invoice that is still pending overdue
// (invoice.overdue); a paid or cancelled one is left alone. Errors: NOT_FOUND.
func (a *Billing) MarkOverdue(ctx context.Context, in workflows.InvoiceActionInput) error {
	_, err := a.billing.MarkInvoiceOverdue(ctx, models.TenantScope(in.OrganizationID, in.Environment), in.InvoiceID)
	return a.billingError(ctx, "mark_overdue", in.InvoiceID, err)
}
