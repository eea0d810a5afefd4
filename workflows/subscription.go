package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// Registered names of the billing workflows.
const (
	SubscriptionWorkflow = "Subscription"
	InvoiceDueWorkflow   = "InvoiceDue"
)

// SignalCancelSubscription wakes a subscription workflow after the API has
// recorded a cancellation; its payload is a CancelSignal.
const SignalCancelSubscription = "cancel"

// QuerySubscription returns a running subscription workflow's SubscriptionProgress.
const QuerySubscription = "state"

// OperationTypeSubscription is the OperationType search attribute of
// subscription workflows (and InvoiceDue workflows use "invoice").
const (
	OperationTypeSubscription = "subscription"
	OperationTypeInvoice      = "invoice"
)

// SubscriptionInput is the one argument of the subscription workflow. The
// workflow id is the subscription id. Each run closes one period and then
// continues as new, carrying the invoices it is still collecting and a
// cancellation it was signalled, so its history stays small however long
// the subscription lives.
type SubscriptionInput struct {
	SubscriptionID string             `json:"subscription_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	Collections    []Collection       `json:"collections,omitempty"`
	CancelAt       *time.Time         `json:"cancel_at,omitempty"`
	Runs           int                `json:"runs"` // periods closed by earlier runs
}

// Scope returns the tenant scope of the subscription.
func (in SubscriptionInput) Scope() models.Scope {
	return models.TenantScope(in.OrganizationID, in.Environment)
}

// SubscriptionState is what BeginSubscription reads from the row: the
// current period and a recorded cancellation.
type SubscriptionState struct {
	Status      billing.SubscriptionStatus `json:"status"`
	Cycle       string                     `json:"cycle"`
	PeriodStart time.Time                  `json:"period_start"`
	PeriodEnd   time.Time                  `json:"period_end"`
	CancelAt    *time.Time                 `json:"cancel_at,omitempty"`
}

// ClosePeriodInput closes the period that starts at PeriodStart at CloseAt
// (its end, or the cancellation time).
type ClosePeriodInput struct {
	SubscriptionID string             `json:"subscription_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	PeriodStart    time.Time          `json:"period_start"`
	CloseAt        time.Time          `json:"close_at"`
}

// ClosePeriodResult is what closing a period did.
type ClosePeriodResult struct {
	InvoiceID     string                `json:"invoice_id,omitempty"`
	InvoiceStatus billing.InvoiceStatus `json:"invoice_status,omitempty"`
	Total         models.Money          `json:"total"`
	DueAt         time.Time             `json:"due_at"`
	AutoPay       bool                  `json:"auto_pay"`
	Ended         bool                  `json:"ended"`
	EndedReason   string                `json:"ended_reason,omitempty"`
	Cycle         string                `json:"cycle"`
}

// InvoiceActionInput names one invoice and, for auto-pay, the attempt.
type InvoiceActionInput struct {
	InvoiceID      string             `json:"invoice_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	Attempt        int                `json:"attempt,omitempty"`
}

// AutoPayOutcome is what one auto-pay attempt did.
type AutoPayOutcome struct {
	Settled     bool   `json:"settled"` // paid or cancelled: nothing left to collect
	Paid        bool   `json:"paid"`
	PaymentID   string `json:"payment_id,omitempty"`
	FailureCode string `json:"failure_code,omitempty"`
}

// Collection is an invoice the workflow is collecting: with auto-pay it is
// charged at once and retried on the dunning schedule (models.DunningSchedule,
// counted from the first failure), then marked overdue; without, it is
// marked overdue at its due date unless paid by then.
type Collection struct {
	InvoiceID    string     `json:"invoice_id"`
	AutoPay      bool       `json:"auto_pay"`
	Cycle        string     `json:"cycle"`
	Attempts     int        `json:"attempts"`
	FirstFailure *time.Time `json:"first_failure,omitempty"`
	NextAt       time.Time  `json:"next_at"` // next attempt (auto-pay) or the due date
}

// CancelSignal is the payload of SignalCancelSubscription: when the
// recorded cancellation takes effect.
type CancelSignal struct {
	At time.Time `json:"at"`
}

// Phases of a subscription workflow, as QuerySubscription reports them.
const (
	SubPhaseStarting   = "starting"
	SubPhaseWaiting    = "waiting"
	SubPhaseClosing    = "closing"
	SubPhaseCollecting = "collecting"
	SubPhaseEnded      = "ended"
)

// SubscriptionProgress is the live state of a subscription workflow.
type SubscriptionProgress struct {
	SubscriptionID string       `json:"subscription_id"`
	Phase          string       `json:"phase"`
	PeriodStart    *time.Time   `json:"period_start,omitempty"`
	PeriodEnd      *time.Time   `json:"period_end,omitempty"`
	CancelAt       *time.Time   `json:"cancel_at,omitempty"`
	Collections    []Collection `json:"collections"`
	Runs           int          `json:"runs"`
}

// BillingActivityOptions are the options of the billing activities: they
// are idempotent and must eventually happen, so infrastructure failures are
// retried without limit (business failures are non-retryable errors).
func BillingActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
}

func earliest(a *time.Time, b *time.Time) *time.Time {
	switch {
	case a == nil:
		return b
	case b == nil || a.Before(*b):
		return a
	}
	return b
}

// hasCode reports whether an activity failed with the error code.
func hasCode(err error, code models.Code) bool {
	return err != nil && ErrorOf(err).Code == code
}

// Subscription bills one subscription, one period per run: it activates
// the subscription, waits for the end of its period (durable timer) or for
// a cancellation, closes the period (rating, invoice), and collects the
// invoice: with auto-pay it charges it at once and retries a failure on
// the dunning schedule before marking it overdue; without, it marks it
// overdue at its due date unless it was paid. It then continues as new for
// the next period; once the subscription has ended (cancelled, not
// renewed, service decommissioned) it only finishes collecting and returns.
func Subscription(ctx workflow.Context, in SubscriptionInput) error {
	log := workflow.GetLogger(ctx)
	actx := workflow.WithActivityOptions(ctx, BillingActivityOptions())
	collections := append([]Collection{}, in.Collections...)
	cancelAt := in.CancelAt
	progress := SubscriptionProgress{SubscriptionID: in.SubscriptionID, Phase: SubPhaseStarting, Runs: in.Runs}
	if err := workflow.SetQueryHandler(ctx, QuerySubscription, func() (SubscriptionProgress, error) {
		progress.Collections, progress.CancelAt = collections, cancelAt
		return progress, nil
	}); err != nil {
		return err
	}
	cancelCh := workflow.GetSignalChannel(ctx, SignalCancelSubscription)
	onCancel := func(sig CancelSignal) {
		at := sig.At.UTC()
		cancelAt = earliest(cancelAt, &at)
	}

	var st SubscriptionState
	if err := call(summarized(actx, fmt.Sprintf("begin subscription %s of %s (%s)", in.SubscriptionID, in.OrganizationID, in.Environment)), BillingActivities.BeginSubscription, in).Get(ctx, &st); err != nil {
		if hasCode(err, models.CodeNotFound) {
			log.Warn("the subscription no longer exists; nothing to bill", "subscription_id", in.SubscriptionID)
			return nil
		}
		return err
	}
	cancelAt = earliest(cancelAt, st.CancelAt)
	periodOpen := st.Status != billing.SubscriptionCancelled
	closed := false
	progress.PeriodStart, progress.PeriodEnd = &st.PeriodStart, &st.PeriodEnd

	for {
		now := workflow.Now(ctx)
		// Collect what is due.
		for i := 0; i < len(collections); {
			c := &collections[i]
			if c.NextAt.After(now) {
				i++
				continue
			}
			progress.Phase = SubPhaseCollecting
			done, err := collect(actx, in, c, now)
			if err != nil {
				return err
			}
			if done {
				collections = append(collections[:i], collections[i+1:]...)
				continue
			}
			i++
		}
		// Close the period at its end (or at the cancellation).
		deadline := st.PeriodEnd
		if cancelAt != nil && cancelAt.Before(deadline) {
			deadline = *cancelAt
		}
		if periodOpen && !closed && !now.Before(deadline) {
			progress.Phase = SubPhaseClosing
			var res ClosePeriodResult
			cin := ClosePeriodInput{SubscriptionID: in.SubscriptionID, OrganizationID: in.OrganizationID, Environment: in.Environment,
				PeriodStart: st.PeriodStart, CloseAt: deadline}
			if err := call(summarized(actx, fmt.Sprintf("close the period from %s of subscription %s (%s, %s)", st.PeriodStart.UTC().Format(time.DateOnly), in.SubscriptionID, in.OrganizationID, in.Environment)), BillingActivities.ClosePeriod, cin).Get(ctx, &res); err != nil {
				return err
			}
			closed = true
			if res.Ended {
				periodOpen = false
				log.Info("subscription ended", "subscription_id", in.SubscriptionID, "reason", res.EndedReason)
			}
			if res.InvoiceID != "" && res.InvoiceStatus.Open() {
				c := Collection{InvoiceID: res.InvoiceID, AutoPay: res.AutoPay, Cycle: res.Cycle, NextAt: now}
				if !res.AutoPay {
					c.NextAt = res.DueAt
				}
				collections = append(collections, c)
			}
			continue // collect the new invoice's first attempt now
		}
		if closed && periodOpen {
			for {
				var sig CancelSignal
				if !cancelCh.ReceiveAsync(&sig) {
					break
				}
				onCancel(sig)
			}
			return workflow.NewContinueAsNewError(ctx, SubscriptionWorkflow, SubscriptionInput{
				SubscriptionID: in.SubscriptionID, OrganizationID: in.OrganizationID, Environment: in.Environment,
				Collections: collections, CancelAt: cancelAt, Runs: in.Runs + 1,
			})
		}
		if !periodOpen && len(collections) == 0 {
			progress.Phase = SubPhaseEnded
			return nil
		}
		// Sleep until the next thing to do, or a cancellation.
		var next *time.Time
		if periodOpen && !closed {
			d := deadline
			next = &d
		}
		for i := range collections {
			t := collections[i].NextAt
			next = earliest(next, &t)
		}
		progress.Phase = SubPhaseWaiting
		workflow.SetCurrentDetails(ctx, subscriptionDetails(progress, next))
		tctx, stop := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(tctx, next.Sub(now)), func(workflow.Future) {})
		sel.AddReceive(cancelCh, func(c workflow.ReceiveChannel, _ bool) {
			var sig CancelSignal
			c.Receive(ctx, &sig)
			onCancel(sig)
		})
		sel.Select(ctx)
		stop()
	}
}

// collect makes the collection step that is due for c at now and reports
// whether the invoice needs nothing more.
func collect(actx workflow.Context, in SubscriptionInput, c *Collection, now time.Time) (bool, error) {
	inv := InvoiceActionInput{InvoiceID: c.InvoiceID, OrganizationID: in.OrganizationID, Environment: in.Environment}
	subject := fmt.Sprintf("invoice %s of %s (%s)", c.InvoiceID, in.OrganizationID, in.Environment)
	if !c.AutoPay {
		return true, execute(summarized(actx, "mark overdue: "+subject), BillingActivities.MarkOverdue, inv).Get(actx, nil)
	}
	c.Attempts++
	inv.Attempt = c.Attempts
	var out AutoPayOutcome
	if err := call(summarized(actx, fmt.Sprintf("automatic payment, attempt %d: %s", c.Attempts, subject)), BillingActivities.AutoPay, inv).Get(actx, &out); err != nil {
		if hasCode(err, models.CodeNotFound) {
			return true, nil
		}
		return false, err
	}
	if out.Settled {
		return true, nil
	}
	if c.FirstFailure == nil {
		t := now
		c.FirstFailure = &t
	}
	schedule := billing.DunningSchedule(c.Cycle)
	if c.Attempts-1 < len(schedule) {
		c.NextAt = c.FirstFailure.Add(schedule[c.Attempts-1])
		return false, nil
	}
	// The last retry failed: the invoice is overdue.
	return true, execute(summarized(actx, "mark overdue: "+subject), BillingActivities.MarkOverdue, inv).Get(actx, nil)
}

// InvoiceDueInput is the argument of the InvoiceDue workflow (workflow id:
// the invoice id).
type InvoiceDueInput struct {
	InvoiceID      string             `json:"invoice_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	DueAt          time.Time          `json:"due_at"`
}

// InvoiceDue watches a manual invoice: at its due date (durable timer) it
// marks the invoice overdue (invoice.overdue) unless it was paid or
// cancelled by then.
func InvoiceDue(ctx workflow.Context, in InvoiceDueInput) error {
	if wait := in.DueAt.Sub(workflow.Now(ctx)); wait > 0 {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	actx := workflow.WithActivityOptions(ctx, BillingActivityOptions())
	err := execute(summarized(actx, fmt.Sprintf("mark overdue: invoice %s of %s (%s)", in.InvoiceID, in.OrganizationID, in.Environment)), BillingActivities.MarkOverdue, InvoiceActionInput{InvoiceID: in.InvoiceID, OrganizationID: in.OrganizationID, Environment: in.Environment}).Get(ctx, nil)
	if hasCode(err, models.CodeNotFound) {
		return nil
	}
	return err
}

// subscriptionDetails renders a subscription's progress as the workflow's
// current details (Markdown): the period, the next timer, the invoices
// being collected.
func subscriptionDetails(p SubscriptionProgress, next *time.Time) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Subscription**: `%s`, %s (run %d)", p.SubscriptionID, p.Phase, p.Runs+1))
	if p.PeriodStart != nil && p.PeriodEnd != nil {
		b.WriteString(fmt.Sprintf("\n\n**Period**: %s to %s", p.PeriodStart.UTC().Format(time.DateOnly), p.PeriodEnd.UTC().Format(time.DateOnly)))
	}
	if p.CancelAt != nil {
		b.WriteString(fmt.Sprintf("\n\n**Cancels at**: %s", models.Timestamp(*p.CancelAt)))
	}
	if next != nil {
		b.WriteString(fmt.Sprintf("\n\n**Next timer**: %s", models.Timestamp(*next)))
	}
	for _, c := range p.Collections {
		b.WriteString(fmt.Sprintf("\n- invoice `%s`: attempt %d, next %s", c.InvoiceID, c.Attempts, models.Timestamp(c.NextAt)))
	}
	return b.String()
}
