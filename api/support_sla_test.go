package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
)

// slaAnswer is the part of GET .../sla the tests read.
type slaAnswer struct {
	SLAStatus struct {
		TicketID     string `json:"ticket_id"`
		Priority     string `json:"priority"`
		SLATier      string `json:"sla_tier"`
		Cycle        int    `json:"cycle"`
		ResponseTime *struct {
			Target string  `json:"target"`
			Status string  `json:"status"`
			DueAt  *string `json:"due_at"`
			Actual *string `json:"actual"`
		} `json:"response_time"`
		ResolutionTime struct {
			Target        string  `json:"target"`
			Elapsed       string  `json:"elapsed"`
			Status        string  `json:"status"`
			DueAt         *string `json:"due_at"`
			TimeRemaining string  `json:"time_remaining"`
		} `json:"resolution_time"`
		Escalation struct {
			CurrentLevel     int     `json:"current_level"`
			EscalationReason string  `json:"escalation_reason"`
			EscalatedAt      *string `json:"escalated_at"`
		} `json:"escalation"`
		Escalations []struct {
			Metric string `json:"metric"`
			Level  int    `json:"level"`
			Action string `json:"action"`
		} `json:"escalations"`
		Ledger []struct {
			Metric string `json:"metric"`
			Kind   string `json:"kind"`
			Spans  []struct {
				Working bool `json:"working"`
			} `json:"spans"`
		} `json:"ledger"`
	} `json:"sla_status"`
}

// TestSupportTicketSLA: the SLA status comes from the ticket's clocks (the
// same due times as the ticket's sla), with the ledger on request, never
// to another tenant; a pending ticket's resolution clock shows paused
// after a sync.
func TestSupportTicketSLA(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, map[string]any{"priority": "high"})
	var got slaAnswer
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", a.liveKey, nil).decode(200, &got)
	st := got.SLAStatus
	if st.TicketID != tk.Ticket.ID || st.Priority != "high" || st.Cycle != 1 || st.ResponseTime == nil ||
		st.ResponseTime.Status != "in_progress" || st.ResponseTime.Target != tk.Ticket.SLA.ResponseTime || *st.ResponseTime.DueAt != tk.Ticket.SLA.ResponseDue ||
		st.ResolutionTime.Status != "in_progress" || *st.ResolutionTime.DueAt != tk.Ticket.SLA.ResolutionDue || st.SLATier == "" {
		t.Fatalf("sla status %+v (ticket sla %+v)", st, tk.Ticket.SLA)
	}
	if len(st.Ledger) != 0 {
		t.Fatalf("ledger without include: %+v", st.Ledger)
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla?include=ledger", a.liveKey, nil).decode(200, &got)
	if n := len(got.SLAStatus.Ledger); n != 2 || got.SLAStatus.Ledger[0].Kind != "running" || len(got.SLAStatus.Ledger[0].Spans) == 0 {
		t.Fatalf("ledger %+v", got.SLAStatus.Ledger)
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", b.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", a.testKey, nil).wantError(404, "NOT_FOUND")
	wantFields(t, h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla?include=everything", a.liveKey, nil), "include")

	// Pending pauses the resolution clock (the workflow's sync, run here directly).
	h.do("PUT", "/v1/support/tickets/"+tk.Ticket.ID, staff, map[string]any{"status": "pending"}).decode(200, &tk)
	if _, err := support.NewStore(h.store).SyncSLA(context.Background(), tk.Ticket.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", a.liveKey, nil).decode(200, &got)
	if st := got.SLAStatus; st.ResolutionTime.Status != "paused" || st.ResolutionTime.DueAt != nil || st.ResponseTime.Status != "met" || st.ResponseTime.Actual == nil {
		t.Fatalf("pending: %+v %+v", st.ResolutionTime, *st.ResponseTime)
	}
	// The list's sla_status comes from the same clocks: the paused time remaining, the response met.
	var list struct {
		Tickets []struct {
			ID        string `json:"id"`
			SLAStatus struct {
				ResponseMet   bool   `json:"response_met"`
				TimeRemaining string `json:"time_remaining"`
			} `json:"sla_status"`
		} `json:"tickets"`
	}
	h.do("GET", "/v1/support/tickets", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 1 || !list.Tickets[0].SLAStatus.ResponseMet || list.Tickets[0].SLAStatus.TimeRemaining != got.SLAStatus.ResolutionTime.TimeRemaining {
		t.Fatalf("list sla_status %+v, sla %+v", list.Tickets, got.SLAStatus.ResolutionTime)
	}
}

// TestSupportEscalate: provider staff escalate with the spec's body; the
// level must rise; the notify list is mailed, comments become an internal
// note; ticket.escalated is written; customers may not.
func TestSupportEscalate(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID + "/escalate"
	body := map[string]any{"escalation_level": 2, "reason": "Customer-wide outage", "notify": []string{"noc-manager@provider.example"},
		"metadata": map[string]any{"bridge": "conf-7"}, "comments": "Paging the on-call manager."}
	h.do("POST", path, a.liveKey, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
	wantFields(t, h.do("POST", path, staff, map[string]any{"escalation_level": 0, "reason": ""}), "escalation_level", "reason")
	wantFields(t, h.do("POST", path, staff, map[string]any{"escalation_level": 1, "reason": "x", "notify": []string{"not-an-address"}}), "notify[0]")
	var res struct {
		Ticket        struct{ Status string } `json:"ticket"`
		Escalation    struct{ Level int }     `json:"escalation"`
		Notifications []struct{ Recipient string }
	}
	h.do("POST", path, staff, body).decode(200, &res)
	if res.Ticket.Status != "escalated" || res.Escalation.Level != 2 || len(res.Notifications) != 1 || res.Notifications[0].Recipient != "noc-manager@provider.example" {
		t.Fatalf("escalated %+v", res)
	}
	wantFields(t, h.do("POST", path, staff, map[string]any{"escalation_level": 2, "reason": "again"}), "escalation_level")
	var got slaAnswer
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", a.liveKey, nil).decode(200, &got)
	var raw map[string]any
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", a.liveKey, nil).decode(200, &raw)
	if esc := raw["sla_status"].(map[string]any)["escalations"].([]any)[0].(map[string]any); esc["detail"] != nil || esc["actor_id"] != nil {
		t.Fatalf("a customer sees what an escalation did: %v", esc)
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/sla", staff, nil).decode(200, &raw)
	if esc := raw["sla_status"].(map[string]any)["escalations"].([]any)[0].(map[string]any); esc["detail"] == nil || esc["actor_id"] == nil {
		t.Fatalf("staff do not see what an escalation did: %v", esc)
	}
	if e := got.SLAStatus.Escalation; e.CurrentLevel != 2 || e.EscalationReason != "Customer-wide outage" || e.EscalatedAt == nil ||
		len(got.SLAStatus.Escalations) != 1 || got.SLAStatus.Escalations[0].Metric != "manual" {
		t.Fatalf("escalation %+v %+v", e, got.SLAStatus.Escalations)
	}
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.SystemScope(), tk.Ticket.ID)
	if err != nil {
		t.Fatal(err)
	}
	escalated := 0
	for _, e := range evs {
		if e.Type == "ticket.escalated" {
			escalated++
			if d := e.Data["ticket"].(map[string]any); d["escalation_level"] != json.Number("2") {
				t.Fatalf("payload %+v", d)
			}
		}
	}
	if escalated != 1 {
		t.Fatalf("%d ticket.escalated events", escalated)
	}
	// A resolved ticket is not escalated.
	h.do("PUT", "/v1/support/tickets/"+tk.Ticket.ID, staff, map[string]any{"status": "resolved"}).decode(200, &tk)
	h.do("POST", path, staff, map[string]any{"escalation_level": 3, "reason": "late"}).wantError(409, "INVALID_STATE_TRANSITION")
	h.do("POST", "/v1/support/tickets/tkt_missing/escalate", staff, body).wantError(404, "NOT_FOUND")
}

// TestSupportBreachingWithin lists the tickets whose next SLA target is due
// within a duration, from the stored next-breach times.
func TestSupportBreachingWithin(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	critical := newTicket(t, h, a.liveKey, map[string]any{"priority": "critical"}) // 15m first response
	_ = newTicket(t, h, a.liveKey, map[string]any{"priority": "low"})              // hours away
	var list struct {
		Tickets []struct{ ID string } `json:"tickets"`
	}
	h.do("GET", "/v1/support/tickets?breaching_within=30m&sort=sla_next_breach_at:asc", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 1 || list.Tickets[0].ID != critical.Ticket.ID {
		t.Fatalf("breaching within 30m: %+v", list.Tickets)
	}
	h.do("GET", "/v1/support/tickets?breaching_within=200h", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 2 {
		t.Fatalf("breaching within 200h: %+v", list.Tickets)
	}
	wantFields(t, h.do("GET", "/v1/support/tickets?breaching_within=soon", a.liveKey, nil), "breaching_within")
}
