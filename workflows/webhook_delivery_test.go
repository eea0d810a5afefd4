package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// deliveryLog records what the stubbed delivery activities saw, with the
// workflow clock of each call.
type deliveryLog struct {
	mu       sync.Mutex
	prepares []time.Time
	attempts []workflows.WebhookAttemptInput
	times    []time.Time
	finishes []workflows.WebhookFinishInput
}

// deliveryEnv returns a time-skipping test environment for the delivery
// workflow. prepare answers Prepare (call number i, from 0); attempt
// answers attempt number n (from 1).
func deliveryEnv(t *testing.T, prepare func(i int) (*workflows.WebhookPrepareResult, error), attempt func(n int) (*workflows.WebhookAttemptResult, error)) (*testsuite.TestWorkflowEnvironment, *deliveryLog) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: workflows.WebhookDeliveryWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, workflows.WebhookDeliveryInput) (*workflows.WebhookPrepareResult, error) {
		return nil, nil
	},
		activity.RegisterOptions{Name: workflows.ActivityName(workflows.WebhooksActivities.Prepare)})
	env.RegisterActivityWithOptions(func(context.Context, workflows.WebhookAttemptInput) (*workflows.WebhookAttemptResult, error) {
		return nil, nil
	},
		activity.RegisterOptions{Name: workflows.ActivityName(workflows.WebhooksActivities.Attempt)})
	env.RegisterActivityWithOptions(func(context.Context, workflows.WebhookFinishInput) error { return nil },
		activity.RegisterOptions{Name: workflows.ActivityName(workflows.WebhooksActivities.Finish)})
	log := &deliveryLog{}
	env.OnActivity(workflows.ActivityName(workflows.WebhooksActivities.Prepare), mock.Anything, mock.Anything).Return(
		func(context.Context, workflows.WebhookDeliveryInput) (*workflows.WebhookPrepareResult, error) {
			log.mu.Lock()
			i := len(log.prepares)
			log.prepares = append(log.prepares, env.Now())
			log.mu.Unlock()
			return prepare(i)
		})
	env.OnActivity(workflows.ActivityName(workflows.WebhooksActivities.Attempt), mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.WebhookAttemptInput) (*workflows.WebhookAttemptResult, error) {
			log.mu.Lock()
			log.attempts = append(log.attempts, in)
			log.times = append(log.times, env.Now())
			log.mu.Unlock()
			return attempt(in.Attempt)
		})
	env.OnActivity(workflows.ActivityName(workflows.WebhooksActivities.Finish), mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.WebhookFinishInput) error {
			log.mu.Lock()
			log.finishes = append(log.finishes, in)
			log.mu.Unlock()
			return nil
		})
	return env, log
}

func ready(int) (*workflows.WebhookPrepareResult, error) {
	return &workflows.WebhookPrepareResult{Ready: true}, nil
}

func failing(int) (*workflows.WebhookAttemptResult, error) {
	return &workflows.WebhookAttemptResult{StatusCode: 503, Error: "non-2xx response: HTTP 503"}, nil
}

var deliveryInput = workflows.WebhookDeliveryInput{DeliveryID: "whd_test", OrganizationID: "org_a", Environment: models.EnvLive}

func deliveryResult(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.WebhookDeliveryResult {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.WebhookDeliveryResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWebhookDeliverySucceedsFirstTime(t *testing.T) {
	env, log := deliveryEnv(t, ready, func(int) (*workflows.WebhookAttemptResult, error) {
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 200}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliverySucceeded || res.Attempts != 1 || len(log.attempts) != 1 || len(log.finishes) != 0 {
		t.Fatalf("%+v, %d attempts, finishes %+v", res, len(log.attempts), log.finishes)
	}
	if log.attempts[0].NextDelay != webhooks.RetryDelay(1, webhooks.JitterSeed(deliveryInput.DeliveryID)) {
		t.Fatalf("the attempt must know the wait before the next one: %v", log.attempts[0].NextDelay)
	}
}

// TestWebhookDeliveryRetrySchedule lets every attempt fail: the workflow
// waits the retry schedule between attempts (more than 24 hours in all),
// makes webhooks.MaxAttempts attempts, then marks the delivery failed.
func TestWebhookDeliveryRetrySchedule(t *testing.T) {
	env, log := deliveryEnv(t, ready, failing)
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliveryFailed || res.Attempts != webhooks.MaxAttempts || len(log.attempts) != webhooks.MaxAttempts {
		t.Fatalf("%+v after %d attempts", res, len(log.attempts))
	}
	seed := webhooks.JitterSeed(deliveryInput.DeliveryID)
	for i := 1; i < len(log.times); i++ {
		gap := log.times[i].Sub(log.times[i-1])
		want := webhooks.RetryDelay(i, seed)
		if gap != want {
			t.Fatalf("wait before attempt %d: %v, want %v", i+1, gap, want)
		}
		base := webhooks.RetrySchedule()[i-1]
		if gap < base || gap >= base+base/10+time.Nanosecond {
			t.Fatalf("wait before attempt %d: %v outside [%v, +10%%)", i+1, gap, base)
		}
		if log.attempts[i-1].NextDelay != want {
			t.Fatalf("attempt %d was told the next attempt comes after %v, want %v", i, log.attempts[i-1].NextDelay, want)
		}
	}
	if last := log.attempts[len(log.attempts)-1]; last.Attempt != webhooks.MaxAttempts || last.NextDelay != 0 {
		t.Fatalf("the last attempt has no next one: %+v", last)
	}
	if span := log.times[len(log.times)-1].Sub(log.times[0]); span < 24*time.Hour {
		t.Fatalf("retries span %v, want at least 24h", span)
	}
	if len(log.finishes) != 1 || log.finishes[0].Status != eventlog.DeliveryFailed || log.finishes[0].Delivery.DeliveryID != deliveryInput.DeliveryID {
		t.Fatalf("the final failure must be recorded once: %+v", log.finishes)
	}
}

func TestWebhookDeliverySucceedsOnALaterRetry(t *testing.T) {
	env, log := deliveryEnv(t, ready, func(n int) (*workflows.WebhookAttemptResult, error) {
		switch n {
		case 1:
			return &workflows.WebhookAttemptResult{StatusCode: 500, Error: "non-2xx response: HTTP 500"}, nil
		case 2:
			return &workflows.WebhookAttemptResult{Error: "timeout: no complete response within 10s"}, nil
		}
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 204}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliverySucceeded || res.Attempts != 3 || len(log.attempts) != 3 || len(log.finishes) != 0 {
		t.Fatalf("%+v %d %+v", res, len(log.attempts), log.finishes)
	}
	seed := webhooks.JitterSeed(deliveryInput.DeliveryID)
	if got := log.times[2].Sub(log.times[0]); got != webhooks.RetryDelay(1, seed)+webhooks.RetryDelay(2, seed) {
		t.Fatalf("third attempt after %v", got)
	}
}

func TestWebhookDeliveryStopsWhenTheSubscriptionIsPaused(t *testing.T) {
	env, log := deliveryEnv(t, ready, func(n int) (*workflows.WebhookAttemptResult, error) {
		if n == 1 {
			return failing(n)
		}
		return &workflows.WebhookAttemptResult{Stop: true, Status: eventlog.DeliveryCancelled, Error: "the subscription was paused"}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliveryCancelled || len(log.attempts) != 2 || len(log.finishes) != 0 {
		t.Fatalf("%+v %d %+v", res, len(log.attempts), log.finishes)
	}
}

func TestWebhookDeliveryWaitsForEarlierEventsOfTheResource(t *testing.T) {
	env, log := deliveryEnv(t, func(i int) (*workflows.WebhookPrepareResult, error) {
		return &workflows.WebhookPrepareResult{Ready: i >= 3}, nil
	}, func(int) (*workflows.WebhookAttemptResult, error) {
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 200}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliverySucceeded || len(log.prepares) != 4 {
		t.Fatalf("%+v after %d checks", res, len(log.prepares))
	}
	// Pauses of 100, 200 and 400 ms between the checks (growing from
	// WebhookOrderWaitFirst).
	if got := log.times[0].Sub(log.prepares[0]); got != 7*workflows.WebhookOrderWaitFirst {
		t.Fatalf("first attempt after %v", got)
	}
	for i := 1; i < len(log.prepares); i++ {
		if gap, want := log.prepares[i].Sub(log.prepares[i-1]), workflows.WebhookOrderWaitFirst<<(i-1); gap != want {
			t.Fatalf("check %d after %v, want %v", i+1, gap, want)
		}
	}
}

// TestWebhookDeliveryRunsItsActivitiesLocally checks that Prepare and
// Attempt run as local activities (no activity task on the server) and
// Finish as an ordinary one.
func TestWebhookDeliveryRunsItsActivitiesLocally(t *testing.T) {
	env, log := deliveryEnv(t, ready, func(n int) (*workflows.WebhookAttemptResult, error) {
		if n == 1 {
			return failing(n)
		}
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 200}, nil
	})
	var mu sync.Mutex
	local := 0
	env.SetOnLocalActivityStartedListener(func(*activity.Info, context.Context, []any) {
		mu.Lock()
		local++
		mu.Unlock()
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliverySucceeded || res.Attempts != 2 || len(log.prepares) != 1 || len(log.attempts) != 2 {
		t.Fatalf("%+v: %d checks, %d attempts", res, len(log.prepares), len(log.attempts))
	}
	if local != 3 {
		t.Fatalf("%d local activities, want 3 (one check, two attempts)", local)
	}
}

func TestWebhookDeliveryDoesNotWaitForeverForOrder(t *testing.T) {
	env, log := deliveryEnv(t, func(int) (*workflows.WebhookPrepareResult, error) {
		return &workflows.WebhookPrepareResult{}, nil
	}, func(int) (*workflows.WebhookAttemptResult, error) {
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 200}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	if res := deliveryResult(t, env); res.Status != eventlog.DeliverySucceeded || len(log.prepares) < 2 {
		t.Fatalf("%+v after %d checks", res, len(log.prepares))
	}
	// It goes after waiting WebhookOrderWaitMax in all (the pauses grow to
	// WebhookOrderWaitInterval).
	if got := log.times[0].Sub(log.prepares[0]); got < workflows.WebhookOrderWaitMax || got >= workflows.WebhookOrderWaitMax+workflows.WebhookOrderWaitInterval {
		t.Fatalf("first attempt after %v, want %v", got, workflows.WebhookOrderWaitMax)
	}
}

func TestWebhookDeliveryThatAlreadyEnded(t *testing.T) {
	env, log := deliveryEnv(t, func(int) (*workflows.WebhookPrepareResult, error) {
		return &workflows.WebhookPrepareResult{Stop: true, Status: eventlog.DeliverySucceeded}, nil
	}, failing)
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	if res := deliveryResult(t, env); res.Status != eventlog.DeliverySucceeded || len(log.attempts) != 0 {
		t.Fatalf("a restarted workflow of an ended delivery must not send: %+v %d", res, len(log.attempts))
	}
}

func TestWebhookDeliveryCustomScheduleAndActivityErrors(t *testing.T) {
	in := deliveryInput
	in.RetryDelays = []time.Duration{time.Second, 2 * time.Second}
	env, log := deliveryEnv(t, func(int) (*workflows.WebhookPrepareResult, error) {
		return nil, temporal.NewNonRetryableApplicationError("database down", "INTERNAL_ERROR", errors.New("down"))
	}, func(n int) (*workflows.WebhookAttemptResult, error) {
		if n == 2 {
			return nil, temporal.NewNonRetryableApplicationError("database down", "INTERNAL_ERROR", errors.New("down"))
		}
		return failing(n)
	})
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, in)
	res := deliveryResult(t, env)
	if res.Status != eventlog.DeliveryFailed || len(log.attempts) != 3 || len(log.finishes) != 1 {
		t.Fatalf("%+v %d %+v", res, len(log.attempts), log.finishes)
	}
	if log.times[1].Sub(log.times[0]) != time.Second || log.times[2].Sub(log.times[1]) != 2*time.Second {
		t.Fatalf("custom schedule not followed: %v", log.times)
	}
}

func TestWebhookDeliveryCancelled(t *testing.T) {
	env, log := deliveryEnv(t, ready, failing)
	env.RegisterDelayedCallback(func() { env.CancelWorkflow() }, time.Minute)
	env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want cancellation", err)
	}
	if len(log.finishes) != 1 || log.finishes[0].Status != eventlog.DeliveryCancelled {
		t.Fatalf("a cancelled workflow cancels its delivery: %+v", log.finishes)
	}
}
