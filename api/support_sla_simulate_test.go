package api_test

import (
	"strings"
	"testing"
	"time"
)

// simulationAnswer is the part of a simulation answer the tests read.
type simulationAnswer struct {
	Simulation struct {
		Change     map[string]any `json:"change"`
		Evaluated  int            `json:"evaluated"`
		Truncated  bool           `json:"truncated"`
		ComputedAt string         `json:"computed_at"`
		Tickets    []struct {
			TicketID string `json:"ticket_id"`
			Number   string `json:"number"`
			Priority string `json:"priority"`
			Category string `json:"category"`
			Metrics  []struct {
				Metric                 string  `json:"metric"`
				Status                 string  `json:"status"`
				Changed                bool    `json:"changed"`
				TargetBefore           string  `json:"target_before"`
				TargetAfter            string  `json:"target_after"`
				BusinessHoursAfter     bool    `json:"business_hours_after"`
				DueBefore              *string `json:"due_before"`
				DueAfter               *string `json:"due_after"`
				Shift                  string  `json:"shift"`
				WouldBreachImmediately bool    `json:"would_breach_immediately"`
			} `json:"metrics"`
		} `json:"tickets"`
	} `json:"simulation"`
}

const simulatePath = "/v1/support/sla/simulate"

func TestSupportSLASimulateValidation(t *testing.T) {
	h := newHarness(t)
	tk := newTicket(t, h, h.tenants[0].liveKey, nil).Ticket.ID
	post := func(body map[string]any, fields ...string) {
		t.Helper()
		wantFields(t, h.do("POST", simulatePath, h.adminKey, body), fields...)
	}
	crit := map[string]any{"priority": "critical"}
	post(map[string]any{"ticket_id": tk}, "change")
	post(map[string]any{"change": crit}, "ticket_id")
	post(map[string]any{"ticket_id": tk, "filter": map[string]any{}, "change": crit}, "ticket_id")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{}}, "change")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{"priority": "high", "policy_id": "slap_default"}}, "change")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{"priority": "urgent"}}, "change.priority")
	post(map[string]any{"filter": map[string]any{"status": []string{"closed"}}, "change": crit}, "filter.status[0]")
	post(map[string]any{"filter": map[string]any{"category": "quantum"}, "change": crit}, "filter.category")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{"timezone": "UTC"}}, "change.calendar_id")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{"calendar_id": "cal_standard", "timezone": "Mars/Base",
		"working_hours":   map[string]any{"monday": []map[string]any{{"start": "17:00", "end": "09:00"}}},
		"add_holidays":    []map[string]any{{"date": "2026-12-24"}},
		"remove_holidays": []string{"2026-12-24"}}},
		"change.timezone", "change.working_hours.monday[0].end", "change.remove_holidays[0]")
	post(map[string]any{"ticket_id": tk, "change": map[string]any{"calendar_id": "cal_standard", "remove_holidays": []string{"2026-12-25"}}},
		"change.remove_holidays[0]")
	// Unknown ticket, policy, calendar.
	h.do("POST", simulatePath, h.adminKey, map[string]any{"ticket_id": "tkt_nowhere", "change": crit}).wantError(404, "NOT_FOUND")
	h.do("POST", simulatePath, h.adminKey, map[string]any{"ticket_id": tk, "change": map[string]any{"policy_id": "slap_nowhere"}}).wantError(404, "NOT_FOUND")
	h.do("POST", simulatePath, h.adminKey, map[string]any{"ticket_id": tk, "change": map[string]any{"calendar_id": "cal_nowhere", "timezone": "UTC"}}).
		wantError(404, "NOT_FOUND")
}

func TestSupportSLASimulatePermissions(t *testing.T) {
	h := newHarness(t)
	tk := newTicket(t, h, h.tenants[0].liveKey, nil).Ticket.ID
	body := map[string]any{"ticket_id": tk, "change": map[string]any{"priority": "critical"}}
	agent, _ := staffKey(t, h) // support:read and write, no support:admin
	for _, key := range []string{h.tenants[0].liveKey, h.tenants[0].testKey, h.tenants[1].liveKey, agent, leadKey(t, h, "support:read")} {
		h.do("POST", simulatePath, key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	h.do("POST", simulatePath, "", body).wantError(401, "UNAUTHENTICATED")
	var sim simulationAnswer
	h.do("POST", simulatePath, leadKey(t, h, "support:read", "support:admin"), body).decode(200, &sim)
	if sim.Simulation.Evaluated != 1 || sim.Simulation.Tickets[0].TicketID != tk {
		t.Fatalf("lead %+v", sim)
	}
}

func TestSupportSLASimulatePriority(t *testing.T) {
	h := newHarness(t)
	tk := newTicket(t, h, h.tenants[0].liveKey, map[string]any{"priority": "high"}).Ticket
	before := slaDues(t, h, tk.ID)
	var sim simulationAnswer
	h.do("POST", simulatePath, h.adminKey, map[string]any{"ticket_id": " " + tk.ID + " ", "change": map[string]any{"priority": "critical"}}).decode(200, &sim)
	s := sim.Simulation
	if s.Evaluated != 1 || s.Truncated || s.Change["priority"] != "critical" || len(s.Change) != 1 || s.ComputedAt == "" || len(s.Tickets) != 1 {
		t.Fatalf("simulation %+v", s)
	}
	st := s.Tickets[0]
	if st.Number != tk.Number || st.Priority != "high" || st.Category != "network" || len(st.Metrics) != 2 {
		t.Fatalf("ticket %+v", st)
	}
	for _, m := range st.Metrics {
		if !m.Changed || m.Status != "in_progress" || m.TargetBefore == m.TargetAfter || m.DueBefore == nil || m.DueAfter == nil ||
			!strings.HasPrefix(m.Shift, "-") || m.WouldBreachImmediately {
			t.Fatalf("metric %+v", m)
		}
	}
	if st.Metrics[0].Metric != "response" || st.Metrics[1].Metric != "resolution" {
		t.Fatalf("order %+v", st.Metrics)
	}
	// Nothing changed: the ticket's SLA reads the same.
	var tkNow ticketAnswer
	h.do("GET", "/v1/support/tickets/"+tk.ID, h.adminKey, nil).decode(200, &tkNow)
	if tkNow.Ticket.Priority != "high" || tkNow.Ticket.SLA.ResolutionDue != tk.SLA.ResolutionDue {
		t.Fatalf("the ticket changed: %+v", tkNow.Ticket)
	}
	if after := slaDues(t, h, tk.ID); after != before {
		t.Fatalf("SLA before %s\nafter %s", before, after)
	}
}

// slaDues is a ticket's SLA targets and due times as GET .../sla answers them.
func slaDues(t *testing.T, h *harness, id string) string {
	t.Helper()
	var out struct {
		SLAStatus struct {
			PolicyID     string `json:"policy_id"`
			ResponseTime struct {
				Target string  `json:"target"`
				DueAt  *string `json:"due_at"`
			} `json:"response_time"`
			ResolutionTime struct {
				Target string  `json:"target"`
				DueAt  *string `json:"due_at"`
			} `json:"resolution_time"`
		} `json:"sla_status"`
	}
	h.do("GET", "/v1/support/tickets/"+id+"/sla", h.adminKey, nil).decode(200, &out)
	st := out.SLAStatus
	return st.PolicyID + " " + st.ResponseTime.Target + " " + *st.ResponseTime.DueAt + " " + st.ResolutionTime.Target + " " + *st.ResolutionTime.DueAt
}

func TestSupportSLASimulatePolicy(t *testing.T) {
	h := newHarness(t)
	tk := newTicket(t, h, h.tenants[0].liveKey, map[string]any{"priority": "medium"}).Ticket
	var sim simulationAnswer
	// The standard tier's policy counts medium tickets (4h / 24h) in business hours.
	h.do("POST", simulatePath, h.adminKey, map[string]any{"filter": map[string]any{"customer_id": tk.CustomerID, "priority": []string{"medium"}},
		"change": map[string]any{"policy_id": "slap_standard"}}).decode(200, &sim)
	s := sim.Simulation
	if s.Evaluated != 1 || s.Change["policy_id"] != "slap_standard" || s.Tickets[0].TicketID != tk.ID {
		t.Fatalf("simulation %+v", s)
	}
	for _, m := range s.Tickets[0].Metrics {
		if !m.Changed || !m.BusinessHoursAfter || m.DueAfter == nil {
			t.Fatalf("metric %+v", m)
		}
	}
	if m := s.Tickets[0].Metrics[1]; m.TargetAfter != "24h" {
		t.Fatalf("resolution %+v", m)
	}
}

func TestSupportSLASimulateCalendar(t *testing.T) {
	h := newHarness(t)
	// Tenant A's network tickets (premium tier) count in a Monday-only calendar.
	cal := newCalendar(t, h, map[string]any{"name": "Mondays", "timezone": "UTC",
		"working_hours": map[string]any{"monday": []map[string]any{{"start": "09:00", "end": "17:00"}}}}).Calendar.ID
	newPolicy(t, h, map[string]any{"name": "Premium network", "tier": "premium", "category": "network", "calendar_id": cal,
		"targets": map[string]any{"high": map[string]any{"response_time": "1h", "resolution_time": "8h", "business_hours": true}}})
	in := newTicket(t, h, h.tenants[0].liveKey, map[string]any{"priority": "high"}).Ticket
	out := newTicket(t, h, h.tenants[0].liveKey, map[string]any{"priority": "high", "category": "general", "subcategory": "question"}).Ticket
	start := time.Now().UTC()
	var sim simulationAnswer
	allWeek := map[string]any{}
	for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
		allWeek[d] = []map[string]any{{"start": "00:00", "end": "24:00"}}
	}
	h.do("POST", simulatePath, h.adminKey, map[string]any{"filter": map[string]any{"status": []string{"open"}},
		"change": map[string]any{"calendar_id": cal, "working_hours": allWeek, "add_holidays": []map[string]any{{"date": "2030-01-01", "name": "New Year"}}}}).
		decode(200, &sim)
	s := sim.Simulation
	if s.Evaluated != 2 || len(s.Tickets) != 2 || s.Tickets[0].TicketID != in.ID || s.Tickets[1].TicketID != out.ID || s.Change["calendar_id"] != cal ||
		s.Change["working_hours"] == nil || s.Change["add_holidays"] == nil {
		t.Fatalf("simulation %+v", s)
	}
	// Every hour counts now: the resolution is due 8 hours after the ticket was opened.
	res := s.Tickets[0].Metrics[1]
	due, err := time.Parse(time.RFC3339, *res.DueAfter)
	if err != nil || !res.Changed || !res.BusinessHoursAfter || res.TargetAfter != "8h" || due.Before(start.Add(8*time.Hour-time.Minute)) || due.After(start.Add(8*time.Hour+time.Minute)) {
		t.Fatalf("resolution %+v (%v)", res, err)
	}
	// The general ticket counts in calendar time: unchanged.
	for _, m := range s.Tickets[1].Metrics {
		if m.Changed || m.Shift != "0m" || *m.DueBefore != *m.DueAfter {
			t.Fatalf("unchanged %+v", m)
		}
	}
}
