package integration

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// TestSupportResolvingSchedulesTheAutoClose: resolving a ticket through
// the API starts its TicketAutoClose workflow on the real Temporal server,
// sleeping on its timer; resolving it again after a reopen replaces it.
// The resolution's close, started again with a one-second quiet period in
// place of the API's three days (the workflow's After), then runs to its
// end: the timer fires and the activity closes the quiet ticket. That
// history is recorded for the replay test.
func TestSupportResolvingSchedulesTheAutoClose(t *testing.T) {
	p := startPlatform(t, platformOptions{queuePrefix: "support", keys: demoLiveKey})
	ctx := context.Background()
	staff := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(p.store).EnsureAPIKey(ctx, p.demo.Provider.ID, staff, "staff", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	var tk struct {
		Ticket struct{ ID string } `json:"ticket"`
	}
	if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": "Link down", "description": "d", "category": "network"}, &tk); st != 201 {
		t.Fatalf("create: %d", st)
	}
	path := "/v1/support/tickets/" + tk.Ticket.ID
	runOf := func() (string, enumspb.WorkflowExecutionStatus) {
		t.Helper()
		d, err := p.temporal.DescribeWorkflowExecution(ctx, workflows.TicketAutoCloseID(tk.Ticket.ID), "")
		if err != nil {
			t.Fatalf("no auto-close workflow: %v", err)
		}
		return d.WorkflowExecutionInfo.Execution.RunId, d.WorkflowExecutionInfo.Status
	}
	if st := p.do("PUT", path, staff, map[string]any{"status": "resolved"}, nil); st != 200 {
		t.Fatalf("resolve: %d", st)
	}
	first, status := runOf()
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("auto-close workflow %s", status)
	}
	if st := p.do("PUT", path, p.liveKey, map[string]any{"status": "open"}, nil); st != 200 {
		t.Fatalf("reopen: %d", st)
	}
	if st := p.do("PUT", path, staff, map[string]any{"status": "resolved"}, nil); st != 200 {
		t.Fatalf("resolve again: %d", st)
	}
	second, status := runOf()
	if second == first || status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("second resolution: run %s (first %s), %s", second, first, status)
	}

	// The same close with a short quiet period replaces the API's, as a new
	// resolution would, and closes the ticket.
	customer := &models.Principal{ID: "ak_integration", OrganizationID: p.demo.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	ticket, err := support.NewStore(p.store).GetTicket(ctx, customer, tk.Ticket.ID)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := support.AutoCloseOf(ticket)
	if !ok {
		t.Fatalf("ticket %+v is not resolved", ticket)
	}
	opts := workflows.StartOptions(workflows.TaskQueues{Interactive: p.queue}, workflows.Start{ID: workflows.TicketAutoCloseID(ticket.ID),
		Priority: workflows.Interactive, OrganizationID: ticket.OrganizationID, Environment: ticket.Environment,
		OperationType: "ticket_autoclose", ResourceID: ticket.ID, Replace: true})
	started := time.Now()
	run, err := p.temporal.ExecuteWorkflow(ctx, opts, workflows.TicketAutoCloseWorkflow, workflows.TicketAutoCloseInput{AutoClose: in, After: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var closed bool
	if err := run.Get(ctx, &closed); err != nil || !closed {
		t.Fatalf("auto-close: closed %v, %v", closed, err)
	}
	if waited := time.Since(started); waited < time.Second {
		t.Fatalf("closed after %v, before the quiet period", waited)
	}
	var got struct {
		Ticket struct{ Status string } `json:"ticket"`
	}
	if st := p.do("GET", path, p.liveKey, nil, &got); st != 200 || got.Ticket.Status != support.StatusClosed {
		t.Fatalf("ticket after its quiet period: %d %+v", st, got.Ticket)
	}
}
