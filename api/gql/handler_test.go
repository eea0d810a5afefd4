package gql

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/telcoplatform/platform/models"
)

// TestPresentNeverLeaksInternals: the platform's errors keep their code,
// message and details; any other error is INTERNAL_ERROR with a generic
// message, and every error carries the request id.
func TestPresentNeverLeaksInternals(t *testing.T) {
	h := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RequestID: func(context.Context) string { return "req_test" }})
	ctx := context.Background()
	e := h.present(ctx, errors.New("pq: password authentication failed for user secret"))
	if e.Message != "an internal error occurred" || e.Extensions["code"] != "INTERNAL_ERROR" || e.Extensions["request_id"] != "req_test" {
		t.Fatalf("plain error presented as %+v", e)
	}
	e = h.present(ctx, models.Internal(errors.New("disk full at /var/lib/db")))
	if e.Message != "an internal error occurred" || e.Extensions["code"] != "INTERNAL_ERROR" {
		t.Fatalf("internal error presented as %+v", e)
	}
	e = h.present(ctx, models.Invalid(models.FieldIssue{Field: "filter", Issue: "bad"}).WithDetail("position", 3))
	details, _ := e.Extensions["details"].(map[string]any)
	if e.Message != "filter: bad" || e.Extensions["code"] != "VALIDATION_ERROR" || details["position"] != 3 {
		t.Fatalf("validation error presented as %+v", e)
	}
}

// TestRefusals: a query too deep or too complex is refused before it
// runs, with the limit's code; introspection does not count towards the depth.
func TestRefusals(t *testing.T) {
	h := New(Deps{})
	ctx := context.Background()
	deep := `{ payments { edges { node { invoice { payments { invoice { payments { invoice { payments { invoice { id } } } } } } } } } } }`
	for query, code := range map[string]string{
		deep: "QUERY_TOO_DEEP",
		`{ services(first: 200) { edges { node { operations(first: 50) { id service { id name } } } } } }`: "QUERY_TOO_COMPLEX",
		`{ services { edges { node { nope } } } }`:                                                         "GRAPHQL_VALIDATION_FAILED",
	} {
		_, errs := h.Prepare(ctx, &graphql.RawParams{Query: query})
		if len(errs) != 1 || errs[0].Extensions["code"] != code {
			t.Fatalf("%s: %v, want %s", query, errs, code)
		}
	}
	_, errs := h.Prepare(ctx, &graphql.RawParams{Query: `{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } }`})
	if errs != nil {
		t.Fatalf("introspection refused: %v", errs)
	}
	p, errs := h.Prepare(ctx, &graphql.RawParams{Query: `query($n: Int) { services(first: $n) { edges { node { id name } } } }`, Variables: map[string]any{"n": 20}})
	if errs != nil || p.Complexity != 80 || p.Cost() != 2 {
		t.Fatalf("complexity %v (%v), want 80 and 2 units", p, errs)
	}
	if fields := p.Fields(); len(fields) != 5 || fields[0] != "Query.services" {
		t.Fatalf("fields %v", fields)
	}
}
