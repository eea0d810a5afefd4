package support_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// officeCalendar creates a UTC calendar, Monday to Friday 09:00 to 17:00.
func (f *slaFixture) officeCalendar() *support.Calendar {
	f.t.Helper()
	c, err := f.s.CreateCalendar(f.ctx, slaAdmin(), support.CalendarInput{Name: ptr("Office"), Timezone: ptr("UTC")})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// businessPolicy creates a policy of tier and category on cal whose high
// (1h/8h) and medium (4h/24h) targets count in business hours.
func (f *slaFixture) businessPolicy(tier, category, calendarID string) *support.SLAPolicy {
	f.t.Helper()
	p, err := f.s.CreateSLAPolicy(f.ctx, slaAdmin(), support.PolicyInput{Name: ptr(tier + " office hours"), Tier: ptr(tier), Category: ptr(category),
		CalendarID: ptr(calendarID), Targets: map[string]support.PolicyTargetInput{
			"high":   {ResponseTime: "1h", ResolutionTime: "8h", BusinessHours: true},
			"medium": {ResponseTime: "4h", ResolutionTime: "24h", BusinessHours: true}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *slaFixture) simulate(in support.SimulateInput) *support.Simulation {
	f.t.Helper()
	sim, err := f.s.SimulateSLA(f.ctx, slaAdmin(), in, f.clock)
	if err != nil {
		f.t.Fatal(err)
	}
	return sim
}

// wantMetric is what a simulated clock should show.
type wantMetric struct {
	metric, status        string
	before, after         int // target minutes
	dueBefore, dueAfter   time.Time
	shift                 time.Duration
	breach, businessAfter bool
	noDues                bool // paused: no due time before or after
}

func checkMetric(t *testing.T, got support.SimulatedMetric, w wantMetric) {
	t.Helper()
	due := func(p *time.Time) string {
		if p == nil {
			return "none"
		}
		return p.UTC().Format(time.RFC3339)
	}
	if got.Metric != w.metric || got.Status != w.status || got.TargetBefore != w.before || got.TargetAfter != w.after ||
		got.Shift != w.shift || got.WouldBreachImmediately != w.breach || got.BusinessHoursAfter != w.businessAfter {
		t.Fatalf("metric %+v, want %+v", got, w)
	}
	if w.noDues {
		if got.DueBefore != nil || got.DueAfter != nil {
			t.Fatalf("%s: dues %s %s on a paused clock", w.metric, due(got.DueBefore), due(got.DueAfter))
		}
		return
	}
	if got.DueBefore == nil || got.DueAfter == nil || !got.DueBefore.Equal(w.dueBefore) || !got.DueAfter.Equal(w.dueAfter) {
		t.Fatalf("%s: due %s → %s, want %s → %s", w.metric, due(got.DueBefore), due(got.DueAfter), due(&w.dueBefore), due(&w.dueAfter))
	}
}

func TestSimulateSLA(t *testing.T) {
	mon9 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) // a Monday
	mon15 := mon9.Add(6 * time.Hour)
	day := 24 * time.Hour
	tests := []struct {
		name  string
		setup func(f *slaFixture) support.SimulateInput
		want  []wantMetric
	}{
		{"priority upgrade: elapsed time carried over", func(f *slaFixture) support.SimulateInput {
			tk := f.open(support.PriorityHigh) // 1h / 8h, calendar time
			f.clock = mon9.Add(30 * time.Minute)
			return support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{Priority: support.PriorityCritical}} // 15m / 4h
		}, []wantMetric{
			{metric: "response", status: "in_progress", before: 60, after: 15, dueBefore: mon9.Add(time.Hour), dueAfter: mon9.Add(30 * time.Minute),
				shift: -30 * time.Minute, breach: true},
			{metric: "resolution", status: "in_progress", before: 480, after: 240, dueBefore: mon9.Add(8 * time.Hour), dueAfter: mon9.Add(4 * time.Hour),
				shift: -4 * time.Hour},
		}},
		{"a policy switch to business hours", func(f *slaFixture) support.SimulateInput {
			f.clock = mon15
			tk := f.open(support.PriorityHigh)
			pol := f.businessPolicy(support.TierEnterprise, "", f.officeCalendar().ID)
			return support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{PolicyID: pol.ID}}
		}, []wantMetric{
			{metric: "response", status: "in_progress", before: 60, after: 60, dueBefore: mon15.Add(time.Hour), dueAfter: mon15.Add(time.Hour), businessAfter: true},
			// 2h on Monday (15:00-17:00), 6h on Tuesday (09:00-15:00).
			{metric: "resolution", status: "in_progress", before: 480, after: 480, dueBefore: mon15.Add(8 * time.Hour), dueAfter: mon15.Add(day),
				shift: 16 * time.Hour, businessAfter: true},
		}},
		{"a holiday added moves the dues a working day", func(f *slaFixture) support.SimulateInput {
			cal := f.officeCalendar()
			f.businessPolicy(support.TierPremium, "general", cal.ID) // the demo organization's tier
			f.clock = mon15
			f.open(support.PriorityMedium)
			return support.SimulateInput{Filter: &support.SimulateFilter{}, Change: support.SimulateChange{CalendarID: cal.ID,
				AddHolidays: []support.HolidayInput{{Date: "2026-11-24", Name: "Company day"}}}}
		}, []wantMetric{
			// 4h: 2h on Monday, 2h on Tuesday → Wednesday once Tuesday is off.
			{metric: "response", status: "in_progress", before: 240, after: 240, dueBefore: mon9.Add(day + 2*time.Hour), dueAfter: mon9.Add(2*day + 2*time.Hour),
				shift: day, businessAfter: true},
			// 24h: Monday 2h, Tuesday, Wednesday, Thursday 6h → Friday.
			{metric: "resolution", status: "in_progress", before: 1440, after: 1440, dueBefore: mon15.Add(3 * day), dueAfter: mon15.Add(4 * day),
				shift: day, businessAfter: true},
		}},
		{"a paused clock: targets change, no due", func(f *slaFixture) support.SimulateInput {
			tk := f.open(support.PriorityHigh)
			f.clock = mon9.Add(10 * time.Minute)
			f.update(tk.ID, support.UpdateInput{Status: str(support.StatusPending)}) // answered: response met, resolution paused
			f.sync(tk.ID)
			f.clock = mon9.Add(2 * time.Hour)
			return support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{Priority: support.PriorityCritical}}
		}, []wantMetric{
			{metric: "resolution", status: "paused", before: 480, after: 240, noDues: true},
		}},
		{"a calendar change leaves clocks in calendar time alone", func(f *slaFixture) support.SimulateInput {
			tk := f.open(support.PriorityHigh)
			return support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{CalendarID: support.SeedCalendarID, Timezone: ptr("Asia/Tokyo")}}
		}, []wantMetric{
			{metric: "response", status: "in_progress", before: 60, after: 60, dueBefore: mon9.Add(time.Hour), dueAfter: mon9.Add(time.Hour)},
			{metric: "resolution", status: "in_progress", before: 480, after: 480, dueBefore: mon9.Add(8 * time.Hour), dueAfter: mon9.Add(8 * time.Hour)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSLAFixture(t)
			in := tc.setup(f)
			before := f.snapshot()
			sim := f.simulate(in)
			if after := f.snapshot(); after != before {
				t.Fatalf("the simulation wrote:\nbefore %s\nafter  %s", before, after)
			}
			if sim.Evaluated != 1 || sim.Truncated || len(sim.Tickets) != 1 || !sim.ComputedAt.Equal(f.clock) {
				t.Fatalf("simulation %+v", sim)
			}
			got := sim.Tickets[0].Metrics
			if len(got) != len(tc.want) {
				t.Fatalf("metrics %+v, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				checkMetric(t, got[i], w)
			}
		})
	}
}

// snapshot is the row count of every table a simulation reads, and the
// update times of the tickets, clocks, calendars and policies.
func (f *slaFixture) snapshot() string {
	f.t.Helper()
	db := f.core.In(f.ctx, models.SystemScope())
	out := ""
	for _, table := range []string{"support_tickets", "support_ticket_history", "support_sla_clocks", "support_sla_segments", "support_sla_escalations",
		"support_calendars", "support_calendar_holidays", "support_sla_policies", "support_sla_policy_targets", "events"} {
		var n int64
		if err := db.Table(table).Count(&n).Error; err != nil {
			f.t.Fatal(err)
		}
		out += fmt.Sprintf("%s=%d ", table, n)
	}
	stamps := func(model any, list *[]time.Time) {
		var rows []struct{ UpdatedAt time.Time }
		if err := db.Model(model).Select("updated_at").Find(&rows).Error; err != nil {
			f.t.Fatal(err)
		}
		for _, r := range rows {
			*list = append(*list, r.UpdatedAt.UTC())
		}
	}
	var times []time.Time
	stamps(&support.Ticket{}, &times)
	stamps(&support.Clock{}, &times)
	stamps(&support.Calendar{}, &times)
	stamps(&support.SLAPolicy{}, &times)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	return out + fmt.Sprint(times)
}

func TestSimulateSLAFilterAndLimits(t *testing.T) {
	f := newSLAFixture(t)
	high := f.open(support.PriorityHigh)
	f.clock = f.clock.Add(time.Minute) // oldest first
	low := f.open(support.PriorityLow)
	closed := f.open(support.PriorityLow)
	f.update(closed.ID, support.UpdateInput{Status: str(support.StatusResolved)})
	sim := f.simulate(support.SimulateInput{Filter: &support.SimulateFilter{}, Change: support.SimulateChange{Priority: support.PriorityCritical}})
	if sim.Evaluated != 2 || sim.Truncated || sim.Tickets[0].Ticket.ID != high.ID || sim.Tickets[1].Ticket.ID != low.ID {
		t.Fatalf("open tickets %+v", sim)
	}
	sim = f.simulate(support.SimulateInput{Filter: &support.SimulateFilter{Priorities: []string{"low"}, Statuses: []string{"open"}},
		Change: support.SimulateChange{Priority: support.PriorityLow}})
	if sim.Evaluated != 1 || sim.Tickets[0].Ticket.ID != low.ID || sim.Tickets[0].Metrics[1].Changed || sim.Tickets[0].Metrics[1].Shift != 0 {
		t.Fatalf("low tickets to low %+v", sim.Tickets)
	}
	sim = f.simulate(support.SimulateInput{Filter: &support.SimulateFilter{PolicyID: "slap_other"}, Change: support.SimulateChange{Priority: "high"}})
	if sim.Evaluated != 0 || len(sim.Tickets) != 0 {
		t.Fatalf("by policy %+v", sim)
	}
}

func TestSimulateSLAErrors(t *testing.T) {
	f := newSLAFixture(t)
	tk := f.open(support.PriorityHigh)
	crit := support.SimulateChange{Priority: support.PriorityCritical}
	tests := []struct {
		name   string
		in     support.SimulateInput
		fields []string
	}{
		{"neither ticket nor filter", support.SimulateInput{Change: crit}, []string{"ticket_id"}},
		{"both", support.SimulateInput{TicketID: tk.ID, Filter: &support.SimulateFilter{}, Change: crit}, []string{"ticket_id"}},
		{"no change", support.SimulateInput{TicketID: tk.ID}, []string{"change"}},
		{"two changes", support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{Priority: "high", PolicyID: "slap_default"}}, []string{"change"}},
		{"closed statuses and unknown values", support.SimulateInput{Filter: &support.SimulateFilter{Statuses: []string{"closed"}, Priorities: []string{"urgent"},
			Category: "quantum"}, Change: support.SimulateChange{Priority: "urgent"}}, []string{"filter.status", "filter.priority", "filter.category", "change.priority"}},
		{"calendar edits without a calendar", support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{Timezone: ptr("UTC")}}, []string{"change.calendar_id"}},
		{"a calendar without edits", support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{CalendarID: support.SeedCalendarID}}, []string{"change"}},
		{"bad calendar edits", support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{CalendarID: support.SeedCalendarID, Timezone: ptr("Mars/Base"),
			WorkingHours:   &map[string][]support.ClockInterval{"monday": {{Start: "17:00", End: "09:00"}}},
			AddHolidays:    []support.HolidayInput{{Date: "2026-02-30"}, {Date: "2026-12-24"}},
			RemoveHolidays: []string{"2026-12-24", "soon"}}},
			[]string{"change.timezone", "change.working_hours.monday[0].end", "change.add_holidays[0].date", "change.remove_holidays[0]", "change.remove_holidays[1]"}},
		{"a holiday the calendar does not have", support.SimulateInput{TicketID: tk.ID, Change: support.SimulateChange{CalendarID: support.SeedCalendarID,
			RemoveHolidays: []string{"2026-12-25"}}}, []string{"change.remove_holidays[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.SimulateSLA(f.ctx, slaAdmin(), tc.in, f.clock)
			wantIssues(t, err, tc.fields...)
		})
	}
	for _, in := range []support.SimulateInput{
		{TicketID: "tkt_nowhere", Change: crit},
		{TicketID: tk.ID, Change: support.SimulateChange{PolicyID: "slap_nowhere"}},
		{TicketID: tk.ID, Change: support.SimulateChange{CalendarID: "cal_nowhere", Timezone: ptr("UTC")}},
	} {
		if _, err := f.s.SimulateSLA(f.ctx, slaAdmin(), in, f.clock); models.ErrorCode(err) != models.CodeNotFound {
			t.Fatalf("%+v: %v, want NOT_FOUND", in, err)
		}
	}
	reader := &models.Principal{Role: models.RoleAgent, Permissions: []string{support.PermissionRead, support.PermissionWrite}}
	for _, p := range []*models.Principal{f.customer, reader} {
		if _, err := f.s.SimulateSLA(f.ctx, p, support.SimulateInput{TicketID: tk.ID, Change: crit}, f.clock); models.ErrorCode(err) != models.CodeInsufficientPermissions {
			t.Fatalf("%s: %v", p.Role, err)
		}
	}
}
