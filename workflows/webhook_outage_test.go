package workflows_test

import (
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// TestWebhookDeliveryOutlivesADayLongOutage has the receiver down (every
// attempt refused) for a simulated day, with time skipping: the delivery
// keeps retrying on its schedule and succeeds on the first attempt after
// the receiver is back, once, without being given up.
func TestWebhookDeliveryOutlivesADayLongOutage(t *testing.T) {
	const outage = 24 * time.Hour
	var began time.Time
	var env interface{ Now() time.Time }
	e, log := deliveryEnv(t, ready, func(n int) (*workflows.WebhookAttemptResult, error) {
		if n == 1 {
			began = env.Now()
		}
		if env.Now().Sub(began) < outage {
			return &workflows.WebhookAttemptResult{Error: "connection refused"}, nil
		}
		return &workflows.WebhookAttemptResult{Success: true, StatusCode: 204}, nil
	})
	env = e
	e.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, deliveryInput)
	res := deliveryResult(t, e)
	if res.Status != eventlog.DeliverySucceeded || len(log.finishes) != 0 {
		t.Fatalf("%+v after %d attempts, finishes %+v", res, len(log.attempts), log.finishes)
	}
	last := log.times[len(log.times)-1]
	before := log.times[len(log.times)-2]
	if last.Sub(began) < outage || before.Sub(began) >= outage {
		t.Fatalf("the successful attempt came %v after the first, the one before it %v; the outage lasted %v", last.Sub(began), before.Sub(began), outage)
	}
	if res.Attempts >= webhooks.MaxAttempts || res.Attempts != len(log.attempts) {
		t.Fatalf("%d attempts (%d recorded) for a day-long outage; the schedule allows %d", res.Attempts, len(log.attempts), webhooks.MaxAttempts)
	}
	// Delivered at most one retry interval (3 h plus jitter) after the receiver came back.
	if late := last.Sub(began) - outage; late > 3*time.Hour+18*time.Minute {
		t.Fatalf("delivered %v after the receiver came back", late)
	}
	t.Logf("receiver down %v: delivered on attempt %d, %v after the first attempt", outage, res.Attempts, last.Sub(began))
}
