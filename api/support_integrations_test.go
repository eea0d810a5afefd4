package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models/support"
)

// chatFixture stores, without the API, a chat integration of tn (live).
func chatFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	c, err := support.NewStore(h.store).CreateChatIntegration(context.Background(), tenantPrincipal(tn),
		support.ChatSpec{WebhookURL: publicHook, Channel: "#probe", Events: []string{"ticket.*"}, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

type chatAnswer struct {
	Integration struct {
		ID         string   `json:"id"`
		Type       string   `json:"type"`
		WebhookURL string   `json:"webhook_url"`
		Channel    string   `json:"channel"`
		Events     []string `json:"events"`
		Filters    struct {
			CustomerIDs []string `json:"customer_ids"`
			Priorities  []string `json:"priorities"`
		} `json:"filters"`
		MessageFormat struct {
			Template string `json:"template"`
		} `json:"message_format"`
		Active    bool   `json:"active"`
		CreatedAt string `json:"created_at"`
		UpdatedAt string `json:"updated_at"`
	} `json:"integration"`
}

func TestSupportChatIntegrationCRUD(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	const path = "/v1/support/integrations/chatapp"

	var created chatAnswer
	h.do("POST", path, a.liveKey, map[string]any{"webhook_url": publicHook, "channel": "#support", "events": []string{"ticket.*", "sla.breach"},
		"filters": map[string]any{"priorities": []string{"critical"}}}).decode(201, &created)
	c := created.Integration
	if !strings.HasPrefix(c.ID, "chat_") || c.Type != "chatapp" || !c.Active || c.Channel != "#support" || len(c.Events) != 2 ||
		c.MessageFormat.Template != support.DefaultChatTemplate || len(c.Filters.Priorities) != 1 || c.Filters.CustomerIDs == nil || c.CreatedAt == "" {
		t.Fatalf("created %+v", c)
	}

	var got chatAnswer
	h.do("GET", path+"/"+c.ID, a.liveKey, nil).decode(200, &got)
	if got.Integration.ID != c.ID {
		t.Fatalf("got %+v", got.Integration)
	}
	var list struct {
		Integrations []struct {
			ID string `json:"id"`
		} `json:"integrations"`
	}
	h.do("GET", path, a.liveKey, nil).decode(200, &list)
	if len(list.Integrations) != 1 || list.Integrations[0].ID != c.ID {
		t.Fatalf("list %+v", list)
	}

	// Another tenant, and A's own sandbox, do not see it.
	h.do("GET", path+"/"+c.ID, b.liveKey, nil).decode(404, nil)
	h.do("GET", path+"/"+c.ID, a.testKey, nil).decode(404, nil)
	h.do("PATCH", path+"/"+c.ID, b.liveKey, map[string]any{"active": false}).decode(404, nil)
	h.do("DELETE", path+"/"+c.ID, b.liveKey, nil).decode(404, nil)
	h.do("POST", path+"/"+c.ID+"/test", b.liveKey, nil).decode(404, nil)
	h.do("GET", path, b.liveKey, nil).decode(200, &list)
	if len(list.Integrations) != 0 {
		t.Fatalf("B lists %+v", list)
	}

	var patched chatAnswer
	h.do("PATCH", path+"/"+c.ID, a.liveKey, map[string]any{"active": false, "channel": "#noc",
		"message_format": map[string]any{"template": "{{ticket.number}}: {{ event }}"}}).decode(200, &patched)
	if p := patched.Integration; p.Active || p.Channel != "#noc" || p.MessageFormat.Template != "{{ticket.number}}: {{ event }}" || len(p.Events) != 2 {
		t.Fatalf("patched %+v", p)
	}
	h.do("PATCH", path+"/"+c.ID, a.liveKey, map[string]any{"message_format": map[string]any{"template": "{{ticket.secret}}"}}).decode(400, nil)

	var dels struct {
		Deliveries []any `json:"deliveries"`
	}
	h.do("GET", path+"/"+c.ID+"/deliveries", a.liveKey, nil).decode(200, &dels)
	if len(dels.Deliveries) != 0 {
		t.Fatalf("deliveries %+v", dels)
	}

	h.do("DELETE", path+"/"+c.ID, a.liveKey, nil).decode(204, nil)
	h.do("GET", path+"/"+c.ID, a.liveKey, nil).decode(404, nil)
}

func TestSupportChatIntegrationValidation(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	const path = "/v1/support/integrations/chatapp"
	valid := func() map[string]any {
		return map[string]any{"webhook_url": publicHook, "channel": "#support", "events": []string{"ticket.*"}}
	}
	for _, tc := range []struct {
		name, field, mention string
		change               func(map[string]any)
	}{
		{"unknown placeholder", "message_format.template", "{{ticket.secret}}", func(m map[string]any) {
			m["message_format"] = map[string]any{"template": "{{ticket.number}} {{ticket.secret}}"}
		}},
		{"unclosed braces", "message_format.template", "not closed", func(m map[string]any) {
			m["message_format"] = map[string]any{"template": "{{ticket.number"}
		}},
		{"stray closing braces", "message_format.template", "closes no", func(m map[string]any) {
			m["message_format"] = map[string]any{"template": "ticket.number}}"}
		}},
		{"private address", "webhook_url", "", func(m map[string]any) { m["webhook_url"] = "https://127.0.0.1/hook" }},
		{"private network", "webhook_url", "", func(m map[string]any) { m["webhook_url"] = "https://10.1.2.3/hook" }},
		{"plain http", "webhook_url", "https", func(m map[string]any) { m["webhook_url"] = "http://93.184.216.34/hook" }},
		{"not a support event", "events[0]", "", func(m map[string]any) { m["events"] = []string{"invoice.*"} }},
		{"every event", "events[0]", "", func(m map[string]any) { m["events"] = []string{"*"} }},
		{"blank channel", "channel", "", func(m map[string]any) { m["channel"] = "   " }},
		{"long channel", "channel", "", func(m map[string]any) { m["channel"] = strings.Repeat("c", 81) }},
		{"unknown priority", "filters.priorities", "", func(m map[string]any) {
			m["filters"] = map[string]any{"priorities": []string{"urgent"}}
		}},
		{"missing url", "webhook_url", "", func(m map[string]any) { delete(m, "webhook_url") }},
		{"another tenant's customer", "filters.customer_ids[0]", "", func(m map[string]any) {
			m["filters"] = map[string]any{"customer_ids": []string{h.tenants[1].org.CustomerID}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := valid()
			tc.change(body)
			var e errorBody
			h.do("POST", path, a.liveKey, body).decode(400, &e)
			if e.Error.Code != "VALIDATION_ERROR" {
				t.Fatalf("code %s", e.Error.Code)
			}
			raw := strings.ToLower(strings.Join([]string{e.Error.Message, jsonString(t, e.Error.Details)}, " "))
			if !strings.Contains(raw, strings.ToLower(tc.field)) || !strings.Contains(raw, strings.ToLower(tc.mention)) {
				t.Fatalf("error does not name %s (%s): %s", tc.field, tc.mention, raw)
			}
		})
	}
}

// jsonString encodes v for a failure message or a search in it.
func jsonString(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
