package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// gqlAnswer is a GraphQL answer.
type gqlAnswer struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string                       `json:"message"`
		Path       []any                        `json:"path"`
		Locations  []struct{ Line, Column int } `json:"locations"`
		Extensions map[string]any               `json:"extensions"`
	} `json:"errors"`
}

// gql posts a query and decodes the answer, checking the status.
func (h *harness) gql(key string, status int, query string, vars map[string]any) gqlAnswer {
	h.t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	var out gqlAnswer
	h.do("POST", "/v1/graphql", key, body).decode(status, &out)
	return out
}

// codes lists the answer's errors as path: code.
func (a gqlAnswer) codes() map[string]string {
	out := map[string]string{}
	for _, e := range a.Errors {
		var parts []string
		for _, p := range e.Path {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		code, _ := e.Extensions["code"].(string)
		out[strings.Join(parts, ".")] = code
	}
	return out
}

// ids returns the node ids of the connection at field.
func (a gqlAnswer) ids(t *testing.T, field string) []string {
	t.Helper()
	var conn struct {
		Edges []struct {
			Node struct{ ID string } `json:"node"`
		} `json:"edges"`
	}
	if raw := a.Data[field]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &conn); err != nil {
			t.Fatalf("%s: %v", field, err)
		}
	}
	out := []string{}
	for _, e := range conn.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// countStatements counts the SQL statements run on db for a caller (a
// principal in the statement's context) while on is true: the server's own
// background work (usage flushes, the outbox) is left out, however long the
// request takes on a busy machine.
func countStatements(t *testing.T, db *gorm.DB) (on *atomic.Bool, n *atomic.Int64) {
	t.Helper()
	on, n = &atomic.Bool{}, &atomic.Int64{}
	count := func(tx *gorm.DB) {
		if on.Load() && tx.Statement.Context != nil && models.PrincipalFrom(tx.Statement.Context) != nil {
			n.Add(1)
		}
	}
	const name = "test:count_statements"
	cb := db.Callback()
	for _, err := range []error{cb.Query().After("gorm:query").Register(name, count), cb.Row().After("gorm:row").Register(name, count),
		cb.Raw().After("gorm:raw").Register(name, count)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = cb.Query().Remove(name)
		_ = cb.Row().Remove(name)
		_ = cb.Raw().Remove(name)
	})
	return on, n
}

// graphFixtures gives tn a provisioned service with its operation, an
// invoice with a payment, a subscription of the service and a ticket
// with a comment.
func graphFixtures(t *testing.T, h *harness, tn tenant) map[string]string {
	t.Helper()
	op, svc := provisionedFixture(t, h, tn)
	f := billingFixtures(t, h, tn, svc)
	f["service_id"], f["operation_id"] = svc, op
	f["ticket_id"] = newTicket(t, h, tn.liveKey, nil).Ticket.ID
	h.do("POST", "/v1/support/tickets/"+f["ticket_id"]+"/comments", tn.liveKey, map[string]any{"content": "Still down."}).decode(http.StatusCreated, nil)
	return f
}

// nestedQuery reads three levels of every kind of nested list.
const nestedQuery = `{
  services { edges { node { id operations { id service { id } } subscription { id service { id } invoices { id payments { id } } } } } }
  invoices { edges { node { id payments { id invoice { id } } } } }
  tickets { edges { node { id comments { id content } } } }
}`

// TestGraphQLNestedListsAreBatched: the statements a nested query runs do
// not grow with the number of parents: each level is one statement.
func TestGraphQLNestedListsAreBatched(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	graphFixtures(t, h, a)
	on, n := countStatements(t, h.store.DB)
	run := func(parents int) (int64, gqlAnswer) {
		t.Helper()
		h.do("GET", "/v1/services/catalog", a.liveKey, nil).decode(http.StatusOK, nil) // the key is read and kept: only the query's statements are counted
		n.Store(0)
		on.Store(true)
		res := h.gql(a.liveKey, http.StatusOK, nestedQuery, nil)
		on.Store(false)
		if len(res.Errors) > 0 {
			t.Fatalf("errors: %+v", res.Errors)
		}
		for _, field := range []string{"services", "invoices", "tickets"} {
			if got := res.ids(t, field); len(got) != parents {
				t.Fatalf("%s: %d items, want %d: %s", field, len(got), parents, res.Data[field])
			}
		}
		return n.Load(), res
	}
	one, _ := run(1)
	graphFixtures(t, h, a)
	graphFixtures(t, h, a)
	three, res := run(3)
	t.Logf("%d statements for 1 parent of each kind, %d for 3", one, three)
	if one == 0 || three != one {
		t.Fatalf("%d statements for 1 parent of each kind, %d for 3: want the same (one per level)", one, three)
	}
	// Every parent got its children.
	var services struct {
		Edges []struct {
			Node struct {
				ID           string
				Operations   []struct{ Service struct{ ID string } }
				Subscription struct{ Service struct{ ID string } }
			}
		}
	}
	if err := json.Unmarshal(res.Data["services"], &services); err != nil {
		t.Fatal(err)
	}
	for _, e := range services.Edges {
		if len(e.Node.Operations) != 1 || e.Node.Operations[0].Service.ID != e.Node.ID || e.Node.Subscription.Service.ID != e.Node.ID {
			t.Fatalf("service %s: operations and subscription not its own: %+v", e.Node.ID, e.Node)
		}
	}
	for _, want := range []string{`"payments":[{"id":"pay_`, `"comments":[{"id":"`} {
		if !strings.Contains(string(res.Data["invoices"])+string(res.Data["tickets"]), want) {
			t.Fatalf("no %s in %s %s", want, res.Data["invoices"], res.Data["tickets"])
		}
	}
}

// TestGraphQLTenancy mirrors TestTenantsNeverSeeEachOther: another
// tenant's and the sandbox's credentials see none of A's live objects, by
// list or by id, and a key without billing:read gets null and
// INSUFFICIENT_PERMISSIONS for billing fields only.
func TestGraphQLTenancy(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	f := graphFixtures(t, h, a)
	webhookID, eventID := webhookFixtures(t, h, a, f["service_id"])
	quoteID := quoteFixture(t, h, a)
	byID := map[string]string{"service": f["service_id"], "operation": f["operation_id"], "invoice": f["invoice_id"], "payment": f["payment_id"],
		"subscription": f["subscription_id"], "ticket": f["ticket_id"], "event": eventID, "webhook": webhookID, "quote": quoteID}
	lists := []string{"services", "operations", "invoices", "payments", "subscriptions", "tickets", "events", "webhooks"}
	var q strings.Builder
	q.WriteString("{")
	for _, l := range lists {
		fmt.Fprintf(&q, " %s { edges { node { id } } }", l)
	}
	for field, id := range byID {
		fmt.Fprintf(&q, " %s(id: %q) { id }", field, id)
	}
	q.WriteString(" }")

	// The owner sees each of them.
	own := h.gql(a.liveKey, http.StatusOK, q.String(), nil)
	if len(own.Errors) > 0 {
		t.Fatalf("owner: %+v", own.Errors)
	}
	for _, l := range lists {
		if len(own.ids(t, l)) == 0 {
			t.Fatalf("owner sees no %s", l)
		}
	}
	for _, who := range []struct{ name, key string }{{"other tenant", b.liveKey}, {"own sandbox", a.testKey}} {
		t.Run(who.name, func(t *testing.T) {
			res := h.gql(who.key, http.StatusOK, q.String(), nil)
			for _, l := range lists {
				if got := res.ids(t, l); len(got) != 0 {
					t.Fatalf("%s sees %s %v", who.name, l, got)
				}
			}
			codes := res.codes()
			for field := range byID {
				if string(res.Data[field]) != "null" || codes[field] != "NOT_FOUND" {
					t.Fatalf("%s: %s = %s (error %q), want null and NOT_FOUND", who.name, field, res.Data[field], codes[field])
				}
			}
		})
	}
	t.Run("no billing permission", func(t *testing.T) {
		key := keyWith(t, h, a, "services:read")
		res := h.gql(key, http.StatusOK, `{ services { edges { node { id subscription { id } } } } invoices { edges { node { id } } } invoice(id: "`+f["invoice_id"]+`") { id } }`, nil)
		codes := res.codes()
		if string(res.Data["invoices"]) != "null" || codes["invoices"] != "INSUFFICIENT_PERMISSIONS" || codes["invoice"] != "INSUFFICIENT_PERMISSIONS" {
			t.Fatalf("invoices %s, errors %v: want null and INSUFFICIENT_PERMISSIONS", res.Data["invoices"], codes)
		}
		if got := res.ids(t, "services"); len(got) != 1 || codes["services.edges.node.subscription"] != "INSUFFICIENT_PERMISSIONS" ||
			!strings.Contains(string(res.Data["services"]), `"subscription":null`) {
			t.Fatalf("services %s, errors %v: want the service with a null subscription", res.Data["services"], codes)
		}
	})
}

// TestGraphQLErrorsAndLimits: the answer's error shape, refusals of
// malformed requests, and the depth and complexity limits.
func TestGraphQLErrorsAndLimits(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	key := a.liveKey
	t.Run("field error shape", func(t *testing.T) {
		res := h.gql(key, http.StatusOK, `{ service(id: "svc_missing") { id } }`, nil)
		if len(res.Errors) != 1 {
			t.Fatalf("errors %+v", res.Errors)
		}
		e := res.Errors[0]
		if e.Message != "service not found" || len(e.Path) != 1 || e.Path[0] != "service" || e.Extensions["code"] != "NOT_FOUND" ||
			!strings.HasPrefix(fmt.Sprint(e.Extensions["request_id"]), "req_") {
			t.Fatalf("error %+v", e)
		}
	})
	t.Run("bad argument", func(t *testing.T) {
		res := h.gql(key, http.StatusOK, `{ services(first: 0) { totalCount } tickets(after: "nope") { totalCount } }`, nil)
		if codes := res.codes(); codes["services"] != "VALIDATION_ERROR" || codes["tickets"] != "VALIDATION_ERROR" {
			t.Fatalf("codes %v", codes)
		}
	})
	for _, tc := range []struct{ name, query, code string }{
		{"does not parse", `{ services { `, "GRAPHQL_PARSE_FAILED"},
		{"unknown field", `{ services { edges { node { secret } } } }`, "GRAPHQL_VALIDATION_FAILED"},
		{"no mutations", `mutation { services { totalCount } }`, "GRAPHQL_VALIDATION_FAILED"},
		{"too deep", `{ payments { edges { node { invoice { payments { invoice { payments { invoice { payments { invoice { id } } } } } } } } } } }`, "QUERY_TOO_DEEP"},
		{"too complex", `{ services(first: 200) { edges { node { operations(first: 50) { id type status service { id name status } } } } } }`, "QUERY_TOO_COMPLEX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.gql(key, http.StatusOK, tc.query, nil)
			if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != tc.code || res.Data != nil {
				t.Fatalf("answer %+v, want one %s error and no data", res, tc.code)
			}
		})
	}
	t.Run("Int variables", func(t *testing.T) {
		// The docs' first example, with its variable: an Int, not an internal error.
		res := h.gql(key, http.StatusOK, `query($n: Int) { services(first: $n) { edges { node { id name status } } } }`, map[string]any{"n": 5})
		if len(res.Errors) > 0 || res.Data["services"] == nil {
			t.Fatalf("answer %+v", res)
		}
		res = h.gql(key, http.StatusOK, `query($n: Int!) { services(first: $n) { totalCount } }`, map[string]any{"n": 0})
		if codes := res.codes(); codes["services"] != "VALIDATION_ERROR" {
			t.Fatalf("first: 0 as a variable: %v", codes)
		}
		// A variable counts in the complexity as the literal does.
		res = h.gql(key, http.StatusOK, `query($a: Int, $b: Int) { services(first: $a) { edges { node { operations(first: $b) { id type status service { id name status } } } } } }`,
			map[string]any{"a": 200, "b": 50})
		if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "QUERY_TOO_COMPLEX" || res.Data != nil {
			t.Fatalf("answer %+v, want QUERY_TOO_COMPLEX", res)
		}
	})
	t.Run("within the limits", func(t *testing.T) {
		res := h.gql(key, http.StatusOK, `{ services(first: 20) { edges { node { operations(first: 5) { id service { id } } } } } }`, nil)
		if len(res.Errors) > 0 {
			t.Fatalf("errors %+v", res.Errors)
		}
	})
	t.Run("under /api/v1 too", func(t *testing.T) {
		var out gqlAnswer
		h.do("POST", "/api/v1/graphql", key, map[string]any{"query": "{ services { totalCount } }"}).decode(http.StatusOK, &out)
		if string(out.Data["services"]) != `{"totalCount":0}` {
			t.Fatalf("answer %+v", out)
		}
		// As GraphQL clients send it: null operationName, variables and extensions.
		h.do("POST", "/v1/graphql", key, `{"query": "{ services { totalCount } }", "operationName": null, "variables": null, "extensions": null}`).decode(http.StatusOK, &out)
		if string(out.Data["services"]) != `{"totalCount":0}` {
			t.Fatalf("answer %+v", out)
		}
	})
	t.Run("malformed requests", func(t *testing.T) {
		h.do("POST", "/v1/graphql", key, `{"query": `).wantError(http.StatusBadRequest, "INVALID_JSON")
		h.do("POST", "/v1/graphql", key, map[string]any{"variables": map[string]any{}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		h.do("POST", "/v1/graphql", "", map[string]any{"query": "{ services { totalCount } }"}).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
	})
	t.Run("introspection and the schema", func(t *testing.T) {
		res := h.gql(key, http.StatusOK, `{ __schema { queryType { name } types { name } } }`, nil)
		if len(res.Errors) > 0 || !strings.Contains(string(res.Data["__schema"]), `"name":"ServiceConnection"`) {
			t.Fatalf("introspection: %s %+v", res.Data["__schema"], res.Errors)
		}
		sdl := h.do("GET", "/v1/graphql/schema.graphql", "", nil)
		if sdl.status != http.StatusOK || !strings.HasPrefix(sdl.header.Get("Content-Type"), "text/plain") || !strings.Contains(string(sdl.body), "type ServiceConnection {") {
			t.Fatalf("schema: %d %s %.200s", sdl.status, sdl.header.Get("Content-Type"), sdl.body)
		}
	})
}

// TestGraphQLFilter: filter takes the REST lists' filter language; a bad
// expression is VALIDATION_ERROR with its position.
func TestGraphQLFilter(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	f := graphFixtures(t, h, a)
	q := `query($f: String) { services(filter: $f) { totalCount edges { node { id } } } }`
	if got := h.gql(a.liveKey, http.StatusOK, q, map[string]any{"f": `status = "operational"`}).ids(t, "services"); len(got) != 1 || got[0] != f["service_id"] {
		t.Fatalf("operational: %v", got)
	}
	if got := h.gql(a.liveKey, http.StatusOK, q, map[string]any{"f": `status = "down"`}).ids(t, "services"); len(got) != 0 {
		t.Fatalf("down: %v", got)
	}
	res := h.gql(a.liveKey, http.StatusOK, q, map[string]any{"f": `status = `})
	if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "VALIDATION_ERROR" || string(res.Data["services"]) != "null" {
		t.Fatalf("bad filter: %+v", res)
	}
	details, _ := res.Errors[0].Extensions["details"].(map[string]any)
	if pos, ok := details["position"].(float64); !ok || pos != 9 {
		t.Fatalf("bad filter: details %v, want position 9", details)
	}
}

// TestGraphQLChargesItsCost: a query is charged max(2, ceil(complexity /
// 100)) units; X-RateLimit-Remaining drops by that much.
func TestGraphQLChargesItsCost(t *testing.T) {
	h := newHarness(t)
	h.withAnonymousLimits("", "")
	key := h.tenants[0].liveKey
	post := func(query string) (remaining, burst int, units, complexity int) {
		t.Helper()
		res := h.do("POST", "/v1/graphql", key, map[string]any{"query": query})
		var out struct {
			Extensions struct {
				Cost struct{ Complexity, Units int }
			}
		}
		res.decode(http.StatusOK, &out)
		remaining, err1 := strconv.Atoi(res.header.Get("X-RateLimit-Remaining"))
		burst, err2 := strconv.Atoi(res.header.Get("X-RateLimit-Burst-Remaining"))
		if err1 != nil || err2 != nil {
			t.Fatalf("headers %v", res.header)
		}
		return remaining, burst, out.Extensions.Cost.Units, out.Extensions.Cost.Complexity
	}
	r0, b0, units, c := post(`{ services(first: 1) { totalCount } }`)
	if units != 2 || c < 1 {
		t.Fatalf("a small query: %d units for complexity %d, want 2 (a POST's)", units, c)
	}
	r1, b1, units, c := post(`{ services(first: 200) { edges { node { id name status operations(first: 2) { id } } } } }`)
	if want := max(2, (c+199)/200); units != want || units <= 2 {
		t.Fatalf("%d units for complexity %d, want %d", units, c, want)
	}
	t.Logf("complexity %d: %d units; remaining %d then %d, burst %d then %d", c, units, r0, r1, b0, b1)
	// The buckets refill meanwhile: a unit may have come back.
	if d := r0 - r1; d != units && d != units-1 {
		t.Fatalf("X-RateLimit-Remaining %d then %d: dropped %d, want %d", r0, r1, d, units)
	}
	if d := b0 - b1; d != units && d != units-1 {
		t.Fatalf("X-RateLimit-Burst-Remaining %d then %d: dropped %d, want %d", b0, b1, d, units)
	}
	// Reading the event list counts in the large-data-exports group (10
	// requests an hour), as GET /v1/events does.
	for i := 1; i <= 10; i++ {
		h.do("POST", "/v1/graphql", key, map[string]any{"query": "{ events(first: 1) { totalCount } }"}).decode(http.StatusOK, nil)
	}
	e := h.do("POST", "/v1/graphql", key, map[string]any{"query": "{ events(first: 1) { totalCount } }"}).wantError(http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if e.Error.Details["bucket"] != "group" {
		t.Fatalf("refused by %v, want the group", e.Error.Details["bucket"])
	}
	h.do("POST", "/v1/graphql", key, map[string]any{"query": "{ services(first: 1) { totalCount } }"}).decode(http.StatusOK, nil)
}

// TestGraphQLReadsOnlyTheRows: a ticket or an invoice asked for by id, and a
// page of tickets, read their own rows only (the page also counts them):
// none of the ticket's agent, attachments and SLA clocks, nor the
// invoice's lines, which the GraphQL types do not have.
func TestGraphQLReadsOnlyTheRows(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	f := graphFixtures(t, h, a)
	on, n := countStatements(t, h.store.DB)
	h.gql(a.liveKey, http.StatusOK, `{ services { edges { node { id } } } }`, nil) // the key is read and kept
	for _, tc := range []struct {
		query string
		want  int64
	}{
		{`{ ticket(id: "` + f["ticket_id"] + `") { id title status } }`, 1},
		{`{ invoice(id: "` + f["invoice_id"] + `") { id total } }`, 1},
		{`{ tickets { edges { node { id title } } } }`, 2},
	} {
		n.Store(0)
		on.Store(true)
		res := h.gql(a.liveKey, http.StatusOK, tc.query, nil)
		on.Store(false)
		if len(res.Errors) > 0 || len(res.Data) == 0 {
			t.Fatalf("%s: %+v", tc.query, res)
		}
		if got := n.Load(); got != tc.want {
			t.Errorf("%s: %d statements, want %d", tc.query, got, tc.want)
		}
	}
}

// TestGraphQLErrorsAreCounted: each error of a GraphQL answer (a field's,
// and a refused query's) is counted in platform_api_errors_total by its
// code, as a REST error answer is, and keeps its path and locations.
func TestGraphQLErrorsAreCounted(t *testing.T) {
	h := newHarness(t)
	m, _ := h.observed(t, "1000")
	a := h.tenants[0]
	res := h.gql(a.liveKey, http.StatusOK, `{ a: service(id: "svc_nope") { id } b: ticket(id: "tkt_nope") { id } }`, nil)
	if got := res.codes(); got["a"] != "NOT_FOUND" || got["b"] != "NOT_FOUND" || len(res.Errors[0].Locations) == 0 {
		t.Fatalf("errors: %+v", res.Errors)
	}
	h.gql(a.liveKey, http.StatusOK, `{ services { `, nil)
	body := scrapeMetrics(t, m)
	for _, want := range []string{`platform_api_errors_total{code="NOT_FOUND"} 2`, `platform_api_errors_total{code="GRAPHQL_PARSE_FAILED"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
