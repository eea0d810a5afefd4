package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
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
	prov, err := identity.NewStore(h.store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key = "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(ctx, prov.ID, key, "agent", models.RoleAgent, []string{"support:read", "support:create", "support:write"}); err != nil {
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
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), tk.Ticket.ID)
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
		{"attachment type", with("attachments", []map[string]any{{"filename": "a.html", "content_type": "text/html", "data": "aGk="}}), "attachments[0].content_type"},
		{"attachment base64", with("attachments", []map[string]any{{"filename": "a.txt", "content_type": "text/plain", "data": "not base64!"}}), "attachments[0].data"},
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

func TestSupportTicketLifecycleAndHistory(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, agentID := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	// Customers cannot set staff fields nor move a ticket along the staff's side of the table.
	h.do("PUT", path, a.liveKey, map[string]any{"assigned_to": agentID}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("PUT", path, a.liveKey, map[string]any{"internal_notes": "x"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("PUT", path, a.liveKey, map[string]any{"status": "in_progress"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	// Validation of the update body.
	wantFields(t, h.do("PUT", path, staff, map[string]any{"status": "done", "priority": "urgent", "assigned_to": "usr_nobody", "estimated_resolution": "tomorrow"}),
		"status", "priority", "assigned_to", "estimated_resolution")
	var up ticketAnswer
	h.do("PUT", path, staff, map[string]any{"status": "in_progress", "assigned_to": agentID, "internal_notes": "router at site is flapping",
		"estimated_resolution": "2030-01-01T12:00:00Z", "metadata": map[string]any{"vendor_ticket": "V-1"}}).decode(200, &up)
	if up.Ticket.Status != "in_progress" || up.Ticket.AssignedTo["agent_id"] != agentID || up.Ticket.InternalNotes == "" {
		t.Fatalf("update %+v", up.Ticket)
	}
	var seen ticketAnswer
	h.do("GET", path, a.liveKey, nil).decode(200, &seen)
	if seen.Ticket.InternalNotes != "" || strings.Contains(string(h.do("GET", path, a.liveKey, nil).body), "flapping") {
		t.Fatal("a customer sees internal notes")
	}
	// Raising the priority to critical escalates (PATCH is the same handler).
	h.do("PATCH", path, a.liveKey, map[string]any{"priority": "critical"}).decode(200, &up)
	if !up.Ticket.SLA.Escalated || up.Ticket.SLA.EscalationLevel != 1 || !strings.Contains(up.Ticket.SLA.EscalationReason, "critical") || up.Ticket.Status != "in_progress" {
		t.Fatalf("escalation %+v", up.Ticket.SLA)
	}
	// Illegal move: in_progress -> open.
	e := h.do("PUT", path, staff, map[string]any{"status": "open"}).wantError(409, "INVALID_STATE_TRANSITION")
	if e.Error.Details["from"] != "in_progress" || e.Error.Details["to"] != "open" || e.Error.Details["allowed"] == nil {
		t.Fatalf("details %v", e.Error.Details)
	}
	h.do("PUT", path, staff, map[string]any{"status": "resolved", "customer_update": "Replaced the router.", "metadata": map[string]any{"root_cause": "faulty router"}}).decode(200, &up)
	if up.Ticket.Status != "resolved" {
		t.Fatalf("status %s", up.Ticket.Status)
	}
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), tk.Ticket.ID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	want := "ticket.created,ticket.updated,ticket.updated,ticket.escalated,comment.added,ticket.updated,ticket.resolved"
	if strings.Join(types, ",") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
	var hist struct {
		History []struct {
			Field    string                `json:"field"`
			OldValue string                `json:"old_value"`
			NewValue string                `json:"new_value"`
			Actor    struct{ Type string } `json:"actor"`
		} `json:"history"`
	}
	h.do("GET", path+"/history", staff, nil).decode(200, &hist)
	fields := map[string]bool{}
	for _, e := range hist.History {
		fields[e.Field] = true
	}
	for _, f := range []string{"status", "assigned_to", "internal_notes", "priority", "escalation_reason", "estimated_resolution", "vendor_ticket", "root_cause"} {
		if !fields[f] {
			t.Fatalf("history lacks %s: %+v", f, hist.History)
		}
	}
	h.do("GET", path+"/history", a.liveKey, nil).decode(200, &hist)
	for _, e := range hist.History {
		if e.Field == "internal_notes" {
			t.Fatal("a customer sees the internal notes' history")
		}
	}
	h.do("GET", path+"/history", h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	// Closed is terminal.
	h.do("PUT", path, a.liveKey, map[string]any{"status": "closed"}).decode(200, &up)
	h.do("PUT", path, staff, map[string]any{"status": "in_progress"}).wantError(409, "INVALID_STATE_TRANSITION")
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "hello?"}).wantError(409, "INVALID_STATE_TRANSITION")
}

func TestSupportTicketComments(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	var c struct {
		Comment struct {
			ID          string `json:"id"`
			TicketID    string `json:"ticket_id"`
			Visibility  string `json:"visibility"`
			Author      struct{ Type, ID string }
			Attachments []any `json:"attachments"`
		} `json:"comment"`
	}
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "Still down.", "type": "customer_update", "visibility": "customer",
		"author": map[string]any{"type": "agent", "id": "usr_fake", "name": "Not me"}}).decode(201, &c)
	if !strings.HasPrefix(c.Comment.ID, "cmt_") || c.Comment.Author.Type != "customer" || c.Comment.Author.ID == "usr_fake" || c.Comment.Attachments == nil {
		t.Fatalf("comment %+v", c.Comment)
	}
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "psst", "visibility": "internal"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	wantFields(t, h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "", "type": "shout", "visibility": "everyone"}), "content", "type", "visibility")
	h.do("POST", path+"/comments", staff, map[string]any{"content": "Suspect the CPE.", "visibility": "internal", "type": "internal_note"}).decode(201, &c)
	h.do("POST", path+"/comments", staff, map[string]any{"content": "Looking into it."}).decode(201, &c)
	var list struct {
		Comments []struct{ Content, Visibility string } `json:"comments"`
	}
	h.do("GET", path+"/comments", a.liveKey, nil).decode(200, &list)
	if len(list.Comments) != 2 || list.Comments[0].Content != "Still down." {
		t.Fatalf("customer sees %+v", list.Comments)
	}
	h.do("GET", path+"/comments", staff, nil).decode(200, &list)
	if len(list.Comments) != 3 {
		t.Fatalf("staff sees %+v", list.Comments)
	}
	h.do("GET", path+"/comments", h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("POST", path+"/comments", a.testKey, map[string]any{"content": "x"}).wantError(404, "NOT_FOUND")
	// A customer's comment reopens a resolved ticket.
	h.do("PUT", path, staff, map[string]any{"status": "resolved"}).decode(200, nil)
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "It is back."}).decode(201, nil)
	var got ticketAnswer
	h.do("GET", path, a.liveKey, nil).decode(200, &got)
	if got.Ticket.Status != "open" {
		t.Fatalf("status after a customer's comment on a resolved ticket: %s", got.Ticket.Status)
	}
	evs, err := eventlog.NewStore(h.store).EventsFor(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), tk.Ticket.ID)
	if err != nil {
		t.Fatal(err)
	}
	comments := 0
	for _, ev := range evs {
		if ev.Type == "comment.added" {
			comments++
			if ev.Data["comment"] == nil || ev.Data["ticket"] == nil {
				t.Fatalf("comment.added data %v", ev.Data)
			}
			if cm := ev.Data["comment"].(map[string]any); cm["visibility"] == "internal" && cm["content"] != nil {
				t.Fatal("comment.added carries an internal comment's content")
			}
		}
	}
	if comments != 4 {
		t.Fatalf("%d comment.added events, want 4", comments)
	}
}

func TestSupportTicketListAndFilters(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, agentID := staffKey(t, h)
	t1 := newTicket(t, h, a.liveKey, nil)
	t2 := newTicket(t, h, a.liveKey, map[string]any{"category": "voice", "subcategory": "call_quality", "priority": "low"})
	newTicket(t, h, b.liveKey, nil)
	sandbox := newTicket(t, h, a.testKey, nil)
	h.do("PUT", "/v1/support/tickets/"+t2.Ticket.ID, staff, map[string]any{"assigned_to": agentID, "status": "in_progress"}).decode(200, nil)
	type listAnswer struct {
		Tickets []struct {
			ID        string `json:"id"`
			SLAStatus *struct {
				ResponseMet   bool   `json:"response_met"`
				ResolutionDue string `json:"resolution_due"`
				TimeRemaining string `json:"time_remaining"`
			} `json:"sla_status"`
		} `json:"tickets"`
		Pagination struct {
			Total int64 `json:"total"`
			Page  int   `json:"page"`
			Limit int   `json:"limit"`
			Pages int   `json:"pages"`
		} `json:"pagination"`
	}
	ids := func(path, key string) []string {
		var l listAnswer
		h.do("GET", path, key, nil).decode(200, &l)
		var out []string
		for _, it := range l.Tickets {
			if it.SLAStatus == nil || it.SLAStatus.ResolutionDue == "" || it.SLAStatus.TimeRemaining == "" {
				t.Fatalf("list item without sla_status: %+v", it)
			}
			out = append(out, it.ID)
		}
		return out
	}
	if got := ids("/v1/support/tickets", a.liveKey); len(got) != 2 || got[0] != t2.Ticket.ID || got[1] != t1.Ticket.ID {
		t.Fatalf("A lists %v", got)
	}
	if got := ids("/v1/support/tickets", a.testKey); len(got) != 1 || got[0] != sandbox.Ticket.ID {
		t.Fatalf("A's sandbox lists %v", got)
	}
	if got := ids("/v1/support/tickets", staff); len(got) != 3 {
		t.Fatalf("staff lists %v", got)
	}
	if got := ids("/v1/support/tickets?customer_id="+a.org.CustomerID, staff); len(got) != 2 {
		t.Fatalf("staff filter by customer %v", got)
	}
	if got := ids("/v1/support/tickets?customer_id="+a.org.CustomerID, b.liveKey); len(got) != 0 {
		t.Fatalf("B sees A's tickets: %v", got)
	}
	for q, want := range map[string]string{
		"status=in_progress":     t2.Ticket.ID,
		"status=open,escalated":  t1.Ticket.ID,
		"priority=low":           t2.Ticket.ID,
		"priority=high,critical": t1.Ticket.ID,
		"category=voice":         t2.Ticket.ID,
		"assigned_to=" + agentID: t2.Ticket.ID,
	} {
		if got := ids("/v1/support/tickets?"+q, a.liveKey); len(got) != 1 || got[0] != want {
			t.Fatalf("%s: %v", q, got)
		}
	}
	if got := ids("/v1/support/tickets?created_after=2000-01-01T00:00:00Z", a.liveKey); len(got) != 2 {
		t.Fatalf("created_after: %v", got)
	}
	if got := ids("/v1/support/tickets?created_after=2100-01-01T00:00:00Z", a.liveKey); len(got) != 0 {
		t.Fatalf("created_after future: %v", got)
	}
	var l listAnswer
	h.do("GET", "/v1/support/tickets?limit=1&page=2", a.liveKey, nil).decode(200, &l)
	if l.Pagination.Total != 2 || l.Pagination.Page != 2 || l.Pagination.Limit != 1 || l.Pagination.Pages != 2 || len(l.Tickets) != 1 || l.Tickets[0].ID != t1.Ticket.ID {
		t.Fatalf("pagination %+v %+v", l.Pagination, l.Tickets)
	}
	wantFields(t, h.do("GET", "/v1/support/tickets?status=done&priority=urgent&created_after=yesterday", a.liveKey, nil), "status", "priority", "created_after")
	h.do("GET", "/v1/support/tickets?sort=colour:asc", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
}

// TestTicketPriorityChangeAnswersTheNewTargets: a PUT that changes the
// priority answers the new priority's targets and due times, and so does
// a GET right after it (the clocks are re-timed with the update, not only
// by the ticket's workflow a moment later).
func TestTicketPriorityChangeAnswersTheNewTargets(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tk := newTicket(t, h, a.liveKey, map[string]any{"priority": "low"})
	if tk.Ticket.SLA.ResponseTime != "8h" || tk.Ticket.SLA.ResolutionTime != "72h" {
		t.Fatalf("low ticket's targets: %+v", tk.Ticket.SLA)
	}
	var put, got ticketAnswer
	h.do("PUT", "/v1/support/tickets/"+tk.Ticket.ID, a.liveKey, map[string]any{"priority": "high"}).decode(200, &put)
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, a.liveKey, nil).decode(200, &got)
	for name, ans := range map[string]ticketAnswer{"PUT": put, "GET": got} {
		if s := ans.Ticket.SLA; ans.Ticket.Priority != "high" || s.ResponseTime != "1h" || s.ResolutionTime != "8h" || s.ResolutionDue == tk.Ticket.SLA.ResolutionDue {
			t.Fatalf("%s after the priority change: %s %+v (before %+v)", name, ans.Ticket.Priority, s, tk.Ticket.SLA)
		}
	}
}
