package support

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Bounds of a manual escalation.
const (
	MaxEscalationLevel  = 10
	MaxEscalationReason = 500
	MaxEscalationNotify = 20
	MaxEscalationNotes  = 5000
)

// EscalateInput is the escalation body (spec 2.4).
type EscalateInput struct {
	Level    int
	Reason   string
	Notify   []string
	Metadata map[string]any
	Comments string
}

// EscalateResult is what an escalation changed: the ticket, the recorded
// escalation, the internal comment made of comments (if any) and the
// messages queued to the notify list.
type EscalateResult struct {
	Ticket        *Ticket
	Escalation    *Escalation
	Comment       *Comment
	Notifications []TicketNotification
}

// EscalateTicket escalates a ticket visible to p (provider staff with
// support:write): the status becomes escalated (from open, in_progress or
// pending; an escalated ticket stays so), the level becomes in.Level (it
// must be above the current level) with in.Reason, the comments become an
// internal note, every address of in.Notify is e-mailed, and
// ticket.updated and ticket.escalated are written, all in one
// transaction. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND,
// VALIDATION_ERROR, INVALID_STATE_TRANSITION.
func (s *Store) EscalateTicket(ctx context.Context, p *models.Principal, ticketID string, in EscalateInput) (*EscalateResult, error) {
	if !isStaff(p) || !p.Can(PermissionWrite) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "escalating a ticket needs provider staff with %s", PermissionWrite)
	}
	cur, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, err
	}
	var v models.Validator
	in.Reason = strings.TrimSpace(in.Reason)
	v.Check(in.Level >= 1 && in.Level <= MaxEscalationLevel, "escalation_level", fmt.Sprintf("must be a whole number from 1 to %d", MaxEscalationLevel))
	v.Check(in.Level > cur.EscalationLevel || in.Level < 1, "escalation_level", fmt.Sprintf("must be above the ticket's current level, %d", cur.EscalationLevel))
	v.Check(in.Reason != "", "reason", "is required")
	checkLen(&v, "reason", in.Reason, MaxEscalationReason)
	checkLen(&v, "comments", in.Comments, MaxEscalationNotes)
	v.Check(len(in.Notify) <= MaxEscalationNotify, "notify", fmt.Sprintf("must have at most %d addresses", MaxEscalationNotify))
	for i, e := range in.Notify {
		v.Check(ValidEmail(e), fmt.Sprintf("notify[%d]", i), "must be an e-mail address such as noc-manager@example.com")
	}
	checkMetadata(&v, "metadata", in.Metadata)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if len(in.Notify) > 0 && s.core.Sealer == nil {
		return nil, models.Errorf(models.CodeInternal, "messages cannot be sent: the platform has no SECRETS_KEY")
	}
	now := s.now()
	res := &EscalateResult{}
	err = s.core.Tx(ctx, models.TenantScope(cur.OrganizationID, cur.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", cur.ID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		if in.Level <= t.EscalationLevel { // raised meanwhile
			return models.Invalid(models.FieldIssue{Field: "escalation_level", Issue: fmt.Sprintf("must be above the ticket's current level, %d", t.EscalationLevel)})
		}
		c := &change{tx: tx, t: &t, p: p, now: now}
		if t.Status != StatusEscalated {
			if err := c.setStatus(StatusEscalated); err != nil {
				return err
			}
		}
		c.escalate(in.Reason, in.Level)
		if strings.TrimSpace(in.Comments) != "" {
			cm, _, err := s.newComment(ctx, p, &t, CommentInput{Content: in.Comments, Type: CommentInternalNote, Visibility: VisibilityInternal}, now)
			if err != nil {
				return err
			}
			if err := tx.Create(cm).Error; err != nil {
				return dbErr(err)
			}
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(EventCommentAdded, t.ID, cm.EventData(&t))); err != nil {
				return err
			}
			res.Comment = cm
		}
		if err := c.flush(); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&Escalation{}).Where("ticket_id = ? AND cycle = ? AND metric = ?", t.ID, t.SLACycle, escalationManualMetric).Count(&n).Error; err != nil {
			return dbErr(err)
		}
		meta, _ := json.Marshal(in.Metadata)
		e := &Escalation{ID: models.NewID(PrefixEscalation), TicketID: t.ID, Cycle: max(t.SLACycle, 1), Metric: escalationManualMetric,
			Step: escalationManualStep, Repeat: int(n), Action: ActionEscalate, Level: in.Level, Reason: in.Reason,
			Detail: models.Truncate(string(meta), 1000), ActorID: actorID(p), FiredAt: now, CreatedAt: now}
		if err := tx.Create(e).Error; err != nil {
			return dbErr(err)
		}
		res.Escalation = e
		msg := fmt.Sprintf("Ticket %s was escalated to level %d: %s", t.Number, in.Level, in.Reason)
		subject := fmt.Sprintf("[%s] Escalated to level %d: %s", t.Number, in.Level, t.Title)
		for _, addr := range in.Notify {
			_, body, err := renderEmail(TemplateCustom, emailData{Ticket: &t, Variables: map[string]string{"message": msg}}, subject)
			if err != nil {
				return err
			}
			m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: addr, Template: "support_escalation", Subject: subject, Body: body, Role: "support"}
			nt, err := s.queue(tx, &t, m, NotifyRecipient{Email: addr, Role: "escalation"}, TriggerManual, actorID(p))
			if err != nil {
				return err
			}
			res.Notifications = append(res.Notifications, *nt)
		}
		res.Ticket = &t
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	s.fillAgents(ctx, []*Ticket{res.Ticket})
	return res, nil
}
