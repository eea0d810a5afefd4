package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// TicketSLAWorkflow is the registered name of a ticket's SLA workflow.
const TicketSLAWorkflow = "TicketSLA"

// TicketSLASignal asks a ticket's SLA workflow to sync its clocks now
// (the API sends it, with signal-with-start, after every change to the
// ticket; policy and calendar edits send it to every open ticket they
// affect). It carries no value.
const TicketSLASignal = "sla-sync"

// TicketSLAQuery answers the workflow's last known state (support.SLAState).
const TicketSLAQuery = "sla-state"

// TicketSLAHistoryLimit is the history length past which the workflow
// continues as new (its state lives in the database: nothing is lost).
const TicketSLAHistoryLimit = 2000

// Search attributes of the SLA workflows, for operators: the ticket's
// status and priority and the next instant a target breaches.
var (
	TicketStatusKey    = temporal.NewSearchAttributeKeyKeyword("TicketStatus")
	TicketPriorityKey  = temporal.NewSearchAttributeKeyKeyword("TicketPriority")
	SlaNextBreachAtKey = temporal.NewSearchAttributeKeyTime("SlaNextBreachAt")
)

// TicketSLAInput is the one argument of the workflow.
type TicketSLAInput struct {
	TicketID       string             `json:"ticket_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
}

// SLASyncInput is the argument of the sync activity: the ticket and the
// workflow's clock, the instant the clocks are brought to.
type SLASyncInput struct {
	TicketID string    `json:"ticket_id"`
	Now      time.Time `json:"now"`
}

// TicketSLAID is the workflow id of a ticket's SLA workflow: one per
// ticket, for its whole life.
func TicketSLAID(ticketID string) string { return "ticket-sla-" + ticketID }

// TicketSLA keeps a ticket's SLA clocks: it syncs them (the Support.SyncSLA
// activity replays the ticket's changes onto the clocks and their ledger,
// records warnings and breaches and fires the escalation ladder), then
// sleeps on a durable timer until the next instant something is due, or
// until a signal says the ticket (or its policy, or its calendar) changed.
// Nothing polls: an idle ticket costs one timer. It ends when the ticket
// is closed, and continues as new past TicketSLAHistoryLimit events.
func TicketSLA(ctx workflow.Context, in TicketSLAInput) error {
	state := support.SLAState{TicketID: in.TicketID}
	if err := workflow.SetQueryHandler(ctx, TicketSLAQuery, func() (support.SLAState, error) { return state, nil }); err != nil {
		return err
	}
	signals := workflow.GetSignalChannel(ctx, TicketSLASignal)
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
	})
	for {
		for signals.ReceiveAsync(nil) { // every pending request is answered by the sync below
		}
		var st support.SLAState
		if err := call(summarized(actx, "sync the SLA clocks of ticket "+in.TicketID), SupportActivities.SyncSLA, SLASyncInput{TicketID: in.TicketID, Now: workflow.Now(ctx)}).Get(ctx, &st); err != nil {
			return err
		}
		state = st
		next := SlaNextBreachAtKey.ValueUnset()
		if st.NextBreachAt != nil {
			next = SlaNextBreachAtKey.ValueSet(*st.NextBreachAt)
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, TicketStatusKey.ValueSet(st.Status), TicketPriorityKey.ValueSet(st.Priority), next); err != nil {
			return err
		}
		workflow.SetCurrentDetails(ctx, slaDetails(st))
		if st.Done {
			return nil
		}
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > TicketSLAHistoryLimit && signals.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, TicketSLAWorkflow, in)
		}
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		timerCtx, cancel := workflow.WithCancel(ctx)
		if st.NextAt != nil {
			d := st.NextAt.Sub(workflow.Now(ctx))
			if d < time.Second {
				d = time.Second
			}
			sel.AddFuture(workflow.NewTimer(timerCtx, d), func(workflow.Future) {})
		}
		sel.Select(ctx)
		cancel()
	}
}

// slaDetails renders a ticket's SLA state as the workflow's current
// details (Markdown): status and priority, the next breach, the next
// wake-up, and each clock.
func slaDetails(st support.SLAState) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Ticket**: `%s`, %s, %s priority", st.TicketID, st.Status, st.Priority))
	if st.NextBreachAt != nil {
		b.WriteString(fmt.Sprintf("\n\n**Next breach**: %s", models.Timestamp(*st.NextBreachAt)))
	}
	if st.NextAt != nil {
		b.WriteString(fmt.Sprintf("\n\n**Next timer**: %s", models.Timestamp(*st.NextAt)))
	} else if !st.Done {
		b.WriteString("\n\n**Next timer**: none (every clock paused or stopped)")
	}
	for _, m := range st.Metrics {
		b.WriteString(fmt.Sprintf("\n- `%s` %s, %d of %d min", m.Metric, m.Status, m.ElapsedSeconds/60, m.TargetMinutes))
		if m.DueAt != nil {
			b.WriteString(fmt.Sprintf(", due %s", models.Timestamp(*m.DueAt)))
		}
	}
	return b.String()
}
