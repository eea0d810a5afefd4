package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatMessage is what a chat peer receives.
type chatMessage struct {
	ID      string // webhook-id
	Channel string `json:"channel"`
	Text    string `json:"text"`
	Event   string `json:"event"`
	Ticket  struct {
		ID     string `json:"id"`
		Number string `json:"number"`
		URL    string `json:"url"`
	} `json:"ticket"`
	SentAt string `json:"sent_at"`
}

// chatPeer is a chat application's incoming webhook on loopback: it answers
// the nth request (from 1) with respond(n) and keeps the accepted messages.
type chatPeer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests int
	accepted []chatMessage
}

func newChatPeer(t *testing.T, respond func(n int) int) *chatPeer {
	t.Helper()
	p := &chatPeer{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.requests++
		n := p.requests
		p.mu.Unlock()
		status := respond(n)
		if status == http.StatusOK {
			var m chatMessage
			if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &m) != nil {
				status = http.StatusBadRequest
			} else {
				m.ID = r.Header.Get("webhook-id")
				p.mu.Lock()
				p.accepted = append(p.accepted, m)
				p.mu.Unlock()
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// messages returns the accepted messages of an event type.
func (p *chatPeer) messages(event string) []chatMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []chatMessage
	for _, m := range p.accepted {
		if m.Event == event {
			out = append(out, m)
		}
	}
	return out
}

func (p *chatPeer) requestCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// TestSupportChatIntegration connects two chat peers to the demo customer's
// support events through the HTTP API on the real stack (API, dispatcher,
// Temporal, worker): the test message reaches the first at once; a critical
// ticket reaches the first (filtered to critical) rendered by its template
// and not the second (filtered to high); a low ticket reaches neither; a high
// ticket reaches the second, which fails twice before it accepts: it gets
// exactly one accepted message, after three attempts.
func TestSupportChatIntegration(t *testing.T) {
	p := startPlatform(t, platformOptions{queuePrefix: "support-chat", webhookTimeout: testAttemptTimeout, keys: demoLiveKey})
	const base = "/v1/support/integrations/chatapp"
	critical := newChatPeer(t, func(int) int { return http.StatusOK })
	flaky := newChatPeer(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	type integration struct {
		Integration struct {
			ID string `json:"id"`
		} `json:"integration"`
	}
	var one, two integration
	if st := p.do("POST", p.base+base, p.liveKey, map[string]any{"webhook_url": critical.srv.URL + "/hook", "channel": "#noc", "events": []string{"ticket.*"},
		"filters":        map[string]any{"priorities": []string{"critical"}},
		"message_format": map[string]any{"template": "{{ticket.priority}} {{ticket.number}}: {{ticket.title}} ({{event}}) {{ticket.url}}"}}, &one); st != http.StatusCreated {
		t.Fatalf("create the first integration: %d", st)
	}
	if st := p.do("POST", p.base+base, p.liveKey, map[string]any{"webhook_url": flaky.srv.URL + "/hook", "channel": "#support", "events": []string{"ticket.created"},
		"filters": map[string]any{"priorities": []string{"high"}}}, &two); st != http.StatusCreated {
		t.Fatalf("create the second integration: %d", st)
	}

	// The test message is sent now and answered with the peer's status.
	var test struct {
		Delivered  bool   `json:"delivered"`
		StatusCode *int   `json:"status_code"`
		DeliveryID string `json:"delivery_id"`
	}
	if st := p.do("POST", p.base+base+"/"+one.Integration.ID+"/test", p.liveKey, nil, &test); st != http.StatusOK ||
		!test.Delivered || test.StatusCode == nil || *test.StatusCode != 200 || test.DeliveryID == "" {
		t.Fatalf("test message: %d %+v", st, test)
	}
	if got := critical.messages("webhook.test"); len(got) != 1 || got[0].Channel != "#noc" || got[0].Ticket.Number != "TKT-000000" {
		t.Fatalf("test messages %+v", got)
	}

	open := func(title, priority string) string {
		var created struct {
			Ticket supportTicket `json:"ticket"`
		}
		if st := p.do("POST", p.base+"/v1/support/tickets", p.liveKey, map[string]any{"title": title, "description": "Seen from the NOC",
			"category": "network", "subcategory": "connectivity", "priority": priority}, &created); st != http.StatusCreated {
			t.Fatalf("create a %s ticket: %d", priority, st)
		}
		return created.Ticket.ID
	}
	criticalID := open("Fiber link down", "critical")
	open("Slow DNS answers", "low")
	highID := open("Packet loss on the uplink", "high")

	waitFor(t, "the critical ticket's message", func() bool { return len(critical.messages("ticket.created")) == 1 })
	m := critical.messages("ticket.created")[0]
	if m.Ticket.ID != criticalID || !strings.HasPrefix(m.Ticket.Number, "TKT-") || m.Channel != "#noc" || m.ID == "" ||
		m.Text != "critical "+m.Ticket.Number+": Fiber link down (ticket.created) "+p.base+"/portal/tickets/"+criticalID ||
		m.Ticket.URL != p.base+"/portal/tickets/"+criticalID || m.SentAt == "" {
		t.Fatalf("critical message %+v", m)
	}

	waitFor(t, "the high ticket's message after two failures", func() bool { return len(flaky.messages("ticket.created")) == 1 })
	if got := flaky.messages("ticket.created"); got[0].Ticket.ID != highID || got[0].Text == "" || flaky.requestCount() != 3 {
		t.Fatalf("flaky peer: %d requests, accepted %+v", flaky.requestCount(), got)
	}
	// Every event was dispatched in order before the high ticket's, so the
	// low ticket (and the critical one, for the second peer) was not sent.
	var dels struct {
		Deliveries []hookDelivery `json:"deliveries"`
	}
	waitFor(t, "the retried delivery to be recorded", func() bool {
		p.do("GET", p.base+base+"/"+two.Integration.ID+"/deliveries", p.liveKey, nil, &dels)
		return len(dels.Deliveries) == 1 && dels.Deliveries[0].Status == "succeeded"
	})
	if d := dels.Deliveries[0]; len(d.Attempts) != 3 || d.Attempts[0].Success || d.Attempts[1].Success || !d.Attempts[2].Success || d.EventType != "ticket.created" {
		t.Fatalf("the flaky peer's delivery %+v", d)
	}
	p.do("GET", p.base+base+"/"+one.Integration.ID+"/deliveries", p.liveKey, nil, &dels)
	if len(dels.Deliveries) != 2 { // the test message and the critical ticket
		t.Fatalf("the first peer's deliveries %+v", dels.Deliveries)
	}
	time.Sleep(200 * time.Millisecond)
	if len(critical.messages("ticket.created")) != 1 || len(flaky.messages("ticket.created")) != 1 || flaky.requestCount() != 3 {
		t.Fatalf("extra messages: %d to the first peer, %d requests to the second", len(critical.messages("ticket.created")), flaky.requestCount())
	}
}
