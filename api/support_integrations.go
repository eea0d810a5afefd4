package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/webhooks"
)

// ChatMessageFormat is a chat integration's message format.
type ChatMessageFormat struct {
	Template string `json:"template" minLength:"1" maxLength:"2000" example:"[{{ticket.priority}}] {{ticket.number}} {{ticket.title}} — {{event}}" doc:"Text with {{placeholder}} fields: event, ticket.id, ticket.number, ticket.title, ticket.status, ticket.priority, ticket.escalation_level, ticket.escalation_reason, ticket.customer_id, ticket.url, sla.metric, sla.target, sla.due_at, comment.content, comment.author_type. An unknown placeholder or unbalanced braces is refused."`
}

// ChatIntegrationBody is the body of POST /v1/support/integrations/chatapp.
type ChatIntegrationBody struct {
	WebhookURL    string              `json:"webhook_url" required:"true" minLength:"1" maxLength:"2000" example:"https://chat.example.com/hooks/T000/B000" doc:"Required: the chat application's incoming webhook; https, whose host resolves to public addresses only (http to a loopback host only where the platform allows private targets)"`
	Channel       string              `json:"channel" required:"true" minLength:"1" maxLength:"80" example:"#support-alerts" doc:"Required: 1 to 80 characters, sent in every message"`
	Events        []string            `json:"events" required:"true" minItems:"1" maxItems:"50" example:"[\"ticket.*\",\"sla.breach\"]" doc:"Required: support event names or patterns (ticket.*, comment.*, sla.*)"`
	Filters       *WebhookFiltersBody `json:"filters,omitempty" doc:"Only events with these priorities / about these customers (as support webhook subscriptions)"`
	MessageFormat *ChatMessageFormat  `json:"message_format,omitempty" doc:"Default template: [{{ticket.priority}}] {{ticket.number}} {{ticket.title}} — {{event}}"`
	Active        *bool               `json:"active,omitempty" doc:"false creates it paused (default true)"`
}

// ChatIntegrationPatchBody changes a chat integration; absent fields stay.
type ChatIntegrationPatchBody struct {
	WebhookURL    *string             `json:"webhook_url,omitempty" minLength:"1" maxLength:"2000"`
	Channel       *string             `json:"channel,omitempty" minLength:"1" maxLength:"80"`
	Events        []string            `json:"events,omitempty" minItems:"1" maxItems:"50" doc:"Replaces the list (support events only)"`
	Filters       *WebhookFiltersBody `json:"filters,omitempty" doc:"Replaces the filters ({} removes them)"`
	MessageFormat *ChatMessageFormat  `json:"message_format,omitempty"`
	Active        *bool               `json:"active,omitempty" doc:"false pauses it (events that happen while paused are not sent), true resumes it"`
}

// ChatIntegrationItem is a support chat integration.
type ChatIntegrationItem struct {
	ID            string             `json:"id" example:"chat_3fK9aZ"`
	Type          string             `json:"type" enum:"chatapp"`
	WebhookURL    string             `json:"webhook_url"`
	Channel       string             `json:"channel"`
	Events        []string           `json:"events"`
	Filters       WebhookFiltersItem `json:"filters"`
	MessageFormat ChatMessageFormat  `json:"message_format"`
	Active        bool               `json:"active"`
	CreatedAt     string             `json:"created_at"`
	UpdatedAt     string             `json:"updated_at"`
}

func chatIntegrationItem(c *support.ChatIntegration) ChatIntegrationItem {
	return ChatIntegrationItem{ID: c.ID, Type: support.ChatIntegrationType, WebhookURL: c.WebhookURL, Channel: c.Channel, Events: nonNil(c.Events),
		Filters:       WebhookFiltersItem{CustomerIDs: nonNil(c.CustomerIDs), Priorities: nonNil(c.Priorities)},
		MessageFormat: ChatMessageFormat{Template: c.Template}, Active: c.Active,
		CreatedAt: models.Timestamp(c.CreatedAt), UpdatedAt: models.Timestamp(c.UpdatedAt)}
}

// ChatIntegrationOutput wraps one chat integration.
type ChatIntegrationOutput struct {
	Status int
	Body   struct {
		Envelope
		Integration ChatIntegrationItem `json:"integration"`
	}
}

// ChatIntegrationsOutput lists chat integrations.
type ChatIntegrationsOutput struct {
	Body struct {
		Envelope
		Integrations []ChatIntegrationItem `json:"integrations"`
		Pagination   Pagination            `json:"pagination"`
	}
}

// ChatTestOutput is the outcome of a test message.
type ChatTestOutput struct {
	Body struct {
		Envelope
		Delivered  bool   `json:"delivered" doc:"The chat application answered 2xx"`
		StatusCode *int   `json:"status_code" doc:"Its HTTP status; null when no response arrived"`
		Error      string `json:"error,omitempty"`
		LatencyMs  int64  `json:"latency_ms"`
		DeliveryID string `json:"delivery_id" doc:"The recorded delivery (GET .../deliveries)"`
	}
}

type chatPath struct {
	IntegrationID string `path:"integration_id" maxLength:"64" example:"chat_3fK9aZ"`
}

// registerSupportIntegrations registers the support chat integrations
// (docs/support.md, "Chat integration"). Like support webhook
// subscriptions they need webhooks:manage and belong to the caller's
// organization and environment.
func (s *Server) registerSupportIntegrations(tags []string) {
	manage := access{permission: "webhooks:manage"}
	const base = "/support/integrations/chatapp"
	register(s, huma.Operation{OperationID: "create-support-chat-integration", Method: http.MethodPost, Path: base, Summary: "Connect a chat application",
		Description: "Registers a chat application's incoming webhook (a `chat_` integration). Each support event (ticket.*, comment.added, sla.breach) " +
			"of the caller's organization and environment that its events and filters select is posted to it as a JSON message " +
			"{channel, text, event, ticket {id, number, url}, sent_at}, text being the rendered template, with retries. See docs/support.md.",
		Tags: tags, DefaultStatus: http.StatusCreated},
		manage, func(ctx context.Context, in *struct{ Body ChatIntegrationBody }) (*ChatIntegrationOutput, error) {
			b := in.Body
			if err := s.checkFilterCustomers(ctx, principal(ctx), b.Filters); err != nil {
				return nil, err
			}
			ci := events.ChatInput{WebhookURL: b.WebhookURL, Channel: b.Channel, Events: b.Events, Filters: b.Filters.filters(), Active: b.Active}
			if b.MessageFormat != nil {
				ci.Template = b.MessageFormat.Template
				if ci.Template == "" {
					ci.Template = " " // an explicit empty template is refused, not defaulted
				}
			}
			spec, err := s.subscriptionRules().ChatSpec(ctx, ci)
			if err != nil {
				return nil, err
			}
			c, err := s.support.CreateChatIntegration(ctx, principal(ctx), spec)
			if err != nil {
				return nil, err
			}
			out := &ChatIntegrationOutput{Status: http.StatusCreated}
			out.Body.Integration = chatIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-support-chat-integrations", Method: http.MethodGet, Path: base, Summary: "List chat integrations", Tags: tags},
		manage, func(ctx context.Context, in *struct{ ListParams }) (*ChatIntegrationsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			cs, total, err := s.support.ListChatIntegrations(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &ChatIntegrationsOutput{}
			out.Body.Integrations = make([]ChatIntegrationItem, len(cs))
			for i := range cs {
				out.Body.Integrations[i] = chatIntegrationItem(&cs[i])
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-chat-integration", Method: http.MethodGet, Path: base + "/{integration_id}", Summary: "Get a chat integration", Tags: tags},
		manage, func(ctx context.Context, in *chatPath) (*ChatIntegrationOutput, error) {
			c, err := s.support.GetChatIntegration(ctx, principal(ctx), in.IntegrationID)
			if err != nil {
				return nil, err
			}
			out := &ChatIntegrationOutput{Status: http.StatusOK}
			out.Body.Integration = chatIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-support-chat-integration", Method: http.MethodPatch, Path: base + "/{integration_id}", Summary: "Change, pause or resume a chat integration",
		Tags: tags, Description: "Changes the URL, channel, events, filters or message template (validated as on creation); `active: false` pauses it."},
		manage, func(ctx context.Context, in *struct {
			IntegrationID string `path:"integration_id" maxLength:"64" example:"chat_3fK9aZ"`
			Body          ChatIntegrationPatchBody
		}) (*ChatIntegrationOutput, error) {
			p := principal(ctx)
			if _, err := s.support.GetChatIntegration(ctx, p, in.IntegrationID); err != nil {
				return nil, err
			}
			b := in.Body
			if err := s.checkFilterCustomers(ctx, p, b.Filters); err != nil {
				return nil, err
			}
			patch := support.ChatPatch{WebhookURL: b.WebhookURL, Channel: b.Channel, Events: b.Events, Filters: b.Filters.filters(), Active: b.Active}
			if b.MessageFormat != nil {
				patch.Template = &b.MessageFormat.Template
			}
			patch, err := s.subscriptionRules().ChatPatch(ctx, patch)
			if err != nil {
				return nil, err
			}
			c, err := s.support.UpdateChatIntegration(ctx, p, in.IntegrationID, patch)
			if err != nil {
				return nil, err
			}
			out := &ChatIntegrationOutput{Status: http.StatusOK}
			out.Body.Integration = chatIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-support-chat-integration", Method: http.MethodDelete, Path: base + "/{integration_id}", Summary: "Delete a chat integration",
		Tags: tags, DefaultStatus: http.StatusNoContent, Description: "Nothing more is sent to it; its delivery history is kept."},
		manage, func(ctx context.Context, in *chatPath) (*struct{}, error) {
			return nil, s.support.DeleteChatIntegration(ctx, principal(ctx), in.IntegrationID)
		})
	register(s, huma.Operation{OperationID: "test-support-chat-integration", Method: http.MethodPost, Path: base + "/{integration_id}/test", Summary: "Send a test message",
		Tags: tags, Description: "Posts a test message (the template rendered over a sample ticket, event webhook.test) to the integration now, paused or not, " +
			"once and without retries, and answers how the chat application responded (at most 10 seconds). The attempt is recorded as a delivery."},
		manage, func(ctx context.Context, in *chatPath) (*ChatTestOutput, error) {
			return s.testChatIntegration(ctx, in.IntegrationID)
		})
	register(s, huma.Operation{OperationID: "list-support-chat-integration-deliveries", Method: http.MethodGet, Path: base + "/{integration_id}/deliveries",
		Summary: "List a chat integration's deliveries", Tags: tags, Description: "Each message sent (webhook_id is the integration's id) with every attempt."},
		manage, func(ctx context.Context, in *struct {
			IntegrationID string `path:"integration_id" maxLength:"64" example:"chat_3fK9aZ"`
			ListParams
			Status string `query:"status" enum:"pending,succeeded,failed,cancelled"`
		}) (*DeliveriesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			p := principal(ctx)
			if _, err := s.support.GetChatIntegration(ctx, p, in.IntegrationID); err != nil {
				return nil, err
			}
			ds, atts, total, err := s.eventlog.ListDeliveriesTo(ctx, p, in.IntegrationID, eventlog.DeliveryListFilter{Status: eventlog.DeliveryStatus(in.Status)}, pr)
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

// testChatIntegration posts a test message to integration id and records
// it as a delivery of kind chat with its one attempt.
func (s *Server) testChatIntegration(ctx context.Context, id string) (*ChatTestOutput, error) {
	c, err := s.support.GetChatIntegration(ctx, principal(ctx), id)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"ticket": map[string]any{"id": "tkt_test", "number": "TKT-000000", "title": "Test message from the platform",
		"status": "open", "priority": "medium", "escalation_level": 0, "escalation_reason": "", "customer_id": ""},
		"message": "This is a test message from the platform's support chat integration " + c.ID + "."}
	d, ev, err := s.eventlog.CreateChatTestDelivery(ctx, c.Subscription(), data)
	if err != nil {
		return nil, err
	}
	now := s.now()
	body, err := support.ChatMessageBody(c, ev.Type, data, s.cfg.PublicBaseURL, now)
	if err != nil {
		return nil, err
	}
	client := webhooks.NewClient(s.cfg.WebhookAllowPrivate, webhooks.WithTransportWrapper(s.tracing.WrapTransport))
	defer client.CloseIdleConnections()
	res := client.Post(ctx, c.WebhookURL, ev.ID, body)
	scope := models.TenantScope(c.OrganizationID, c.Environment)
	att := &eventlog.WebhookAttempt{DeliveryID: d.ID, Number: 1, AttemptedAt: now, StatusCode: res.StatusCode, LatencyMs: res.Latency.Milliseconds(),
		Success: res.Success, Error: res.Error, ResponseBody: res.ResponseBodyPrefix}
	if _, err := s.eventlog.RecordDeliveryAttempt(ctx, scope, att, nil); err != nil {
		return nil, err
	}
	if !res.Success {
		if err := s.eventlog.FinishDelivery(ctx, scope, d.ID, eventlog.DeliveryFailed, "the test message failed"); err != nil {
			return nil, err
		}
	}
	out := &ChatTestOutput{}
	out.Body.Delivered, out.Body.Error, out.Body.LatencyMs, out.Body.DeliveryID = res.Success, res.Error, res.Latency.Milliseconds(), d.ID
	if res.StatusCode != 0 {
		code := res.StatusCode
		out.Body.StatusCode = &code
	}
	return out, nil
}
