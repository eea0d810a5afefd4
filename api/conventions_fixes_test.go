package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// searchPage is a ticket search answer with its cursor.
type searchPage struct {
	Tickets []struct {
		ID string `json:"id"`
	} `json:"tickets"`
	Pagination struct {
		Total      int64   `json:"total"`
		Page       int     `json:"page"`
		Limit      int     `json:"limit"`
		NextCursor *string `json:"next_cursor"`
	} `json:"pagination"`
}

func (p searchPage) ids() []string {
	out := []string{}
	for _, t := range p.Tickets {
		out = append(out, t.ID)
	}
	return out
}

// TestTicketSearchPagesLikeTheList: the ticket search takes limit, offset or
// page, or the cursor of next_cursor, in both forms (DECISIONS 2 and 12).
func TestTicketSearchPagesLikeTheList(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	var all []string // oldest first
	for i := range 5 {
		all = append(all, newTicket(t, h, key, map[string]any{"title": fmt.Sprintf("Search page %d", i)}).Ticket.ID)
	}
	get := func(query string) searchPage {
		t.Helper()
		var out searchPage
		h.do("GET", "/v1/support/tickets/search?sort=created_at:asc&"+query, key, nil).decode(200, &out)
		return out
	}
	post := func(pagination map[string]any) searchPage {
		t.Helper()
		var out searchPage
		h.do("POST", "/v1/support/tickets/search", key, map[string]any{"sort": map[string]any{"field": "created_at", "order": "asc"},
			"pagination": pagination}).decode(200, &out)
		return out
	}
	same := func(name string, got, want []string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}

	t.Run("following next_cursor walks every ticket once", func(t *testing.T) {
		for _, limit := range []int{1, 2, 3} {
			var seen []string
			p := get(fmt.Sprintf("limit=%d", limit))
			for pages := 1; ; pages++ {
				seen = append(seen, p.ids()...)
				if p.Pagination.NextCursor == nil || pages > 10 {
					break
				}
				p = get(fmt.Sprintf("limit=%d&cursor=%s", limit, url.QueryEscape(*p.Pagination.NextCursor)))
			}
			same(fmt.Sprintf("GET limit %d", limit), seen, all)
			seen = nil
			q := post(map[string]any{"limit": limit})
			for pages := 1; ; pages++ {
				seen = append(seen, q.ids()...)
				if q.Pagination.NextCursor == nil || pages > 10 {
					break
				}
				q = post(map[string]any{"limit": limit, "cursor": *q.Pagination.NextCursor})
			}
			same(fmt.Sprintf("POST limit %d", limit), seen, all)
		}
	})
	t.Run("offset and page", func(t *testing.T) {
		same("offset 2", get("limit=2&offset=2").ids(), all[2:4])
		same("offset 1", get("limit=2&offset=1").ids(), all[1:3])
		same("offset 3 limit 3", get("limit=3&offset=3").ids(), all[3:5])
		same("offset past the end", get("offset=9").ids(), nil)
		same("page", get("limit=2&page=3").ids(), all[4:])
		same("per_page", get("per_page=2&page=2").ids(), all[2:4])
		same("POST offset", post(map[string]any{"limit": 2, "offset": 1}).ids(), all[1:3])
		same("POST page", post(map[string]any{"limit": 2, "page": 2}).ids(), all[2:4])
		// A cursor followed with another limit starts where it points.
		c := get("limit=2").Pagination.NextCursor
		same("cursor with another limit", get("limit=3&cursor="+url.QueryEscape(*c)).ids(), all[2:5])
		p := get("limit=2&offset=3")
		if p.Pagination.Total != 5 || p.Pagination.Limit != 2 || p.Pagination.NextCursor != nil {
			t.Fatalf("pagination %+v", p.Pagination)
		}
	})
	t.Run("a bad cursor or offset is 400", func(t *testing.T) {
		wantFields(t, h.do("GET", "/v1/support/tickets/search?cursor=zzz", key, nil), "cursor")
		wantFields(t, h.do("GET", "/v1/support/tickets/search?offset=-1", key, nil), "offset")
		wantFields(t, h.do("POST", "/v1/support/tickets/search", key, map[string]any{"pagination": map[string]any{"cursor": "zzz"}}), "pagination.cursor")
		wantFields(t, h.do("POST", "/v1/support/tickets/search", key, map[string]any{"pagination": map[string]any{"offset": -1}}), "pagination.offset")
	})
}

// TestIdempotencyKeyFollowsTheRoute: every spelling the router serves as
// one endpoint is one idempotency scope; path parameter values keep their
// case.
func TestIdempotencyKeyFollowsTheRoute(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	body := map[string]any{"name": "Idem", "currency": "USD", "billing_email": "billing@example.com"}
	var first struct {
		Account struct{ ID string } `json:"account"`
	}
	h.do("POST", "/v1/billing/accounts", key, body, "Idempotency-Key", "acct-variants").decode(201, &first)
	for _, path := range []string{"/V1/billing/accounts", "/v1/billing/accounts/", "/api/v1/Billing/Accounts", "/API/V1/BILLING/ACCOUNTS/"} {
		var again struct {
			Account struct{ ID string } `json:"account"`
		}
		res := h.do("POST", path, key, body, "Idempotency-Key", "acct-variants").decode(201, &again)
		if res.header.Get("Idempotent-Replayed") != "true" || again.Account.ID != first.Account.ID {
			t.Fatalf("%s: not replayed (%s): %s", path, res.header.Get("Idempotent-Replayed"), res.body)
		}
	}
	var list struct {
		Accounts []struct{ Name string } `json:"accounts"`
	}
	h.do("GET", "/v1/billing/accounts", key, nil).decode(200, &list)
	if len(list.Accounts) != 2 { // the harness's and this one
		t.Fatalf("%d accounts: %+v", len(list.Accounts), list.Accounts)
	}

	// Path parameters: the fixed segments fold, the identifier does not.
	h.do("POST", "/v1/operations/op_CaseTest/cancel", key, nil, "Idempotency-Key", "cancel-case").wantError(404, "NOT_FOUND")
	if res := h.do("POST", "/API/v1/Operations/op_CaseTest/Cancel/", key, nil, "Idempotency-Key", "cancel-case"); res.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("same id, other spelling: not replayed: %d %s", res.status, res.body)
	}
	if res := h.do("POST", "/v1/operations/op_casetest/cancel", key, nil, "Idempotency-Key", "cancel-case"); res.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("an id differing in case got the other id's answer: %s", res.body)
	}
}

// TestBodyMediaTypeAndEncoding: media types in any case, a body needs a
// Content-Type, JSON must be UTF-8, and an operation without a body refuses one.
func TestBodyMediaTypeAndEncoding(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	account := `{"name":"CT","currency":"USD","billing_email":"a@example.com"}`
	cancel := "/v1/operations/op_nosuch/cancel"
	tests := []struct {
		name        string
		method      string
		path        string
		body        any
		contentType string // "" sends none
		status      int
		code        string // "" for a success
	}{
		{"upper-case media type", "POST", "/v1/billing/accounts", account, "APPLICATION/JSON", 201, ""},
		{"mixed case with charset", "POST", "/v1/billing/accounts", account, "Application/Json; charset=UTF-8", 201, ""},
		{"a +json type", "POST", "/v1/billing/accounts", account, "application/merge-patch+json", 201, ""},
		{"another charset", "POST", "/v1/billing/accounts", account, "application/json; charset=ISO-8859-1", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"a form", "POST", "/v1/billing/accounts", account, "application/x-www-form-urlencoded", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"a body without Content-Type", "POST", "/v1/billing/accounts", account, "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"invalid UTF-8", "POST", "/v1/billing/accounts", "{\"name\":\"a\xff\xfeb\",\"currency\":\"USD\",\"billing_email\":\"a@example.com\"}", "application/json", 400, "INVALID_JSON"},
		{"no body, no Content-Type", "POST", cancel, nil, "", 404, "NOT_FOUND"},
		{"no body takes {}", "POST", cancel, `{}`, "application/json", 404, "NOT_FOUND"},
		{"no body takes { } of any type", "POST", cancel, ` { } `, "text/plain", 404, "NOT_FOUND"},
		{"no body: text", "POST", cancel, `please cancel`, "text/plain", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"no body: JSON without Content-Type", "POST", cancel, `{"x":1}`, "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"no body: invalid JSON", "POST", cancel, `{garbage`, "application/json", 400, "INVALID_JSON"},
		{"no body: invalid UTF-8", "POST", cancel, "{\"x\":\"\xff\"}", "application/json", 400, "INVALID_JSON"},
		{"no body: unknown field", "POST", cancel, `{"x":1}`, "application/json", 400, "VALIDATION_ERROR"},
		{"no body: not an object", "POST", cancel, `[]`, "application/json", 400, "VALIDATION_ERROR"},
		{"no body: DELETE", "DELETE", "/v1/webhooks/wh_nosuch", `{"force":true}`, "application/json", 400, "VALIDATION_ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(tc.method, tc.path, key, tc.body, "Content-Type", tc.contentType)
			if tc.code == "" {
				res.decode(tc.status, nil)
				return
			}
			e := res.wantError(tc.status, tc.code)
			switch tc.code {
			case "INVALID_JSON":
				if strings.Contains(tc.name, "UTF-8") && !strings.Contains(e.Error.Message, "not UTF-8") {
					t.Fatalf("message %q does not say the body is not UTF-8", e.Error.Message)
				}
			case "VALIDATION_ERROR":
				if fields, _ := e.Error.Details["fields"].([]any); len(fields) == 0 {
					t.Fatalf("no details.fields: %s", res.body)
				}
			}
		})
	}
	t.Run("the unknown field is named", func(t *testing.T) {
		wantFields(t, h.do("POST", cancel, key, `{"x":1,"reason":"r"}`), "reason", "x")
	})
	t.Run("a refused body does not take the Idempotency-Key", func(t *testing.T) {
		idem := "ct-" + models.RandomString(8)
		h.do("POST", "/v1/billing/accounts", key, account, "Content-Type", "", "Idempotency-Key", idem).wantError(415, "UNSUPPORTED_MEDIA_TYPE")
		res := h.do("POST", "/v1/billing/accounts", key, account, "Content-Type", "application/json", "Idempotency-Key", idem)
		res.decode(201, nil)
		if res.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the corrected retry replayed the refusal")
		}
	})
}

// TestRequestLineErrors: an unknown method and an oversized URL or header
// are answered in the error shape with the headers of every answer.
func TestRequestLineErrors(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	check := func(res *response, status int, code string) errorBody {
		t.Helper()
		e := res.wantError(status, code)
		if e.Metadata == nil || res.header.Get("X-Request-Id") == "" || res.header.Get("X-Request-Id") != e.Error.RequestID {
			t.Fatalf("answer without request id or metadata: %v %s", res.header, res.body)
		}
		return e
	}
	t.Run("unknown method on a path", func(t *testing.T) {
		res := h.do("FOO", "/v1/operations", key, nil)
		check(res, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if allow := res.header.Get("Allow"); !strings.Contains(allow, "GET") {
			t.Fatalf("Allow = %q", allow)
		}
	})
	t.Run("unknown method elsewhere", func(t *testing.T) {
		check(h.do("FOO", "/v1/nowhere", key, nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("Allow for a path in another letter case", func(t *testing.T) {
		res := h.do("DELETE", "/V1/Services/Catalog/", key, nil)
		check(res, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if allow := res.header.Get("Allow"); !strings.Contains(allow, "GET") {
			t.Fatalf("Allow = %q", allow)
		}
	})
	fieldOf := func(e errorBody) string {
		fields, _ := e.Error.Details["fields"].([]any)
		if len(fields) != 1 {
			t.Fatalf("details %v", e.Error.Details)
		}
		return fields[0].(map[string]any)["field"].(string)
	}
	// fasthttp refuses these while reading the request (App.Test would
	// return the error): send them over a socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = h.srv.App.Listener(ln) }()
	t.Cleanup(func() { _ = h.srv.App.Shutdown() })
	raw := func(target string, headers ...string) *response {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		req := "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + key + "\r\n"
		for i := 0; i+1 < len(headers); i += 2 {
			req += headers[i] + ": " + headers[i+1] + "\r\n"
		}
		if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return &response{t: t, status: res.StatusCode, header: res.Header, body: body}
	}
	t.Run("a 9 KB header", func(t *testing.T) {
		e := check(raw("/v1/operations", "X-Padding", strings.Repeat("a", 9<<10)), 400, "VALIDATION_ERROR")
		if fieldOf(e) != "(headers)" || e.Error.Details["limit_bytes"] == nil {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
	t.Run("a 5,000-character URL", func(t *testing.T) {
		e := check(raw("/v1/"+strings.Repeat("a", 5000)), 400, "VALIDATION_ERROR")
		if fieldOf(e) != "(headers)" || !strings.Contains(e.Error.Message, "too large") {
			t.Fatalf("answer %+v", e.Error)
		}
	})
	t.Run("the socket serves ordinary requests", func(t *testing.T) {
		raw("/v1/operations").decode(200, nil)
	})
}

// TestValidationMessagesWithoutGoInternals: numbers a Go field cannot
// hold name their field with its indexes; bounds print as integers.
func TestValidationMessagesWithoutGoInternals(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	issue := func(res *response, field string) string {
		t.Helper()
		e := res.wantError(400, "VALIDATION_ERROR")
		for _, f := range e.Error.Details["fields"].([]any) {
			if m := f.(map[string]any); m["field"] == field {
				if s := string(res.body); strings.Contains(s, "Go ") || strings.Contains(s, "json: ") || strings.Contains(s, "e+") {
					t.Fatalf("internals leaked: %s", s)
				}
				return m["issue"].(string)
			}
		}
		t.Fatalf("no issue for %s: %s", field, res.body)
		return ""
	}
	tests := []struct {
		name, body, field, want string
	}{
		{"order", `{"name":"x","steps":[{"order":1,"action":"wait"},{"order":99999999999999999999,"action":"wait"}]}`,
			"steps[1].order", "is out of range: must be at most 9223372036854775807"},
		{"first step", `{"name":"x","steps":[{"order":99999999999999999999,"action":"wait"}]}`,
			"steps[0].order", "is out of range: must be at most 9223372036854775807"},
		{"depends_on", `{"name":"x","steps":[{"order":1,"action":"wait"},{"order":2,"action":"wait","depends_on":[1,-99999999999999999999]}]}`,
			"steps[1].depends_on[1]", "is out of range: must be at least -9223372036854775808"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := issue(h.do("POST", "/v1/services/orchestration/workflows", key, tc.body), tc.field); got != tc.want {
				t.Fatalf("issue %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("bounds print as integers", func(t *testing.T) {
		if got := issue(h.do("GET", "/v1/auth/api-keys?offset=2147483648", key, nil), "offset"); got != "expected number <= 2147483647" {
			t.Fatalf("issue %q", got)
		}
	})
}
