package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models/support"
)

// trackerFixture stores, without the API, a tracker integration of tn (live).
func trackerFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	c, err := support.NewStore(h.store).CreateTrackerIntegration(context.Background(), tenantPrincipal(tn),
		support.TrackerSpec{TrackerURL: publicHook, Username: "probe", APIToken: "probe-token", ProjectKey: "OPS", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

type trackerAnswer struct {
	Integration struct {
		ID            string `json:"id"`
		Type          string `json:"type"`
		TrackerURL    string `json:"tracker_url"`
		Username      string `json:"username"`
		APITokenSet   bool   `json:"api_token_set"`
		APITokenLast4 string `json:"api_token_last4"`
		ProjectKey    string `json:"project_key"`
		SyncSettings  struct {
			CreateTrackerIssues bool              `json:"create_tracker_issues"`
			SyncComments        bool              `json:"sync_comments"`
			PriorityMapping     map[string]string `json:"priority_mapping"`
		} `json:"sync_settings"`
		Active bool `json:"active"`
	} `json:"integration"`
}

const trackerPath = "/v1/support/integrations/tracker"

const apiTrackerToken = "api-token-never-shown-K7pq"

func trackerBody() map[string]any {
	return map[string]any{"tracker_url": publicHook, "username": "support-bot", "api_token": apiTrackerToken, "project_key": "OPS",
		"sync_settings": map[string]any{"create_tracker_issues": true, "sync_comments": true, "priority_mapping": map[string]any{"critical": "P1"}}}
}

// TestSupportTrackerIntegrationCRUD: create, get, list, patch, delete; the
// token is in no answer; another tenant (and the sandbox) gets 404.
func TestSupportTrackerIntegrationCRUD(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	var created trackerAnswer
	res := h.do("POST", trackerPath, a.liveKey, trackerBody()).decode(201, &created)
	c := created.Integration
	if !strings.HasPrefix(c.ID, "trk_") || c.Type != "tracker" || !c.Active || !c.APITokenSet || c.APITokenLast4 != "K7pq" || c.ProjectKey != "OPS" ||
		!c.SyncSettings.CreateTrackerIssues || !c.SyncSettings.SyncComments ||
		c.SyncSettings.PriorityMapping["critical"] != "P1" || c.SyncSettings.PriorityMapping["low"] != "Low" || c.SyncSettings.PriorityMapping["high"] != "High" {
		t.Fatalf("created %+v", c)
	}
	noToken := func(r *response) {
		t.Helper()
		if strings.Contains(string(r.body), apiTrackerToken) || strings.Contains(string(r.body), `"api_token"`) {
			t.Fatalf("the token is answered: %s", r.body)
		}
	}
	noToken(res)
	noToken(h.do("GET", trackerPath+"/"+c.ID, a.liveKey, nil).decode(200, nil))
	var list struct {
		Integrations []struct {
			ID string `json:"id"`
		} `json:"integrations"`
	}
	lr := h.do("GET", trackerPath, a.liveKey, nil).decode(200, &list)
	noToken(lr)
	if len(list.Integrations) != 1 || list.Integrations[0].ID != c.ID {
		t.Fatalf("list %+v", list)
	}

	h.do("GET", trackerPath+"/"+c.ID, b.liveKey, nil).decode(404, nil)
	h.do("GET", trackerPath+"/"+c.ID, a.testKey, nil).decode(404, nil)
	h.do("PATCH", trackerPath+"/"+c.ID, b.liveKey, map[string]any{"active": false}).decode(404, nil)
	h.do("DELETE", trackerPath+"/"+c.ID, b.liveKey, nil).decode(404, nil)
	h.do("POST", trackerPath+"/"+c.ID+"/test", b.liveKey, nil).decode(404, nil)
	h.do("GET", trackerPath+"/"+c.ID+"/links", b.liveKey, nil).decode(404, nil)
	h.do("GET", trackerPath, b.liveKey, nil).decode(200, &list)
	if len(list.Integrations) != 0 {
		t.Fatalf("B lists %+v", list)
	}

	var patched trackerAnswer
	pr := h.do("PATCH", trackerPath+"/"+c.ID, a.liveKey, map[string]any{"active": false, "api_token": "rotated-token-ZZ11",
		"sync_settings": map[string]any{"sync_comments": false, "priority_mapping": map[string]any{"low": "Lowest"}}}).decode(200, &patched)
	noToken(pr)
	if p := patched.Integration; p.Active || p.APITokenLast4 != "ZZ11" || p.SyncSettings.SyncComments || !p.SyncSettings.CreateTrackerIssues ||
		p.SyncSettings.PriorityMapping["low"] != "Lowest" || p.SyncSettings.PriorityMapping["critical"] != "Highest" {
		t.Fatalf("patched %+v", p)
	}
	if strings.Contains(string(pr.body), "rotated-token-ZZ11") {
		t.Fatalf("the new token is answered: %s", pr.body)
	}
	h.do("PATCH", trackerPath+"/"+c.ID, a.liveKey, map[string]any{"project_key": "ops"}).decode(400, nil)

	var links struct {
		Links []any `json:"links"`
	}
	h.do("GET", trackerPath+"/"+c.ID+"/links", a.liveKey, nil).decode(200, &links)
	if links.Links == nil || len(links.Links) != 0 {
		t.Fatalf("links %+v", links)
	}
	h.do("DELETE", trackerPath+"/"+c.ID, a.liveKey, nil).decode(204, nil)
	h.do("GET", trackerPath+"/"+c.ID, a.liveKey, nil).decode(404, nil)
}

// TestSupportTrackerIntegrationValidation: each bad field is a 400
// VALIDATION_ERROR naming it, never a 500.
func TestSupportTrackerIntegrationValidation(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for _, tc := range []struct {
		name, field string
		change      func(map[string]any)
	}{
		{"missing url", "tracker_url", func(m map[string]any) { delete(m, "tracker_url") }},
		{"private address", "tracker_url", func(m map[string]any) { m["tracker_url"] = "https://127.0.0.1" }},
		{"private network", "tracker_url", func(m map[string]any) { m["tracker_url"] = "https://10.1.2.3" }},
		{"plain http", "tracker_url", func(m map[string]any) { m["tracker_url"] = "http://93.184.216.34" }},
		{"query", "tracker_url", func(m map[string]any) { m["tracker_url"] = publicHook + "?x=1" }},
		{"not a url", "tracker_url", func(m map[string]any) { m["tracker_url"] = "tracker" }},
		{"missing token", "api_token", func(m map[string]any) { delete(m, "api_token") }},
		{"blank token", "api_token", func(m map[string]any) { m["api_token"] = "   " }},
		{"missing username", "username", func(m map[string]any) { delete(m, "username") }},
		{"blank username", "username", func(m map[string]any) { m["username"] = "  " }},
		{"lower-case project", "project_key", func(m map[string]any) { m["project_key"] = "ops" }},
		{"long project", "project_key", func(m map[string]any) { m["project_key"] = "ABCDEFGHIJK" }},
		{"long priority", "priority_mapping", func(m map[string]any) {
			m["sync_settings"] = map[string]any{"priority_mapping": map[string]any{"high": strings.Repeat("p", 61)}}
		}},
		{"bool as string", "create_tracker_issues", func(m map[string]any) {
			m["sync_settings"] = map[string]any{"create_tracker_issues": "yes"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := trackerBody()
			tc.change(body)
			var e errorBody
			h.do("POST", trackerPath, a.liveKey, body).decode(400, &e)
			if e.Error.Code != "VALIDATION_ERROR" {
				t.Fatalf("code %s", e.Error.Code)
			}
			raw := strings.ToLower(strings.Join([]string{e.Error.Message, jsonString(t, e.Error.Details)}, " "))
			if !strings.Contains(raw, tc.field) {
				t.Fatalf("error does not name %s: %s", tc.field, raw)
			}
		})
	}
}
