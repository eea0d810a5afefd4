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

//go:embed schema.graphqls
var sdl string

// SDL returns the schema, as published at GET /v1/graphql/schema.graphql.
func SDL() string { return sdl }

// Limits of a query (docs/graphql.md).
const (
	// MaxDepth is the deepest nesting of fields a query may select
	// (introspection fields, __schema and __type and what they select,
	// have limits of their own).
	MaxDepth = 10
	// MaxIntrospectionDepth is the deepest nesting of an introspection
	// field (counted from the query's root; the usual introspection
	// query of GraphQL tools is 11 deep with its chain of ofType).
	MaxIntrospectionDepth = 15
	// MaxIntrospectionLists is how many introspection lists of schema
	// objects (types, fields, args...) one path may nest under __schema
	// or __type: __schema { types { fields { args } } } is 3.
	MaxIntrospectionLists = 3
	// maxVisits bounds the field selections of a query with its
	// fragments expanded.
	maxVisits = 5_000
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
		return nil, gqlerror.List{h.refusal(ctx, errcode.ValidationFailed, "only queries are served: the graph is read-only (use the REST endpoints to change things, /v1/stream to follow changes)")}
	}
	sh := &shape{}
	if !sh.walk(op.Operation.SelectionSet, op.Doc.Fragments, 0, false, 0, map[string]bool{}) {
		return nil, gqlerror.List{h.refusal(ctx, string(models.CodeQueryTooComplex), fmt.Sprintf("the query selects more than %d fields once its fragments are expanded", maxVisits))}
	}
	if sh.depth > MaxDepth {
		return nil, gqlerror.List{h.refusal(ctx, string(models.CodeQueryTooDeep), fmt.Sprintf("the query is %d fields deep; at most %d are allowed", sh.depth, MaxDepth))}
	}
	if sh.introDepth > MaxIntrospectionDepth || sh.introLists > MaxIntrospectionLists {
		return nil, gqlerror.List{h.refusal(ctx, string(models.CodeQueryTooDeep), fmt.Sprintf("the introspection query is %d fields deep with %d nested lists of schema objects; at most %d and %d are allowed",
			sh.introDepth, sh.introLists, MaxIntrospectionDepth, MaxIntrospectionLists))}
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
		me = models.AnswerError(me, err)
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

// shape is what a walk of a query's selections, fragments expanded,
// found: the field selections visited, the deepest nesting of ordinary
// fields, of introspection fields, and of introspection lists.
type shape struct {
	visits, depth, introDepth, introLists int
}

// introspectionLists are the introspection fields that return lists of
// schema objects: nesting them multiplies the answer (every type's fields'
// types' fields...), so a path may hold at most MaxIntrospectionLists.
var introspectionLists = map[string]bool{
	"types": true, "fields": true, "inputFields": true, "enumValues": true, "interfaces": true,
	"possibleTypes": true, "args": true, "directives": true,
}

// walk visits set at level (fields above it); intro says whether the path
// passes through an introspection field, lists how many introspection
// lists it holds; path holds the fragments being expanded (a cycle is
// refused by validation; it is skipped here). It stops, false, when the
// visits pass maxVisits: a document of repeated fragment spreads
// expands exponentially, and is refused before anything walks it whole.
func (sh *shape) walk(set ast.SelectionSet, frags ast.FragmentDefinitionList, level int, intro bool, lists int, path map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if sh.visits++; sh.visits > maxVisits {
				return false
			}
			if s.Name == "__typename" {
				continue
			}
			in, l, n := intro || strings.HasPrefix(s.Name, "__"), level+1, lists
			if in {
				if intro && introspectionLists[s.Name] {
					n++
				}
				sh.introDepth, sh.introLists = max(sh.introDepth, l), max(sh.introLists, n)
			} else {
				sh.depth = max(sh.depth, l)
			}
			if !sh.walk(s.SelectionSet, frags, l, in, n, path) {
				return false
			}
		case *ast.InlineFragment:
			if !sh.walk(s.SelectionSet, frags, level, intro, lists, path) {
				return false
			}
		case *ast.FragmentSpread:
			f := frags.ForName(s.Name)
			if f == nil || path[s.Name] {
				continue
			}
			path[s.Name] = true
			ok := sh.walk(f.SelectionSet, frags, level, intro, lists, path)
			delete(path, s.Name)
			if !ok {
				return false
			}
		}
	}
	return true
}
