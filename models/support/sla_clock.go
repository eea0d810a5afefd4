package support

import (
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// The states of an SLA clock: counting, paused (the ticket is pending, on
// the customer) or stopped (the metric was met or the ticket resolved).
const (
	ClockRunning = "running"
	ClockPaused  = "paused"
	ClockStopped = "stopped"
)

// The statuses of an SLA metric as answers show them (DECISIONS 12).
const (
	SLAInProgress = "in_progress"
	SLAPaused     = "paused"
	SLAMet        = "met"
	SLABreached   = "breached"
)

// The kinds of a clock ledger segment.
const (
	SegmentRunning = "running" // the clock counted (business time only, on a business-hours target)
	SegmentPaused  = "paused"  // the ticket was pending: the clock did not count
	SegmentRetimed = "retimed" // an instant: the target or the calendar changed; the note says how
)

// Prefixes of the SLA rows' ids.
const (
	PrefixClock      = "slack"
	PrefixSegment    = "slseg"
	PrefixEscalation = "slesc"
)

// EventSLABreach is written once per breached metric per cycle.
const EventSLABreach = "sla.breach"

// DefaultWarningPercent is the share of a target at which a clock warns,
// when the policy does not say.
const DefaultWarningPercent = 75

// Clock is the SLA clock of one metric of one cycle of a ticket (a ticket
// starts in cycle 1; each reopen starts a new cycle with a resolution
// clock). It keeps the target it counts against, the business time counted
// before the running segment (Elapsed), when that segment started, the
// due time and what happened: warned, breached, stopped. The segments of
// the ledger say why.
type Clock struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID       string `gorm:"size:40;not null;uniqueIndex:idx_support_sla_clocks_metric,priority:1"`
	Cycle          int    `gorm:"not null;uniqueIndex:idx_support_sla_clocks_metric,priority:2"`
	Metric         string `gorm:"size:16;not null;uniqueIndex:idx_support_sla_clocks_metric,priority:3"`
	PolicyID       string `gorm:"size:40"`
	CalendarID     string `gorm:"size:40;index"`
	TargetMinutes  int    `gorm:"not null"`
	BusinessHours  bool   `gorm:"not null;default:false"`
	WarningPercent int    `gorm:"not null"`
	// Calendar is the business calendar the clock counts in (nil: calendar
	// time), as it was when the clock was last timed.
	Calendar       *businesstime.Calendar `gorm:"serializer:json;type:text"`
	State          string                 `gorm:"size:16;not null"`
	ElapsedSeconds int64                  `gorm:"not null;default:0"`
	RunningSince   *time.Time             ``
	StartedAt      time.Time              `gorm:"not null"`
	DueAt          *time.Time             `gorm:"index"`
	WarnAt         *time.Time             ``
	WarnedAt       *time.Time             ``
	BreachedAt     *time.Time             ``
	StoppedAt      *time.Time             ``
	CreatedAt      time.Time              `gorm:"not null"`
	UpdatedAt      time.Time              `gorm:"not null"`
}

// TableName is the SLA clocks table.
func (Clock) TableName() string { return "support_sla_clocks" }

// Status is the metric's status as answers show it.
func (c *Clock) Status() string {
	switch {
	case c.BreachedAt != nil:
		return SLABreached
	case c.State == ClockStopped:
		return SLAMet
	case c.State == ClockPaused:
		return SLAPaused
	}
	return SLAInProgress
}

// Target is the clock's target as a duration of (business) time.
func (c *Clock) Target() time.Duration { return time.Duration(c.TargetMinutes) * time.Minute }

// cal is the calendar the clock counts in: nil (every minute) unless the
// target is in business hours.
func (c *Clock) cal() *businesstime.Calendar {
	if !c.BusinessHours {
		return nil
	}
	return c.Calendar
}

// Elapsed is the (business) time the clock has counted up to at.
func (c *Clock) Elapsed(at time.Time) time.Duration {
	d := time.Duration(c.ElapsedSeconds) * time.Second
	if c.State == ClockRunning && c.RunningSince != nil && at.After(*c.RunningSince) {
		d += c.cal().Between(*c.RunningSince, at)
	}
	return d
}

// when returns the instant at which the clock, running, reaches share
// percent of its target (nil when it is not running).
func (c *Clock) when(percent int) *time.Time {
	if c.State != ClockRunning || c.RunningSince == nil {
		return nil
	}
	left := c.Target()*time.Duration(percent)/100 - time.Duration(c.ElapsedSeconds)*time.Second
	at := c.cal().Add(*c.RunningSince, left)
	if at.Before(*c.RunningSince) {
		at = *c.RunningSince
	}
	return &at
}

// Segment is one piece of a clock's ledger: a running or paused stretch
// (with the business time it counted), or a re-timing instant with a note
// of what changed (old and new target and due time).
type Segment struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	ClockID         string     `gorm:"size:40;not null;index"`
	TicketID        string     `gorm:"size:40;not null;index"`
	Cycle           int        `gorm:"not null"`
	Metric          string     `gorm:"size:16;not null"`
	Seq             int        `gorm:"not null"`
	Kind            string     `gorm:"size:16;not null"`
	StartedAt       time.Time  `gorm:"not null"`
	EndedAt         *time.Time ``
	BusinessSeconds int64      `gorm:"not null;default:0"`
	Note            string     `gorm:"size:500"`
	CreatedAt       time.Time  `gorm:"not null"`
}

// TableName is the SLA ledger table.
func (Segment) TableName() string { return "support_sla_segments" }

// Escalation is one step of an escalation ladder that fired for a ticket
// (Repeat 0 is the first firing, then 1, 2... for a repeating step), and
// the manual escalations of the escalate endpoint (Step -1). The unique key
// makes each firing happen once.
type Escalation struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID  string    `gorm:"size:40;not null;uniqueIndex:idx_support_sla_escalations_step,priority:1"`
	Cycle     int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:2"`
	Metric    string    `gorm:"size:16;not null;uniqueIndex:idx_support_sla_escalations_step,priority:3"`
	Step      int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:4"`
	Repeat    int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:5"`
	Action    string    `gorm:"size:32;not null"`
	Level     int       `gorm:"not null;default:0"`
	Reason    string    `gorm:"size:500"`
	Detail    string    `gorm:"size:1000"`
	ActorID   string    `gorm:"size:40;not null"`
	FiredAt   time.Time `gorm:"not null;index"`
	CreatedAt time.Time `gorm:"not null"`
}

// TableName is the escalations table.
func (Escalation) TableName() string { return "support_sla_escalations" }
