package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// NotifyRecipientBody is one addressee of a ticket notification.
type NotifyRecipientBody struct {
	Email string `json:"email,omitempty" maxLength:"320" example:"noc@example.com" doc:"A bare e-mail address (type email)"`
	Phone string `json:"phone,omitempty" maxLength:"32" doc:"E.164 phone number (type sms)" example:"+15550100200"`
	Name  string `json:"name,omitempty" maxLength:"200"`
	Role  string `json:"role,omitempty" maxLength:"40" doc:"Who the recipient is, e.g. customer or noc"`
}

// NotifyBody is the body of a ticket notification request.
type NotifyBody struct {
	Type            string                `json:"type" enum:"email,sms" maxLength:"8" doc:"email or sms"`
	Recipients      []NotifyRecipientBody `json:"recipients,omitempty" required:"true" minItems:"1" maxItems:"20" example:"[{\"email\":\"noc@example.com\",\"name\":\"NOC\"}]" doc:"1 to 20 recipients: each with email (type email) or phone (type sms)"`
	Template        string                `json:"template,omitempty" enum:"ticket_created,ticket_update,ticket_resolved,custom" maxLength:"60" doc:"E-mail: ticket_created, ticket_update (default), ticket_resolved or custom"`
	Subject         string                `json:"subject,omitempty" maxLength:"300" doc:"E-mail: the subject (default: the template's, with the ticket number and title); required with custom"`
	Variables       map[string]string     `json:"variables,omitempty" doc:"E-mail: values shown in the message; message is its main text (required with custom)"`
	IncludeComments bool                  `json:"include_comments,omitempty" doc:"E-mail: include the ticket's newest customer-visible comments (at most 20)"`
	CommentFilter   string                `json:"comment_filter,omitempty" enum:"customer_visible" maxLength:"32" doc:"customer_visible (the only filter: internal comments are never sent)"`
	Message         string                `json:"message,omitempty" maxLength:"1600" doc:"SMS: the text"`
}

// NotificationItem is one message a ticket sent.
type NotificationItem struct {
	ID            string  `json:"id" example:"ntf_3fK9aZ" doc:"The outbox message id"`
	TicketID      string  `json:"ticket_id"`
	Channel       string  `json:"channel" enum:"email,sms"`
	Recipient     string  `json:"recipient"`
	RecipientName string  `json:"recipient_name,omitempty"`
	Role          string  `json:"role,omitempty"`
	Template      string  `json:"template"`
	Subject       string  `json:"subject,omitempty"`
	Trigger       string  `json:"trigger" enum:"manual,ticket_created,comment_added,ticket_resolved,ticket_routed,sla_escalation,auto_update"`
	Status        string  `json:"status" enum:"queued,sent,failed"`
	Attempts      int     `json:"attempts"`
	LastError     *string `json:"last_error" nullable:"true" doc:"The last failed attempt's error; null when none failed"`
	SentAt        *string `json:"sent_at" nullable:"true"`
	CreatedBy     string  `json:"created_by"`
	CreatedAt     string  `json:"created_at"`
}

func notificationItem(n *support.TicketNotification) NotificationItem {
	it := NotificationItem{ID: n.ID, TicketID: n.TicketID, Channel: n.Channel, Recipient: n.Recipient, RecipientName: n.RecipientName,
		Role: n.Role, Template: n.Template, Subject: n.Subject, Trigger: n.Trigger, Status: n.Status(), CreatedBy: n.CreatedBy,
		CreatedAt: models.Timestamp(n.CreatedAt)}
	if d := n.Delivery; d != nil {
		it.Attempts = d.Attempts
		if d.LastError != "" {
			e := d.LastError
			it.LastError = &e
		}
		if d.SentAt != nil {
			at := models.Timestamp(*d.SentAt)
			it.SentAt = &at
		}
	}
	return it
}

// NotifyOutput is the answer to a notification request: the queued messages.
type NotifyOutput struct {
	Status int
	Body   struct {
		Envelope
		MessageIDs    []string           `json:"message_ids"`
		Notifications []NotificationItem `json:"notifications"`
	}
}

// NotificationsOutput is a page of a ticket's notifications.
type NotificationsOutput struct {
	Body struct {
		Envelope
		Notifications []NotificationItem `json:"notifications"`
		Pagination    Pagination         `json:"pagination"`
	}
}

// registerSupportNotifications registers a ticket's notifications
// (provider staff only).
func (s *Server) registerSupportNotifications(tags []string) {
	staffOnly := " Provider staff with support:write only (403 for everyone else)."
	register(s, huma.Operation{OperationID: "notify-support-ticket", Method: http.MethodPost, Path: "/support/tickets/{ticket_id}/notify", Summary: "Notify about a ticket",
		Description: "Queues one message per recipient to the notification outbox, in one transaction, and records each against the ticket; the worker " +
			"sends them (docs/notifications.md). E-mail is rendered from a template (ticket_created, ticket_update, ticket_resolved, custom; docs/support.md) " +
			"with the ticket, the variables and optionally its customer-visible comments; SMS sends message to E.164 numbers. 202 with the queued message ids." + staffOnly,
		Tags: tags, DefaultStatus: http.StatusAccepted},
		access{permission: support.PermissionWrite, staff: true}, func(ctx context.Context, in *struct {
			TicketPath
			Body NotifyBody
		}) (*NotifyOutput, error) {
			b := in.Body
			recipients := make([]support.NotifyRecipient, len(b.Recipients))
			for i, r := range b.Recipients {
				recipients[i] = support.NotifyRecipient{Email: r.Email, Phone: r.Phone, Name: r.Name, Role: r.Role}
			}
			rows, err := s.support.NotifyTicket(ctx, principal(ctx), in.ID, support.NotifyInput{Type: b.Type, Recipients: recipients, Template: b.Template,
				Subject: b.Subject, Variables: b.Variables, IncludeComments: b.IncludeComments, CommentFilter: b.CommentFilter, Message: b.Message})
			if err != nil {
				return nil, err
			}
			out := &NotifyOutput{Status: http.StatusAccepted}
			out.Body.Notifications = mapSlice(rows, notificationItem)
			out.Body.MessageIDs = make([]string, len(rows))
			for i := range rows {
				out.Body.MessageIDs[i] = rows[i].ID
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-support-ticket-notifications", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}/notifications",
		Summary:     "List a ticket's notifications",
		Description: "Every message the ticket sent, requested or automatic, oldest first, with its delivery status from the outbox (queued, sent, failed)." + staffOnly,
		Tags:        tags},
		access{permission: support.PermissionWrite, staff: true}, func(ctx context.Context, in *struct {
			TicketPath
			ListParams
		}) (*NotificationsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.ListTicketNotifications(ctx, principal(ctx), in.ID, pr)
			if err != nil {
				return nil, err
			}
			out := &NotificationsOutput{}
			out.Body.Notifications = mapSlice(rows, notificationItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
