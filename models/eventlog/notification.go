package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Notification channels.
const (
	ChannelEmail = "email"
	ChannelSMS   = "sms"
)

// Delivery rules of the notification outbox: a message is tried at most
// NotificationMaxAttempts times, waiting twice as long after each failure
// (starting at NotificationRetryBase, at most NotificationRetryMax).
const (
	NotificationMaxAttempts = 8
	NotificationRetryBase   = 5 * time.Second
	NotificationRetryMax    = 10 * time.Minute
)

// Message is a notification to queue: a rendered subject and body for one
// recipient on one channel.
type Message struct {
	Channel   string // email or sms
	Recipient string // e-mail address or E.164 phone number
	Template  string // what the message is about, e.g. mfa_code
	Subject   string
	Body      string // sealed at rest, wiped after sending
	Role      string // who the recipient is: user, technical, billing
}

// QueueMessage writes a message to the notification outbox for scope's
// organization and environment; the notify dispatcher sends it.
// Errors: VALIDATION_ERROR (unknown channel, no recipient), INTERNAL_ERROR.
func (s *Store) QueueMessage(ctx context.Context, scope models.Scope, m Message) (*ContactNotification, error) {
	return QueueMessage(s.In(ctx, scope), s.Sealer, m)
}

// QueueMessageIn writes a message to the notification outbox inside tx, a
// transaction scoped to the tenant the message belongs to, so that it is
// sent only if what it reports is committed. Errors: VALIDATION_ERROR,
// INTERNAL_ERROR (no sealer configured, database).
func (s *Store) QueueMessageIn(tx *gorm.DB, m Message) (*ContactNotification, error) {
	return QueueMessage(tx, s.Sealer, m)
}

// HTMLBodyPrefix starts a message body rendered from an HTML template: the
// e-mail sender sends such a body as text/html, any other as text/plain.
const HTMLBodyPrefix = "<!DOCTYPE html>"

// Notification statuses of an outbox row.
const (
	NotificationQueued = "queued"
	NotificationSent   = "sent"
	NotificationFailed = "failed"
)

// DeliveryStatus is queued while the message waits (or is retried), sent
// once handed to its channel, failed after NotificationMaxAttempts.
func (n *ContactNotification) DeliveryStatus() string {
	switch {
	case n.SentAt != nil:
		return NotificationSent
	case n.Attempts >= NotificationMaxAttempts:
		return NotificationFailed
	}
	return NotificationQueued
}

// QueueMessage validates m and writes it to the notification outbox inside
// tx (a one-time code body is sealed). Errors: VALIDATION_ERROR.
func QueueMessage(tx *gorm.DB, sealer *models.Sealer, m Message) (*ContactNotification, error) {
	var v models.Validator
	v.Check(m.Channel == ChannelEmail || m.Channel == ChannelSMS, "channel", "must be email or sms")
	v.Check(strings.TrimSpace(m.Recipient) != "", "recipient", "is required")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if sealer == nil {
		return nil, models.Internal(errors.New("queued messages need SECRETS_KEY (no sealer configured)"))
	}
	if m.Role == "" {
		m.Role = "user"
	}
	id := models.NewID(PrefixNotification)
	row := &ContactNotification{ID: id, Channel: m.Channel, Role: m.Role, Recipient: m.Recipient,
		Template: m.Template, Subject: m.Subject, BodySealed: sealer.Seal(models.BindNotification(id), m.Body)}
	if err := tx.Create(row).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return row, nil
}

// PendingNotifications returns up to limit unsent messages that are due,
// oldest first, across every tenant (the dispatcher's view). Errors: INTERNAL_ERROR.
func (s *Store) PendingNotifications(ctx context.Context, limit int) ([]ContactNotification, error) {
	var out []ContactNotification
	err := s.In(ctx, models.SystemScope()).
		Where("sent_at IS NULL AND attempts < ? AND (next_attempt_at IS NULL OR next_attempt_at <= ?)", NotificationMaxAttempts, s.Now()).
		Order("created_at, id").Limit(limit).Find(&out).Error
	return out, models.DBErr(err)
}

// NotificationText returns the subject and body to send for n: the sealed
// body of a one-time message, or a plain rendering of a contact
// notification's template and data. Errors: INTERNAL_ERROR (unsealing).
func (s *Store) NotificationText(n *ContactNotification) (subject, body string, err error) {
	if n.BodySealed != "" {
		if s.Sealer == nil {
			return "", "", models.Internal(errors.New("no sealer configured"))
		}
		body, err := s.Sealer.Open(models.BindNotification(n.ID), n.BodySealed)
		if err != nil {
			return "", "", models.Internal(err)
		}
		return n.Subject, body, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", n.Subject)
	keys := make([]string, 0, len(n.Data))
	for k := range n.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %v\n", strings.ReplaceAll(k, "_", " "), n.Data[k])
	}
	if n.ServiceID != "" {
		fmt.Fprintf(&b, "\nService: %s\n", n.ServiceID)
	}
	return n.Subject, b.String(), nil
}

// MarkNotificationSent records that a message was handed to its channel and
// wipes its sealed body (a one-time code is not kept once sent).
// Errors: INTERNAL_ERROR.
func (s *Store) MarkNotificationSent(ctx context.Context, id string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&ContactNotification{}).Where("id = ? AND sent_at IS NULL", id).
		Updates(map[string]any{"sent_at": s.Now(), "body_sealed": "", "last_error": ""}).Error)
}

// MarkNotificationFailed records a failed attempt and when to try again
// (exponential backoff); after NotificationMaxAttempts it is not tried again.
// Errors: INTERNAL_ERROR.
func (s *Store) MarkNotificationFailed(ctx context.Context, n *ContactNotification, cause error) error {
	delay := NotificationRetryBase << min(n.Attempts, 16)
	if delay > NotificationRetryMax || delay <= 0 {
		delay = NotificationRetryMax
	}
	msg := cause.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&ContactNotification{}).Where("id = ?", n.ID).
		Updates(map[string]any{"attempts": n.Attempts + 1, "last_error": msg, "next_attempt_at": s.Now().Add(delay)}).Error)
}

// TemplateMFACode marks a message that carries a one-time verification code.
const TemplateMFACode = "mfa_code"

// Inbox is what the portal shows a user of the messages addressed to them:
// the body of a message is shown while it waits in the outbox (no mail
// server configured), never after it was sent. A one-time code is never
// shown at all: it protects the very session that would read it, so the
// inbox says only that a code was sent, when, and to a masked address.
type Inbox struct {
	ID        string
	Channel   string
	Recipient string // masked for a one-time code
	Subject   string
	Body      string
	// CodeHidden says the message carries a one-time code, not shown.
	CodeHidden bool
	Status     string // queued, sent or failed
	CreatedAt  time.Time
}

// UserInbox returns the newest messages of an organization, live and
// sandbox alike, addressed to any of recipients, newest first.
// Errors: INTERNAL_ERROR.
func (s *Store) UserInbox(ctx context.Context, orgID string, recipients []string, limit int) ([]Inbox, error) {
	var rows []ContactNotification
	for _, env := range []models.Environment{models.EnvLive, models.EnvTest} {
		var part []ContactNotification
		err := s.In(ctx, models.TenantScope(orgID, env)).Where("recipient IN ?", recipients).Order("created_at DESC, id DESC").Limit(limit).Find(&part).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		rows = append(rows, part...)
	}
	slices.SortFunc(rows, func(a, b ContactNotification) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	rows = rows[:min(len(rows), limit)]
	out := make([]Inbox, 0, len(rows))
	for i := range rows {
		n := &rows[i]
		item := Inbox{ID: n.ID, Channel: n.Channel, Recipient: n.Recipient, Subject: n.Subject, CreatedAt: n.CreatedAt, Status: n.DeliveryStatus()}
		if n.Template == TemplateMFACode {
			item.Recipient, item.CodeHidden = MaskRecipient(n.Recipient), true
		} else if n.SentAt == nil {
			if _, body, err := s.NotificationText(n); err == nil {
				item.Body = body
			}
		}
		out = append(out, item)
	}
	return out, nil
}

// ContactNotification is a message in the notification outbox: an e-mail to
// one of a service's contacts, written in the same transaction as the change
// it reports (provisioned, failed, maintenance scheduled, decommissioned), or
// a one-time code to a user (MFA by e-mail or SMS, ServiceID empty). The
// notify package sends it (SentAt); see models/notification.go.
type ContactNotification struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	ServiceID   string         `gorm:"size:40;not null;index"`
	OperationID string         `gorm:"size:64;index"`
	Channel     string         `gorm:"size:10;not null"`
	Role        string         `gorm:"size:20;not null"`
	Recipient   string         `gorm:"size:320;not null"`
	Template    string         `gorm:"size:60;not null"`
	Subject     string         `gorm:"size:300;not null"`
	Data        map[string]any `gorm:"serializer:json;type:text"`
	// BodySealed is a message rendered at write time and sealed at rest
	// (one-time codes); it is wiped once the message is sent.
	BodySealed    string     `gorm:"type:text"`
	Attempts      int        `gorm:"not null;default:0"`
	LastError     string     `gorm:"size:500"`
	NextAttemptAt *time.Time `gorm:"index"`
	CreatedAt     time.Time
	SentAt        *time.Time `gorm:"index"`
}

// PrefixNotification starts the ids of notifications in the outbox.
const PrefixNotification = "ntf"

// MaskRecipient hides most of an e-mail address or phone number.
func MaskRecipient(to string) string {
	if local, domain, ok := strings.Cut(to, "@"); ok {
		if len(local) > 1 {
			local = local[:1] + strings.Repeat("*", min(len(local)-1, 6))
		}
		return local + "@" + domain
	}
	if len(to) > 4 {
		return strings.Repeat("*", len(to)-4) + to[len(to)-4:]
	}
	return to
}
