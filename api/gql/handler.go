package gql

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
)

// SDL is the schema, as published at GET /v1/graphql/schema.graphql.
//
//go:embed schema.graphqls
var SDL string

// Limits of a query (docs/graphql.md).
const (
	// MaxDepth is the deepest nesting of fields a query may select
	// (introspection fields, __schema and __type, are not counted).
	MaxDepth = 10
	// MaxComplexity is the largest complexity a query may have: every
	// field costs 1 plus its selections, and a list field costs its
	// selections times the items it may return (first).
	MaxComplexity = 20_000
	// ComplexityPerUnit is the complexity one rate-limit unit buys: a
	// query costs max(2, ceil(complexity / ComplexityPerUnit)) units.
	ComplexityPerUnit = 200
	// maxTokens bounds the tokens of a query document.
	maxTokens = 10_000
	// defaultFirst and maxFirst bound the edges of a root connection
	// (as a REST list's limit); nested lists default to nestedFirst and
	// return at most maxNested items.
	defaultFirst = models.DefaultPageLimit
	maxFirst     = models.MaxPageLimit
	nestedFirst  = 10
	maxNested    = 50
)

// Error codes of refused queries, in extensions.code.
const (
	// CodeParseFailed is a query that is not GraphQL.
	CodeParseFailed = errcode.ParseFailed
	// CodeValidationFailed is a query that does not fit the schema (or
	// whose variables do not fit the operation).
	CodeValidationFailed = errcode.ValidationFailed
)

// Deps are what the graph reads through: the domain stores, each called
// with the caller's principal as the REST handlers call them.
type Deps struct {
	Store      *models.Store
	Services   *services.Store
	Operations *operations.Store
	Quotes     *quotes.Store
	Billing    *billing.Store
	Support    *support.Store
	Events     *eventlog.Store
	// RequestID returns the request id of a context (extensions.request_id).
	RequestID func(context.Context) string
	// Log logs internal failures (their causes are never shown).
	Log *slog.Logger
}

// Handler prepares and executes GraphQL requests.
type Handler struct {
	cfg  Deps
	es   graphql.ExecutableSchema
	exec *executor.Executor
}

// New returns the handler of the graph.
func New(cfg Deps) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.RequestID == nil {
		cfg.RequestID = func(context.Context) string { return "" }
	}
	h := &Handler{cfg: cfg}
	schema := Config{Resolvers: &resolver{cfg: &h.cfg}}
	setComplexity(&schema.Complexity)
	h.es = NewExecutableSchema(schema)
	h.exec = executor.New(h.es)
	h.exec.Use(extension.Introspection{})
	h.exec.SetParserTokenLimit(maxTokens)
	h.exec.SetErrorPresenter(h.present)
	h.exec.SetRecoverFunc(func(ctx context.Context, v any) error {
		return models.Internal(fmt.Errorf("panic in a resolver: %v", v))
	})
	return h
}

// Prepared is a parsed, validated query within the limits, ready to run.
type Prepared struct {
	op *graphql.OperationContext
	// Complexity is the query's complexity.
	Complexity int
}

// Cost returns the query's rate-limit cost in units:
// max(2, ceil(complexity / ComplexityPerUnit)); 2 is what any POST costs.
func (p *Prepared) Cost() int {
	return max(2, (p.Complexity+ComplexityPerUnit-1)/ComplexityPerUnit)
}

// Prepare parses and validates a request and checks its depth and
// complexity. A refusal is a GraphQL error list (extensions.code:
// GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED, QUERY_TOO_DEEP or
// QUERY_TOO_COMPLEX).
func (h *Handler) Prepare(ctx context.Context, params *graphql.RawParams) (*Prepared, gqlerror.List) {
	ctx = graphql.StartOperationTrace(ctx)
	op, errs := h.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		for _, e := range errs {
			h.decorate(ctx, e)
		}
		return nil, errs
	}
	if op.Operation.Operation != ast.Query {
		return nil, gqlerror.List{h.refusal(ctx, CodeValidationFailed, "only queries are served: the graph is read-only (use the REST endpoints to change things, /v1/stream to follow changes)")}
	}
	if d := depth(op.Operation.SelectionSet, op.Doc.Fragments, 0, map[string]bool{}); d > MaxDepth {
		return nil, gqlerror.List{h.refusal(ctx, string(models.CodeQueryTooDeep), fmt.Sprintf("the query is %d fields deep; at most %d are allowed", d, MaxDepth))}
	}
	c := complexity.Calculate(ctx, h.es, op.Operation, op.Variables)
	if c > MaxComplexity {
		e := h.refusal(ctx, string(models.CodeQueryTooComplex), fmt.Sprintf("the query's complexity is %d; at most %d is allowed (ask for fewer items with first, or fewer nested lists)", c, MaxComplexity))
		e.Extensions["complexity"], e.Extensions["max_complexity"] = c, MaxComplexity
		return nil, gqlerror.List{e}
	}
	return &Prepared{op: op, Complexity: c}, nil
}

// Fields returns the schema coordinates ("Type.field") of every field
// the query selects, each once (introspection fields left out).
func (p *Prepared) Fields() []string {
	seen := map[string]bool{}
	var out []string
	var walk func(set ast.SelectionSet, frags map[string]bool)
	walk = func(set ast.SelectionSet, frags map[string]bool) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if strings.HasPrefix(s.Name, "__") || s.ObjectDefinition == nil {
					continue
				}
				if c := s.ObjectDefinition.Name + "." + s.Name; !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
				walk(s.SelectionSet, frags)
			case *ast.InlineFragment:
				walk(s.SelectionSet, frags)
			case *ast.FragmentSpread:
				if f := p.op.Doc.Fragments.ForName(s.Name); f != nil && !frags[s.Name] {
					frags[s.Name] = true
					walk(f.SelectionSet, frags)
				}
			}
		}
	}
	walk(p.op.Operation.SelectionSet, map[string]bool{})
	return out
}

// Execute runs a prepared query with the caller's context (its
// principal), with loaders of its own.
func (h *Handler) Execute(ctx context.Context, p *Prepared) *graphql.Response {
	ctx = graphql.StartOperationTrace(ctx)
	ctx = withLoaders(ctx, newLoaders(&h.cfg))
	respond, ctx := h.exec.DispatchOperation(ctx, p.op)
	return respond(ctx)
}

// refusal is an error of the whole request with a code.
func (h *Handler) refusal(ctx context.Context, code, msg string) *gqlerror.Error {
	e := &gqlerror.Error{Message: msg}
	errcode.Set(e, code)
	h.decorate(ctx, e)
	return e
}

// decorate adds the request id to an error's extensions.
func (h *Handler) decorate(ctx context.Context, e *gqlerror.Error) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	if id := h.cfg.RequestID(ctx); id != "" {
		e.Extensions["request_id"] = id
	}
}

// present turns a resolver's error into the answer's error: the platform's
// code in extensions.code, its client-safe message and details; anything
// else is INTERNAL_ERROR with a generic message (the cause is logged).
func (h *Handler) present(ctx context.Context, err error) *gqlerror.Error {
	var gerr *gqlerror.Error
	if !errors.As(err, &gerr) {
		gerr = gqlerror.WrapPath(graphql.GetPath(ctx), err)
	}
	out := &gqlerror.Error{Path: gerr.Path, Locations: gerr.Locations, Extensions: map[string]any{}}
	var me *models.Error
	switch {
	case errors.As(err, &me):
		if me.Code == models.CodeInternal && models.DatabaseUnavailable(err) {
			me = models.Errorf(models.CodeDependencyUnavailable, "the database is unavailable right now; retry shortly").WithDetail("retry_after", 2)
		}
		if me.Code == models.CodeInternal {
			h.cfg.Log.ErrorContext(ctx, "graphql field failed", "request_id", h.cfg.RequestID(ctx), "path", gerr.Path.String(), "error", err)
		}
		out.Message = me.Message
		out.Extensions["code"] = string(me.Code)
		if len(me.Details) > 0 {
			out.Extensions["details"] = me.Details
		}
	case gerr.Err == nil && gerr.Extensions["code"] != nil:
		// gqlgen's own refusals (an argument that does not coerce).
		out.Message = gerr.Message
		out.Extensions["code"] = gerr.Extensions["code"]
	default:
		h.cfg.Log.ErrorContext(ctx, "graphql field failed", "request_id", h.cfg.RequestID(ctx), "path", gerr.Path.String(), "error", err)
		out.Message = "an internal error occurred"
		out.Extensions["code"] = string(models.CodeInternal)
	}
	h.decorate(ctx, out)
	return out
}

// depth returns the deepest nesting of fields under set (fragments
// followed once; introspection fields not counted).
func depth(set ast.SelectionSet, frags ast.FragmentDefinitionList, level int, seen map[string]bool) int {
	deepest := level
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = depth(s.SelectionSet, frags, level+1, seen)
		case *ast.InlineFragment:
			d = depth(s.SelectionSet, frags, level, seen)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			f := frags.ForName(s.Name)
			if f == nil {
				continue
			}
			seen[s.Name] = true
			d = depth(f.SelectionSet, frags, level, seen)
			delete(seen, s.Name)
		}
		deepest = max(deepest, d)
	}
	return deepest
}
