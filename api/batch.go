package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// Batch limits (docs/batch.md): at most MaxBatchItems sub-requests, of which
// at most batchParallelism run at once.
const (
	MaxBatchItems    = 100
	batchParallelism = 8
)

// BatchItem is one sub-request of POST /v1/batch.
type BatchItem struct {
	ID     string `json:"id" required:"true" minLength:"1" maxLength:"64" pattern:"^[A-Za-z0-9_-]+$" example:"acct" doc:"Unique within the batch; letters, digits, _ and -"`
	Method string `json:"method" required:"true" enum:"GET,POST,PUT,PATCH,DELETE" example:"GET"`
	Path   string `json:"path" required:"true" minLength:"4" maxLength:"2048" pattern:"^/(api/)?v1/[^\\s#]*$" example:"/v1/services/catalog" doc:"A path under /v1 (or /api/v1), query included; may hold {{<id>.body.<field>}} references to a dependency's answer"`
	// Headers are the item's own headers: only those of batchItemHeaders.
	Headers   map[string]string `json:"headers,omitempty" maxProperties:"20" doc:"Only Idempotency-Key, API-Version, Content-Type, If-Match, If-None-Match and X-MFA-Challenge-Id; any other header (Authorization, X-API-Key, Cookie, X-Forwarded-For...) answers the item 400"`
	Body      json.RawMessage   `json:"body,omitempty" doc:"The item's JSON body; its strings may hold {{<id>.body.<field>}} references to a dependency's answer"`
	DependsOn []string          `json:"depends_on,omitempty" maxItems:"100" doc:"Ids of items that must answer 2xx first; otherwise this item answers 424 FAILED_DEPENDENCY without running"`
}

// BatchResponse is the answer of one sub-request.
type BatchResponse struct {
	ID      string            `json:"id" example:"acct"`
	Status  int               `json:"status" example:"201"`
	Headers map[string]string `json:"headers" doc:"Content-Type, Location, ETag, X-Request-Id, Idempotent-Replayed, Retry-After and X-RateLimit-*, when the item's answer has them"`
	Body    json.RawMessage   `json:"body" doc:"The item's JSON answer, as the endpoint answers it alone (an error in the documented shape); null when there is none"`
}

// BatchInput is the request of POST /v1/batch.
type BatchInput struct {
	Body struct {
		Requests []BatchItem `json:"requests" required:"true" nullable:"false" minItems:"1" maxItems:"100" doc:"The sub-requests, answered in this order"`
		Atomic   bool        `json:"atomic,omitempty" doc:"All or nothing, in one database transaction: only plain creates (and reads) of one area; see docs/batch.md"`
	}
	call batchCall // the caller's credential and connection, read by Resolve
}

// BatchOutput is the answer of POST /v1/batch.
type BatchOutput struct {
	Body struct {
		Envelope
		Atomic    bool            `json:"atomic"`
		Committed *bool           `json:"committed,omitempty" doc:"Atomic batches only: whether the items' changes were committed"`
		Responses []BatchResponse `json:"responses"`
	}
}

// batchCall is what each sub-request carries over from the batch: the
// caller's credential headers and connection (so that each sub-request is
// authenticated, restricted and rate-limited as the batch was), and the
// batch's identity.
type batchCall struct {
	fc         *fiber.Ctx        // the batch's request, for its answer's headers
	headers    map[string]string // the credential and connection headers copied to every item
	forwarded  []string          // X-Forwarded-For values, read only from a trusted proxy
	remoteAddr net.Addr
	requestID  string
	principal  *models.Principal
}

// inheritedHeaders are copied from the batch to each of its sub-requests
// (an item's own API-Version replaces the batch's).
var inheritedHeaders = []string{fiber.HeaderAuthorization, "X-API-Key", ForwardedCertHeader, fiber.HeaderUserAgent, fiber.HeaderHost, "API-Version"}

// Resolve captures the batch's credential and connection (huma calls it
// after authorization, before the handler).
func (in *BatchInput) Resolve(hctx huma.Context) []error {
	c := humafiber.Unwrap(hctx)
	in.call = batchCall{fc: c, headers: map[string]string{}, remoteAddr: c.Context().RemoteAddr(),
		requestID: RequestID(c.UserContext()), principal: models.PrincipalFrom(c.UserContext())}
	for _, h := range inheritedHeaders {
		if v := c.Get(h); v != "" {
			in.call.headers[h] = strings.Clone(v)
		}
	}
	for _, v := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		in.call.forwarded = append(in.call.forwarded, string(v))
	}
	return nil
}

// batchItemHeaders are the headers an item may set (canonical form).
var batchItemHeaders = map[string]bool{"Idempotency-Key": true, "Api-Version": true, "Content-Type": true,
	"If-Match": true, "If-None-Match": true, "X-Mfa-Challenge-Id": true}

// batchAnswerHeaders are the headers of an item's answer that its
// BatchResponse shows.
var batchAnswerHeaders = []string{fiber.HeaderContentType, fiber.HeaderLocation, fiber.HeaderETag, "X-Request-Id", "Idempotent-Replayed",
	fiber.HeaderRetryAfter, "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Burst",
	"X-RateLimit-Burst-Remaining", "X-RateLimit-Retry-After"}

// batchRef is a reference to a dependency's answer: {{<id>.body.<field>...}}.
var batchRef = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_-]+)\.body((?:\.[A-Za-z0-9_-]+)*)\s*\}\}`)

// atomicCreates are the plain creates an atomic batch may hold: POSTs that
// write database rows only (no workflow, no operation, nothing outside the
// database), so that one transaction holds all of their effects.
var atomicCreates = map[string]bool{
	"/billing/accounts": true, "/billing/budgets": true, "/billing/webhooks": true,
	"/services/webhooks": true, "/support/webhooks": true, "/webhooks": true,
}

// batchPlan is a validated batch: each item's dependencies as indexes,
// and an order that runs every dependency before its dependents.
type batchPlan struct {
	items []BatchItem
	deps  [][]int
	order []int
}

func (s *Server) registerBatch() {
	register(s, huma.Operation{OperationID: "batch", Method: http.MethodPost, Path: "/batch", Summary: "Send up to 100 requests in one",
		Tags: []string{"Batch"},
		Description: "Runs each sub-request as if it were sent alone with the batch's credential: the same authentication, permissions, " +
			"tenancy, validation, idempotency (an item's own Idempotency-Key) and rate limits (each item is charged as it runs, on top of the batch's own POST). " +
			"Independent items run concurrently (at most 8 at once); an item whose dependency (depends_on) did not answer 2xx answers 424 FAILED_DEPENDENCY without running. " +
			"The answer is 200 with each item's {id, status, headers, body}, in the request's order; a malformed batch (unknown or duplicate ids, a cycle, " +
			"more than 100 items, a batch inside a batch) is 400 VALIDATION_ERROR. `atomic: true` runs the items in one database transaction and " +
			"is refused (400) unless every item is a GET or a plain create of one area. Items that need a second factor answer mfa_required on their own. See docs/batch.md."},
		access{}, s.batch)
}

// batch serves POST /v1/batch.
func (s *Server) batch(ctx context.Context, in *BatchInput) (*BatchOutput, error) {
	if batchItemFrom(ctx) != nil {
		return nil, models.Invalid(models.FieldIssue{Field: "path", Issue: "a batch cannot contain a batch"})
	}
	if in.call.headers[fiber.HeaderAuthorization] == "" && in.call.headers["X-API-Key"] == "" && in.call.headers[ForwardedCertHeader] == "" {
		return nil, models.Invalid(models.FieldIssue{Field: "Authorization", Issue: "a batch needs its credential in Authorization or X-API-Key (a TLS client certificate alone cannot be passed on to its items)"})
	}
	plan, err := planBatch(in.Body.Requests)
	if err != nil {
		return nil, err
	}
	out := &BatchOutput{}
	out.Body.Atomic = in.Body.Atomic
	if in.Body.Atomic {
		if err := atomicIssues(plan.items); err != nil {
			return nil, err
		}
		committed, responses, err := s.runAtomic(ctx, in.call, plan)
		if err != nil {
			return nil, err
		}
		out.Body.Committed, out.Body.Responses = &committed, responses
	} else {
		out.Body.Responses = s.runConcurrently(ctx, in.call, plan)
	}
	reportBudget(in.call.fc, out.Body.Responses)
	return out, nil
}

// planBatch validates the items (ids, paths, dependencies, references) and
// orders them. Errors: VALIDATION_ERROR listing every issue in details.fields.
func planBatch(items []BatchItem) (*batchPlan, error) {
	var issues []models.FieldIssue
	issue := func(i int, field, format string, args ...any) {
		issues = append(issues, models.FieldIssue{Field: fmt.Sprintf("requests[%d].%s", i, field), Issue: fmt.Sprintf(format, args...)})
	}
	if len(items) == 0 || len(items) > MaxBatchItems {
		return nil, models.Invalid(models.FieldIssue{Field: "requests", Issue: fmt.Sprintf("1 to %d items (got %d)", MaxBatchItems, len(items))})
	}
	index := make(map[string]int, len(items))
	for i, it := range items {
		if j, dup := index[it.ID]; dup {
			issue(i, "id", "duplicates requests[%d].id %q", j, it.ID)
			continue
		}
		index[it.ID] = i
	}
	plan := &batchPlan{items: items, deps: make([][]int, len(items))}
	for i, it := range items {
		if problem := batchPathProblem(it.Path); problem != "" {
			issue(i, "path", "%s", problem)
		}
		seen := map[string]bool{}
		for _, d := range it.DependsOn {
			j, ok := index[d]
			switch {
			case seen[d]:
				issue(i, "depends_on", "lists %q twice", d)
			case d == it.ID:
				issue(i, "depends_on", "an item cannot depend on itself")
			case !ok:
				issue(i, "depends_on", "no item has the id %q", d)
			default:
				plan.deps[i] = append(plan.deps[i], j)
			}
			seen[d] = true
		}
		for _, ref := range batchRef.FindAllStringSubmatch(it.Path+string(it.Body), -1) {
			if !slices.Contains(it.DependsOn, ref[1]) {
				issue(i, "depends_on", "the reference %s needs %q in depends_on", ref[0], ref[1])
			}
		}
	}
	if len(issues) > 0 {
		return nil, models.Invalid(issues...)
	}
	order, cycle := topologicalOrder(plan.deps)
	if cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = items[i].ID
		}
		for _, i := range cycle {
			issue(i, "depends_on", "forms a cycle: %s", strings.Join(append(names, names[0]), " -> "))
		}
		return nil, models.Invalid(issues...)
	}
	plan.order = order
	return plan, nil
}

// topologicalOrder orders the items so that each comes after its
// dependencies, earlier items first among those ready (Kahn's algorithm).
// When the dependencies have a cycle, it returns one cycle instead.
func topologicalOrder(deps [][]int) (order, cycle []int) {
	n := len(deps)
	waiting := make([]int, n)
	dependents := make([][]int, n)
	for i, ds := range deps {
		waiting[i] = len(ds)
		for _, d := range ds {
			dependents[d] = append(dependents[d], i)
		}
	}
	done := make([]bool, n)
	for len(order) < n {
		next := -1
		for i := range n {
			if !done[i] && waiting[i] == 0 {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, findCycle(deps, done)
		}
		done[next] = true
		order = append(order, next)
		for _, j := range dependents[next] {
			waiting[j]--
		}
	}
	return order, nil
}

// findCycle follows unfinished dependencies from an unfinished item until
// an item repeats: every unfinished item waits on another one, so it does.
func findCycle(deps [][]int, done []bool) []int {
	start := slices.Index(done, false)
	pos := map[int]int{}
	var walk []int
	for i := start; ; {
		if at, ok := pos[i]; ok {
			return walk[at:]
		}
		pos[i] = len(walk)
		walk = append(walk, i)
		for _, d := range deps[i] {
			if !done[d] {
				i = d
				break
			}
		}
	}
}

// batchPathProblem says what is wrong with an item's path ("" when
// nothing): it must be a canonical path under /v1 or /api/v1 (no . or ..
// segments, no empty segments) and not the batch endpoint itself.
func batchPathProblem(raw string) string {
	p, _, _ := strings.Cut(raw, "?")
	unescaped, err := url.PathUnescape(p)
	if err != nil {
		return "is not a valid URL path"
	}
	if !strings.HasPrefix(unescaped, "/v1/") && !strings.HasPrefix(unescaped, "/api/v1/") {
		return "must be a path under /v1/ (or /api/v1/)"
	}
	if path.Clean(unescaped) != strings.TrimSuffix(unescaped, "/") || strings.Contains(unescaped, "\\") {
		return "must be a canonical path (no empty, . or .. segments)"
	}
	if lower := strings.TrimSuffix(strings.ToLower(strings.TrimPrefix(unescaped, "/api")), "/"); lower == "/v1/batch" {
		return "a batch cannot contain a batch"
	}
	return ""
}

// batchArea is the area of a versioned path: its first segment after /v1.
func batchArea(p string) string {
	p, _, _ = strings.Cut(p, "?")
	p = strings.TrimPrefix(strings.TrimPrefix(p, "/api"), "/v1")
	area, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return area
}

// atomicIssues refuses an atomic batch that holds anything but GETs and
// the plain creates of atomicCreates, or items of more than one area.
// Errors: VALIDATION_ERROR (details.reason atomic_not_supported).
func atomicIssues(items []BatchItem) error {
	var issues []models.FieldIssue
	area := ""
	for i, it := range items {
		p, _, _ := strings.Cut(it.Path, "?")
		p = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(p, "/api"), "/v1"), "/")
		field := fmt.Sprintf("requests[%d]", i)
		switch {
		case it.Method == http.MethodGet:
		case it.Method == http.MethodPost && atomicCreates[p]:
		default:
			issues = append(issues, models.FieldIssue{Field: field, Issue: it.Method + " " + it.Path + " cannot run in an atomic batch: only GETs and the plain creates listed in docs/batch.md can " +
				"(operations such as provisioning answer 202 and run outside the database, so no transaction can hold them)"})
			continue
		}
		if a := batchArea(it.Path); area == "" {
			area = a
		} else if a != area {
			issues = append(issues, models.FieldIssue{Field: field, Issue: fmt.Sprintf("is in area %q: an atomic batch stays in one area (%q)", a, area)})
		}
	}
	if len(issues) == 0 {
		return nil
	}
	e := models.Invalid(issues...)
	e.Message = "this batch cannot be atomic: " + e.Message
	return e.WithDetail("reason", "atomic_not_supported")
}

// reportBudget sets the batch answer's X-RateLimit-* headers to those of
// the item answer with the least remaining budget: the budget after the
// batch's items rather than before them.
func reportBudget(c *fiber.Ctx, responses []BatchResponse) {
	best := -1
	bestRemaining := 0
	for i, r := range responses {
		var remaining int
		if _, err := fmt.Sscan(r.Headers["X-RateLimit-Remaining"], &remaining); err != nil {
			continue
		}
		if best < 0 || remaining < bestRemaining {
			best, bestRemaining = i, remaining
		}
	}
	if best < 0 || c == nil {
		return
	}
	for k, v := range responses[best].Headers {
		if strings.HasPrefix(k, "X-RateLimit-") {
			c.Set(k, v)
		}
	}
}
