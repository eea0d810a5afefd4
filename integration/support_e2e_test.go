package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/notify"
	"github.com/telcoplatform/platform/testenv"
)

// supportTicket is what the tests read of a ticket answer.
type supportTicket struct {
	ID         string `json:"id"`
	Number     string `json:"number"`
	Status     string `json:"status"`
	Priority   string `json:"priority"`
	Category   string `json:"category"`
	CustomerID string `json:"customer_id"`
	AssignedTo *struct {
		AgentID        string `json:"agent_id"`
		Email          string `json:"email"`
		Specialization string `json:"specialization"`
	} `json:"assigned_to"`
	Attachments []struct {
		ID          string `json:"id"`
		Filename    string `json:"filename"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
		DownloadURL string `json:"download_url"`
	} `json:"attachments"`
}

// download GETs url with key and returns the status, the Content-Type and the body.
func (p *platform) download(url, key string) (int, string, []byte) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := p.http.Do(req)
	if err != nil {
		p.t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), body
}

// ticketDeliveries returns the accepted deliveries of an event type about
// the ticket id, checking that each names the same event in its body as in
// its webhook-id header.
func (r *hookReceiver) ticketDeliveries(t testing.TB, event, id string) []delivery {
	t.Helper()
	var out []delivery
	for _, d := range r.received(event) {
		data, _ := d.Payload["data"].(map[string]any)
		tk, _ := data["ticket"].(map[string]any)
		if d.Payload["id"] != d.ID {
			t.Fatalf("%s delivery %s: body %v", event, d.ID, d.Payload)
		}
		if tk["id"] == id {
			out = append(out, d)
		}
	}
	return out
}

// TestSupportTicketEndToEnd follows one support ticket through the HTTP API
// with real peers: a customer subscribes two filtered webhook endpoints,
// opens a critical network ticket with an attachment, which routing assigns
// to the network team's least-loaded agent; the attachment downloads back
// identical; staff comment, notify the contact by e-mail (received by a real
// SMTP server) and resolve the ticket; the endpoint filtered to this
// customer and to critical receives every event of the ticket, signed, and
// the endpoint filtered to low tickets receives nothing (a filter naming
// another customer is refused).
func TestSupportTicketEndToEnd(t *testing.T) {
	smtpURL, mailbox := testenv.SMTPServer(t)
	p := startPlatform(t, platformOptions{queuePrefix: "support-e2e", webhookTimeout: testAttemptTimeout, keys: demoLiveKey})
	mailer, err := notify.NewSMTP(smtpURL, "Telco Platform <no-reply@example.test>")
	if err != nil {
		t.Fatal(err)
	}
	startNotifier(t, notify.NewDispatcher(p.store, notify.Options{Email: mailer, PollInterval: 100 * time.Millisecond}))

	ctx := context.Background()
	// As `platform seed` does: the support teams and their demo agents.
	agents, err := support.NewStore(p.store).SeedAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	networkAgents := map[string]bool{}
	for _, a := range agents {
		if strings.HasPrefix(a.Email, "network.") {
			networkAgents[a.ID] = true
		}
	}
	if len(networkAgents) < 2 {
		t.Fatalf("seeded agents %+v: want two of the network team", agents)
	}
	staff := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(p.store).EnsureAPIKey(ctx, p.demo.Provider.ID, staff, "staff", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	other, err := identity.NewStore(p.store).CreateOrganization(ctx, p.admin, identity.OrganizationInput{Name: "Another customer", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	customerID := p.demo.Demo.CustomerID

	// 1. Two subscriptions of the customer: one to its own critical tickets,
	// one to its low ones; a filter naming another customer is refused.
	mine := newHookReceiver(t, alwaysOK, hookSecret1)
	theirs := newHookReceiver(t, alwaysOK, hookSecret2)
	subMine := p.subscribe("/v1/support/webhooks", p.liveKey, map[string]any{"url": mine.srv.URL + "/support", "events": []string{"ticket.*", "comment.*"},
		"secret": hookSecret1, "filters": map[string]any{"priorities": []string{"critical"}, "customer_ids": []string{customerID}}})
	if st := p.do("POST", "/v1/support/webhooks", p.liveKey, map[string]any{"url": theirs.srv.URL + "/support", "events": []string{"ticket.*"},
		"secret": hookSecret2, "filters": map[string]any{"customer_ids": []string{other.CustomerID}}}, nil); st != http.StatusBadRequest {
		t.Fatalf("a filter naming another customer: %d", st)
	}
	subTheirs := p.subscribe("/v1/support/webhooks", p.liveKey, map[string]any{"url": theirs.srv.URL + "/support", "events": []string{"ticket.*", "comment.*"},
		"secret": hookSecret2, "filters": map[string]any{"customer_ids": []string{customerID}, "priorities": []string{"low"}}})

	// 2. The customer opens a critical network ticket with an attachment.
	const contact = "noc@demo.example"
	trace := []byte("traceroute to 203.0.113.9\n 1  10.0.0.1  0.4 ms\n 2  * * *\n")
	var created struct {
		Ticket supportTicket `json:"ticket"`
	}
	if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{
		"title": "Fiber link down", "description": "No light on the Austin circuit since 09:00",
		"category": "network", "subcategory": "connectivity", "priority": "critical", "severity": "outage",
		"contact":     map[string]any{"name": "Jane", "email": contact},
		"attachments": []map[string]any{{"filename": "traceroute.txt", "content_type": "text/plain", "size": len(trace), "data": base64.StdEncoding.EncodeToString(trace)}},
	}, &created); st != http.StatusCreated {
		t.Fatalf("create the ticket: %d", st)
	}
	tk := created.Ticket
	if tk.ID == "" || !strings.HasPrefix(tk.Number, "TKT-") || tk.Priority != "critical" || tk.Category != "network" || tk.CustomerID != customerID || tk.Status != "open" {
		t.Fatalf("ticket %+v", tk)
	}
	// Routing: no rule, so the least-loaded member of team_network; both
	// have no ticket, and the tie goes to the one who joined first.
	if tk.AssignedTo == nil || !networkAgents[tk.AssignedTo.AgentID] || tk.AssignedTo.Specialization != "network" {
		t.Fatalf("the ticket is not assigned to a network agent: %+v", tk.AssignedTo)
	}
	first := tk.AssignedTo.AgentID
	if len(tk.Attachments) != 1 || tk.Attachments[0].Size != len(trace) || tk.Attachments[0].Filename != "traceroute.txt" {
		t.Fatalf("attachments %+v", tk.Attachments)
	}
	att := tk.Attachments[0]
	if !strings.HasSuffix(att.DownloadURL, "/v1/attachments/"+att.ID) {
		t.Fatalf("download_url %q", att.DownloadURL)
	}
	st, ctype, body := p.download(p.base+"/v1/attachments/"+att.ID, p.liveKey)
	if st != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") || !bytes.Equal(body, trace) {
		t.Fatalf("download: %d %q %q", st, ctype, body)
	}

	// The next network ticket goes to the other agent, now the least loaded
	// (high priority: the first subscription's filter leaves it out).
	var second struct {
		Ticket supportTicket `json:"ticket"`
	}
	if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": "Slow DNS", "description": "Lookups take 2 s", "category": "network", "priority": "high"}, &second); st != http.StatusCreated {
		t.Fatalf("create the second ticket: %d", st)
	}
	if a := second.Ticket.AssignedTo; a == nil || !networkAgents[a.AgentID] || a.AgentID == first {
		t.Fatalf("the second ticket went to %+v, want the other network agent than %s", a, first)
	}

	// 3. Staff add a customer-visible comment and notify the contact by e-mail.
	path := "/v1/support/tickets/" + tk.ID
	if st := p.do("POST", path+"/comments", staff, map[string]any{"content": "A crew is on its way to the cabinet."}, nil); st != http.StatusCreated {
		t.Fatalf("comment: %d", st)
	}
	const subject = "Crew dispatched to your site"
	var queued struct {
		MessageIDs []string `json:"message_ids"`
	}
	if st := p.do("POST", path+"/notify", staff, map[string]any{"type": "email", "template": "ticket_update", "subject": subject,
		"recipients": []map[string]any{{"email": contact, "name": "Jane", "role": "customer"}},
		"variables":  map[string]any{"message": "A crew is on site.", "eta": "2h"}, "include_comments": true, "comment_filter": "customer_visible"}, &queued); st != http.StatusAccepted || len(queued.MessageIDs) != 1 {
		t.Fatalf("notify: %d %+v", st, queued)
	}
	// The contact gets the automatic messages (opened, staff comment) and the manual one.
	mailTo := func(b *testenv.Mailbox, subj string) bool {
		for _, m := range b.Mails() {
			if slices.Contains(m.To, contact) && strings.Contains(m.Data, "Subject: "+subj) {
				return true
			}
		}
		return false
	}
	wantMails := []string{subject, "[" + tk.Number + "] We received your request", "[" + tk.Number + "] Update on your ticket"}
	if !mailbox.WaitFor(60*time.Second, func(b *testenv.Mailbox) bool {
		for _, s := range wantMails {
			if !mailTo(b, s) {
				return false
			}
		}
		return true
	}) {
		var got []string
		for _, m := range mailbox.Mails() {
			got = append(got, strings.Join(m.To, ",")+": "+m.Data[:min(len(m.Data), 400)])
		}
		t.Fatalf("the SMTP server did not receive %q; it received:\n%s", wantMails, strings.Join(got, "\n---\n"))
	}

	// 4. Staff resolve the ticket.
	var resolved struct {
		Ticket supportTicket `json:"ticket"`
	}
	if st := p.do("PUT", path, staff, map[string]any{"status": "resolved"}, &resolved); st != http.StatusOK || resolved.Ticket.Status != "resolved" {
		t.Fatalf("resolve: %d %+v", st, resolved.Ticket)
	}
	if !mailbox.WaitFor(60*time.Second, func(b *testenv.Mailbox) bool { return mailTo(b, "["+tk.Number+"] Your ticket is resolved") }) {
		t.Fatal("no ticket_resolved e-mail reached the SMTP server")
	}

	// 5. The first endpoint receives every event of the ticket, signed.
	events := []string{"ticket.created", "comment.added", "ticket.updated", "ticket.resolved"}
	waitFor(t, "the ticket's events at the first endpoint", func() bool {
		for _, e := range events {
			if len(mine.ticketDeliveries(t, e, tk.ID)) == 0 {
				return false
			}
		}
		return true
	})
	mine.checkValid(t)
	for _, e := range events {
		for _, d := range mine.ticketDeliveries(t, e, tk.ID) {
			data := d.Payload["data"].(map[string]any)
			got := data["ticket"].(map[string]any)
			if got["number"] != tk.Number || got["priority"] != "critical" || got["customer_id"] != customerID || d.Sigs != 1 {
				t.Fatalf("%s: %+v", e, d)
			}
			if e == "comment.added" && data["comment"].(map[string]any)["content"] != "A crew is on its way to the cabinet." {
				t.Fatalf("comment.added: %v", data)
			}
		}
	}
	if got := mine.ticketDeliveries(t, "ticket.resolved", tk.ID); got[len(got)-1].Payload["data"].(map[string]any)["ticket"].(map[string]any)["status"] != "resolved" {
		t.Fatalf("ticket.resolved: %+v", got)
	}
	// The second ticket is high: the priority filter kept it from the first endpoint.
	if got := mine.ticketDeliveries(t, "ticket.created", second.Ticket.ID); len(got) != 0 {
		t.Fatalf("the first endpoint received the high ticket: %+v", got)
	}

	// The second endpoint, filtered to low tickets, receives none of
	// them: every event of the ticket has been dispatched, and after a
	// short grace period nothing arrived nor is waiting to.
	waitFor(t, "every event of the ticket to be dispatched", func() bool {
		var out struct {
			Events []struct {
				DispatchedAt *string `json:"dispatched_at"`
			} `json:"events"`
		}
		if st := p.do("GET", "/v1/events?resource_id="+tk.ID, p.liveKey, nil, &out); st != http.StatusOK {
			t.Fatalf("events: %d", st)
		}
		for _, e := range out.Events {
			if e.DispatchedAt == nil {
				return false
			}
		}
		return len(out.Events) >= len(events)
	})
	time.Sleep(time.Second)
	if n := theirs.total(); n != 0 {
		t.Fatalf("the endpoint filtered to low tickets received %d requests", n)
	}
	var none struct {
		Deliveries []hookDelivery `json:"deliveries"`
	}
	if st := p.do("GET", "/v1/webhooks/"+subTheirs+"/deliveries", p.liveKey, nil, &none); st != http.StatusOK || len(none.Deliveries) != 0 {
		t.Fatalf("deliveries of the low tickets' subscription: %d %+v", st, none.Deliveries)
	}
	var delivered struct {
		Deliveries []hookDelivery `json:"deliveries"`
	}
	if st := p.do("GET", "/v1/webhooks/"+subMine+"/deliveries", p.liveKey, nil, &delivered); st != http.StatusOK || len(delivered.Deliveries) < len(events) {
		t.Fatalf("deliveries of the first subscription: %d %+v", st, delivered.Deliveries)
	}
}
