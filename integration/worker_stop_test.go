package integration

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

// TestStoppedWorkerHandsTheStepOver: a worker stopped (Ctrl-C) in the
// middle of a long network step gives the step up after its stop timeout;
// the next worker runs the step again within seconds (the steps heartbeat),
// not after the step's start-to-close timeout, and the provisioning completes.
func TestStoppedWorkerHandsTheStepOver(t *testing.T) {
	// The first worker's network steps take ten minutes: longer than the test.
	p := startPlatform(t, platformOptions{stepDelay: "10m", stopTimeout: time.Second, keys: demoLiveKey})
	acc := startInternetOrder(t, p)
	time.Sleep(1500 * time.Millisecond) // well inside the network call

	stopped := time.Now()
	p.workers[0].Stop()
	if took := time.Since(stopped); took > 10*time.Second {
		t.Fatalf("the worker took %s to stop; its stop timeout is 1 s", took)
	}
	next := worker.New(p.temporal, p.queue, worker.Deps{Store: p.store, SimulatorStepDelay: 10 * time.Millisecond,
		Webhooks: webhooks.NewClient(true), StopTimeout: time.Second})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Stop)

	op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
	took := time.Since(stopped)
	if op.Status != "completed" {
		t.Fatalf("operation %+v", op)
	}
	// Well before the 5-minute start-to-close timeout: at most a heartbeat timeout and the retry's backoff.
	if limit := workflows.StepHeartbeatTimeout + 20*time.Second; took > limit {
		t.Fatalf("the provisioning completed %s after the worker stopped, want at most %s", took, limit)
	}

	// The validate step really ran twice: its second attempt on the next worker.
	attempts := validateAttempts(t, p, op)
	if attempts < 2 {
		t.Fatalf("validate ran %d attempt(s), want a retry on the next worker", attempts)
	}
	t.Logf("completed %s after the first worker stopped, validate attempt %d", took.Round(time.Millisecond), attempts)
}

// hungNetwork is a network whose feasibility check never answers and
// ignores cancellation, as a worker process that died in the middle of
// the call: its activity neither heartbeats nor reports anything.
type hungNetwork struct {
	simulator.Southbound
	release <-chan struct{}
}

func (n hungNetwork) CheckFeasibility(context.Context, simulator.Order) error {
	<-n.release
	return errors.New("released")
}

// TestDeadWorkerStepIsRetriedAfterItsHeartbeatTimeout: a worker that
// stops answering in the middle of a step (as a killed process) reports
// nothing; the step's heartbeat timeout, not its 5-minute start-to-close
// timeout, hands it to the next worker.
func TestDeadWorkerStepIsRetriedAfterItsHeartbeatTimeout(t *testing.T) {
	t.Parallel() // it mostly waits for the heartbeat timeout: beside the other parallel tests
	p := startPlatform(t, platformOptions{keys: demoLiveKey})
	p.workers[0].Stop() // replaced by the worker that dies
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hung := worker.New(p.temporal, p.queue, worker.Deps{Store: p.store, StopTimeout: time.Second,
		Southbound: hungNetwork{Southbound: simulator.New(p.store, simulator.Options{}), release: release}})
	if err := hung.Start(); err != nil {
		t.Fatal(err)
	}
	acc := startInternetOrder(t, p)
	time.Sleep(time.Second) // inside the feasibility check, which never answers
	stopped := time.Now()
	hung.Stop()
	next := worker.New(p.temporal, p.queue, worker.Deps{Store: p.store, SimulatorStepDelay: 10 * time.Millisecond,
		Webhooks: webhooks.NewClient(true), StopTimeout: time.Second})
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Stop)

	op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
	took := time.Since(stopped)
	if op.Status != "completed" {
		t.Fatalf("operation %+v", op)
	}
	if took < workflows.StepHeartbeatTimeout-2*time.Second || took > workflows.StepHeartbeatTimeout+30*time.Second {
		t.Fatalf("the provisioning completed %s after the worker died, want about its heartbeat timeout (%s)", took, workflows.StepHeartbeatTimeout)
	}
	if attempts := validateAttempts(t, p, op); attempts < 2 {
		t.Fatalf("validate ran %d attempt(s), want a retry on the next worker", attempts)
	}
	t.Logf("completed %s after the first worker died", took.Round(time.Millisecond))
}

// startInternetOrder orders an internet service with the demo tenant's
// live key and waits until its validate step is running.
func startInternetOrder(t *testing.T, p *platform) accepted {
	t.Helper()
	body := map[string]any{
		"account_id": p.demo.Account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium", "billing_cycle": "monthly",
		"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"},
	}
	var acc accepted
	if status := p.do("POST", "/v1/services/connectivity/internet", p.liveKey, body, &acc); status != http.StatusAccepted {
		t.Fatalf("status %d: %+v", status, acc)
	}
	p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool {
		for _, s := range op.Steps {
			if s.Name == operations.StepValidate && s.Status == "in_progress" {
				return true
			}
		}
		return terminal(op.Status)
	})
	return acc
}

// validateAttempts returns the attempt number of the last start of the
// operation's validate activity, from its workflow history.
func validateAttempts(t *testing.T, p *platform, op *operation) int {
	t.Helper()
	iter := p.temporal.GetWorkflowHistory(context.Background(), op.Workflow.ID, op.Workflow.RunID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	attempts := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == workflows.ActivityName(workflows.ProvisioningActivities.Validate) {
			attempts = int(a.GetAttempt())
		}
	}
	return attempts
}
