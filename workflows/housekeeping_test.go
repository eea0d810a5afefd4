package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// purgeLog records the purge calls of a housekeeping test with the workflow
// clock of each call.
type purgeLog struct {
	mu    sync.Mutex
	calls []workflows.HousekeepingPurgeInput
	times []time.Time
}

// record adds a call and returns its number (from 0).
func (l *purgeLog) record(in workflows.HousekeepingPurgeInput, at time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, in)
	l.times = append(l.times, at)
	return len(l.calls) - 1
}

// housekeepingEnv returns a time-skipping environment whose purge activity
// answers purge(call number from 0).
func housekeepingEnv(t *testing.T, purge func(i int) (identity.PurgeCounts, error)) (*testsuite.TestWorkflowEnvironment, *purgeLog) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Housekeeping, workflow.RegisterOptions{Name: workflows.HousekeepingWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, workflows.HousekeepingPurgeInput) (identity.PurgeCounts, error) {
		return identity.PurgeCounts{}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityName(workflows.HousekeepingActivities.Purge)})
	log := &purgeLog{}
	env.OnActivity(workflows.ActivityName(workflows.HousekeepingActivities.Purge), mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.HousekeepingPurgeInput) (identity.PurgeCounts, error) {
			return purge(log.record(in, env.Now()))
		})
	return env, log
}

// continuedWith returns the input of the run a finished workflow continued as.
func continuedWith(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.HousekeepingInput {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not finish")
	}
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("the workflow ended with %v, want continue-as-new", err)
	}
	if can.WorkflowType.Name != workflows.HousekeepingWorkflow {
		t.Fatalf("continued as %s", can.WorkflowType.Name)
	}
	var next workflows.HousekeepingInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	return next
}

// TestHousekeepingPurgesOnATimerAndContinuesAsNew runs one run of three
// hourly purges (time skipping): a purge at once, then one after each
// durable timer; a purge that fails after its retries does not stop the
// loop; the run then continues as new with its totals and run count, and
// the query shows the progress meanwhile.
func TestHousekeepingPurgesOnATimerAndContinuesAsNew(t *testing.T) {
	env, log := housekeepingEnv(t, func(i int) (identity.PurgeCounts, error) {
		if i >= 1 && i <= 5 { // the second purge fails on all of its 5 attempts
			return identity.PurgeCounts{}, temporal.NewApplicationError("database down", string(models.CodeInternal))
		}
		return identity.PurgeCounts{AccessTokens: 3, RevokedTokens: 1}, nil
	})
	start := env.Now()
	var mid workflows.HousekeepingStatus
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(workflows.QueryHousekeeping)
		if err != nil {
			t.Error(err)
			return
		}
		if err := v.Get(&mid); err != nil {
			t.Error(err)
		}
	}, 90*time.Minute)
	env.ExecuteWorkflow(workflows.HousekeepingWorkflow, workflows.HousekeepingInput{
		Interval: time.Hour, IterationsPerRun: 3, Runs: 4, Totals: identity.PurgeCounts{AccessTokens: 10},
	})
	next := continuedWith(t, env)
	if next.Runs != 5 || next.Interval != time.Hour || next.IterationsPerRun != 3 {
		t.Fatalf("continued with %+v", next)
	}
	if want := (identity.PurgeCounts{AccessTokens: 16, RevokedTokens: 2}); next.Totals != want {
		t.Fatalf("totals carried %+v, want %+v", next.Totals, want)
	}
	// 1 + 5 attempts of the failing purge + 1 = 7 calls; iterations 0, 1 (x5), 2.
	if len(log.calls) != 7 {
		t.Fatalf("%d purge calls, want 7: %+v", len(log.calls), log.calls)
	}
	for i, in := range log.calls {
		want := 1
		switch i {
		case 0:
			want = 0
		case 6:
			want = 2
		}
		if in.Iteration != want || in.Run != 4 {
			t.Fatalf("call %d asked for %+v, want iteration %d of run 4", i, in, want)
		}
	}
	if !log.times[0].Equal(start) {
		t.Fatalf("the first purge ran at +%s, want at once", log.times[0].Sub(start))
	}
	if d := log.times[1].Sub(start); d != time.Hour {
		t.Fatalf("the second purge ran at +%s, want +1h", d)
	}
	// Retries back off 5s, 10s, 20s, 40s; the timer starts after the last one.
	if d := log.times[6].Sub(start); d != 2*time.Hour+75*time.Second {
		t.Fatalf("the third purge ran at +%s, want +2h1m15s", d)
	}
	if d := env.Now().Sub(start); d != 3*time.Hour+75*time.Second {
		t.Fatalf("the run ended at +%s, want after three intervals", d)
	}
	if mid.Runs != 4 || mid.Iteration != 1 || mid.LastError == "" || mid.LastPurge.AccessTokens != 3 ||
		mid.Totals != (identity.PurgeCounts{AccessTokens: 13, RevokedTokens: 1}) || mid.LastPurgeAt == nil || !mid.LastPurgeAt.Equal(start) {
		t.Fatalf("status queried mid-run: %+v", mid)
	}
}

// TestHousekeepingDefaults checks that a zero input means an hourly purge
// and that the defaults (not copies of them) are carried to the next run,
// so a new version's defaults apply after the next continue-as-new.
func TestHousekeepingDefaults(t *testing.T) {
	env, log := housekeepingEnv(t, func(int) (identity.PurgeCounts, error) { return identity.PurgeCounts{}, nil })
	start := env.Now()
	env.ExecuteWorkflow(workflows.HousekeepingWorkflow, workflows.HousekeepingInput{})
	next := continuedWith(t, env)
	if next.Interval != 0 || next.IterationsPerRun != 0 || next.Runs != 1 {
		t.Fatalf("continued with %+v", next)
	}
	if len(log.calls) != workflows.HousekeepingIterationsPerRun {
		t.Fatalf("%d purges in a run, want %d", len(log.calls), workflows.HousekeepingIterationsPerRun)
	}
	if d := log.times[1].Sub(log.times[0]); d != workflows.HousekeepingInterval {
		t.Fatalf("purges %s apart, want %s", d, workflows.HousekeepingInterval)
	}
	if d := env.Now().Sub(start); d != time.Duration(workflows.HousekeepingIterationsPerRun)*workflows.HousekeepingInterval {
		t.Fatalf("a run lasts %s", d)
	}
}

// TestHousekeepingStopsWhenCancelled cancels the loop while it sleeps.
func TestHousekeepingStopsWhenCancelled(t *testing.T) {
	env, log := housekeepingEnv(t, func(int) (identity.PurgeCounts, error) { return identity.PurgeCounts{}, nil })
	env.RegisterDelayedCallback(env.CancelWorkflow, 150*time.Minute)
	env.ExecuteWorkflow(workflows.HousekeepingWorkflow, workflows.HousekeepingInput{})
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("cancelled loop ended with %v", err)
	}
	if len(log.calls) != 3 {
		t.Fatalf("%d purges before the cancellation at 2h30, want 3", len(log.calls))
	}
}

// TestStartHousekeepingIsIdempotent starts the housekeeping workflow from
// several "workers" at once on a real Temporal dev server: they all join
// one run. Once that run is gone, the next start begins a new one.
func TestStartHousekeepingIsIdempotent(t *testing.T) {
	addr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	queue := "housekeeping-" + models.RandomString(6)
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(workflows.Housekeeping, workflow.RegisterOptions{Name: workflows.HousekeepingWorkflow})
	purged := make(chan struct{}, 10)
	w.RegisterActivityWithOptions(func(context.Context, workflows.HousekeepingPurgeInput) (identity.PurgeCounts, error) {
		purged <- struct{}{}
		return identity.PurgeCounts{}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityName(workflows.HousekeepingActivities.Purge)})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	const starters = 4
	runs := make([]string, starters)
	var wg sync.WaitGroup
	for i := range starters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := workflows.StartHousekeeping(ctx, c, queue)
			if err != nil {
				t.Error(err)
				return
			}
			runs[i] = run.GetRunID()
		}()
	}
	wg.Wait()
	for _, r := range runs[1:] {
		if r == "" || r != runs[0] {
			t.Fatalf("concurrent starts got different runs: %v", runs)
		}
	}
	select {
	case <-purged:
	case <-time.After(30 * time.Second):
		t.Fatal("the housekeeping workflow did not purge at start")
	}
	again, err := workflows.StartHousekeeping(ctx, c, queue)
	if err != nil || again.GetRunID() != runs[0] {
		t.Fatalf("a later start: %v %v, want run %s", again, err, runs[0])
	}
	desc, err := c.DescribeWorkflowExecution(ctx, workflows.HousekeepingWorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("status %s", st)
	}

	if err := c.TerminateWorkflow(ctx, workflows.HousekeepingWorkflowID, "", "test"); err != nil {
		t.Fatal(err)
	}
	fresh, err := workflows.StartHousekeeping(ctx, c, queue)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.GetRunID() == runs[0] {
		t.Fatal("a terminated loop was not started afresh")
	}
	t.Cleanup(func() {
		_ = c.TerminateWorkflow(context.Background(), workflows.HousekeepingWorkflowID, "", "test done")
	})
}
