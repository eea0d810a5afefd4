package support_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// TestKnowledgeFullTextSearch runs the full-text search of the database in
// use (SQLite FTS5 or PostgreSQL text search): stemming, weights, drafts
// left out, the index kept in step with edits.
func TestKnowledgeFullTextSearch(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	s := support.NewStore(core)
	admin := &models.Principal{OrganizationID: seeded.Provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	customer := &models.Principal{OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	str := func(v string) *string { return &v }
	published := support.ArticlePublished
	add := func(title, body string, tags []string, status string) string {
		a, err := s.CreateArticle(ctx, admin, support.ArticleInput{Title: str(title), Body: str(body), Category: str("network"), Tags: &tags, Status: &status})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		return a.ID
	}
	if _, err := s.CreateArticle(ctx, customer, support.ArticleInput{}); models.ErrorCode(err) != models.CodeInsufficientPermissions {
		t.Fatalf("a customer creates an article: %v", err)
	}
	body := add("Fiber", "A fiber cut.", nil, published)
	tags := add("Outages", "What to do.", []string{"fiber"}, published)
	title := add("Fiber outage", "Cut cables.", nil, published)
	draft := add("Fiber fiber", "fiber", []string{"fiber"}, "draft") // never listed
	tests := []struct {
		q    string
		want []string
	}{
		{"fiber", []string{body, title, tags}},        // 3+1, 3, 2
		{"OUTAGE", []string{title, tags}},             // 3 and 3 ("Outages"): the newer first
		{"fiber outage", []string{title, tags, body}}, // 3+3, 2+3, 3+1
		{"nothing-here", nil},
	}
	for _, tc := range tests {
		hits, total, err := s.SearchArticles(ctx, support.KnowledgeSearch{Query: tc.q}, models.PageRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if !slices.Equal(ids, tc.want) || total != int64(len(tc.want)) || slices.Contains(ids, draft) {
			t.Errorf("%q: %v (total %d), want %v", tc.q, ids, total, tc.want)
		}
	}
	// The index follows edits: a new title is found, the old one no longer.
	if _, err := s.UpdateArticle(ctx, admin, title, support.ArticleInput{Title: str("Microwave link fade")}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{"microwave": {title}, "outage": {tags}, "fading": {title}} {
		hits, _, err := s.SearchArticles(ctx, support.KnowledgeSearch{Query: q}, models.PageRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("after the edit, %q: %v, want %v", q, ids, want)
		}
	}
	if _, err := s.GetArticle(ctx, customer, draft); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("a customer reads a draft: %v", err)
	}
}

func TestFeedbackOncePerTicketConcurrently(t *testing.T) {
	ctx := context.Background()
	core, seeded := testenv.SeededStore(t)
	s := support.NewStore(core)
	customer := &models.Principal{OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	tk, err := s.CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general"})
	if err != nil {
		t.Fatal(err)
	}
	if err := core.In(ctx, models.SystemScope()).Model(&support.Ticket{}).Where("id = ?", tk.ID).Update("status", support.StatusResolved).Error; err != nil {
		t.Fatal(err)
	}
	const n = 6
	var wg sync.WaitGroup
	codes := make(chan models.Code, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.SubmitFeedback(ctx, customer, support.FeedbackInput{TicketID: tk.ID, Rating: 4})
			if err != nil {
				codes <- models.ErrorCode(err)
			} else {
				codes <- ""
			}
		}()
	}
	wg.Wait()
	close(codes)
	ok, dup := 0, 0
	for c := range codes {
		switch c {
		case "":
			ok++
		case models.CodeAlreadyExists:
			dup++
		default:
			t.Errorf("code %s", c)
		}
	}
	if ok != 1 || dup != n-1 {
		t.Fatalf("%d stored, %d refused", ok, dup)
	}
}
