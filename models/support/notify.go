package support

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// What sent a ticket notification: a staff request (POST .../notify) or
// one of the automatic messages to the ticket's contact.
const (
	TriggerManual        = "manual"
	TriggerTicketCreated = "ticket_created"
	TriggerComment       = "comment_added"
	TriggerResolved      = "ticket_resolved"
	// TriggerRouted is a routing rule's notify list told of an assignment.
	TriggerRouted = "ticket_routed"
)

// Notification types of POST /v1/support/tickets/{ticket_id}/notify.
const (
	NotifyEmail = "email"
	NotifySMS   = "sms"
)

// CommentFilterCustomerVisible is the one comment_filter: only
// customer-visible comments are ever included in a message.
const CommentFilterCustomerVisible = "customer_visible"

// Bounds of a notification request.
const (
	MaxNotifyRecipients = 20
	MaxNotifyVariables  = 50
	MaxVariableValue    = 2000
	MaxSMSMessage       = 1600
	MaxNotifySubject    = 300
	// MaxNotifyComments is how many of the newest customer-visible
	// comments an e-mail includes.
	MaxNotifyComments = 20
)

var variableName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// TicketNotification is one message a ticket sent: its id is the id of
// the notification outbox row that carries it, so the status is the
// outbox's (queued, sent or failed).
type TicketNotification struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID      string    `gorm:"size:40;not null;index"`
	Channel       string    `gorm:"size:10;not null"`
	Recipient     string    `gorm:"size:320;not null"`
	RecipientName string    `gorm:"size:200"`
	Role          string    `gorm:"size:40"`
	Template      string    `gorm:"size:60;not null"`
	Subject       string    `gorm:"size:300"`
	Trigger       string    `gorm:"size:40;not null"`
	CreatedBy     string    `gorm:"size:40;not null"`
	CreatedAt     time.Time `gorm:"not null;index"`

	// Delivery is the outbox row (filled by ListTicketNotifications; nil
	// when the row is gone).
	Delivery *eventlog.ContactNotification `gorm:"-"`
}

// TableName is the ticket notifications table.
func (TicketNotification) TableName() string { return "support_ticket_notifications" }

// Status is the delivery status from the outbox: queued, sent or failed.
func (n *TicketNotification) Status() string {
	if n.Delivery == nil {
		return eventlog.NotificationQueued
	}
	return n.Delivery.DeliveryStatus()
}

// NotifyRecipient is one addressee: an e-mail address for e-mail, an E.164
// phone number for SMS.
type NotifyRecipient struct {
	Email string
	Phone string
	Name  string
	Role  string
}

// NotifyInput is the body of a notification request.
type NotifyInput struct {
	Type       string // email or sms
	Recipients []NotifyRecipient
	// E-mail: a template (EmailTemplates), an optional subject (required
	// for custom), variables shown in the message, and optionally the
	// ticket's customer-visible comments.
	Template        string
	Subject         string
	Variables       map[string]string
	IncludeComments bool
	CommentFilter   string
	// SMS: the text.
	Message string
}

// validate checks in and fills its defaults. Errors: VALIDATION_ERROR.
func (in *NotifyInput) validate() error {
	var v models.Validator
	in.Type = strings.TrimSpace(in.Type)
	in.Subject = strings.Join(strings.Fields(in.Subject), " ")
	v.Check(in.Type == NotifyEmail || in.Type == NotifySMS, "type", "must be email or sms")
	v.Check(len(in.Recipients) > 0, "recipients", "must name at least one recipient")
	v.Check(len(in.Recipients) <= MaxNotifyRecipients, "recipients", "must name at most "+itoa(MaxNotifyRecipients)+" recipients")
	for i := range in.Recipients {
		r := &in.Recipients[i]
		r.Email, r.Phone, r.Name, r.Role = strings.TrimSpace(r.Email), strings.TrimSpace(r.Phone), strings.TrimSpace(r.Name), strings.TrimSpace(r.Role)
		f := fmt.Sprintf("recipients[%d].", i)
		checkLen(&v, f+"name", r.Name, 200)
		checkLen(&v, f+"role", r.Role, 40)
		switch in.Type {
		case NotifyEmail:
			v.Check(ValidEmail(r.Email), f+"email", "must be an e-mail address such as noc@example.com")
		case NotifySMS:
			v.Check(identity.ValidPhoneNumber(r.Phone), f+"phone", "must be an E.164 phone number, e.g. +15550100200")
		}
	}
	switch in.Type {
	case NotifyEmail:
		if in.Template == "" {
			in.Template = TemplateTicketUpdate
		}
		v.Check(slices.Contains(EmailTemplates(), in.Template), "template", "must be one of "+joinList(EmailTemplates()))
		v.Check(in.Template != TemplateCustom || in.Subject != "", "subject", "is required with the custom template")
		checkLen(&v, "subject", in.Subject, MaxNotifySubject)
		v.Check(len(in.Variables) <= MaxNotifyVariables, "variables", "must have at most "+itoa(MaxNotifyVariables)+" entries")
		for k, val := range in.Variables {
			v.Check(variableName.MatchString(k), "variables", "names must be lower-case letters, digits and underscores (at most 40), starting with a letter")
			checkLen(&v, "variables."+k, val, MaxVariableValue)
		}
		v.Check(in.Template != TemplateCustom || strings.TrimSpace(in.Variables["message"]) != "", "variables.message", "is required with the custom template")
		v.Check(in.CommentFilter == "" || in.CommentFilter == CommentFilterCustomerVisible, "comment_filter", "must be customer_visible")
	case NotifySMS:
		in.Message = strings.TrimSpace(in.Message)
		v.Check(in.Message != "", "message", "is required")
		checkLen(&v, "message", in.Message, MaxSMSMessage)
	}
	return v.Err()
}

// NotifyTicket sends messages about a ticket visible to p (provider staff
// only): one per recipient, rendered now and written to the notification
// outbox in one transaction together with their record on the ticket.
// Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR,
// INTERNAL_ERROR (no SECRETS_KEY to seal bodies).
func (s *Store) NotifyTicket(ctx context.Context, p *models.Principal, ticketID string, in NotifyInput) ([]TicketNotification, error) {
	if !isStaff(p) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "ticket notifications are sent by provider staff")
	}
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	var comments []Comment
	if in.Type == NotifyEmail && in.IncludeComments {
		err := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Where("ticket_id = ? AND visibility = ?", t.ID, VisibilityCustomer).
			Order("created_at DESC, id DESC").Limit(MaxNotifyComments).Find(&comments).Error
		if err != nil {
			return nil, dbErr(err)
		}
		slices.Reverse(comments)
	}
	var out []TicketNotification
	err = s.core.Tx(ctx, models.TenantScope(t.OrganizationID, t.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		for _, r := range in.Recipients {
			m := eventlog.Message{Channel: eventlog.ChannelSMS, Recipient: r.Phone, Template: "support_sms", Body: in.Message, Role: "support"}
			if in.Type == NotifyEmail {
				subject, body, err := renderEmail(in.Template, emailData{Ticket: t, Name: r.Name, Variables: in.Variables, Comments: comments}, in.Subject)
				if err != nil {
					return err
				}
				m = eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: r.Email, Template: "support_" + in.Template, Subject: subject, Body: body, Role: "support"}
			}
			n, err := s.queue(tx, t, m, r, TriggerManual, actorID(p))
			if err != nil {
				return err
			}
			out = append(out, *n)
		}
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// queue writes m to the outbox inside tx and records it against t.
func (s *Store) queue(tx *gorm.DB, t *Ticket, m eventlog.Message, r NotifyRecipient, trigger, by string) (*TicketNotification, error) {
	row, err := s.eventlog.QueueMessageIn(tx, m)
	if err != nil {
		return nil, err
	}
	role := r.Role
	if role == "" {
		role = "contact"
	}
	n := &TicketNotification{ID: row.ID, TicketID: t.ID, Channel: m.Channel, Recipient: m.Recipient, RecipientName: r.Name, Role: role,
		Template: strings.TrimPrefix(m.Template, "support_"), Subject: m.Subject, Trigger: trigger, CreatedBy: by, CreatedAt: s.now()}
	if err := tx.Create(n).Error; err != nil {
		return nil, dbErr(err)
	}
	n.Delivery = row
	return n, nil
}

// notifyContact queues the automatic message of trigger to the ticket's
// contact e-mail inside tx (the transaction of the change it reports).
// Nothing is sent when the ticket has no contact e-mail or the platform no
// SECRETS_KEY to seal bodies. c is the comment that triggered it, if any.
func (s *Store) notifyContact(tx *gorm.DB, t *Ticket, trigger string, p *models.Principal, c *Comment) error {
	if t.Contact.Email == "" || s.core.Sealer == nil {
		return nil
	}
	tmpl := map[string]string{TriggerTicketCreated: TemplateTicketCreated, TriggerComment: TemplateTicketUpdate, TriggerResolved: TemplateTicketResolved}[trigger]
	data := emailData{Ticket: t, Name: t.Contact.Name}
	if c != nil {
		data.Comments = []Comment{*c}
	}
	subject, body, err := renderEmail(tmpl, data, "")
	if err != nil {
		return err
	}
	m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: t.Contact.Email, Template: "support_" + tmpl, Subject: subject, Body: body, Role: "support"}
	_, err = s.queue(tx, t, m, NotifyRecipient{Email: t.Contact.Email, Name: t.Contact.Name, Role: "contact"}, trigger, actorID(p))
	return err
}

// ListTicketNotifications returns a page of the messages a ticket visible
// to p sent (provider staff only), oldest first, with their delivery from
// the outbox. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR (sort).
func (s *Store) ListTicketNotifications(ctx context.Context, p *models.Principal, ticketID string, page models.PageRequest) ([]TicketNotification, int64, error) {
	if !isStaff(p) {
		return nil, 0, models.Errorf(models.CodeInsufficientPermissions, "ticket notifications are provider staff's")
	}
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, 0, err
	}
	db := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment))
	q := db.Model(&TicketNotification{}).Where("ticket_id = ?", t.ID)
	if len(page.Sort) == 0 {
		page.Sort = []models.SortField{{Field: "created_at"}}
	}
	var out []TicketNotification
	total, err := models.Paginate(q, page, models.SortFields{"created_at": "created_at"}, &out)
	if err != nil || len(out) == 0 {
		return out, total, err
	}
	ids := make([]string, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	var rows []eventlog.ContactNotification
	if err := db.Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, 0, dbErr(err)
	}
	for i := range out {
		for j := range rows {
			if rows[j].ID == out[i].ID {
				out[i].Delivery = &rows[j]
			}
		}
	}
	return out, total, nil
}
