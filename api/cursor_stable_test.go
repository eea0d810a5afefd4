package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// listAnswer is a page of a list: its items' ids and its pagination.
type listAnswer struct {
	ids   []string
	total int64
	next  string
}

// readList reads GET path?query, whose items are under key.
func readList(t *testing.T, h *harness, apiKey, path, query, key string) listAnswer {
	t.Helper()
	var body map[string]json.RawMessage
	h.do("GET", path+"?"+query, apiKey, nil).decode(http.StatusOK, &body)
	var items []struct {
		ID string `json:"id"`
	}
	var pg struct {
		Total      int64   `json:"total"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(body[key], &items); err != nil {
		t.Fatalf("%s: items %s: %v", path, body[key], err)
	}
	if err := json.Unmarshal(body["pagination"], &pg); err != nil {
		t.Fatalf("%s: pagination %s: %v", path, body["pagination"], err)
	}
	out := listAnswer{total: pg.Total}
	for _, it := range items {
		out.ids = append(out.ids, it.ID)
	}
	if pg.NextCursor != nil {
		out.next = *pg.NextCursor
	}
	return out
}

// checkStablePages reads the first page of path (2 items, with query),
// makes three new items with create, follows next_cursor to the end and
// checks that the pages showed every item there was at the first page
// exactly once, none of the new ones, and the first page's total; then
// that a new first page shows the new items.
func checkStablePages(t *testing.T, h *harness, apiKey, path, query, key string, create func(i int) string) {
	t.Helper()
	if query != "" {
		query += "&"
	}
	before := readList(t, h, apiKey, path, query+"limit=200", key)
	if len(before.ids) < 5 || before.next != "" {
		t.Fatalf("%s: %d items before (next %q): make at least 5, at most 200", path, len(before.ids), before.next)
	}
	first := readList(t, h, apiKey, path, query+"limit=2", key)
	if first.total != int64(len(before.ids)) || first.next == "" {
		t.Fatalf("%s: first page total %d, next %q; want %d items and a next page", path, first.total, first.next, len(before.ids))
	}
	var created []string
	for i := range 3 {
		created = append(created, create(i))
	}
	seen := slices.Clone(first.ids)
	for pg, next := 2, first.next; next != ""; pg++ {
		if pg > len(before.ids) {
			t.Fatalf("%s: more pages than items", path)
		}
		page := readList(t, h, apiKey, path, query+"limit=2&cursor="+url.QueryEscape(next), key)
		if page.total != first.total {
			t.Errorf("%s: page %d total %d, want the first page's %d", path, pg, page.total, first.total)
		}
		seen = append(seen, page.ids...)
		next = page.next
	}
	counts := map[string]int{}
	for _, id := range seen {
		counts[id]++
	}
	for _, id := range before.ids {
		if counts[id] != 1 {
			t.Errorf("%s: %s shown %d times, want once", path, id, counts[id])
		}
	}
	for _, id := range created {
		if counts[id] != 0 {
			t.Errorf("%s: %s, made after the first page, shown by a later page", path, id)
		}
	}
	if len(seen) != len(before.ids) {
		t.Errorf("%s: pages showed %d items, want %d: %v", path, len(seen), len(before.ids), seen)
	}
	again := readList(t, h, apiKey, path, query+"limit=200", key)
	for _, id := range created {
		if !slices.Contains(again.ids, id) {
			t.Errorf("%s: a new first page lacks %s", path, id)
		}
	}
}

// cursorText is the text inside a cursor the API answered.
func cursorText(t *testing.T, c string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		t.Fatalf("cursor %q: %v", c, err)
	}
	return string(raw)
}

// TestCursorPagesIgnoreItemsCreatedLater: following next_cursor from a
// first page of events or support tickets, newest first or in another
// order, shows the items of the first page's moment exactly once, though
// items are created between the pages.
func TestCursorPagesIgnoreItemsCreatedLater(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	newEvent := func(i int) string {
		ev := eventlog.NewEvent("test.cursor", fmt.Sprintf("res_%d", i), nil)
		if err := eventlog.RecordEvent(h.store.In(ctx, scope), ev); err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	newTicket := func(i int) string {
		var out struct {
			Ticket struct{ ID string } `json:"ticket"`
		}
		h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": fmt.Sprintf("ticket %d", i), "description": "d",
			"category": "network", "priority": []string{"low", "medium", "high", "critical"}[i%4]}).decode(http.StatusCreated, &out)
		if out.Ticket.ID == "" {
			t.Fatal("no ticket id")
		}
		return out.Ticket.ID
	}
	for i := range 5 {
		newEvent(100 + i)
		newTicket(i)
	}
	// Another tenant's items made between the pages change nothing either.
	other := func(i int) string {
		h.do("POST", "/v1/support/tickets", h.tenants[1].liveKey, map[string]any{"title": "other", "description": "d", "category": "network", "priority": "low"}).decode(http.StatusCreated, nil)
		return newEvent(200 + i)
	}
	t.Run("events newest first", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/events", "", "events", newEvent)
	})
	t.Run("events by type", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/events", "sort=type:desc", "events", func(i int) string { other(i); return newEvent(300 + i) })
	})
	t.Run("tickets newest first", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/support/tickets", "", "tickets", newTicket)
	})
	t.Run("tickets oldest first", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/support/tickets", "sort=created_at:asc", "tickets", newTicket)
	})
	t.Run("tickets by priority", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/support/tickets", "sort=priority:desc", "tickets", newTicket)
	})
	t.Run("filtered events", func(t *testing.T) {
		checkStablePages(t, h, a.liveKey, "/v1/events", "filter="+url.QueryEscape("type = test.cursor"), "events", newEvent)
	})

	t.Run("graphql connection", func(t *testing.T) {
		const q = `query($after: String) { events(first: 2, after: $after, filter: "type = test.cursor") {
			totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } } }`
		type conn struct {
			TotalCount int
			PageInfo   struct {
				HasNextPage bool
				EndCursor   *string
			}
			Edges []struct {
				Cursor string
				Node   struct{ ID string }
			}
		}
		read := func(after *string) conn {
			t.Helper()
			vars := map[string]any{"after": nil}
			if after != nil {
				vars["after"] = *after
			}
			ans := h.gql(a.liveKey, http.StatusOK, q, vars)
			if len(ans.Errors) > 0 {
				t.Fatalf("errors: %+v", ans.Errors)
			}
			var c conn
			if err := json.Unmarshal(ans.Data["events"], &c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		all := readList(t, h, a.liveKey, "/v1/events", "limit=200&filter="+url.QueryEscape("type = test.cursor"), "events")
		first := read(nil)
		if first.TotalCount != len(all.ids) || !first.PageInfo.HasNextPage || first.PageInfo.EndCursor == nil {
			t.Fatalf("first page: %+v, want %d items", first, len(all.ids))
		}
		// Every edge's cursor is in the first page's snapshot.
		if !strings.Contains(cursorText(t, first.Edges[0].Cursor), ":") || cursorText(t, first.Edges[1].Cursor) != cursorText(t, *first.PageInfo.EndCursor) {
			t.Fatalf("edge cursors %q, %q, end cursor %q", cursorText(t, first.Edges[0].Cursor), cursorText(t, first.Edges[1].Cursor), cursorText(t, *first.PageInfo.EndCursor))
		}
		var created []string
		for i := range 3 {
			created = append(created, newEvent(400+i))
		}
		var seen []string
		for _, e := range first.Edges {
			seen = append(seen, e.Node.ID)
		}
		for c := first; c.PageInfo.HasNextPage; {
			c = read(c.PageInfo.EndCursor)
			if c.TotalCount != first.TotalCount {
				t.Errorf("totalCount %d, want %d", c.TotalCount, first.TotalCount)
			}
			for _, e := range c.Edges {
				seen = append(seen, e.Node.ID)
			}
		}
		slices.Sort(seen)
		want := slices.Sorted(slices.Values(all.ids))
		if !slices.Equal(seen, want) {
			t.Errorf("pages showed %v, want %v (made since: %v)", seen, want, created)
		}
	})

	t.Run("old and bad cursors", func(t *testing.T) {
		all := readList(t, h, a.liveKey, "/v1/events", "limit=200", "events")
		// A cursor of before snapshots is a position; its next cursor
		// starts a snapshot.
		old := readList(t, h, a.liveKey, "/v1/events", "limit=2&cursor="+base64.RawURLEncoding.EncodeToString([]byte("o:2")), "events")
		if !slices.Equal(old.ids, all.ids[2:4]) || old.total != all.total || !strings.HasPrefix(cursorText(t, old.next), "o:4:") {
			t.Errorf("an offset cursor: %+v (next %q), want %v of %d", old, cursorText(t, old.next), all.ids[2:4], all.total)
		}
		for _, raw := range []string{"o:2:x", "o:2:-1", "o:2:1:1", "s:2"} {
			c := base64.RawURLEncoding.EncodeToString([]byte(raw))
			e := h.do("GET", "/v1/events?cursor="+c, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			if !strings.Contains(e.Error.Message, "is not a cursor returned by this API") {
				t.Errorf("%q: %s", raw, e.Error.Message)
			}
		}
	})
}

// TestHeldListsKeepOffsetCursors: a list held whole (an account's payment
// methods) pages with plain offset cursors, as before.
func TestHeldListsKeepOffsetCursors(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	path := "/v1/billing/accounts/" + a.account.ID + "/payment-methods"
	for _, tok := range []string{"tok_visa", "tok_mastercard", "tok_amex"} {
		h.do("POST", path, a.liveKey, map[string]any{"card_token": tok, "billing_address": austinPostal}).decode(http.StatusCreated, nil)
	}
	all := readList(t, h, a.liveKey, path, "limit=200", "payment_methods")
	if len(all.ids) != 3 {
		t.Fatalf("payment methods: %v", all.ids)
	}
	var seen []string
	page := readList(t, h, a.liveKey, path, "limit=1", "payment_methods")
	for i := 1; ; i++ {
		seen = append(seen, page.ids...)
		if page.next == "" {
			break
		}
		if got := cursorText(t, page.next); got != fmt.Sprintf("o:%d", i) {
			t.Fatalf("next cursor %q, want o:%d", got, i)
		}
		page = readList(t, h, a.liveKey, path, "limit=1&cursor="+page.next, "payment_methods")
	}
	if !slices.Equal(seen, all.ids) {
		t.Fatalf("pages showed %v, want %v", seen, all.ids)
	}
}

// TestEveryListFollowsItsCursor: every list of the OpenAPI document (a GET
// taking limit, with the fixtures it needs) read one item at a time
// answers its next pages from next_cursor, as a tenant and as a provider
// administrator, and shows no item twice.
func TestEveryListFollowsItsCursor(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for i := range 3 {
		h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": fmt.Sprintf("t%d", i), "description": "d", "category": "network", "priority": "low"}).decode(http.StatusCreated, nil)
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": fmt.Sprintf("k%d", i), "permissions": []string{"services:read"}}).decode(http.StatusCreated, nil)
	}
	fixtures := map[string]string{"account_id": a.account.ID, "organization_id": a.org.ID}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
		} `json:"paths"`
	}
	h.do("GET", "/openapi.json", "", nil).decode(http.StatusOK, &doc)
	followed := 0
	for path, ops := range doc.Paths {
		op, ok := ops["get"]
		if !ok || !strings.HasPrefix(path, "/v1/") || !slices.ContainsFunc(op.Parameters, func(p struct{ Name, In string }) bool { return p.In == "query" && p.Name == "limit" }) {
			continue
		}
		resolved := pathParam.ReplaceAllStringFunc(path, func(m string) string {
			if v, ok := fixtures[strings.Trim(m, "{}")]; ok {
				return v
			}
			return m
		})
		if strings.Contains(resolved, "{") {
			continue
		}
		for _, key := range []string{a.liveKey, h.adminKey} {
			var seen []string
			next := ""
			for pages := 0; pages < 5; pages++ {
				query := "limit=1"
				if next != "" {
					query += "&cursor=" + url.QueryEscape(next)
				}
				res := h.do("GET", resolved+"?"+query, key, nil)
				if res.status == http.StatusForbidden {
					break
				}
				var body map[string]json.RawMessage
				res.decode(http.StatusOK, &body)
				var pg struct {
					NextCursor *string `json:"next_cursor"`
				}
				_ = json.Unmarshal(body["pagination"], &pg)
				if raw, ok := body["next_cursor"]; ok { // the invoices' own shape
					_ = json.Unmarshal(raw, &pg.NextCursor)
				}
				for k, v := range body {
					var items []struct {
						ID string `json:"id"`
					}
					if k == "pagination" || k == "metadata" || json.Unmarshal(v, &items) != nil {
						continue
					}
					for _, it := range items {
						if it.ID != "" && slices.Contains(seen, it.ID) {
							t.Errorf("%s: %s shown twice", resolved, it.ID)
						}
						seen = append(seen, it.ID)
					}
				}
				if pg.NextCursor == nil {
					break
				}
				next = *pg.NextCursor
				followed++
			}
		}
	}
	if followed < 10 {
		t.Fatalf("only %d next cursors followed", followed)
	}
	t.Logf("%d next cursors followed", followed)
}
