package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/api/internal/inproc"
	"github.com/telcoplatform/platform/models"
)

type batchItemKey struct{}

// batchItemInfo marks the context of a batch's sub-request.
type batchItemInfo struct {
	// principalID is the batch's principal: the batch's request signature,
	// if its key requires one, was verified, and it covers the items.
	principalID string
}

// batchItemFrom returns the batch item a request context belongs to (nil
// for requests sent by clients).
func batchItemFrom(ctx context.Context) *batchItemInfo {
	info, _ := ctx.Value(batchItemKey{}).(*batchItemInfo)
	return info
}

// runConcurrently runs the items, each once its dependencies have
// answered, at most batchParallelism at once.
func (s *Server) runConcurrently(ctx context.Context, call batchCall, plan *batchPlan) []BatchResponse {
	n := len(plan.items)
	out := make([]BatchResponse, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	slots := make(chan struct{}, batchParallelism)
	var wg sync.WaitGroup
	for i := range plan.items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			for _, d := range plan.deps[i] {
				<-done[d]
			}
			if r, failed := s.failedDependency(ctx, plan, out, i); failed {
				out[i] = r
				return
			}
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = s.runItem(ctx, call, plan, out, i, nil)
		}()
	}
	wg.Wait()
	return out
}

// runAtomic runs the items one after the other, dependencies first, in one
// database transaction: committed when every item answers 2xx; otherwise
// rolled back at the first failure, which keeps its answer while every
// other item answers 424 FAILED_DEPENDENCY (details.rolled_back says whether
// it had run). Errors: INTERNAL_ERROR when the transaction cannot begin or
// commit.
func (s *Server) runAtomic(ctx context.Context, call batchCall, plan *batchPlan) (bool, []BatchResponse, error) {
	out := make([]BatchResponse, len(plan.items))
	tx := s.store.DB.WithContext(ctx).Begin()
	if tx.Error != nil {
		return false, nil, models.Internal(tx.Error)
	}
	finished := false
	defer func() {
		if !finished {
			tx.Rollback()
		}
	}()
	failed := -1
	for _, i := range plan.order {
		out[i] = s.runItem(ctx, call, plan, out, i, tx)
		if !succeeded(out[i].Status) {
			failed = i
			break
		}
	}
	if failed < 0 {
		if err := tx.Commit().Error; err != nil {
			return false, nil, models.Internal(fmt.Errorf("commit an atomic batch: %w", err))
		}
		finished = true
		return true, out, nil
	}
	if err := tx.Rollback().Error; err != nil {
		s.log.ErrorContext(ctx, "rolling back an atomic batch failed", "request_id", RequestID(ctx), "error", err)
	}
	finished = true
	failedID := plan.items[failed].ID
	for i, it := range plan.items {
		if i == failed {
			continue
		}
		ran := out[i].ID != ""
		msg := fmt.Sprintf("not run: item %q of this atomic batch failed", failedID)
		if ran {
			msg = fmt.Sprintf("rolled back: item %q of this atomic batch failed", failedID)
		}
		out[i] = s.itemError(ctx, it.ID, models.Errorf(models.CodeFailedDependency, "%s", msg).
			WithDetail("failed_item", failedID).WithDetail("rolled_back", ran))
	}
	return false, out, nil
}

// succeeded reports whether an item's status is 2xx.
func succeeded(status int) bool { return status >= 200 && status < 300 }

// failedDependency answers item i with 424 FAILED_DEPENDENCY when one of
// its dependencies did not answer 2xx.
func (s *Server) failedDependency(ctx context.Context, plan *batchPlan, out []BatchResponse, i int) (BatchResponse, bool) {
	for _, d := range plan.deps[i] {
		if st := out[d].Status; !succeeded(st) {
			id := plan.items[d].ID
			return s.itemError(ctx, plan.items[i].ID, models.Errorf(models.CodeFailedDependency, "not run: dependency %q answered %d", id, st).
				WithDetail("dependency", id).WithDetail("dependency_status", st)), true
		}
	}
	return BatchResponse{}, false
}

// runItem checks item i's headers, fills in its references to its
// dependencies' answers and sends it through the app (in tx when not nil).
func (s *Server) runItem(ctx context.Context, call batchCall, plan *batchPlan, out []BatchResponse, i int, tx *gorm.DB) BatchResponse {
	it := plan.items[i]
	field := fmt.Sprintf("requests[%d]", i)
	var issues []models.FieldIssue
	names := make([]string, 0, len(it.Headers))
	for name := range it.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !batchItemHeaders[textproto.CanonicalMIMEHeaderKey(name)] {
			issues = append(issues, models.FieldIssue{Field: field + ".headers." + name,
				Issue: "is not allowed in a batch item: every item is sent with the batch's credential; allowed: Idempotency-Key, API-Version, Content-Type, If-Match, If-None-Match, X-MFA-Challenge-Id"})
		}
	}
	if tx != nil && it.Headers != nil && headerValue(it.Headers, "Idempotency-Key") != "" {
		issues = append(issues, models.FieldIssue{Field: field + ".headers.Idempotency-Key",
			Issue: "items of an atomic batch carry no Idempotency-Key: send one with the batch itself"})
	}
	if len(issues) > 0 {
		return s.itemError(ctx, it.ID, models.Invalid(issues...))
	}
	answers := func(id string) (json.RawMessage, bool) {
		for _, d := range plan.deps[i] {
			if plan.items[d].ID == id {
				return out[d].Body, true
			}
		}
		return nil, false
	}
	target, err := itemTarget(it.Path, answers)
	if err == nil {
		if problem := batchPathProblem(target); problem != "" {
			err = fmt.Errorf("%s", problem)
		}
	}
	if err != nil {
		return s.itemError(ctx, it.ID, models.Invalid(models.FieldIssue{Field: field + ".path", Issue: err.Error()}))
	}
	body := []byte(it.Body)
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		body = nil
	}
	if len(body) > 0 && batchRef.Match(body) {
		if body, err = resolveBodyRefs(body, answers); err != nil {
			return s.itemError(ctx, it.ID, models.Invalid(models.FieldIssue{Field: field + ".body", Issue: err.Error()}))
		}
	}
	return s.dispatchItem(ctx, call, it, target, body, tx)
}

// headerValue returns the value of a header of an item, whatever its case.
func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// dispatchItem sends one sub-request through the app's whole pipeline
// (authentication with the batch's credential, restrictions, rate limits,
// authorization, idempotency, validation, the handler) in process, and
// returns its answer.
func (s *Server) dispatchItem(ctx context.Context, call batchCall, it BatchItem, target string, body []byte, tx *gorm.DB) BatchResponse {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(it.Method)
	req.SetRequestURI(target)
	for k, v := range call.headers {
		req.Header.Set(k, v)
	}
	for _, v := range call.forwarded {
		req.Header.Add(fiber.HeaderXForwardedFor, v)
	}
	for k, v := range it.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set(fiber.HeaderAccept, fiber.MIMEApplicationJSON) // never an event stream
	if id := call.requestID + "." + it.ID; validRequestID(id) {
		req.Header.Set("X-Request-Id", id)
	}
	if len(body) > 0 {
		if headerValue(it.Headers, fiber.HeaderContentType) == "" {
			req.Header.SetContentType(fiber.MIMEApplicationJSON)
		}
		req.SetBody(body)
	}
	itemCtx := context.WithValue(inproc.Detached(ctx), batchItemKey{}, &batchItemInfo{principalID: call.principal.ID})
	if tx != nil {
		itemCtx = models.WithTx(itemCtx, tx)
	}
	fctx := s.inProcess.Serve(itemCtx, req, call.remoteAddr, nil)
	res := &fctx.Response
	out := BatchResponse{ID: it.ID, Status: res.StatusCode(), Headers: map[string]string{}}
	for _, h := range batchAnswerHeaders {
		if v := res.Header.Peek(h); len(v) > 0 {
			out.Headers[h] = string(v)
		}
	}
	raw := bytes.TrimSpace(res.Body())
	switch {
	case len(raw) == 0:
	case json.Valid(raw):
		out.Body = bytes.Clone(raw)
	default: // not JSON (none of the API's answers): shown as a string
		out.Body, _ = jsonMarshal(string(raw))
	}
	return out
}

// itemError is an item's error answer given by the batch itself (the
// item did not run), in the documented shape, with the batch's request id.
func (s *Server) itemError(ctx context.Context, id string, err error) BatchResponse {
	body := newErrorBody(ctx, s.log, err)
	body.setMetadata(s.metadataFor(ctx))
	raw, merr := jsonMarshal(body)
	if merr != nil {
		raw = nil
	}
	headers := map[string]string{fiber.HeaderContentType: fiber.MIMEApplicationJSON}
	for k, v := range body.headers {
		headers[k] = v
	}
	return BatchResponse{ID: id, Status: body.status, Headers: headers, Body: raw}
}

// refValue returns the value a reference ({{id.body.a.b}}) names in the
// answers of the item's dependencies.
func refValue(m []string, answers func(string) (json.RawMessage, bool)) (any, error) {
	raw, ok := answers(m[1])
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf("%s: %q has no answer body", m[0], m[1])
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %q's answer is not JSON", m[0], m[1])
	}
	for _, seg := range strings.Split(strings.TrimPrefix(m[2], "."), ".") {
		if seg == "" {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if v, ok = x[seg]; !ok {
				return nil, fmt.Errorf("%s: %q's answer has no %q", m[0], m[1], seg)
			}
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(x) {
				return nil, fmt.Errorf("%s: %q's answer has no element %q", m[0], m[1], seg)
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("%s: %q's answer has no %q", m[0], m[1], seg)
		}
	}
	return v, nil
}

// refText is a referenced value as text: strings and numbers only.
func refText(m []string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", fmt.Errorf("%s is not a string or a number", m[0])
}

// itemTarget resolves the references of an item's path: those before the
// query are escaped as path segments, those in the query as query values
// (where &, = and + mean something).
func itemTarget(path string, answers func(string) (json.RawMessage, bool)) (string, error) {
	pathPart, query, hasQuery := strings.Cut(path, "?")
	target, err := replaceRefs(pathPart, answers, url.PathEscape)
	if err != nil || !hasQuery {
		return target, err
	}
	q, err := replaceRefs(query, answers, url.QueryEscape)
	return target + "?" + q, err
}

// replaceRefs replaces the references in s by the text of the values
// they name, passed through escape.
func replaceRefs(s string, answers func(string) (json.RawMessage, bool), escape func(string) string) (string, error) {
	var firstErr error
	out := batchRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := batchRef.FindStringSubmatch(ref)
		v, err := refValue(m, answers)
		if err == nil {
			var text string
			if text, err = refText(m, v); err == nil {
				return escape(text)
			}
		}
		if firstErr == nil {
			firstErr = err
		}
		return ref
	})
	return out, firstErr
}

// resolveBodyRefs replaces the references in the strings of an item's
// body: a string that is one reference becomes the value it names (of any
// JSON type); references inside a longer string are replaced by their text.
func resolveBodyRefs(body []byte, answers func(string) (json.RawMessage, bool)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("is not valid JSON")
	}
	var firstErr error
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case string:
			if m := batchRef.FindStringSubmatch(x); m != nil && m[0] == x {
				val, err := refValue(m, answers)
				if err != nil && firstErr == nil {
					firstErr = err
				}
				return val
			}
			out, err := replaceRefs(x, answers, func(t string) string { return t })
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return out
		}
		return v
	}
	doc = walk(doc)
	if firstErr != nil {
		return nil, firstErr
	}
	return jsonMarshal(doc)
}
