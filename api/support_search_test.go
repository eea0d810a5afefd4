package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// searchAnswer is the part of a ticket search answer the tests read.
type searchAnswer struct {
	Tickets []struct {
		ID        string `json:"id"`
		Priority  string `json:"priority"`
		SLAStatus *struct {
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

func (a searchAnswer) ids() []string {
	out := []string{}
	for _, t := range a.Tickets {
		out = append(out, t.ID)
	}
	return out
}

func TestSupportTicketSearch(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, agentID := staffKey(t, h)
	t1 := newTicket(t, h, a.liveKey, map[string]any{"title": "Packet loss on the NYC circuit", "description": "Since 9:00, 5% loss.", "priority": "high"})
	t2 := newTicket(t, h, a.liveKey, map[string]any{"title": "Echo on calls", "description": "Callers hear an ECHO and some packet LOSS.",
		"category": "voice", "subcategory": "call_quality", "priority": "low"})
	t3 := newTicket(t, h, a.liveKey, map[string]any{"title": "100% CPU on the_router", "description": "Load is high.", "priority": "critical"})
	tb := newTicket(t, h, b.liveKey, map[string]any{"title": "Packet loss in Boston", "priority": "high"})
	h.do("PUT", "/v1/support/tickets/"+t2.Ticket.ID, staff, map[string]any{"assigned_to": agentID, "status": "in_progress"}).decode(200, nil)

	get := func(key, query string) searchAnswer {
		t.Helper()
		var out searchAnswer
		h.do("GET", "/v1/support/tickets/search?"+query, key, nil).decode(200, &out)
		for _, it := range out.Tickets {
			if it.SLAStatus == nil || it.SLAStatus.TimeRemaining == "" {
				t.Fatalf("search item without sla_status: %+v", it)
			}
		}
		return out
	}
	post := func(key string, body map[string]any) searchAnswer {
		t.Helper()
		var out searchAnswer
		h.do("POST", "/v1/support/tickets/search", key, body).decode(200, &out)
		return out
	}
	same := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}
	id1, id2, id3 := t1.Ticket.ID, t2.Ticket.ID, t3.Ticket.ID

	// Keyword search: every word, in any case, in title or description.
	same("q", get(a.liveKey, "q="+url.QueryEscape("packet LOSS")).ids(), id2, id1)
	same("q description", get(a.liveKey, "q=echo").ids(), id2)
	same("q no match", get(a.liveKey, "q="+url.QueryEscape("packet cpu")).ids())
	// LIKE wildcards are taken literally.
	same("q percent", get(a.liveKey, "q="+url.QueryEscape("100%")).ids(), id3)
	same("q underscore", get(a.liveKey, "q=the_router").ids(), id3)
	same("q lone percent", get(a.liveKey, "q="+url.QueryEscape("5%")).ids(), id1)
	same("q wildcard only", get(a.liveKey, "q="+url.QueryEscape("%_")).ids())

	// Filters combined.
	same("status+priority", get(a.liveKey, "status=open,in_progress&priority=high,critical").ids(), id3, id1)
	same("category+assigned", get(a.liveKey, "category=voice&assigned_to="+agentID).ids(), id2)
	same("created_after+q", get(a.liveKey, "created_after=2000-01-01T00:00:00Z&q=packet&priority=high").ids(), id1)
	same("future", get(a.liveKey, "created_after=2100-01-01T00:00:00Z").ids())

	// Sort: priority by rank, not alphabetically; default created_at desc.
	same("priority desc", get(a.liveKey, "sort=priority:desc").ids(), id3, id1, id2)
	same("priority asc", get(a.liveKey, "sort=priority:asc").ids(), id2, id1, id3)
	same("default", get(a.liveKey, "").ids(), id3, id2, id1)
	same("created asc", get(a.liveKey, "sort=created_at:asc").ids(), id1, id2, id3)
	same("status asc", get(a.liveKey, "sort=status:asc&priority=high,low").ids(), id1, id2)

	// Pagination.
	p := get(a.liveKey, "sort=created_at:asc&page=2&limit=2")
	same("page 2", p.ids(), id3)
	if p.Pagination.Total != 3 || p.Pagination.Page != 2 || p.Pagination.Limit != 2 || p.Pagination.Pages != 2 {
		t.Fatalf("pagination %+v", p.Pagination)
	}

	// The body form is the same search.
	same("post", post(a.liveKey, map[string]any{"filters": map[string]any{"status": []string{"open", "in_progress"}, "priority": []string{"high", "low"},
		"created_after": "2000-01-01T00:00:00Z"}, "query": "packet", "sort": map[string]any{"field": "priority", "order": "asc"},
		"pagination": map[string]any{"page": 1, "limit": 10}}).ids(), id2, id1)
	same("post empty", post(a.liveKey, map[string]any{}).ids(), id3, id2, id1)
	same("post category", post(a.liveKey, map[string]any{"filters": map[string]any{"category": "voice"}}).ids(), id2)

	// Tenancy: customers see their organization only; staff every one.
	same("B", get(b.liveKey, "q=packet").ids(), tb.Ticket.ID)
	same("B names A", get(b.liveKey, "customer_id="+a.org.CustomerID).ids())
	same("A sandbox", get(a.testKey, "q=packet").ids())
	same("B post", post(b.liveKey, map[string]any{"filters": map[string]any{"customer_id": a.org.CustomerID}}).ids())
	if got := get(staff, "q=packet").ids(); len(got) != 3 {
		t.Fatalf("staff search: %v", got)
	}
	same("staff customer", get(staff, "q=packet&customer_id="+b.org.CustomerID).ids(), tb.Ticket.ID)

	// Bad values: 400 with the fields named.
	wantFields(t, h.do("GET", "/v1/support/tickets/search?status=done&priority=urgent&created_after=yesterday", a.liveKey, nil), "status", "priority", "created_after")
	wantFields(t, h.do("GET", "/v1/support/tickets/search?sort=colour:up", a.liveKey, nil), "sort.field", "sort.order")
	wantFields(t, h.do("GET", "/v1/support/tickets/search?sort=:desc", a.liveKey, nil), "sort")
	wantFields(t, h.do("GET", "/v1/support/tickets/search?q="+url.QueryEscape(strings.Repeat("a ", 11)), a.liveKey, nil), "query")
	h.do("GET", "/v1/support/tickets/search?limit=500", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	wantFields(t, h.do("POST", "/v1/support/tickets/search", a.liveKey, map[string]any{"filters": map[string]any{"status": []string{"done"}},
		"sort": map[string]any{"field": "title", "order": "sideways"}}), "status", "sort.field", "sort.order")
	h.do("POST", "/v1/support/tickets/search", a.liveKey, map[string]any{"pagination": map[string]any{"limit": 0}}).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/support/tickets/search", a.liveKey, map[string]any{"colour": "red"}).wantError(400, "VALIDATION_ERROR")
	// Without a credential: 401.
	h.do("GET", "/v1/support/tickets/search", "", nil).wantError(401, "UNAUTHENTICATED")
}
