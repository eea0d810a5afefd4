package workflows_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// slaMonday is a Monday morning, UTC: the start of most SLA runs.
var slaMonday = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// slaRun runs the TicketSLA workflow with its real activity on a real
// store whose clock is the test environment's: the ticket changes happen at
// workflow time, in delayed callbacks that signal the workflow as the API
// does.
type slaRun struct {
	t        *testing.T
	ctx      context.Context
	core     *models.Store
	s        *support.Store
	env      *testsuite.TestWorkflowEnvironment
	staff    *models.Principal
	customer *models.Principal
	plan     models.Plan
	syncs    []time.Time                 // the workflow instants of the syncs
	upserts  []temporal.SearchAttributes // the search attributes of each sync
}

func newSLARun(t *testing.T, start time.Time) *slaRun {
	t.Helper()
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartTime(start)
	env.SetTestTimeout(30 * time.Second)
	core.Now = func() time.Time { return env.Now().UTC() }
	r := &slaRun{t: t, ctx: ctx, core: core, s: support.NewStore(core), env: env, plan: seeded.Demo.Plan,
		staff:    &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}},
		customer: &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}}
	env.RegisterWorkflowWithOptions(workflows.TicketSLA, workflow.RegisterOptions{Name: workflows.TicketSLAWorkflow})
	env.RegisterActivityWithOptions(activities.NewSupportTickets(core), activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.SupportActivities]()})
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {
		r.syncs = append(r.syncs, env.Now().UTC())
	})
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		r.upserts = append(r.upserts, args.Get(0).(temporal.SearchAttributes))
	}).Return(nil)
	return r
}

// open creates a ticket of the demo customer at the environment's start.
func (r *slaRun) open(priority string) *support.Ticket {
	r.t.Helper()
	tk, err := r.s.CreateTicket(r.ctx, r.customer, support.TicketInput{Title: "t", Description: "d", Category: "general", Priority: priority})
	if err != nil {
		r.t.Fatal(err)
	}
	return tk
}

// at runs fn after d of workflow time, then signals the workflow.
func (r *slaRun) at(d time.Duration, fn func()) {
	r.env.RegisterDelayedCallback(func() {
		fn()
		r.env.SignalWorkflow(workflows.TicketSLASignal, nil)
	}, d)
}

// update changes the ticket as p (staff or customer).
func (r *slaRun) update(p *models.Principal, id string, in support.UpdateInput) {
	r.t.Helper()
	if _, err := r.s.UpdateTicket(r.ctx, p, id, in); err != nil {
		r.t.Errorf("update at %v: %v", r.env.Now(), err)
	}
}

func status(s string) support.UpdateInput { return support.UpdateInput{Status: &s} }

// closeAt resolves then closes the ticket after d: the workflow ends.
func (r *slaRun) closeAt(d time.Duration, id string) {
	r.at(d, func() {
		r.update(r.staff, id, status(support.StatusResolved))
		r.update(r.staff, id, status(support.StatusClosed))
	})
}

// state queries the workflow's last SLA state (inside a callback).
func (r *slaRun) state() support.SLAState {
	r.t.Helper()
	v, err := r.env.QueryWorkflow(workflows.TicketSLAQuery)
	var st support.SLAState
	if err == nil {
		err = v.Get(&st)
	}
	if err != nil {
		r.t.Errorf("query: %v", err)
	}
	return st
}

// run executes the workflow for the ticket and wants it to complete
// without error.
func (r *slaRun) run(id string) {
	r.t.Helper()
	r.env.ExecuteWorkflow(workflows.TicketSLAWorkflow, workflows.TicketSLAInput{TicketID: id})
	if !r.env.IsWorkflowCompleted() || r.env.GetWorkflowError() != nil {
		r.t.Fatalf("workflow: completed %v, error %v", r.env.IsWorkflowCompleted(), r.env.GetWorkflowError())
	}
}

// synced wants a sync at each instant (the workflow's timer fired then).
func (r *slaRun) synced(at ...time.Time) {
	r.t.Helper()
	for _, a := range at {
		if !slices.ContainsFunc(r.syncs, a.Equal) {
			r.t.Errorf("no sync at %v; syncs %v", a, r.syncs)
		}
	}
}

func (r *slaRun) clock(id, metric string, cycle int) support.Clock {
	r.t.Helper()
	var c support.Clock
	if err := r.core.In(r.ctx, models.SystemScope()).Where("ticket_id = ? AND metric = ? AND cycle = ?", id, metric, cycle).Take(&c).Error; err != nil {
		r.t.Fatalf("clock %s: %v", metric, err)
	}
	return c
}

func (r *slaRun) segments(id, metric string) []support.Segment {
	r.t.Helper()
	var segs []support.Segment
	if err := r.core.In(r.ctx, models.SystemScope()).Where("ticket_id = ? AND metric = ?", id, metric).Order("cycle, seq").Find(&segs).Error; err != nil {
		r.t.Fatal(err)
	}
	return segs
}

func (r *slaRun) escalations(id string) []support.Escalation {
	r.t.Helper()
	var es []support.Escalation
	if err := r.core.In(r.ctx, models.SystemScope()).Where("ticket_id = ?", id).Order("fired_at, step, repeat").Find(&es).Error; err != nil {
		r.t.Fatal(err)
	}
	return es
}

// breaches counts the sla.breach events of the ticket by metric.
func (r *slaRun) breaches(id string) map[string]int {
	r.t.Helper()
	evs, err := eventlog.NewStore(r.core).EventsFor(r.ctx, models.SystemScope(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range evs {
		if e.Type != support.EventSLABreach {
			continue
		}
		sla, _ := e.Data["sla"].(map[string]any)
		m, _ := sla["metric"].(string)
		out[m]++
	}
	return out
}

// nextBreaches are the SlaNextBreachAt values upserted, in order (zero:
// unset).
func (r *slaRun) nextBreaches() []time.Time {
	var out []time.Time
	for _, sa := range r.upserts {
		v, _ := sa.GetTime(workflows.SlaNextBreachAtKey)
		out = append(out, v.UTC())
	}
	return out
}

func sameTime(a, b *time.Time) bool { return a != nil && b != nil && a.Equal(*b) }

func metricOf(st support.SLAState, m string) support.MetricState {
	for _, x := range st.Metrics {
		if x.Metric == m {
			return x
		}
	}
	return support.MetricState{}
}

// TestTicketSLABreaches: nobody answers a high ticket (1h response, 8h
// resolution, calendar time): the response then the resolution breach, at
// their due instants, on the workflow's timers, once each; the search
// attribute follows the next breach.
func TestTicketSLABreaches(t *testing.T) {
	r := newSLARun(t, slaMonday)
	t0 := slaMonday
	tk := r.open(support.PriorityHigh)
	r.closeAt(10*time.Hour, tk.ID)
	r.run(tk.ID)
	for m, due := range map[string]time.Time{support.MetricResponse: t0.Add(time.Hour), support.MetricResolution: t0.Add(8 * time.Hour)} {
		c := r.clock(tk.ID, m, 1)
		if !sameTime(c.DueAt, &due) || !sameTime(c.BreachedAt, &due) || c.Status() != support.SLABreached {
			t.Errorf("%s clock: due %v breached %v status %s, want both %v", m, c.DueAt, c.BreachedAt, c.Status(), due)
		}
	}
	if b := r.breaches(tk.ID); b[support.MetricResponse] != 1 || b[support.MetricResolution] != 1 || len(b) != 2 {
		t.Errorf("sla.breach by metric %v", b)
	}
	r.synced(t0.Add(45*time.Minute), t0.Add(time.Hour), t0.Add(6*time.Hour), t0.Add(8*time.Hour))
	nb := r.nextBreaches()
	if len(nb) < 3 || !nb[0].Equal(t0.Add(time.Hour)) || !nb[2].Equal(t0.Add(8*time.Hour)) || !nb[len(nb)-1].IsZero() {
		t.Errorf("SlaNextBreachAt upserts %v", nb)
	}
}

// TestTicketSLAWarnedThenMet: the agent answers after the 75 % warning but
// before the due time: the response is met, warned once.
func TestTicketSLAWarnedThenMet(t *testing.T) {
	r := newSLARun(t, slaMonday)
	t0 := slaMonday
	tk := r.open(support.PriorityHigh)
	r.at(50*time.Minute, func() {
		if _, err := r.s.AddComment(r.ctx, r.staff, tk.ID, support.CommentInput{Content: "On it."}); err != nil {
			t.Error(err)
		}
	})
	var mid support.SLAState
	r.env.RegisterDelayedCallback(func() { mid = r.state() }, 55*time.Minute)
	r.closeAt(90*time.Minute, tk.ID)
	r.run(tk.ID)
	c := r.clock(tk.ID, support.MetricResponse, 1)
	warn, met := t0.Add(45*time.Minute), t0.Add(50*time.Minute)
	if c.Status() != support.SLAMet || !sameTime(c.WarnedAt, &warn) || !sameTime(c.StoppedAt, &met) || c.BreachedAt != nil {
		t.Errorf("response clock %+v", c)
	}
	r.synced(warn)
	var warnings int
	for _, e := range r.escalations(tk.ID) {
		if e.Action == "warning" {
			warnings++
			if e.Metric != support.MetricResponse || !e.FiredAt.Equal(warn) {
				t.Errorf("warning %+v", e)
			}
		}
	}
	if warnings != 1 || len(r.breaches(tk.ID)) != 0 {
		t.Errorf("%d warnings, breaches %v", warnings, r.breaches(tk.ID))
	}
	if m := metricOf(mid, support.MetricResponse); m.Status != support.SLAMet || !sameTime(mid.NextBreachAt, ptr(t0.Add(8*time.Hour))) {
		t.Errorf("state after the answer: %+v next breach %v", m, mid.NextBreachAt)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTicketSLAPauseResume: pending for two hours pauses the resolution
// clock (no timer while paused); back in progress its due time is two
// hours later; the ledger has running, paused and running segments.
func TestTicketSLAPauseResume(t *testing.T) {
	r := newSLARun(t, slaMonday)
	t0 := slaMonday
	tk := r.open(support.PriorityHigh)
	r.at(10*time.Minute, func() { r.update(r.staff, tk.ID, status(support.StatusPending)) })
	var paused, resumed support.SLAState
	r.env.RegisterDelayedCallback(func() { paused = r.state() }, time.Hour)
	r.at(130*time.Minute, func() { r.update(r.staff, tk.ID, status(support.StatusInProgress)) })
	r.env.RegisterDelayedCallback(func() { resumed = r.state() }, 3*time.Hour)
	r.closeAt(11*time.Hour, tk.ID)
	r.run(tk.ID)
	if m := metricOf(paused, support.MetricResolution); m.Status != support.SLAPaused || m.DueAt != nil || paused.NextAt != nil || m.ElapsedSeconds != 600 {
		t.Errorf("while pending: %+v next at %v", m, paused.NextAt)
	}
	for _, at := range r.syncs {
		if at.After(t0.Add(10*time.Minute)) && at.Before(t0.Add(130*time.Minute)) {
			t.Errorf("a sync at %v while the clocks were paused", at)
		}
	}
	due := t0.Add(10 * time.Hour)
	if m := metricOf(resumed, support.MetricResolution); m.Status != support.SLAInProgress || !sameTime(m.DueAt, &due) {
		t.Errorf("resumed: %+v, want due %v", m, due)
	}
	c := r.clock(tk.ID, support.MetricResolution, 1)
	if !sameTime(c.BreachedAt, &due) || c.ElapsedSeconds != int64((11*time.Hour-2*time.Hour)/time.Second) {
		t.Errorf("resolution clock %+v", c)
	}
	r.synced(due)
	segs := r.segments(tk.ID, support.MetricResolution)
	want := []struct {
		kind       string
		start, end time.Duration
	}{{support.SegmentRunning, 0, 10 * time.Minute}, {support.SegmentPaused, 10 * time.Minute, 130 * time.Minute}, {support.SegmentRunning, 130 * time.Minute, 11 * time.Hour}}
	if len(segs) != len(want) {
		t.Fatalf("ledger %+v", segs)
	}
	for i, w := range want {
		g := segs[i]
		secs := int64(0)
		if w.kind == support.SegmentRunning {
			secs = int64((w.end - w.start) / time.Second)
		}
		if g.Kind != w.kind || !g.StartedAt.Equal(t0.Add(w.start)) || g.EndedAt == nil || !g.EndedAt.Equal(t0.Add(w.end)) || g.BusinessSeconds != secs {
			t.Errorf("segment %d: %+v, want %s %v–%v (%ds)", i, g, w.kind, w.start, w.end, secs)
		}
	}
}

// TestTicketSLAPriorityUpgrade: medium (24h resolution) raised to critical
// (4h) keeps the time counted: due at start + 4h when less has elapsed,
// at once (a breach at the change) when more has; the ledger notes the old
// and new due times.
func TestTicketSLAPriorityUpgrade(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
		due   time.Duration
	}{{"elapsed below the target", 2 * time.Hour, 4 * time.Hour}, {"elapsed past the target", 5 * time.Hour, 5 * time.Hour}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newSLARun(t, slaMonday)
			t0 := slaMonday
			tk := r.open(support.PriorityMedium)
			r.at(tc.after, func() {
				r.update(r.staff, tk.ID, support.UpdateInput{Priority: ptr(support.PriorityCritical)})
			})
			r.closeAt(6*time.Hour, tk.ID)
			r.run(tk.ID)
			c := r.clock(tk.ID, support.MetricResolution, 1)
			due := t0.Add(tc.due)
			if c.TargetMinutes != 240 || !sameTime(c.DueAt, &due) || !sameTime(c.BreachedAt, &due) {
				t.Errorf("resolution clock: target %d due %v breached %v, want %v", c.TargetMinutes, c.DueAt, c.BreachedAt, due)
			}
			r.synced(due)
			var note string
			for _, g := range r.segments(tk.ID, support.MetricResolution) {
				if g.Kind == support.SegmentRetimed {
					note = g.Note
					if !g.StartedAt.Equal(t0.Add(tc.after)) {
						t.Errorf("retimed at %v", g.StartedAt)
					}
				}
			}
			if !strings.Contains(note, models.Timestamp(t0.Add(24*time.Hour))+" → "+models.Timestamp(due)) {
				t.Errorf("retimed note %q", note)
			}
			if b := r.breaches(tk.ID); b[support.MetricResolution] != 1 || b[support.MetricResponse] != 1 {
				t.Errorf("breaches %v", b)
			}
		})
	}
}

// TestTicketSLAContinueAsNew: past the history limit the workflow
// continues as new with the same input; the clocks in the database are
// left as they were.
func TestTicketSLAContinueAsNew(t *testing.T) {
	r := newSLARun(t, slaMonday)
	tk := r.open(support.PriorityHigh)
	var before []support.Clock
	r.env.RegisterDelayedCallback(func() {
		if err := r.core.In(r.ctx, models.SystemScope()).Where("ticket_id = ?", tk.ID).Order("metric").Find(&before).Error; err != nil {
			t.Error(err)
		}
		r.env.SetCurrentHistoryLength(workflows.TicketSLAHistoryLimit + 1)
		for range 5 {
			r.env.SignalWorkflow(workflows.TicketSLASignal, nil)
		}
	}, 10*time.Minute)
	r.env.ExecuteWorkflow(workflows.TicketSLAWorkflow, workflows.TicketSLAInput{TicketID: tk.ID})
	var can *workflow.ContinueAsNewError
	if !r.env.IsWorkflowCompleted() || !errors.As(r.env.GetWorkflowError(), &can) {
		t.Fatalf("workflow: completed %v, error %v", r.env.IsWorkflowCompleted(), r.env.GetWorkflowError())
	}
	var in workflows.TicketSLAInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil || in.TicketID != tk.ID || can.WorkflowType.Name != workflows.TicketSLAWorkflow {
		t.Fatalf("continued as %s with %+v (%v)", can.WorkflowType.Name, in, err)
	}
	var after []support.Clock
	if err := r.core.In(r.ctx, models.SystemScope()).Where("ticket_id = ?", tk.ID).Order("metric").Find(&after).Error; err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("clocks before %d, after %d", len(before), len(after))
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.ID != b.ID || a.State != b.State || a.ElapsedSeconds != b.ElapsedSeconds || !sameTime(a.DueAt, b.DueAt) ||
			!sameTime(a.RunningSince, b.RunningSince) || !sameTime(a.WarnAt, b.WarnAt) || a.BreachedAt != nil || a.TargetMinutes != b.TargetMinutes {
			t.Errorf("clock %s changed: %+v → %+v", b.Metric, b, a)
		}
	}
	if n := len(r.segments(tk.ID, support.MetricResolution)); n != 1 {
		t.Errorf("%d resolution segments", n)
	}
}
