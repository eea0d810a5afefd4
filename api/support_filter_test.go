package api_test

import (
	"net/url"
	"slices"
	"testing"
)

// TestSupportTicketFilter: the ticket list's filter= expression selects
// tickets with the filter language (docs/filtering.md), together with
// the other list filters, and a malformed one is 400 VALIDATION_ERROR
// with the position of the fault.
func TestSupportTicketFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, agentID := staffKey(t, h)
	loss := newTicket(t, h, a.liveKey, nil) // network, high, subcategory connectivity
	echo := newTicket(t, h, a.liveKey, map[string]any{"title": "Echo on the SIP trunk", "category": "voice", "subcategory": "call_quality", "priority": "low"})
	bill := newTicket(t, h, a.liveKey, map[string]any{"title": "Invoice 50% too high", "category": "billing", "subcategory": nil, "priority": "medium"})
	newTicket(t, h, h.tenants[1].liveKey, nil) // another organization's: never listed
	h.do("PUT", "/v1/support/tickets/"+bill.Ticket.ID, staff, map[string]any{"assigned_to": agentID, "status": "in_progress"}).decode(200, nil)

	list := func(query string) []string {
		t.Helper()
		var l struct {
			Tickets []struct {
				ID string `json:"id"`
			} `json:"tickets"`
		}
		h.do("GET", "/v1/support/tickets?"+query, a.liveKey, nil).decode(200, &l)
		var out []string
		for _, it := range l.Tickets {
			out = append(out, it.ID)
		}
		slices.Sort(out)
		return out
	}
	want := func(ids ...string) []string { slices.Sort(ids); return ids }
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"filter=" + url.QueryEscape("priority >= high"), want(loss.Ticket.ID)},
		{"filter=" + url.QueryEscape("priority <= medium and status in (open, in_progress)"), want(echo.Ticket.ID, bill.Ticket.ID)},
		{"filter=" + url.QueryEscape(`not (category = "voice") and title ~ "LOSS"`), want(loss.Ticket.ID)},
		{"filter=" + url.QueryEscape(`title ~ "50%"`), want(bill.Ticket.ID)},
		{"filter=" + url.QueryEscape("assigned_to is null"), want(loss.Ticket.ID, echo.Ticket.ID)},
		{"filter=" + url.QueryEscape("assigned_to = "+agentID+" or subcategory = call_quality"), want(echo.Ticket.ID, bill.Ticket.ID)},
		{"filter=" + url.QueryEscape("subcategory is null"), want(bill.Ticket.ID)},
		{"filter=" + url.QueryEscape("created_at > 2000-01-01 and resolved_at is null and escalation_level = 0"), want(loss.Ticket.ID, echo.Ticket.ID, bill.Ticket.ID)},
		{"filter=" + url.QueryEscape("created_at < 2000-01-01T00:00:00Z"), nil},
		{"filter=" + url.QueryEscape("customer_id = "+a.org.CustomerID+" and status != in_progress"), want(loss.Ticket.ID, echo.Ticket.ID)},
		{"priority=low,medium&filter=" + url.QueryEscape("category != billing"), want(echo.Ticket.ID)},
		{"filter=", want(loss.Ticket.ID, echo.Ticket.ID, bill.Ticket.ID)},
	} {
		if got := list(c.query); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
	}

	for _, c := range []struct {
		expr string
		pos  float64
	}{
		{"priority >= hihg", 12},
		{"colour = red", 0},
		{"status = open and (title ~ fiber", 32},
		{"title ~ \"unterminated", 8},
		{"escalation_level ~ 1", 17},
	} {
		e := h.do("GET", "/v1/support/tickets?filter="+url.QueryEscape(c.expr), a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		if e.Error.Details["position"] != c.pos || e.Error.Details["field"] != "filter" {
			t.Errorf("%q: details %v, want position %v", c.expr, e.Error.Details, c.pos)
		}
	}
}
