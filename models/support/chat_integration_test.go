package support_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

func TestValidateChatTemplate(t *testing.T) {
	for _, tc := range []struct {
		tpl     string
		problem string // "" when valid; else a word the issue contains
	}{
		{support.DefaultChatTemplate, ""},
		{"no placeholders at all", ""},
		{"{{event}}", ""},
		{"{{ ticket.number }} {{ticket.url}} {{sla.metric}} {{comment.content}}", ""},
		{"single { braces } are text", ""},
		{"", "blank"},
		{"   ", "blank"},
		{"{{ticket.secret}}", "{{ticket.secret}}"},
		{"{{}}", "unknown placeholder"},
		{"{{ticket.number", "not closed"},
		{"{{ticket.number {{event}}", "not closed"},
		{"ticket.number}}", "closes no"},
		{"{{event}} }}", "closes no"},
		{strings.Repeat("x", 2001), "2000"},
	} {
		err := support.ValidateChatTemplate(tc.tpl)
		if tc.problem == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.tpl, err)
			}
			continue
		}
		e := models.AsError(err)
		if err == nil || e.Code != models.CodeValidation {
			t.Errorf("%q: want VALIDATION_ERROR, got %v", tc.tpl, err)
			continue
		}
		fs, _ := e.Details["fields"].([]models.FieldIssue)
		if len(fs) != 1 || fs[0].Field != "message_format.template" || !strings.Contains(fs[0].Issue, tc.problem) {
			t.Errorf("%q: issues %+v, want one on message_format.template naming %q", tc.tpl, fs, tc.problem)
		}
	}
}

func TestRenderChatTemplate(t *testing.T) {
	data := map[string]any{
		"ticket": map[string]any{"id": "tkt_1", "number": "TKT-000042", "title": "Link down", "status": "open", "priority": "critical",
			"escalation_level": float64(2), "escalation_reason": nil, "customer_id": "cust_9"},
		"sla":     map[string]any{"metric": "response", "target": "1h"},
		"comment": map[string]any{"content": "On it", "author_type": "staff"},
	}
	fields := support.ChatFields("sla.breach", data, "https://api.example.com/")
	for _, tc := range []struct{ tpl, want string }{
		{support.DefaultChatTemplate, "[critical] TKT-000042 Link down — sla.breach"},
		{"{{ ticket.url }}", "https://api.example.com/portal/tickets/tkt_1"},
		{"level {{ticket.escalation_level}}{{ticket.escalation_reason}}", "level 2"},
		{"{{sla.metric}} {{sla.target}} {{comment.content}} ({{comment.author_type}}) {{ticket.customer_id}}", "response 1h On it (staff) cust_9"},
		{"{{sla.due_at}}|", "|"}, // absent: empty
		{"plain", "plain"},
	} {
		if got := support.RenderChatTemplate(tc.tpl, fields); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.tpl, got, tc.want)
		}
	}
	long := support.RenderChatTemplate("{{ticket.title}}", map[string]string{"ticket.title": strings.Repeat("é", 3000)})
	if len(long) > support.MaxChatText || !strings.HasPrefix(long, "é") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("a long text is %d bytes", len(long))
	}
}

func TestChatMessageBody(t *testing.T) {
	c := &support.ChatIntegration{ID: "chat_1", Channel: "#noc", Template: "{{ticket.number}} is {{ticket.status}}"}
	data := map[string]any{"ticket": map[string]any{"id": "tkt_1", "number": "TKT-000001", "status": "resolved"}}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	raw, err := support.ChatMessageBody(c, "ticket.resolved", data, "https://api.example.com", at)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	ticket, _ := m["ticket"].(map[string]any)
	if m["channel"] != "#noc" || m["text"] != "TKT-000001 is resolved" || m["event"] != "ticket.resolved" || m["sent_at"] != "2026-11-26T10:00:00Z" ||
		ticket["id"] != "tkt_1" || ticket["number"] != "TKT-000001" || ticket["url"] != "https://api.example.com/portal/tickets/tkt_1" {
		t.Fatalf("message %s", raw)
	}
}
