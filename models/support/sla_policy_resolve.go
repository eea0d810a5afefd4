package support

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/telcoplatform/platform/models/businesstime"
)

// Escalation ladder actions.
const (
	ActionNotifyAssignee    = "notify_assignee"
	ActionNotifyTeamLead    = "notify_team_lead"
	ActionReassignTeamLead  = "reassign_team_lead"
	ActionPageDutyManager   = "page_duty_manager"
	ActionNotify            = "notify"
	ActionEscalate          = "escalate"
	escalationManualMetric  = "manual"
	escalationManualStep    = -1
	escalationWarningAction = "warning"
)

// LadderStep is one step of an escalation ladder: when the metric's clock
// reaches AtPercent of its target (100 is the breach), do Action; a step at
// or after the breach may repeat every RepeatEvery until the ticket is
// acknowledged (a change by provider staff after the step fired). With
// WorkingHoursOnly the message waits for the calendar's next working
// minute.
type LadderStep struct {
	Metric           string        `json:"metric"`
	AtPercent        int           `json:"at_percent"`
	Action           string        `json:"action"`
	Recipients       []string      `json:"recipients,omitempty"`
	RepeatEvery      time.Duration `json:"repeat_every,omitempty"`
	WorkingHoursOnly bool          `json:"working_hours_only,omitempty"`
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
// priority as they are now).
func (s *Store) clockPolicyFor(ctx context.Context, t *Ticket) (*clockPolicy, error) {
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return nil, err
	}
	target := SLATarget{ResponseMinutes: DefaultSLATargets()[t.Priority][0], ResolutionMinutes: DefaultSLATargets()[t.Priority][1]}
	if c := categoryByID(cats, t.Category); c != nil {
		if tg, ok := c.Target(t.Priority); ok {
			target = tg
		}
	}
	return &clockPolicy{WarningPercent: DefaultWarningPercent, Targets: map[string]metricTarget{
		MetricResponse:   {Minutes: target.ResponseMinutes},
		MetricResolution: {Minutes: target.ResolutionMinutes},
	}}, nil
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
