package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// jiraIssue is an issue the peer keeps.
type jiraIssue struct {
	ID, Key, Summary, Description, Priority, Status string
	Labels                                          []string
	Comments                                        []map[string]any
}

// jiraPeer is a loopback tracker with a Jira-compatible REST API v2:
// myself, create issue, search by label, get issue, change priority, list
// and add comments, behind basic authentication. With failFirstCreate it
// stores the first issue created and then answers 500, as a tracker that
// fails after committing does.
type jiraPeer struct {
	srv             *httptest.Server
	user, token     string
	mu              sync.Mutex
	failFirstCreate bool
	creates         int
	issues          []*jiraIssue
	nextComment     int
}

var labelJQL = regexp.MustCompile(`labels = "([^"]+)"`)

func newJiraPeer(t *testing.T, user, token string) *jiraPeer {
	t.Helper()
	p := &jiraPeer{user: user, token: token, failFirstCreate: true, nextComment: 10000}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *jiraPeer) serve(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if u, pw, ok := r.BasicAuth(); !ok || u != p.user || pw != p.token {
		answer(http.StatusUnauthorized, map[string]any{"errorMessages": []string{"bad credentials"}})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	path := r.URL.Path
	switch {
	case r.Method == "GET" && path == "/rest/api/2/myself":
		answer(200, map[string]any{"name": p.user, "displayName": "Support Bot"})
	case r.Method == "POST" && path == "/rest/api/2/search":
		var q struct {
			JQL string `json:"jql"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		m := labelJQL.FindStringSubmatch(q.JQL)
		var out []map[string]any
		for _, is := range p.issues {
			for _, l := range is.Labels {
				if m != nil && l == m[1] {
					out = append(out, p.issueJSON(is))
				}
			}
		}
		answer(200, map[string]any{"total": len(out), "issues": out})
	case r.Method == "POST" && path == "/rest/api/2/issue":
		var body struct {
			Fields struct {
				Project     struct{ Key string }  `json:"project"`
				Summary     string                `json:"summary"`
				Description string                `json:"description"`
				IssueType   struct{ Name string } `json:"issuetype"`
				Priority    struct{ Name string } `json:"priority"`
				Labels      []string              `json:"labels"`
			} `json:"fields"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil || body.Fields.Project.Key != "OPS" || body.Fields.IssueType.Name != "Task" {
			answer(400, map[string]any{"errors": map[string]string{"project": "invalid"}})
			return
		}
		p.creates++
		n := len(p.issues) + 1
		is := &jiraIssue{ID: strconv.Itoa(10000 + n), Key: fmt.Sprintf("OPS-%d", n), Summary: body.Fields.Summary, Description: body.Fields.Description,
			Priority: body.Fields.Priority.Name, Status: "To Do", Labels: body.Fields.Labels}
		p.issues = append(p.issues, is)
		if p.failFirstCreate && p.creates == 1 {
			answer(500, map[string]any{"errorMessages": []string{"internal error after commit"}})
			return
		}
		answer(201, map[string]any{"id": is.ID, "key": is.Key})
	case strings.HasPrefix(path, "/rest/api/2/issue/"):
		rest := strings.TrimPrefix(path, "/rest/api/2/issue/")
		key, sub, _ := strings.Cut(rest, "/")
		is := p.issue(key)
		if is == nil {
			answer(404, map[string]any{"errorMessages": []string{"no such issue"}})
			return
		}
		switch {
		case sub == "" && r.Method == "GET":
			answer(200, p.issueJSON(is))
		case sub == "" && r.Method == "PUT":
			var body struct {
				Fields struct {
					Priority struct{ Name string } `json:"priority"`
				} `json:"fields"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			is.Priority = body.Fields.Priority.Name
			w.WriteHeader(204)
		case sub == "comment" && r.Method == "GET":
			start, _ := strconv.Atoi(r.URL.Query().Get("startAt"))
			page := []map[string]any{}
			if start < len(is.Comments) {
				page = is.Comments[start:]
			}
			answer(200, map[string]any{"startAt": start, "total": len(is.Comments), "comments": page})
		case sub == "comment" && r.Method == "POST":
			var body struct {
				Body string `json:"body"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			answer(201, p.addComment(is, p.user, body.Body))
		default:
			answer(405, map[string]any{})
		}
	default:
		answer(404, map[string]any{"errorMessages": []string{"not found"}})
	}
}

func (p *jiraPeer) issue(key string) *jiraIssue {
	for _, is := range p.issues {
		if is.Key == key {
			return is
		}
	}
	return nil
}

func (p *jiraPeer) issueJSON(is *jiraIssue) map[string]any {
	return map[string]any{"id": is.ID, "key": is.Key, "fields": map[string]any{"status": map[string]any{"name": is.Status}, "labels": is.Labels}}
}

func (p *jiraPeer) addComment(is *jiraIssue, author, body string) map[string]any {
	p.nextComment++
	c := map[string]any{"id": strconv.Itoa(p.nextComment), "body": body, "author": map[string]any{"name": author, "displayName": author},
		"created": time.Now().UTC().Format(time.RFC3339)}
	is.Comments = append(is.Comments, c)
	return c
}

// snapshot returns copies of the issues.
func (p *jiraPeer) snapshot() []jiraIssue {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]jiraIssue, len(p.issues))
	for i, is := range p.issues {
		out[i] = *is
		out[i].Comments = append([]map[string]any(nil), is.Comments...)
	}
	return out
}

// withLabel returns the issues carrying label.
func (p *jiraPeer) withLabel(label string) []jiraIssue {
	var out []jiraIssue
	for _, is := range p.snapshot() {
		for _, l := range is.Labels {
			if l == label {
				out = append(out, is)
			}
		}
	}
	return out
}

// TestSupportTrackerIntegration connects a loopback Jira-compatible tracker
// to the demo customer's tickets through the HTTP API on the real stack
// (API, dispatcher, Temporal, worker), one stack for every subtest: the
// token is never answered and the test call reaches the tracker; a new
// ticket becomes exactly one issue although the tracker fails the first
// creation after storing it (the retry finds it by label), with the mapped
// priority and its key in vendor_ticket; a customer-visible comment
// reaches the issue once and an internal note never; a comment added in
// the tracker arrives on the ticket once and is not echoed back; the
// issue's status shows on the link.
func TestSupportTrackerIntegration(t *testing.T) {
	p := startPlatform(t, platformOptions{queuePrefix: "support-tracker", keys: demoLiveKey | otherLiveKey,
		settings: env{"TRACKER_POLL_INTERVAL": "1s"}})
	const base = "/v1/support/integrations/tracker"
	const token = "tok-integration-secret-7Q2x"
	peer := newJiraPeer(t, "support-bot", token)
	staff := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(p.store).EnsureAPIKey(context.Background(), p.demo.Provider.ID, staff, "staff", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}

	var created struct {
		Integration struct {
			ID            string `json:"id"`
			APITokenSet   bool   `json:"api_token_set"`
			APITokenLast4 string `json:"api_token_last4"`
		} `json:"integration"`
	}
	body := map[string]any{"tracker_url": peer.srv.URL, "username": "support-bot", "api_token": token, "project_key": "OPS",
		"sync_settings": map[string]any{"create_tracker_issues": true, "sync_comments": true,
			"priority_mapping": map[string]string{"critical": "P1", "high": "P2"}}}
	if st := p.do("POST", base, p.liveKey, body, &created); st != http.StatusCreated || !created.Integration.APITokenSet || created.Integration.APITokenLast4 != "7Q2x" {
		t.Fatalf("create: %d %+v", st, created)
	}
	id := created.Integration.ID

	t.Run("token never answered, test call, tenant isolation", func(t *testing.T) {
		var raw map[string]any
		p.do("GET", base+"/"+id, p.liveKey, nil, &raw)
		if b, _ := json.Marshal(raw); strings.Contains(string(b), token) || strings.Contains(string(b), "api_token\"") {
			t.Fatalf("the token is answered: %s", b)
		}
		var test struct {
			Connected  bool   `json:"connected"`
			StatusCode *int   `json:"status_code"`
			Account    string `json:"account"`
		}
		if st := p.do("POST", base+"/"+id+"/test", p.liveKey, nil, &test); st != http.StatusOK || !test.Connected || test.Account != "Support Bot" {
			t.Fatalf("test: %d %+v", st, test)
		}
		var bad struct {
			Integration struct{ ID string } `json:"integration"`
		}
		wrong := map[string]any{"tracker_url": peer.srv.URL, "username": "support-bot", "api_token": "wrong-token", "project_key": "OPS", "active": false,
			"sync_settings": map[string]any{"create_tracker_issues": true}}
		if st := p.do("POST", base, p.liveKey, wrong, &bad); st != http.StatusCreated {
			t.Fatalf("create the paused one: %d", st)
		}
		if st := p.do("POST", base+"/"+bad.Integration.ID+"/test", p.liveKey, nil, &test); st != http.StatusOK || test.Connected || test.StatusCode == nil || *test.StatusCode != 401 {
			t.Fatalf("test with a wrong token: %d %+v", st, test)
		}
		if st := p.do("GET", base+"/"+id, p.otherKey, nil, nil); st != http.StatusNotFound {
			t.Fatalf("another organization reads it: %d", st)
		}
	})

	var ticket supportTicket
	var issueKey string
	t.Run("one issue per ticket although the first creation failed", func(t *testing.T) {
		var c struct {
			Ticket supportTicket `json:"ticket"`
		}
		if st := p.do("POST", "/v1/support/tickets", p.liveKey, map[string]any{"title": "Packet loss on the uplink", "description": "Seen from the NOC",
			"category": "network", "subcategory": "connectivity", "priority": "high"}, &c); st != http.StatusCreated {
			t.Fatalf("create a ticket: %d", st)
		}
		ticket = c.Ticket
		var got struct {
			Ticket struct {
				VendorTicket string `json:"vendor_ticket"`
			} `json:"ticket"`
		}
		waitFor(t, "the ticket's issue key", func() bool {
			p.do("GET", "/v1/support/tickets/"+ticket.ID, p.liveKey, nil, &got)
			return got.Ticket.VendorTicket != ""
		})
		issues := peer.withLabel("tp-" + ticket.ID)
		if len(issues) != 1 || issues[0].Key != got.Ticket.VendorTicket || issues[0].Priority != "P2" ||
			issues[0].Summary != ticket.Number+": Packet loss on the uplink" || !strings.Contains(issues[0].Description, "Seen from the NOC") {
			t.Fatalf("issues %+v, vendor_ticket %q", issues, got.Ticket.VendorTicket)
		}
		issueKey = issues[0].Key
		var links struct {
			Links []struct {
				TicketID string `json:"ticket_id"`
				IssueKey string `json:"issue_key"`
				Adopted  bool   `json:"adopted"`
				Priority string `json:"priority"`
			} `json:"links"`
		}
		p.do("GET", base+"/"+id+"/links", p.liveKey, nil, &links)
		if len(links.Links) != 1 || links.Links[0].TicketID != ticket.ID || links.Links[0].IssueKey != issueKey || !links.Links[0].Adopted || links.Links[0].Priority != "P2" {
			t.Fatalf("links %+v", links)
		}
	})

	t.Run("comments both ways, once", func(t *testing.T) {
		if issueKey == "" {
			t.Skip("no issue")
		}
		path := "/v1/support/tickets/" + ticket.ID + "/comments"
		if st := p.do("POST", path, staff, map[string]any{"content": "Internal: suspect the line card.", "type": "internal_note", "visibility": "internal"}, nil); st != http.StatusCreated {
			t.Fatalf("internal note: %d", st)
		}
		if st := p.do("POST", path, p.liveKey, map[string]any{"content": "Still dropping 5% of packets."}, nil); st != http.StatusCreated {
			t.Fatalf("customer comment: %d", st)
		}
		comments := func() []map[string]any { return peer.withLabel("tp-" + ticket.ID)[0].Comments }
		waitFor(t, "the customer comment on the issue", func() bool { return len(comments()) == 1 })
		peer.mu.Lock()
		peer.addComment(peer.issue(issueKey), "Network Ops", "Line card replaced; please check again.")
		peer.issue(issueKey).Status = "In Progress"
		peer.mu.Unlock()
		type listed struct {
			Comments []struct {
				Content    string `json:"content"`
				Visibility string `json:"visibility"`
				Author     struct {
					Type string `json:"type"`
					Name string `json:"name"`
				} `json:"author"`
			} `json:"comments"`
		}
		var l listed
		waitFor(t, "the tracker's comment on the ticket", func() bool {
			p.do("GET", path, p.liveKey, nil, &l)
			for _, c := range l.Comments {
				if c.Content == "Line card replaced; please check again." {
					return c.Visibility == "customer" && c.Author.Type == "agent"
				}
			}
			return false
		})
		var links struct {
			Links []struct {
				Status *string `json:"status"`
			} `json:"links"`
		}
		waitFor(t, "the issue's status on the link", func() bool {
			p.do("GET", base+"/"+id+"/links", p.liveKey, nil, &links)
			return len(links.Links) == 1 && links.Links[0].Status != nil && *links.Links[0].Status == "In Progress"
		})
		time.Sleep(2500 * time.Millisecond) // more than two polls and rounds
		got := comments()
		if len(got) != 2 || !strings.Contains(got[0]["body"].(string), "Still dropping 5% of packets.") {
			t.Fatalf("issue comments %+v", got)
		}
		for _, c := range got {
			if strings.Contains(c["body"].(string), "line card.") {
				t.Fatalf("the internal note reached the tracker: %+v", got)
			}
		}
		p.do("GET", path, p.liveKey, nil, &l)
		n := 0
		for _, c := range l.Comments {
			if c.Content == "Line card replaced; please check again." {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("the tracker's comment arrived %d times: %+v", n, l.Comments)
		}
		if peer.snapshot()[0].Key != issueKey || len(peer.snapshot()) != 1 {
			t.Fatalf("extra issues: %+v", peer.snapshot())
		}
	})
}
