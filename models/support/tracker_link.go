package support

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// PrefixTrackerLink starts the id of a ticket's link to a tracker issue.
const PrefixTrackerLink = "trkl"

// PrefixTrackerComment starts the id of a comment's mark (trkc_).
const PrefixTrackerComment = "trkc"

// ActorTracker is the system actor of the changes a tracker integration
// makes to a ticket (metadata.vendor_ticket).
const ActorTracker = "tracker"

// Directions of a synced comment.
const (
	TrackerCommentOut = "out" // ours, posted to the tracker
	TrackerCommentIn  = "in"  // the tracker's, imported onto the ticket
)

// TrackerLabel is the label of the issue of a ticket: it finds the issue
// again when an answer to its creation was lost.
func TrackerLabel(ticketID string) string { return "tp-" + ticketID }

// TrackerCommentRef is the reference that ends the text of a comment we
// post: it finds the posted comment again when the answer was lost, and
// keeps it from being imported back.
func TrackerCommentRef(commentID string) string { return "[tp-ref " + commentID + "]" }

// TrackerLink links a ticket to the tracker issue an integration made (or
// found) for it: one per integration and ticket, recorded before the
// activity that made the issue returns.
type TrackerLink struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	IntegrationID    string     `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_links_ticket,priority:1"`
	TicketID         string     `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_links_ticket,priority:2"`
	IssueKey         string     `gorm:"size:100;not null"`
	IssueID          string     `gorm:"size:40"`
	Priority         string     `gorm:"size:60"`
	Adopted          bool       `gorm:"not null;default:false"` // found by its label rather than created by this call
	RemoteStatus     string     `gorm:"size:100"`
	StatusCheckedAt  *time.Time ``
	CommentsPolledAt *time.Time ``
	CreatedAt        time.Time  `gorm:"not null;index"`
	UpdatedAt        time.Time
}

// TableName is the tracker links table.
func (TrackerLink) TableName() string { return "support_tracker_links" }

// TrackerComment marks a comment synced by an integration: ours posted
// (out) or the tracker's imported (in); unique per integration on both our
// comment id and the tracker's, so neither is synced twice.
type TrackerComment struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	IntegrationID string    `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_comments_local,priority:1;uniqueIndex:ux_support_tracker_comments_remote,priority:1"`
	TicketID      string    `gorm:"size:40;not null;index"`
	CommentID     string    `gorm:"size:64;not null;uniqueIndex:ux_support_tracker_comments_local,priority:2"`
	RemoteID      string    `gorm:"size:64;not null;uniqueIndex:ux_support_tracker_comments_remote,priority:2"`
	Direction     string    `gorm:"size:8;not null"`
	CreatedAt     time.Time `gorm:"not null"`
}

// TableName is the synced comments table.
func (TrackerComment) TableName() string { return "support_tracker_comments" }

// TrackerPlan is what a sync round of an integration has to do.
type TrackerPlan struct {
	// Stop is true when the integration was deleted or paused.
	Stop bool `json:"stop"`
	// TicketIDs are tickets created since the integration that have no
	// issue yet (when it creates issues).
	TicketIDs []string `json:"ticket_ids,omitempty"`
	// CommentIDs are customer-visible comments of linked tickets not yet
	// posted nor imported (when it syncs comments).
	CommentIDs []string `json:"comment_ids,omitempty"`
	// LinkIDs are the links of tickets not closed, least recently polled first.
	LinkIDs []string `json:"link_ids,omitempty"`
}

// PlanTrackerSync answers what integration id of scope has to do, at most
// max items of each kind. Errors: INTERNAL_ERROR.
func (s *Store) PlanTrackerSync(ctx context.Context, scope models.Scope, id string, max int) (*TrackerPlan, error) {
	c, err := s.TrackerIntegrationIn(ctx, scope, id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return &TrackerPlan{Stop: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if !c.Active {
		return &TrackerPlan{Stop: true}, nil
	}
	db := s.core.In(ctx, scope)
	plan := &TrackerPlan{}
	linked := db.Session(&gorm.Session{NewDB: true}).Table("support_tracker_links").Select("ticket_id").Where("integration_id = ?", id)
	if c.CreateIssues {
		err := db.Model(&Ticket{}).Where("created_at >= ? AND id NOT IN (?)", c.CreatedAt, linked).
			Order("created_at, id").Limit(max).Pluck("id", &plan.TicketIDs).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
	}
	if c.SyncComments {
		marked := db.Session(&gorm.Session{NewDB: true}).Table("support_tracker_comments").Select("comment_id").Where("integration_id = ?", id)
		err := db.Model(&Comment{}).Where("visibility = ? AND ticket_id IN (?) AND id NOT IN (?)", VisibilityCustomer, linked, marked).
			Order("created_at, id").Limit(max).Pluck("id", &plan.CommentIDs).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
	}
	open := db.Session(&gorm.Session{NewDB: true}).Table("support_tickets").Select("id").Where("status <> ?", StatusClosed)
	err = db.Model(&TrackerLink{}).Where("integration_id = ? AND ticket_id IN (?)", id, open).
		Order("CASE WHEN status_checked_at IS NULL THEN 0 ELSE 1 END, status_checked_at, id").Limit(max).Pluck("id", &plan.LinkIDs).Error
	if err != nil {
		return nil, models.DBErr(err)
	}
	return plan, nil
}

// TicketIn returns a ticket of scope. Errors: NOT_FOUND.
func (s *Store) TicketIn(ctx context.Context, scope models.Scope, id string) (*Ticket, error) {
	var t Ticket
	err := s.core.In(ctx, scope).Where("id = ?", id).Take(&t).Error
	return &t, notFoundOr(err, "ticket")
}

// TrackerLinkOf returns the link of a ticket to an integration's issue.
// Errors: NOT_FOUND.
func (s *Store) TrackerLinkOf(ctx context.Context, scope models.Scope, integrationID, ticketID string) (*TrackerLink, error) {
	var l TrackerLink
	err := s.core.In(ctx, scope).Where("integration_id = ? AND ticket_id = ?", integrationID, ticketID).Take(&l).Error
	return &l, notFoundOr(err, "tracker link")
}

// TrackerLinkIn returns a link by id. Errors: NOT_FOUND.
func (s *Store) TrackerLinkIn(ctx context.Context, scope models.Scope, id string) (*TrackerLink, error) {
	var l TrackerLink
	err := s.core.In(ctx, scope).Where("id = ?", id).Take(&l).Error
	return &l, notFoundOr(err, "tracker link")
}

// RecordTrackerLink stores l (integration, ticket, issue key and id,
// priority) unless the ticket already has a link to the integration, and
// returns the stored one: the first recorded wins. When it stores it and
// the ticket's metadata.vendor_ticket is empty, it sets it to the issue
// key (a history entry by the system actor tracker, and ticket.updated).
// Errors: NOT_FOUND (ticket), INTERNAL_ERROR.
func (s *Store) RecordTrackerLink(ctx context.Context, scope models.Scope, l TrackerLink) (*TrackerLink, error) {
	now := s.now()
	l.ID, l.CreatedAt, l.UpdatedAt = models.NewID(PrefixTrackerLink), now, now
	err := s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", l.TicketID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&l)
		if res.Error != nil {
			return dbErr(res.Error)
		}
		if res.RowsAffected == 0 || t.VendorTicket != "" {
			return nil
		}
		ch := &change{tx: tx, t: &t, p: &models.Principal{ID: ActorTracker}, now: now, system: ActorTracker}
		key := models.Truncate(l.IssueKey, MaxVendorTicket)
		ch.set("vendor_ticket", t.VendorTicket, key, false, func() { t.VendorTicket = key })
		return ch.flush()
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.TrackerLinkOf(ctx, scope, l.IntegrationID, l.TicketID)
}

// SetTrackerLinkStatus records the issue status read from the tracker
// (and, when polled, that its comments were read).
func (s *Store) SetTrackerLinkStatus(ctx context.Context, scope models.Scope, id, status string, polled bool) error {
	now := s.now()
	upd := map[string]any{"remote_status": models.Truncate(status, 100), "status_checked_at": now, "updated_at": now}
	if polled {
		upd["comments_polled_at"] = now
	}
	return dbErr(s.core.In(ctx, scope).Model(&TrackerLink{}).Where("id = ?", id).Updates(upd).Error)
}

// SetTrackerLinkPriority records the tracker priority last sent for a link.
func (s *Store) SetTrackerLinkPriority(ctx context.Context, scope models.Scope, id, priority string) error {
	return dbErr(s.core.In(ctx, scope).Model(&TrackerLink{}).Where("id = ?", id).
		Updates(map[string]any{"priority": priority, "updated_at": s.now()}).Error)
}

// ListTrackerLinks returns a page of the links of an integration visible
// to p, newest first. Errors: NOT_FOUND (integration), VALIDATION_ERROR (sort).
func (s *Store) ListTrackerLinks(ctx context.Context, p *models.Principal, integrationID string, page models.PageRequest) ([]TrackerLink, int64, error) {
	c, err := s.GetTrackerIntegration(ctx, p, integrationID)
	if err != nil {
		return nil, 0, err
	}
	if len(page.Sort) == 0 {
		page.Sort = []models.SortField{{Field: "created_at", Desc: true}}
	}
	var out []TrackerLink
	total, err := models.Paginate(s.core.In(ctx, c.Scope()).Model(&TrackerLink{}).Where("integration_id = ?", c.ID), page,
		models.SortFields{"created_at": "created_at"}, &out)
	return out, total, err
}

// TrackerCommentMark returns the tracker comment id a comment was posted
// as, or the one it was imported from ("" when neither).
func (s *Store) TrackerCommentMark(ctx context.Context, scope models.Scope, integrationID, commentID string) (string, error) {
	var ids []string
	err := s.core.In(ctx, scope).Model(&TrackerComment{}).Where("integration_id = ? AND comment_id = ?", integrationID, commentID).
		Limit(1).Pluck("remote_id", &ids).Error
	if err != nil || len(ids) == 0 {
		return "", dbErr(err)
	}
	return ids[0], nil
}

// CommentIn returns a comment of scope. Errors: NOT_FOUND.
func (s *Store) CommentIn(ctx context.Context, scope models.Scope, id string) (*Comment, error) {
	var c Comment
	err := s.core.In(ctx, scope).Where("id = ?", id).Take(&c).Error
	return &c, notFoundOr(err, "comment")
}

// MarkTrackerComment records that our comment was posted as the tracker's
// remoteID (direction out); a second mark of either is ignored.
func (s *Store) MarkTrackerComment(ctx context.Context, scope models.Scope, integrationID, ticketID, commentID, remoteID string) error {
	row := TrackerComment{ID: models.NewID(PrefixTrackerComment), IntegrationID: integrationID, TicketID: ticketID, CommentID: commentID,
		RemoteID: remoteID, Direction: TrackerCommentOut, CreatedAt: s.now()}
	return dbErr(s.core.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error)
}

// TrackerRemoteIDs returns the tracker comment ids of a ticket already
// synced by an integration (either way).
func (s *Store) TrackerRemoteIDs(ctx context.Context, scope models.Scope, integrationID, ticketID string) (map[string]bool, error) {
	var ids []string
	err := s.core.In(ctx, scope).Model(&TrackerComment{}).Where("integration_id = ? AND ticket_id = ?", integrationID, ticketID).Pluck("remote_id", &ids).Error
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, dbErr(err)
}

// RemoteComment is a tracker comment to import.
type RemoteComment struct {
	ID     string
	Author string
	Body   string
}

// ImportTrackerComment adds the tracker comment rc to the ticket of link
// l as a customer-visible comment authored by the integration (author type
// agent, metadata.tracker {integration_id, issue_key, comment_id}) with
// comment.added, unless the integration imported or posted it before; it
// reports whether it added it. A closed ticket takes none (the comment is
// marked all the same, so it is not tried again). Errors: INTERNAL_ERROR.
func (s *Store) ImportTrackerComment(ctx context.Context, scope models.Scope, l *TrackerLink, rc RemoteComment) (bool, error) {
	added := false
	now := s.now()
	err := s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", l.TicketID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		body := strings.TrimSpace(rc.Body)
		skip := t.Status == StatusClosed || body == "" || strings.Contains(body, "[tp-ref ")
		c := &Comment{ID: models.NewID(models.PrefixComment), TicketID: t.ID, Content: models.Truncate(body, MaxComment), Type: CommentComment,
			Visibility: VisibilityCustomer, AuthorType: "agent", AuthorID: l.IntegrationID, AuthorName: models.Truncate(strings.TrimSpace(rc.Author+" (tracker)"), 200),
			Metadata:  map[string]any{"tracker": map[string]any{"integration_id": l.IntegrationID, "issue_key": l.IssueKey, "comment_id": rc.ID}},
			CreatedAt: now}
		mark := TrackerComment{ID: models.NewID(PrefixTrackerComment), IntegrationID: l.IntegrationID, TicketID: t.ID, CommentID: c.ID,
			RemoteID: rc.ID, Direction: TrackerCommentIn, CreatedAt: now}
		if skip {
			mark.CommentID = "skipped:" + rc.ID
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&mark)
		if res.Error != nil {
			return dbErr(res.Error)
		}
		if res.RowsAffected == 0 || skip {
			return nil
		}
		if err := tx.Create(c).Error; err != nil {
			return dbErr(err)
		}
		added = true
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventCommentAdded, t.ID, c.EventData(&t)))
	})
	if err != nil {
		return false, models.AsError(err)
	}
	return added, nil
}
