package api_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/redisconn"
)

// stfOpenRawStream opens an operation's event stream on a raw TCP
// connection to base and returns the connection once the stream's first
// line (the retry hint) arrived.
func stfOpenRawStream(t *testing.T, base, path, key string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	req := "GET " + path + " HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer " + key + "\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	status, err := r.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("stream refused: %q %v", status, err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream did not start: %v", err)
		}
		if strings.Contains(line, "retry:") {
			return conn
		}
	}
}

// stfPollUntil calls cond until it holds and returns how long that took,
// or fails the test after limit.
func stfPollUntil(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s", what, limit)
	return 0
}

// TestOperationStreamFreesItsSlotsSoonAfterTheClientLeaves: a client that
// closes its connection to an operation's event stream gets its
// organization's concurrency slot (and its place among the tenant's open
// streams) back within seconds: the idle stream writes a ":" probe twice a
// second and ends at the first failed one. It used to keep both until a
// 15-second keep-alive failed, 30 seconds or more.
func TestOperationStreamFreesItsSlotsSoonAfterTheClientLeaves(t *testing.T) {
	t.Run("concurrency slot", func(t *testing.T) {
		rdb, _, closeFn, err := redisconn.Open(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closeFn() })
		h := newHarness(t)
		h.streamServer(rdb, 0)
		a := h.tenants[0]
		h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"plan": "custom",
			"custom_limits": map[string]any{"hourly": 10000, "burst": 1000, "concurrent": 1}}).decode(200, nil)
		base := h.listen(t)
		op := h.runningOperation(t)

		conn := stfOpenRawStream(t, base, "/v1/operations/"+op, a.liveKey)
		h.do("GET", "/v1/services/catalog", a.liveKey, nil).wantError(429, "CONCURRENCY_LIMIT_EXCEEDED")
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
		took := stfPollUntil(t, 10*time.Second, "the stream's concurrency slot is free again", func() bool {
			return h.do("GET", "/v1/services/catalog", a.liveKey, nil).status == http.StatusOK
		})
		t.Logf("slot free %s after the client closed its connection", took.Round(100*time.Millisecond))
	})
	t.Run("stream place, without Redis", func(t *testing.T) {
		h := newHarness(t)
		h.streamServer(nil, 1)
		a := h.tenants[0]
		base := h.listen(t)
		op := h.runningOperation(t)

		conn := stfOpenRawStream(t, base, "/v1/operations/"+op, a.liveKey)
		if res, _ := openStream(t, base, "/v1/operations/"+op, a.liveKey); res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("second stream: %d, want 429", res.StatusCode)
		}
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
		stfPollUntil(t, 10*time.Second, "the stream's place is free again", func() bool {
			req, _ := http.NewRequest("GET", base+"/v1/operations/"+op, nil)
			req.Header.Set("Authorization", "Bearer "+a.liveKey)
			req.Header.Set("Accept", "text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	})
}

// TestOperationStreamProbesAnIdleConnection: an idle operation stream
// writes a ":" comment line about twice a second, which Server-Sent Events
// clients ignore.
func TestOperationStreamProbesAnIdleConnection(t *testing.T) {
	h := newHarness(t)
	h.streamServer(nil, 0)
	base := h.listen(t)
	op := h.runningOperation(t)
	res, r := openStream(t, base, "/v1/operations/"+op, h.tenants[0].liveKey)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	got := make(chan string, 1)
	go func() {
		var seen strings.Builder
		for {
			line, err := r.ReadString('\n')
			seen.WriteString(line)
			if err != nil || line == ":\n" {
				got <- seen.String()
				return
			}
		}
	}()
	select {
	case s := <-got:
		if !strings.HasSuffix(s, ":\n") || !strings.Contains(s, "event: operation") {
			t.Fatalf("no probe after the operation event: %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no probe line within 5 seconds")
	}
}

// stfFieldIssue returns the issue of field in a VALIDATION_ERROR's
// details.fields ("" when it names none).
func stfFieldIssue(e errorBody, field string) string {
	fields, _ := e.Error.Details["fields"].([]any)
	for _, f := range fields {
		if m, _ := f.(map[string]any); m["field"] == field {
			s, _ := m["issue"].(string)
			return s
		}
	}
	return ""
}

// stfTemplates is the answer of GET /v1/services/provision/templates.
type stfTemplates struct {
	Templates []struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		CatalogServiceID string `json:"catalog_service_id"`
		ServiceType      string `json:"service_type"`
		Bandwidth        string `json:"bandwidth"`
		SandboxOnly      bool   `json:"sandbox_only"`
	} `json:"templates"`
	Pagination *struct {
		Page       int     `json:"page"`
		PerPage    int     `json:"per_page"`
		Total      int64   `json:"total"`
		Pages      int     `json:"pages"`
		NextCursor *string `json:"next_cursor"`
	} `json:"pagination"`
}

// ids returns the listed templates' ids.
func (l *stfTemplates) ids() []string {
	out := make([]string, len(l.Templates))
	for i, t := range l.Templates {
		out[i] = t.ID
	}
	return out
}

// TestProvisioningTemplatesIsAStandardList: the templates list answers
// `templates` with `pagination`, pages with limit, page, offset and
// cursor, sorts by its documented fields, and refuses out-of-range
// values with 400 VALIDATION_ERROR, as every list does.
func TestProvisioningTemplatesIsAStandardList(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	const path = "/v1/services/provision/templates"
	list := func(key, query string) *stfTemplates {
		t.Helper()
		var l stfTemplates
		h.do("GET", path+query, key, nil).decode(http.StatusOK, &l)
		if l.Pagination == nil {
			t.Fatalf("GET %s%s: no pagination", path, query)
		}
		return &l
	}

	all := list(a.liveKey, "")
	n := len(all.Templates)
	if n < 3 || all.Pagination.Total != int64(n) || all.Pagination.Page != 1 || all.Pagination.PerPage != 50 ||
		all.Pagination.Pages != 1 || all.Pagination.NextCursor != nil {
		t.Fatalf("default page: %d templates, pagination %+v", n, *all.Pagination)
	}
	for _, tpl := range all.Templates {
		if tpl.ID == "" || tpl.Name == "" || tpl.CatalogServiceID == "" || tpl.ServiceType == "" || tpl.Bandwidth == "" || tpl.SandboxOnly {
			t.Fatalf("live template: %+v", tpl)
		}
	}
	if !slices.Contains(all.ids(), "internet-dedicated-1g") {
		t.Fatalf("templates: %v", all.ids())
	}

	// Pages: limit with page, offset or the cursor of the page before.
	first := list(a.liveKey, "?limit=2")
	if !slices.Equal(first.ids(), all.ids()[:2]) || first.Pagination.NextCursor == nil || first.Pagination.Pages != (n+1)/2 || first.Pagination.Total != int64(n) {
		t.Fatalf("first page: %v %+v", first.ids(), *first.Pagination)
	}
	second := list(a.liveKey, "?limit=2&cursor="+url.QueryEscape(*first.Pagination.NextCursor))
	if !slices.Equal(second.ids(), all.ids()[2:min(4, n)]) || second.Pagination.Page != 2 {
		t.Fatalf("second page by cursor: %v %+v", second.ids(), *second.Pagination)
	}
	if byPage := list(a.liveKey, "?per_page=2&page=2"); !slices.Equal(byPage.ids(), second.ids()) {
		t.Fatalf("second page by page: %v", byPage.ids())
	}
	if byOffset := list(a.liveKey, "?limit=2&offset=2"); !slices.Equal(byOffset.ids(), second.ids()) {
		t.Fatalf("second page by offset: %v", byOffset.ids())
	}
	if past := list(a.liveKey, "?offset=1000"); len(past.Templates) != 0 || past.Pagination.Total != int64(n) {
		t.Fatalf("past the end: %v %+v", past.ids(), *past.Pagination)
	}

	// Sorting.
	sorted := slices.Clone(all.ids())
	slices.Sort(sorted)
	if got := list(a.liveKey, "?sort=id:asc").ids(); !slices.Equal(got, sorted) {
		t.Fatalf("sort=id:asc: %v, want %v", got, sorted)
	}
	slices.Reverse(sorted)
	if got := list(a.liveKey, "?sort=id:desc").ids(); !slices.Equal(got, sorted) {
		t.Fatalf("sort=id:desc: %v, want %v", got, sorted)
	}
	byType := list(a.liveKey, "?sort=service_type,id:desc")
	for i := 1; i < len(byType.Templates); i++ {
		p, c := byType.Templates[i-1], byType.Templates[i]
		if p.ServiceType > c.ServiceType || (p.ServiceType == c.ServiceType && p.ID < c.ID) {
			t.Fatalf("sort=service_type,id:desc: %v", byType.ids())
		}
	}

	// Sandbox keys also see the sandbox templates.
	if sandbox := list(a.testKey, ""); sandbox.Pagination.Total <= int64(n) {
		t.Fatalf("sandbox: %d templates, live %d", sandbox.Pagination.Total, n)
	}

	for _, q := range []string{"limit=201", "limit=abc", "limit=0", "per_page=500", "offset=-1", "page=0", "cursor=nope",
		"sort=zzz", "sort=id:up", "sort=name,password:desc"} {
		t.Run(q, func(t *testing.T) {
			e := h.do("GET", path+"?"+q, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			if strings.HasPrefix(q, "sort=zzz") || strings.HasPrefix(q, "sort=name,") {
				if issue := stfFieldIssue(e, "sort"); !strings.HasPrefix(issue, "cannot sort by") ||
					!strings.HasSuffix(issue, "sortable fields: catalog_service_id, id, name, service_type") {
					t.Fatalf("sort issue %q", issue)
				}
			}
		})
	}
}

// TestIfMatchIsIgnoredAndIfNoneMatchWorksInABatch pins what docs/api.md
// and docs/batch.md say of conditional headers: If-Match is not
// implemented (a write with a tag that matches nothing is applied, alone
// or as a batch item), and If-None-Match answers a batch item 304 with a
// null body when the tag matches.
func TestIfMatchIsIgnoredAndIfNoneMatchWorksInABatch(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	prefs := "/v1/billing/accounts/" + a.account.ID + "/preferences"
	acct := "/v1/billing/accounts/" + a.account.ID
	h.do("PUT", prefs, a.liveKey, map[string]any{"invoice_delivery": "portal"}, "If-Match", `"nope"`).decode(http.StatusOK, nil)
	if body := string(h.do("GET", acct, a.liveKey, nil).body); !strings.Contains(body, `"invoice_delivery":"portal"`) {
		t.Fatalf("the write with If-Match was not applied: %s", body)
	}

	etag := h.do("GET", acct, a.liveKey, nil).header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	ans := h.batch(a.liveKey, map[string]any{"requests": []map[string]any{
		{"id": "put", "method": "PUT", "path": prefs, "body": map[string]any{"invoice_delivery": "email"}, "headers": map[string]string{"If-Match": `"nope"`}},
		{"id": "same", "method": "GET", "path": acct, "depends_on": []string{"put"}, "headers": map[string]string{"If-None-Match": `"nope"`}},
	}})
	if status, _, raw, _ := ans.item(t, "put"); status != http.StatusOK {
		t.Fatalf("PUT item with If-Match: %d %s", status, raw)
	}
	status, _, raw, headers := ans.item(t, "same")
	if status != http.StatusOK || !strings.Contains(string(raw), `"invoice_delivery":"email"`) {
		t.Fatalf("GET item after the PUT item: %d %s", status, raw)
	}
	current := headers["ETag"]
	if current == "" || current == etag {
		t.Fatalf("ETag %q after the change, %q before", current, etag)
	}
	ans = h.batch(a.liveKey, map[string]any{"requests": []map[string]any{
		{"id": "cached", "method": "GET", "path": acct, "headers": map[string]string{"If-None-Match": current}},
	}})
	if status, _, raw, _ := ans.item(t, "cached"); status != http.StatusNotModified || (len(raw) != 0 && string(raw) != "null") {
		t.Fatalf("GET item with a matching If-None-Match: %d %s", status, raw)
	}
}
