package api

import (
	"context"
	"fmt"

	"go.temporal.io/api/enums/v1"

	"github.com/telcoplatform/platform/models"

	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// syncSLA tells the ticket's SLA workflow that the ticket changed, starting
// the workflow when it is not running (signal-with-start). The change is
// already stored in the ticket's history, which the workflow replays: a
// signal that fails (the workflow engine unavailable, or absent in handler
// tests) is logged, and the clocks catch up at the workflow's next timer or
// the ticket's next change.
func (s *Server) syncSLA(ctx context.Context, t *support.Ticket) {
	if s.temporal == nil || t == nil {
		return
	}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: workflows.TicketSLAID(t.ID), Priority: workflows.Interactive,
		OrganizationID: t.OrganizationID, Environment: t.Environment, OperationType: "ticket_sla", ResourceID: t.ID,
		Summary: fmt.Sprintf("SLA clocks of ticket %s (%s priority) for %s (%s)", t.ID, t.Priority, t.OrganizationID, t.Environment),
		Link:    s.cfg.PublicBaseURL + "/v1/support/tickets/" + t.ID})
	opts.WorkflowExecutionErrorWhenAlreadyStarted = false
	// A workflow an operator terminated starts afresh at the ticket's next
	// change (its state is in the database).
	opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	sigCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workflowStartTimeout)
	defer cancel()
	in := workflows.TicketSLAInput{TicketID: t.ID, OrganizationID: t.OrganizationID, Environment: t.Environment}
	if _, err := s.temporal.SignalWithStartWorkflow(sigCtx, opts.ID, workflows.TicketSLASignal, nil, opts, workflows.TicketSLAWorkflow, in); err != nil {
		s.log.WarnContext(ctx, "the ticket's SLA clock was not told of a change", "ticket_id", t.ID, "error", err)
	}
}

// resyncSLA brings the updated ticket's clocks up to the update at once
// and reads the ticket again into res. A failure is logged: the workflow,
// signalled after it, syncs the clocks anyway.
func (s *Server) resyncSLA(ctx context.Context, p *models.Principal, res *support.UpdateResult) {
	at := s.now()
	if res.Ticket.UpdatedAt.After(at) {
		at = res.Ticket.UpdatedAt
	}
	if _, err := s.support.SyncSLA(ctx, res.Ticket.ID, at); err != nil {
		s.log.WarnContext(ctx, "the ticket's SLA clocks were not re-timed with its update", "ticket_id", res.Ticket.ID, "error", err)
		return
	}
	t, err := s.support.GetTicket(ctx, p, res.Ticket.ID)
	if err != nil {
		s.log.WarnContext(ctx, "the re-timed ticket could not be read again", "ticket_id", res.Ticket.ID, "error", err)
		return
	}
	res.Ticket = t
}

// retimeSLA starts the workflow that signals the SLA workflows of the open
// tickets an edit of SLA policies or calendars affects (sc), so that they
// re-time at once. The edit is already stored: when the workflow engine is
// unavailable the failure is logged and each ticket re-times at its next
// timer or change.
func (s *Server) retimeSLA(ctx context.Context, sc support.RetimeScope) {
	if s.temporal == nil {
		return
	}
	id := "sla-retime-" + models.NewID("rt")
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: id, Priority: workflows.Interactive, OperationType: "sla_retime", ResourceID: sc.PolicyID + sc.CalendarID})
	startCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.SLARetimeWorkflow, workflows.SLARetimeInput{Scope: sc}); err != nil {
		s.log.WarnContext(ctx, "open tickets were not re-timed after an SLA policy or calendar edit", "error", err)
	}
}
