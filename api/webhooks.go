package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/webhooks"
)

// WebhookFiltersBody are a support subscription's filters.
type WebhookFiltersBody struct {
	CustomerIDs []string `json:"customer_ids,omitempty" maxItems:"100" doc:"Only events about these customers (the event's customer_id)"`
	Priorities  []string `json:"priorities,omitempty" maxItems:"4" doc:"Only events with these priorities: low, medium, high, critical"`
}

func (f *WebhookFiltersBody) filters() *eventlog.WebhookFilters {
	if f == nil {
		return nil
	}
	return &eventlog.WebhookFilters{CustomerIDs: f.CustomerIDs, Priorities: f.Priorities}
}

// WebhookCreateBody is the body of every subscription POST.
type WebhookCreateBody struct {
	URL              string              `json:"url" required:"true" minLength:"1" maxLength:"2000" example:"https://hooks.example.com/platform" doc:"Required: an http(s) URL whose host resolves to public addresses only"`
	Events           []string            `json:"events" required:"true" minItems:"1" maxItems:"50" example:"[\"service.provisioned\",\"invoice.*\"]" doc:"Required: event names, aliases or group patterns (service.*); * for every event on /v1/webhooks only; the area endpoints (/v1/services/webhooks, /v1/billing/webhooks, /v1/support/webhooks) take their area's events only"`
	Secret           string              `json:"secret,omitempty" maxLength:"200" example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" doc:"whsec_ + base64 of 24 to 64 bytes; generated (and shown once) when absent"`
	Filters          *WebhookFiltersBody `json:"filters,omitempty" doc:"Support events only (ticket.*, comment.*, sla.*, report.*)"`
	Active           *bool               `json:"active,omitempty" doc:"false creates the subscription paused (default true)"`
	Description      string              `json:"description,omitempty" maxLength:"500"`
	AllOrganizations bool                `json:"all_organizations,omitempty" doc:"Provider staff only: receive the events of every organization of this environment"`
}

func (b *WebhookCreateBody) input() events.SubscriptionInput {
	return events.SubscriptionInput{
		URL: b.URL, Description: b.Description, Events: b.Events, Filters: b.Filters.filters(), Secret: b.Secret,
		Active: b.Active, AllOrganizations: b.AllOrganizations,
	}
}

// WebhookPatchBody changes a subscription; absent fields stay as they are.
type WebhookPatchBody struct {
	URL         *string             `json:"url,omitempty" maxLength:"2000"`
	Events      []string            `json:"events,omitempty" maxItems:"50" doc:"Replaces the list; must stay within the subscription's area"`
	Filters     *WebhookFiltersBody `json:"filters,omitempty" doc:"Replaces the filters ({} removes them)"`
	Active      *bool               `json:"active,omitempty" doc:"false pauses (pending deliveries are cancelled), true resumes"`
	Description *string             `json:"description,omitempty" maxLength:"500"`
}

// WebhookFiltersItem are a subscription's filters.
type WebhookFiltersItem struct {
	CustomerIDs []string `json:"customer_ids"`
	Priorities  []string `json:"priorities"`
}

// WebhookItem is a webhook subscription.
type WebhookItem struct {
	ID                      string             `json:"id" example:"wh_3fK9aZ"`
	URL                     string             `json:"url"`
	Description             string             `json:"description,omitempty"`
	Area                    string             `json:"area" enum:"all,services,billing,support" doc:"The endpoint it was created through, which bounds its events"`
	Events                  []string           `json:"events"`
	Filters                 WebhookFiltersItem `json:"filters"`
	Active                  bool               `json:"active"`
	AllOrganizations        bool               `json:"all_organizations"`
	Secret                  string             `json:"secret,omitempty" doc:"Shown only on creation and rotation"`
	SecretRotatedAt         *string            `json:"secret_rotated_at"`
	PreviousSecretExpiresAt *string            `json:"previous_secret_expires_at" doc:"Until then the previous secret signs deliveries too"`
	CreatedAt               string             `json:"created_at"`
	UpdatedAt               string             `json:"updated_at"`
}

func (s *Server) webhookItem(sub *eventlog.WebhookSubscription) WebhookItem {
	it := WebhookItem{
		ID: sub.ID, URL: sub.URL, Description: sub.Description, Area: sub.Area, Events: nonNil(sub.Events),
		Filters: WebhookFiltersItem{CustomerIDs: nonNil(sub.CustomerIDs), Priorities: nonNil(sub.Priorities)},
		Active:  sub.Active, AllOrganizations: sub.AllOrganizations, SecretRotatedAt: optTimestamp(sub.SecretRotatedAt),
		CreatedAt: models.Timestamp(sub.CreatedAt), UpdatedAt: models.Timestamp(sub.UpdatedAt),
	}
	if sub.SecretRotatedAt != nil && sub.PreviousSecret != "" {
		if until := sub.SecretRotatedAt.Add(webhooks.RotationOverlap); until.After(s.now()) {
			it.PreviousSecretExpiresAt = optTimestamp(&until)
		}
	}
	return it
}

// WebhookOutput wraps one subscription.
type WebhookOutput struct {
	Status int
	Body   struct {
		Envelope
		Webhook WebhookItem `json:"webhook"`
	}
}

// WebhooksOutput lists subscriptions.
type WebhooksOutput struct {
	Body struct {
		Envelope
		Webhooks   []WebhookItem `json:"webhooks"`
		Pagination Pagination    `json:"pagination"`
	}
}

// DeliveryAttemptItem is one attempt of a delivery.
type DeliveryAttemptItem struct {
	Number       int    `json:"number"`
	AttemptedAt  string `json:"attempted_at"`
	StatusCode   *int   `json:"status_code" doc:"The receiver's HTTP status; null when no response arrived"`
	LatencyMs    int64  `json:"latency_ms"`
	Success      bool   `json:"success"`
	Error        string `json:"error,omitempty"`
	ResponseBody string `json:"response_body,omitempty" doc:"The first 1 KiB of the receiver's response"`
}

// DeliveryItem is one delivery of an event to a subscription.
type DeliveryItem struct {
	ID            string                `json:"id" example:"whd_3fK9aZ" doc:"Also the id of its Temporal workflow"`
	WebhookID     string                `json:"webhook_id"`
	EventID       string                `json:"event_id"`
	EventType     string                `json:"event_type"`
	ResourceID    string                `json:"resource_id"`
	Reason        string                `json:"reason" enum:"event,redelivery,test"`
	Generation    int                   `json:"generation" doc:"1 for the dispatcher's delivery, 2 and up for redeliveries"`
	Status        string                `json:"status" enum:"pending,succeeded,failed,cancelled"`
	StatusReason  string                `json:"status_reason,omitempty"`
	AttemptCount  int                   `json:"attempt_count"`
	NextAttemptAt *string               `json:"next_attempt_at"`
	Attempts      []DeliveryAttemptItem `json:"attempts"`
	CreatedAt     string                `json:"created_at"`
	CompletedAt   *string               `json:"completed_at"`
}

func deliveryItem(d *eventlog.WebhookDelivery, atts []eventlog.WebhookAttempt) DeliveryItem {
	it := DeliveryItem{
		ID: d.ID, WebhookID: d.SubscriptionID, EventID: d.EventID, EventType: d.EventType, ResourceID: d.ResourceID,
		Reason: string(d.Reason), Generation: d.Generation, Status: string(d.Status), StatusReason: d.StatusReason,
		AttemptCount: d.Attempts, NextAttemptAt: optTimestamp(d.NextAttemptAt), Attempts: []DeliveryAttemptItem{},
		CreatedAt: models.Timestamp(d.CreatedAt), CompletedAt: optTimestamp(d.CompletedAt),
	}
	for _, a := range atts {
		var code *int
		if a.StatusCode != 0 {
			c := a.StatusCode
			code = &c
		}
		it.Attempts = append(it.Attempts, DeliveryAttemptItem{
			Number: a.Number, AttemptedAt: models.Timestamp(a.AttemptedAt), StatusCode: code, LatencyMs: a.LatencyMs,
			Success: a.Success, Error: a.Error, ResponseBody: a.ResponseBody,
		})
	}
	return it
}

// DeliveriesOutput lists deliveries.
type DeliveriesOutput struct {
	Body struct {
		Envelope
		Deliveries []DeliveryItem `json:"deliveries"`
		Pagination Pagination     `json:"pagination"`
	}
}

// DeliveryOutput is one delivery that was just created.
type DeliveryOutput struct {
	Status int
	Body   struct {
		Envelope
		Delivery DeliveryItem `json:"delivery"`
	}
}

// EventTypeGroup lists the events of one area.
type EventTypeGroup struct {
	Area     string   `json:"area" enum:"services,billing,support,analytics" doc:"analytics has no endpoint of its own: subscribe to its events through /v1/webhooks"`
	Patterns []string `json:"patterns" doc:"Group patterns this area's endpoint accepts"`
	Events   []string `json:"events"`
}

// EventTypesOutput is the event catalogue.
type EventTypesOutput struct {
	Body struct {
		Envelope
		Areas   []EventTypeGroup  `json:"areas"`
		Aliases map[string]string `json:"aliases" doc:"Accepted in subscriptions; deliveries carry the canonical name"`
	}
}

type webhookPath struct {
	WebhookID string `path:"webhook_id" maxLength:"64" example:"wh_3fK9aZ"`
}

// dispatcher returns the event dispatcher used by requests (it starts the
// workflows of redeliveries and tests; the worker's dispatcher takes over
// whatever it could not start).
func (s *Server) dispatcher() *events.Dispatcher {
	return events.NewDispatcher(s.store, s.temporal, events.Options{TaskQueue: s.taskQueue(), Logger: s.log})
}

// subscriptionRules returns the subscription checks (SSRF guard per WEBHOOK_ALLOW_PRIVATE).
func (s *Server) subscriptionRules() *events.Subscriptions {
	return events.NewSubscriptions(s.cfg.WebhookAllowPrivate, nil)
}

// createWebhook checks and stores a subscription made through area.
// Every invalid field is named in one VALIDATION_ERROR: url, events[i],
// secret and filters, with the filters' own rules and customer_ids the
// caller may not see.
func (s *Server) createWebhook(ctx context.Context, area webhooks.Area, b *WebhookCreateBody) (*WebhookOutput, error) {
	var v models.Validator
	spec, err := s.subscriptionRules().Spec(ctx, area, b.input())
	if err := collectIssues(&v, err); err != nil {
		return nil, err
	}
	if err := s.checkWebhookFilters(ctx, principal(ctx), &v, b.Filters); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	sub, err := s.eventlog.CreateWebhook(ctx, principal(ctx), spec)
	if err != nil {
		return nil, err
	}
	out := &WebhookOutput{Status: http.StatusCreated}
	out.Body.Webhook = s.webhookItem(sub)
	out.Body.Webhook.Secret = spec.Secret
	return out, nil
}

// checkFilterCustomers checks the customer_ids of filters (nil: none)
// against what p may see (eventlog.CheckFilterCustomers).
func (s *Server) checkFilterCustomers(ctx context.Context, p *models.Principal, f *WebhookFiltersBody) error {
	if f == nil {
		return nil
	}
	return s.eventlog.CheckFilterCustomers(ctx, p, f.CustomerIDs)
}

// checkWebhookFilters checks filters (nil: none) into v: the entries of
// customer_ids (eventlog.CheckWebhookFilters) and, when they are well
// formed, that p may see each of them (eventlog.CheckFilterCustomers),
// then the priorities. It returns errors other than VALIDATION_ERROR.
func (s *Server) checkWebhookFilters(ctx context.Context, p *models.Principal, v *models.Validator, f *WebhookFiltersBody) error {
	if f == nil {
		return nil
	}
	var customers models.Validator
	eventlog.CheckWebhookFilters(&customers, eventlog.WebhookFilters{CustomerIDs: f.CustomerIDs})
	err := customers.Err()
	if err == nil {
		err = s.eventlog.CheckFilterCustomers(ctx, p, f.CustomerIDs)
	}
	if err := collectIssues(v, err); err != nil {
		return err
	}
	eventlog.CheckWebhookFilters(v, eventlog.WebhookFilters{Priorities: f.Priorities})
	return nil
}

// collectIssues adds the field issues of a VALIDATION_ERROR to v and
// returns nil; it returns any other error (and nil for nil) as it is.
func collectIssues(v *models.Validator, err error) error {
	if err == nil || models.ErrorCode(err) != models.CodeValidation {
		return err
	}
	fields, ok := models.AsError(err).Details["fields"].([]models.FieldIssue)
	if !ok {
		return err
	}
	for _, f := range fields {
		v.Add(f.Field, f.Issue)
	}
	return nil
}

// registerWebhooks registers the subscription endpoints. Call it before
// registerServices: /services/webhooks is a fixed /services/... path.
func (s *Server) registerWebhooks() {
	tags := []string{"Webhooks"}
	manage := access{permission: "webhooks:manage"}
	createDesc := "Creates a webhook subscription (a `wh_` resource, managed under /v1/webhooks/{webhook_id}). " +
		"The answer shows the signing secret once. Deliveries are signed with the Standard Webhooks scheme; see docs/webhooks.md."
	for _, area := range []struct {
		id, path, summary, what string
		area                    webhooks.Area
	}{
		{"create-services-webhook", "/services/webhooks", "Subscribe to service events", "Events: service.* only.", webhooks.AreaServices},
		{"create-billing-webhook", "/billing/webhooks", "Subscribe to billing events", "Events: invoice.*, payment.*, subscription.*, usage.* only (aliases invoice.generated, payment.received).", webhooks.AreaBilling},
		{"create-support-webhook", "/support/webhooks", "Subscribe to support events", "Events: ticket.*, comment.*, sla.*, report.* only; filters by customer_ids and priorities (which report events, about no ticket, never match). Tickets emit ticket.* and comment.added; their SLA clocks sla.breach and sla.credit_issued; report runs report.completed and report.failed.", webhooks.AreaSupport},
		{"create-webhook", "/webhooks", "Subscribe to events of every area", "Events of any area, group patterns such as invoice.*, or * for everything.", webhooks.AreaAll},
	} {
		register(s, huma.Operation{OperationID: area.id, Method: http.MethodPost, Path: area.path, Summary: area.summary,
			Tags: tags, DefaultStatus: http.StatusCreated, Description: createDesc + " " + area.what},
			manage, func(ctx context.Context, in *struct{ Body WebhookCreateBody }) (*WebhookOutput, error) {
				return s.createWebhook(ctx, area.area, &in.Body)
			})
	}
	register(s, huma.Operation{OperationID: "list-webhooks", Method: http.MethodGet, Path: "/webhooks", Summary: "List webhook subscriptions", Tags: tags},
		manage, func(ctx context.Context, in *struct {
			ListParams
			Area   string `query:"area" enum:"all,services,billing,support" doc:"Only subscriptions created through this area's endpoint"`
			Active string `query:"active" enum:"true,false"`
		}) (*WebhooksOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			f := eventlog.WebhookListFilter{Area: in.Area}
			if in.Active != "" {
				active := in.Active == "true"
				f.Active = &active
			}
			subs, total, err := s.eventlog.ListWebhooks(ctx, principal(ctx), f, pr)
			if err != nil {
				return nil, err
			}
			out := &WebhooksOutput{}
			out.Body.Webhooks = mapSlice(subs, s.webhookItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-event-types", Method: http.MethodGet, Path: "/webhooks/event-types", Summary: "Event catalogue",
		Tags: tags, Description: "The event names a subscription may use, by area, and the accepted aliases. The analytics area has no endpoint of its own: " +
			"its events (analytics_report.*) are subscribed to through POST /v1/webhooks."},
		access{}, func(ctx context.Context, _ *struct{}) (*EventTypesOutput, error) {
			out := &EventTypesOutput{}
			groups := map[webhooks.Area][]string{
				webhooks.AreaServices:  {"service.*"},
				webhooks.AreaBilling:   {"invoice.*", "payment.*", "subscription.*", "usage.*"},
				webhooks.AreaSupport:   {"ticket.*", "comment.*", "sla.*", "report.*"},
				webhooks.AreaAnalytics: {"analytics_report.*"},
			}
			for _, a := range []webhooks.Area{webhooks.AreaServices, webhooks.AreaBilling, webhooks.AreaSupport, webhooks.AreaAnalytics} {
				g := EventTypeGroup{Area: string(a), Patterns: groups[a], Events: []string{}}
				for _, name := range webhooks.EventNames() {
					if webhooks.AreaOf(name) == a {
						g.Events = append(g.Events, name)
					}
				}
				out.Body.Areas = append(out.Body.Areas, g)
			}
			out.Body.Aliases = map[string]string{webhooks.AliasInvoiceGenerated: webhooks.EventInvoiceCreated, webhooks.AliasPaymentReceived: webhooks.EventPaymentSuccessful}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-webhook", Method: http.MethodGet, Path: "/webhooks/{webhook_id}", Summary: "Get a webhook subscription", Tags: tags},
		manage, func(ctx context.Context, in *webhookPath) (*WebhookOutput, error) {
			sub, err := s.eventlog.GetWebhook(ctx, principal(ctx), in.WebhookID)
			if err != nil {
				return nil, err
			}
			out := &WebhookOutput{Status: http.StatusOK}
			out.Body.Webhook = s.webhookItem(sub)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-webhook", Method: http.MethodPatch, Path: "/webhooks/{webhook_id}", Summary: "Change, pause or resume a webhook subscription",
		Tags: tags, Description: "Changes the URL, events (within the subscription's area), filters or description; `active: false` pauses it " +
			"(its pending deliveries are cancelled and events that happen while paused are not delivered), `active: true` resumes it."},
		manage, func(ctx context.Context, in *struct {
			WebhookID string `path:"webhook_id" maxLength:"64" example:"wh_3fK9aZ"`
			Body      WebhookPatchBody
		}) (*WebhookOutput, error) {
			p := principal(ctx)
			sub, err := s.eventlog.GetWebhook(ctx, p, in.WebhookID)
			if err != nil {
				return nil, err
			}
			b := in.Body
			var v models.Validator
			patch, err := s.subscriptionRules().Patch(ctx, sub, events.PatchInput{URL: b.URL, Description: b.Description, Events: b.Events, Filters: b.Filters.filters(), Active: b.Active})
			if err := collectIssues(&v, err); err != nil {
				return nil, err
			}
			if err := s.checkWebhookFilters(ctx, p, &v, b.Filters); err != nil {
				return nil, err
			}
			if err := v.Err(); err != nil {
				return nil, err
			}
			if sub, err = s.eventlog.UpdateWebhook(ctx, p, in.WebhookID, patch); err != nil {
				return nil, err
			}
			out := &WebhookOutput{Status: http.StatusOK}
			out.Body.Webhook = s.webhookItem(sub)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-webhook", Method: http.MethodDelete, Path: "/webhooks/{webhook_id}", Summary: "Delete a webhook subscription",
		Tags: tags, DefaultStatus: http.StatusNoContent, Description: "Its pending deliveries are cancelled; nothing more is sent to it."},
		manage, func(ctx context.Context, in *webhookPath) (*struct{}, error) {
			return nil, s.eventlog.DeleteWebhook(ctx, principal(ctx), in.WebhookID)
		})
	register(s, huma.Operation{OperationID: "rotate-webhook-secret", Method: http.MethodPost, Path: "/webhooks/{webhook_id}/rotate-secret", Summary: "Rotate a webhook's signing secret",
		Tags: tags, Description: "Replaces the signing secret (the one given, or a generated one, shown once). For the next 24 hours deliveries carry " +
			"signatures with both the new and the previous secret, so receivers can switch without losing a delivery."},
		manage, func(ctx context.Context, in *struct {
			WebhookID string `path:"webhook_id" maxLength:"64" example:"wh_3fK9aZ"`
			Body      *struct {
				Secret string `json:"secret,omitempty" maxLength:"200" doc:"whsec_ + base64 of 24 to 64 bytes; generated when absent"`
			}
		}) (*WebhookOutput, error) {
			p := principal(ctx)
			if _, err := s.eventlog.GetWebhook(ctx, p, in.WebhookID); err != nil {
				return nil, err
			}
			given := ""
			if in.Body != nil {
				given = in.Body.Secret
			}
			secret, err := events.Secret(given)
			if err != nil {
				return nil, err
			}
			sub, err := s.eventlog.RotateWebhookSecret(ctx, p, in.WebhookID, secret)
			if err != nil {
				return nil, err
			}
			out := &WebhookOutput{Status: http.StatusOK}
			out.Body.Webhook = s.webhookItem(sub)
			out.Body.Webhook.Secret = secret
			return out, nil
		})
	register(s, huma.Operation{OperationID: "test-webhook", Method: http.MethodPost, Path: "/webhooks/{webhook_id}/test", Summary: "Send a test event",
		Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Sends a signed `webhook.test` event to this subscription only (paused or not), with the usual retries. " +
			"Follow it in GET /v1/webhooks/{webhook_id}/deliveries."},
		manage, func(ctx context.Context, in *webhookPath) (*DeliveryOutput, error) {
			d, _, err := s.dispatcher().SendTest(ctx, principal(ctx), in.WebhookID)
			if err != nil {
				return nil, err
			}
			out := &DeliveryOutput{Status: http.StatusAccepted}
			out.Body.Delivery = deliveryItem(d, nil)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-webhook-deliveries", Method: http.MethodGet, Path: "/webhooks/{webhook_id}/deliveries", Summary: "List a webhook's deliveries",
		Tags: tags, Description: "Each delivery with every attempt: time, status code, latency, error and the first 1 KiB of the response."},
		manage, func(ctx context.Context, in *struct {
			WebhookID string `path:"webhook_id" maxLength:"64" example:"wh_3fK9aZ"`
			ListParams
			Status  string `query:"status" enum:"pending,succeeded,failed,cancelled"`
			EventID string `query:"event_id" maxLength:"64"`
		}) (*DeliveriesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			ds, atts, total, err := s.eventlog.ListDeliveries(ctx, principal(ctx), in.WebhookID,
				eventlog.DeliveryListFilter{Status: eventlog.DeliveryStatus(in.Status), EventID: in.EventID}, pr)
			if err != nil {
				return nil, err
			}
			out := &DeliveriesOutput{}
			out.Body.Deliveries = make([]DeliveryItem, len(ds))
			for i := range ds {
				out.Body.Deliveries[i] = deliveryItem(&ds[i], atts[ds[i].ID])
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
