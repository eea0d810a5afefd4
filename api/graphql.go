package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/telcoplatform/platform/api/gql"
	"github.com/telcoplatform/platform/ratelimit"
)

// GraphQLInput is the request of POST /v1/graphql (GraphQL over HTTP, JSON).
type GraphQLInput struct {
	Body struct {
		Query         string         `json:"query" required:"true" minLength:"1" maxLength:"100000" doc:"The GraphQL document" example:"{ services(first: 5) { edges { node { id name status } } } }"`
		OperationName string         `json:"operationName,omitempty" maxLength:"200" doc:"The operation to run when the document has several"`
		Variables     map[string]any `json:"variables,omitempty" nullable:"true" doc:"The operation's variables"`
		Extensions    map[string]any `json:"extensions,omitempty" nullable:"true" doc:"Ignored"`
	}
	fc *fiber.Ctx // the request, for the rate-limit headers of its cost
}

// Resolve keeps the request's Fiber context.
func (in *GraphQLInput) Resolve(hctx huma.Context) []error {
	in.fc = humafiber.Unwrap(hctx)
	return nil
}

// GraphQLError is one error of a GraphQL answer.
type GraphQLError struct {
	Message    string            `json:"message"`
	Path       []any             `json:"path,omitempty" doc:"The field that failed, as names and list indexes"`
	Locations  []GraphQLLocation `json:"locations,omitempty"`
	Extensions map[string]any    `json:"extensions,omitempty" doc:"code: the platform's error code (NOT_FOUND, INSUFFICIENT_PERMISSIONS, VALIDATION_ERROR...) or GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED, QUERY_TOO_DEEP, QUERY_TOO_COMPLEX; request_id; details"`
}

// GraphQLLocation is a place in the query document.
type GraphQLLocation struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// GraphQLOutput is the answer of POST /v1/graphql.
type GraphQLOutput struct {
	Status int
	Body   struct {
		Data   json.RawMessage `json:"data,omitempty" doc:"The result (absent when the query was refused before running)"`
		Errors []GraphQLError  `json:"errors,omitempty"`
		// Extensions.cost is what the query was charged.
		Extensions *GraphQLExtensions `json:"extensions,omitempty"`
	}
}

// GraphQLExtensions are the answer's extensions.
type GraphQLExtensions struct {
	Cost GraphQLCost `json:"cost"`
}

// GraphQLCost is a query's computed complexity and its rate-limit cost.
type GraphQLCost struct {
	Complexity int `json:"complexity" doc:"The query's complexity (see docs/graphql.md)"`
	Units      int `json:"units" doc:"Rate-limit units charged, the POST's 2 included: max(2, ceil(complexity / 200)), at most a bucket's capacity"`
}

// GraphQLSchemaOutput is the schema document.
type GraphQLSchemaOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte `contentType:"text/plain"`
}

func (s *Server) registerGraphQL() {
	tags := []string{"GraphQL"}
	graph := gql.New(gql.Deps{Store: s.store, Services: s.services, Operations: s.operations, Quotes: s.quotes, Billing: s.billing,
		Support: s.support, Events: s.eventlog, RequestID: RequestID, Log: s.log})
	register(s, huma.Operation{OperationID: "graphql", Method: http.MethodPost, Path: "/graphql", Summary: "Query the graph (GraphQL)", Tags: tags,
		Description: "A read-only GraphQL view of services, operations, quotes, subscriptions, invoices, payments, tickets and their comments, events " +
			"and webhook subscriptions, with the REST API's tenancy and permissions applied field by field (a field you may not read is null with an " +
			"error whose extensions.code is INSUFFICIENT_PERMISSIONS). Lists are Relay connections (first, after, filter in the filter language of the REST lists). " +
			"An executed query answers 200 with data and errors; a query that does not parse or validate, or is too deep or too complex, answers 200 " +
			"with errors and no data (GraphQL over HTTP with application/json); a malformed body answers 400 in the usual error shape. The query costs max(2, ceil(complexity / 200)) rate-limit units, " +
			"and counts once in the endpoint group of each group of REST endpoints it reads through (billing, the event list). See docs/graphql.md."},
		access{}, func(ctx context.Context, in *GraphQLInput) (*GraphQLOutput, error) {
			return s.graphQL(ctx, graph, in)
		})
	register(s, huma.Operation{OperationID: "get-graphql-schema", Method: http.MethodGet, Path: "/graphql/schema.graphql", Summary: "The GraphQL schema (SDL)", Tags: tags,
		Description: "The schema of POST /v1/graphql in the GraphQL schema definition language, as text/plain."},
		access{public: true}, func(context.Context, *struct{}) (*GraphQLSchemaOutput, error) {
			return &GraphQLSchemaOutput{ContentType: "text/plain; charset=utf-8", Body: []byte(gql.SDL())}, nil
		})
}

// graphQL prepares the query, charges its cost beyond the POST's, and runs it.
func (s *Server) graphQL(ctx context.Context, graph *gql.Handler, in *GraphQLInput) (*GraphQLOutput, error) {
	params := &graphql.RawParams{Query: in.Body.Query, OperationName: in.Body.OperationName, Variables: jsonNumbers(in.Body.Variables).(map[string]any)}
	prepared, errs := graph.Prepare(ctx, params)
	if errs != nil {
		// GraphQL over HTTP with application/json: 200 for every well-formed
		// request, the refusal in errors (and no data); the platform's error
		// shape stays that of every 4xx.
		out := &GraphQLOutput{Status: http.StatusOK}
		out.Body.Errors = s.graphQLErrors(errs)
		return out, nil
	}
	units := ratelimit.Cost(http.MethodPost)
	if in.fc != nil {
		more, err := s.chargeMore(in.fc, prepared.Cost()-units, graphQLGroups(prepared.Fields())...)
		if err != nil {
			return nil, err
		}
		units += more
	}
	resp := graph.Execute(ctx, prepared)
	out := &GraphQLOutput{Status: http.StatusOK}
	out.Body.Data = resp.Data
	out.Body.Errors = s.graphQLErrors(resp.Errors)
	out.Body.Extensions = &GraphQLExtensions{Cost: GraphQLCost{Complexity: prepared.Complexity, Units: units}}
	return out, nil
}

// jsonNumbers returns v (decoded JSON) with its numbers as json.Number, the
// form gqlgen's scalars read (as its own HTTP transport decodes them): a
// float64 variable is no Int to gqlgen, which failed the field and left it
// out of the query's complexity.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonNumbers(e)
		}
		return out
	}
	return v
}

// graphQLFieldGroup returns the endpoint group of a field that reads
// what the group's REST endpoints read: billing (/billing/*) and the event
// list (large data exports); false for the others.
func graphQLFieldGroup(field string) (ratelimit.Group, bool) {
	switch field {
	case "Query.invoices", "Query.invoice", "Query.payments", "Query.payment", "Query.subscriptions", "Query.subscription",
		"Service.subscription", "Subscription.invoices", "Invoice.payments", "Payment.invoice":
		return ratelimit.GroupBilling, true
	case "Query.events":
		return ratelimit.GroupExports, true
	}
	return ratelimit.GroupNone, false
}

// graphQLGroups returns the endpoint groups a query's fields read, each once.
func graphQLGroups(fields []string) []ratelimit.Group {
	var out []ratelimit.Group
	for _, f := range fields {
		if g, ok := graphQLFieldGroup(f); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// graphQLErrors converts gqlgen's errors to the documented shape and
// counts each in the API's error metric by its code, as an error answer of
// the REST API is counted.
func (s *Server) graphQLErrors(list gqlerror.List) []GraphQLError {
	if len(list) == 0 {
		return nil
	}
	out := make([]GraphQLError, len(list))
	for i, e := range list {
		out[i] = GraphQLError{Message: e.Message, Extensions: e.Extensions}
		for _, p := range e.Path {
			switch v := p.(type) {
			case ast.PathName:
				out[i].Path = append(out[i].Path, string(v))
			case ast.PathIndex:
				out[i].Path = append(out[i].Path, int(v))
			}
		}
		for _, l := range e.Locations {
			out[i].Locations = append(out[i].Locations, GraphQLLocation{Line: l.Line, Column: l.Column})
		}
		if code, ok := e.Extensions["code"].(string); ok {
			s.metrics.APIError(code)
		}
	}
	return out
}
