package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/webhooks"
)

// fieldIssues returns the issues of a VALIDATION_ERROR answer by field
// (several issues of one field joined by " | ").
func fieldIssues(e errorBody) map[string]string {
	out := map[string]string{}
	fields, _ := e.Error.Details["fields"].([]any)
	for _, f := range fields {
		m := f.(map[string]any)
		name, issue := m["field"].(string), m["issue"].(string)
		if out[name] != "" {
			issue = out[name] + " | " + issue
		}
		out[name] = issue
	}
	return out
}

// componentSchema returns the component schema name of /openapi.json.
func componentSchema(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
	s, _ := schemas[name].(map[string]any)
	if s == nil {
		t.Fatalf("no component schema %s in /openapi.json", name)
	}
	return s
}

// TestEventTypesListEveryArea: GET /v1/webhooks/event-types lists every
// subscribable event (the analytics area's included, which /v1/webhooks
// accepts), and its schema's area enum names the analytics area.
func TestEventTypesListEveryArea(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var cat struct {
		Areas []struct {
			Area     string   `json:"area"`
			Patterns []string `json:"patterns"`
			Events   []string `json:"events"`
		} `json:"areas"`
	}
	h.do("GET", "/v1/webhooks/event-types", a.liveKey, nil).decode(http.StatusOK, &cat)
	var listed []string
	areas := map[string][]string{}
	for _, g := range cat.Areas {
		listed = append(listed, g.Events...)
		areas[g.Area] = g.Patterns
	}
	for _, name := range webhooks.EventNames() {
		if !slices.Contains(listed, name) {
			t.Errorf("event-types leaves out %s", name)
		}
	}
	tests := []struct {
		area, pattern string
	}{
		{"services", "service.*"},
		{"billing", "invoice.*"},
		{"support", "report.*"},
		{"analytics", "analytics_report.*"},
	}
	for _, tc := range tests {
		if !slices.Contains(areas[tc.area], tc.pattern) {
			t.Errorf("area %s: patterns %v lack %s", tc.area, areas[tc.area], tc.pattern)
		}
		// Every listed pattern is one that /v1/webhooks accepts.
		h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{tc.pattern}}).decode(http.StatusCreated, nil)
	}

	var doc map[string]any
	h.do("GET", "/openapi.json", "", nil).decode(http.StatusOK, &doc)
	area, _ := componentSchema(t, doc, "EventTypeGroup")["properties"].(map[string]any)["area"].(map[string]any)
	enum, _ := area["enum"].([]any)
	if !slices.Contains(enum, any("analytics")) {
		t.Fatalf("EventTypeGroup.area enum %v lacks analytics", enum)
	}
}

// TestRedeliverUnseenSubscriptionIsValidationError: a subscription_id
// that names nothing the caller may see (made up, or another tenant's) is
// 400 VALIDATION_ERROR on subscription_id, the same answer for both.
func TestRedeliverUnseenSubscriptionIsValidationError(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	var mine, theirs webhookAnswer
	h.do("POST", "/v1/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"*"}}).decode(http.StatusCreated, &mine)
	h.do("POST", "/v1/webhooks", b.liveKey, map[string]any{"url": publicHook, "events": []string{"*"}}).decode(http.StatusCreated, &theirs)
	var sent struct {
		Delivery deliveryAnswer `json:"delivery"`
	}
	h.do("POST", "/v1/webhooks/"+mine.Webhook.ID+"/test", a.liveKey, nil).decode(http.StatusAccepted, &sent)
	path := "/v1/events/" + sent.Delivery.EventID + "/redeliver"

	tests := []struct {
		name, subscriptionID string
	}{
		{"made-up id", "wh_doesnotexist"},
		{"another tenant's id", theirs.Webhook.ID},
	}
	var issues []string
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", path, a.liveKey, map[string]any{"subscription_id": tc.subscriptionID}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			got := fieldIssues(e)
			if len(got) != 1 || got["subscription_id"] == "" {
				t.Fatalf("fields %v, want subscription_id only", got)
			}
			issues = append(issues, strings.ReplaceAll(got["subscription_id"], tc.subscriptionID, "ID"))
		})
	}
	if len(issues) == 2 && issues[0] != issues[1] {
		t.Fatalf("a made-up id and another tenant's are told apart: %q / %q", issues[0], issues[1])
	}
	// The event in the path stays a missing resource for another tenant.
	h.do("POST", path, b.liveKey, map[string]any{"subscription_id": theirs.Webhook.ID}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", path, a.liveKey, map[string]any{"subscription_id": mine.Webhook.ID}).decode(http.StatusAccepted, nil)
}

// TestWebhookValidationNamesEveryProblem: create and PATCH answer one
// VALIDATION_ERROR naming every invalid field, the filters' included.
func TestWebhookValidationNamesEveryProblem(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	var sub webhookAnswer
	h.do("POST", "/v1/support/webhooks", a.liveKey, map[string]any{"url": publicHook, "events": []string{"ticket.*"}}).decode(http.StatusCreated, &sub)

	tests := []struct {
		name, method, path string
		body               map[string]any
		fields             []string
	}{
		{"create: url, events, secret and unseen customer", "POST", "/v1/support/webhooks",
			map[string]any{"url": "ftp://x", "events": []string{"ticket.*", "bogus"}, "filters": map[string]any{"customer_ids": []string{"cust_nope"}}, "secret": "x"},
			[]string{"url", "events[1]", "secret", "filters.customer_ids[0]"}},
		{"create: priorities with the other fields", "POST", "/v1/support/webhooks",
			map[string]any{"url": "ftp://x", "events": []string{"bogus"}, "filters": map[string]any{"priorities": []string{"urgent"}}},
			[]string{"url", "events[0]", "filters.priorities"}},
		{"create: every filter problem", "POST", "/v1/support/webhooks",
			map[string]any{"url": publicHook, "events": []string{"ticket.*"}, "filters": map[string]any{"customer_ids": []string{a.org.CustomerID, b.org.CustomerID}, "priorities": []string{"high", "urgent"}}},
			[]string{"filters.customer_ids[1]", "filters.priorities"}},
		{"create: filters on billing", "POST", "/api/v1/billing/webhooks",
			map[string]any{"url": publicHook, "events": []string{"service.*"}, "filters": map[string]any{"priorities": []string{"urgent"}}},
			[]string{"events[0]", "filters", "filters.priorities"}},
		{"patch: url, events and filters", "PATCH", "/v1/webhooks/" + sub.Webhook.ID,
			map[string]any{"url": "ftp://x", "events": []string{"bogus", "invoice.*"}, "filters": map[string]any{"customer_ids": []string{"cust_nope"}, "priorities": []string{"urgent"}}},
			[]string{"url", "events[0]", "events[1]", "filters.customer_ids[0]", "filters.priorities"}},
		{"patch: priorities alone", "PATCH", "/v1/webhooks/" + sub.Webhook.ID,
			map[string]any{"filters": map[string]any{"priorities": []string{"urgent"}}},
			[]string{"filters.priorities"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fieldIssues(h.do(tc.method, tc.path, a.liveKey, tc.body).wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
			for _, f := range tc.fields {
				if got[f] == "" {
					t.Errorf("fields %v lack %s", got, f)
				}
			}
			if len(got) != len(tc.fields) {
				t.Errorf("fields %v, want exactly %v", got, tc.fields)
			}
		})
	}
	var after webhookAnswer
	h.do("GET", "/v1/webhooks/"+sub.Webhook.ID, a.liveKey, nil).decode(http.StatusOK, &after)
	if after.Webhook.URL != publicHook || len(after.Webhook.Filters.Priorities) != 0 {
		t.Fatalf("a refused patch changed the subscription: %+v", after.Webhook)
	}
}

// TestEventListTypeIssueNamesTheFieldOnce: an unknown type= names the
// field once, in the field and in the message.
func TestEventListTypeIssueNamesTheFieldOnce(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tests := []struct {
		query  string
		fields []string
	}{
		{"type=bogus", []string{"type"}},
		{"type=service.exploded&created_after=yesterday", []string{"type", "created_after"}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			e := h.do("GET", "/v1/events?"+tc.query, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			got := fieldIssues(e)
			if len(got) != len(tc.fields) {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
			if strings.HasPrefix(got["type"], "type") || !strings.Contains(got["type"], "is not an event name") {
				t.Fatalf("type issue %q", got["type"])
			}
			if strings.Contains(e.Error.Message, "type: type") {
				t.Fatalf("message names the field twice: %q", e.Error.Message)
			}
		})
	}
}

// TestChatIntegrationRefusesReportEvents: chat integrations take the
// support events about tickets only (ticket.*, comment.*, sla.*); report
// events, about no ticket, are refused on create and PATCH.
func TestChatIntegrationRefusesReportEvents(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	const path = "/v1/support/integrations/chatapp"
	var chat struct {
		Integration struct {
			ID     string   `json:"id"`
			Events []string `json:"events"`
		} `json:"integration"`
	}
	h.do("POST", path, a.liveKey, map[string]any{"webhook_url": publicHook, "channel": "#noc", "events": []string{"ticket.*", "sla.breach", "ticket.*"}}).decode(http.StatusCreated, &chat)
	if strings.Join(chat.Integration.Events, ",") != "ticket.*,sla.breach" {
		t.Fatalf("events %v", chat.Integration.Events)
	}
	tests := []struct {
		name, method, path string
		events             []string
		fields             []string
	}{
		{"report pattern", "POST", path, []string{"report.*"}, []string{"events[0]"}},
		{"report names among others", "POST", path, []string{"ticket.*", "report.completed", "service.*", "report.failed"}, []string{"events[1]", "events[2]", "events[3]"}},
		{"patch to report events", "PATCH", path + "/" + chat.Integration.ID, []string{"comment.*", "report.*"}, []string{"events[1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"events": tc.events}
			if tc.method == "POST" {
				body["webhook_url"], body["channel"] = publicHook, "#noc"
			}
			got := fieldIssues(h.do(tc.method, tc.path, a.liveKey, body).wantError(http.StatusBadRequest, "VALIDATION_ERROR"))
			if len(got) != len(tc.fields) {
				t.Fatalf("fields %v, want %v", got, tc.fields)
			}
			for _, f := range tc.fields {
				if got[f] == "" || strings.Contains(got[f], "report.*") && !strings.Contains(got[f], "about no ticket") {
					t.Fatalf("field %s: %q (all: %v)", f, got[f], got)
				}
			}
		})
	}
}

// TestNotificationLastErrorIsAlwaysPresent: every notification item has
// last_error, null when no attempt failed, and the schema says it is
// nullable.
func TestNotificationLastErrorIsAlwaysPresent(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h)
	tk := newTicket(t, h, a.liveKey, nil)
	var list struct {
		Notifications []map[string]any `json:"notifications"`
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/notifications", staff, nil).decode(http.StatusOK, &list)
	if len(list.Notifications) == 0 {
		t.Fatal("the new ticket queued no notification")
	}
	for _, n := range list.Notifications {
		for _, key := range []string{"last_error", "sent_at"} {
			v, ok := n[key]
			if !ok || v != nil {
				t.Fatalf("%s: present %v, value %v, want null: %v", key, ok, v, n)
			}
		}
	}

	var doc map[string]any
	h.do("GET", "/openapi.json", "", nil).decode(http.StatusOK, &doc)
	item := componentSchema(t, doc, "NotificationItem")
	prop, _ := item["properties"].(map[string]any)["last_error"].(map[string]any)
	if prop["nullable"] != true {
		t.Fatalf("NotificationItem.last_error schema %v is not nullable", prop)
	}
	required, _ := item["required"].([]any)
	if !slices.Contains(required, any("last_error")) {
		t.Fatalf("NotificationItem requires %v, without last_error", required)
	}
}
