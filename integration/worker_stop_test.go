package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/telcoplatform/platform/models"
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
			if s.Name == models.StepValidate && s.Status == "in_progress" {
				return true
			}
		}
		return terminal(op.Status)
	})
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
	ctx := context.Background()
	iter := p.temporal.GetWorkflowHistory(ctx, op.Workflow.ID, op.Workflow.RunID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
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
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == workflows.ActivityValidate {
			attempts = int(a.GetAttempt())
		}
	}
	if attempts < 2 {
		t.Fatalf("validate ran %d attempt(s), want a retry on the next worker", attempts)
	}
	t.Logf("completed %s after the first worker stopped, validate attempt %d", took.Round(time.Millisecond), attempts)
}
