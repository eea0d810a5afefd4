package workflows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// fakeTracker stands in for activities.Tracker: its plans are scripted,
// and it records what the workflow asked, when.
type fakeTracker struct {
	env       *testsuite.TestWorkflowEnvironment
	start     time.Time
	plans     []time.Duration // the workflow instants of the plans, from start
	stopAfter int             // plans answered before Stop
	attempts  map[string]int  // per item
	polls     []time.Duration
	pushed    []string
}

func (f *fakeTracker) at() time.Duration { return f.env.Now().Sub(f.start) }

func (f *fakeTracker) Plan(_ context.Context, in workflows.TrackerRef) (*support.TrackerPlan, error) {
	f.plans = append(f.plans, f.at())
	if len(f.plans) > f.stopAfter {
		return &support.TrackerPlan{Stop: true}, nil
	}
	p := &support.TrackerPlan{LinkIDs: []string{"trkl_1"}}
	if len(f.plans) == 1 {
		p.TicketIDs = []string{"tkt_refused", "tkt_flaky", "tkt_ok"}
		p.CommentIDs = []string{"cmt_1"}
	}
	return p, nil
}

func (f *fakeTracker) EnsureIssue(_ context.Context, in workflows.TrackerRef) (*workflows.TrackerIssueResult, error) {
	f.attempts[in.ItemID]++
	switch {
	case in.ItemID == "tkt_refused":
		return nil, temporal.NewNonRetryableApplicationError("HTTP 400: project", workflows.TrackerRejectedError, nil)
	case in.ItemID == "tkt_flaky" && f.attempts[in.ItemID] < 3:
		return nil, temporal.NewApplicationError("HTTP 500", "TRACKER_UNAVAILABLE")
	}
	return &workflows.TrackerIssueResult{Key: "OPS-1"}, nil
}

func (f *fakeTracker) PushComment(_ context.Context, in workflows.TrackerRef) error {
	f.pushed = append(f.pushed, in.ItemID)
	return nil
}

func (f *fakeTracker) PollLink(_ context.Context, in workflows.TrackerRef) (*workflows.TrackerPollResult, error) {
	f.polls = append(f.polls, f.at())
	return &workflows.TrackerPollResult{Status: "To Do"}, nil
}

func newTrackerRun(t *testing.T, stopAfter int) (*testsuite.TestWorkflowEnvironment, *fakeTracker) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.SetTestTimeout(30 * time.Second)
	f := &fakeTracker{env: env, start: start, stopAfter: stopAfter, attempts: map[string]int{}}
	env.RegisterWorkflowWithOptions(workflows.TrackerSync, workflow.RegisterOptions{Name: workflows.TrackerSyncWorkflow})
	env.RegisterActivityWithOptions(f, activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.TrackerActivities]()})
	return env, f
}

var trackerInput = workflows.TrackerSyncInput{IntegrationID: "trk_1", OrganizationID: "org_1", Environment: models.EnvLive,
	PollInterval: 10 * time.Second, RetryInterval: time.Second}

// TestTrackerSyncPollsOnTimerAndEndsWhenStopped: the first round handles
// every item (a refused one once, a failing one until it passes, neither
// stopping the round), the links are polled at once and then every poll
// interval, and the workflow ends when the plan says stop.
func TestTrackerSyncPollsOnTimerAndEndsWhenStopped(t *testing.T) {
	env, f := newTrackerRun(t, 4)
	env.ExecuteWorkflow(workflows.TrackerSyncWorkflow, trackerInput)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if f.attempts["tkt_refused"] != 1 || f.attempts["tkt_flaky"] != 3 || f.attempts["tkt_ok"] != 1 {
		t.Fatalf("attempts %v", f.attempts)
	}
	if !slices.Equal(f.pushed, []string{"cmt_1"}) {
		t.Fatalf("pushed %v", f.pushed)
	}
	// The first poll follows the first round's items (the flaky one's two
	// retries: 1 s and 2 s); then one every 10 s.
	p0 := f.polls[0]
	if want := []time.Duration{3 * time.Second, p0 + 10*time.Second, p0 + 20*time.Second, p0 + 30*time.Second}; !slices.Equal(f.polls, want) {
		t.Fatalf("polls at %v, want %v", f.polls, want)
	}
}

// TestTrackerSyncSignalRunsARoundWithoutPolling: a signal makes a round at
// once (plan, items) but the links wait for the poll timer, which the
// signal neither resets nor skips.
func TestTrackerSyncSignalRunsARoundWithoutPolling(t *testing.T) {
	env, f := newTrackerRun(t, 3)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.TrackerSyncSignal, nil) }, 15*time.Second)
	env.ExecuteWorkflow(workflows.TrackerSyncWorkflow, trackerInput)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	firstRoundEnd := f.polls[0]
	if len(f.plans) != 4 || f.plans[1] != firstRoundEnd+10*time.Second || f.plans[2] != 15*time.Second || f.plans[3] != firstRoundEnd+20*time.Second {
		t.Fatalf("plans at %v (first poll at %v)", f.plans, firstRoundEnd)
	}
	if len(f.polls) != 2 || f.polls[1] != firstRoundEnd+10*time.Second {
		t.Fatalf("polls at %v", f.polls)
	}
}

// TestTrackerSyncPlanFailureFailsTheRun: the plan is retried without a
// bound; a non-retryable failure of it ends the run with the error.
func TestTrackerSyncPlanFailureFailsTheRun(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.TrackerSync, workflow.RegisterOptions{Name: workflows.TrackerSyncWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, workflows.TrackerRef) (*support.TrackerPlan, error) {
		return nil, temporal.NewNonRetryableApplicationError("broken", "INTERNAL_ERROR", nil)
	}, activity.RegisterOptions{Name: workflows.ActivityName(workflows.TrackerActivities.Plan)})
	env.ExecuteWorkflow(workflows.TrackerSyncWorkflow, trackerInput)
	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != "INTERNAL_ERROR" {
		t.Fatalf("error %v", err)
	}
}
