package integration

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/workflows"
)

// TestHousekeepingLoopPurges runs the housekeeping loop on the real
// Temporal server with a short interval and two purges per run: the first
// run's purge removes an expired deny-listed token, the run continues as
// new carrying its totals, and the loop stops when cancelled. Its history
// (purges, timers, continue-as-new) is recorded for the replay test.
func TestHousekeepingLoopPurges(t *testing.T) {
	p := startPlatform(t, platformOptions{queuePrefix: "housekeeping"})
	ctx := context.Background()
	ids := identity.NewStore(p.store)
	expired := time.Now().Add(-time.Hour)
	if err := ids.RevokeTokenID(ctx, "jti-housekeeping-expired", "usr_test", expired, "test"); err != nil {
		t.Fatal(err)
	}

	// The options of workflows.StartHousekeeping, with a short loop.
	opts := workflows.StartOptions(workflows.TaskQueues{Interactive: p.queue}, workflows.Start{ID: workflows.HousekeepingWorkflowID,
		Priority: workflows.Interactive, OperationType: "housekeeping", Singleton: true})
	run, err := p.temporal.ExecuteWorkflow(ctx, opts, workflows.HousekeepingWorkflow,
		workflows.HousekeepingInput{Interval: 200 * time.Millisecond, IterationsPerRun: 2})
	if err != nil {
		t.Fatal(err)
	}
	first := run.GetRunID()

	// The second run carries the first run's totals.
	var status workflows.HousekeepingStatus
	p.waitUntil("the second housekeeping run", func() bool {
		v, err := p.temporal.QueryWorkflow(ctx, workflows.HousekeepingWorkflowID, "", workflows.QueryHousekeeping)
		if err != nil || v.Get(&status) != nil {
			return false
		}
		return status.Runs >= 1
	})
	if status.Totals.RevokedTokens != 1 {
		t.Fatalf("housekeeping totals %+v, want the expired deny-listed token purged", status.Totals)
	}
	if revoked, err := ids.TokenRevoked(ctx, "jti-housekeeping-expired"); err != nil || revoked {
		t.Fatalf("expired deny-listed token still listed: %v %v", revoked, err)
	}
	desc, err := p.temporal.DescribeWorkflowExecution(ctx, workflows.HousekeepingWorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.WorkflowExecutionInfo.Execution.RunId == first {
		t.Fatal("the loop did not continue as new")
	}

	// Cancelled, the loop stops.
	if err := p.temporal.CancelWorkflow(ctx, workflows.HousekeepingWorkflowID, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.temporal.GetWorkflow(ctx, workflows.HousekeepingWorkflowID, "").Get(ctx, nil); err == nil {
		t.Fatal("the cancelled loop ended without an error")
	}
}
