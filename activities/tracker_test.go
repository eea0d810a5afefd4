package activities_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/tracker"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// miniTracker is a loopback Jira-compatible tracker with one project: it
// keeps issues and comments, counts requests by "METHOD path", and fails
// (after doing the work) the calls listed in failAfter once each, or
// refuses every call with refuse.
type miniTracker struct {
	srv       *httptest.Server
	mu        sync.Mutex
	calls     map[string]int
	failAfter map[string]bool
	refuse    int
	labels    map[string]string // label -> key
	comments  map[string][]map[string]any
}

func newMiniTracker(t *testing.T) *miniTracker {
	t.Helper()
	m := &miniTracker{calls: map[string]int{}, failAfter: map[string]bool{}, labels: map[string]string{}, comments: map[string][]map[string]any{}}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		call := r.Method + " " + r.URL.Path
		m.calls[call]++
		w.Header().Set("Content-Type", "application/json")
		if m.refuse != 0 {
			w.WriteHeader(m.refuse)
			_, _ = w.Write([]byte(`{"errorMessages":["project OPS does not exist"]}`))
			return
		}
		var out any
		switch {
		case call == "POST /rest/api/2/search":
			var q struct{ JQL string }
			_ = json.NewDecoder(r.Body).Decode(&q)
			issues := []any{}
			for label, key := range m.labels {
				if strings.Contains(q.JQL, `"`+label+`"`) {
					issues = append(issues, map[string]any{"id": "1", "key": key})
				}
			}
			out = map[string]any{"issues": issues}
		case call == "POST /rest/api/2/issue":
			var b struct {
				Fields struct{ Labels []string }
			}
			_ = json.NewDecoder(r.Body).Decode(&b)
			key := "OPS-" + string(rune('0'+len(m.labels)+1))
			m.labels[b.Fields.Labels[0]] = key
			out = map[string]any{"id": "1", "key": key}
		case strings.HasSuffix(r.URL.Path, "/comment"):
			key := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/rest/api/2/issue/"), "/comment")
			if r.Method == "POST" {
				var b struct{ Body string }
				_ = json.NewDecoder(r.Body).Decode(&b)
				c := map[string]any{"id": key + "-c" + string(rune('0'+len(m.comments[key])+1)), "body": b.Body, "author": map[string]any{"displayName": "bot"}}
				m.comments[key] = append(m.comments[key], c)
				out = c
			} else {
				out = map[string]any{"total": len(m.comments[key]), "comments": append([]map[string]any{}, m.comments[key]...)}
			}
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/rest/api/2/issue/"):
			out = map[string]any{"id": "1", "key": "OPS-1", "fields": map[string]any{"status": map[string]any{"name": "Done"}}}
		default:
			w.WriteHeader(404)
			return
		}
		if m.failAfter[call] {
			delete(m.failAfter, call)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *miniTracker) count(call string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[call]
}

// TestTrackerActivitiesRetryNeverDuplicates: an issue created and a
// comment posted whose answers were lost are found again by the retry
// (label, reference) instead of being made twice; a done item makes no
// call; internal notes are never posted; a tracker comment is imported
// once; a refusal is non-retryable and noted on the integration.
func TestTrackerActivitiesRetryNeverDuplicates(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	s := support.NewStore(core)
	peer := newMiniTracker(t)
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	c, err := s.CreateTrackerIntegration(ctx, customer, support.TrackerSpec{TrackerURL: peer.srv.URL, Username: "bot", APIToken: "tok", ProjectKey: "OPS",
		CreateIssues: true, SyncComments: true, Active: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "Link down", Description: "d", Category: "general", Priority: "critical"})
	if err != nil {
		t.Fatal(err)
	}
	a := activities.NewTracker(core, tracker.NewClient(webhooks.NewClient(true)), nil, "https://api.example.com")
	ref := func(id string) workflows.TrackerRef {
		return workflows.TrackerRef{IntegrationID: c.ID, OrganizationID: c.OrganizationID, Environment: c.Environment, ItemID: id}
	}

	peer.failAfter["POST /rest/api/2/issue"] = true
	var appErr *temporal.ApplicationError
	if _, err := a.EnsureIssue(ctx, ref(tk.ID)); !errors.As(err, &appErr) || appErr.NonRetryable() {
		t.Fatalf("first attempt: %v", err)
	}
	res, err := a.EnsureIssue(ctx, ref(tk.ID))
	if err != nil || res.Key != "OPS-1" || !res.Adopted || peer.count("POST /rest/api/2/issue") != 1 {
		t.Fatalf("retry: %+v %v, %d creations", res, err, peer.count("POST /rest/api/2/issue"))
	}
	searches := peer.count("POST /rest/api/2/search")
	if res, err := a.EnsureIssue(ctx, ref(tk.ID)); err != nil || res.Key != "OPS-1" || peer.count("POST /rest/api/2/search") != searches {
		t.Fatalf("a linked ticket called the tracker: %+v %v", res, err)
	}

	pub, err := s.AddComment(ctx, customer, tk.ID, support.CommentInput{Content: "still down"})
	if err != nil {
		t.Fatal(err)
	}
	peer.failAfter["POST /rest/api/2/issue/OPS-1/comment"] = true
	if err := a.PushComment(ctx, ref(pub.Comment.ID)); err == nil {
		t.Fatal("the lost answer was not a failure")
	}
	for range 2 {
		if err := a.PushComment(ctx, ref(pub.Comment.ID)); err != nil {
			t.Fatal(err)
		}
	}
	if n := peer.count("POST /rest/api/2/issue/OPS-1/comment"); n != 1 || len(peer.comments["OPS-1"]) != 1 ||
		!strings.Contains(peer.comments["OPS-1"][0]["body"].(string), support.TrackerCommentRef(pub.Comment.ID)) {
		t.Fatalf("%d posts, comments %+v", n, peer.comments["OPS-1"])
	}

	prov, err := identity.NewStore(core).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	staff := &models.Principal{ID: "ak_staff", OrganizationID: prov.ID, Environment: models.EnvLive, Role: models.RoleAgent, Permissions: []string{"*"}}
	note, err := s.AddComment(ctx, staff, tk.ID, support.CommentInput{Content: "internal", Type: support.CommentInternalNote, Visibility: support.VisibilityInternal})
	if err != nil {
		t.Fatal(err)
	}
	reads := peer.count("GET /rest/api/2/issue/OPS-1/comment")
	if err := a.PushComment(ctx, ref(note.Comment.ID)); err != nil || peer.count("GET /rest/api/2/issue/OPS-1/comment") != reads || len(peer.comments["OPS-1"]) != 1 {
		t.Fatalf("an internal note reached the tracker: %v", err)
	}

	link, err := s.TrackerLinkOf(ctx, c.Scope(), c.ID, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	peer.mu.Lock()
	peer.comments["OPS-1"] = append(peer.comments["OPS-1"], map[string]any{"id": "ext-1", "body": "card replaced", "author": map[string]any{"displayName": "Ops"}})
	peer.mu.Unlock()
	for i, want := range []int{1, 0} {
		out, err := a.PollLink(ctx, ref(link.ID))
		if err != nil || out.Imported != want || out.Status != "Done" {
			t.Fatalf("poll %d: %+v %v", i, out, err)
		}
	}
	plan, err := a.Plan(ctx, ref(""))
	if err != nil || len(plan.CommentIDs) != 0 || len(plan.TicketIDs) != 0 {
		t.Fatalf("plan after the sync %+v %v", plan, err)
	}

	peer.mu.Lock()
	peer.refuse = http.StatusBadRequest
	peer.mu.Unlock()
	tk2, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "Other", Description: "d", Category: "general"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.EnsureIssue(ctx, ref(tk2.ID)); !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != workflows.TrackerRejectedError {
		t.Fatalf("refused: %v", err)
	}
	got, _ := s.TrackerIntegrationIn(ctx, c.Scope(), c.ID)
	if !strings.Contains(got.LastError, "project OPS does not exist") || got.LastErrorAt == nil {
		t.Fatalf("last error %q", got.LastError)
	}
}
