package workflows_test

import (
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// calendar creates a Monday-to-Friday 09:00–17:00 calendar in zone.
func (r *slaRun) calendar(zone string, holidays ...support.HolidayInput) *support.Calendar {
	r.t.Helper()
	hours := map[string][]support.ClockInterval{}
	for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday"} {
		hours[d] = []support.ClockInterval{{Start: "09:00", End: "17:00"}}
	}
	in := support.CalendarInput{Name: ptr("Office " + zone), Timezone: &zone, WorkingHours: &hours}
	if len(holidays) > 0 {
		in.Holidays = &holidays
	}
	cal, err := r.s.CreateCalendar(r.ctx, r.staff, in)
	if err != nil {
		r.t.Fatal(err)
	}
	return cal
}

// policy creates the policy of the demo customer's tier for the general
// category.
func (r *slaRun) policy(in support.PolicyInput) *support.SLAPolicy {
	r.t.Helper()
	in.Name, in.Tier, in.Category = ptr("Demo tier, general"), ptr(support.TierOf("", r.plan)), ptr("general")
	pol, err := r.s.CreateSLAPolicy(r.ctx, r.staff, in)
	if err != nil {
		r.t.Fatal(err)
	}
	return pol
}

// businessTargets are 4h response and 16h resolution for medium tickets,
// in business hours.
var businessTargets = map[string]support.PolicyTargetInput{
	support.PriorityMedium: {ResponseTime: "4h", ResolutionTime: "16h", BusinessHours: true},
}

// TestTicketSLABusinessHours: a medium ticket opened on Friday 16:00 in New
// York before the fall-back weekend, the Monday a holiday, on 4h/16h
// business-hours targets: one hour counts on Friday, none over the weekend
// and the holiday; the response is due Tuesday 12:00 EST, the resolution
// Wednesday 16:00 EST; the workflow's timers fire at those instants.
func TestTicketSLABusinessHours(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 10, 30, 16, 0, 0, 0, ny) // EDT, UTC-4
	r := newSLARun(t, t0.UTC())
	cal := r.calendar("America/New_York", support.HolidayInput{Date: "2026-11-02", Name: "Bridge day"})
	r.policy(support.PolicyInput{CalendarID: &cal.ID, Targets: businessTargets})
	tk := r.open(support.PriorityMedium)
	closeAt := time.Date(2026, 11, 5, 10, 0, 0, 0, ny)
	r.closeAt(closeAt.Sub(t0), tk.ID)
	r.run(tk.ID)
	want := map[string][2]time.Time{ // warning at 75 %, due
		support.MetricResponse:   {time.Date(2026, 11, 3, 11, 0, 0, 0, ny), time.Date(2026, 11, 3, 12, 0, 0, 0, ny)},
		support.MetricResolution: {time.Date(2026, 11, 4, 12, 0, 0, 0, ny), time.Date(2026, 11, 4, 16, 0, 0, 0, ny)},
	}
	for m, w := range want {
		c := r.clock(tk.ID, m, 1)
		if !c.BusinessHours || c.CalendarID != cal.ID || !sameTime(c.WarnedAt, &w[0]) || !sameTime(c.DueAt, &w[1]) || !sameTime(c.BreachedAt, &w[1]) {
			t.Errorf("%s clock: warned %v due %v breached %v, want %v", m, c.WarnedAt, c.DueAt, c.BreachedAt, w)
		}
		r.synced(w[0], w[1])
		if c.ElapsedSeconds != int64(18*time.Hour/time.Second) { // never stopped before the resolution
			t.Errorf("%s elapsed %ds", m, c.ElapsedSeconds)
		}
	}
	if r.syncs[1].Before(want[support.MetricResponse][0]) {
		t.Errorf("a sync before any working time could count: %v", r.syncs)
	}
	if nb := r.nextBreaches(); len(nb) == 0 || !nb[0].Equal(want[support.MetricResponse][1]) {
		t.Errorf("SlaNextBreachAt upserts %v", nb)
	}
	// The ledger counts the business time of the running stretch: Friday's
	// hour, Tuesday's eight, Wednesday's eight and Thursday's first hour.
	segs := r.segments(tk.ID, support.MetricResolution)
	if len(segs) != 1 || segs[0].BusinessSeconds != int64(18*time.Hour/time.Second) {
		t.Errorf("resolution ledger %+v", segs)
	}
}

// TestTicketSLACalendarEdit: a holiday added to the calendar of an open
// ticket's policy, then the signal the API fans out: the due time moves a
// working day later without the ticket being touched; the breach comes at
// the new instant, not the old one.
func TestTicketSLACalendarEdit(t *testing.T) {
	t0 := slaMonday
	r := newSLARun(t, t0)
	cal := r.calendar("UTC")
	r.policy(support.PolicyInput{CalendarID: &cal.ID, Targets: businessTargets})
	tk := r.open(support.PriorityMedium)
	var before, after support.SLAState
	r.env.RegisterDelayedCallback(func() { before = r.state() }, 30*time.Minute)
	r.at(time.Hour, func() {
		holidays := []support.HolidayInput{{Date: "2026-11-24", Name: "Tuesday off"}}
		if _, err := r.s.UpdateCalendar(r.ctx, r.staff, cal.ID, support.CalendarInput{Holidays: &holidays}); err != nil {
			t.Error(err)
		}
	})
	r.env.RegisterDelayedCallback(func() { after = r.state() }, 90*time.Minute)
	r.closeAt(4*24*time.Hour, tk.ID)
	r.run(tk.ID)
	oldDue, newDue := t0.Add(32*time.Hour), t0.Add(56*time.Hour) // Tuesday 17:00 → Wednesday 17:00
	if m := metricOf(before, support.MetricResolution); !sameTime(m.DueAt, &oldDue) {
		t.Errorf("before the edit %+v", m)
	}
	if m := metricOf(after, support.MetricResolution); !sameTime(m.DueAt, &newDue) {
		t.Errorf("after the edit %+v, want due %v", m, newDue)
	}
	c := r.clock(tk.ID, support.MetricResolution, 1)
	if !sameTime(c.BreachedAt, &newDue) {
		t.Errorf("resolution breached %v, want %v", c.BreachedAt, newDue)
	}
	r.synced(newDue)
	for _, at := range r.syncs {
		if at.Equal(oldDue) {
			t.Errorf("a timer at the old due time %v", oldDue)
		}
	}
	var retimed int
	for _, g := range r.segments(tk.ID, support.MetricResolution) {
		if g.Kind == support.SegmentRetimed {
			retimed++
			if !g.StartedAt.Equal(t0.Add(time.Hour)) {
				t.Errorf("retimed at %v", g.StartedAt)
			}
		}
	}
	if retimed != 1 {
		t.Errorf("%d retimed segments", retimed)
	}
}

// TestTicketSLALadder: a high ticket (8h resolution) under a ladder of
// notify_assignee at 50 %, reassign_team_lead at 80 %, escalate and
// page_duty_manager (every 30 minutes) at 100 %: each step fires once at
// its instant, the page repeats until staff acknowledge; a ticket resolved
// before 80 % fires only the first step.
func TestTicketSLALadder(t *testing.T) {
	steps := []support.EscalationStepInput{
		{Metric: support.MetricResolution, AtPercent: 50, Action: support.ActionNotifyAssignee},
		{Metric: support.MetricResolution, AtPercent: 80, Action: support.ActionReassignTeamLead},
		{Metric: support.MetricResolution, AtPercent: 100, Action: support.ActionEscalate},
		{Metric: support.MetricResolution, AtPercent: 100, Action: support.ActionPageDutyManager, RepeatEvery: "30m"},
	}
	type firing struct {
		action string
		repeat int
		at     time.Duration
	}
	for _, tc := range []struct {
		name   string
		ack    time.Duration // a staff change (0: none)
		close  time.Duration
		fired  []firing
		status string // the status a minute before the close
	}{
		{"to the last step", 9*time.Hour + 10*time.Minute, 11 * time.Hour, []firing{
			{support.ActionNotifyAssignee, 0, 4 * time.Hour},
			{support.ActionReassignTeamLead, 0, 6*time.Hour + 24*time.Minute},
			{support.ActionEscalate, 0, 8 * time.Hour},
			{support.ActionPageDutyManager, 0, 8 * time.Hour},
			{support.ActionPageDutyManager, 1, 8*time.Hour + 30*time.Minute},
			{support.ActionPageDutyManager, 2, 9 * time.Hour},
		}, support.StatusInProgress},
		{"resolved before 80 %", 0, 5 * time.Hour, []firing{{support.ActionNotifyAssignee, 0, 4 * time.Hour}}, support.StatusOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := slaMonday
			r := newSLARun(t, t0)
			r.policy(support.PolicyInput{Escalation: &steps})
			tk := r.open(support.PriorityHigh)
			var last, escalated support.SLAState
			if tc.ack > 0 {
				r.env.RegisterDelayedCallback(func() { escalated = r.state() }, 8*time.Hour+time.Minute)
				r.at(tc.ack, func() { r.update(r.staff, tk.ID, status(support.StatusInProgress)) })
			}
			r.env.RegisterDelayedCallback(func() { last = r.state() }, tc.close-time.Minute)
			r.closeAt(tc.close, tk.ID)
			r.run(tk.ID)
			if last.Status != tc.status {
				t.Errorf("status before the close %s, want %s", last.Status, tc.status)
			}
			var got []firing
			for _, e := range r.escalations(tk.ID) {
				if e.Metric == support.MetricResolution && e.Step >= 0 {
					got = append(got, firing{e.Action, e.Repeat, e.FiredAt.Sub(t0)})
				}
			}
			if len(got) != len(tc.fired) {
				t.Fatalf("fired %v, want %v", got, tc.fired)
			}
			for i := range got {
				if got[i] != tc.fired[i] {
					t.Errorf("firing %d: %v, want %v", i, got[i], tc.fired[i])
				}
			}
			for _, f := range tc.fired {
				r.synced(t0.Add(f.at))
			}
			if tc.ack > 0 {
				if escalated.Status != support.StatusEscalated {
					t.Errorf("status after the escalate step %s", escalated.Status)
				}
				// Escalated once (level 1) by the ladder; no page after the acknowledgement.
				var esc int
				if err := r.core.In(r.ctx, models.SystemScope()).Model(&support.Ticket{}).Where("id = ?", tk.ID).Pluck("escalation_level", &esc).Error; err != nil || esc != 1 {
					t.Errorf("escalation level %d (%v)", esc, err)
				}
				for _, at := range r.syncs {
					if at.After(t0.Add(tc.ack)) && at.Before(t0.Add(tc.close)) {
						t.Errorf("a sync at %v after the acknowledgement", at)
					}
				}
			}
		})
	}
}
