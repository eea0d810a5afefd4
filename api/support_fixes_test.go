package api_test

import (
	"slices"
	"strings"
	"testing"
)

// ticketEvents are the events of one type a key may read.
type ticketEvents struct {
	Events []struct {
		Type       string         `json:"type"`
		ResourceID string         `json:"resource_id"`
		Data       map[string]any `json:"data"`
	} `json:"events"`
}

// updatedChanges lists data.changes of every ticket.updated of ticketID the
// key reads, oldest first.
func updatedChanges(t *testing.T, h *harness, key, ticketID string) [][]string {
	t.Helper()
	var evs ticketEvents
	h.do("GET", "/v1/events?type=ticket.updated&resource_id="+ticketID+"&limit=200", key, nil).decode(200, &evs)
	var out [][]string
	for _, e := range evs.Events {
		var ch []string
		for _, c := range e.Data["changes"].([]any) {
			ch = append(ch, c.(string))
		}
		out = append(out, ch)
	}
	return out
}

// issueOf returns the issue answered for field in a 400 VALIDATION_ERROR.
func issueOf(t *testing.T, e errorBody, field string) string {
	t.Helper()
	fields, _ := e.Error.Details["fields"].([]any)
	for _, f := range fields {
		if m := f.(map[string]any); m["field"] == field {
			return m["issue"].(string)
		}
	}
	t.Fatalf("no issue for %s: %+v", field, e.Error)
	return ""
}

// TestSupportUpdateEventHidesInternalNotes: a staff update's ticket.updated
// never names internal_notes, and an update that only changes the internal
// notes writes no ticket.updated at all.
func TestSupportUpdateEventHidesInternalNotes(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	h.do("PUT", path, staff, map[string]any{"internal_notes": "customer is difficult", "estimated_resolution": "2030-01-01T12:00:00Z"}).decode(200, nil)
	got := updatedChanges(t, h, a.liveKey, tk.Ticket.ID)
	if len(got) != 1 || strings.Join(got[0], ",") != "estimated_resolution" {
		t.Fatalf("ticket.updated changes %v, want [[estimated_resolution]]", got)
	}
	var up ticketAnswer
	h.do("PUT", path, staff, map[string]any{"internal_notes": "still difficult"}).decode(200, &up)
	if up.Ticket.InternalNotes != "still difficult" {
		t.Fatalf("internal notes %q", up.Ticket.InternalNotes)
	}
	if got := updatedChanges(t, h, a.liveKey, tk.Ticket.ID); len(got) != 1 {
		t.Fatalf("an internal-only update wrote ticket.updated: %v", got)
	}
	var hist struct {
		History []struct{ Field string } `json:"history"`
	}
	h.do("GET", path+"/history", staff, nil).decode(200, &hist)
	n := 0
	for _, e := range hist.History {
		if e.Field == "internal_notes" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("staff see %d internal_notes history entries, want 2: %+v", n, hist.History)
	}
}

// TestSupportCustomerReopenClosedIsInvalidTransition: closed is final for
// everyone: 409 INVALID_STATE_TRANSITION with allowed [].
func TestSupportCustomerReopenClosedIsInvalidTransition(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	h.do("PUT", path, a.liveKey, map[string]any{"status": "closed"}).decode(200, nil)
	e := h.do("PUT", path, a.liveKey, map[string]any{"status": "open"}).wantError(409, "INVALID_STATE_TRANSITION")
	allowed, ok := e.Error.Details["allowed"].([]any)
	if e.Error.Details["from"] != "closed" || e.Error.Details["to"] != "open" || !ok || len(allowed) != 0 {
		t.Fatalf("details %v", e.Error.Details)
	}
	// A move in the table that is staff's stays 403 for a customer.
	open := newTicket(t, h, a.liveKey, nil)
	h.do("PUT", "/v1/support/tickets/"+open.Ticket.ID, a.liveKey, map[string]any{"status": "in_progress"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
}

// TestSupportListUnknownCategory: the list and the search refuse a
// category that is not one of the categories.
func TestSupportListUnknownCategory(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	newTicket(t, h, a.liveKey, nil)
	e := h.do("GET", "/v1/support/tickets?category=nope", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	if !strings.Contains(issueOf(t, e, "category"), "network") {
		t.Fatalf("issue %+v", e.Error.Details)
	}
	wantFields(t, h.do("GET", "/v1/support/tickets/search?category=nope", a.liveKey, nil), "category")
	wantFields(t, h.do("POST", "/v1/support/tickets/search", a.liveKey, map[string]any{"filters": map[string]any{"category": "nope"}}), "category")
	var list struct {
		Tickets []struct{ ID string } `json:"tickets"`
	}
	h.do("GET", "/v1/support/tickets?category=network", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 1 {
		t.Fatalf("network tickets %+v", list)
	}
	h.do("GET", "/v1/support/tickets?category=voice", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 0 {
		t.Fatalf("voice tickets %+v", list)
	}
}

// TestSupportTrackerWithoutSyncSettings: sync_settings is optional; absent,
// every setting takes its default.
func TestSupportTrackerWithoutSyncSettings(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	body := trackerBody()
	delete(body, "sync_settings")
	var created trackerAnswer
	h.do("POST", trackerPath, a.liveKey, body).decode(201, &created)
	c := created.Integration
	if c.SyncSettings.CreateTrackerIssues || c.SyncSettings.SyncComments || c.SyncSettings.PriorityMapping["critical"] != "Highest" ||
		c.SyncSettings.PriorityMapping["low"] != "Low" {
		t.Fatalf("created %+v", c)
	}
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	h.do("GET", "/openapi.json", "", nil).decode(200, &spec)
	s, ok := spec.Components.Schemas["TrackerIntegrationBody"]
	if !ok {
		t.Fatal("no TrackerIntegrationBody schema")
	}
	if slices.Contains(s.Required, "sync_settings") || !slices.Contains(s.Required, "tracker_url") {
		t.Fatalf("required %v", s.Required)
	}
}

// TestSupportEmailIssuesAreTheDomains: a bad e-mail address is answered in
// the domain's words, never net/mail's.
func TestSupportEmailIssuesAreTheDomains(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	check := func(e errorBody, field string) {
		t.Helper()
		issue := issueOf(t, e, field)
		if !strings.HasPrefix(issue, "must be an e-mail address such as ") || strings.Contains(issue, "mail:") || strings.Contains(issue, "RFC 5322") {
			t.Fatalf("%s: issue %q", field, issue)
		}
	}
	check(h.do("POST", "/v1/support/tickets/"+tk.Ticket.ID+"/notify", staff, map[string]any{"type": "email", "recipients": []any{map[string]any{"email": "x"}}}).
		wantError(400, "VALIDATION_ERROR"), "recipients[0].email")
	check(h.do("POST", "/v1/support/reports/generate", a.liveKey, map[string]any{"report_type": "ticket_export",
		"delivery": map[string]any{"method": "email", "notification_email": "x"}}).wantError(400, "VALIDATION_ERROR"), "delivery.notification_email")
	check(h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": "t", "description": "d", "category": "network",
		"contact": map[string]any{"email": "x"}}).wantError(400, "VALIDATION_ERROR"), "contact.email")
}

// TestSupportUpdateMetadataShownUnderMetadata: root_cause and vendor_ticket
// sent in metadata are answered under metadata (and, as before, at the top).
func TestSupportUpdateMetadataShownUnderMetadata(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	h.do("PUT", path, staff, map[string]any{"status": "resolved", "metadata": map[string]any{"root_cause": "fiber cut", "vendor_ticket": "V-9"}}).decode(200, nil)
	var got struct {
		Ticket struct {
			Metadata     map[string]any `json:"metadata"`
			RootCause    string         `json:"root_cause"`
			VendorTicket string         `json:"vendor_ticket"`
		} `json:"ticket"`
	}
	for _, key := range []string{a.liveKey, staff} {
		h.do("GET", path, key, nil).decode(200, &got)
		m := got.Ticket.Metadata
		if m["root_cause"] != "fiber cut" || m["vendor_ticket"] != "V-9" || m["affected_users"] == nil || got.Ticket.RootCause != "fiber cut" || got.Ticket.VendorTicket != "V-9" {
			t.Fatalf("ticket %+v", got.Ticket)
		}
	}
	var list struct {
		Tickets []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"tickets"`
	}
	h.do("GET", "/v1/support/tickets", a.liveKey, nil).decode(200, &list)
	if len(list.Tickets) != 1 || list.Tickets[0].Metadata["root_cause"] != "fiber cut" {
		t.Fatalf("list %+v", list)
	}
}

// TestSupportUpdateRefusesLowerEscalationLevel: metadata.escalation_level
// may only rise (as the escalate endpoint's level); the same level changes
// nothing.
func TestSupportUpdateRefusesLowerEscalationLevel(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	var up ticketAnswer
	h.do("PUT", path, staff, map[string]any{"metadata": map[string]any{"escalation_level": 2}}).decode(200, &up)
	if up.Ticket.SLA.EscalationLevel != 2 || up.Ticket.SLA.EscalationReason != "escalation level raised to 2" {
		t.Fatalf("sla %+v", up.Ticket.SLA)
	}
	e := h.do("PUT", path, staff, map[string]any{"metadata": map[string]any{"escalation_level": 1}}).wantError(400, "VALIDATION_ERROR")
	if issue := issueOf(t, e, "metadata.escalation_level"); !strings.Contains(issue, "2") {
		t.Fatalf("issue %q", issue)
	}
	h.do("PUT", path, staff, map[string]any{"metadata": map[string]any{"escalation_level": 2}}).decode(200, &up)
	h.do("GET", path, staff, nil).decode(200, &up)
	if up.Ticket.SLA.EscalationLevel != 2 || up.Ticket.SLA.EscalationReason != "escalation level raised to 2" {
		t.Fatalf("sla %+v", up.Ticket.SLA)
	}
}
