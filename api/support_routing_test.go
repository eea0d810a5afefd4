package api_test

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// ruleAnswer is the part of a routing rule answer the tests read.
type ruleAnswer struct {
	RoutingRule struct {
		ID         string `json:"id"`
		RuleName   string `json:"rule_name"`
		Conditions struct {
			Category     string   `json:"category"`
			Priority     []string `json:"priority"`
			Keywords     []string `json:"keywords"`
			CustomerTier string   `json:"customer_tier"`
		} `json:"conditions"`
		Actions struct {
			AssignTo            string   `json:"assign_to"`
			Notify              []string `json:"notify"`
			EscalateAfter       string   `json:"escalate_after"`
			AutoUpdateFrequency string   `json:"auto_update_frequency"`
		} `json:"actions"`
		Active bool `json:"active"`
	} `json:"routing_rule"`
}

func newRule(t *testing.T, h *harness, body map[string]any) ruleAnswer {
	t.Helper()
	var r ruleAnswer
	h.do("POST", "/v1/support/routing-rules", h.adminKey, body).decode(201, &r)
	return r
}

func TestSupportRoutingRulesCRUD(t *testing.T) {
	h := newHarness(t)
	_, agentID := staffKey(t, h)
	r := newRule(t, h, map[string]any{"rule_name": " Enterprise network outages ",
		"conditions": map[string]any{"category": "network", "priority": []string{"critical", "high"}, "keywords": []string{"outage", "down"}, "customer_tier": "enterprise"},
		"actions":    map[string]any{"assign_to": agentID, "notify": []string{"noc@example.com"}, "escalate_after": "30m", "auto_update_frequency": "90m"}})
	rr := r.RoutingRule
	if rr.ID == "" || rr.RuleName != "Enterprise network outages" || !rr.Active || rr.Conditions.Category != "network" || len(rr.Conditions.Priority) != 2 ||
		rr.Conditions.CustomerTier != "enterprise" || rr.Actions.AssignTo != agentID || rr.Actions.EscalateAfter != "30m" || rr.Actions.AutoUpdateFrequency != "1h30m" ||
		len(rr.Actions.Notify) != 1 {
		t.Fatalf("created %+v", rr)
	}
	path := "/v1/support/routing-rules/" + rr.ID
	var got ruleAnswer
	h.do("GET", path, h.adminKey, nil).decode(200, &got)
	if got.RoutingRule.ID != rr.ID || len(got.RoutingRule.Conditions.Keywords) != 2 {
		t.Fatalf("get %+v", got.RoutingRule)
	}
	// PATCH changes only what is sent; an empty list clears one.
	h.do("PATCH", path, h.adminKey, map[string]any{"active": false, "conditions": map[string]any{"keywords": []string{}},
		"actions": map[string]any{"escalate_after": "2h"}}).decode(200, &got)
	g := got.RoutingRule
	if g.Active || len(g.Conditions.Keywords) != 0 || g.Conditions.Category != "network" || g.Actions.EscalateAfter != "2h" || g.Actions.AssignTo != agentID || g.RuleName != rr.RuleName {
		t.Fatalf("patched %+v", g)
	}
	newRule(t, h, map[string]any{"rule_name": "Billing", "conditions": map[string]any{"category": "billing"}, "actions": map[string]any{"notify": []string{"billing@example.com"}}, "active": false})
	var list struct {
		RoutingRules []struct {
			ID       string `json:"id"`
			RuleName string `json:"rule_name"`
		} `json:"routing_rules"`
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	h.do("GET", "/v1/support/routing-rules?sort=rule_name:asc", h.adminKey, nil).decode(200, &list)
	if list.Pagination.Total != 2 || len(list.RoutingRules) != 2 || list.RoutingRules[0].RuleName != "Billing" {
		t.Fatalf("list %+v", list)
	}
	h.do("GET", "/v1/support/routing-rules?sort=colour:asc", h.adminKey, nil).wantError(400, "VALIDATION_ERROR")
	h.do("DELETE", path, h.adminKey, nil).decode(204, nil)
	h.do("GET", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("DELETE", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("PATCH", path, h.adminKey, map[string]any{"active": true}).wantError(404, "NOT_FOUND")
}

func TestSupportRoutingRuleValidation(t *testing.T) {
	h := newHarness(t)
	_, agentID := staffKey(t, h)
	post := func(body map[string]any, fields ...string) {
		t.Helper()
		wantFields(t, h.do("POST", "/v1/support/routing-rules", h.adminKey, body), fields...)
	}
	assign := map[string]any{"assign_to": agentID}
	post(map[string]any{"actions": assign}, "rule_name")
	post(map[string]any{"rule_name": "x"}, "actions")
	post(map[string]any{"rule_name": "x", "conditions": map[string]any{"category": "quantum", "priority": []string{"urgent"}, "customer_tier": "gold"}, "actions": assign},
		"conditions.category", "conditions.priority", "conditions.customer_tier")
	post(map[string]any{"rule_name": "x", "actions": map[string]any{"assign_to": "usr_nobody", "notify": []string{"not-an-email"}, "escalate_after": "soon",
		"auto_update_frequency": "30s"}}, "actions.assign_to", "actions.notify", "actions.escalate_after", "actions.auto_update_frequency")
	post(map[string]any{"rule_name": "x", "actions": map[string]any{"escalate_after": "1000h"}}, "actions.escalate_after")
	// A customer is not an agent.
	var user struct {
		User struct{ ID string } `json:"user"`
	}
	h.do("POST", "/v1/users", h.tenants[0].liveKey, map[string]any{"email": "cust-" + models.RandomString(6) + "@example.com", "name": "C"}).decode(201, &user)
	post(map[string]any{"rule_name": "x", "actions": map[string]any{"assign_to": user.User.ID}}, "actions.assign_to")
	h.do("POST", "/v1/support/routing-rules", h.adminKey, map[string]any{"rule_name": "x", "actions": assign, "colour": "red"}).wantError(400, "VALIDATION_ERROR")
	// An update is validated as a whole rule.
	r := newRule(t, h, map[string]any{"rule_name": "ok", "actions": assign})
	wantFields(t, h.do("PATCH", "/v1/support/routing-rules/"+r.RoutingRule.ID, h.adminKey, map[string]any{"rule_name": "", "actions": map[string]any{"assign_to": ""}}),
		"rule_name", "actions")
}

func TestSupportRoutingRulePermissions(t *testing.T) {
	h := newHarness(t)
	agentKey, agentID := staffKey(t, h)
	r := newRule(t, h, map[string]any{"rule_name": "r", "actions": map[string]any{"assign_to": agentID}})
	path := "/v1/support/routing-rules/" + r.RoutingRule.ID
	body := map[string]any{"rule_name": "mine", "actions": map[string]any{"assign_to": agentID}}
	// Customers (even with every permission) and agents without support:admin: 403.
	for _, key := range []string{h.tenants[0].liveKey, h.tenants[0].testKey, h.tenants[1].liveKey, agentKey} {
		h.do("POST", "/v1/support/routing-rules", key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", "/v1/support/routing-rules", key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", path, key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("PATCH", path, key, map[string]any{"active": false}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("DELETE", path, key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	h.do("GET", path, "", nil).wantError(401, "UNAUTHENTICATED")
	// An agent key holding support:admin may manage rules.
	prov, err := identity.NewStore(h.store).EnsureProviderOrganization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lead := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(context.Background(), prov.ID, lead, "lead", models.RoleAgent, []string{"support:read", "support:admin"}); err != nil {
		t.Fatal(err)
	}
	h.do("GET", path, lead, nil).decode(200, nil)
	h.do("POST", "/v1/support/routing-rules", lead, body).decode(201, nil)
}

func TestSupportRoutingAssignsNewTickets(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, general := staffKey(t, h)
	_, specialist := staffKey(t, h)
	_, tierAgent := staffKey(t, h)
	// Created first, but without a priority condition: tried after the priority rules.
	newRule(t, h, map[string]any{"rule_name": "all network", "conditions": map[string]any{"category": "network"}, "actions": map[string]any{"assign_to": general}})
	newRule(t, h, map[string]any{"rule_name": "urgent outages", "conditions": map[string]any{"category": "network", "priority": []string{"critical", "high"},
		"keywords": []string{"OUTAGE"}}, "actions": map[string]any{"assign_to": specialist}})
	newRule(t, h, map[string]any{"rule_name": "inactive catch-all", "conditions": map[string]any{"priority": []string{"low"}}, "actions": map[string]any{"assign_to": staffAgentOf(t, h)}, "active": false})
	newRule(t, h, map[string]any{"rule_name": "notify only", "conditions": map[string]any{"category": "voice"}, "actions": map[string]any{"notify": []string{"voice@example.com"}}})
	newRule(t, h, map[string]any{"rule_name": "business voice", "conditions": map[string]any{"category": "voice", "customer_tier": "business"}, "actions": map[string]any{"assign_to": tierAgent}})
	newRule(t, h, map[string]any{"rule_name": "enterprise billing", "conditions": map[string]any{"category": "billing", "customer_tier": "enterprise"}, "actions": map[string]any{"assign_to": tierAgent}})

	assigned := func(tk ticketAnswer) string {
		if tk.Ticket.AssignedTo == nil {
			return ""
		}
		return tk.Ticket.AssignedTo["agent_id"].(string)
	}
	// Keyword (any case) and priority match: the priority rule wins over the older general one.
	tk := newTicket(t, h, a.liveKey, map[string]any{"title": "Total outage at the NYC site", "priority": "critical"})
	if assigned(tk) != specialist {
		t.Fatalf("outage ticket assigned to %v, want the specialist", tk.Ticket.AssignedTo)
	}
	// No keyword: the general network rule.
	if got := assigned(newTicket(t, h, a.liveKey, map[string]any{"priority": "high"})); got != general {
		t.Fatalf("network ticket assigned to %q, want the general agent", got)
	}
	// A notify-only rule is passed over; the tier rule (tenants are on the business plan) assigns.
	if got := assigned(newTicket(t, h, a.liveKey, map[string]any{"category": "voice", "subcategory": "call_quality"})); got != tierAgent {
		t.Fatalf("voice ticket assigned to %q, want the tier agent", got)
	}
	// No rule for this tier, and the inactive rule does not apply.
	if got := assigned(newTicket(t, h, a.liveKey, map[string]any{"category": "billing", "subcategory": nil, "priority": "low"})); got != "" {
		t.Fatalf("billing ticket assigned to %q", got)
	}
	// The assignment is in the ticket and its history, by the rule.
	var got ticketAnswer
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, a.liveKey, nil).decode(200, &got)
	if assigned(got) != specialist {
		t.Fatalf("stored assignment %v", got.Ticket.AssignedTo)
	}
	var hist struct {
		History []struct {
			Field    string `json:"field"`
			NewValue string `json:"new_value"`
			Actor    struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"actor"`
		} `json:"history"`
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/history", staff, nil).decode(200, &hist)
	found := false
	for _, e := range hist.History {
		if e.Field == "assigned_to" && e.NewValue == specialist && e.Actor.Type == "system" && e.Actor.ID != "" {
			found = true
		}
	}
	if !found {
		t.Fatalf("history lacks the rule's assignment: %+v", hist.History)
	}
	// Staff opening a ticket for a customer: the same routing.
	var staffTk ticketAnswer
	h.do("POST", "/v1/support/tickets", staff, map[string]any{"title": "Link down", "description": "d", "category": "network", "customer_id": a.org.CustomerID}).decode(201, &staffTk)
	if assigned(staffTk) != general {
		t.Fatalf("staff ticket assigned to %v", staffTk.Ticket.AssignedTo)
	}
}

// staffAgentOf creates one more provider agent and returns its user id.
func staffAgentOf(t *testing.T, h *harness) string {
	t.Helper()
	_, id := staffKey(t, h)
	return id
}
