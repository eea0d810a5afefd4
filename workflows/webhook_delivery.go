package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
)

// WebhookDeliveryWorkflow is the registered name of the delivery workflow.
const WebhookDeliveryWorkflow = "WebhookDelivery"

// OperationTypeWebhookDelivery is the OperationType search attribute of
// delivery workflows.
const OperationTypeWebhookDelivery = "webhook_delivery"

// Ordering: before its first attempt, a delivery waits while an earlier
// event of the same resource for the same subscription has not been
// attempted yet. Since version webhookLocalVersion it checks after
// WebhookOrderWaitFirst, then after twice the previous pause up to
// WebhookOrderWaitInterval, until it has waited WebhookOrderWaitMax (then
// it goes anyway). Workflows started before that version check every
// WebhookOrderWaitInterval, at most WebhookOrderWaitChecks times.
const (
	WebhookOrderWaitFirst    = 100 * time.Millisecond
	WebhookOrderWaitInterval = time.Second
	WebhookOrderWaitChecks   = 60
	WebhookOrderWaitMax      = WebhookOrderWaitChecks * WebhookOrderWaitInterval
)

// Versions of the delivery workflow (workflow.GetVersion).
const (
	// webhookLocalChange is the change id of webhookLocalVersion.
	webhookLocalChange = "webhook-local-activities"
	// webhookLocalVersion runs Prepare and Attempt as local activities (a
	// delivery that succeeds at once is one workflow task, no activity
	// task) and checks the ordering with growing pauses from
	// WebhookOrderWaitFirst.
	webhookLocalVersion = 1
)

// WebhookDeliveryInput is the one argument of the delivery workflow: the
// delivery row (whose id is the workflow id) and its tenant, plus an
// optional retry schedule (tests; empty means webhooks.RetryDelay).
type WebhookDeliveryInput struct {
	DeliveryID     string             `json:"delivery_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	RetryDelays    []time.Duration    `json:"retry_delays,omitempty"`
}

// Scope returns the tenant scope of the delivery row.
func (in WebhookDeliveryInput) Scope() models.Scope {
	return models.TenantScope(in.OrganizationID, in.Environment)
}

// MaxAttempts returns how many attempts the delivery makes in all.
func (in WebhookDeliveryInput) MaxAttempts() int {
	if len(in.RetryDelays) > 0 {
		return len(in.RetryDelays) + 1
	}
	return webhooks.MaxAttempts
}

// DelayAfter returns the wait after attempt number attempt (1-based)
// failed: the input's schedule, or webhooks.RetryDelay with a jitter seeded
// by the delivery id. It is deterministic.
func (in WebhookDeliveryInput) DelayAfter(attempt int) time.Duration {
	if len(in.RetryDelays) > 0 {
		if attempt < 1 || attempt > len(in.RetryDelays) {
			return 0
		}
		return in.RetryDelays[attempt-1]
	}
	return webhooks.RetryDelay(attempt, webhooks.JitterSeed(in.DeliveryID))
}

// WebhookPrepareResult says whether a delivery may make its first attempt
// (Ready) or has nothing left to do (Stop, with the delivery's Status).
type WebhookPrepareResult struct {
	Ready  bool                    `json:"ready"`
	Stop   bool                    `json:"stop"`
	Status eventlog.DeliveryStatus `json:"status,omitempty"`
}

// WebhookAttemptInput asks for attempt number Attempt of a delivery;
// NextDelay is the wait before the next attempt should this one fail (0
// for the last attempt).
type WebhookAttemptInput struct {
	Delivery  WebhookDeliveryInput `json:"delivery"`
	Attempt   int                  `json:"attempt"`
	NextDelay time.Duration        `json:"next_delay"`
}

// WebhookAttemptResult is the outcome of one attempt: Success (a 2xx), or
// Stop when the delivery must not continue (subscription paused or
// deleted, delivery already ended), with the delivery's Status.
type WebhookAttemptResult struct {
	Success    bool                    `json:"success"`
	Stop       bool                    `json:"stop"`
	Status     eventlog.DeliveryStatus `json:"status,omitempty"`
	StatusCode int                     `json:"status_code"`
	Error      string                  `json:"error,omitempty"`
}

// WebhookFinishInput ends a pending delivery with Status and Reason.
type WebhookFinishInput struct {
	Delivery WebhookDeliveryInput    `json:"delivery"`
	Status   eventlog.DeliveryStatus `json:"status"`
	Reason   string                  `json:"reason"`
}

// WebhookDeliveryResult is how a delivery ended and after how many attempts.
type WebhookDeliveryResult struct {
	Status   eventlog.DeliveryStatus `json:"status"`
	Attempts int                     `json:"attempts"`
}

// WebhookActivityOptions are the options of the delivery activities. An
// attempt's HTTP failure is a result, not an activity error; activity
// errors are infrastructure failures (database), retried for up to an hour.
func WebhookActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		},
	}
}

// WebhookLocalActivityOptions are the options of the delivery activities
// run as local activities (webhookLocalVersion): those of
// WebhookActivityOptions.
func WebhookLocalActivityOptions() workflow.LocalActivityOptions {
	o := WebhookActivityOptions()
	return workflow.LocalActivityOptions{StartToCloseTimeout: o.StartToCloseTimeout, ScheduleToCloseTimeout: o.ScheduleToCloseTimeout, RetryPolicy: o.RetryPolicy}
}

// WebhookDelivery delivers one event to one subscription: it waits for the
// earlier events of the same resource (see WebhookOrderWaitMax), then
// attempts the delivery, sleeping DelayAfter(n) after each failed attempt,
// until one succeeds, the subscription is paused or deleted (the activity
// says stop), or the last attempt fails, after which the delivery is marked
// failed. A cancelled workflow marks its delivery cancelled. It returns how
// the delivery ended; it fails only when cancelled.
func WebhookDelivery(ctx workflow.Context, in WebhookDeliveryInput) (*WebhookDeliveryResult, error) {
	log := workflow.GetLogger(ctx)
	actx := workflow.WithActivityOptions(ctx, WebhookActivityOptions())

	finish := func(status eventlog.DeliveryStatus, reason string) {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dctx = workflow.WithActivityOptions(dctx, WebhookActivityOptions())
		dctx = summarized(dctx, fmt.Sprintf("record delivery %s %s", in.DeliveryID, status))
		if err := execute(dctx, WebhooksActivities.Finish, WebhookFinishInput{Delivery: in, Status: status, Reason: reason}).Get(dctx, nil); err != nil {
			log.Error("recording the end of a delivery failed", "delivery_id", in.DeliveryID, "error", err)
		}
	}
	cancelled := func(err error) bool {
		return temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled)
	}

	local := workflow.GetVersion(ctx, webhookLocalChange, workflow.DefaultVersion, webhookLocalVersion) >= webhookLocalVersion
	lctx := workflow.WithLocalActivityOptions(ctx, WebhookLocalActivityOptions())
	subject := fmt.Sprintf("delivery %s for %s (%s)", in.DeliveryID, in.OrganizationID, in.Environment)
	prepare := func() workflow.Future {
		what := "prepare " + subject
		if local {
			return callLocal(summarizedLocal(lctx, what), WebhooksActivities.Prepare, in)
		}
		return call(summarized(actx, what), WebhooksActivities.Prepare, in)
	}
	send := func(a WebhookAttemptInput) workflow.Future {
		what := fmt.Sprintf("attempt %d of %d: %s", a.Attempt, in.MaxAttempts(), subject)
		if local {
			return callLocal(summarizedLocal(lctx, what), WebhooksActivities.Attempt, a)
		}
		return call(summarized(actx, what), WebhooksActivities.Attempt, a)
	}

	pause, waited := WebhookOrderWaitInterval, time.Duration(0)
	if local {
		pause = WebhookOrderWaitFirst
	}
	for i := 0; ; i++ {
		if (local && waited >= WebhookOrderWaitMax) || (!local && i >= WebhookOrderWaitChecks) {
			break
		}
		var prep WebhookPrepareResult
		if err := prepare().Get(ctx, &prep); err != nil {
			if cancelled(err) {
				finish(eventlog.DeliveryCancelled, "the delivery workflow was cancelled")
				return nil, err
			}
			log.Warn("preparing a delivery failed; attempting it anyway", "delivery_id", in.DeliveryID, "error", err)
			break
		}
		if prep.Stop {
			return &WebhookDeliveryResult{Status: prep.Status}, nil
		}
		if prep.Ready {
			break
		}
		if err := workflow.Sleep(ctx, pause); err != nil {
			finish(eventlog.DeliveryCancelled, "the delivery workflow was cancelled")
			return nil, err
		}
		waited += pause
		if local {
			pause = min(2*pause, WebhookOrderWaitInterval)
		}
	}

	last := in.MaxAttempts()
	for attempt := 1; attempt <= last; attempt++ {
		next := time.Duration(0)
		if attempt < last {
			next = in.DelayAfter(attempt)
		}
		var res WebhookAttemptResult
		err := send(WebhookAttemptInput{Delivery: in, Attempt: attempt, NextDelay: next}).Get(ctx, &res)
		switch {
		case err != nil && cancelled(err):
			finish(eventlog.DeliveryCancelled, "the delivery workflow was cancelled")
			return nil, err
		case err != nil:
			// The attempt could not be made or recorded for an hour: it
			// counts as a failed attempt.
			log.Error("a delivery attempt failed to run", "delivery_id", in.DeliveryID, "attempt", attempt, "error", err)
		case res.Success:
			return &WebhookDeliveryResult{Status: eventlog.DeliverySucceeded, Attempts: attempt}, nil
		case res.Stop:
			return &WebhookDeliveryResult{Status: res.Status, Attempts: attempt - 1}, nil
		}
		if attempt == last {
			break
		}
		if err := workflow.Sleep(ctx, next); err != nil {
			finish(eventlog.DeliveryCancelled, "the delivery workflow was cancelled")
			return nil, err
		}
	}
	finish(eventlog.DeliveryFailed, "every attempt failed")
	return &WebhookDeliveryResult{Status: eventlog.DeliveryFailed, Attempts: last}, nil
}
