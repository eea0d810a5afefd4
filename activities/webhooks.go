package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// Webhooks holds the dependencies of the delivery activities, registered by
// worker.RegisterActivities under the names "Webhooks.<Method>"
// (workflows.WebhooksActivities). Every
// attempt is stored once under its number, so a retried activity never
// records (nor, once recorded, sends) an attempt twice.
type Webhooks struct {
	store    *models.Store
	eventlog *eventlog.Store
	support  *support.Store
	client   *webhooks.Client
	log      *slog.Logger
	now      func() time.Time
	baseURL  string
	metrics  *metrics.Metrics // nil: nothing counted
}

// WebhooksOption configures the delivery activities.
type WebhooksOption func(*Webhooks)

// WithPublicBaseURL sets the public base URL of the API (PUBLIC_BASE_URL),
// under which chat messages link tickets.
func WithPublicBaseURL(u string) WebhooksOption {
	return func(a *Webhooks) { a.baseURL = u }
}

// WithWebhookMetrics counts every recorded delivery attempt in m.
func WithWebhookMetrics(m *metrics.Metrics) WebhooksOption {
	return func(a *Webhooks) { a.metrics = m }
}

// NewWebhooks returns the delivery activities over store, sending with
// client (which applies the SSRF guard at connection time).
func NewWebhooks(store *models.Store, client *webhooks.Client, log *slog.Logger, opts ...WebhooksOption) *Webhooks {
	if log == nil {
		log = slog.Default()
	}
	a := &Webhooks{store: store, eventlog: eventlog.NewStore(store), support: support.NewStore(store), client: client, log: log,
		now: func() time.Time { return time.Now().UTC() }}
	for _, o := range opts {
		o(a)
	}
	return a
}

// activityError converts a store failure for Temporal: ApplicationError
// with RetryAll (retried unless it is a context error: the activity was
// cancelled or timed out).
func activityError(err error) error {
	return ApplicationError(err, RetryAll)
}

// Prepare says whether a delivery may make its first attempt (the ordering
// rule of models.Store.DeliveryReady) or has already ended (a missing row
// counts as cancelled).
func (a *Webhooks) Prepare(ctx context.Context, in workflows.WebhookDeliveryInput) (*workflows.WebhookPrepareResult, error) {
	scope := in.Scope()
	d, err := a.eventlog.DeliveryIn(ctx, scope, in.DeliveryID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return &workflows.WebhookPrepareResult{Stop: true, Status: eventlog.DeliveryCancelled}, nil
	}
	if err != nil {
		return nil, activityError(err)
	}
	if d.Status.Terminal() {
		return &workflows.WebhookPrepareResult{Stop: true, Status: d.Status}, nil
	}
	ready, err := a.eventlog.DeliveryReady(ctx, scope, d)
	if err != nil {
		return nil, activityError(err)
	}
	return &workflows.WebhookPrepareResult{Ready: ready}, nil
}

// stop ends a delivery as cancelled and returns the Stop result.
func (a *Webhooks) stop(ctx context.Context, scope models.Scope, d *eventlog.WebhookDelivery, reason string) (*workflows.WebhookAttemptResult, error) {
	if err := a.eventlog.FinishDelivery(ctx, scope, d.ID, eventlog.DeliveryCancelled, reason); err != nil {
		return nil, activityError(err)
	}
	a.log.InfoContext(ctx, "webhook delivery cancelled", "delivery_id", d.ID, "reason", reason)
	return &workflows.WebhookAttemptResult{Stop: true, Status: eventlog.DeliveryCancelled, Error: reason}, nil
}

// Attempt makes attempt number in.Attempt of a delivery, once (a delivery
// of kind chat goes to a support chat integration: attemptChat): it loads the
// subscription (stopping when it was deleted or paused, tests excepted)
// and the event, signs the body with the subscription's active secrets
// (both during a rotation's overlap), POSTs it through the SSRF-guarded
// client (10 s; redirects not followed) and stores the attempt with the
// delivery's new state in one transaction. If the attempt was already
// stored (a retried activity), it returns the stored outcome without
// sending again.
func (a *Webhooks) Attempt(ctx context.Context, in workflows.WebhookAttemptInput) (*workflows.WebhookAttemptResult, error) {
	scope := in.Delivery.Scope()
	d, err := a.eventlog.DeliveryIn(ctx, scope, in.Delivery.DeliveryID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return &workflows.WebhookAttemptResult{Stop: true, Status: eventlog.DeliveryCancelled}, nil
	}
	if err != nil {
		return nil, activityError(err)
	}
	prev, err := a.eventlog.AttemptOf(ctx, scope, d.ID, in.Attempt)
	if err != nil {
		return nil, activityError(err)
	}
	if prev != nil {
		return &workflows.WebhookAttemptResult{Success: prev.Success, StatusCode: prev.StatusCode, Error: prev.Error}, nil
	}
	if d.Status.Terminal() {
		return &workflows.WebhookAttemptResult{Stop: true, Status: d.Status}, nil
	}
	if d.Kind == eventlog.DeliveryToChat {
		return a.attemptChat(ctx, in, d)
	}
	sub, err := a.eventlog.WebhookIn(ctx, scope, d.SubscriptionID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return a.stop(ctx, scope, d, "the subscription was deleted")
	}
	if err != nil {
		return nil, activityError(err)
	}
	if !sub.Active && d.Reason != eventlog.DeliveryTest {
		return a.stop(ctx, scope, d, "the subscription was paused")
	}
	ev, err := a.eventlog.EventByID(ctx, d.EventID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return a.stop(ctx, scope, d, "the event no longer exists")
	}
	if err != nil {
		return nil, activityError(err)
	}
	if !eventlog.SubscriptionMayReceive(sub, ev) {
		return a.stop(ctx, scope, d, "the event belongs to another organization")
	}
	current, previous, err := a.eventlog.WebhookSecrets(sub)
	if err != nil {
		return nil, activityError(err)
	}
	body, err := events.Body(ev, sub)
	if err != nil {
		return a.stop(ctx, scope, d, "the event cannot be encoded: "+models.AsError(err).Message)
	}
	now := a.now()
	var rotatedAt time.Time
	if sub.SecretRotatedAt != nil {
		rotatedAt = *sub.SecretRotatedAt
	}
	out := a.client.Deliver(ctx, sub.URL, webhooks.ActiveSecrets(current, previous, rotatedAt, now), ev.ID, now, body)
	return a.record(ctx, scope, d, in, now, out)
}

// record stores the outcome of attempt in.Attempt of delivery d, made at
// now, with the delivery's new state (the next attempt's time when it
// failed and one follows), and returns it as the activity's result.
func (a *Webhooks) record(ctx context.Context, scope models.Scope, d *eventlog.WebhookDelivery, in workflows.WebhookAttemptInput, now time.Time, out webhooks.Attempt) (*workflows.WebhookAttemptResult, error) {
	var next *time.Time
	if !out.Success && in.NextDelay > 0 {
		t := now.Add(in.NextDelay)
		next = &t
	}
	att := &eventlog.WebhookAttempt{
		DeliveryID: d.ID, Number: in.Attempt, AttemptedAt: now, StatusCode: out.StatusCode, LatencyMs: out.Latency.Milliseconds(),
		Success: out.Success, Error: out.Error, ResponseBody: out.ResponseBodyPrefix,
	}
	if _, err := a.eventlog.RecordDeliveryAttempt(ctx, scope, att, next); err != nil {
		return nil, activityError(err)
	}
	a.metrics.WebhookAttempt(out.Success, in.Attempt)
	a.log.InfoContext(ctx, "webhook delivery attempt", "delivery_id", d.ID, "kind", d.Kind, "event_id", d.EventID, "attempt", in.Attempt,
		"success", out.Success, "status_code", out.StatusCode, "error", out.Error)
	return &workflows.WebhookAttemptResult{Success: out.Success, StatusCode: out.StatusCode, Error: out.Error}, nil
}

// Finish ends a pending delivery (failed after the last attempt, or
// cancelled with its workflow); a delivery that already ended is left as
// it is.
func (a *Webhooks) Finish(ctx context.Context, in workflows.WebhookFinishInput) error {
	return activityError(a.eventlog.FinishDelivery(ctx, in.Delivery.Scope(), in.Delivery.DeliveryID, in.Status, in.Reason))
}
