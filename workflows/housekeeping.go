package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models/identity"
)

// HousekeepingWorkflow is the registered name of the housekeeping workflow
// (its activity: HousekeepingActivities).
const HousekeepingWorkflow = "Housekeeping"

// HousekeepingWorkflowID is the fixed id of the one housekeeping workflow of
// a namespace: every worker starts it at start-up and joins the running one.
const HousekeepingWorkflowID = "platform-housekeeping"

// QueryHousekeeping returns a running housekeeping workflow's HousekeepingStatus.
const QueryHousekeeping = "state"

// Defaults of the housekeeping loop: a purge every hour, a new run (continue
// as new) after a day of purges, so the history stays small.
const (
	HousekeepingInterval         = time.Hour
	HousekeepingIterationsPerRun = 24
)

// HousekeepingInput is the one argument of the housekeeping workflow. Zero
// values mean the defaults above; Runs and Totals are carried from run to run.
type HousekeepingInput struct {
	Interval         time.Duration        `json:"interval,omitempty"`
	IterationsPerRun int                  `json:"iterations_per_run,omitempty"`
	Runs             int                  `json:"runs"`   // runs completed before this one
	Totals           identity.PurgeCounts `json:"totals"` // removed by earlier runs
}

// HousekeepingPurgeInput is the one argument of the purge activity: which
// iteration of which run asks (for the logs).
type HousekeepingPurgeInput struct {
	Run       int `json:"run"`
	Iteration int `json:"iteration"`
}

// HousekeepingStatus is the live state of the housekeeping workflow.
type HousekeepingStatus struct {
	Runs        int                  `json:"runs"`
	Iteration   int                  `json:"iteration"`
	LastPurgeAt *time.Time           `json:"last_purge_at,omitempty"`
	LastPurge   identity.PurgeCounts `json:"last_purge"`
	LastError   string               `json:"last_error,omitempty"`
	Totals      identity.PurgeCounts `json:"totals"`
}

// HousekeepingActivityOptions are the options of the purge activity: it is
// idempotent, so a failure is retried a few times; if it still fails the
// loop goes on and the next iteration purges what is left.
func HousekeepingActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute, MaximumAttempts: 5,
		},
	}
}

// Housekeeping purges expired authentication artefacts for ever: it runs
// the purge activity, sleeps Interval on a durable timer, and after
// IterationsPerRun purges continues as new (carrying its totals) so that its
// history stays bounded. A purge that fails after its retries is logged and
// does not stop the loop. It returns only when cancelled (or as the
// continue-as-new error that starts the next run).
func Housekeeping(ctx workflow.Context, in HousekeepingInput) error {
	interval, perRun := in.Interval, in.IterationsPerRun
	if interval <= 0 {
		interval = HousekeepingInterval
	}
	if perRun <= 0 {
		perRun = HousekeepingIterationsPerRun
	}
	status := HousekeepingStatus{Runs: in.Runs, Totals: in.Totals}
	if err := workflow.SetQueryHandler(ctx, QueryHousekeeping, func() (HousekeepingStatus, error) { return status, nil }); err != nil {
		return err
	}
	log := workflow.GetLogger(ctx)
	actx := workflow.WithActivityOptions(ctx, HousekeepingActivityOptions())
	for i := 0; i < perRun; i++ {
		status.Iteration = i
		var counts identity.PurgeCounts
		err := call(summarized(actx, fmt.Sprintf("purge expired OAuth artefacts (run %d, pass %d)", in.Runs, i)), HousekeepingActivities.Purge, HousekeepingPurgeInput{Run: in.Runs, Iteration: i}).Get(ctx, &counts)
		if err != nil {
			if temporal.IsCanceledError(err) {
				return err
			}
			log.Warn("housekeeping purge failed; the next iteration tries again", "error", err)
			status.LastError = err.Error()
		} else {
			at := workflow.Now(ctx)
			status.LastPurgeAt, status.LastPurge, status.LastError = &at, counts, ""
			status.Totals = status.Totals.Add(counts)
		}
		if err := workflow.Sleep(ctx, interval); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, HousekeepingWorkflow, HousekeepingInput{
		Interval: in.Interval, IterationsPerRun: in.IterationsPerRun, Runs: in.Runs + 1, Totals: status.Totals,
	})
}

// StartHousekeeping starts the housekeeping workflow on taskQueue under
// HousekeepingWorkflowID, or joins the run already going (conflict policy
// use-existing), so any number of workers can call it at start-up and one
// loop runs. A finished or failed loop is started afresh. It is called by
// the worker process, never by a workflow. Errors: the Temporal client's.
func StartHousekeeping(ctx context.Context, c client.Client, taskQueue string) (client.WorkflowRun, error) {
	// Operators find it in the Temporal UI with OperationType = "housekeeping".
	opts := StartOptions(TaskQueues{Interactive: taskQueue}, Start{ID: HousekeepingWorkflowID, Priority: Interactive,
		OperationType: "housekeeping", Singleton: true})
	return c.ExecuteWorkflow(ctx, opts, HousekeepingWorkflow, HousekeepingInput{})
}
