package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/redisconn"
)

// batchAnswer is the answer of POST /v1/batch.
type batchAnswer struct {
	Atomic    bool  `json:"atomic"`
	Committed *bool `json:"committed"`
	Responses []struct {
		ID      string            `json:"id"`
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"responses"`
	res *response
}

// item returns the answer of the item with id.
func (b *batchAnswer) item(t *testing.T, id string) (status int, body errorBody, raw json.RawMessage, headers map[string]string) {
	t.Helper()
	for _, r := range b.Responses {
		if r.ID == id {
			_ = json.Unmarshal(r.Body, &body)
			return r.Status, body, r.Body, r.Headers
		}
	}
	t.Fatalf("no answer for item %q in %s", id, b.res.body)
	return 0, body, nil, nil
}

// want checks an item's status and, for errors, its code.
func (b *batchAnswer) want(t *testing.T, id string, status int, code string) json.RawMessage {
	t.Helper()
	st, e, raw, _ := b.item(t, id)
	if st != status || e.Error.Code != code {
		t.Fatalf("item %q: %d %q, want %d %q; answer %s", id, st, e.Error.Code, status, code, b.res.body)
	}
	if code != "" && (e.Error.Message == "" || e.Error.RequestID == "") {
		t.Fatalf("item %q: error without message or request_id: %s", id, raw)
	}
	return raw
}

// batch sends a batch and decodes its 200 answer.
func (h *harness) batch(key string, body any, headers ...string) *batchAnswer {
	h.t.Helper()
	res := h.do("POST", "/v1/batch", key, body, headers...)
	var b batchAnswer
	res.decode(http.StatusOK, &b)
	b.res = res
	return &b
}

// accountID reads the id of a billing account's answer.
func accountID(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var a struct {
		Account struct{ ID string } `json:"account"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Account.ID == "" {
		t.Fatalf("not an account: %s", raw)
	}
	return a.Account.ID
}

func TestBatchMixedItems(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	acct := map[string]any{"name": "Batch account", "currency": "USD", "billing_email": "batch@example.com"}
	ans := h.batch(a.liveKey, map[string]any{"requests": []map[string]any{
		{"id": "create", "method": "POST", "path": "/v1/billing/accounts", "body": acct},
		{"id": "get", "method": "GET", "path": "/v1/billing/accounts/{{create.body.account.id}}", "depends_on": []string{"create"}},
		{"id": "list", "method": "GET", "path": "/api/v1/billing/accounts?limit=100", "depends_on": []string{"create"}}, // items without a dependency run concurrently
		{"id": "missing", "method": "GET", "path": "/v1/billing/accounts/acct_doesnotexist"},
		{"id": "other-tenant", "method": "GET", "path": "/v1/billing/accounts/" + b.account.ID},
		{"id": "invalid", "method": "POST", "path": "/v1/billing/accounts", "body": map[string]any{"name": "x", "currency": "USD", "billing_email": "not an e-mail"}},
		{"id": "after-invalid", "method": "GET", "path": "/v1/billing/accounts", "depends_on": []string{"invalid"}},
		{"id": "after-skipped", "method": "GET", "path": "/v1/billing/accounts", "depends_on": []string{"after-invalid", "create"}},
		{"id": "nowhere", "method": "GET", "path": "/v1/nowhere"},
	}})
	if len(ans.Responses) != 9 || ans.Responses[0].ID != "create" || ans.Responses[8].ID != "nowhere" {
		t.Fatalf("answers must follow the request's order: %s", ans.res.body)
	}
	created := ans.want(t, "create", 201, "")
	id := accountID(t, created)
	if got := accountID(t, ans.want(t, "get", 200, "")); got != id {
		t.Fatalf("the dependent GET read %s, want %s", got, id)
	}
	if !strings.Contains(string(ans.want(t, "list", 200, "")), id) {
		t.Fatal("the list does not hold the account created in the same batch")
	}
	_, _, _, hdr := ans.item(t, "create")
	if !strings.HasPrefix(hdr["Content-Type"], "application/json") || hdr["X-Request-Id"] == "" {
		t.Fatalf("item headers: %v", hdr)
	}
	ans.want(t, "missing", 404, "NOT_FOUND")
	ans.want(t, "other-tenant", 404, "NOT_FOUND")
	ans.want(t, "invalid", 400, "VALIDATION_ERROR")
	_, e, _, _ := ans.item(t, "after-invalid")
	ans.want(t, "after-invalid", 424, "FAILED_DEPENDENCY")
	if e.Error.Details["dependency"] != "invalid" || e.Error.Details["dependency_status"] != float64(400) {
		t.Fatalf("424 details: %v", e.Error.Details)
	}
	ans.want(t, "after-skipped", 424, "FAILED_DEPENDENCY")
	ans.want(t, "nowhere", 404, "NOT_FOUND")
	// The account exists for the tenant, and for nobody else.
	h.do("GET", "/v1/billing/accounts/"+id, a.liveKey, nil).decode(200, nil)
	h.do("GET", "/v1/billing/accounts/"+id, b.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/billing/accounts/"+id, a.testKey, nil).wantError(404, "NOT_FOUND")
}

func TestBatchItemsKeepTheCallersRights(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var ro keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "read only", "permissions": []string{"billing:read"}}).decode(201, &ro)
	acct := map[string]any{"name": "Smuggled", "currency": "USD", "billing_email": "x@example.com"}
	ans := h.batch(ro.APIKey.Key, map[string]any{"requests": []map[string]any{
		{"id": "read", "method": "GET", "path": "/v1/billing/accounts"},
		{"id": "create", "method": "POST", "path": "/v1/billing/accounts", "body": acct},
		{"id": "key", "method": "POST", "path": "/v1/auth/api-keys", "body": map[string]any{"name": "escalate", "permissions": []string{"*"}}},
		{"id": "smuggle", "method": "POST", "path": "/v1/billing/accounts", "body": acct, "headers": map[string]string{"Authorization": "Bearer " + h.adminKey}},
		{"id": "smuggle-key", "method": "POST", "path": "/v1/billing/accounts", "body": acct, "headers": map[string]string{"x-api-key": a.liveKey}},
		{"id": "forwarded", "method": "GET", "path": "/v1/billing/accounts", "headers": map[string]string{"X-Forwarded-For": "10.0.0.1"}},
		{"id": "cookie", "method": "GET", "path": "/v1/billing/accounts", "headers": map[string]string{"Cookie": "sid=x"}},
	}})
	ans.want(t, "read", 200, "")
	ans.want(t, "create", 403, "INSUFFICIENT_PERMISSIONS")
	ans.want(t, "key", 403, "INSUFFICIENT_PERMISSIONS")
	for _, id := range []string{"smuggle", "smuggle-key", "forwarded", "cookie"} {
		ans.want(t, id, 400, "VALIDATION_ERROR")
	}
	// Nothing was created, through any item.
	var list struct {
		Accounts []struct{ Name string } `json:"accounts"`
	}
	h.do("GET", "/v1/billing/accounts?limit=100", a.liveKey, nil).decode(200, &list)
	for _, acc := range list.Accounts {
		if acc.Name == "Smuggled" {
			t.Fatal("a read-only key created an account through a batch")
		}
	}
	// A sandbox key's batch stays in the sandbox.
	sandbox := h.batch(a.testKey, map[string]any{"requests": []map[string]any{
		{"id": "live", "method": "GET", "path": "/v1/billing/accounts/" + a.account.ID},
	}})
	sandbox.want(t, "live", 404, "NOT_FOUND")
	// Without a credential the batch itself is refused.
	h.do("POST", "/v1/batch", "", map[string]any{"requests": []map[string]any{{"id": "a", "method": "GET", "path": "/v1/billing/accounts"}}}).wantError(401, "UNAUTHENTICATED")
}

func TestBatchRefusesMalformedBatches(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	get := func(id string, deps ...string) map[string]any {
		return map[string]any{"id": id, "method": "GET", "path": "/v1/billing/accounts", "depends_on": deps}
	}
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = get(fmt.Sprintf("i%d", i))
	}
	for _, tc := range []struct {
		name  string
		items []map[string]any
		field string // a field named in details.fields
	}{
		{"101 items", many, "requests"},
		{"no items", []map[string]any{}, "requests"},
		{"null items", nil, "requests"},
		{"cycle", []map[string]any{get("a", "c"), get("b", "a"), get("c", "b")}, "requests[0].depends_on"},
		{"self", []map[string]any{get("a", "a")}, "requests[0].depends_on"},
		{"unknown dependency", []map[string]any{get("a", "zz")}, "requests[0].depends_on"},
		{"duplicate ids", []map[string]any{get("a"), get("a")}, "requests[1].id"},
		{"reference without dependency", []map[string]any{get("a"), {"id": "b", "method": "GET", "path": "/v1/billing/accounts/{{a.body.id}}"}}, "requests[1].depends_on"},
		{"nested batch", []map[string]any{{"id": "a", "method": "POST", "path": "/v1/batch", "body": map[string]any{"requests": []any{}}}}, "requests[0].path"},
		{"nested batch, other spelling", []map[string]any{{"id": "a", "method": "POST", "path": "/api/v1/Batch/"}}, "requests[0].path"},
		{"nested batch, escaped", []map[string]any{{"id": "a", "method": "POST", "path": "/v1/%62atch"}}, "requests[0].path"},
		{"outside /v1", []map[string]any{{"id": "a", "method": "GET", "path": "/v1/../healthz"}}, "requests[0].path"},
		{"method", []map[string]any{{"id": "a", "method": "TRACE", "path": "/v1/billing/accounts"}}, "requests[0].method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", "/v1/batch", key, map[string]any{"requests": tc.items}).wantError(400, "VALIDATION_ERROR")
			raw, _ := json.Marshal(e.Error.Details["fields"])
			if !strings.Contains(string(raw), `"field":"`+tc.field+`"`) {
				t.Fatalf("details.fields %s do not name %s", raw, tc.field)
			}
		})
	}
}

func TestBatchAtomic(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	accountNamed := func(name string) bool {
		var list struct {
			Accounts []struct{ Name string } `json:"accounts"`
		}
		h.do("GET", "/v1/billing/accounts?limit=100", key, nil).decode(200, &list)
		for _, a := range list.Accounts {
			if a.Name == name {
				return true
			}
		}
		return false
	}
	create := func(name string) map[string]any {
		return map[string]any{"id": "acct", "method": "POST", "path": "/v1/billing/accounts",
			"body": map[string]any{"name": name, "currency": "USD", "billing_email": "atomic@example.com"}}
	}
	budget := func(amount float64) map[string]any {
		return map[string]any{"id": "budget", "method": "POST", "path": "/v1/billing/budgets", "depends_on": []string{"acct"},
			"body": map[string]any{"account_id": "{{acct.body.account.id}}", "amount": amount}}
	}

	t.Run("committed", func(t *testing.T) {
		ans := h.batch(key, map[string]any{"atomic": true, "requests": []map[string]any{budget(500), create("Atomic kept")}})
		if !ans.Atomic || ans.Committed == nil || !*ans.Committed {
			t.Fatalf("want a committed atomic batch: %s", ans.res.body)
		}
		id := accountID(t, ans.want(t, "acct", 201, ""))
		raw := ans.want(t, "budget", 201, "")
		if !strings.Contains(string(raw), id) {
			t.Fatalf("the budget is not on the new account: %s", raw)
		}
		if !accountNamed("Atomic kept") {
			t.Fatal("the committed account is missing")
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		ans := h.batch(key, map[string]any{"atomic": true, "requests": []map[string]any{create("Atomic dropped"), budget(-1),
			{"id": "never", "method": "GET", "path": "/v1/billing/accounts", "depends_on": []string{"budget"}}}})
		if ans.Committed == nil || *ans.Committed {
			t.Fatalf("want an uncommitted atomic batch: %s", ans.res.body)
		}
		ans.want(t, "budget", 400, "VALIDATION_ERROR")
		_, e, _, _ := ans.item(t, "acct")
		ans.want(t, "acct", 424, "FAILED_DEPENDENCY")
		if e.Error.Details["rolled_back"] != true || e.Error.Details["failed_item"] != "budget" {
			t.Fatalf("the created account should be reported rolled back: %v", e.Error.Details)
		}
		_, e, _, _ = ans.item(t, "never")
		if e.Error.Details["rolled_back"] != false {
			t.Fatalf("an item that never ran: %v", e.Error.Details)
		}
		if accountNamed("Atomic dropped") {
			t.Fatal("the account of a failed atomic batch was kept")
		}
		h.do("GET", "/v1/billing/accounts", key, nil).decode(200, nil) // the database is free again
	})
	t.Run("a webhook and a budget rolled back together", func(t *testing.T) {
		hook := map[string]any{"id": "hook", "method": "POST", "path": "/v1/billing/webhooks",
			"body": map[string]any{"url": publicHook + "/atomic", "events": []string{"invoice.*"}}}
		ans := h.batch(key, map[string]any{"atomic": true, "requests": []map[string]any{hook, create("Hooked"), budget(-5)}})
		ans.want(t, "hook", 424, "FAILED_DEPENDENCY")
		var list struct {
			Webhooks []struct{ URL string } `json:"webhooks"`
		}
		h.do("GET", "/v1/webhooks", key, nil).decode(200, &list)
		for _, w := range list.Webhooks {
			if strings.HasSuffix(w.URL, "/atomic") {
				t.Fatal("the webhook of a rolled-back batch was kept")
			}
		}
		ans = h.batch(key, map[string]any{"atomic": true, "requests": []map[string]any{hook, create("Hooked")}})
		ans.want(t, "hook", 201, "")
		h.do("GET", "/v1/webhooks", key, nil).decode(200, &list)
		if len(list.Webhooks) != 1 || !strings.HasSuffix(list.Webhooks[0].URL, "/atomic") {
			t.Fatalf("the committed webhook: %+v", list.Webhooks)
		}
	})
	for name, items := range map[string][]map[string]any{
		"an operation": {{"id": "p", "method": "POST", "path": "/v1/services/provision", "body": map[string]any{"template": "x"}}},
		"a delete":     {{"id": "d", "method": "DELETE", "path": "/v1/billing/budgets/bud_x"}},
		"two areas": {create("x"), {"id": "w", "method": "POST", "path": "/v1/webhooks",
			"body": map[string]any{"url": "https://example.com/hook", "events": []string{"*"}}}},
		"an item's idempotency key": {{"id": "acct", "method": "POST", "path": "/v1/billing/accounts", "headers": map[string]string{"Idempotency-Key": "k1"},
			"body": map[string]any{"name": "Keyed", "currency": "USD", "billing_email": "a@example.com"}}},
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			res := h.do("POST", "/v1/batch", key, map[string]any{"atomic": true, "requests": items})
			if name == "an item's idempotency key" {
				var ans batchAnswer
				res.decode(200, &ans)
				ans.res = res
				ans.want(t, "acct", 400, "VALIDATION_ERROR")
				if accountNamed("Keyed") {
					t.Fatal("refused item created an account")
				}
				return
			}
			e := res.wantError(400, "VALIDATION_ERROR")
			if e.Error.Details["reason"] != "atomic_not_supported" {
				t.Fatalf("details: %v", e.Error.Details)
			}
		})
	}
}

func TestBatchIdempotency(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	item := func(name string) map[string]any {
		return map[string]any{"id": "acct", "method": "POST", "path": "/v1/billing/accounts", "headers": map[string]string{"Idempotency-Key": "batch-acct-1"},
			"body": map[string]any{"name": name, "currency": "USD", "billing_email": "idem@example.com"}}
	}
	first := h.batch(key, map[string]any{"requests": []map[string]any{item("Idempotent")}})
	id := accountID(t, first.want(t, "acct", 201, ""))
	again := h.batch(key, map[string]any{"requests": []map[string]any{item("Idempotent")}})
	if got := accountID(t, again.want(t, "acct", 201, "")); got != id {
		t.Fatalf("the replay created %s, want the first answer's %s", got, id)
	}
	if _, _, _, hdr := again.item(t, "acct"); hdr["Idempotent-Replayed"] != "true" {
		t.Fatalf("replayed item without Idempotent-Replayed: %v", hdr)
	}
	// The key's scope is the endpoint's: a request sent alone replays too.
	alone := h.do("POST", "/v1/billing/accounts", key, item("Idempotent")["body"], "Idempotency-Key", "batch-acct-1").decode(201, nil)
	if accountID(t, alone.body) != id {
		t.Fatal("a request sent alone did not replay the batch item's answer")
	}
	other := h.batch(key, map[string]any{"requests": []map[string]any{item("Another body")}})
	other.want(t, "acct", 422, "IDEMPOTENCY_KEY_MISMATCH")

	// The batch's own key replays the whole answer without running an item.
	whole := map[string]any{"requests": []map[string]any{{"id": "acct", "method": "POST", "path": "/v1/billing/accounts",
		"body": map[string]any{"name": "Whole batch", "currency": "USD", "billing_email": "idem@example.com"}}}}
	one := h.batch(key, whole, "Idempotency-Key", "whole-batch-1")
	two := h.batch(key, whole, "Idempotency-Key", "whole-batch-1")
	if two.res.header.Get("Idempotent-Replayed") != "true" || accountID(t, two.want(t, "acct", 201, "")) != accountID(t, one.want(t, "acct", 201, "")) {
		t.Fatalf("the batch was not replayed: %s", two.res.body)
	}
}

func TestBatchRateLimits(t *testing.T) {
	rdb, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	h := newHarness(t)
	lim := h.withLimiter(rdb)
	gets := func(n int) map[string]any {
		items := make([]map[string]any, n)
		for i := range items {
			items[i] = map[string]any{"id": fmt.Sprintf("g%d", i), "method": "GET", "path": "/v1/services/catalog"}
		}
		return map[string]any{"requests": items}
	}
	burstRemaining := func(res *response) int {
		var n int
		if _, err := fmt.Sscan(res.header.Get("X-RateLimit-Burst-Remaining"), &n); err != nil {
			t.Fatalf("no X-RateLimit-Burst-Remaining: %v", res.header)
		}
		return n
	}

	t.Run("costs are summed", func(t *testing.T) {
		_, key := h.limitedKey(100, 50)
		before := burstRemaining(h.do("GET", "/v1/services/catalog", key, nil))
		ans := h.batch(key, gets(5))
		for _, r := range ans.Responses {
			if r.Status != 200 {
				t.Fatalf("item %s: %d", r.ID, r.Status)
			}
		}
		// The batch's POST (2) and five GETs (1 each): its answer reports the budget after them.
		if got := burstRemaining(ans.res); got != before-7 {
			t.Fatalf("batch answer reports %d remaining, want %d", got, before-7)
		}
		if after := burstRemaining(h.do("GET", "/v1/services/catalog", key, nil)); after != before-8 {
			t.Fatalf("after the batch %d remaining, want %d", after, before-8)
		}
	})
	t.Run("items beyond the budget answer 429", func(t *testing.T) {
		_, key := h.limitedKey(100, 10)
		ans := h.batch(key, gets(10)) // 2 for the batch leaves 8
		counts := map[int]int{}
		for _, r := range ans.Responses {
			counts[r.Status]++
			if r.Status == 429 {
				ans.want(t, r.ID, 429, "RATE_LIMIT_EXCEEDED")
				if r.Headers["Retry-After"] == "" {
					t.Fatalf("429 item without Retry-After: %v", r.Headers)
				}
			}
		}
		if counts[200] != 8 || counts[429] != 2 {
			t.Fatalf("want 8 answered and 2 refused: %v", counts)
		}
		h.do("POST", "/v1/batch", key, gets(1)).wantError(429, "RATE_LIMIT_EXCEEDED")
	})
	t.Run("the batch holds one concurrency slot", func(t *testing.T) {
		// Business plan: 50 requests in flight. With 49 taken, the batch
		// takes the last one and its items run within it.
		conc := "conc:" + h.tenants[1].org.ID + ":live"
		var releases []func()
		defer func() {
			for _, r := range releases {
				r()
			}
		}()
		for range 49 {
			release, ok, err := lim.Acquire(context.Background(), conc, 50, 0)
			if err != nil || !ok {
				t.Fatalf("acquire: %v %v", ok, err)
			}
			releases = append(releases, release)
		}
		ans := h.batch(h.tenants[1].liveKey, gets(10))
		for _, r := range ans.Responses {
			if r.Status != 200 {
				t.Fatalf("item %s: %d %s", r.ID, r.Status, r.Body)
			}
		}
		release, ok, err := lim.Acquire(context.Background(), conc, 50, 0)
		if err != nil || !ok {
			t.Fatalf("the batch's slot was not given back: %v %v", ok, err)
		}
		releases = append(releases, release)
		h.do("POST", "/v1/batch", h.tenants[1].liveKey, gets(1)).wantError(429, "CONCURRENCY_LIMIT_EXCEEDED")
	})
}

func TestBatchOfASigningKey(t *testing.T) {
	h := newHarness(t)
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "signed", "permissions": []string{"*"}, "require_signing": true}).decode(201, &k)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	body := `{"requests":[{"id":"a","method":"POST","path":"/v1/billing/accounts","body":{"name":"Signed batch","currency":"USD","billing_email":"s@example.com"}},` +
		`{"id":"b","method":"GET","path":"/v1/billing/accounts/{{a.body.account.id}}","depends_on":["a"]}]}`
	sign := func(nonce, b string) string {
		return "v2," + base64.StdEncoding.EncodeToString(identity.SignRequestV2(k.APIKey.SigningSecret, ts, nonce, "POST", "/v1/batch", []byte(b)))
	}
	// Unsigned, or signed over another body: the batch itself is refused.
	h.do("POST", "/v1/batch", k.APIKey.Key, body).wantError(401, "INVALID_SIGNATURE")
	h.do("POST", "/v1/batch", k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-0", "X-Signature", sign("n-0", `{"requests":[]}`)).wantError(401, "INVALID_SIGNATURE")
	// The batch's signature covers its items: they need none of their own.
	ans := h.batch(k.APIKey.Key, body, "X-Timestamp", ts, "X-Nonce", "n-1", "X-Signature", sign("n-1", body))
	ans.want(t, "a", 201, "")
	ans.want(t, "b", 200, "")
}

func TestBatchItemsInheritTheAPIVersion(t *testing.T) {
	h := newHarness(t)
	ans := h.batch(h.tenants[0].liveKey, map[string]any{"requests": []map[string]any{
		{"id": "inherited", "method": "GET", "path": "/v1/billing/accounts"},
		{"id": "own", "method": "GET", "path": "/v1/billing/accounts", "headers": map[string]string{"api-version": "1.0"}},
		{"id": "bad", "method": "GET", "path": "/v1/billing/accounts", "headers": map[string]string{"API-Version": "2.0"}},
	}}, "API-Version", "1.1")
	version := func(id string) string {
		var b struct {
			Metadata struct{ Version string } `json:"metadata"`
		}
		if err := json.Unmarshal(ans.want(t, id, 200, ""), &b); err != nil {
			t.Fatal(err)
		}
		return b.Metadata.Version
	}
	if v := version("inherited"); v != "1.1.0" {
		t.Fatalf("inherited version %q, want 1.1.0", v)
	}
	if v := version("own"); v != "1.0.0" {
		t.Fatalf("the item's own version %q, want 1.0.0", v)
	}
	ans.want(t, "bad", 400, "UNSUPPORTED_API_VERSION")
}
