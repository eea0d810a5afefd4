package api

import (
	"context"
	"fmt"

	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// startAutoClose starts the workflow that closes t after the quiet period
// of support.AutoCloseAfter, when t was just resolved. The ticket is
// already stored: when the workflow engine is unavailable (or absent, in
// handler tests) the failure is logged and the ticket stays resolved until
// someone closes it.
func (s *Server) startAutoClose(ctx context.Context, t *support.Ticket) {
	in, ok := support.AutoCloseOf(t)
	if !ok || s.temporal == nil {
		return
	}
	opts := workflows.StartOptions(s.taskQueues(), workflows.Start{ID: workflows.TicketAutoCloseID(t.ID), Priority: workflows.Interactive,
		OrganizationID: t.OrganizationID, Environment: t.Environment, OperationType: "ticket_autoclose", ResourceID: t.ID,
		Summary: fmt.Sprintf("Automatic close of resolved ticket %s for %s (%s)", t.ID, t.OrganizationID, t.Environment),
		Link:    s.cfg.PublicBaseURL + "/v1/support/tickets/" + t.ID,
		Replace: true}) // a new resolution replaces the last one's timer
	startCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.TicketAutoCloseWorkflow, workflows.TicketAutoCloseInput{AutoClose: in}); err != nil {
		s.log.WarnContext(ctx, "the resolved ticket's automatic close was not scheduled", "ticket_id", t.ID, "error", err)
	}
}
