package support

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/models/identity"
)

// Contact is who the provider talks to about a ticket.
type Contact struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
	Phone string `json:"phone,omitempty"`
	Role  string `json:"role,omitempty"`
}

// Location is where the problem is.
type Location struct {
	SiteID   string `json:"site_id,omitempty"`
	Address  string `json:"address,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// Ticket is a customer's support request. It belongs to one organization
// and environment (a sandbox key sees sandbox tickets only), keeps the SLA
// policy it was opened under (targets and due times), its escalation state
// and, in TicketHistory, every change made to it.
type Ticket struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	Number          string         `gorm:"size:20;not null;uniqueIndex"`
	Title           string         `gorm:"size:200;not null"`
	Description     string         `gorm:"type:text"`
	CustomerID      string         `gorm:"size:40;not null;index"`
	Status          string         `gorm:"size:16;not null;index"`
	Priority        string         `gorm:"size:16;not null;index"`
	Severity        string         `gorm:"size:32"`
	Category        string         `gorm:"size:40;not null;index"`
	Subcategory     string         `gorm:"size:40"`
	ServiceAffected string         `gorm:"size:64"`
	Contact         Contact        `gorm:"serializer:json;type:text"`
	Location        Location       `gorm:"serializer:json;type:text"`
	Metadata        map[string]any `gorm:"serializer:json;type:text"`
	AssignedTo      string         `gorm:"size:40;index"`
	// The SLA policy: targets in minutes (from the category and priority),
	// and the due times computed from them.
	SLAResponseMinutes   int        `gorm:"not null"`
	SLAResolutionMinutes int        `gorm:"not null"`
	ResponseDue          time.Time  `gorm:"not null"`
	ResolutionDue        time.Time  `gorm:"not null"`
	RespondedAt          *time.Time ``
	Escalated            bool       `gorm:"not null;default:false"`
	EscalationLevel      int        `gorm:"not null;default:0"`
	EscalationReason     string     `gorm:"size:500"`
	EscalatedAt          *time.Time ``
	// The SLA clock (sla_clock.go): the current cycle (1, then one more per
	// reopen), the policy it runs under, the last history entry it
	// replayed and the earliest due time of a running, unbreached clock.
	SLACycle            int        `gorm:"not null;default:1"`
	SLAPolicyID         string     `gorm:"size:40"`
	SLASyncedAt         *time.Time ``
	SLANextBreachAt     *time.Time `gorm:"index"`
	EstimatedResolution *time.Time ``
	InternalNotes       string     `gorm:"type:text"` // staff only
	RootCause           string     `gorm:"size:2000"`
	VendorTicket        string     `gorm:"size:100"`
	CreatedBy           string     `gorm:"size:40;not null"`
	ResolvedAt          *time.Time ``
	ClosedAt            *time.Time ``
	CreatedAt           time.Time  `gorm:"not null;index"`
	UpdatedAt           time.Time  `gorm:"not null"`

	// Agent is the assigned agent (filled by Get and List when assigned).
	Agent *identity.User `gorm:"-"`
	// Specialization is the assigned agent's specialization for this
	// ticket (see agentSpecialization; filled with Agent).
	Specialization string `gorm:"-"`
	// Attachments are the files sent with the ticket (filled by Create,
	// Get and List).
	Attachments []Attachment `gorm:"-"`
	// Clocks are the SLA clocks of the ticket's current cycle (filled by
	// Get and List): the source of TimeRemaining and ResponseMet.
	Clocks []Clock `gorm:"-"`
}

// TableName is the tickets table.
func (Ticket) TableName() string { return "support_tickets" }

// clock returns the current cycle's clock of metric (nil when the clocks
// are not loaded or the cycle has none).
func (t *Ticket) clock(metric string) *Clock {
	for i := range t.Clocks {
		if t.Clocks[i].Metric == metric {
			return &t.Clocks[i]
		}
	}
	return nil
}

// ResponseMet reports whether the first response came within its target
// (false while there is none), from the response clock when loaded.
func (t *Ticket) ResponseMet() bool {
	if c := t.clock(MetricResponse); c != nil {
		return c.Status() == SLAMet
	}
	return t.RespondedAt != nil && !t.RespondedAt.After(t.ResponseDue)
}

// TimeRemaining is the time left on the resolution target at now, in whole
// minutes: from the resolution clock when loaded (business time on a
// business-hours target; it does not run while the ticket is pending),
// else until resolution_due; negative when overdue, zero once resolved or
// closed.
func (t *Ticket) TimeRemaining(now time.Time) time.Duration {
	if t.Status == StatusResolved || t.Status == StatusClosed {
		return 0
	}
	if c := t.clock(MetricResolution); c != nil {
		return c.Remaining(now).Truncate(time.Minute)
	}
	return t.ResolutionDue.Sub(now).Truncate(time.Minute)
}

// fillClocks loads the clocks of each ticket's current cycle.
func (s *Store) fillClocks(ctx context.Context, ts []*Ticket) {
	if len(ts) == 0 {
		return
	}
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	var clocks []Clock
	if err := s.core.In(ctx, models.SystemScope()).Where("ticket_id IN ?", ids).Find(&clocks).Error; err != nil {
		return // the answers fall back on the stored due times
	}
	for _, t := range ts {
		for _, c := range clocks {
			if c.TicketID == t.ID && c.Cycle == max(t.SLACycle, 1) {
				t.Clocks = append(t.Clocks, c)
			}
		}
	}
}

// MetadataView is the ticket's metadata as answers show it: the free-form
// keys it was opened with, plus root_cause and vendor_ticket when set
// (what an update sends as metadata.root_cause and metadata.vendor_ticket,
// stored in their own columns; they win over keys of the same name). The
// stored map is not changed; the result is never nil.
func (t *Ticket) MetadataView() map[string]any {
	out := make(map[string]any, len(t.Metadata)+2)
	for k, v := range t.Metadata {
		out[k] = v
	}
	if t.RootCause != "" {
		out["root_cause"] = t.RootCause
	}
	if t.VendorTicket != "" {
		out["vendor_ticket"] = t.VendorTicket
	}
	return out
}

// EventData is the data of every ticket event: data.ticket.
func (t *Ticket) EventData() map[string]any {
	return map[string]any{"ticket": map[string]any{
		"id": t.ID, "number": t.Number, "title": t.Title, "status": t.Status, "priority": t.Priority,
		"escalation_level": t.EscalationLevel, "escalation_reason": t.EscalationReason, "customer_id": t.CustomerID,
	}}
}

// HistoryEntry is one change of a ticket: a field, its old and new value,
// who changed it and when. Entries marked internal (internal notes) are
// shown to provider staff only.
type HistoryEntry struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID  string    `gorm:"size:40;not null;index"`
	Field     string    `gorm:"size:40;not null"`
	OldValue  string    `gorm:"type:text"`
	NewValue  string    `gorm:"type:text"`
	ActorID   string    `gorm:"size:40;not null"`
	ActorType string    `gorm:"size:16;not null"`
	Internal  bool      `gorm:"not null;default:false"`
	CreatedAt time.Time `gorm:"not null;index"`
}

// TableName is the ticket history table.
func (HistoryEntry) TableName() string { return "support_ticket_history" }

// counter is the row that numbers tickets (one sequence for the platform).
type counter struct {
	Name  string `gorm:"primaryKey;size:40"`
	Value int64  `gorm:"not null;default:0"`
}

func (counter) TableName() string { return "support_counters" }

const ticketCounter = "ticket_number"

// nextNumber takes the next ticket number inside tx. The UPDATE locks the
// counter row until tx ends (PostgreSQL row lock; SQLite's one writer), so
// concurrent creations never get the same number.
func nextNumber(tx *gorm.DB) (string, error) {
	res := tx.Model(&counter{}).Where("name = ?", ticketCounter).Update("value", gorm.Expr("value + 1"))
	if res.Error != nil {
		return "", dbErr(res.Error)
	}
	if res.RowsAffected == 0 {
		if err := tx.Create(&counter{Name: ticketCounter, Value: 1}).Error; err != nil {
			return "", dbErr(err)
		}
	}
	var c counter
	if err := tx.Where("name = ?", ticketCounter).Take(&c).Error; err != nil {
		return "", dbErr(err)
	}
	return fmt.Sprintf("TKT-%06d", c.Value), nil
}

// CreateTicket opens a ticket for p after validating in (see Validate),
// with the SLA targets of its category and priority, and writes
// ticket.created in the same transaction. The first matching routing rule
// (see route) assigns it, recorded in its history. Customers open tickets
// for their own organization; provider staff name the customer with
// customer_id. The contact e-mail, when set, is told in the same
// transaction (template ticket_created).
// Errors: VALIDATION_ERROR.
func (s *Store) CreateTicket(ctx context.Context, p *models.Principal, in TicketInput) (*Ticket, error) {
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return nil, err
	}
	in.normalise()
	v := in.Validate(cats)
	org, problem, err := s.customerOrganization(ctx, p, in.CustomerID)
	if err != nil {
		return nil, dbErr(err)
	}
	if problem != "" {
		v.Add("customer_id", problem)
	}
	now := s.now()
	ups, err := prepareAttachments(v, in.Attachments, actorID(p), now)
	if err != nil {
		return nil, err
	}
	cat := categoryByID(cats, in.Category)
	if in.Priority == "" {
		in.Priority = cat.DefaultPriority
	}
	target, ok := cat.Target(in.Priority)
	if !ok {
		target = SLATarget{ResponseMinutes: DefaultSLATargets()[in.Priority][0], ResolutionMinutes: DefaultSLATargets()[in.Priority][1]}
	}
	t := &Ticket{
		ID: models.NewID(models.PrefixTicket), Title: in.Title, Description: in.Description, CustomerID: org.CustomerID,
		Status: StatusOpen, Priority: in.Priority, Severity: in.Severity, Category: in.Category, Subcategory: in.Subcategory,
		ServiceAffected: in.ServiceAffected, Contact: in.Contact, Location: in.Location, Metadata: in.Metadata,
		SLAResponseMinutes: target.ResponseMinutes, SLAResolutionMinutes: target.ResolutionMinutes,
		ResponseDue:   now.Add(time.Duration(target.ResponseMinutes) * time.Minute),
		ResolutionDue: now.Add(time.Duration(target.ResolutionMinutes) * time.Minute),
		CreatedBy:     actorID(p), CreatedAt: now, UpdatedAt: now, SLACycle: 1, SLASyncedAt: &now,
	}
	t.OrganizationID, t.Environment = org.ID, p.Environment
	policy, err := s.clockPolicyFor(ctx, t)
	if err != nil {
		return nil, err
	}
	routing, err := s.route(ctx, t, string(org.Plan))
	if err != nil {
		return nil, err
	}
	if routing != nil {
		t.AssignedTo, t.Agent = routing.Agent.ID, routing.Agent
		t.Specialization = specialization(s.specializations(ctx, []string{routing.Agent.ID})[routing.Agent.ID], t.Category)
	}
	undo, err := s.storeBlobs(ctx, ups)
	if err != nil {
		return nil, err
	}
	err = s.core.Tx(ctx, models.TenantScope(org.ID, p.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		num, err := nextNumber(tx)
		if err != nil {
			return err
		}
		t.Number = num
		sy := &slaSync{s: s, ctx: ctx, tx: tx, t: t, view: *t, policy: policy}
		if err := sy.startCycle(1, now, true); err != nil {
			return err
		}
		sy.dues()
		if err := tx.Create(t).Error; err != nil {
			return dbErr(err)
		}
		h := &HistoryEntry{ID: models.NewID(PrefixHistory), TicketID: t.ID, Field: "status", NewValue: StatusOpen,
			ActorID: actorID(p), ActorType: actorType(p), CreatedAt: now}
		if err := tx.Create(h).Error; err != nil {
			return dbErr(err)
		}
		if t.Attachments, err = recordAttachments(tx, ups, t.ID, ""); err != nil {
			return err
		}
		if routing != nil {
			if err := s.recordRouting(tx, t, routing); err != nil {
				return err
			}
		}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(EventTicketCreated, t.ID, t.EventData())); err != nil {
			return err
		}
		return s.notifyContact(tx, t, TriggerTicketCreated, p, nil)
	})
	if err != nil {
		undo()
		return nil, models.AsError(err)
	}
	return t, nil
}

// customerOrganization returns the organization a new ticket belongs to:
// the caller's own for customers (a customer_id, if given, must be theirs);
// the organization of customer_id for provider staff, who must give one.
// A refusal is the problem with customer_id; err is a failure of the
// database (unavailable, say), which is not the client's mistake.
func (s *Store) customerOrganization(ctx context.Context, p *models.Principal, customerID string) (org *models.Organization, problem string, err error) {
	db := s.core.In(ctx, models.SystemScope())
	if !isStaff(p) {
		org, problem, err := takeOrganization(db.Where("id = ?", p.OrganizationID), "the caller's organization was not found")
		if org != nil && customerID != "" && customerID != org.CustomerID {
			return nil, "names no customer the caller may open tickets for", nil
		}
		return org, problem, err
	}
	if customerID == "" {
		return nil, "is required when provider staff open a ticket", nil
	}
	return takeOrganization(db.Where("customer_id = ? AND provider = ?", customerID, false), "names no customer")
}

// takeOrganization reads the organization q selects: not found is the
// problem notFound, any other failure err.
func takeOrganization(q *gorm.DB, notFound string) (*models.Organization, string, error) {
	org := &models.Organization{}
	if err := q.Take(org).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, notFound, nil
		}
		return nil, "", err
	}
	return org, "", nil
}

// GetTicket returns one ticket visible to p, with its assigned agent, its
// attachments and its SLA clocks. Errors: NOT_FOUND.
func (s *Store) GetTicket(ctx context.Context, p *models.Principal, id string) (*Ticket, error) {
	t, err := s.GetTicketRow(ctx, p, id)
	if err != nil {
		return nil, err
	}
	s.fillTickets(ctx, t)
	return t, nil
}

// fillTickets adds to tickets what other tables hold: their assigned
// agents, attachments and SLA clocks.
func (s *Store) fillTickets(ctx context.Context, tickets ...*Ticket) {
	s.fillAgents(ctx, tickets)
	s.fillTicketAttachments(ctx, tickets)
	s.fillClocks(ctx, tickets)
}

// GetTicketRow returns one ticket visible to p as stored, without what
// GetTicket adds from other tables (agent, attachments, SLA clocks): for
// readers that show only the ticket's own columns. Errors: NOT_FOUND.
func (s *Store) GetTicketRow(ctx context.Context, p *models.Principal, id string) (*Ticket, error) {
	var t Ticket
	err := s.core.In(ctx, p.Scope()).Where("id = ?", id).Take(&t).Error
	if err != nil {
		return nil, notFoundOr(err, "ticket")
	}
	return &t, nil
}

// TicketFilter narrows a list of tickets; empty fields do not filter.
type TicketFilter struct {
	CustomerID   string
	Status       []string
	Priority     []string
	Category     string
	AssignedTo   string
	CreatedAfter string // RFC 3339
	// BreachingWithin selects tickets with a running, unbreached SLA
	// clock due within this duration (15m, 2h, 1h30m), from the stored
	// next-breach times; empty: no such filter.
	BreachingWithin string
	// Query is a keyword search over title and description (see
	// SearchTickets); the list does not offer it.
	Query string
	// Expr is a filter expression over TicketFilterSchema's fields
	// (docs/filtering.md); empty: no such filter.
	Expr string
}

// ticketSorts are the fields a ticket list sorts by: priority sorts by
// rank (low < medium < high < critical) and status in lifecycle order
// (open, in_progress, pending, escalated, resolved, closed).
var ticketSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at",
	"priority": rankExpr("priority", Priorities()), "status": rankExpr("status", Statuses()), "number": "number",
	"sla_next_breach_at": "sla_next_breach_at"}

// rankExpr is a CASE expression giving each of values its index in col's
// order (unknown values first).
func rankExpr(col string, values []string) string {
	var b strings.Builder
	b.WriteString("CASE " + col)
	for i, v := range values {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", v, i)
	}
	b.WriteString(" ELSE -1 END")
	return b.String()
}

// ListTickets returns a page of the tickets visible to p that f selects,
// newest first by default. Errors: VALIDATION_ERROR.
func (s *Store) ListTickets(ctx context.Context, p *models.Principal, f TicketFilter, page models.PageRequest) ([]Ticket, int64, error) {
	out, total, err := s.ListTicketRows(ctx, p, f, page)
	if err != nil {
		return nil, 0, err
	}
	s.fillPage(ctx, out)
	return out, total, nil
}

// ListTicketRows is ListTickets without what it adds from other tables
// (agents, attachments, SLA clocks), as GetTicketRow is to GetTicket.
// Errors: VALIDATION_ERROR.
func (s *Store) ListTicketRows(ctx context.Context, p *models.Principal, f TicketFilter, page models.PageRequest) ([]Ticket, int64, error) {
	q, err := s.ticketQuery(ctx, p, f, &models.Validator{})
	if err != nil {
		return nil, 0, err
	}
	var out []Ticket
	total, err := models.Paginate(q, page, ticketSorts, &out)
	return out, total, err
}

// pageTickets loads the page of q, with the tickets' agents, attachments
// and SLA clocks.
func (s *Store) pageTickets(ctx context.Context, q *gorm.DB, page models.PageRequest) ([]Ticket, int64, error) {
	var out []Ticket
	total, err := models.Paginate(q, page, ticketSorts, &out)
	if err != nil {
		return nil, 0, err
	}
	s.fillPage(ctx, out)
	return out, total, nil
}

// fillPage is fillTickets for a page of tickets.
func (s *Store) fillPage(ctx context.Context, page []Ticket) {
	ptrs := make([]*Ticket, len(page))
	for i := range page {
		ptrs[i] = &page[i]
	}
	s.fillTickets(ctx, ptrs...)
}

// ticketQuery validates f and returns the query of the tickets visible to
// p that it selects. Issues are added to v (which may hold others).
// Errors: VALIDATION_ERROR.
func (s *Store) ticketQuery(ctx context.Context, p *models.Principal, f TicketFilter, v *models.Validator) (*gorm.DB, error) {
	for _, st := range f.Status {
		v.Check(validStatus(st), "status", "must be one of "+joinList(Statuses()))
	}
	for _, pr := range f.Priority {
		v.Check(priorityRank(pr) >= 0, "priority", "must be one of "+joinList(Priorities()))
	}
	var after time.Time
	if f.CreatedAfter != "" {
		var err error
		after, err = time.Parse(time.RFC3339, f.CreatedAfter)
		v.Check(err == nil, "created_after", "must be an RFC 3339 timestamp")
	}
	if f.Category != "" {
		// Categories are rows (staff add them): one read when filtering.
		cats, err := s.ListCategories(ctx)
		if err != nil {
			return nil, err
		}
		v.Check(categoryByID(cats, f.Category) != nil, "category", "must be one of "+joinList(categoryIDs(cats)))
	}
	var within int
	if f.BreachingWithin != "" {
		within = parseRuleDuration(v, "breaching_within", strings.TrimSpace(f.BreachingWithin))
	}
	words := keywords(f.Query)
	v.Check(utf8.RuneCountInString(f.Query) <= MaxQuery, "query", "must be at most "+itoa(MaxQuery)+" characters")
	v.Check(len(words) <= MaxQueryWords, "query", "must have at most "+itoa(MaxQueryWords)+" words")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var expr *filter.Query
	if strings.TrimSpace(f.Expr) != "" {
		var err error
		if expr, err = filter.Compile(TicketFilterSchema(), f.Expr); err != nil {
			return nil, err
		}
	}
	q := s.core.In(ctx, p.Scope()).Model(&Ticket{})
	if expr != nil {
		q = q.Where(expr.SQL, expr.Args...)
	}
	if f.CustomerID != "" {
		q = q.Where("customer_id = ?", f.CustomerID)
	}
	if len(f.Status) > 0 {
		q = q.Where("status IN ?", f.Status)
	}
	if len(f.Priority) > 0 {
		q = q.Where("priority IN ?", f.Priority)
	}
	if f.Category != "" {
		q = q.Where("category = ?", f.Category)
	}
	if f.AssignedTo != "" {
		q = q.Where("assigned_to = ?", f.AssignedTo)
	}
	if !after.IsZero() {
		q = q.Where("created_at > ?", after.UTC())
	}
	if within > 0 {
		q = q.Where("sla_next_breach_at IS NOT NULL AND sla_next_breach_at <= ?", s.now().Add(time.Duration(within)*time.Minute))
	}
	for _, w := range words {
		pat := likePattern(w)
		q = q.Where(`(LOWER(title) LIKE ? ESCAPE '\' OR LOWER(description) LIKE ? ESCAPE '\')`, pat, pat)
	}
	return q, nil
}

// fillAgents loads the assigned agent of each ticket.
func (s *Store) fillAgents(ctx context.Context, ts []*Ticket) {
	var ids []string
	for _, t := range ts {
		if t.AssignedTo != "" {
			ids = append(ids, t.AssignedTo)
		}
	}
	if len(ids) == 0 {
		return
	}
	var users []identity.User
	if err := s.core.In(ctx, models.SystemScope()).Where("id IN ?", ids).Find(&users).Error; err != nil {
		return
	}
	specs := s.specializations(ctx, ids)
	for _, t := range ts {
		for i := range users {
			if users[i].ID == t.AssignedTo {
				t.Agent = &users[i]
				t.Specialization = specialization(specs[t.AssignedTo], t.Category)
			}
		}
	}
}

// specialization is what an agent whose teams cover categories is
// answered as specialised in for a ticket of category: that category when
// the agent is in its team, else the agent's first category ("" without
// a team).
func specialization(categories []string, category string) string {
	if slices.Contains(categories, category) {
		return category
	}
	if len(categories) > 0 {
		return categories[0]
	}
	return ""
}

// TicketHistory returns a page of the changes of a ticket visible to p,
// oldest first; customers do not see internal entries. Errors: NOT_FOUND,
// VALIDATION_ERROR (sort).
func (s *Store) TicketHistory(ctx context.Context, p *models.Principal, ticketID string, page models.PageRequest) ([]HistoryEntry, int64, error) {
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, 0, err
	}
	q := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Model(&HistoryEntry{}).Where("ticket_id = ?", t.ID)
	if !isStaff(p) {
		q = q.Where("internal = ?", false)
	}
	if len(page.Sort) == 0 {
		page.Sort = []models.SortField{{Field: "created_at"}}
	}
	var out []HistoryEntry
	total, err := models.Paginate(q, page, models.SortFields{"created_at": "created_at"}, &out)
	return out, total, err
}
