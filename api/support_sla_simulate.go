package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// SLASimulateFilterBody selects the open tickets a what-if re-timing
// evaluates; absent fields do not filter.
type SLASimulateFilterBody struct {
	Status     []string `json:"status,omitempty" maxItems:"4" enum:"open,in_progress,pending,escalated" doc:"Open statuses only; default all four"`
	Priority   []string `json:"priority,omitempty" maxItems:"4" enum:"low,medium,high,critical"`
	Category   string   `json:"category,omitempty" maxLength:"40" doc:"A category id (GET /v1/support/categories)" example:"network"`
	CustomerID string   `json:"customer_id,omitempty" maxLength:"64" example:"cust_8Hq2"`
	PolicyID   string   `json:"policy_id,omitempty" maxLength:"64" doc:"The SLA policy the tickets' clocks run under" example:"slap_standard"`
}

// SLASimulateChangeBody is the hypothetical change: exactly one kind.
type SLASimulateChangeBody struct {
	Priority   string `json:"priority,omitempty" enum:"low,medium,high,critical" doc:"Kind 1: each ticket's policy re-resolved for this priority, time counted carried over"`
	PolicyID   string `json:"policy_id,omitempty" maxLength:"64" doc:"Kind 2: this policy's targets for each ticket's priority, in its calendar (404 when unknown)" example:"slap_standard"`
	CalendarID string `json:"calendar_id,omitempty" maxLength:"64" doc:"Kind 3: the business calendar edited (404 when unknown), with at least one of working_hours, timezone, add_holidays, remove_holidays" example:"cal_standard"`
	// The edits of a calendar change (kind 3 only).
	WorkingHours   *WorkingHoursBody `json:"working_hours,omitempty" doc:"Kind 3: replaces the week (a day left out is closed); at least one working minute"`
	Timezone       *string           `json:"timezone,omitempty" minLength:"1" maxLength:"64" doc:"Kind 3: an IANA time zone name" example:"Europe/London"`
	AddHolidays    []HolidayBody     `json:"add_holidays,omitempty" maxItems:"1000" doc:"Kind 3: dates the calendar does not have yet, each once"`
	RemoveHolidays []string          `json:"remove_holidays,omitempty" maxItems:"1000" doc:"Kind 3: holidays of the calendar (YYYY-MM-DD), each once, not also added" example:"[\"2026-12-25\"]"`
}

func (b *SLASimulateChangeBody) input() support.SimulateChange {
	out := support.SimulateChange{Priority: b.Priority, PolicyID: b.PolicyID, CalendarID: b.CalendarID, Timezone: b.Timezone,
		WorkingHours: b.WorkingHours.input(), RemoveHolidays: b.RemoveHolidays}
	if l := holidayInputs(&b.AddHolidays); l != nil {
		out.AddHolidays = *l
	}
	return out
}

// SLASimulateBody is the body of a what-if re-timing.
type SLASimulateBody struct {
	TicketID string                 `json:"ticket_id,omitempty" maxLength:"64" doc:"One ticket (404 when unknown); exactly one of ticket_id and filter" example:"tkt_9Xc2"`
	Filter   *SLASimulateFilterBody `json:"filter,omitempty" doc:"The open tickets it selects, oldest first, at most 1000 (truncated: true above); exactly one of ticket_id and filter"`
	Change   SLASimulateChangeBody  `json:"change" required:"true" doc:"Required: exactly one of priority, policy_id, or calendar_id with its edits"`
}

// SLASimulatedMetricItem is one clock before and after the change.
type SLASimulatedMetricItem struct {
	Metric                 string  `json:"metric" enum:"response,resolution"`
	Status                 string  `json:"status" enum:"in_progress,paused,breached" doc:"The clock's status now"`
	Changed                bool    `json:"changed" doc:"false: the change leaves this clock as it is"`
	Elapsed                string  `json:"elapsed" doc:"Time counted so far" example:"2h15m"`
	TargetBefore           string  `json:"target_before" example:"8h"`
	TargetAfter            string  `json:"target_after" example:"4h"`
	BusinessHoursBefore    bool    `json:"business_hours_before"`
	BusinessHoursAfter     bool    `json:"business_hours_after"`
	DueBefore              *string `json:"due_before" nullable:"true" doc:"Null while paused"`
	DueAfter               *string `json:"due_after" nullable:"true" doc:"Null while paused"`
	Shift                  string  `json:"shift" doc:"due_after minus due_before, signed; 0m when unchanged or paused" example:"-4h"`
	WouldBreachImmediately bool    `json:"would_breach_immediately" doc:"The clock runs, has not breached, and its time counted already reaches the new target"`
}

// SLASimulatedTicketItem is one ticket of a simulation.
type SLASimulatedTicketItem struct {
	TicketID string                   `json:"ticket_id"`
	Number   string                   `json:"number"`
	Priority string                   `json:"priority"`
	Category string                   `json:"category"`
	Metrics  []SLASimulatedMetricItem `json:"metrics" doc:"The running and paused clocks of the current cycle (none once resolved)"`
}

// SLASimulateChangeItem echoes the change simulated.
type SLASimulateChangeItem struct {
	Priority       string            `json:"priority,omitempty"`
	PolicyID       string            `json:"policy_id,omitempty"`
	CalendarID     string            `json:"calendar_id,omitempty"`
	WorkingHours   *WorkingHoursItem `json:"working_hours,omitempty"`
	Timezone       *string           `json:"timezone,omitempty"`
	AddHolidays    []HolidayItem     `json:"add_holidays,omitempty"`
	RemoveHolidays []string          `json:"remove_holidays,omitempty"`
}

// SLASimulationItem is the outcome of a what-if re-timing.
type SLASimulationItem struct {
	Change     SLASimulateChangeItem    `json:"change"`
	Evaluated  int                      `json:"evaluated" doc:"Tickets evaluated (at most 1000)"`
	Truncated  bool                     `json:"truncated" doc:"The filter matched more than 1000 tickets: the oldest 1000 were evaluated"`
	ComputedAt string                   `json:"computed_at"`
	Tickets    []SLASimulatedTicketItem `json:"tickets"`
}

// SLASimulateOutput is the answer of POST /v1/support/sla/simulate.
type SLASimulateOutput struct {
	Body struct {
		Envelope
		Simulation SLASimulationItem `json:"simulation"`
	}
}

// shiftText writes a signed duration: "+2h", "-45m", "0m".
func shiftText(d time.Duration) string {
	s := formatRemaining(d)
	if d >= time.Minute {
		return "+" + s
	}
	return s
}

func simulateChangeItem(c *support.SimulateChange) SLASimulateChangeItem {
	out := SLASimulateChangeItem{Priority: c.Priority, PolicyID: c.PolicyID, CalendarID: c.CalendarID, Timezone: c.Timezone, RemoveHolidays: c.RemoveHolidays}
	if c.WorkingHours != nil {
		wh := *c.WorkingHours
		day := func(name string) []ClockIntervalItem {
			out := []ClockIntervalItem{}
			for _, iv := range wh[name] {
				out = append(out, ClockIntervalItem{Start: iv.Start, End: iv.End})
			}
			return out
		}
		out.WorkingHours = &WorkingHoursItem{Monday: day("monday"), Tuesday: day("tuesday"), Wednesday: day("wednesday"), Thursday: day("thursday"),
			Friday: day("friday"), Saturday: day("saturday"), Sunday: day("sunday")}
	}
	for _, h := range c.AddHolidays {
		out.AddHolidays = append(out.AddHolidays, HolidayItem{Date: h.Date, Name: h.Name})
	}
	return out
}

func simulationItem(sim *support.Simulation) SLASimulationItem {
	out := SLASimulationItem{Change: simulateChangeItem(&sim.Change), Evaluated: sim.Evaluated, Truncated: sim.Truncated,
		ComputedAt: models.Timestamp(sim.ComputedAt), Tickets: []SLASimulatedTicketItem{}}
	for _, st := range sim.Tickets {
		t := st.Ticket
		it := SLASimulatedTicketItem{TicketID: t.ID, Number: t.Number, Priority: t.Priority, Category: t.Category, Metrics: []SLASimulatedMetricItem{}}
		for _, m := range st.Metrics {
			it.Metrics = append(it.Metrics, SLASimulatedMetricItem{Metric: m.Metric, Status: m.Status, Changed: m.Changed, Elapsed: formatRemaining(m.Elapsed),
				TargetBefore: support.FormatMinutes(m.TargetBefore), TargetAfter: support.FormatMinutes(m.TargetAfter),
				BusinessHoursBefore: m.BusinessHoursBefore, BusinessHoursAfter: m.BusinessHoursAfter, DueBefore: optTimestamp(m.DueBefore),
				DueAfter: optTimestamp(m.DueAfter), Shift: shiftText(m.Shift), WouldBreachImmediately: m.WouldBreachImmediately})
		}
		out.Tickets = append(out.Tickets, it)
	}
	return out
}

// registerSupportSLASimulate registers the what-if re-timing of SLA clocks.
func (s *Server) registerSupportSLASimulate(tags []string) {
	register(s, huma.Operation{OperationID: "simulate-support-sla", Method: http.MethodPost, Path: "/support/sla/simulate",
		Summary: "Simulate an SLA re-timing (what-if)",
		Description: "Answers the due times a hypothetical change would give one ticket (ticket_id) or the open tickets of a filter (oldest first, " +
			"at most 1000: truncated true above), computed with the SLA clocks' own arithmetic from the clocks as last synced, without changing " +
			"anything. change is exactly one of: priority (each ticket's policy re-resolved for it, time counted carried over, like a real priority " +
			"change); policy_id (that policy's targets for the ticket's priority, in its calendar); calendar_id with working_hours and timezone " +
			"(replaced), add_holidays and remove_holidays (the business-hours clocks counting in that calendar are re-timed; the others are " +
			"reported unchanged). Each ticket lists its running and paused clocks of the current cycle: targets and due times before and after " +
			"(null while paused), the shift, and whether the clock would breach at once. Unknown ticket, policy or calendar: 404 NOT_FOUND. " +
			"Provider staff with support:admin only (403 for everyone else).", Tags: tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct{ Body SLASimulateBody }) (*SLASimulateOutput, error) {
			b := in.Body
			si := support.SimulateInput{TicketID: b.TicketID, Change: b.Change.input()}
			if f := b.Filter; f != nil {
				si.Filter = &support.SimulateFilter{Statuses: f.Status, Priorities: f.Priority, Category: f.Category, CustomerID: f.CustomerID, PolicyID: f.PolicyID}
			}
			sim, err := s.support.SimulateSLA(ctx, principal(ctx), si, s.now())
			if err != nil {
				return nil, err
			}
			out := &SLASimulateOutput{}
			out.Body.Simulation = simulationItem(sim)
			return out, nil
		})
}
