package integration

import (
	"context"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/workflows"
)

// TestSupportResolvingSchedulesTheAutoClose: resolving a ticket through
// the API starts its TicketAutoClose workflow on the real Temporal server,
// sleeping on its timer; resolving it again after a reopen replaces it.
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
}
