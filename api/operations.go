package api

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"go.temporal.io/api/serviceerror"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/rowversion"
	"github.com/telcoplatform/platform/workflows"
)

// Timings of the operations resource.
const (
	liveDetailTimeout = 750 * time.Millisecond // workflow describe + query on GET
	ssePollInterval   = 250 * time.Millisecond // how often a stream re-reads the row
	sseHeartbeat      = 15 * time.Second       // comment line that keeps proxies from closing an idle stream
	sseProbeInterval  = 500 * time.Millisecond // an idle stream writes a ":" line this often to notice a closed connection
	sseMaxDuration    = time.Hour              // a stream ends after this; clients reconnect
)

// OperationProgressItem counts an operation's steps (or items).
type OperationProgressItem struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Percent   int `json:"percent"`
}

// OperationErrorItem is an operation's (or a step's) error.
type OperationErrorItem struct {
	_       struct{}       `nullable:"true"` // answered as null where there is none
	Code    string         `json:"code" example:"PROVISIONING_FAILED"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// OperationStepItem is one step of an operation.
type OperationStepItem struct {
	Name       string              `json:"name" example:"reserve_capacity"`
	Status     string              `json:"status" enum:"pending,in_progress,completed,failed,cancelled,compensated,skipped"`
	StartedAt  *string             `json:"started_at"`
	FinishedAt *string             `json:"finished_at"`
	Error      *OperationErrorItem `json:"error"`
}

// OperationItemDoc is one item of a bulk operation.
type OperationItemDoc struct {
	ID     string              `json:"id"`
	Status string              `json:"status"`
	Error  *OperationErrorItem `json:"error"`
}

// OperationWorkflow locates the operation's Temporal workflow; status and
// live are read from Temporal when it answers quickly (running operations only).
type OperationWorkflow struct {
	ID     string         `json:"id" example:"prov_3fK9aZ" doc:"The workflow id: the operation's request_id, or for an item of a bulk job that runs in its job's workflow, the bulk operation's request_id"`
	RunID  string         `json:"run_id"`
	UIURL  string         `json:"ui_url" example:"http://localhost:8233/namespaces/default/workflows/prov_3fK9aZ"`
	Status string         `json:"status,omitempty" example:"running" doc:"The workflow's run state, from Temporal"`
	Live   map[string]any `json:"live,omitempty" doc:"The workflow's own progress query, when a worker answers"`
}

// OperationDocument is the operation resource (DECISIONS 5).
type OperationDocument struct {
	RequestID  string                `json:"request_id" example:"prov_3fK9aZ"`
	Type       string                `json:"type" example:"provisioning"`
	Status     string                `json:"status" enum:"pending,in_progress,completed,partial,failed,rolled_back,cancelled"`
	Progress   OperationProgressItem `json:"progress"`
	Steps      []OperationStepItem   `json:"steps"`
	Items      []OperationItemDoc    `json:"items"`
	Result     map[string]any        `json:"result" nullable:"true"`
	Error      *OperationErrorItem   `json:"error"`
	CreatedAt  string                `json:"created_at"`
	UpdatedAt  string                `json:"updated_at"`
	FinishedAt *string               `json:"finished_at"`
	Workflow   OperationWorkflow     `json:"workflow"`
}

// OperationOutput is one operation.
type OperationOutput struct {
	Status   int
	Location string `header:"Location"`
	Body     struct {
		Envelope
		OperationDocument
		preEncoded // GET /v1/operations/{id}: encoded once per snapshot of the row (operationAnswer)
	}
}

// operationAnswer is GET /v1/operations/{id}'s answer. The operation's row
// is read on every request. A running operation (with a workflow engine)
// is built on every request, since the workflow's live detail is added to
// it; otherwise, when the row is unchanged since the last read (same
// snapshot), the document and encoding built then are served again.
func (s *Server) operationAnswer(ctx context.Context, id string) (*OperationOutput, error) {
	prev := s.operationAnswers.get(id)
	snap, err := s.operations.OperationSnapshot(ctx, principal(ctx), id, prev.snapshot(), rowVersionOf(ctx, rowversion.Operations))
	if err != nil {
		return nil, err
	}
	op := snap.Row
	if s.temporal != nil && !op.Status.Terminal() {
		out := s.operationOutput(op, http.StatusOK)
		s.addLiveDetail(ctx, &out.Body.OperationDocument, op)
		return out, nil
	}
	out := &OperationOutput{Status: http.StatusOK}
	if err := s.operationAnswers.serve(id, prev, snap, &out.Body.OperationDocument, &out.Body.preEncoded, &out.Body, s.operationDocument); err != nil {
		return nil, err
	}
	return out, nil
}

func operationError(e *operations.OperationError) *OperationErrorItem {
	if e == nil {
		return nil
	}
	return &OperationErrorItem{Code: string(e.Code), Message: e.Message, Details: e.Details}
}

// uiURL returns the Temporal UI page of a workflow.
func (s *Server) uiURL(workflowID string) string {
	ns := s.cfg.TemporalNamespace
	if ns == "" {
		ns = "default"
	}
	return s.cfg.TemporalUIURL + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(workflowID)
}

func (s *Server) operationDocument(op *operations.Operation) OperationDocument {
	p := op.Progress()
	doc := OperationDocument{
		RequestID: op.ID, Type: string(op.Type), Status: string(op.Status),
		Progress: OperationProgressItem{Total: p.Total, Completed: p.Completed, Failed: p.Failed, Percent: p.Percent},
		Steps: mapSlice(op.Steps, func(st *operations.OperationStep) OperationStepItem {
			return OperationStepItem{Name: st.Name, Status: string(st.Status), StartedAt: optTimestamp(st.StartedAt), FinishedAt: optTimestamp(st.FinishedAt), Error: operationError(st.Error)}
		}),
		Items: mapSlice(op.Items, func(it *operations.OperationItem) OperationItemDoc {
			return OperationItemDoc{ID: it.ID, Status: it.Status, Error: operationError(it.Error)}
		}),
		Result: op.Result, Error: operationError(op.Error),
		CreatedAt: models.Timestamp(op.CreatedAt), UpdatedAt: models.Timestamp(op.UpdatedAt), FinishedAt: optTimestamp(op.FinishedAt),
		Workflow: OperationWorkflow{ID: op.ID, RunID: op.RunID, UIURL: s.uiURL(op.ID)},
	}
	if parent := op.BulkParent(); parent != "" {
		// An item of a bulk job runs in its job's workflow.
		doc.Workflow = OperationWorkflow{ID: parent, UIURL: s.uiURL(parent)}
	}
	return doc
}

// addLiveDetail adds the workflow's run state and progress query to a
// running operation's document. It never fails: when Temporal or the worker
// does not answer within liveDetailTimeout the document stays as the row says.
func (s *Server) addLiveDetail(ctx context.Context, doc *OperationDocument, op *operations.Operation) {
	if s.temporal == nil || op.Status.Terminal() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, liveDetailTimeout)
	defer cancel()
	var (
		wg     sync.WaitGroup
		status string
		live   map[string]any
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		resp, err := s.temporal.DescribeWorkflowExecution(ctx, doc.Workflow.ID, "")
		if err == nil && resp.GetWorkflowExecutionInfo() != nil {
			status = strings.ToLower(resp.GetWorkflowExecutionInfo().GetStatus().String())
		}
	}()
	go func() {
		defer wg.Done()
		if doc.Workflow.ID != op.ID {
			return // the bulk job's progress is not this item's
		}
		v, err := s.temporal.QueryWorkflow(ctx, op.ID, "", workflows.QueryProgress)
		if err == nil && v != nil && v.HasValue() {
			var m map[string]any
			if v.Get(&m) == nil {
				live = m
			}
		}
	}()
	wg.Wait()
	doc.Workflow.Status, doc.Workflow.Live = status, live
}

func (s *Server) operationOutput(op *operations.Operation, status int) *OperationOutput {
	out := &OperationOutput{Status: status}
	out.Body.OperationDocument = s.operationDocument(op)
	if status == http.StatusAccepted {
		out.Location = s.statusURL(op.ID)
	}
	return out
}

// OperationsOutput lists operations.
type OperationsOutput struct {
	Body struct {
		Envelope
		Operations []OperationDocument `json:"operations"`
		Pagination Pagination          `json:"pagination"`
	}
}

type operationPath struct {
	RequestID string `path:"request_id" maxLength:"64" example:"prov_3fK9aZ"`
}

func acceptsEventStream(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
			return true
		}
	}
	return false
}

// operationStream serves `Accept: text/event-stream` on an operation's path:
// the document as an `operation` event whenever it changes, until a terminal
// status. Other requests pass to the JSON operation registered after it.
func (s *Server) operationStream(c *fiber.Ctx) error {
	return s.serveOperationStream(c, "request_id", func(ctx context.Context, p *models.Principal, id string) (*operations.Operation, error) {
		return s.operations.GetOperation(ctx, p, id)
	})
}

// serveOperationStream is the one way an operation's stream opens: for an
// `Accept: text/event-stream` request with a credential, it reads the
// operation named by the path parameter param (load), answers HEAD with the
// headers alone, and otherwise takes a stream lease (concurrency slot,
// per-tenant cap, credential re-checks) and streams until the operation
// ends. Values are copied out of the Fiber context before the stream writer
// runs. Other requests pass to the JSON operation registered after it.
func (s *Server) serveOperationStream(c *fiber.Ctx, param string, load func(context.Context, *models.Principal, string) (*operations.Operation, error)) error {
	if !acceptsEventStream(c.Get(fiber.HeaderAccept)) {
		return c.Next()
	}
	p := models.PrincipalFrom(c.UserContext())
	if p == nil {
		return models.Errorf(models.CodeUnauthenticated, "this endpoint needs a credential: send Authorization: Bearer <API key> or X-API-Key")
	}
	id := strings.Clone(c.Params(param))
	ctx := withRequestInfo(s.life, requestInfoFrom(c.UserContext())) // the stream outlives its handler, not the server
	op, err := load(ctx, p, id)
	if err != nil {
		return err
	}
	if c.Context().IsHead() { // headers only: no stream is opened
		streamHeaders(c)
		return nil
	}
	lease, err := s.openStream(c, p)
	if err != nil {
		return err
	}
	streamHeaders(c)
	caller := *p
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { s.streamOperation(ctx, w, lease, &caller, id, op) })
	return nil
}

// streamOperation writes the operation's changes to w until it ends, the
// client goes away (a failed flush: an idle stream writes a ":" comment
// line every sseProbeInterval to find out), sseMaxDuration passes or the
// caller's credential is no longer valid (checked every
// StreamOptions.Recheck; an `error` event then ends the stream). The
// lease's slots (the concurrency slot among them) are freed when it returns.
func (s *Server) streamOperation(ctx context.Context, w *bufio.Writer, lease *streamLease, p *models.Principal, id string, op *operations.Operation) {
	defer lease.close()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in an operation stream", "request_id", RequestID(ctx), "operation", id, "panic", r)
		}
	}()
	endWith := func(err error) {
		e := models.AsError(err)
		details := e.Details
		if details == nil {
			details = map[string]any{}
		}
		body, _ := jsonMarshal(map[string]any{"error": ErrorDetail{Code: e.Code, Message: e.Message, Details: details, RequestID: RequestID(ctx)}})
		_, _ = fmt.Fprintf(w, "event: error\ndata: %s\n\n", body)
		_ = w.Flush()
	}
	ctx, cancel := context.WithTimeout(ctx, sseMaxDuration)
	defer cancel()
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil || w.Flush() != nil {
		return
	}
	var sent sentOperation
	seq, quiet, wrote := 0, time.Now(), time.Now()
	snap := &models.RowSnapshot[operations.Operation]{Row: op} // the row the request read
	for {
		raw, err := sent.update(s, snap)
		if err != nil {
			return
		}
		if raw != nil {
			seq++
			if _, err := fmt.Fprintf(w, "id: %d\nevent: operation\ndata: %s\n\n", seq, raw); err != nil || w.Flush() != nil {
				return
			}
			quiet, wrote = time.Now(), time.Now()
		}
		if snap.Row.Status.Terminal() {
			return
		}
		if time.Since(quiet) >= sseHeartbeat {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || w.Flush() != nil {
				return
			}
			quiet, wrote = time.Now(), time.Now()
		}
		if time.Since(wrote) >= sseProbeInterval {
			// fasthttp tells a body stream writer nothing of its
			// connection: a write is the only way to learn that the client
			// has gone. The first probe after a close is still accepted
			// (the peer's reset comes back to it), the server's write of
			// the next one fails and closes the body's pipe, and the write
			// after that fails here: the stream ends, and frees its slots,
			// within about 1.5 s of the client.
			if _, err := fmt.Fprint(w, ":\n"); err != nil || w.Flush() != nil {
				return
			}
			wrote = time.Now()
		}
		select {
		case <-ctx.Done():
			if shuttingDown(ctx) {
				endWith(shutdownError())
			}
			return
		case <-time.After(ssePollInterval):
		}
		if err := lease.verify(ctx, s.streamSlotTTL()); err != nil {
			endWith(err)
			return
		}
		if snap, err = s.operations.OperationSnapshot(ctx, p, id, snap, models.RowVersion{}); err != nil {
			endWith(err)
			return
		}
	}
}

// sentOperation is what an event stream last sent of one operation: the
// snapshot of the row it was built from, and the document's encoding.
type sentOperation struct {
	snap *models.RowSnapshot[operations.Operation]
	doc  string
}

// update returns the encoded document of snap's operation when it differs
// from the one last sent, and takes it as sent; nil when it does not. An
// unchanged row (the same snapshot) is not encoded again.
func (o *sentOperation) update(s *Server, snap *models.RowSnapshot[operations.Operation]) ([]byte, error) {
	same := o.snap != nil && snap.Row == o.snap.Row
	o.snap = snap // the latest read, even of the same row: the next read compares with it
	if same {
		return nil, nil
	}
	raw, err := jsonMarshal(s.operationDocument(snap.Row))
	if err != nil || string(raw) == o.doc {
		return nil, err
	}
	o.doc = string(raw)
	return raw, nil
}

func (s *Server) registerOperations() {
	tags := []string{"Operations"}
	getDesc := "The operation's status, progress, steps, result or error, and its Temporal workflow. " +
		"With `Accept: text/event-stream` the answer is a stream of Server-Sent Events (`event: operation`, the same document) " +
		"sent whenever the operation changes, ending at a terminal status. See docs/operations.md."
	getOp := func(ctx context.Context, in *operationPath) (*OperationOutput, error) {
		return s.operationAnswer(ctx, in.RequestID)
	}
	register(s, huma.Operation{OperationID: "list-operations", Method: http.MethodGet, Path: "/operations", Summary: "List operations",
		Tags: tags, Description: "The operations of your organization and environment, newest first, each as GET /v1/operations/{request_id} " +
			"answers it (without the workflow's live status). Provisioning, change, bulk and orchestration operations need services:read, " +
			"support reports support:read, analytics reports analytics:read; the others are left out. filter= takes an expression of the filter language (docs/filtering.md)."},
		access{}, func(ctx context.Context, in *struct {
			ListParams
			Type       string `query:"type" enum:"provisioning,modification,scaling,decommission,bulk_provision,bulk_modify,bulk_status,orchestration,orchestration_trigger,support_report,analytics_report" doc:"Only operations of this type"`
			Status     string `query:"status" enum:"pending,in_progress,completed,partial,failed,rolled_back,cancelled" doc:"Only operations in this status"`
			ResourceID string `query:"resource_id" maxLength:"64" example:"svc_3fK9aZ" doc:"Only operations on this resource (a service, an orchestration definition, a report)"`
			Filter     string `query:"filter" maxLength:"2000" doc:"A filter expression (docs/filtering.md) over type, status, resource_id, created_by, created_at, updated_at and finished_at; combined with the other filters by and, over the operations you may read. A malformed one is 400 VALIDATION_ERROR with details.position, the 0-based character offset of the fault" example:"status in (failed, rolled_back) and created_at >= 2026-11-01"`
		}) (*OperationsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			f := operations.OperationFilter{Type: operations.OperationType(in.Type), Status: operations.OperationStatus(in.Status), ResourceID: in.ResourceID, Expr: in.Filter}
			ops, total, err := s.operations.ListOperations(ctx, principal(ctx), f, pr)
			if err != nil {
				return nil, err
			}
			out := &OperationsOutput{}
			out.Body.Operations = mapSlice(ops, s.operationDocument)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	for _, prefix := range []string{"/v1", "/api/v1"} {
		s.App.Get(prefix+"/operations/:request_id", s.operationStream)
		s.App.Get(prefix+"/services/provision/:request_id/status", s.operationStream)
	}
	register(s, huma.Operation{OperationID: "get-operation", Method: http.MethodGet, Path: "/operations/{request_id}",
		Summary: "Get an operation", Description: getDesc, Tags: tags, Responses: eventStreamResponse()},
		access{}, getOp)
	register(s, huma.Operation{OperationID: "get-provisioning-status", Method: http.MethodGet, Path: "/services/provision/{request_id}/status",
		Summary: "Provisioning status (alias of GET /v1/operations/{request_id})", Description: getDesc,
		Tags: []string{"Services: provisioning"}, Responses: eventStreamResponse()},
		access{}, getOp)
	register(s, huma.Operation{OperationID: "cancel-operation", Method: http.MethodPost, Path: "/operations/{request_id}/cancel",
		Summary: "Cancel an operation", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Asks the operation's workflow to stop; it undoes what it did (compensation) and the operation ends `cancelled`. " +
			"Answers 202 with the operation (follow it to the end); 200 when it is already cancelled; 409 INVALID_STATE_TRANSITION " +
			"when it has already ended otherwise, when it is an item of a bulk job run in that job's workflow (`details.bulk_request_id`: " +
			"cancel the bulk operation), or when it is a modification or scaling whose change has already been applied or is being applied (then `details.applied` is false: " +
			"a cancel that reaches a change while it is applied is too late, the change completes), or a decommission past deactivate (`details.step`: " +
			"the step it has reached; a scaling then finishes its maintenance window). An operation that completes before the cancellation reaches it stays completed."},
		access{}, func(ctx context.Context, in *operationPath) (*OperationOutput, error) {
			p := principal(ctx)
			op, err := s.operations.GetOperation(ctx, p, in.RequestID)
			if err != nil {
				return nil, err
			}
			if err := operations.CheckCancellable(p, op); err != nil {
				return nil, err
			}
			if op.Status == operations.OpCancelled {
				return s.operationOutput(op, http.StatusOK), nil
			}
			if err := s.services.CheckChangeCancellable(ctx, op); err != nil {
				return nil, err
			}
			if err := s.cancelWorkflow(ctx, op.ID); err != nil {
				return nil, err
			}
			return s.operationOutput(op, http.StatusAccepted), nil
		})
}

// cancelWorkflow asks the workflow of operation id to stop. Errors:
// DEPENDENCY_UNAVAILABLE (no or no answering engine), INVALID_STATE_TRANSITION
// (the workflow is no longer running).
func (s *Server) cancelWorkflow(ctx context.Context, id string) error {
	if s.temporal == nil {
		return models.Errorf(models.CodeDependencyUnavailable, "cancellation is unavailable: no workflow engine is configured")
	}
	if err := s.temporal.CancelWorkflow(ctx, id, ""); err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return models.Errorf(models.CodeInvalidStateTransition, "the operation's workflow is no longer running")
		}
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return e
	}
	return nil
}

// eventStreamResponse documents the Server-Sent Events alternative of a GET.
func eventStreamResponse() map[string]*huma.Response {
	return map[string]*huma.Response{
		"200": {
			Description: "The operation (application/json), or a stream of `operation` events (text/event-stream)",
			Content: map[string]*huma.MediaType{
				"application/json":  {},
				"text/event-stream": {Schema: &huma.Schema{Type: "string", Description: "Server-Sent Events: `event: operation` with the operation document as data"}},
			},
		},
	}
}
