package api

import (
	"context"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

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
	opts := client.StartWorkflowOptions{
		ID: workflows.TicketAutoCloseID(t.ID), TaskQueue: s.taskQueue(),
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING, // a new resolution replaces the last one's timer
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.OrganizationIDKey.ValueSet(t.OrganizationID),
			workflows.EnvironmentKey.ValueSet(string(t.Environment)),
			workflows.OperationTypeKey.ValueSet("ticket_autoclose"),
			workflows.ResourceIDKey.ValueSet(t.ID),
		),
	}
	startCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workflowStartTimeout)
	defer cancel()
	if _, err := s.temporal.ExecuteWorkflow(startCtx, opts, workflows.TicketAutoCloseWorkflow, workflows.TicketAutoCloseInput{AutoClose: in}); err != nil {
		s.log.WarnContext(ctx, "the resolved ticket's automatic close was not scheduled", "ticket_id", t.ID, "error", err)
	}
}
