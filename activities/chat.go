package activities

import (
	"context"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// attemptChat makes attempt number in.Attempt of a delivery of kind chat:
// it loads the chat integration (stopping when it was deleted or paused,
// tests excepted) and the event, renders the integration's message, POSTs
// it unsigned through the SSRF-guarded client with the event id as
// webhook-id, and stores the attempt with the delivery's new state.
// Attempt has already returned the stored outcome of an attempt made
// before, so a retried activity never sends twice.
func (a *Webhooks) attemptChat(ctx context.Context, in workflows.WebhookAttemptInput, d *eventlog.WebhookDelivery) (*workflows.WebhookAttemptResult, error) {
	scope := in.Delivery.Scope()
	c, err := a.support.ChatIntegrationIn(ctx, scope, d.SubscriptionID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return a.stop(ctx, scope, d, "the chat integration was deleted")
	}
	if err != nil {
		return nil, activityError(err)
	}
	if !c.Active && d.Reason != eventlog.DeliveryTest {
		return a.stop(ctx, scope, d, "the chat integration was paused")
	}
	ev, err := a.eventlog.EventByID(ctx, d.EventID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return a.stop(ctx, scope, d, "the event no longer exists")
	}
	if err != nil {
		return nil, activityError(err)
	}
	if ev.OrganizationID != c.OrganizationID || ev.Environment != c.Environment {
		return a.stop(ctx, scope, d, "the event belongs to another organization")
	}
	now := a.now()
	body, err := support.ChatMessageBody(c, ev.Type, ev.Data, a.baseURL, now)
	if err != nil {
		return a.stop(ctx, scope, d, "the message cannot be encoded: "+models.AsError(err).Message)
	}
	out := a.client.Post(ctx, c.WebhookURL, ev.ID, body)
	return a.record(ctx, scope, d, in, now, out)
}
