package support_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// slaFixture is a store on a settable clock with a customer and an agent.
type slaFixture struct {
	t        testing.TB
	ctx      context.Context
	core     *models.Store
	s        *support.Store
	clock    time.Time
	staff    *models.Principal
	customer *models.Principal
}

func newSLAFixture(t testing.TB, opts ...support.Option) *slaFixture {
	t.Helper()
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	f := &slaFixture{t: t, ctx: ctx, core: core, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)} // a Monday
	core.Now = func() time.Time { return f.clock }
	f.s = support.NewStore(core, opts...)
	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.staff = &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	f.customer = &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	return f
}

func (f *slaFixture) open(priority string) *support.Ticket {
	f.t.Helper()
	tk, err := f.s.CreateTicket(f.ctx, f.customer, support.TicketInput{Title: "t", Description: "d", Category: "general", Priority: priority})
	if err != nil {
		f.t.Fatal(err)
	}
	return tk
}

func (f *slaFixture) update(id string, in support.UpdateInput) {
	f.t.Helper()
	if _, err := f.s.UpdateTicket(f.ctx, f.staff, id, in); err != nil {
		f.t.Fatal(err)
	}
}

func (f *slaFixture) sync(id string) *support.SLAState {
	f.t.Helper()
	st, err := f.s.SyncSLA(f.ctx, id, f.clock)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func (f *slaFixture) events(id, name string) int {
	f.t.Helper()
	evs, err := eventlog.NewStore(f.core).EventsFor(f.ctx, models.SystemScope(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == name {
			n++
		}
	}
	return n
}

func metric(st *support.SLAState, m string) support.MetricState {
	for _, x := range st.Metrics {
		if x.Metric == m {
			return x
		}
	}
	return support.MetricState{}
}

func str(v string) *string { return &v }

// TestSLAClockPauseResumeBreach: a high ticket (1h response, 8h
// resolution, calendar hours) answered after 10 minutes, pending for two
// hours, resumed: the resolution is due two hours later than at first; it
// breaches once.
func TestSLAClockPauseResumeBreach(t *testing.T) {
	f := newSLAFixture(t)
	t0 := f.clock
	tk := f.open(support.PriorityHigh)
	if !tk.ResolutionDue.Equal(t0.Add(8*time.Hour)) || !tk.ResponseDue.Equal(t0.Add(time.Hour)) {
		t.Fatalf("dues at creation: %v %v", tk.ResponseDue, tk.ResolutionDue)
	}
	st := f.sync(tk.ID)
	if st.NextAt == nil || !st.NextAt.Equal(t0.Add(45*time.Minute)) { // the response warning at 75 %
		t.Fatalf("next at %v", st.NextAt)
	}
	f.clock = t0.Add(10 * time.Minute)
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusPending)}) // the agent answers: response met
	f.clock = t0.Add(2*time.Hour + 10*time.Minute)
	st = f.sync(tk.ID)
	if m := metric(st, support.MetricResponse); m.Status != support.SLAMet {
		t.Fatalf("response %+v", m)
	}
	if m := metric(st, support.MetricResolution); m.Status != support.SLAPaused || m.ElapsedSeconds != 600 {
		t.Fatalf("resolution while pending %+v", m)
	}
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusInProgress)})
	st = f.sync(tk.ID)
	due := t0.Add(10*time.Hour + 10*time.Minute - 10*time.Minute)
	if m := metric(st, support.MetricResolution); m.Status != support.SLAInProgress || m.DueAt == nil || !m.DueAt.Equal(due) {
		t.Fatalf("resolution resumed %+v, want due %v", m, due)
	}
	f.clock = due.Add(time.Minute)
	f.sync(tk.ID)
	st = f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); m.Status != support.SLABreached {
		t.Fatalf("resolution after due %+v", m)
	}
	if n := f.events(tk.ID, support.EventSLABreach); n != 1 {
		t.Fatalf("%d sla.breach events", n)
	}
	// Resolved later: still breached; reopened: a new cycle with a fresh resolution clock.
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusResolved)})
	st = f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); m.Status != support.SLABreached || st.NextAt != nil {
		t.Fatalf("resolved %+v next %v", m, st.NextAt)
	}
	f.clock = f.clock.Add(time.Hour)
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusOpen)})
	st = f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); st.Cycle != 2 || m.Status != support.SLAInProgress || len(st.Metrics) != 1 || !m.DueAt.Equal(f.clock.Add(8*time.Hour)) {
		t.Fatalf("reopened: cycle %d %+v", st.Cycle, st.Metrics)
	}
}

// TestSLAClockRetimeCarriesElapsed: raising the priority from medium
// (24h resolution) to critical (4h) after 3 hours keeps the 3 hours: due
// 1 hour later; the ledger notes old and new due times.
func TestSLAClockRetimeCarriesElapsed(t *testing.T) {
	f := newSLAFixture(t)
	t0 := f.clock
	tk := f.open(support.PriorityMedium)
	f.clock = t0.Add(3 * time.Hour)
	f.update(tk.ID, support.UpdateInput{Priority: str(support.PriorityCritical)})
	st := f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); m.TargetMinutes != 240 || !m.DueAt.Equal(t0.Add(4*time.Hour)) {
		t.Fatalf("after the upgrade %+v", m)
	}
	// The response target (15m) is already exceeded: breached at the re-timing.
	if m := metric(st, support.MetricResponse); m.Status != support.SLABreached {
		t.Fatalf("response after the upgrade %+v", m)
	}
	var segs []support.Segment
	if err := f.core.In(f.ctx, models.SystemScope()).Where("ticket_id = ? AND kind = ?", tk.ID, support.SegmentRetimed).Find(&segs).Error; err != nil || len(segs) != 2 {
		t.Fatalf("retimed segments %v %v", segs, err)
	}
}

// TestSLAClockCalendarEditRetimes: a holiday added to the policy's calendar
// re-times the open ticket at its next sync, with no change to the ticket:
// the resolution (16 business hours from Monday 09:00, due Tuesday 17:00)
// is due a working day later; the ledger notes it.
func TestSLAClockCalendarEditRetimes(t *testing.T) {
	f := newSLAFixture(t)
	t0 := f.clock
	tier := support.TierOf("", models.PlanBusiness)
	hours := map[string][]support.ClockInterval{}
	for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday"} {
		hours[d] = []support.ClockInterval{{Start: "09:00", End: "17:00"}}
	}
	name, tz := "Office", "UTC"
	cal, err := f.s.CreateCalendar(f.ctx, f.staff, support.CalendarInput{Name: &name, Timezone: &tz, WorkingHours: &hours})
	if err != nil {
		t.Fatal(err)
	}
	pname, cat := "Premium general", "general"
	_, err = f.s.CreateSLAPolicy(f.ctx, f.staff, support.PolicyInput{Name: &pname, Tier: &tier, Category: &cat, CalendarID: &cal.ID,
		Targets: map[string]support.PolicyTargetInput{support.PriorityMedium: {ResponseTime: "4h", ResolutionTime: "16h", BusinessHours: true}}})
	if err != nil {
		t.Fatal(err)
	}
	tk := f.open(support.PriorityMedium)
	st := f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); m.DueAt == nil || !m.DueAt.Equal(t0.Add(32*time.Hour)) {
		t.Fatalf("before the edit %+v", m)
	}
	f.clock = t0.Add(time.Hour)
	if f.sync(tk.ID); len(f.retimed(tk.ID)) != 0 {
		t.Fatalf("re-timed without an edit: %v", f.retimed(tk.ID))
	}
	holidays := []support.HolidayInput{{Date: "2026-11-24", Name: "Tuesday off"}}
	if _, err := f.s.UpdateCalendar(f.ctx, f.staff, cal.ID, support.CalendarInput{Holidays: &holidays}); err != nil {
		t.Fatal(err)
	}
	st = f.sync(tk.ID)
	if m := metric(st, support.MetricResolution); m.DueAt == nil || !m.DueAt.Equal(t0.Add(56*time.Hour)) || m.ElapsedSeconds != 3600 {
		t.Fatalf("after the edit %+v", m)
	}
	if segs := f.retimed(tk.ID); len(segs) != 2 {
		t.Fatalf("retimed segments %v", segs)
	}
	f.sync(tk.ID)
	if segs := f.retimed(tk.ID); len(segs) != 2 {
		t.Fatalf("a second sync re-timed again: %v", segs)
	}
}

func (f *slaFixture) retimed(id string) []support.Segment {
	f.t.Helper()
	var segs []support.Segment
	if err := f.core.In(f.ctx, models.SystemScope()).Where("ticket_id = ? AND kind = ?", id, support.SegmentRetimed).Find(&segs).Error; err != nil {
		f.t.Fatal(err)
	}
	return segs
}

// TestSLARoutingTimers: a routing rule's escalate_after escalates a ticket
// still unresolved at that instant (once), and its auto_update_frequency
// fires an automatic update per interval while the resolution clock runs.
func TestSLARoutingTimers(t *testing.T) {
	f := newSLAFixture(t)
	if _, err := f.s.SeedAgents(f.ctx); err != nil {
		t.Fatal(err)
	}
	admin := &models.Principal{ID: "ak_admin", OrganizationID: f.staff.OrganizationID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	_, err := f.s.CreateRoutingRule(f.ctx, admin, support.RuleInput{Name: str("general timers"), Category: str("general"),
		AssignTo: str(support.CategoryTeamID("general")), EscalateAfter: str("30m"), AutoUpdateFrequency: str("1h")})
	if err != nil {
		t.Fatal(err)
	}
	t0 := f.clock
	tk := f.open(support.PriorityLow)
	st := f.sync(tk.ID)
	if st.NextAt == nil || !st.NextAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("next at %v, want the escalation at +30m", st.NextAt)
	}
	f.clock = t0.Add(30 * time.Minute)
	st = f.sync(tk.ID)
	got, err := f.s.GetTicket(f.ctx, f.staff, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != support.StatusEscalated || got.EscalationLevel != 1 || f.events(tk.ID, support.EventTicketEscalated) != 1 {
		t.Fatalf("after escalate_after: %s level %d", got.Status, got.EscalationLevel)
	}
	if st.NextAt == nil || !st.NextAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("next at %v, want the first update at +1h", st.NextAt)
	}
	f.clock = t0.Add(3*time.Hour + time.Minute)
	f.sync(tk.ID)
	f.sync(tk.ID)
	var rows []support.Escalation
	if err := f.core.In(f.ctx, models.SystemScope()).Where("ticket_id = ? AND metric = ?", tk.ID, "timer").Order("fired_at").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	// The escalation once, then the latest due update (+3h): missed ones are not sent in a burst.
	if len(rows) != 2 || rows[0].Action != "escalate" || rows[1].Action != "auto_update" || !rows[1].FiredAt.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("timer firings %+v", rows)
	}
	if n := f.events(tk.ID, support.EventTicketEscalated); n != 1 {
		t.Fatalf("%d ticket.escalated", n)
	}
}

// TestSLASyncConcurrently opens and syncs many tickets at once, more than
// the connection pool holds: each sync's reads run in its own transaction,
// so none waits for a second connection (which would deadlock the pool).
func TestSLASyncConcurrently(t *testing.T) {
	f := newSLAFixture(t)
	const n = 24
	errs := make(chan error, n)
	for range n {
		go func() {
			tk, err := f.s.CreateTicket(f.ctx, f.customer, support.TicketInput{Title: "t", Description: "d", Category: "network", Priority: support.PriorityHigh})
			if err == nil {
				_, err = f.s.SyncSLA(f.ctx, tk.ID, f.clock.Add(time.Hour))
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestSLASyncLeavesTheTicketUnchanged: a sync writes the ticket's clock
// columns only; updated_at stays the change's, so the automatic close of a
// resolved ticket still finds it quiet.
func TestSLASyncLeavesTheTicketUnchanged(t *testing.T) {
	f := newSLAFixture(t)
	tk := f.open(support.PriorityHigh)
	f.clock = f.clock.Add(time.Minute)
	res, err := f.s.UpdateTicket(f.ctx, f.staff, tk.ID, support.UpdateInput{Status: str(support.StatusResolved)})
	if err != nil {
		t.Fatal(err)
	}
	f.clock = f.clock.Add(time.Minute)
	f.sync(tk.ID)
	in, ok := support.AutoCloseOf(res.Ticket)
	if !ok {
		t.Fatal("no auto close")
	}
	f.clock = f.clock.Add(support.AutoCloseAfter)
	if closed, err := f.s.CloseIfQuiet(f.ctx, in); err != nil || !closed {
		t.Fatalf("a synced resolved ticket was not closed: %v %v", closed, err)
	}
}

// TestSLAResolvedAndReopenedBetweenSyncs: a ticket resolved and reopened
// before its clock synced (within a second, as a customer's comment on a
// resolved ticket does) keeps the first cycle's clocks stopped, in their
// rows as in their ledger; before, the rows stayed running, and the
// compliance figures read from them left the cycle out.
func TestSLAResolvedAndReopenedBetweenSyncs(t *testing.T) {
	f := newSLAFixture(t)
	tk := f.open(support.PriorityHigh)
	f.sync(tk.ID)
	f.clock = f.clock.Add(20 * time.Minute)
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusResolved)})
	f.clock = f.clock.Add(time.Second)
	f.update(tk.ID, support.UpdateInput{Status: str(support.StatusOpen)})
	f.clock = f.clock.Add(time.Second)
	st := f.sync(tk.ID)
	if st.Cycle != 2 {
		t.Fatalf("cycle %d", st.Cycle)
	}
	var clocks []support.Clock
	if err := f.core.In(f.ctx, models.SystemScope()).Where("ticket_id = ?", tk.ID).Order("cycle, metric").Find(&clocks).Error; err != nil {
		t.Fatal(err)
	}
	if len(clocks) != 3 {
		t.Fatalf("%d clocks: %+v", len(clocks), clocks)
	}
	for _, c := range clocks {
		want := support.ClockStopped
		if c.Cycle == 2 {
			want = support.ClockRunning
		}
		if c.State != want || (c.Cycle == 1 && (c.StoppedAt == nil || c.ElapsedSeconds != 20*60)) {
			t.Fatalf("cycle %d %s: state %s stopped %v elapsed %d, want %s", c.Cycle, c.Metric, c.State, c.StoppedAt, c.ElapsedSeconds, want)
		}
	}
	// GET .../sla of the reopened ticket still shows its first response
	// (the first cycle's clock), beside the new cycle's resolution.
	v, err := f.s.GetTicketSLA(f.ctx, f.customer, tk.ID, false, f.clock)
	if err != nil || v.Cycle != 2 || v.Response == nil || v.Response.Cycle != 1 || v.Response.State != support.ClockStopped ||
		v.Resolution == nil || v.Resolution.Cycle != 2 {
		t.Fatalf("view after the reopen: %+v %v", v, err)
	}
}
