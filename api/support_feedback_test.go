package api_test

import (
	"strings"
	"testing"
)

// feedbackAnswer is a feedback answer.
type feedbackAnswer struct {
	Feedback *struct {
		ID         string `json:"id"`
		TicketID   string `json:"ticket_id"`
		CustomerID string `json:"customer_id"`
		Rating     int    `json:"rating"`
		Comment    string `json:"comment"`
	} `json:"feedback"`
}

func TestSupportFeedback(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	id := tk.Ticket.ID
	rate := map[string]any{"ticket_id": id, "rating": 5, "comment": "Fixed within the hour."}

	// Validation comes first, every field at once.
	wantFields(t, h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": " ", "rating": 0}), "ticket_id", "rating")
	wantFields(t, h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": id, "rating": 6}), "rating")
	h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": id, "rating": 3, "comment": strings.Repeat("x", 2001)}).wantError(400, "VALIDATION_ERROR")

	// Not before the ticket is resolved.
	h.do("POST", "/v1/support/feedback", a.liveKey, rate).wantError(409, "INVALID_STATE_TRANSITION")
	var got feedbackAnswer
	h.do("GET", "/v1/support/tickets/"+id+"/feedback", a.liveKey, nil).decode(200, &got)
	if got.Feedback != nil {
		t.Fatalf("feedback before any: %+v", got.Feedback)
	}
	h.do("PUT", "/v1/support/tickets/"+id, staff, map[string]any{"status": "resolved"}).decode(200, nil)

	// Another tenant and the own sandbox do not see the ticket; staff do not rate.
	for _, key := range []string{b.liveKey, a.testKey} {
		h.do("POST", "/v1/support/feedback", key, rate).wantError(404, "NOT_FOUND")
		h.do("GET", "/v1/support/tickets/"+id+"/feedback", key, nil).wantError(404, "NOT_FOUND")
	}
	h.do("POST", "/v1/support/feedback", staff, rate).wantError(403, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": "tkt_nothing", "rating": 4}).wantError(404, "NOT_FOUND")

	// Once per ticket.
	var made feedbackAnswer
	h.do("POST", "/v1/support/feedback", a.liveKey, rate).decode(201, &made)
	if made.Feedback == nil || made.Feedback.Rating != 5 || made.Feedback.TicketID != id || made.Feedback.CustomerID != tk.Ticket.CustomerID ||
		made.Feedback.Comment != "Fixed within the hour." || !strings.HasPrefix(made.Feedback.ID, "fdbk_") {
		t.Fatalf("feedback: %+v", made.Feedback)
	}
	h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": id, "rating": 1}).wantError(409, "ALREADY_EXISTS")

	// The customer and staff read it; other tenants still do not.
	for _, key := range []string{a.liveKey, staff} {
		h.do("GET", "/v1/support/tickets/"+id+"/feedback", key, nil).decode(200, &got)
		if got.Feedback == nil || got.Feedback.ID != made.Feedback.ID || got.Feedback.Rating != 5 {
			t.Fatalf("read back: %+v", got.Feedback)
		}
	}
	h.do("GET", "/v1/support/tickets/"+id+"/feedback", b.liveKey, nil).wantError(404, "NOT_FOUND")

	// A closed ticket takes feedback too.
	tk2 := newTicket(t, h, a.liveKey, nil)
	h.do("PUT", "/v1/support/tickets/"+tk2.Ticket.ID, staff, map[string]any{"status": "closed"}).decode(200, nil)
	h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": tk2.Ticket.ID, "rating": 2}).decode(201, nil)
}
