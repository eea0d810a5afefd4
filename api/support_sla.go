package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// SLAResponseTime is the first-response metric of an SLA status.
type SLAResponseTime struct {
	Target        string  `json:"target" example:"1h" doc:"The target, in business time when business_hours"`
	Actual        *string `json:"actual" nullable:"true" doc:"Time counted until the first response (null until there is one)" example:"12m"`
	Status        string  `json:"status" enum:"in_progress,paused,met,breached"`
	DueAt         *string `json:"due_at" nullable:"true"`
	RespondedAt   *string `json:"responded_at" nullable:"true"`
	BusinessHours bool    `json:"business_hours" doc:"Counted in the policy calendar's business hours (false: every minute)"`
	WarnedAt      *string `json:"warned_at,omitempty" doc:"When the clock reached the policy's warning share"`
	BreachedAt    *string `json:"breached_at,omitempty"`
}

// SLAResolutionTime is the resolution metric of an SLA status.
type SLAResolutionTime struct {
	Target        string  `json:"target" example:"8h"`
	Elapsed       string  `json:"elapsed" doc:"Time counted so far (paused time and, on business hours, time outside them do not count)" example:"2h15m"`
	Status        string  `json:"status" enum:"in_progress,paused,met,breached"`
	DueAt         *string `json:"due_at" nullable:"true" doc:"Null while paused (the ticket is pending)"`
	TimeRemaining string  `json:"time_remaining" doc:"Target minus elapsed; negative once breached, 0m once stopped" example:"5h45m"`
	BusinessHours bool    `json:"business_hours"`
	WarnedAt      *string `json:"warned_at,omitempty"`
	BreachedAt    *string `json:"breached_at,omitempty"`
}

// SLAEscalation is the escalation part of an SLA status.
type SLAEscalation struct {
	CurrentLevel     int     `json:"current_level"`
	EscalatedAt      *string `json:"escalated_at" nullable:"true"`
	EscalationReason string  `json:"escalation_reason"`
	NextEscalation   *string `json:"next_escalation" nullable:"true" doc:"When the policy's escalation ladder next acts (null: nothing is coming)"`
}

// SLALedgerSpan is one piece of a running ledger segment.
type SLALedgerSpan struct {
	Start   string `json:"start"`
	End     string `json:"end"`
	Working bool   `json:"working" doc:"false: outside business hours (did not count)"`
}

// SLALedgerEntry is one segment of the clock ledger.
type SLALedgerEntry struct {
	Metric       string          `json:"metric" enum:"response,resolution"`
	Cycle        int             `json:"cycle"`
	Seq          int             `json:"seq"`
	Kind         string          `json:"kind" enum:"running,paused,retimed"`
	StartedAt    string          `json:"started_at"`
	EndedAt      *string         `json:"ended_at" nullable:"true" doc:"Null: the segment is open"`
	BusinessTime string          `json:"business_time" doc:"What a running segment counted" example:"1h30m"`
	Note         string          `json:"note,omitempty" doc:"A re-timing: what changed, the old and new target and due time"`
	Spans        []SLALedgerSpan `json:"spans,omitempty" doc:"A running segment in and outside business hours"`
}

// SLAEscalationItem is one escalation: a ladder step that fired, a warning
// or a manual escalation.
type SLAEscalationItem struct {
	Metric  string `json:"metric" enum:"response,resolution,manual"`
	Cycle   int    `json:"cycle"`
	Step    int    `json:"step" doc:"The ladder step (from 0); -1 manual, -2 the warning"`
	Repeat  int    `json:"repeat"`
	Action  string `json:"action"`
	Level   int    `json:"level"`
	Reason  string `json:"reason"`
	Detail  string `json:"detail,omitempty" doc:"What it did (who was mailed, the metadata of a manual escalation); provider staff only"`
	ActorID string `json:"actor_id,omitempty" doc:"Who escalated (sla_clock for the clock's own steps); provider staff only"`
	FiredAt string `json:"fired_at"`
}

// SLAStatusItem is a ticket's SLA status (spec 2.4, wrapped in sla_status).
type SLAStatusItem struct {
	TicketID       string              `json:"ticket_id"`
	Priority       string              `json:"priority"`
	Category       string              `json:"category"`
	SLATier        string              `json:"sla_tier" doc:"The tier the policy was chosen for: standard, premium or enterprise"`
	PolicyID       string              `json:"policy_id,omitempty"`
	Cycle          int                 `json:"cycle" doc:"1, then one more per reopen"`
	ResponseTime   *SLAResponseTime    `json:"response_time,omitempty" doc:"The first response: in a reopen's cycle (which times the resolution only), the first cycle's clock, stopped at its resolution if no one had answered (its status says whether it was met)"`
	ResolutionTime SLAResolutionTime   `json:"resolution_time"`
	Escalation     SLAEscalation       `json:"escalation"`
	Escalations    []SLAEscalationItem `json:"escalations" doc:"Every escalation of the ticket, oldest first (at most 200)"`
	Ledger         []SLALedgerEntry    `json:"ledger,omitempty" doc:"With include=ledger: every segment of every cycle"`
	ComputedAt     string              `json:"computed_at"`
}

// SLAStatusOutput is the answer of GET .../sla.
type SLAStatusOutput struct {
	Body struct {
		Envelope
		SLAStatus SLAStatusItem `json:"sla_status"`
	}
}

// EscalateBody is the escalation body (spec 2.4).
type EscalateBody struct {
	EscalationLevel int            `json:"escalation_level" required:"true" minimum:"1" maximum:"10" doc:"Above the ticket's current level"`
	Reason          string         `json:"reason" required:"true" minLength:"1" maxLength:"500"`
	Notify          []string       `json:"notify,omitempty" maxItems:"20" doc:"E-mail addresses told of the escalation"`
	Metadata        map[string]any `json:"metadata,omitempty" doc:"At most 50 keys, 8 KiB of JSON; kept with the escalation"`
	Comments        string         `json:"comments,omitempty" maxLength:"5000" doc:"Kept as an internal note on the ticket"`
}

// EscalateOutput is the answer of POST .../escalate.
type EscalateOutput struct {
	Body struct {
		Envelope
		Ticket        TicketItem         `json:"ticket"`
		Escalation    SLAEscalationItem  `json:"escalation"`
		Notifications []NotificationItem `json:"notifications"`
	}
}

func escalationItem(e *support.Escalation) SLAEscalationItem {
	return SLAEscalationItem{Metric: e.Metric, Cycle: e.Cycle, Step: e.Step, Repeat: e.Repeat, Action: e.Action, Level: e.Level,
		Reason: e.Reason, Detail: e.Detail, ActorID: e.ActorID, FiredAt: models.Timestamp(e.FiredAt)}
}

// slaStatusItem renders an SLA view; customers (staff false) do not see
// what an escalation did (who was mailed or paged, its metadata), nor who
// did it.
func slaStatusItem(v *support.SLAView, staff bool) SLAStatusItem {
	t := v.Ticket
	out := SLAStatusItem{TicketID: t.ID, Priority: t.Priority, Category: t.Category, SLATier: v.Tier, PolicyID: v.PolicyID, Cycle: v.Cycle,
		Escalation: SLAEscalation{CurrentLevel: t.EscalationLevel, EscalatedAt: optTimestamp(t.EscalatedAt), EscalationReason: t.EscalationReason,
			NextEscalation: optTimestamp(v.NextEscalation)},
		Escalations: []SLAEscalationItem{}, ComputedAt: models.Timestamp(v.At)}
	if c := v.Response; c != nil {
		r := &SLAResponseTime{Target: support.FormatMinutes(c.TargetMinutes), Status: c.Status(), DueAt: optTimestamp(c.DueAt),
			BusinessHours: c.BusinessHours, WarnedAt: optTimestamp(c.WarnedAt), BreachedAt: optTimestamp(c.BreachedAt)}
		if c.State == support.ClockStopped && c.StoppedAt != nil {
			a := formatRemaining(c.Elapsed(*c.StoppedAt))
			r.Actual, r.RespondedAt = &a, optTimestamp(t.RespondedAt)
		}
		out.ResponseTime = r
	}
	if c := v.Resolution; c != nil {
		out.ResolutionTime = SLAResolutionTime{Target: support.FormatMinutes(c.TargetMinutes), Elapsed: formatRemaining(c.Elapsed(v.At)),
			Status: c.Status(), DueAt: optTimestamp(c.DueAt), TimeRemaining: formatRemaining(c.Remaining(v.At)), BusinessHours: c.BusinessHours,
			WarnedAt: optTimestamp(c.WarnedAt), BreachedAt: optTimestamp(c.BreachedAt)}
		if c.State == support.ClockPaused {
			out.ResolutionTime.DueAt = nil
		}
	}
	for i := range v.Escalations {
		it := escalationItem(&v.Escalations[i])
		if !staff {
			it.Detail, it.ActorID = "", ""
		}
		out.Escalations = append(out.Escalations, it)
	}
	for _, e := range v.Ledger {
		le := SLALedgerEntry{Metric: e.Metric, Cycle: e.Cycle, Seq: e.Seq, Kind: e.Kind, StartedAt: models.Timestamp(e.StartedAt),
			EndedAt: optTimestamp(e.EndedAt), BusinessTime: formatRemaining(time.Duration(e.BusinessSeconds) * time.Second), Note: e.Note}
		for _, sp := range e.Spans {
			le.Spans = append(le.Spans, SLALedgerSpan{Start: models.Timestamp(sp.Start), End: models.Timestamp(sp.End), Working: sp.Working})
		}
		out.Ledger = append(out.Ledger, le)
	}
	return out
}

// registerSupportTicketSLA registers a ticket's SLA status and its escalation.
func (s *Server) registerSupportTicketSLA(tags []string) {
	register(s, huma.Operation{OperationID: "get-support-ticket-sla", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}/sla",
		Summary: "Get a ticket's SLA status",
		Description: "The live state of the ticket's SLA clocks (the same source as the ticket's sla and the list's sla_status): first response " +
			"and resolution with their targets, time counted, status (in_progress, paused, met, breached) and due times; the escalation level " +
			"and the ladder's next step; with include=ledger, every segment of the clock ledger (running, paused, re-timed, with business and " +
			"non-business pieces) — why a target was met or breached.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct {
			TicketPath
			Include string `query:"include" enum:"ledger" doc:"ledger: add the clock ledger"`
		}) (*SLAStatusOutput, error) {
			v, err := s.support.GetTicketSLA(ctx, principal(ctx), in.ID, in.Include == "ledger", s.now())
			if err != nil {
				return nil, err
			}
			out := &SLAStatusOutput{}
			out.Body.SLAStatus = slaStatusItem(v, principal(ctx).IsStaff())
			return out, nil
		})
	register(s, huma.Operation{OperationID: "escalate-support-ticket", Method: http.MethodPost, Path: "/support/tickets/{ticket_id}/escalate",
		Summary: "Escalate a ticket",
		Description: "Provider staff: the status becomes escalated (from open, in_progress or pending; 409 INVALID_STATE_TRANSITION from resolved " +
			"or closed), the level becomes escalation_level (above the current one) with the reason; comments become an internal note, every " +
			"notify address is e-mailed; writes ticket.updated and ticket.escalated.", Tags: tags},
		access{permission: support.PermissionWrite, staff: true}, func(ctx context.Context, in *struct {
			TicketPath
			Body EscalateBody
		}) (*EscalateOutput, error) {
			p := principal(ctx)
			b := in.Body
			res, err := s.support.EscalateTicket(ctx, p, in.ID, support.EscalateInput{Level: b.EscalationLevel, Reason: b.Reason, Notify: b.Notify,
				Metadata: b.Metadata, Comments: b.Comments})
			if err != nil {
				return nil, err
			}
			s.syncSLA(ctx, res.Ticket)
			out := &EscalateOutput{}
			out.Body.Ticket = s.ticketItem(p, res.Ticket)
			out.Body.Escalation = escalationItem(res.Escalation)
			out.Body.Notifications = []NotificationItem{}
			for i := range res.Notifications {
				out.Body.Notifications = append(out.Body.Notifications, notificationItem(&res.Notifications[i]))
			}
			return out, nil
		})
}
