package support

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// ActorSLA is the system actor id of the changes the SLA clock makes
// (automatic escalations and reassignments).
const ActorSLA = "sla_clock"

// TriggerSLA marks the messages the SLA clock sends (warnings and
// escalation ladder steps).
const TriggerSLA = "sla_escalation"

// SLAState is a ticket's SLA after a sync: what its workflow needs to wait
// for the next instant (NextAt) and to tag itself for operators.
type SLAState struct {
	TicketID       string             `json:"ticket_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	Status         string             `json:"status"`
	Priority       string             `json:"priority"`
	Cycle          int                `json:"cycle"`
	// NextAt is the next instant a warning, a breach or a ladder step is
	// due (nil: nothing is: every clock is paused or stopped).
	NextAt *time.Time `json:"next_at,omitempty"`
	// NextBreachAt is the earliest due time of a running, unbreached clock.
	NextBreachAt *time.Time `json:"next_breach_at,omitempty"`
	// Done is true once the ticket is closed (or gone): the workflow ends.
	Done    bool          `json:"done"`
	Metrics []MetricState `json:"metrics,omitempty"`
	// Breaches are the metrics whose breach this sync recorded, and
	// Escalations the ladder steps (warnings included) it fired: for the
	// activity's metrics, never part of the workflow's history.
	Breaches    []string        `json:"-"`
	Escalations []SLAEscalation `json:"-"`
}

// SLAEscalation is one escalation step a sync fired: the clock's metric
// and the step's action.
type SLAEscalation struct {
	Metric, Action string
}

// MetricState is one clock in an SLAState.
type MetricState struct {
	Metric         string     `json:"metric"`
	Status         string     `json:"status"`
	TargetMinutes  int        `json:"target_minutes"`
	ElapsedSeconds int64      `json:"elapsed_seconds"`
	DueAt          *time.Time `json:"due_at,omitempty"`
}

// slaSync is one sync of a ticket's clocks, inside the ticket's
// transaction.
type slaSync struct {
	s      *Store
	ctx    context.Context
	tx     *gorm.DB
	t      *Ticket
	view   Ticket // the ticket's priority and category as of the instant being replayed
	policy *clockPolicy
	clocks []*Clock
	segs   map[string]*Segment // the open segment of each clock, by clock id
	seq    map[string]int      // the last segment number of each clock
	fired  map[string]bool     // escalations fired this cycle: metric/step/repeat
	acked  *time.Time          // the last change by provider staff
	timers routingTimers       // the routing rule's and the policy's timers
	events []string
	// breaches and escalations are what this sync recorded (SLAState).
	breaches    []string
	escalations []SLAEscalation
}

// SyncSLA brings a ticket's SLA clocks up to now: it replays the changes
// recorded in the ticket's history since the last sync (status, priority
// and category changes, in order) and the first response, onto the clocks
// and their ledger; then records warnings and breaches (sla.breach, once
// per metric and cycle) and fires the escalation ladder's due steps. It is
// idempotent: a second sync at the same instant changes nothing. The
// ticket's workflow calls it (with its own clock as now) on start, on every
// signal and when its timer fires. Errors: INTERNAL_ERROR.
func (s *Store) SyncSLA(ctx context.Context, ticketID string, now time.Time) (*SLAState, error) {
	now = now.UTC()
	var head Ticket
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", ticketID).Take(&head).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return &SLAState{TicketID: ticketID, Done: true}, nil
		}
		return nil, dbErr(err)
	}
	var state *SLAState
	var credit *SLACreditRequest
	err := s.core.Tx(ctx, models.TenantScope(head.OrganizationID, head.Environment), func(tx *gorm.DB) error {
		var t Ticket
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", ticketID).Take(&t).Error; err != nil {
			return notFoundOr(err, "ticket")
		}
		// Every read of the sync (policies, calendars, users, rules) runs
		// in the transaction: it never waits for a second connection.
		sy := &slaSync{s: s.bound(tx), ctx: ctx, tx: tx, t: &t}
		var err error
		if state, err = sy.run(now); err != nil {
			return err
		}
		credit = sy.creditDue()
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	if credit != nil && s.credits != nil {
		// After the breach is stored; idempotent, so every later sync of
		// the cycle asks again until billing has it.
		if err := s.credits(ctx, *credit); err != nil {
			return nil, err
		}
	}
	return state, nil
}

// replayed is one change replayed onto the clocks.
type replayed struct {
	at    time.Time
	field string // status, priority, category or responded
	old   string
	new   string
	order int // at the same instant: priority and category before status
}

func (sy *slaSync) run(now time.Time) (*SLAState, error) {
	t := sy.t
	if t.SLACycle < 1 {
		t.SLACycle = 1
	}
	var hist []HistoryEntry
	q := sy.tx.Where("ticket_id = ? AND field IN ?", t.ID, []string{"status", "priority", "category"})
	if t.SLASyncedAt != nil {
		q = q.Where("created_at > ?", *t.SLASyncedAt)
	}
	if err := q.Order("created_at ASC").Order("id ASC").Find(&hist).Error; err != nil {
		return nil, dbErr(err)
	}
	changes := make([]replayed, 0, len(hist)+1)
	for _, h := range hist {
		order := 0
		if h.Field == "status" {
			order = 1
		}
		changes = append(changes, replayed{at: h.CreatedAt.UTC(), field: h.Field, old: h.OldValue, new: h.NewValue, order: order})
	}
	if t.RespondedAt != nil {
		changes = append(changes, replayed{at: t.RespondedAt.UTC(), field: "responded", order: 2})
	}
	slices.SortStableFunc(changes, func(a, b replayed) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.order - b.order
	})
	// The view starts as the ticket was before the changes not replayed yet.
	sy.view = *t
	for i := len(changes) - 1; i >= 0; i-- {
		switch c := changes[i]; c.field {
		case "priority":
			sy.view.Priority = c.old
		case "category":
			sy.view.Category = c.old
		}
	}
	if err := sy.load(); err != nil {
		return nil, err
	}
	if len(sy.clocks) == 0 { // a ticket from before the clocks: its first cycle starts at its creation
		if err := sy.startCycle(t.SLACycle, t.CreatedAt.UTC(), true); err != nil {
			return nil, err
		}
	}
	var seen *time.Time // the newest history entry replayed
	for _, c := range changes {
		if c.at.After(now) { // written after the instant synced to (another machine's clock): the next sync takes it
			continue
		}
		if c.field != "responded" {
			at := c.at
			seen = &at
		}
		if err := sy.advance(c.at); err != nil {
			return nil, err
		}
		if err := sy.apply(c); err != nil {
			return nil, err
		}
	}
	if err := sy.advance(now); err != nil {
		return nil, err
	}
	if sy.stale() { // the policy or its calendar was edited since the clocks were timed
		if err := sy.retime(now, "policy or calendar changed"); err != nil {
			return nil, err
		}
		if err := sy.advance(now); err != nil {
			return nil, err
		}
	}
	if seen != nil {
		t.SLASyncedAt = seen
	}
	return sy.save(now)
}

// load reads the clocks of the ticket's cycle, their open segments and the
// escalations fired in the cycle, and resolves the policy for the view.
func (sy *slaSync) load() error {
	t := sy.t
	sy.segs, sy.seq, sy.fired = map[string]*Segment{}, map[string]int{}, map[string]bool{}
	if err := sy.tx.Where("ticket_id = ? AND cycle = ?", t.ID, t.SLACycle).Order("metric").Find(&sy.clocks).Error; err != nil {
		return dbErr(err)
	}
	var segs []*Segment
	if err := sy.tx.Where("ticket_id = ? AND cycle = ?", t.ID, t.SLACycle).Order("seq").Find(&segs).Error; err != nil {
		return dbErr(err)
	}
	for _, g := range segs {
		sy.seq[g.ClockID] = max(sy.seq[g.ClockID], g.Seq)
		if g.EndedAt == nil && g.Kind != SegmentRetimed {
			sy.segs[g.ClockID] = g
		}
	}
	var fired []Escalation
	if err := sy.tx.Where("ticket_id = ? AND cycle = ?", t.ID, t.SLACycle).Find(&fired).Error; err != nil {
		return dbErr(err)
	}
	for _, e := range fired {
		sy.fired[firedKey(e.Metric, e.Step, e.Repeat)] = true
	}
	var staff HistoryEntry
	err := sy.tx.Where("ticket_id = ? AND actor_type = ?", t.ID, "agent").Order("created_at DESC").Limit(1).Find(&staff).Error
	if err != nil {
		return dbErr(err)
	}
	if staff.ID != "" {
		at := staff.CreatedAt.UTC()
		sy.acked = &at
	}
	p, err := sy.s.clockPolicyFor(sy.ctx, &sy.view)
	if err != nil {
		return err
	}
	sy.policy = p
	return sy.loadTimers()
}

func firedKey(metric string, step, repeat int) string {
	return fmt.Sprintf("%s/%d/%d", metric, step, repeat)
}

// startCycle starts the clocks of a cycle at at: a response clock (only
// when withResponse) and a resolution clock, running, timed by the policy.
func (sy *slaSync) startCycle(cycle int, at time.Time, withResponse bool) error {
	t := sy.t
	// The clocks of the cycle that ends are written as they stand (stopped
	// by the resolution just replayed) before the new cycle's replace them
	// here: save writes only the current cycle's.
	for _, c := range sy.clocks {
		if err := sy.writeClock(c, at); err != nil {
			return err
		}
	}
	t.SLACycle = cycle
	sy.clocks = nil
	sy.segs, sy.seq, sy.fired = map[string]*Segment{}, map[string]int{}, map[string]bool{}
	for _, m := range Metrics() {
		if m == MetricResponse && !withResponse {
			continue
		}
		target := sy.policy.Targets[m]
		c := &Clock{ID: models.NewID(PrefixClock), Tenant: t.Tenant, TicketID: t.ID, Cycle: cycle, Metric: m,
			PolicyID: sy.policy.PolicyID, CalendarID: sy.policy.CalendarID, Calendar: sy.policy.Calendar,
			TargetMinutes: target.Minutes, BusinessHours: target.BusinessHours && sy.policy.Calendar != nil,
			WarningPercent: sy.policy.WarningPercent, State: ClockRunning, RunningSince: &at, StartedAt: at,
			CreatedAt: at, UpdatedAt: at}
		sy.time(c)
		if err := sy.tx.Create(c).Error; err != nil {
			return dbErr(err)
		}
		sy.clocks = append(sy.clocks, c)
		if err := sy.open(c, SegmentRunning, at); err != nil {
			return err
		}
	}
	t.SLAPolicyID = sy.policy.PolicyID
	return nil
}

// writeClock writes c's row as it stands, updated at at.
func (sy *slaSync) writeClock(c *Clock, at time.Time) error {
	c.UpdatedAt = at
	return dbErr(sy.tx.Model(c).Select("*").Omit("id", "created_at").Updates(c).Error)
}

// time computes a running clock's due and warning instants.
func (sy *slaSync) time(c *Clock) {
	if c.State != ClockRunning {
		c.DueAt, c.WarnAt = nil, nil
		return
	}
	c.DueAt, c.WarnAt = c.when(100), c.when(c.WarningPercent)
}

// open starts a running or paused segment of c at at.
func (sy *slaSync) open(c *Clock, kind string, at time.Time) error {
	sy.seq[c.ID]++
	g := &Segment{ID: models.NewID(PrefixSegment), Tenant: c.Tenant, ClockID: c.ID, TicketID: c.TicketID, Cycle: c.Cycle, Metric: c.Metric,
		Seq: sy.seq[c.ID], Kind: kind, StartedAt: at, CreatedAt: at}
	if err := sy.tx.Create(g).Error; err != nil {
		return dbErr(err)
	}
	sy.segs[c.ID] = g
	return nil
}

// mark records an instant (a re-timing) in c's ledger.
func (sy *slaSync) mark(c *Clock, at time.Time, note string) error {
	sy.seq[c.ID]++
	g := &Segment{ID: models.NewID(PrefixSegment), Tenant: c.Tenant, ClockID: c.ID, TicketID: c.TicketID, Cycle: c.Cycle, Metric: c.Metric,
		Seq: sy.seq[c.ID], Kind: SegmentRetimed, StartedAt: at, EndedAt: &at, Note: models.Truncate(note, 500), CreatedAt: at}
	return dbErr(sy.tx.Create(g).Error)
}

// close ends c's open segment at at, banking the business time a running
// segment counted.
func (sy *slaSync) close(c *Clock, at time.Time) error {
	if c.State == ClockRunning && c.RunningSince != nil {
		if at.After(*c.RunningSince) {
			c.ElapsedSeconds += int64(c.cal().Between(*c.RunningSince, at) / time.Second)
		}
		c.RunningSince = &at
	}
	g := sy.segs[c.ID]
	if g == nil {
		return nil
	}
	end := at
	if end.Before(g.StartedAt) {
		end = g.StartedAt
	}
	g.EndedAt = &end
	if g.Kind == SegmentRunning {
		g.BusinessSeconds = int64(c.cal().Between(g.StartedAt, end) / time.Second)
	}
	delete(sy.segs, c.ID)
	return dbErr(sy.tx.Model(g).Select("ended_at", "business_seconds").Updates(g).Error)
}

// clock returns the cycle's clock of metric (nil when there is none).
func (sy *slaSync) clock(metric string) *Clock {
	for _, c := range sy.clocks {
		if c.Metric == metric {
			return c
		}
	}
	return nil
}

// apply replays one change at its instant.
func (sy *slaSync) apply(c replayed) error {
	switch c.field {
	case "responded":
		if rc := sy.clock(MetricResponse); rc != nil && rc.State != ClockStopped && !c.at.Before(rc.StartedAt) {
			return sy.stop(rc, c.at)
		}
	case "priority", "category":
		if c.field == "priority" {
			sy.view.Priority = c.new
		} else {
			sy.view.Category = c.new
		}
		return sy.retime(c.at, fmt.Sprintf("%s %s → %s", c.field, c.old, c.new))
	case "status":
		return sy.status(c.old, c.new, c.at)
	}
	return nil
}

// status replays a status change.
func (sy *slaSync) status(from, to string, at time.Time) error {
	terminal := func(s string) bool { return s == StatusResolved || s == StatusClosed }
	switch {
	case terminal(from) && !terminal(to): // a reopen: a new cycle, resolution only
		return sy.startCycle(sy.t.SLACycle+1, at, false)
	case terminal(to):
		for _, c := range sy.clocks {
			if c.State != ClockStopped {
				if err := sy.stop(c, at); err != nil {
					return err
				}
			}
		}
	case to == StatusPending:
		if c := sy.clock(MetricResolution); c != nil && c.State == ClockRunning {
			if err := sy.close(c, at); err != nil {
				return err
			}
			c.State, c.RunningSince = ClockPaused, nil
			sy.time(c)
			return sy.open(c, SegmentPaused, at)
		}
	case from == StatusPending:
		if c := sy.clock(MetricResolution); c != nil && c.State == ClockPaused {
			if err := sy.close(c, at); err != nil {
				return err
			}
			c.State, c.RunningSince = ClockRunning, &at
			sy.time(c)
			return sy.open(c, SegmentRunning, at)
		}
	}
	return nil
}

// stop stops c at at: met, unless it was breached before.
func (sy *slaSync) stop(c *Clock, at time.Time) error {
	if err := sy.close(c, at); err != nil {
		return err
	}
	c.State, c.RunningSince, c.StoppedAt = ClockStopped, nil, &at
	c.WarnAt = nil
	return nil
}

// retime applies the policy of the view (after a priority or category
// change, or a policy or calendar edit) to the cycle's unstopped clocks:
// new targets and calendar, time counted so far carried over, the old and
// new due times noted in the ledger.
func (sy *slaSync) retime(at time.Time, why string) error {
	p, err := sy.s.clockPolicyFor(sy.ctx, &sy.view)
	if err != nil {
		return err
	}
	sy.policy = p
	for _, c := range sy.clocks {
		if c.State == ClockStopped {
			continue
		}
		target := p.Targets[c.Metric]
		business := target.BusinessHours && p.Calendar != nil
		if c.TargetMinutes == target.Minutes && c.BusinessHours == business && c.PolicyID == p.PolicyID &&
			c.WarningPercent == p.WarningPercent && sameCalendar(c.Calendar, p.Calendar) {
			continue
		}
		oldTarget, oldDue := c.TargetMinutes, c.DueAt
		running := c.State == ClockRunning
		if err := sy.close(c, at); err != nil {
			return err
		}
		c.TargetMinutes, c.BusinessHours, c.PolicyID, c.CalendarID, c.Calendar = target.Minutes, business, p.PolicyID, p.CalendarID, p.Calendar
		c.WarningPercent = p.WarningPercent
		sy.time(c)
		note := fmt.Sprintf("%s: target %s → %s", why, FormatMinutes(oldTarget), FormatMinutes(c.TargetMinutes))
		if oldDue != nil || c.DueAt != nil {
			note += fmt.Sprintf(", due %s → %s", stamp(oldDue), stamp(c.DueAt))
		}
		if err := sy.mark(c, at, note); err != nil {
			return err
		}
		kind := SegmentPaused
		if running {
			kind = SegmentRunning
		}
		if err := sy.open(c, kind, at); err != nil {
			return err
		}
	}
	sy.t.SLAPolicyID = p.PolicyID
	return nil
}

// stale reports whether an unstopped clock of the cycle is timed by
// another policy than the ticket's (targets, business hours, calendar,
// warning share or policy id differ): an edit of the policy or of its
// calendar, which no history entry records.
func (sy *slaSync) stale() bool {
	p := sy.policy
	for _, c := range sy.clocks {
		if c.State == ClockStopped {
			continue
		}
		target := p.Targets[c.Metric]
		business := target.BusinessHours && p.Calendar != nil
		if c.TargetMinutes != target.Minutes || c.BusinessHours != business || c.PolicyID != p.PolicyID ||
			c.WarningPercent != p.WarningPercent || !sameCalendar(c.Calendar, p.Calendar) {
			return true
		}
	}
	return false
}

// stamp formats an optional instant for a ledger note.
func stamp(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return models.Timestamp(*t)
}

// save stores the clocks and the ticket's SLA columns and answers the state.
func (sy *slaSync) save(now time.Time) (*SLAState, error) {
	t := sy.t
	st := &SLAState{TicketID: t.ID, OrganizationID: t.OrganizationID, Environment: t.Environment, Status: t.Status,
		Priority: t.Priority, Cycle: t.SLACycle, Done: t.Status == StatusClosed}
	var next, breach *time.Time
	earliest := func(cur *time.Time, at *time.Time) *time.Time {
		if at == nil || !at.After(now) {
			return cur
		}
		if cur == nil || at.Before(*cur) {
			v := *at
			return &v
		}
		return cur
	}
	for _, c := range sy.clocks {
		if err := sy.writeClock(c, now); err != nil {
			return nil, err
		}
		if c.State == ClockRunning {
			if c.BreachedAt == nil {
				breach = earliest(breach, c.DueAt)
				next = earliest(next, c.DueAt)
			}
			if c.WarnedAt == nil {
				next = earliest(next, c.WarnAt)
			}
			for _, at := range sy.ladderTimes(c, now) {
				next = earliest(next, &at)
			}
			if c.Metric == MetricResolution {
				for _, at := range sy.timerTimes(now) {
					next = earliest(next, &at)
				}
			}
		}
		st.Metrics = append(st.Metrics, MetricState{Metric: c.Metric, Status: c.Status(), TargetMinutes: c.TargetMinutes,
			ElapsedSeconds: int64(c.Elapsed(now) / time.Second), DueAt: c.DueAt})
	}
	sy.dues()
	t.SLANextBreachAt = breach
	err := sy.tx.Model(t).Select("sla_cycle", "sla_policy_id", "sla_synced_at", "sla_next_breach_at", "sla_response_minutes",
		"sla_resolution_minutes", "response_due", "resolution_due").UpdateColumns(t).Error
	if err != nil {
		return nil, dbErr(err)
	}
	st.NextAt, st.NextBreachAt = next, breach
	st.Breaches, st.Escalations = sy.breaches, sy.escalations
	return st, nil
}

// creditDue is the credit the cycle's breached resolution earns (nil when
// none: no breach, no service, or a policy without credit).
func (sy *slaSync) creditDue() *SLACreditRequest {
	c := sy.clock(MetricResolution)
	if c == nil || c.BreachedAt == nil || sy.t.ServiceAffected == "" || sy.policy.CreditBP <= 0 {
		return nil
	}
	return &SLACreditRequest{Ticket: sy.t, Cycle: c.Cycle, PercentBP: sy.policy.CreditBP, At: *c.BreachedAt}
}

// dues copies the clocks' targets and due times onto the ticket (a paused
// or stopped clock leaves its last due time), with the next breach.
func (sy *slaSync) dues() {
	t := sy.t
	var breach *time.Time
	for _, c := range sy.clocks {
		if c.State == ClockRunning && c.BreachedAt == nil && c.DueAt != nil && (breach == nil || c.DueAt.Before(*breach)) {
			d := *c.DueAt
			breach = &d
		}
		switch c.Metric {
		case MetricResponse:
			t.SLAResponseMinutes = c.TargetMinutes
			if c.DueAt != nil {
				t.ResponseDue = *c.DueAt
			}
		case MetricResolution:
			t.SLAResolutionMinutes = c.TargetMinutes
			if c.DueAt != nil {
				t.ResolutionDue = *c.DueAt
			}
		}
	}
	t.SLANextBreachAt = breach
}

// recordEvent writes an event of the ticket in the sync's transaction.
func (sy *slaSync) recordEvent(name string, data map[string]any) error {
	sy.events = append(sy.events, name)
	return eventlog.RecordEvent(sy.tx, eventlog.NewEvent(name, sy.t.ID, data))
}
