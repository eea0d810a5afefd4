package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// ticketAnswer is the part of a ticket answer the tests read.
type ticketAnswer struct {
	Ticket struct {
		ID            string         `json:"id"`
		Number        string         `json:"number"`
		Title         string         `json:"title"`
		Status        string         `json:"status"`
		Priority      string         `json:"priority"`
		CustomerID    string         `json:"customer_id"`
		AssignedTo    map[string]any `json:"assigned_to"`
		InternalNotes string         `json:"internal_notes"`
		SLA           struct {
			ResponseTime     string `json:"response_time"`
			ResolutionTime   string `json:"resolution_time"`
			ResponseDue      string `json:"response_due"`
			ResolutionDue    string `json:"resolution_due"`
			Escalated        bool   `json:"escalated"`
			EscalationLevel  int    `json:"escalation_level"`
			EscalationReason string `json:"escalation_reason"`
		} `json:"sla"`
		URLs struct {
			Self           string `json:"self"`
			CustomerPortal string `json:"customer_portal"`
		} `json:"urls"`
	} `json:"ticket"`
}

func newTicket(t *testing.T, h *harness, key string, extra map[string]any) ticketAnswer {
	t.Helper()
	body := map[string]any{"title": "Packet loss on the NYC circuit", "description": "Since 9:00, 5% loss.", "category": "network",
		"subcategory": "connectivity", "priority": "high", "severity": "business_impacting",
		"contact":  map[string]any{"name": "Jane", "email": "noc@example.com", "phone": "+1 555 010 0200", "role": "network_admin"},
		"location": map[string]any{"site_id": "nyc-1", "address": "1 Main St", "timezone": "America/New_York"},
		"metadata": map[string]any{"affected_users": 40, "troubleshooting_attempted": []string{"reboot"}}}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	var tk ticketAnswer
	h.do("POST", "/v1/support/tickets", key, body).decode(201, &tk)
	return tk
}

// staffKey creates a provider agent user and an agent API key holding the support permissions.
func staffKey(t *testing.T, h *harness) (key, agentID string) {
	t.Helper()
	ctx := context.Background()
	prov, err := h.store.EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key = "sk_live_" + models.RandomString(56)
	if _, err := h.store.EnsureAPIKey(ctx, prov.ID, key, "agent", models.RoleAgent, []string{"support:read", "support:create", "support:write"}); err != nil {
		t.Fatal(err)
	}
	var user struct {
		User struct{ ID string } `json:"user"`
	}
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "agent-" + strings.ToLower(models.RandomString(6)) + "@provider.example",
		"name": "Alex Agent", "role": "agent", "organization_id": prov.ID}).decode(201, &user)
	return key, user.User.ID
}

func TestSupportCategories(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Categories []struct {
			ID  string `json:"id"`
			SLA struct {
				ResponseTime   string `json:"response_time"`
				ResolutionTime string `json:"resolution_time"`
			} `json:"sla"`
			Subcategories []struct{ ID string } `json:"subcategories"`
		} `json:"categories"`
	}
	h.do("GET", "/v1/support/categories", h.tenants[0].liveKey, nil).decode(200, &out)
	var ids []string
	for _, c := range out.Categories {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "network,voice,cloud,security,billing,ai,general" {
		t.Fatalf("categories %v", ids)
	}
	net := out.Categories[0]
	if net.SLA.ResponseTime != "1h" || net.SLA.ResolutionTime != "8h" || len(net.Subcategories) < 2 || net.Subcategories[0].ID != "connectivity" {
		t.Fatalf("network category %+v", net)
	}
}

func TestSupportTicketCreateAndGet(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tk := newTicket(t, h, a.liveKey, nil)
	if !strings.HasPrefix(tk.Ticket.ID, "tkt_") || !strings.HasPrefix(tk.Ticket.Number, "TKT-") || len(tk.Ticket.Number) != 10 {
		t.Fatalf("ids %+v", tk.Ticket)
	}
	if tk.Ticket.Status != "open" || tk.Ticket.CustomerID != a.org.CustomerID || tk.Ticket.AssignedTo != nil {
		t.Fatalf("ticket %+v", tk.Ticket)
	}
	if tk.Ticket.SLA.ResponseTime != "1h" || tk.Ticket.SLA.ResolutionTime != "8h" || tk.Ticket.SLA.ResponseDue == "" || tk.Ticket.SLA.ResolutionDue == "" {
		t.Fatalf("sla %+v", tk.Ticket.SLA)
	}
	if !strings.HasSuffix(tk.Ticket.URLs.Self, "/v1/support/tickets/"+tk.Ticket.ID) || tk.Ticket.URLs.CustomerPortal == "" {
		t.Fatalf("urls %+v", tk.Ticket.URLs)
	}
	second := newTicket(t, h, a.liveKey, map[string]any{"title": nil, "subject": "Overview-style subject", "priority": nil, "subcategory": nil, "category": "billing"})
	if second.Ticket.Title != "Overview-style subject" || second.Ticket.Priority != "low" || second.Ticket.Number <= tk.Ticket.Number {
		t.Fatalf("second ticket %+v", second.Ticket)
	}
	var got ticketAnswer
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, a.liveKey, nil).decode(200, &got)
	if got.Ticket.Number != tk.Ticket.Number {
		t.Fatalf("get %+v", got.Ticket)
	}
	// Tenancy: another tenant and A's own sandbox get 404.
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, a.testKey, nil).wantError(404, "NOT_FOUND")
	// A customer cannot open a ticket for another customer.
	res := h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": "x", "description": "y", "category": "general", "customer_id": h.tenants[1].org.CustomerID})
	wantFields(t, res, "customer_id")
	// ticket.created in the same transaction, with the support payload.
	evs, err := h.store.EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), tk.Ticket.ID)
	if err != nil || len(evs) != 1 || evs[0].Type != "ticket.created" {
		t.Fatalf("events %+v %v", evs, err)
	}
	data := evs[0].Data["ticket"].(map[string]any)
	for _, k := range []string{"id", "number", "title", "status", "priority", "escalation_level", "escalation_reason", "customer_id"} {
		if _, ok := data[k]; !ok {
			t.Fatalf("ticket.created data lacks %s: %v", k, data)
		}
	}
}

// wantFields checks a 400 VALIDATION_ERROR naming exactly the fields.
func wantFields(t *testing.T, res *response, fields ...string) {
	t.Helper()
	e := res.wantError(400, "VALIDATION_ERROR")
	got := map[string]bool{}
	for _, f := range e.Error.Details["fields"].([]any) {
		got[f.(map[string]any)["field"].(string)] = true
	}
	for _, f := range fields {
		if !got[f] {
			t.Fatalf("no issue for %s: %s", f, res.body)
		}
	}
	if len(got) != len(fields) {
		t.Fatalf("issues %v, want %v: %s", got, fields, res.body)
	}
}

func TestSupportTicketValidation(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	valid := map[string]any{"title": "t", "description": "d", "category": "network"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	many := map[string]any{}
	for i := 0; i < 51; i++ {
		many["k"+strings.Repeat("x", i)] = i
	}
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no title", with("title", nil), "title"},
		{"no description", with("description", nil), "description"},
		{"title too long", with("title", strings.Repeat("x", 201)), "title"},
		{"no category", with("category", nil), "category"},
		{"unknown category", with("category", "quantum"), "category"},
		{"subcategory of another category", with("subcategory", "call_quality"), "subcategory"},
		{"unknown priority", with("priority", "urgent"), "priority"},
		{"unknown severity", with("severity", "catastrophic"), "severity"},
		{"bad email", with("contact", map[string]any{"email": "not-an-email"}), "contact.email"},
		{"bad phone", with("contact", map[string]any{"phone": "call me"}), "contact.phone"},
		{"short phone", with("contact", map[string]any{"phone": "+1 23"}), "contact.phone"},
		{"bad timezone", with("location", map[string]any{"timezone": "Mars/Olympus_Mons"}), "location.timezone"},
		{"local timezone", with("location", map[string]any{"timezone": "Local"}), "location.timezone"},
		{"too many metadata keys", with("metadata", many), "metadata"},
		{"metadata too large", with("metadata", map[string]any{"notes": strings.Repeat("x", 9000)}), "metadata"},
		{"attachments", with("attachments", []map[string]any{{"filename": "a.txt", "content_type": "text/plain", "data": "aGk="}}), "attachments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantFields(t, h.do("POST", "/v1/support/tickets", key, tc.body), tc.field)
		})
	}
	h.do("POST", "/v1/support/tickets", key, with("colour", "red")).wantError(400, "VALIDATION_ERROR")
	staff, _ := staffKey(t, h)
	wantFields(t, h.do("POST", "/v1/support/tickets", staff, valid), "customer_id")
	wantFields(t, h.do("POST", "/v1/support/tickets", staff, with("customer_id", "cust_nobody")), "customer_id")
	var tk ticketAnswer
	h.do("POST", "/v1/support/tickets", staff, with("customer_id", h.tenants[1].org.CustomerID)).decode(201, &tk)
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, h.tenants[1].liveKey, nil).decode(200, nil)
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, h.tenants[0].liveKey, nil).wantError(404, "NOT_FOUND")
}
