package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models/support"
)

func agentOf(tk ticketAnswer) string {
	if tk.Ticket.AssignedTo == nil {
		return ""
	}
	return tk.Ticket.AssignedTo["agent_id"].(string)
}

// TestSupportSeededTeamsTakeUnroutedTickets: with the seeded agents and
// teams, a ticket no rule assigns goes to the least-loaded agent of its
// category's team (ties: membership order), counting open, in_progress
// and escalated tickets only; seeding twice changes nothing.
func TestSupportSeededTeamsTakeUnroutedTickets(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	a := h.tenants[0]
	ss := support.NewStore(h.store)
	first, err := ss.SeedAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ss.SeedAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 14 || len(again) != len(first) || first[0].ID != again[0].ID {
		t.Fatalf("seeded %d then %d agents (%s, %s)", len(first), len(again), first[0].ID, again[0].ID)
	}
	network := map[string]bool{}
	for _, u := range first {
		if strings.HasPrefix(u.Email, "network.") {
			network[u.ID] = true
		}
		if u.Role != "agent" {
			t.Fatalf("seeded %s with role %s", u.Email, u.Role)
		}
	}
	staff, _ := staffKey(t, h)

	t1 := newTicket(t, h, a.liveKey, nil)
	x := agentOf(t1)
	if !network[x] || t1.Ticket.AssignedTo["specialization"] != "network" {
		t.Fatalf("first network ticket assigned to %v", t1.Ticket.AssignedTo)
	}
	// x has one open ticket, the other none: the other gets the next.
	t2 := newTicket(t, h, a.liveKey, nil)
	y := agentOf(t2)
	if !network[y] || y == x {
		t.Fatalf("second ticket assigned to %q, want the other network agent (first: %q)", y, x)
	}
	// One each: the tie goes to the first member again.
	if got := agentOf(newTicket(t, h, a.testKey, nil)); got != x {
		t.Fatalf("third ticket (a tie) assigned to %q, want %q", got, x)
	}
	// Resolved and pending tickets are no load: x resolves one (one open
	// left, the sandbox one), y's only ticket is pending: y is the least loaded.
	h.do("PUT", "/v1/support/tickets/"+t1.Ticket.ID, staff, map[string]any{"status": "resolved"}).decode(200, nil)
	h.do("PUT", "/v1/support/tickets/"+t2.Ticket.ID, staff, map[string]any{"status": "pending"}).decode(200, nil)
	if got := agentOf(newTicket(t, h, a.liveKey, nil)); got != y {
		t.Fatalf("fourth ticket assigned to %q, want %q (x has one open ticket, y only a pending one)", got, y)
	}
	// The history names the team as the system actor; another category goes to its own team.
	var raw struct {
		History []map[string]any `json:"history"`
	}
	h.do("GET", "/v1/support/tickets/"+t1.Ticket.ID+"/history", staff, nil).decode(200, &raw)
	found := false
	for _, e := range raw.History {
		actor, _ := e["actor"].(map[string]any)
		if e["field"] == "assigned_to" && e["new_value"] == x && actor["type"] == "system" && actor["id"] == support.CategoryTeamID("network") {
			found = true
		}
	}
	if !found {
		t.Fatalf("history lacks the team assignment: %+v", raw.History)
	}
	voice := newTicket(t, h, a.liveKey, map[string]any{"category": "voice", "subcategory": "features"})
	if voice.Ticket.AssignedTo == nil || voice.Ticket.AssignedTo["specialization"] != "voice" || network[agentOf(voice)] {
		t.Fatalf("voice ticket assigned to %v", voice.Ticket.AssignedTo)
	}
}

// TestSupportRuleAssignsToTeamAndNotifies: a rule's assign_to may name a
// team (its least-loaded member gets the ticket), its notify list is
// e-mailed through the outbox when it assigns, and its timers are stored
// and answered.
func TestSupportRuleAssignsToTeamAndNotifies(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	a := h.tenants[0]
	ss := support.NewStore(h.store)
	staff, busy := staffKey(t, h)
	_, free := staffKey(t, h)
	if _, err := ss.EnsureTeam(ctx, support.Team{ID: "team_vip", Name: "VIP desk"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{busy, free} {
		if err := ss.AddTeamMember(ctx, "team_vip", id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ss.EnsureTeam(ctx, support.Team{ID: "team_empty", Name: "Nobody"}); err != nil {
		t.Fatal(err)
	}
	// busy already has an open ticket.
	pre := newTicket(t, h, a.liveKey, map[string]any{"title": "unrelated"})
	h.do("PUT", "/v1/support/tickets/"+pre.Ticket.ID, staff, map[string]any{"assigned_to": busy}).decode(200, nil)

	wantFields(t, h.do("POST", "/v1/support/routing-rules", h.adminKey, map[string]any{"rule_name": "x", "actions": map[string]any{"assign_to": "team_nope"}}), "actions.assign_to")
	// A rule naming an empty team is passed over.
	newRule(t, h, map[string]any{"rule_name": "empty team", "conditions": map[string]any{"priority": []string{"critical"}, "keywords": []string{"vip"}},
		"actions": map[string]any{"assign_to": "team_empty", "notify": []string{"nobody@example.com"}}})
	r := newRule(t, h, map[string]any{"rule_name": "VIP", "conditions": map[string]any{"keywords": []string{"vip"}},
		"actions": map[string]any{"assign_to": "team_vip", "notify": []string{"noc-lead@example.com", "duty@example.com"}, "escalate_after": "30m", "auto_update_frequency": "2h"}})
	if r.RoutingRule.Actions.AssignTo != "team_vip" || r.RoutingRule.Actions.EscalateAfter != "30m" || r.RoutingRule.Actions.AutoUpdateFrequency != "2h" {
		t.Fatalf("rule %+v", r.RoutingRule.Actions)
	}
	var got ruleAnswer
	h.do("GET", "/v1/support/routing-rules/"+r.RoutingRule.ID, h.adminKey, nil).decode(200, &got)
	if got.RoutingRule.Actions.EscalateAfter != "30m" || got.RoutingRule.Actions.AutoUpdateFrequency != "2h" {
		t.Fatalf("stored rule %+v", got.RoutingRule.Actions)
	}

	tk := newTicket(t, h, a.liveKey, map[string]any{"title": "VIP circuit flapping", "priority": "critical"})
	if agentOf(tk) != free {
		t.Fatalf("VIP ticket assigned to %v, want the free member %s", tk.Ticket.AssignedTo, free)
	}
	sent := ticketNotifications(t, h, staff, tk.Ticket.ID, "ticket_routed")
	if len(sent.Notifications) != 2 {
		t.Fatalf("routing notifications %+v", sent.Notifications)
	}
	for _, n := range sent.Notifications {
		to, body := outboxBody(t, h, n.ID)
		if (to != "noc-lead@example.com" && to != "duty@example.com") || n.Status != "queued" || !strings.Contains(body, tk.Ticket.Number) ||
			!strings.Contains(body, "VIP desk") || !strings.Contains(n.Subject, "Routed to") {
			t.Fatalf("notification %+v to %s: %s", n, to, body)
		}
	}
	// A ticket the rule does not assign sends no routing e-mail.
	plain := newTicket(t, h, a.liveKey, map[string]any{"title": "slow link"})
	if n := ticketNotifications(t, h, staff, plain.Ticket.ID, "ticket_routed"); len(n.Notifications) != 0 || agentOf(plain) != "" {
		t.Fatalf("unrouted ticket: %v, %+v", plain.Ticket.AssignedTo, n.Notifications)
	}
}
