package support

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// PrefixFeedback starts feedback ids.
const PrefixFeedback = "fdbk"

// Bounds of a feedback.
const (
	MinRating          = 1
	MaxRating          = 5
	MaxFeedbackComment = 2000
)

// Feedback is a customer's rating of how a resolved or closed ticket was
// handled: 1 (poor) to 5 (excellent), with an optional comment. A ticket
// has at most one; it belongs to the ticket's organization and
// environment.
type Feedback struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID   string    `gorm:"size:40;not null;uniqueIndex"`
	CustomerID string    `gorm:"size:40;not null;index"`
	Rating     int       `gorm:"not null"`
	Comment    string    `gorm:"size:2000"`
	CreatedBy  string    `gorm:"size:40;not null"`
	CreatedAt  time.Time `gorm:"not null;index"`
}

// TableName is the ticket feedback table.
func (Feedback) TableName() string { return "support_feedback" }

// FeedbackInput is the body of a feedback.
type FeedbackInput struct {
	TicketID string
	Rating   int
	Comment  string
}

// SubmitFeedback stores the feedback of p, a customer of the ticket's
// organization, on a resolved or closed ticket. Errors: VALIDATION_ERROR,
// INSUFFICIENT_PERMISSIONS (provider staff), NOT_FOUND (a ticket p does
// not see), INVALID_STATE_TRANSITION (a ticket not resolved or closed),
// ALREADY_EXISTS (the ticket has feedback).
func (s *Store) SubmitFeedback(ctx context.Context, p *models.Principal, in FeedbackInput) (*Feedback, error) {
	var v models.Validator
	in.TicketID, in.Comment = strings.TrimSpace(in.TicketID), strings.TrimSpace(in.Comment)
	v.Check(in.TicketID != "", "ticket_id", "is required")
	checkLen(&v, "ticket_id", in.TicketID, MaxShort)
	v.Check(in.Rating >= MinRating && in.Rating <= MaxRating, "rating", "must be a whole number from 1 to 5")
	checkLen(&v, "comment", in.Comment, MaxFeedbackComment)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if isStaff(p) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "feedback is given by the ticket's customer, not by provider staff")
	}
	t, err := s.GetTicket(ctx, p, in.TicketID)
	if err != nil {
		return nil, err
	}
	if t.Status != StatusResolved && t.Status != StatusClosed {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "feedback is accepted once the ticket is resolved or closed; it is %s", t.Status).
			WithDetail("status", t.Status)
	}
	f := &Feedback{ID: models.NewID(PrefixFeedback), TicketID: t.ID, CustomerID: t.CustomerID, Rating: in.Rating, Comment: in.Comment,
		CreatedBy: actorID(p), CreatedAt: s.now()}
	// The unique index on ticket_id decides between concurrent submissions.
	if err := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Create(f).Error; err != nil {
		if models.IsUniqueViolation(err) {
			return nil, feedbackExists(t.ID)
		}
		return nil, dbErr(err)
	}
	return f, nil
}

func feedbackExists(ticketID string) error {
	return models.Errorf(models.CodeAlreadyExists, "this ticket already has feedback").WithDetail("ticket_id", ticketID)
}

// TicketFeedback returns the feedback of a ticket visible to p, or nil
// when none was given. Errors: NOT_FOUND.
func (s *Store) TicketFeedback(ctx context.Context, p *models.Principal, ticketID string) (*Feedback, error) {
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, err
	}
	var f Feedback
	err = s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Where("ticket_id = ?", t.ID).Take(&f).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, dbErr(err)
	}
	return &f, nil
}
