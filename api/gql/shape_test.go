package gql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// introspectionQuery is the introspection query GraphQL tools (GraphiQL,
// graphql-js's getIntrospectionQuery) send.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

// TestIntrospectionLimits: the tools' introspection query passes; nesting
// lists of schema objects under each other (each level multiplies the
// answer), or nesting deeper than MaxIntrospectionDepth, is refused.
func TestIntrospectionLimits(t *testing.T) {
	h := New(Deps{})
	ctx := context.Background()
	if _, errs := h.Prepare(ctx, &graphql.RawParams{Query: introspectionQuery}); errs != nil {
		t.Fatalf("the tools' introspection query was refused: %v", errs)
	}
	for _, q := range []string{
		`{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`,
		`{ __type(name: "Service") { fields { type { fields { type { fields { type { fields { name } } } } } } } } }`,
		`{ __schema { types { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } } }`,
	} {
		// gqlparser's own rule (nested fields, interfaces or
		// possibleTypes) refuses some as a validation failure first.
		_, errs := h.Prepare(ctx, &graphql.RawParams{Query: q})
		if len(errs) != 1 || (errs[0].Extensions["code"] != "QUERY_TOO_DEEP" && errs[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED") {
			t.Fatalf("%s: %v %v, want QUERY_TOO_DEEP", q, errs, errs[0].Extensions)
		}
	}
}

// TestRepeatedFragmentsAreRefused: fragments that each spread the next
// twice expand to 2^n selections; the document is refused as too complex
// (and promptly: the walk stops at its budget instead of expanding it).
func TestRepeatedFragmentsAreRefused(t *testing.T) {
	h := New(Deps{})
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	const n = 40
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { services(first: 1) { edges { node { id } } } }\n", n)
	done := make(chan []string, 1)
	go func() {
		_, errs := h.Prepare(context.Background(), &graphql.RawParams{Query: b.String()})
		var codes []string
		for _, e := range errs {
			codes = append(codes, fmt.Sprint(e.Extensions["code"]))
		}
		done <- codes
	}()
	select {
	case codes := <-done:
		if len(codes) != 1 || codes[0] != "QUERY_TOO_COMPLEX" {
			t.Fatalf("refusal codes %v, want QUERY_TOO_COMPLEX", codes)
		}
	case <-time.After(time.Minute):
		t.Fatal("preparing 40 doubling fragments did not end within a minute")
	}
	// A few spreads of the same fragment are an ordinary query.
	q := `{ ...S ...S } fragment S on Query { services(first: 2) { edges { node { ...N ...N } } } } fragment N on Service { id name }`
	if _, errs := h.Prepare(context.Background(), &graphql.RawParams{Query: q}); errs != nil {
		t.Fatalf("repeated spreads refused: %v", errs)
	}
}
