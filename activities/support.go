package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// SupportTickets holds the dependencies of the support area's activities.
type SupportTickets struct {
	store *support.Store
}

// NewSupportTickets returns the support activities over store.
func NewSupportTickets(store *models.Store) *SupportTickets {
	return &SupportTickets{store: support.NewStore(store)}
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
	return st, nil
}
