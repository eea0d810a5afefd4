package api_test

import (
	"strings"
	"testing"
	"time"
)

// articleAnswer is the part of an article answer the tests read.
type articleAnswer struct {
	Article struct {
		ID          string   `json:"id"`
		Title       string   `json:"title"`
		Category    string   `json:"category"`
		Tags        []string `json:"tags"`
		Status      string   `json:"status"`
		PublishedAt *string  `json:"published_at"`
	} `json:"article"`
}

// articlesAnswer is a knowledge search answer.
type articlesAnswer struct {
	Articles []struct {
		ID    string `json:"id"`
		Score *int   `json:"score"`
	} `json:"articles"`
	Pagination struct {
		Page    int   `json:"page"`
		PerPage int   `json:"per_page"`
		Total   int64 `json:"total"`
		Pages   int   `json:"pages"`
	} `json:"pagination"`
}

func newArticle(t *testing.T, h *harness, body map[string]any) articleAnswer {
	t.Helper()
	full := map[string]any{"title": "An article", "body": "Some text.", "category": "general"}
	for k, v := range body {
		full[k] = v
	}
	var a articleAnswer
	h.do("POST", "/v1/support/knowledge", h.adminKey, full).decode(201, &a)
	return a
}

func articleIDs(a articlesAnswer) []string {
	ids := make([]string, len(a.Articles))
	for i, x := range a.Articles {
		ids[i] = x.ID
	}
	return ids
}

func TestSupportKnowledgeLifecycleAndPermissions(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	staff, _ := staffKey(t, h) // an agent without support:admin
	body := map[string]any{"title": "Resetting a SIP trunk", "body": "# Steps\n\n1. Reboot.", "category": "voice", "tags": []string{"sip", " sip ", "trunk"}}
	for _, key := range []string{a.liveKey, staff} {
		h.do("POST", "/v1/support/knowledge", key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	art := newArticle(t, h, body)
	if art.Article.Status != "draft" || art.Article.PublishedAt != nil || strings.Join(art.Article.Tags, ",") != "sip,trunk" {
		t.Fatalf("new article: %+v", art.Article)
	}
	path := "/v1/support/knowledge/" + art.Article.ID
	// A draft: staff see it, customers get 404 and do not find it.
	h.do("GET", path, staff, nil).decode(200, nil)
	h.do("GET", path, a.liveKey, nil).wantError(404, "NOT_FOUND")
	var list articlesAnswer
	h.do("GET", "/v1/support/knowledge?q=sip", a.liveKey, nil).decode(200, &list)
	if len(list.Articles) != 0 {
		t.Fatalf("a draft is listed: %+v", list)
	}
	for _, key := range []string{a.liveKey, staff} {
		h.do("PATCH", path, key, map[string]any{"status": "published"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	var pub articleAnswer
	h.do("PATCH", path, h.adminKey, map[string]any{"status": "published"}).decode(200, &pub)
	if pub.Article.Status != "published" || pub.Article.PublishedAt == nil || pub.Article.Title != "Resetting a SIP trunk" {
		t.Fatalf("published: %+v", pub.Article)
	}
	// Published: every tenant and environment reads and finds it.
	for _, key := range []string{a.liveKey, a.testKey, h.tenants[1].liveKey} {
		h.do("GET", path, key, nil).decode(200, nil)
		h.do("GET", "/v1/support/knowledge?q=SIP&category=voice", key, nil).decode(200, &list)
		if len(list.Articles) != 1 || list.Articles[0].ID != art.Article.ID {
			t.Fatalf("search: %+v", list)
		}
	}
	h.do("GET", "/v1/support/knowledge?category=network", a.liveKey, nil).decode(200, &list)
	if len(list.Articles) != 0 {
		t.Fatalf("category filter: %+v", list)
	}
	// Withdrawn: a draft again.
	h.do("PATCH", path, h.adminKey, map[string]any{"status": "draft"}).decode(200, nil)
	h.do("GET", path, a.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("PATCH", "/v1/support/knowledge/kb_nothing", h.adminKey, map[string]any{"title": "x"}).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/support/knowledge/kb_nothing", staff, nil).wantError(404, "NOT_FOUND")
}

func TestSupportKnowledgeValidation(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 201)
	wantFields(t, h.do("POST", "/v1/support/knowledge", h.adminKey, map[string]any{}), "title", "body", "category")
	wantFields(t, h.do("POST", "/v1/support/knowledge", h.adminKey, map[string]any{"title": long, "body": "b", "category": "ai"}), "title")
	wantFields(t, h.do("POST", "/v1/support/knowledge", h.adminKey, map[string]any{"title": "t", "body": " ", "category": "plumbing"}), "body", "category")
	tags := make([]string, 0, 20)
	for i := 0; i < 20; i++ {
		tags = append(tags, strings.Repeat(string(rune('a'+i)), 51))
	}
	wantFields(t, h.do("POST", "/v1/support/knowledge", h.adminKey, map[string]any{"title": "t", "body": "b", "category": "ai", "tags": tags}), "tags")
	h.do("POST", "/v1/support/knowledge", h.adminKey, map[string]any{"title": "t", "body": "b", "category": "ai", "status": "archived"}).wantError(400, "VALIDATION_ERROR")
	art := newArticle(t, h, nil)
	wantFields(t, h.do("PATCH", "/v1/support/knowledge/"+art.Article.ID, h.adminKey, map[string]any{"title": " ", "category": "x"}), "title", "category")
	wantFields(t, h.do("GET", "/v1/support/knowledge?q="+strings.Repeat("w+", 11), h.adminKey, nil), "q")
	wantFields(t, h.do("GET", "/v1/support/knowledge?category=plumbing", h.adminKey, nil), "category")
	wantFields(t, h.do("GET", "/v1/support/knowledge?sort=created_at:desc", h.adminKey, nil), "sort")
}

func TestSupportKnowledgeRanking(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	pub := func(title, text string, tags []string) string {
		a := newArticle(t, h, map[string]any{"title": title, "body": text, "category": "network", "tags": tags, "status": "published"})
		time.Sleep(5 * time.Millisecond) // distinct updated_at
		return a.Article.ID
	}
	bodyOnly := pub("Circuit basics", "Packet loss shows as gaps.", nil)                 // packet 1 + loss 1 = 2
	titleBoth := pub("Packet loss troubleshooting", "Steps for loss on a link.", nil)    // packet 3 + loss 3+1 = 7
	titleOne := pub("Packet capture", "How to capture on the router.", nil)              // packet 3 = 3
	tagged := pub("Jitter", "Voice quality on busy links.", []string{"packet-loss"})     // packet 2 + loss 2 = 4
	older := pub("Circuit basics, again", "Packet loss shows as gaps.", nil)             // 2, updated after bodyOnly
	_ = pub("Billing cycles", "When invoices are sent. 100% on time, under_score.", nil) // no match
	wildcard := pub("Uptime of 100% explained", "Why a 100% SLA is not promised.", nil)  // "100%" literal
	var list articlesAnswer
	h.do("GET", "/v1/support/knowledge?q=Packet+LOSS", key, nil).decode(200, &list)
	want := []string{titleBoth, tagged, titleOne, older, bodyOnly}
	if strings.Join(articleIDs(list), ",") != strings.Join(want, ",") {
		t.Fatalf("ranking %v, want %v", articleIDs(list), want)
	}
	scores := []int{}
	for _, a := range list.Articles {
		scores = append(scores, *a.Score)
	}
	if len(scores) != 5 || scores[0] != 7 || scores[1] != 4 || scores[2] != 3 || scores[3] != 2 || scores[4] != 2 {
		t.Fatalf("scores %v", scores)
	}
	if list.Pagination.Total != 5 || list.Pagination.Pages != 1 {
		t.Fatalf("pagination %+v", list.Pagination)
	}
	// Pages cut the ranking.
	h.do("GET", "/v1/support/knowledge?q=packet+loss&limit=2&page=2", key, nil).decode(200, &list)
	if strings.Join(articleIDs(list), ",") != titleOne+","+older || list.Pagination.Total != 5 || list.Pagination.Pages != 3 || list.Pagination.Page != 2 {
		t.Fatalf("page 2: %v %+v", articleIDs(list), list.Pagination)
	}
	// LIKE wildcards in the query are literal characters.
	h.do("GET", "/v1/support/knowledge?q=100%25", key, nil).decode(200, &list)
	if len(list.Articles) != 2 || list.Articles[0].ID != wildcard {
		t.Fatalf("100%%: %v", articleIDs(list))
	}
	h.do("GET", "/v1/support/knowledge?q=a_b", key, nil).decode(200, &list)
	if len(list.Articles) != 0 {
		t.Fatalf("_ matched as a wildcard: %v", articleIDs(list))
	}
	// Without q: every published article, the most recently updated first, no score.
	h.do("GET", "/v1/support/knowledge?limit=1", key, nil).decode(200, &list)
	if len(list.Articles) != 1 || list.Articles[0].ID != wildcard || list.Articles[0].Score != nil || list.Pagination.Total != 7 {
		t.Fatalf("no q: %+v", list)
	}
}
