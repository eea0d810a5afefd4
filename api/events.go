package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// EventItem is one event of the event log.
type EventItem struct {
	ID           string         `json:"id" example:"evt_3fK9aZ"`
	Type         string         `json:"type" example:"service.provisioned"`
	ResourceID   string         `json:"resource_id" example:"svc_3fK9aZ"`
	Data         map[string]any `json:"data"`
	CreatedAt    string         `json:"created_at"`
	DispatchedAt *string        `json:"dispatched_at" doc:"When its deliveries were handed to the workflow engine; null until then"`
}

func eventItem(ev *eventlog.Event) EventItem {
	data := ev.Data
	if data == nil {
		data = map[string]any{}
	}
	return EventItem{ID: ev.ID, Type: ev.Type, ResourceID: ev.ResourceID, Data: data,
		CreatedAt: models.Timestamp(ev.CreatedAt), DispatchedAt: optTimestamp(ev.DispatchedAt)}
}

// EventsOutput lists events.
type EventsOutput struct {
	Body struct {
		Envelope
		Events     []EventItem `json:"events"`
		Pagination Pagination  `json:"pagination"`
	}
}

// EventOutput is one event, with its deliveries when the caller manages webhooks.
type EventOutput struct {
	Body struct {
		Envelope
		Event      EventItem      `json:"event"`
		Deliveries []DeliveryItem `json:"deliveries,omitempty" doc:"Its deliveries to your subscriptions (with webhooks:manage)"`
	}
}

// RedeliverBody chooses the subscription of a redelivery.
type RedeliverBody struct {
	SubscriptionID string `json:"subscription_id,omitempty" maxLength:"64" example:"wh_3fK9aZ" doc:"Default: every active subscription that received the event. An id naming no subscription of yours is 400 VALIDATION_ERROR on subscription_id"`
}

// RedeliveriesOutput lists the deliveries a redelivery created.
type RedeliveriesOutput struct {
	Status int
	Body   struct {
		Envelope
		Deliveries []DeliveryItem `json:"deliveries"`
	}
}

type eventPath struct {
	EventID string `path:"event_id" maxLength:"64" example:"evt_3fK9aZ"`
}

// parseTime reads an RFC 3339 query parameter. Errors: VALIDATION_ERROR.
func parseTime(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be an RFC 3339 timestamp such as 2026-01-02T03:04:05Z"})
	}
	return &t, nil
}

const eventsReadDoc = "Needs webhooks:manage (every event), or services:read, billing:read or support:read (the events of those areas)."

func (s *Server) registerEvents() {
	tags := []string{"Events"}
	register(s, huma.Operation{OperationID: "list-events", Method: http.MethodGet, Path: "/events", Summary: "List events",
		Tags: tags, Description: "The events of your organization, newest first: state changes that webhooks deliver. " +
			"filter= takes an expression of the filter language (docs/filtering.md). " + eventsReadDoc},
		access{}, func(ctx context.Context, in *struct {
			ListParams
			Type          string `query:"type" maxLength:"60" example:"service.provisioned" doc:"An event name, alias or group pattern (service.*)"`
			ResourceID    string `query:"resource_id" maxLength:"64" example:"svc_3fK9aZ"`
			CreatedAfter  string `query:"created_after" maxLength:"40" doc:"RFC 3339; inclusive"`
			CreatedBefore string `query:"created_before" maxLength:"40" doc:"RFC 3339; exclusive"`
			Filter        string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over type (the canonical event name; ~ contains), resource_id and created_at; combined with the other filters by and, over the events you may read. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"type ~ \"service.\" and created_at >= 2026-11-01"`
		}) (*EventsOutput, error) {
			p := principal(ctx)
			readable, err := events.ReadableGroups(p)
			if err != nil {
				return nil, err
			}
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			f := eventlog.EventFilter{Readable: readable, ResourceID: in.ResourceID, Expr: in.Filter}
			var v models.Validator
			if err := collectIssues(&v, events.TypeFilter(&f, in.Type)); err != nil {
				return nil, err
			}
			after, err := parseTime("created_after", in.CreatedAfter)
			if err != nil {
				v.Add("created_after", "must be an RFC 3339 timestamp such as 2026-01-02T03:04:05Z")
			}
			before, err := parseTime("created_before", in.CreatedBefore)
			if err != nil {
				v.Add("created_before", "must be an RFC 3339 timestamp such as 2026-01-02T03:04:05Z")
			}
			if err := v.Err(); err != nil {
				return nil, err
			}
			f.CreatedAfter, f.CreatedBefore = after, before
			evs, total, err := s.eventlog.ListEvents(ctx, p, f, pr)
			if err != nil {
				return nil, err
			}
			out := &EventsOutput{}
			out.Body.Events = mapSlice(evs, eventItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-event", Method: http.MethodGet, Path: "/events/{event_id}", Summary: "Get an event",
		Tags: tags, Description: "The event and, for callers with webhooks:manage, its deliveries to your subscriptions with their attempts. " + eventsReadDoc},
		access{}, func(ctx context.Context, in *eventPath) (*EventOutput, error) {
			p := principal(ctx)
			readable, err := events.ReadableGroups(p)
			if err != nil {
				return nil, err
			}
			ev, err := s.eventlog.GetEvent(ctx, p, in.EventID, readable)
			if err != nil {
				return nil, err
			}
			out := &EventOutput{}
			out.Body.Event = eventItem(ev)
			if p.Can("webhooks:manage") {
				ds, atts, err := s.eventlog.DeliveriesOfEvent(ctx, p, ev.ID)
				if err != nil {
					return nil, err
				}
				out.Body.Deliveries = make([]DeliveryItem, len(ds))
				for i := range ds {
					out.Body.Deliveries[i] = deliveryItem(&ds[i], atts[ds[i].ID])
				}
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "redeliver-event", Method: http.MethodPost, Path: "/events/{event_id}/redeliver", Summary: "Send an event again",
		Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Sends the event again as a new delivery (with its own attempt log and retries) to `subscription_id`, or to every active " +
			"subscription that received it. The webhook-id header stays the event id, so receivers that deduplicate recognise it."},
		access{permission: "webhooks:manage"}, func(ctx context.Context, in *struct {
			EventID string `path:"event_id" maxLength:"64" example:"evt_3fK9aZ"`
			Body    *RedeliverBody
		}) (*RedeliveriesOutput, error) {
			sub := ""
			if in.Body != nil {
				sub = in.Body.SubscriptionID
			}
			ds, err := s.dispatcher().Redeliver(ctx, principal(ctx), in.EventID, sub)
			if err != nil {
				return nil, err
			}
			out := &RedeliveriesOutput{Status: http.StatusAccepted}
			out.Body.Deliveries = make([]DeliveryItem, len(ds))
			for i := range ds {
				out.Body.Deliveries[i] = deliveryItem(&ds[i], nil)
			}
			return out, nil
		})
}
