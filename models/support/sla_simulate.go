package support

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// MaxSimulatedTickets is the most tickets one what-if re-timing evaluates;
// a filter that matches more is truncated (oldest tickets first).
const MaxSimulatedTickets = 1000

// SimulateOpenStatuses are the statuses a simulation filter selects: the
// tickets whose clocks still count.
func SimulateOpenStatuses() []string {
	return []string{StatusOpen, StatusInProgress, StatusPending, StatusEscalated}
}

// SimulateFilter selects the open tickets a what-if re-timing evaluates;
// empty fields do not filter (Statuses empty: every open status).
type SimulateFilter struct {
	Statuses   []string
	Priorities []string
	Category   string
	CustomerID string
	PolicyID   string // the policy the tickets' clocks run under
}

// SimulateChange is the hypothetical change of a what-if re-timing:
// exactly one kind. Priority re-resolves each ticket's policy for that
// priority; PolicyID applies that policy's targets and calendar;
// CalendarID, with at least one of WorkingHours (replaces the week),
// Timezone, AddHolidays and RemoveHolidays (dates), re-times the
// business-hours clocks that count in that calendar.
type SimulateChange struct {
	Priority       string
	PolicyID       string
	CalendarID     string
	WorkingHours   *map[string][]ClockInterval
	Timezone       *string
	AddHolidays    []HolidayInput
	RemoveHolidays []string
}

// calendarKind reports whether c is a calendar change.
func (c *SimulateChange) calendarKind() bool {
	return c.CalendarID != "" || c.WorkingHours != nil || c.Timezone != nil || len(c.AddHolidays) > 0 || len(c.RemoveHolidays) > 0
}

// SimulateInput is a what-if re-timing: one ticket (TicketID) or the open
// tickets of a filter, and the change.
type SimulateInput struct {
	TicketID string
	Filter   *SimulateFilter
	Change   SimulateChange
}

// Simulation is the answer of a what-if re-timing: the tickets evaluated
// (at most MaxSimulatedTickets; Truncated when the filter matched more)
// with their clocks before and after the change, at ComputedAt.
type Simulation struct {
	Change     SimulateChange
	Evaluated  int
	Truncated  bool
	ComputedAt time.Time
	Tickets    []SimulatedTicket
}

// SimulatedTicket is one ticket of a simulation with its running and
// paused clocks of the current cycle.
type SimulatedTicket struct {
	Ticket  *Ticket
	Metrics []SimulatedMetric
}

// SimulatedMetric is one clock before and after the change. Dues are nil
// on a paused clock; Shift is DueAfter minus DueBefore (0 when either is
// nil). WouldBreachImmediately: the clock runs, has not breached, and the
// time it has counted already reaches the new target.
type SimulatedMetric struct {
	Metric                 string
	Status                 string
	Changed                bool
	Elapsed                time.Duration
	TargetBefore           int // minutes
	TargetAfter            int
	BusinessHoursBefore    bool
	BusinessHoursAfter     bool
	DueBefore              *time.Time
	DueAfter               *time.Time
	Shift                  time.Duration
	WouldBreachImmediately bool
}

func slaSimulateForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "SLA what-if re-timing is for provider staff with %s", PermissionAdmin).
		WithDetail("required_permission", PermissionAdmin)
}

// SimulateSLA answers the due times a hypothetical change (a priority, an
// SLA policy, or an edit of a business calendar) would give one ticket or
// the open tickets of a filter, computed with the clocks' own arithmetic
// (time counted so far carried over, as a real re-timing does) from the
// clocks as last synced. It writes nothing. Errors:
// INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR, NOT_FOUND (the ticket, the
// policy or the calendar).
func (s *Store) SimulateSLA(ctx context.Context, p *models.Principal, in SimulateInput, now time.Time) (*Simulation, error) {
	if !CanAdminister(p) {
		return nil, slaSimulateForbidden()
	}
	now = now.UTC()
	if err := s.validateSimulation(ctx, &in); err != nil {
		return nil, err
	}
	plan, err := s.simulationPlan(ctx, in.Change)
	if err != nil {
		return nil, err
	}
	tickets, truncated, err := s.simulatedTickets(ctx, p, in)
	if err != nil {
		return nil, err
	}
	clocks, err := s.simulatedClocks(ctx, p, tickets)
	if err != nil {
		return nil, err
	}
	out := &Simulation{Change: in.Change, Evaluated: len(tickets), Truncated: truncated, ComputedAt: now, Tickets: []SimulatedTicket{}}
	for _, t := range tickets {
		st := SimulatedTicket{Ticket: t, Metrics: []SimulatedMetric{}}
		for _, c := range clocks[t.ID] {
			set, err := plan.settings(ctx, t, c)
			if err != nil {
				return nil, err
			}
			st.Metrics = append(st.Metrics, simulateClock(c, set, now))
		}
		out.Tickets = append(out.Tickets, st)
	}
	return out, nil
}

// validateSimulation checks the shape of in (every issue at once) and
// trims its strings.
func (s *Store) validateSimulation(ctx context.Context, in *SimulateInput) error {
	var v models.Validator
	in.TicketID = strings.TrimSpace(in.TicketID)
	switch {
	case in.TicketID != "" && in.Filter != nil:
		v.Add("ticket_id", "send either ticket_id or filter, not both")
	case in.TicketID == "" && in.Filter == nil:
		v.Add("ticket_id", "is required unless filter is sent")
	}
	if f := in.Filter; f != nil {
		for _, st := range f.Statuses {
			v.Check(slices.Contains(SimulateOpenStatuses(), st), "filter.status", "must be one of "+joinList(SimulateOpenStatuses()))
		}
		for _, pr := range f.Priorities {
			v.Check(priorityRank(pr) >= 0, "filter.priority", "must be one of "+joinList(Priorities()))
		}
		f.Category, f.CustomerID, f.PolicyID = strings.TrimSpace(f.Category), strings.TrimSpace(f.CustomerID), strings.TrimSpace(f.PolicyID)
		if f.Category != "" {
			cats, err := s.ListCategories(ctx)
			if err != nil {
				return err
			}
			v.Check(categoryByID(cats, f.Category) != nil, "filter.category", "must be one of "+joinList(categoryIDs(cats)))
		}
	}
	c := &in.Change
	c.Priority, c.PolicyID, c.CalendarID = strings.TrimSpace(c.Priority), strings.TrimSpace(c.PolicyID), strings.TrimSpace(c.CalendarID)
	kinds := 0
	for _, k := range []bool{c.Priority != "", c.PolicyID != "", c.calendarKind()} {
		if k {
			kinds++
		}
	}
	v.Check(kinds == 1, "change", "must name exactly one change: priority, policy_id, or calendar_id with its edits")
	v.Check(c.Priority == "" || priorityRank(c.Priority) >= 0, "change.priority", "must be one of "+joinList(Priorities()))
	if kinds == 1 && c.calendarKind() {
		v.Check(c.CalendarID != "", "change.calendar_id", "is required with working_hours, timezone, add_holidays and remove_holidays")
		v.Check(c.WorkingHours != nil || c.Timezone != nil || len(c.AddHolidays) > 0 || len(c.RemoveHolidays) > 0, "change",
			"a calendar change needs working_hours, timezone, add_holidays or remove_holidays")
		var week models.Validator
		if c.WorkingHours != nil {
			parseWeek(&week, *c.WorkingHours)
		}
		if c.Timezone != nil {
			tz := strings.TrimSpace(*c.Timezone)
			c.Timezone = &tz
			week.Check(ValidTimezone(tz), "timezone", "must be an IANA time zone name, such as Europe/London or UTC")
		}
		parseHolidays(&week, "add_holidays", c.AddHolidays, c.CalendarID)
		seen := map[string]bool{}
		for i, d := range c.RemoveHolidays {
			f := "remove_holidays[" + itoa(i) + "]"
			d = strings.TrimSpace(d)
			c.RemoveHolidays[i] = d
			switch {
			case !validHolidayDate(d):
				week.Add(f, "must be a date YYYY-MM-DD, such as 2026-12-25")
			case seen[d]:
				week.Add(f, "is listed twice")
			case slices.ContainsFunc(c.AddHolidays, func(h HolidayInput) bool { return strings.TrimSpace(h.Date) == d }):
				week.Add(f, "is also in add_holidays")
			}
			seen[d] = true
		}
		addIssues(&v, "change.", week.Err())
	}
	return v.Err()
}

// addIssues copies the field issues of a VALIDATION_ERROR into v, their
// fields prefixed.
func addIssues(v *models.Validator, prefix string, err error) {
	e := models.AsError(err)
	if e == nil {
		return
	}
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	for _, is := range issues {
		v.Add(prefix+is.Field, is.Issue)
	}
}

// simSettings is what a change makes of one clock: its target, whether it
// counts in business hours and the calendar it counts in.
type simSettings struct {
	Minutes       int
	BusinessHours bool
	CalendarID    string
	Calendar      *businesstime.Calendar
}

// simPlan is a change resolved once for every ticket of a simulation.
type simPlan struct {
	s        *Store
	change   SimulateChange
	policy   *SLAPolicy             // a policy change
	polCal   *businesstime.Calendar // its calendar
	cats     []Category
	calendar *businesstime.Calendar  // a calendar change: the edited calendar
	cache    map[string]*clockPolicy // a priority change: policies by ticket shape
}

// simulationPlan loads what the change names. Errors: NOT_FOUND,
// VALIDATION_ERROR (holidays removed that the calendar does not have, or
// added that it has).
func (s *Store) simulationPlan(ctx context.Context, ch SimulateChange) (*simPlan, error) {
	plan := &simPlan{s: s, change: ch, cache: map[string]*clockPolicy{}}
	switch {
	case ch.PolicyID != "":
		pol, err := s.slaPolicy(ctx, ch.PolicyID)
		if err != nil {
			return nil, err
		}
		plan.policy = pol
		if pol.CalendarID != "" {
			cal, err := s.calendar(ctx, pol.CalendarID)
			if err != nil {
				return nil, err
			}
			plan.polCal = cal.BusinessTime()
		}
		if pol.Tier == "" && pol.Category == "" {
			if plan.cats, err = s.ListCategories(ctx); err != nil {
				return nil, err
			}
		}
	case ch.CalendarID != "":
		cal, err := s.calendar(ctx, ch.CalendarID)
		if err != nil {
			return nil, err
		}
		if plan.calendar, err = editedCalendar(cal, ch); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// editedCalendar is cal with the edits of ch, in the form of the
// business-time engine.
func editedCalendar(cal *Calendar, ch SimulateChange) (*businesstime.Calendar, error) {
	var v models.Validator
	c := *cal
	c.Holidays = slices.Clone(cal.Holidays)
	if ch.WorkingHours != nil {
		c.Week = parseWeek(&models.Validator{}, *ch.WorkingHours) // validated already
	}
	if ch.Timezone != nil {
		c.Timezone = *ch.Timezone
	}
	for i, d := range ch.RemoveHolidays {
		j := slices.IndexFunc(c.Holidays, func(h Holiday) bool { return h.Date == d })
		if j < 0 {
			v.Add("change.remove_holidays["+itoa(i)+"]", "is not a holiday of calendar "+cal.ID)
			continue
		}
		c.Holidays = slices.Delete(c.Holidays, j, j+1)
	}
	for i, h := range ch.AddHolidays {
		d := strings.TrimSpace(h.Date)
		if slices.ContainsFunc(c.Holidays, func(o Holiday) bool { return o.Date == d }) {
			v.Add("change.add_holidays["+itoa(i)+"].date", "is already a holiday of calendar "+cal.ID)
			continue
		}
		c.Holidays = append(c.Holidays, Holiday{CalendarID: c.ID, Date: d, Name: strings.TrimSpace(h.Name)})
	}
	v.Check(len(c.Holidays) <= MaxHolidays, "change.add_holidays", "would give the calendar more than "+itoa(MaxHolidays)+" holidays")
	if err := v.Err(); err != nil {
		return nil, err
	}
	sortHolidays(c.Holidays)
	return c.BusinessTime(), nil
}

// settings answers what the change makes of clock c of ticket t (nil: the
// change leaves it as it is).
func (pl *simPlan) settings(ctx context.Context, t *Ticket, c *Clock) (*simSettings, error) {
	var set simSettings
	switch {
	case pl.change.Priority != "":
		view := *t
		view.Priority = pl.change.Priority
		key := strings.Join([]string{t.OrganizationID, string(t.Environment), t.ServiceAffected, t.Category, view.Priority}, "\x00")
		cp := pl.cache[key]
		if cp == nil {
			var err error
			if cp, err = pl.s.clockPolicyFor(ctx, &view); err != nil {
				return nil, err
			}
			pl.cache[key] = cp
		}
		tg := cp.Targets[c.Metric]
		set = simSettings{Minutes: tg.Minutes, BusinessHours: tg.BusinessHours && cp.Calendar != nil, CalendarID: cp.CalendarID, Calendar: cp.Calendar}
	case pl.policy != nil:
		tg := pl.policyTarget(t, c.Metric)
		set = simSettings{Minutes: tg.Minutes, BusinessHours: tg.BusinessHours && pl.polCal != nil, CalendarID: pl.policy.CalendarID, Calendar: pl.polCal}
	case pl.calendar != nil:
		if c.CalendarID != pl.change.CalendarID || !c.BusinessHours {
			return nil, nil
		}
		set = simSettings{Minutes: c.TargetMinutes, BusinessHours: true, CalendarID: c.CalendarID, Calendar: pl.calendar}
	}
	if set.Minutes == c.TargetMinutes && set.BusinessHours == c.BusinessHours && sameCalendar(set.Calendar, c.Calendar) {
		return nil, nil
	}
	return &set, nil
}

// policyTarget is the target of metric under the policy of a policy
// change for t's priority; under the catch-all policy (no tier, no
// category) the category's own targets in calendar time, as clockPolicyFor
// counts them.
func (pl *simPlan) policyTarget(t *Ticket, metric string) metricTarget {
	d := DefaultSLATargets()[t.Priority]
	minutes := func(resp, res int) int {
		if metric == MetricResponse {
			return resp
		}
		return res
	}
	if cat := categoryByID(pl.cats, t.Category); cat != nil {
		if tg, ok := cat.Target(t.Priority); ok {
			return metricTarget{Minutes: minutes(tg.ResponseMinutes, tg.ResolutionMinutes)}
		}
	}
	if tg, ok := pl.policy.Target(t.Priority); ok {
		return metricTarget{Minutes: minutes(tg.ResponseMinutes, tg.ResolutionMinutes), BusinessHours: tg.BusinessHours}
	}
	return metricTarget{Minutes: minutes(d[0], d[1])}
}

// simulateClock compares clock c as it is with c re-timed by set at now:
// the time counted so far is banked in the clock's current calendar, then
// the new target counts on in the new one (set nil: unchanged).
func simulateClock(c *Clock, set *simSettings, now time.Time) SimulatedMetric {
	m := SimulatedMetric{Metric: c.Metric, Status: c.Status(), Elapsed: c.Elapsed(now), TargetBefore: c.TargetMinutes, TargetAfter: c.TargetMinutes,
		BusinessHoursBefore: c.BusinessHours, BusinessHoursAfter: c.BusinessHours, DueBefore: c.when(100)}
	m.DueAfter = m.DueBefore
	if set == nil {
		return m
	}
	after := *c
	if after.State == ClockRunning && after.RunningSince != nil {
		if now.After(*after.RunningSince) {
			after.ElapsedSeconds += int64(after.cal().Between(*after.RunningSince, now) / time.Second)
		}
		at := now
		after.RunningSince = &at
	}
	after.TargetMinutes, after.BusinessHours, after.CalendarID, after.Calendar = set.Minutes, set.BusinessHours, set.CalendarID, set.Calendar
	m.Changed = true
	m.TargetAfter, m.BusinessHoursAfter, m.DueAfter = after.TargetMinutes, after.BusinessHours, after.when(100)
	if m.DueBefore != nil && m.DueAfter != nil {
		m.Shift = m.DueAfter.Sub(*m.DueBefore)
	}
	m.WouldBreachImmediately = c.State == ClockRunning && c.BreachedAt == nil && after.Elapsed(now) >= after.Target()
	return m
}

// simulatedTickets loads the ticket of in, or the open tickets of its
// filter (oldest first, at most MaxSimulatedTickets; truncated when more
// match). Errors: NOT_FOUND.
func (s *Store) simulatedTickets(ctx context.Context, p *models.Principal, in SimulateInput) ([]*Ticket, bool, error) {
	if in.Filter == nil {
		t, err := s.GetTicket(ctx, p, in.TicketID)
		if err != nil {
			return nil, false, err
		}
		return []*Ticket{t}, false, nil
	}
	f := in.Filter
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = SimulateOpenStatuses()
	}
	q, err := s.ticketQuery(ctx, p, TicketFilter{CustomerID: f.CustomerID, Status: statuses, Priority: f.Priorities, Category: f.Category}, &models.Validator{})
	if err != nil {
		return nil, false, err
	}
	if f.PolicyID != "" {
		q = q.Where("sla_policy_id = ?", f.PolicyID)
	}
	var rows []Ticket
	if err := q.Order("created_at ASC").Order("id ASC").Limit(MaxSimulatedTickets + 1).Find(&rows).Error; err != nil {
		return nil, false, dbErr(err)
	}
	truncated := len(rows) > MaxSimulatedTickets
	if truncated {
		rows = rows[:MaxSimulatedTickets]
	}
	out := make([]*Ticket, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out, truncated, nil
}

// simulatedClocks loads the running and paused clocks of the tickets'
// current cycles, by ticket id, in the order of Metrics.
func (s *Store) simulatedClocks(ctx context.Context, p *models.Principal, tickets []*Ticket) (map[string][]*Clock, error) {
	out := map[string][]*Clock{}
	if len(tickets) == 0 {
		return out, nil
	}
	cycle := map[string]int{}
	ids := make([]string, len(tickets))
	for i, t := range tickets {
		ids[i], cycle[t.ID] = t.ID, max(t.SLACycle, 1)
	}
	var rows []*Clock
	err := s.core.In(ctx, p.Scope()).Where("ticket_id IN ? AND state IN ?", ids, []string{ClockRunning, ClockPaused}).Find(&rows).Error
	if err != nil {
		return nil, dbErr(err)
	}
	for _, c := range rows {
		if c.Cycle == cycle[c.TicketID] {
			out[c.TicketID] = append(out[c.TicketID], c)
		}
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b *Clock) int { return slices.Index(Metrics(), a.Metric) - slices.Index(Metrics(), b.Metric) })
	}
	return out, nil
}
