package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models/support"
)

// TicketAutoCloseWorkflow is the registered name of the workflow that
// closes a resolved support ticket after its quiet period.
const TicketAutoCloseWorkflow = "TicketAutoClose"

// TicketAutoCloseInput is the one argument of the workflow: the resolution
// to close and the quiet period (zero: support.AutoCloseAfter).
type TicketAutoCloseInput struct {
	support.AutoClose
	After time.Duration `json:"after,omitempty"`
}

// TicketAutoCloseID is the workflow id of a ticket's automatic close: one
// per ticket; a new resolution (after a reopen) replaces the workflow of
// the previous one (conflict policy terminate-existing).
func TicketAutoCloseID(ticketID string) string { return "ticket-autoclose-" + ticketID }

// TicketAutoClose sleeps the quiet period on a durable timer, then runs
// the activity that closes the ticket only if it is still resolved and
// unchanged since (support.Store.CloseIfQuiet). It returns whether the
// ticket was closed.
func TicketAutoClose(ctx workflow.Context, in TicketAutoCloseInput) (bool, error) {
	after := in.After
	if after <= 0 {
		after = support.AutoCloseAfter
	}
	if err := workflow.Sleep(ctx, after); err != nil {
		return false, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute},
	})
	var closed bool
	err := call(summarized(actx, "close the ticket if still quiet"), SupportActivities.CloseIfQuiet, in.AutoClose).Get(ctx, &closed)
	return closed, err
}
