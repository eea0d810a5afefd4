package support

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// UpdateInput is the body of a ticket update; nil fields are left as they
// are. AssignedTo "" unassigns the ticket.
type UpdateInput struct {
	Status              *string
	Priority            *string
	AssignedTo          *string
	EstimatedResolution *string // RFC 3339
	InternalNotes       *string
	CustomerUpdate      *string
	RootCause           *string
	EscalationLevel     *int
	VendorTicket        *string
}

// staffFields lists the fields of in that only provider staff may set.
func (in *UpdateInput) staffFields() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(in.AssignedTo != nil, "assigned_to")
	add(in.EstimatedResolution != nil, "estimated_resolution")
	add(in.InternalNotes != nil, "internal_notes")
	add(in.RootCause != nil, "metadata.root_cause")
	add(in.EscalationLevel != nil, "metadata.escalation_level")
	add(in.VendorTicket != nil, "metadata.vendor_ticket")
	return out
}

// UpdateResult is an updated ticket and what the update did.
type UpdateResult struct {
	Ticket *Ticket
	// Changed lists the fields that changed (history entries written).
	Changed []string
	// Comment is the customer-visible comment made of customer_update.
	Comment *Comment
	// Events are the names of the events written.
	Events []string
}

// UpdateTicket applies in to a ticket visible to p. Customers may change
// the status (reopen a resolved ticket, or close it), the priority and add
// a customer_update; the other fields are provider staff's. Every change is
// appended to the history; raising the priority to critical escalates the
// ticket (sla.escalated, escalation_reason, ticket.escalated); the update
// writes ticket.updated (listing the customer-visible changes; none when
// only the internal notes changed), plus ticket.resolved when it resolves
// the ticket. A status move outside the transition table is refused as
// such to everyone; metadata.escalation_level only rises.
// The ticket's contact e-mail is told of a resolution (ticket_resolved) and
// of a staff customer_update (ticket_update) in the same transaction.
// Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR,
// INVALID_STATE_TRANSITION.
func (s *Store) UpdateTicket(ctx context.Context, p *models.Principal, id string, in UpdateInput) (*UpdateResult, error) {
	cur, err := s.GetTicket(ctx, p, id)
	if err != nil {
		return nil, err
	}
	staff := isStaff(p)
	if !staff {
		if f := in.staffFields(); len(f) > 0 {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider staff may set %s", strings.Join(f, ", ")).WithDetail("fields", f)
		}
	}
	agent, eta, err := s.validateUpdate(ctx, p, cur, &in)
	if err != nil {
		return nil, err
	}
	res := &UpdateResult{}
	now := s.now()
	err = s.core.Tx(ctx, models.TenantScope(cur.OrganizationID, cur.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", cur.ID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		if t.Status == StatusClosed {
			// Closed is final: a closed ticket takes no comment (as POST
			// comments holds) and no change of how it is worked.
			if f := in.workFields(&t); len(f) > 0 {
				return models.Errorf(models.CodeInvalidStateTransition, "ticket %s is closed: it takes no %s", t.ID, strings.Join(f, ", ")).
					WithDetail("from", string(StatusClosed)).WithDetail("fields", f)
			}
		}
		c := &change{tx: tx, t: &t, p: p, now: now}
		if in.Status != nil && *in.Status != t.Status {
			// A move outside the table is refused as such, whoever asks
			// (closed is final for customers too); a move in the table
			// that is staff's is refused to customers.
			if err := checkTransition(t.ID, t.Status, *in.Status); err != nil {
				return err
			}
			if !staff && !customerMayMove(t.Status, *in.Status) {
				return models.Errorf(models.CodeInsufficientPermissions, "customers may only reopen a resolved ticket or close a ticket; other status changes are provider staff's").
					WithDetail("from", t.Status).WithDetail("to", *in.Status).WithDetail("allowed", customerMoves(t.Status))
			}
			if err := c.setStatus(*in.Status); err != nil {
				return err
			}
		}
		if in.Priority != nil && *in.Priority != t.Priority {
			old := t.Priority
			c.set("priority", old, *in.Priority, false, func() { t.Priority = *in.Priority })
			if *in.Priority == PriorityCritical && priorityRank(old) < priorityRank(PriorityCritical) {
				c.escalate(fmt.Sprintf("priority upgraded from %s to critical", old), 1)
			}
		}
		if in.AssignedTo != nil && *in.AssignedTo != t.AssignedTo {
			c.set("assigned_to", t.AssignedTo, *in.AssignedTo, false, func() { t.AssignedTo = *in.AssignedTo })
			t.Agent = agent
		}
		if eta != nil {
			old := ""
			if t.EstimatedResolution != nil {
				old = models.Timestamp(*t.EstimatedResolution)
			}
			if e := eta.UTC(); old != models.Timestamp(e) {
				c.set("estimated_resolution", old, models.Timestamp(e), false, func() { t.EstimatedResolution = &e })
			}
		}
		if in.InternalNotes != nil && *in.InternalNotes != t.InternalNotes {
			c.set("internal_notes", t.InternalNotes, *in.InternalNotes, true, func() { t.InternalNotes = *in.InternalNotes })
		}
		if in.RootCause != nil && *in.RootCause != t.RootCause {
			c.set("root_cause", t.RootCause, *in.RootCause, false, func() { t.RootCause = *in.RootCause })
		}
		if in.VendorTicket != nil && *in.VendorTicket != t.VendorTicket {
			c.set("vendor_ticket", t.VendorTicket, *in.VendorTicket, false, func() { t.VendorTicket = *in.VendorTicket })
		}
		if in.EscalationLevel != nil && *in.EscalationLevel != t.EscalationLevel {
			lvl := *in.EscalationLevel
			if lvl < t.EscalationLevel { // raised meanwhile (validateUpdate read the level before)
				return lowerLevel(t.EscalationLevel)
			}
			c.escalate(fmt.Sprintf("escalation level raised to %d", lvl), lvl)
		}
		if in.CustomerUpdate != nil && strings.TrimSpace(*in.CustomerUpdate) != "" {
			cm, _, err := s.newComment(ctx, p, &t, CommentInput{Content: *in.CustomerUpdate, Type: CommentCustomerUpdate, Visibility: VisibilityCustomer}, now)
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
			if staff && t.RespondedAt == nil {
				t.RespondedAt = &now
			}
			if staff && !containsString(c.events, EventTicketResolved) { // a resolution's message carries the update itself
				if err := s.notifyContact(tx, &t, TriggerComment, p, cm); err != nil {
					return err
				}
			}
			c.changed = append(c.changed, "customer_update")
		}
		if len(c.changed) == 0 {
			res.Ticket = &t
			return nil
		}
		if err := c.flush(); err != nil {
			return err
		}
		if containsString(c.events, EventTicketResolved) {
			if err := s.notifyContact(tx, &t, TriggerResolved, p, res.Comment); err != nil {
				return err
			}
		}
		res.Ticket, res.Changed, res.Events = &t, c.changed, c.events
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	// The agent as every answer shows it (a new assignee's specialization
	// included).
	s.fillAgents(ctx, []*Ticket{res.Ticket})
	return res, nil
}

// workFields names the fields of in that would comment on t or change how
// it is worked (priority, assignment, escalation, estimate): what a closed
// ticket refuses.
func (in *UpdateInput) workFields(t *Ticket) []string {
	var f []string
	if in.CustomerUpdate != nil && strings.TrimSpace(*in.CustomerUpdate) != "" {
		f = append(f, "customer_update")
	}
	if in.Priority != nil && *in.Priority != t.Priority {
		f = append(f, "priority")
	}
	if in.AssignedTo != nil && *in.AssignedTo != t.AssignedTo {
		f = append(f, "assigned_to")
	}
	if in.EscalationLevel != nil && *in.EscalationLevel != t.EscalationLevel {
		f = append(f, "metadata.escalation_level")
	}
	if in.EstimatedResolution != nil {
		f = append(f, "estimated_resolution")
	}
	return f
}

// validateUpdate checks the values of in against the ticket cur; it
// returns the agent named by assigned_to and the parsed
// estimated_resolution.
func (s *Store) validateUpdate(ctx context.Context, p *models.Principal, cur *Ticket, in *UpdateInput) (*identity.User, *time.Time, error) {
	var v models.Validator
	if in.Status != nil {
		v.Check(validStatus(*in.Status), "status", "must be one of "+joinList(Statuses()))
	}
	if in.Priority != nil {
		v.Check(priorityRank(*in.Priority) >= 0, "priority", "must be one of "+joinList(Priorities()))
	}
	var agent *identity.User
	if in.AssignedTo != nil && *in.AssignedTo != "" {
		var u identity.User
		err := s.core.In(ctx, models.SystemScope()).Where("id = ? AND role IN ?", *in.AssignedTo, []models.Role{models.RoleAgent, models.RoleAdmin}).Take(&u).Error
		if err != nil {
			v.Add("assigned_to", "must be the id (usr_) of a provider agent, or empty to unassign")
		} else {
			agent = &u
		}
	}
	var eta *time.Time
	if in.EstimatedResolution != nil {
		t, err := time.Parse(time.RFC3339, *in.EstimatedResolution)
		if err != nil {
			v.Add("estimated_resolution", "must be an RFC 3339 timestamp such as 2026-12-01T17:00:00Z")
		} else {
			eta = &t
		}
	}
	if in.InternalNotes != nil {
		checkLen(&v, "internal_notes", *in.InternalNotes, MaxInternalNotes)
	}
	if in.CustomerUpdate != nil {
		checkLen(&v, "customer_update", *in.CustomerUpdate, MaxComment)
	}
	if in.RootCause != nil {
		checkLen(&v, "metadata.root_cause", *in.RootCause, MaxRootCause)
	}
	if in.VendorTicket != nil {
		checkLen(&v, "metadata.vendor_ticket", *in.VendorTicket, MaxVendorTicket)
	}
	if in.EscalationLevel != nil {
		lvl := *in.EscalationLevel
		switch {
		case lvl < 0 || lvl > MaxEscalationStep:
			v.Add("metadata.escalation_level", "must be between 0 and "+itoa(MaxEscalationStep))
		case lvl < cur.EscalationLevel:
			v.Add("metadata.escalation_level", lowerLevelIssue(cur.EscalationLevel))
		}
	}
	return agent, eta, v.Err()
}

// lowerLevelIssue is the issue of a metadata.escalation_level below the
// ticket's current level: the level only rises (as with the escalate
// endpoint); sending the current level changes nothing.
func lowerLevelIssue(current int) string {
	return fmt.Sprintf("must not be below the ticket's current level, %d: the escalation level only rises", current)
}

// lowerLevel is the VALIDATION_ERROR of a metadata.escalation_level below
// the ticket's current level.
func lowerLevel(current int) error {
	return models.Invalid(models.FieldIssue{Field: "metadata.escalation_level", Issue: lowerLevelIssue(current)})
}

// lockForUpdate locks the row read on PostgreSQL (SQLite has one writer).
func lockForUpdate(tx *gorm.DB) []clause.Expression {
	if models.IsSQLite(tx) {
		return nil
	}
	return []clause.Expression{clause.Locking{Strength: "UPDATE"}}
}

// change collects the changes made to a ticket in one transaction.
type change struct {
	tx      *gorm.DB
	t       *Ticket
	p       *models.Principal
	now     time.Time
	system  string // when set, the changes are the platform's: actor {system, <system>}
	changed []string
	// internal lists the fields of changed that are provider staff's only
	// (internal notes): their history entries are internal, and the
	// ticket.updated a customer reads never names them.
	internal []string
	history  []HistoryEntry
	events   []string
}

// set applies one field change and records it in the history.
func (c *change) set(field, old, new string, internal bool, apply func()) {
	apply()
	if !slices.Contains(c.changed, field) { // a field changed twice (an escalation's reason) is listed once
		c.changed = append(c.changed, field)
	}
	if internal && !slices.Contains(c.internal, field) {
		c.internal = append(c.internal, field)
	}
	id, typ := actorID(c.p), actorType(c.p)
	if c.system != "" {
		id, typ = c.system, ActorSystem
	}
	c.history = append(c.history, HistoryEntry{ID: models.NewID(PrefixHistory), TicketID: c.t.ID, Field: field, OldValue: old, NewValue: new,
		ActorID: id, ActorType: typ, Internal: internal, CreatedAt: c.now})
}

// setStatus moves the ticket along the transition table.
func (c *change) setStatus(to string) error {
	t := c.t
	if err := checkTransition(t.ID, t.Status, to); err != nil {
		return err
	}
	from := t.Status
	c.set("status", from, to, false, func() { t.Status = to })
	switch to {
	case StatusResolved:
		t.ResolvedAt = &c.now
		c.events = append(c.events, EventTicketResolved)
	case StatusClosed:
		t.ClosedAt = &c.now
	case StatusOpen, StatusInProgress:
		if from == StatusResolved {
			t.ResolvedAt = nil
		}
	case StatusEscalated:
		c.escalate("status set to escalated", 1)
	}
	if isStaff(c.p) && from == StatusOpen && t.RespondedAt == nil {
		t.RespondedAt = &c.now
	}
	return nil
}

// escalate marks the ticket escalated with reason, at level at least
// minLevel, and writes ticket.escalated.
func (c *change) escalate(reason string, minLevel int) {
	t := c.t
	old := strconv.Itoa(t.EscalationLevel)
	if minLevel > t.EscalationLevel {
		c.set("escalation_level", old, strconv.Itoa(minLevel), false, func() { t.EscalationLevel = minLevel })
	}
	c.set("escalation_reason", t.EscalationReason, reason, false, func() { t.EscalationReason = reason })
	t.Escalated, t.EscalatedAt = true, &c.now
	if !containsString(c.events, EventTicketEscalated) {
		c.events = append(c.events, EventTicketEscalated)
	}
}

// visibleChanges lists the changed fields a customer may learn of: every
// one but the internal ones.
func (c *change) visibleChanges() []string {
	out := make([]string, 0, len(c.changed))
	for _, f := range c.changed {
		if !slices.Contains(c.internal, f) {
			out = append(out, f)
		}
	}
	return out
}

// flush saves the ticket, its history entries and its events. Events are
// read by the ticket's organization (GET /v1/events, its webhooks), so
// ticket.updated lists the customer-visible changes only, and a change of
// internal fields alone writes none.
func (c *change) flush() error {
	c.t.UpdatedAt = c.now
	if err := c.tx.Model(c.t).Select("*").Omit("id", "created_at", "number", "organization_id", "environment", "created_by").Updates(c.t).Error; err != nil {
		return dbErr(err)
	}
	if len(c.history) > 0 {
		if err := c.tx.Create(&c.history).Error; err != nil {
			return dbErr(err)
		}
	}
	var events []string
	if visible := c.visibleChanges(); len(visible) > 0 {
		data := c.t.EventData()
		data["changes"] = visible
		if err := eventlog.RecordEvent(c.tx, eventlog.NewEvent(EventTicketUpdated, c.t.ID, data)); err != nil {
			return err
		}
		events = append(events, EventTicketUpdated)
	}
	for _, name := range c.events {
		if err := eventlog.RecordEvent(c.tx, eventlog.NewEvent(name, c.t.ID, c.t.EventData())); err != nil {
			return err
		}
		events = append(events, name)
	}
	c.events = events
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
