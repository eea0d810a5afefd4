package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// notificationsAnswer is a page of a ticket's notifications.
type notificationsAnswer struct {
	Notifications []struct {
		ID, Channel, Recipient, Template, Trigger, Status, Subject string
	} `json:"notifications"`
	Pagination struct{ Total int } `json:"pagination"`
}

// outboxBody returns the recipient and the body of the outbox message id.
func outboxBody(t *testing.T, h *harness, id string) (string, string) {
	t.Helper()
	var n eventlog.ContactNotification
	if err := h.store.In(context.Background(), models.SystemScope()).Where("id = ?", id).Take(&n).Error; err != nil {
		t.Fatalf("outbox row %s: %v", id, err)
	}
	_, body, err := eventlog.NewStore(h.store).NotificationText(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n.Recipient, body
}

// ticketNotifications lists a ticket's notifications as staff, keeping those of trigger ("" for all).
func ticketNotifications(t *testing.T, h *harness, staff, ticketID, trigger string) notificationsAnswer {
	t.Helper()
	var all, out notificationsAnswer
	h.do("GET", "/v1/support/tickets/"+ticketID+"/notifications?limit=200", staff, nil).decode(200, &all)
	out.Pagination = all.Pagination
	for _, n := range all.Notifications {
		if trigger == "" || n.Trigger == trigger {
			out.Notifications = append(out.Notifications, n)
		}
	}
	return out
}

func TestSupportNotifySendsEmailAndSMS(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "Still <down> here."}).decode(201, nil)
	h.do("POST", path+"/comments", staff, map[string]any{"content": "secret internal note", "visibility": "internal", "type": "internal_note"}).decode(201, nil)
	var res struct {
		MessageIDs    []string `json:"message_ids"`
		Notifications []struct{ ID, Status, Trigger, Template string }
	}
	h.do("POST", path+"/notify", staff, map[string]any{"type": "email", "template": "ticket_update", "include_comments": true, "comment_filter": "customer_visible",
		"recipients": []map[string]any{{"email": "ops@example.com", "name": "Ops <Team>", "role": "noc"}, {"email": "cto@example.com"}},
		"variables":  map[string]any{"message": "Crew on site", "eta": "<b>2h</b>"}}).decode(202, &res)
	if len(res.MessageIDs) != 2 || !strings.HasPrefix(res.MessageIDs[0], "ntf_") || res.Notifications[0].Status != "queued" || res.Notifications[0].Trigger != "manual" {
		t.Fatalf("answer %+v", res)
	}
	to, body := outboxBody(t, h, res.MessageIDs[0])
	if to != "ops@example.com" {
		t.Fatalf("recipient %s", to)
	}
	for _, want := range []string{tk.Ticket.Number, "Crew on site", "eta: &lt;b&gt;2h&lt;/b&gt;", "Dear Ops &lt;Team&gt;", "Still &lt;down&gt; here."} {
		if !strings.Contains(body, want) {
			t.Fatalf("body lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, "<b>2h") || strings.Contains(body, "secret internal note") {
		t.Fatalf("unescaped variable or internal comment: %s", body)
	}
	// SMS goes to E.164 numbers with the message as is.
	h.do("POST", path+"/notify", staff, map[string]any{"type": "sms", "recipients": []map[string]any{{"phone": "+15550100200", "name": "Jane"}},
		"message": "TKT update: crew on site"}).decode(202, &res)
	if to, body := outboxBody(t, h, res.MessageIDs[0]); to != "+15550100200" || body != "TKT update: crew on site" {
		t.Fatalf("sms %s %q", to, body)
	}
	// The list shows every message of the ticket, with the outbox status.
	if err := eventlog.NewStore(h.store).MarkNotificationSent(context.Background(), res.MessageIDs[0]); err != nil {
		t.Fatal(err)
	}
	list := ticketNotifications(t, h, staff, tk.Ticket.ID, "")
	if list.Pagination.Total != 4 || len(list.Notifications) != 4 { // ticket_created + 2 e-mails + 1 SMS
		t.Fatalf("list %+v", list)
	}
	if n := list.Notifications[3]; n.ID != res.MessageIDs[0] || n.Channel != "sms" || n.Status != "sent" {
		t.Fatalf("sms entry %+v", n)
	}
	if n := list.Notifications[1]; n.Template != "ticket_update" || n.Status != "queued" || !strings.Contains(n.Subject, tk.Ticket.Number) {
		t.Fatalf("e-mail entry %+v", n)
	}
}

func TestSupportNotifyValidation(t *testing.T) {
	h := newHarness(t)
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, h.tenants[0].liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID + "/notify"
	one := []map[string]any{{"email": "a@example.com"}}
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "fax", "recipients": one}), "type")
	// The template's enum is the schema's, the address the domain's: one
	// request each.
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": one, "template": "shout"}), "template")
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": []map[string]any{{"email": "nope"}, {"email": "Jane <jane@example.com>"}}}),
		"recipients[0].email", "recipients[1].email")
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": []map[string]any{}}), "recipients")
	many := make([]map[string]any, 21)
	for i := range many {
		many[i] = map[string]any{"email": "a@example.com"}
	}
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": many}), "recipients")
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": one, "template": "custom"}), "subject", "variables.message")
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "email", "recipients": one, "comment_filter": "all"}), "comment_filter")
	wantFields(t, h.do("POST", path, staff, map[string]any{"type": "sms", "recipients": []map[string]any{{"phone": "555 0100"}}}), "recipients[0].phone", "message")
	// Nothing was queued by the refused requests: only the creation message.
	if list := ticketNotifications(t, h, staff, tk.Ticket.ID, ""); list.Pagination.Total != 1 {
		t.Fatalf("list %+v", list)
	}
	// custom with a subject and a message is accepted.
	h.do("POST", path, staff, map[string]any{"type": "email", "recipients": one, "template": "custom", "subject": "Planned work",
		"variables": map[string]any{"message": "Tonight 02:00"}}).decode(202, nil)
}

func TestSupportNotifyPermissionsAndTenancy(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	body := map[string]any{"type": "sms", "recipients": []map[string]any{{"phone": "+15550100200"}}, "message": "hi"}
	for _, key := range []string{a.liveKey, b.liveKey, a.testKey} {
		h.do("POST", path+"/notify", key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", path+"/notifications", key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	h.do("POST", "/v1/support/tickets/tkt_missing/notify", staff, body).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/support/tickets/tkt_missing/notifications", staff, nil).wantError(404, "NOT_FOUND")
	// Provider staff in the sandbox do not see live tickets.
	prov, err := identity.NewStore(h.store).EnsureProviderOrganization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sandbox := "sk_test_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(context.Background(), prov.ID, sandbox, "agent sandbox", models.RoleAgent, []string{"support:read", "support:write"}); err != nil {
		t.Fatal(err)
	}
	h.do("POST", path+"/notify", sandbox, body).wantError(404, "NOT_FOUND")
	h.do("GET", path+"/notifications", sandbox, nil).wantError(404, "NOT_FOUND")
}

func TestSupportAutomaticNotifications(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID
	created := ticketNotifications(t, h, staff, tk.Ticket.ID, "ticket_created")
	if len(created.Notifications) != 1 || created.Notifications[0].Recipient != "noc@example.com" || created.Notifications[0].Template != "ticket_created" {
		t.Fatalf("creation %+v", created)
	}
	if _, body := outboxBody(t, h, created.Notifications[0].ID); !strings.Contains(body, tk.Ticket.Number) || !strings.Contains(body, "Dear Jane") {
		t.Fatalf("creation body %s", body)
	}
	// Customer comments and internal comments send nothing; a staff customer-visible one does.
	h.do("POST", path+"/comments", a.liveKey, map[string]any{"content": "Any news?"}).decode(201, nil)
	h.do("POST", path+"/comments", staff, map[string]any{"content": "internal only", "visibility": "internal"}).decode(201, nil)
	if n := ticketNotifications(t, h, staff, tk.Ticket.ID, "comment_added"); len(n.Notifications) != 0 {
		t.Fatalf("comment messages %+v", n)
	}
	h.do("POST", path+"/comments", staff, map[string]any{"content": "Replacing the <card> now."}).decode(201, nil)
	comments := ticketNotifications(t, h, staff, tk.Ticket.ID, "comment_added")
	if len(comments.Notifications) != 1 {
		t.Fatalf("comment messages %+v", comments)
	}
	if _, body := outboxBody(t, h, comments.Notifications[0].ID); !strings.Contains(body, "Replacing the &lt;card&gt; now.") {
		t.Fatalf("comment body %s", body)
	}
	// A staff customer_update through PUT is an update too.
	h.do("PUT", path, staff, map[string]any{"customer_update": "Crew dispatched."}).decode(200, nil)
	if n := ticketNotifications(t, h, staff, tk.Ticket.ID, "comment_added"); len(n.Notifications) != 2 {
		t.Fatalf("customer_update messages %+v", n)
	}
	// Resolution: one message, carrying the customer_update of the same request.
	h.do("PUT", path, staff, map[string]any{"status": "resolved", "customer_update": "Card replaced.", "metadata": map[string]any{"root_cause": "faulty line card"}}).decode(200, nil)
	if n := ticketNotifications(t, h, staff, tk.Ticket.ID, "comment_added"); len(n.Notifications) != 2 {
		t.Fatalf("a resolution also sent an update %+v", n)
	}
	resolved := ticketNotifications(t, h, staff, tk.Ticket.ID, "ticket_resolved")
	if len(resolved.Notifications) != 1 || resolved.Notifications[0].Template != "ticket_resolved" {
		t.Fatalf("resolution %+v", resolved)
	}
	if _, body := outboxBody(t, h, resolved.Notifications[0].ID); !strings.Contains(body, "is resolved") || !strings.Contains(body, "faulty line card") || !strings.Contains(body, "Card replaced.") {
		t.Fatalf("resolution body %s", body)
	}
	// Without a contact e-mail nothing is sent.
	quiet := newTicket(t, h, a.liveKey, map[string]any{"contact": map[string]any{"name": "Jane", "phone": "+1 555 010 0200"}})
	if n := ticketNotifications(t, h, staff, quiet.Ticket.ID, ""); n.Pagination.Total != 0 {
		t.Fatalf("messages without a contact e-mail %+v", n)
	}
}
