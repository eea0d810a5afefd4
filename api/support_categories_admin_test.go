package api_test

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/models/support"
)

// categoryAnswer is a category answer.
type categoryAnswer struct {
	Category struct {
		ID              string `json:"id"`
		Name            string `json:"name"`
		DefaultPriority string `json:"default_priority"`
		SLA             struct {
			ResponseTime   string `json:"response_time"`
			ResolutionTime string `json:"resolution_time"`
		} `json:"sla"`
		SLATargets []struct {
			Priority       string `json:"priority"`
			ResponseTime   string `json:"response_time"`
			ResolutionTime string `json:"resolution_time"`
		} `json:"sla_targets"`
		Subcategories []struct{ ID, Name string } `json:"subcategories"`
	} `json:"category"`
}

func (c categoryAnswer) target(priority string) string {
	for _, t := range c.Category.SLATargets {
		if t.Priority == priority {
			return t.ResponseTime + "/" + t.ResolutionTime
		}
	}
	return ""
}

func TestSupportCategoryAdmin(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	agent, _ := staffKey(t, h) // staff without support:admin
	iot := map[string]any{"id": "iot", "name": "IoT", "description": "Connected devices.", "default_priority": "medium",
		"subcategories": []map[string]any{{"id": "lorawan", "name": "LoRaWAN", "routing_rules": map[string]any{"auto_assign": "iot_team"}}, {"id": "sim", "name": "SIM cards"}},
		"sla_targets":   []map[string]any{{"priority": "critical", "response_time": "10m", "resolution_time": "2h"}}}
	// Permissions: customers (even with every permission) and agents without support:admin get 403.
	h.do("POST", "/v1/support/categories", a.liveKey, iot).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/support/categories", agent, iot).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", "/v1/support/categories/network", a.liveKey, map[string]any{"name": "x"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", "/v1/support/categories/network", agent, map[string]any{"name": "x"}).wantError(403, "INSUFFICIENT_PERMISSIONS")

	var c categoryAnswer
	h.do("POST", "/v1/support/categories", h.adminKey, iot).decode(201, &c)
	if c.Category.ID != "iot" || c.Category.SLA.ResponseTime != "4h" || c.target("critical") != "10m/2h" || c.target("high") != "1h/8h" ||
		len(c.Category.Subcategories) != 2 {
		t.Fatalf("created %+v", c.Category)
	}
	h.do("POST", "/v1/support/categories", h.adminKey, iot).wantError(409, "ALREADY_EXISTS")
	// What the schema states (required nested fields, the priority enum)
	// is refused before the domain's rules are checked...
	wantFields(t, h.do("POST", "/v1/support/categories", h.adminKey, map[string]any{"id": "iot2", "name": "IoT 2", "default_priority": "medium",
		"subcategories": []map[string]any{{"id": "x"}},
		"sla_targets":   []map[string]any{{"priority": "urgent"}}}),
		"subcategories[0].name", "sla_targets[0].priority", "sla_targets[0].response_time", "sla_targets[0].resolution_time")
	// ...then every rule of the domain is reported at once.
	wantFields(t, h.do("POST", "/v1/support/categories", h.adminKey, map[string]any{"id": "Bad ID",
		"subcategories": []map[string]any{{"id": "Bad Sub", "name": "Bad"}},
		"sla_targets":   []map[string]any{{"priority": "high", "response_time": "9h", "resolution_time": "1h"}, {"priority": "low", "response_time": "30s", "resolution_time": "1h"}}}),
		"id", "name", "default_priority", "subcategories[0].id", "sla_targets[0].response_time", "sla_targets[1].response_time")

	// The new category is listed last, and tickets take its targets and subcategories.
	var list struct {
		Categories []struct{ ID string } `json:"categories"`
	}
	h.do("GET", "/v1/support/categories", a.liveKey, nil).decode(200, &list)
	if n := len(list.Categories); n != 8 || list.Categories[n-1].ID != "iot" {
		t.Fatalf("categories %+v", list.Categories)
	}
	old := newTicket(t, h, a.liveKey, map[string]any{"category": "iot", "subcategory": "lorawan", "priority": "critical"})
	if old.Ticket.SLA.ResponseTime != "10m" || old.Ticket.SLA.ResolutionTime != "2h" || old.Ticket.AssignedTo != nil {
		t.Fatalf("iot ticket %+v", old.Ticket)
	}

	// Editing: targets of the priorities sent, the subcategory list replaced; open tickets keep their targets.
	h.do("PATCH", "/v1/support/categories/iot", h.adminKey, map[string]any{"name": "Internet of Things",
		"subcategories": []map[string]any{{"id": "sim", "name": "SIM cards"}},
		"sla_targets":   []map[string]any{{"priority": "critical", "response_time": "5m", "resolution_time": "1h30m"}}}).decode(200, &c)
	if c.Category.Name != "Internet of Things" || c.target("critical") != "5m/1h30m" || c.target("low") != "8h/72h" || len(c.Category.Subcategories) != 1 {
		t.Fatalf("updated %+v", c.Category)
	}
	var got ticketAnswer
	h.do("GET", "/v1/support/tickets/"+old.Ticket.ID, a.liveKey, nil).decode(200, &got)
	if got.Ticket.SLA.ResponseTime != "10m" {
		t.Fatalf("the open ticket's targets changed: %+v", got.Ticket.SLA)
	}
	wantFields(t, h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": "t", "description": "d", "category": "iot", "subcategory": "lorawan"}), "subcategory")
	wantFields(t, h.do("PATCH", "/v1/support/categories/iot", h.adminKey, map[string]any{"id": "other"}), "id")
	wantFields(t, h.do("PATCH", "/v1/support/categories/iot", h.adminKey, map[string]any{"default_priority": "urgent", "name": " "}), "default_priority", "name")
	h.do("PATCH", "/v1/support/categories/nothing", h.adminKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")

	// The category got its team: once an agent joins it, new tickets of the category go to that agent.
	_, member := staffKey(t, h)
	if err := support.NewStore(h.store).AddTeamMember(context.Background(), support.CategoryTeamID("iot"), member); err != nil {
		t.Fatal(err)
	}
	if tk := newTicket(t, h, a.liveKey, map[string]any{"category": "iot", "subcategory": "sim", "priority": "critical"}); agentOf(tk) != member || tk.Ticket.SLA.ResponseTime != "5m" {
		t.Fatalf("new iot ticket %+v", tk.Ticket)
	}
}
