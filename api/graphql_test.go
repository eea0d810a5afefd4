package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"
)

// gqlAnswer is a GraphQL answer.
type gqlAnswer struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
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

// countStatements counts the SQL statements store runs while counting is on.
func countStatements(t *testing.T, db *gorm.DB) *atomic.Bool {
	t.Helper()
	on := &atomic.Bool{}
	var n atomic.Int64
	count := func(*gorm.DB) {
		if on.Load() {
			n.Add(1)
		}
	}
	name := "test:count_statements"
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
	statements.Store(&n)
	return on
}

var statements atomic.Pointer[atomic.Int64]

func TestGraphQLSmoke(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	_, svc := provisionedFixture(t, h, a)
	res := h.gql(a.liveKey, http.StatusOK, `{ services { totalCount edges { cursor node { id name operations { id type service { id } } } } pageInfo { hasNextPage endCursor } } }`, nil)
	t.Logf("%s %v", res.Data["services"], res.Errors)
	if got := res.ids(t, "services"); len(got) != 1 || got[0] != svc {
		t.Fatalf("services %v, want [%s]", got, svc)
	}
}
