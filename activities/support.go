package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// SupportTickets holds the dependencies of the support area's activities.
type SupportTickets struct {
	store   *support.Store
	metrics *metrics.Metrics // nil: nothing counted
}

// NewSupportTickets returns the support activities over store. A
// breached resolution target of a ticket whose service_affected names one
// of its organization's services earns the SLA credit of its policy
// (billing.Store.IssueSLACredit).
func NewSupportTickets(store *models.Store, opts ...SupportOption) *SupportTickets {
	bills := billing.NewStore(store)
	issue := func(ctx context.Context, req support.SLACreditRequest) error {
		t := req.Ticket
		_, created, err := bills.IssueSLACredit(ctx, models.TenantScope(t.OrganizationID, t.Environment), billing.SLACreditInput{
			ServiceID: t.ServiceAffected, TicketID: t.ID, SourceKey: req.SourceKey(), PercentBP: req.PercentBP, At: req.At,
			Reason: fmt.Sprintf("resolution target of ticket %s breached at %s", t.Number, models.Timestamp(req.At))})
		switch models.ErrorCode(err) {
		case "":
			if created {
				activity.GetLogger(ctx).Info("issued an SLA credit", "ticket_id", t.ID, "service_id", t.ServiceAffected)
			}
			return nil
		case models.CodeNotFound, models.CodeValidation: // not a service of the tenant, or nothing to credit
			return nil
		}
		return err
	}
	a := &SupportTickets{store: support.NewStore(store, support.WithCredits(issue))}
	for _, o := range opts {
		o(a)
	}
	return a
}

// SupportOption configures the support activities.
type SupportOption func(*SupportTickets)

// WithSupportMetrics counts the SLA breaches and escalations the syncs
// record in m.
func WithSupportMetrics(m *metrics.Metrics) SupportOption {
	return func(a *SupportTickets) { a.metrics = m }
}

// CloseIfQuiet closes a resolved ticket that nothing changed since its
// resolution (support.Store.CloseIfQuiet) and reports whether it did.
// Errors: INTERNAL_ERROR (retried by Temporal).
func (a *SupportTickets) CloseIfQuiet(ctx context.Context, in support.AutoClose) (bool, error) {
	closed, err := a.store.CloseIfQuiet(ctx, in)
	if err != nil {
		return false, activityError(err)
	}
	if closed {
		activity.GetLogger(ctx).Info("closed a resolved ticket after its quiet period", "ticket_id", in.TicketID)
	}
	return closed, nil
}

// SyncSLA brings a ticket's SLA clocks to the workflow's instant
// (support.Store.SyncSLA) and answers their state. Errors: INTERNAL_ERROR
// (retried by Temporal).
func (a *SupportTickets) SyncSLA(ctx context.Context, in workflows.SLASyncInput) (*support.SLAState, error) {
	st, err := a.store.SyncSLA(ctx, in.TicketID, in.Now)
	if err != nil {
		return nil, activityError(err)
	}
	for _, m := range st.Breaches {
		a.metrics.SLABreach(m)
	}
	for _, e := range st.Escalations {
		a.metrics.SLAEscalation(e.Metric, e.Action)
	}
	return st, nil
}

// RetimeCandidates lists a page of the open tickets a policy or calendar
// edit affects (support.Store.RetimeCandidates). Errors: INTERNAL_ERROR
// (retried by Temporal).
func (a *SupportTickets) RetimeCandidates(ctx context.Context, in workflows.SLARetimePage) ([]string, error) {
	ids, err := a.store.RetimeCandidates(ctx, in.Scope, in.After, support.MaxRetimePage)
	if err != nil {
		return nil, activityError(err)
	}
	return ids, nil
}
