package support

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Comment visibilities: customer comments are seen by the customer and
// provider staff; internal ones by provider staff only.
const (
	VisibilityCustomer = "customer"
	VisibilityInternal = "internal"
)

// Comment types.
const (
	CommentComment        = "comment"
	CommentCustomerUpdate = "customer_update"
	CommentInternalNote   = "internal_note"
	CommentResolution     = "resolution"
)

// CommentTypes returns the comment types.
func CommentTypes() []string {
	return []string{CommentComment, CommentCustomerUpdate, CommentInternalNote, CommentResolution}
}

// Comment is a message on a ticket. Its author is always the caller who
// wrote it (a user, or a credential when no person stands behind it).
type Comment struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID    string         `gorm:"size:40;not null;index"`
	Content     string         `gorm:"type:text;not null"`
	Type        string         `gorm:"size:32;not null"`
	Visibility  string         `gorm:"size:16;not null"`
	AuthorType  string         `gorm:"size:16;not null"`
	AuthorID    string         `gorm:"size:40;not null"`
	AuthorName  string         `gorm:"size:200"`
	AuthorEmail string         `gorm:"size:320"`
	Metadata    map[string]any `gorm:"serializer:json;type:text"`
	CreatedAt   time.Time      `gorm:"not null;index"`

	// Attachments are the comment's files (filled by AddComment and
	// ListComments).
	Attachments []Attachment `gorm:"-"`
}

// TableName is the comments table.
func (Comment) TableName() string { return "support_comments" }

// EventData is the data of comment.added: data.ticket and data.comment
// (the content of internal comments is left out).
func (c *Comment) EventData(t *Ticket) map[string]any {
	data := t.EventData()
	cm := map[string]any{"id": c.ID, "type": c.Type, "visibility": c.Visibility, "author_type": c.AuthorType, "author_id": c.AuthorID}
	if c.Visibility == VisibilityCustomer {
		cm["content"] = c.Content
	}
	data["comment"] = cm
	return data
}

// CommentInput is the body of a comment.
type CommentInput struct {
	Content    string
	Type       string // default comment
	Visibility string // default customer
	Metadata   map[string]any
	// Attachments are the files sent with the comment (see
	// prepareAttachments).
	Attachments []AttachmentInput
}

// newComment validates in and returns the comment p writes on t, with
// its attachments decoded.
func (s *Store) newComment(ctx context.Context, p *models.Principal, t *Ticket, in CommentInput, now time.Time) (*Comment, []upload, error) {
	in.Content = strings.TrimSpace(in.Content)
	if in.Type == "" {
		in.Type = CommentComment
	}
	if in.Visibility == "" {
		in.Visibility = VisibilityCustomer
	}
	var v models.Validator
	v.Check(in.Content != "", "content", "is required")
	checkLen(&v, "content", in.Content, MaxComment)
	v.Check(slices.Contains(CommentTypes(), in.Type), "type", "must be one of "+joinList(CommentTypes()))
	v.Check(in.Visibility == VisibilityCustomer || in.Visibility == VisibilityInternal, "visibility", "must be customer or internal")
	checkMetadata(&v, "metadata", in.Metadata)
	ups, err := prepareAttachments(&v, in.Attachments, actorID(p), now)
	if err != nil {
		return nil, nil, err
	}
	if !isStaff(p) && (in.Visibility == VisibilityInternal || in.Type == CommentInternalNote) {
		return nil, nil, models.Errorf(models.CodeInsufficientPermissions, "internal comments are for provider staff only")
	}
	if in.Type == CommentInternalNote && in.Visibility != VisibilityInternal {
		return nil, nil, models.Invalid(models.FieldIssue{Field: "visibility", Issue: "must be internal for an internal_note"})
	}
	c := &Comment{ID: models.NewID(models.PrefixComment), TicketID: t.ID, Content: in.Content, Type: in.Type, Visibility: in.Visibility,
		AuthorType: actorType(p), AuthorID: actorID(p), Metadata: in.Metadata, CreatedAt: now}
	if u := s.caller(ctx, p); u != nil {
		c.AuthorName, c.AuthorEmail = u.Name, u.Email
	}
	return c, ups, nil
}

// CommentResult is a new comment and the ticket after it.
type CommentResult struct {
	Comment *Comment
	Ticket  *Ticket
	// Reopened is true when a customer's comment reopened a resolved ticket.
	Reopened bool
}

// AddComment writes a comment by p on a ticket visible to p, and
// comment.added in the same transaction. Internal comments are provider
// staff's; a closed ticket takes no comments; a customer's comment on a
// resolved ticket reopens it (status open, ticket.updated); a provider
// staff's customer-visible comment is the ticket's first response if there
// was none, and is sent to the ticket's contact e-mail (template
// ticket_update) in the same transaction. Errors: NOT_FOUND, VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS,
// INVALID_STATE_TRANSITION.
func (s *Store) AddComment(ctx context.Context, p *models.Principal, ticketID string, in CommentInput) (*CommentResult, error) {
	cur, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	c, ups, err := s.newComment(ctx, p, cur, in, now)
	if err != nil {
		return nil, err
	}
	res := &CommentResult{Comment: c}
	undo, err := s.storeBlobs(ctx, ups)
	if err != nil {
		return nil, err
	}
	err = s.core.Tx(ctx, models.TenantScope(cur.OrganizationID, cur.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", cur.ID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		if t.Status == StatusClosed {
			return models.Errorf(models.CodeInvalidStateTransition, "ticket %s is closed and takes no comments", t.ID).
				WithDetail("status", t.Status)
		}
		if err := tx.Create(c).Error; err != nil {
			return dbErr(err)
		}
		if c.Attachments, err = recordAttachments(tx, ups, t.ID, c.ID); err != nil {
			return err
		}
		ch := &change{tx: tx, t: &t, p: p, now: now}
		if !isStaff(p) && t.Status == StatusResolved {
			if err := ch.setStatus(StatusOpen); err != nil {
				return err
			}
			res.Reopened = true
		}
		if isStaff(p) && c.Visibility == VisibilityCustomer && t.RespondedAt == nil {
			t.RespondedAt = &now // the first response: no history entry of its own
			if err := tx.Model(&t).Update("responded_at", now).Error; err != nil {
				return dbErr(err)
			}
		}
		if len(ch.changed) > 0 {
			if err := ch.flush(); err != nil {
				return err
			}
		}
		res.Ticket = &t
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(EventCommentAdded, t.ID, c.EventData(&t))); err != nil {
			return err
		}
		if isStaff(p) && c.Visibility == VisibilityCustomer {
			return s.notifyContact(tx, &t, TriggerComment, p, c)
		}
		return nil
	})
	if err != nil {
		undo()
		return nil, models.AsError(err)
	}
	return res, nil
}

// ListComments returns the comments of a ticket visible to p, oldest
// first; customers never see internal ones. Errors: NOT_FOUND,
// VALIDATION_ERROR (sort).
func (s *Store) ListComments(ctx context.Context, p *models.Principal, ticketID string, page models.PageRequest) ([]Comment, int64, error) {
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, 0, err
	}
	q := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Model(&Comment{}).Where("ticket_id = ?", t.ID)
	if !isStaff(p) {
		q = q.Where("visibility = ?", VisibilityCustomer)
	}
	if len(page.Sort) == 0 {
		page.Sort = []models.SortField{{Field: "created_at"}}
	}
	var out []Comment
	total, err := models.Paginate(q, page, models.SortFields{"created_at": "created_at"}, &out)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, len(out))
	for i := range out {
		ids[i] = out[i].ID
	}
	atts := s.attachmentsOf(ctx, models.TenantScope(t.OrganizationID, t.Environment), ids)
	for i := range out {
		out[i].Attachments = atts[out[i].ID]
	}
	return out, total, nil
}
