package support

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// ActionEscalate is the ladder action that escalates the ticket: status
// escalated, one level up, ticket.escalated.
const ActionEscalate = "escalate"

// Escalation rows that are not ladder steps.
const (
	escalationManualMetric  = "manual"
	escalationManualStep    = -1
	escalationWarningAction = "warning"
)

// LadderStep is one step of an escalation ladder as the clock runs it:
// when the metric's clock reaches AtPercent of its target (100 is the
// breach), do Action; a step at or after the breach may repeat every
// RepeatEvery until the ticket is acknowledged (a change by provider staff
// after the step fired). With WorkingHoursOnly the step waits for the
// policy calendar's next working minute.
type LadderStep struct {
	Metric           string
	AtPercent        int
	Action           string
	Recipients       []string
	RepeatEvery      time.Duration
	WorkingHoursOnly bool
}

// metricTarget is one metric's target under a policy.
type metricTarget struct {
	Minutes       int
	BusinessHours bool
}

// clockPolicy is the SLA policy that applies to a ticket, resolved for its
// tier, category and priority: the targets of its metrics, the calendar,
// the warning share, the credit and the escalation ladder.
type clockPolicy struct {
	PolicyID       string
	CalendarID     string
	Calendar       *businesstime.Calendar
	Tier           string
	WarningPercent int
	CreditBP       int
	UpdateMinutes  int
	Targets        map[string]metricTarget
	Ladder         []LadderStep
}

// clockPolicyFor resolves the policy of t (its tier, category and
// priority as they are now) with PolicyFor. Under the catch-all policy (no
// tier, no category), or without any policy, the targets are the
// category's own (GET /v1/support/categories), in calendar time; the
// catch-all policy's ladder, warning share and credit still apply.
func (s *Store) clockPolicyFor(ctx context.Context, t *Ticket) (*clockPolicy, error) {
	tier, err := s.ticketTier(ctx, t)
	if err != nil {
		return nil, err
	}
	pol, cal, err := s.PolicyFor(ctx, tier, t.Category)
	if err != nil {
		return nil, err
	}
	fallback := SLATarget{ResponseMinutes: DefaultSLATargets()[t.Priority][0], ResolutionMinutes: DefaultSLATargets()[t.Priority][1]}
	ownTargets := false
	if pol == nil || (pol.Tier == "" && pol.Category == "") {
		cats, err := s.ListCategories(ctx)
		if err != nil {
			return nil, err
		}
		if c := categoryByID(cats, t.Category); c != nil {
			if tg, ok := c.Target(t.Priority); ok {
				fallback, ownTargets = tg, true
			}
		}
	}
	if pol == nil {
		return &clockPolicy{Tier: tier, WarningPercent: DefaultWarningPercent, Targets: map[string]metricTarget{
			MetricResponse:   {Minutes: fallback.ResponseMinutes},
			MetricResolution: {Minutes: fallback.ResolutionMinutes},
		}}, nil
	}
	cp := &clockPolicy{PolicyID: pol.ID, CalendarID: pol.CalendarID, Calendar: cal, Tier: tier, WarningPercent: pol.WarningPercent,
		CreditBP: pol.CreditPercentBP}
	if cp.WarningPercent <= 0 {
		cp.WarningPercent = DefaultWarningPercent
	}
	tg, ok := pol.Target(t.Priority)
	if !ok || ownTargets { // the catch-all policy counts the category's own targets, in calendar time
		tg = SLAPolicyTarget{ResponseMinutes: fallback.ResponseMinutes, ResolutionMinutes: fallback.ResolutionMinutes}
	}
	cp.UpdateMinutes = tg.UpdateMinutes
	cp.Targets = map[string]metricTarget{
		MetricResponse:   {Minutes: tg.ResponseMinutes, BusinessHours: tg.BusinessHours},
		MetricResolution: {Minutes: tg.ResolutionMinutes, BusinessHours: tg.BusinessHours},
	}
	for _, st := range pol.Escalation {
		cp.Ladder = append(cp.Ladder, LadderStep{Metric: st.Metric, AtPercent: st.AtPercent, Action: st.Action, Recipients: st.Recipients,
			RepeatEvery: time.Duration(st.RepeatEveryMinutes) * time.Minute, WorkingHoursOnly: st.WorkingHoursOnly})
	}
	return cp, nil
}

// ticketTier is the tier of t's policy: the SLA of the service its
// service_affected names (a service of its organization and environment),
// else its organization's plan (TierOf).
func (s *Store) ticketTier(ctx context.Context, t *Ticket) (string, error) {
	var serviceSLA string
	if t.ServiceAffected != "" {
		var rows []string
		err := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment)).Table("services").
			Where("id = ?", t.ServiceAffected).Limit(1).Pluck("sla", &rows).Error
		if err != nil {
			return "", dbErr(err)
		}
		if len(rows) > 0 {
			serviceSLA = rows[0]
		}
	}
	var plans []string
	if err := s.core.In(ctx, models.SystemScope()).Model(&models.Organization{}).Where("id = ?", t.OrganizationID).Limit(1).Pluck("plan", &plans).Error; err != nil {
		return "", dbErr(err)
	}
	var plan models.Plan
	if len(plans) > 0 {
		plan = models.Plan(plans[0])
	}
	return TierOf(serviceSLA, plan), nil
}

// SLACreditRequest asks billing for the credit a breached resolution target
// earns: the ticket (its service_affected), the cycle and the share of the
// service's monthly price, in basis points.
type SLACreditRequest struct {
	Ticket    *Ticket
	Cycle     int
	PercentBP int
	At        time.Time
}

// SourceKey identifies the credit of a ticket's cycle: issuing is
// idempotent on it.
func (r SLACreditRequest) SourceKey() string {
	return fmt.Sprintf("ticket:%s:cycle:%d:resolution", r.Ticket.ID, r.Cycle)
}

// CreditIssuer issues the credit of req, once per SourceKey (a second call
// changes nothing).
type CreditIssuer func(ctx context.Context, req SLACreditRequest) error

// WithCredits makes resolution breaches of tickets tied to a service issue
// SLA credits through issue.
func WithCredits(issue CreditIssuer) Option { return func(s *Store) { s.credits = issue } }

// sameCalendar reports whether two calendars are the same.
func sameCalendar(a, b *businesstime.Calendar) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
