package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// batchHeartbeatEvery is how often a ProvisionBatch activity records its
// progress besides after each item (the SDK sends at most one heartbeat
// per 80 % of the heartbeat timeout).
const batchHeartbeatEvery = time.Second

// How a ProvisionBatch activity writes its items' outcomes to the bulk
// operation while it runs (batchRecorder), as the workflow's recorder
// writes the items it sees end: every batchRecordEvery items that end,
// or every batchRecordInterval, each write given batchRecordTimeout.
const (
	batchRecordEvery    = 10
	batchRecordInterval = time.Second
	batchRecordTimeout  = 10 * time.Second
)

// ProvisionBatch provisions a chunk of bulk provisioning items, each as the
// Provisioning workflow does it, in this process: begin, validate,
// reserve_capacity, configure, activate, record_service on the item's own
// provisioning operation (each step retried as the workflow retries its
// activities), and when a step fails or the activity is cancelled, the
// compensations of the steps that started in reverse order and the end of
// the operation (failed with PROVISIONING_FAILED, or cancelled) exactly as
// the workflow's saga records them. Up to in.Window items run at once, in
// position order; with in.StopOnFailure a failed item stops the items not
// yet started. It heartbeats every second and after each item with the
// outcomes so far, so that a retried attempt resumes where the last one
// stopped; an item whose operation has already ended is not run again
// (its outcome is read from the operation). It returns every item's
// outcome: items never started (cancellation, StopOnFailure) are
// not_started. As items end, their outcomes are written to the bulk
// operation's items (every ten items that end, every second, and before
// it answers: batchRecorder), so that its progress rises while the batch
// runs; the workflow records them again from the result, which changes
// nothing. A cancelled activity answers too, after its items in
// flight have compensated. With in.ReportOnly it runs nothing and reports
// the items whose operations have ended (the workflow asks for that when a
// batch was cancelled without answering).
func (a *Bulk) ProvisionBatch(ctx context.Context, in workflows.BulkBatchInput) (*workflows.BulkBatchResult, error) {
	if in.ReportOnly {
		return a.reportBatch(ctx, in)
	}
	if in.Abandon != nil {
		return a.abandonBatch(ctx, in)
	}
	done := map[int]workflows.BulkItemOutcome{}
	if activity.HasHeartbeatDetails(ctx) {
		var prev []workflows.BulkItemOutcome
		if err := activity.GetHeartbeatDetails(ctx, &prev); err == nil {
			for _, o := range prev {
				done[o.Position] = o
			}
		}
	}
	// The items' steps run on a context that the activity's cancellation
	// reaches, marked so that the network calls do not heartbeat: an empty
	// heartbeat would replace the progress recorded here. Its cause is the activity context's: a cancellation the workflow
	// asked for undoes the items in flight; anything else (the worker
	// stopping, the attempt timed out) leaves them for the retry.
	ictx, stop := context.WithCancelCause(simulator.WithoutHeartbeats(context.WithoutCancel(ctx)))
	defer stop(nil)
	unhook := context.AfterFunc(ctx, func() { stop(context.Cause(ctx)) })
	defer unhook()

	var mu sync.Mutex
	outcomes := make([]workflows.BulkItemOutcome, len(in.Items))
	ended := make([]bool, len(in.Items))
	stopped := false
	var beatMu sync.Mutex // one heartbeat at a time, so the newest snapshot is sent last
	beat := func() {
		beatMu.Lock()
		defer beatMu.Unlock()
		mu.Lock()
		details := make([]workflows.BulkItemOutcome, 0, len(in.Items))
		for i, ok := range ended {
			if ok {
				details = append(details, outcomes[i])
			}
		}
		mu.Unlock()
		activity.RecordHeartbeat(ctx, details)
	}
	beat()
	defer every(batchHeartbeatEvery, beat)()
	// The outcomes reach the bulk operation as the items end; the last
	// ones before the activity answers (the deferred calls run in reverse
	// order: the ticker stops first).
	rec := newBatchRecorder(ctx, a.operations, a.log, in)
	defer rec.close()
	defer every(batchRecordInterval, rec.flush)()

	window := max(1, in.Window)
	sem := make(chan struct{}, window)
	var wg sync.WaitGroup
	for i, it := range in.Items {
		o := workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemNotStarted}
		if prev, ok := done[it.Position]; ok && prev.Status != workflows.BatchItemNotStarted {
			mu.Lock()
			outcomes[i], ended[i] = prev, true
			if prev.Status == workflows.BatchItemFailed && in.StopOnFailure {
				stopped = true
			}
			mu.Unlock()
			rec.add(prev)
			continue
		}
		sem <- struct{}{}
		mu.Lock()
		halt := stopped || ictx.Err() != nil
		mu.Unlock()
		if halt {
			<-sem
			mu.Lock()
			outcomes[i], ended[i] = o, true
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				// A panic in one item fails that item, not the worker.
				if r := recover(); r != nil {
					a.log.ErrorContext(ctx, "bulk item panicked", "request_id", it.ChildID, "panic", r, "stack", string(debug.Stack()))
					mu.Lock()
					o.Status, o.Error = workflows.BatchItemFailed, &operations.OperationError{Code: models.CodeInternal, Message: "internal error"}
					outcomes[i], ended[i] = o, true
					mu.Unlock()
					rec.add(o)
				}
			}()
			if it.Order == nil {
				o.Status = workflows.BatchItemFailed
				o.Error = &operations.OperationError{Code: models.CodeValidation, Message: "the item has no order"}
			} else {
				o.Status, o.Error = a.prov.provisionItem(ictx, workflows.ProvisioningInput{
					RequestID: it.ChildID, OrganizationID: in.Bulk.OrganizationID, Environment: in.Bulk.Environment,
					ServiceID: it.ServiceID, Order: *it.Order,
				})
			}
			mu.Lock()
			outcomes[i], ended[i] = o, true
			if o.Status == workflows.BatchItemFailed && in.StopOnFailure {
				stopped = true
			}
			mu.Unlock()
			beat()
			if rec.add(o) {
				rec.flush()
			}
		}()
	}
	wg.Wait()
	if ictx.Err() != nil && !cancelRequested(ictx) {
		// Interrupted, not cancelled: the items that ended are in the
		// heartbeat details; the retry runs the others (their steps are
		// idempotent) without undoing anything.
		beat()
		return nil, temporal.NewApplicationErrorWithCause("the batch was interrupted; its retry resumes it", "BATCH_INTERRUPTED", context.Cause(ictx))
	}
	res := &workflows.BulkBatchResult{Items: outcomes}
	countOutcomes(res)
	a.log.DebugContext(ctx, "bulk batch ended", "request_id", in.Bulk.RequestID, "run", in.Run, "chunk", in.Chunk, "positions", in.Positions,
		"completed", res.Completed, "failed", res.Failed, "cancelled", res.Cancelled, "not_started", res.NotStarted)
	return res, nil
}

// batchRecorder writes the outcomes of a ProvisionBatch activity's items
// to its bulk operation's items as they end (the workflow only sees them
// when the activity answers): the items that ended, when batchRecordEvery
// of them wait (add reports it; the caller flushes), every
// batchRecordInterval (flush) and at the end (close). It writes only
// terminal outcomes, each as the workflow records it
// (workflows.BulkItemOutcome.ItemUpdate), and only on items that have not
// ended on the operation: writing the same outcome again changes nothing
// (no row is written when nothing changes), and an attempt that is retried
// or outlived by its retry never moves an item that has ended (completed,
// rolled_back...) nor double counts: progress is counted from the items.
// Writing is best effort: a failed write is tried again at the next flush,
// and once the operation has ended (or does not exist) nothing more is
// written; the workflow's write at the end of the page is the final word.
type batchRecorder struct {
	ctx   context.Context // not cancelled with the activity: cancelled items are written too
	ops   *operations.Store
	log   *slog.Logger
	scope models.Scope
	opID  string

	write   sync.Mutex // one write at a time
	mu      sync.Mutex
	pending []workflows.BulkItemOutcome
	off     bool // the operation has ended, is gone, or the activity answered
}

// newBatchRecorder returns the recorder of in's items, writing on a context
// that the activity's cancellation does not reach.
func newBatchRecorder(ctx context.Context, ops *operations.Store, log *slog.Logger, in workflows.BulkBatchInput) *batchRecorder {
	return &batchRecorder{ctx: context.WithoutCancel(ctx), ops: ops, log: log, scope: in.Bulk.Scope(), opID: in.Bulk.RequestID}
}

// add queues the outcome o of an item that ended (an outcome that is not
// terminal, not_started, is not written) and reports whether enough
// outcomes wait to be written now.
func (r *batchRecorder) add(o workflows.BulkItemOutcome) (full bool) {
	u, ok := o.ItemUpdate()
	if !ok || !automation.ItemTerminal(u.Status) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, o)
	return len(r.pending) >= batchRecordEvery
}

// flush writes the outcomes waiting, if any.
func (r *batchRecorder) flush() {
	r.write.Lock()
	defer r.write.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	off := r.off
	r.mu.Unlock()
	if off || len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, batchRecordTimeout)
	defer cancel()
	err := r.record(ctx, batch)
	if err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch models.ErrorCode(err) {
	case models.CodeNotFound, models.CodeInvalidStateTransition:
		r.off = true
		r.log.DebugContext(ctx, "bulk items not recorded by the batch: the operation has ended", "request_id", r.opID, "error", err)
	default:
		r.pending = append(batch, r.pending...)
		r.log.WarnContext(ctx, "recording bulk items from the batch failed; tried again at the next flush", "request_id", r.opID, "items", len(batch), "error", err)
	}
}

// close writes the outcomes waiting and stops the recorder: nothing is
// written after it returns.
func (r *batchRecorder) close() {
	r.flush()
	r.mu.Lock()
	r.off = true
	r.mu.Unlock()
}

// errBulkItemsUnchanged aborts a write that would change nothing.
var errBulkItemsUnchanged = errors.New("bulk items unchanged")

// record writes outcomes to the operation's items in one update: each on
// the item at its position (the same service), unless that item has
// ended. Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation has
// ended).
func (r *batchRecorder) record(ctx context.Context, outcomes []workflows.BulkItemOutcome) error {
	unchanged := false
	_, err := r.ops.UpdateOperation(ctx, r.scope, nil, r.opID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		changed := false
		for _, o := range outcomes {
			if o.Position < 0 || o.Position >= len(op.Items) {
				continue
			}
			it := &op.Items[o.Position]
			if it.ID != o.ServiceID || automation.ItemTerminal(it.Status) {
				continue
			}
			u, _ := o.ItemUpdate()
			it.Status, it.Error = u.Status, u.Error
			changed = true
		}
		if !changed {
			unchanged = true
			return errBulkItemsUnchanged
		}
		return nil
	})
	if unchanged {
		return nil
	}
	return err
}

// countOutcomes counts res's items by outcome.
func countOutcomes(res *workflows.BulkBatchResult) {
	for _, o := range res.Items {
		switch o.Status {
		case workflows.BatchItemCompleted:
			res.Completed++
		case workflows.BatchItemFailed:
			res.Failed++
		case workflows.BatchItemCancelled:
			res.Cancelled++
		default:
			res.NotStarted++
		}
	}
}

// reportBatch returns the outcomes of the items of in whose operations have
// ended; the others are not_started.
func (a *Bulk) reportBatch(ctx context.Context, in workflows.BulkBatchInput) (*workflows.BulkBatchResult, error) {
	res := &workflows.BulkBatchResult{}
	for _, it := range in.Items {
		o := workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemNotStarted}
		op, err := a.operations.OperationIn(ctx, in.Bulk.Scope(), it.ChildID)
		if err != nil && models.ErrorCode(err) != models.CodeNotFound {
			return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.ProvisionBatch), err)
		}
		if err == nil && op.Status.Terminal() {
			o.Status, o.Error = itemOutcome(op)
		}
		res.Items = append(res.Items, o)
	}
	countOutcomes(res)
	return res, nil
}

// abandonBatch ends the items of in that have not ended after their batch
// failed for good (in.Abandon): each one is compensated and failed as
// failItem fails an item, at the first step its operation has not recorded
// as completed, with in.Abandon as the reason. The items that ended are
// reported as they ended. It heartbeats every second; when its context
// ends it stops before the next item (the item under way is finished) and
// fails, and its retry goes on from there (the items it ended are read as
// ended).
func (a *Bulk) abandonBatch(ctx context.Context, in workflows.BulkBatchInput) (*workflows.BulkBatchResult, error) {
	defer every(batchHeartbeatEvery, func() { activity.RecordHeartbeat(ctx) })()
	cause := temporal.NewNonRetryableApplicationError(in.Abandon.Message, string(in.Abandon.Code), nil, in.Abandon.Details)
	res := &workflows.BulkBatchResult{}
	for _, it := range in.Items {
		if err := ctx.Err(); err != nil {
			return nil, temporal.NewApplicationErrorWithCause("abandoning the batch was interrupted; its retry goes on", "BATCH_INTERRUPTED", err)
		}
		o := workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID}
		op, err := a.operations.OperationIn(ctx, in.Bulk.Scope(), it.ChildID)
		if err != nil {
			return nil, bulkAppError(ctx, a.log, workflows.ActivityName(workflows.BulkActivities.ProvisionBatch), err)
		}
		if op.Status.Terminal() {
			o.Status, o.Error = itemOutcome(op)
			res.Items = append(res.Items, o)
			continue
		}
		pin := workflows.ProvisioningInput{RequestID: it.ChildID, OrganizationID: in.Bulk.OrganizationID, Environment: in.Bulk.Environment, ServiceID: it.ServiceID}
		if it.Order != nil {
			pin.Order = *it.Order
		}
		o.Status, o.Error = a.prov.failItem(context.WithoutCancel(ctx), pin, cause, runningStep(op), a.prov.compensations())
		res.Items = append(res.Items, o)
	}
	countOutcomes(res)
	return res, nil
}

// every calls fn every d until the function it returns is called.
func every(d time.Duration, fn func()) (stop func()) {
	ticker := time.NewTicker(d)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ticker.C:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() { ticker.Stop(); close(done) }
}

// runningStep is the step op was running or would have run next: its
// first step not completed (validate for an operation that never began).
func runningStep(op *operations.Operation) string {
	for _, st := range op.Steps {
		if st.Status != operations.StepCompleted {
			return st.Name
		}
	}
	return operations.StepValidate
}

// Retries of the steps and compensations that provisionItem runs: those
// of workflows.StepActivityOptions and workflows.CompensationActivityOptions.
var (
	stepRetry         = retryPolicy{attempts: 5, first: time.Second, most: 30 * time.Second, timeout: 5 * time.Minute}
	compensationRetry = retryPolicy{attempts: 20, first: time.Second, most: time.Minute, timeout: 5 * time.Minute}
)

type retryPolicy struct {
	attempts    int
	first, most time.Duration
	timeout     time.Duration // of each attempt
}

// do runs fn until it succeeds, fails for good (a non-retryable
// application error), runs out of attempts or ctx ends, waiting between
// attempts as Temporal's retry policy would. An attempt that outlives the
// policy's timeout fails as a start-to-close timeout.
func (p retryPolicy) do(ctx context.Context, fn func(ctx context.Context) error) error {
	wait := p.first
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, p.timeout)
		err := fn(actx)
		timedOut := actx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil {
			return nil
		}
		if timedOut && errors.Is(err, context.DeadlineExceeded) {
			err = temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var appErr *temporal.ApplicationError
		if attempt >= p.attempts || (errors.As(err, &appErr) && appErr.NonRetryable()) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, p.most)
	}
}

// itemCompensation undoes one step of provisionItem.
type itemCompensation struct {
	step, label string
	undo        func(context.Context, workflows.ProvisioningInput) error
}

// compensations are the undo of the provisioning steps that take
// something, in step order: release_capacity (reserve_capacity),
// release_network (configure), deactivate (activate).
func (a *Provisioning) compensations() []itemCompensation {
	return []itemCompensation{
		{step: operations.StepReserveCapacity, label: "release_capacity", undo: a.ReleaseCapacity},
		{step: operations.StepConfigure, label: "release_network", undo: a.ReleaseNetwork},
		{step: operations.StepActivate, label: "deactivate", undo: a.Deactivate},
	}
}

// provisionItem provisions the service of one bulk item as the
// Provisioning workflow does (see Bulk.ProvisionBatch), on ctx (cancelled
// when the bulk operation is), and returns how its operation ended: a
// BatchItem* status and, for a failure, the operation's error. An item
// whose operation has already ended is not run again.
func (a *Provisioning) provisionItem(ctx context.Context, in workflows.ProvisioningInput) (string, *operations.OperationError) {
	scope := in.Scope()
	op, readErr := a.operations.OperationIn(ctx, scope, in.RequestID)
	if readErr == nil && op.Status.Terminal() {
		return itemOutcome(op)
	}
	// The steps are logged and written with the last one (flushSteps).
	ctx, _ = withStepLog(ctx)
	step := ""
	var comps []itemCompensation
	run := func(name string, fn func(context.Context, workflows.ProvisioningInput) error) error {
		step = name
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return stepRetry.do(ctx, func(c context.Context) error { return fn(c, in) })
	}
	undo := a.compensations()
	withUndo := func(c itemCompensation, fn func(context.Context, workflows.ProvisioningInput) error) error {
		comps = append(comps, c)
		return run(c.step, fn)
	}
	err := func() error {
		// Begin: the operation runs as part of the bulk operation's
		// workflow, not a workflow of its own (no run id). It is marked in
		// progress with its steps (flushSteps), unless reading it failed.
		if readErr != nil {
			if err := run("", func(c context.Context, in workflows.ProvisioningInput) error {
				_, err := a.operations.BeginOperation(c, scope, in.RequestID, "")
				return a.temporalError(c, in, "begin", err)
			}); err != nil {
				return err
			}
		}
		if err := run(operations.StepValidate, a.Validate); err != nil {
			return err
		}
		if err := withUndo(undo[0], a.ReserveCapacity); err != nil {
			return err
		}
		if err := withUndo(undo[1], a.Configure); err != nil {
			return err
		}
		if err := withUndo(undo[2], a.Activate); err != nil {
			return err
		}
		return run(operations.StepRecordService, func(c context.Context, in workflows.ProvisioningInput) error {
			_, err := a.RecordService(c, in)
			return err
		})
	}()
	if err == nil {
		return workflows.BatchItemCompleted, nil
	}
	if ctx.Err() != nil && !cancelRequested(ctx) {
		// Interrupted (the worker stopping, the attempt timed out): nothing
		// is undone and the operation stays in progress; the batch's retry
		// runs the item again.
		return workflows.BatchItemNotStarted, nil
	}
	return a.failItem(ctx, in, err, step, comps)
}

// cancelRequested reports whether ctx ended because the workflow asked the
// activity to stop (a cancellation request), rather than because the
// worker is stopping, the attempt timed out or its heartbeat failed.
func cancelRequested(ctx context.Context) bool {
	var ce *temporal.CanceledError
	return errors.As(context.Cause(ctx), &ce)
}

// failItem ends an item whose step failed with err, or that was cancelled,
// as workflows' saga ends a Provisioning workflow: the compensations in
// reverse order (on a context the cancellation does not reach; a failed one
// does not stop the others), then Finish with the operation failed (error
// PROVISIONING_FAILED naming the step, the reason and whether everything
// was released) or cancelled.
func (a *Provisioning) failItem(ctx context.Context, in workflows.ProvisioningInput, err error, step string, comps []itemCompensation) (string, *operations.OperationError) {
	cancelled := errors.Is(err, context.Canceled) || temporal.IsCanceledError(err) || ctx.Err() != nil
	a.log.WarnContext(ctx, "provisioning did not complete; compensating", "request_id", in.RequestID, "step", step, "cancelled", cancelled, "error", err)
	dctx := context.WithoutCancel(ctx)
	fin := workflows.FinishInput{Input: in, FailedStep: step, Compensated: []string{}, Compensations: []string{}, CompensationErrors: []string{}}
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		if cerr := compensationRetry.do(dctx, func(cc context.Context) error { return c.undo(cc, in) }); cerr != nil {
			a.log.ErrorContext(ctx, "compensation failed", "request_id", in.RequestID, "step", c.step, "error", cerr)
			fin.CompensationErrors = append(fin.CompensationErrors, fmt.Sprintf("%s: %s", c.label, workflows.ErrorOf(cerr).Message))
			continue
		}
		fin.Compensated = append(fin.Compensated, c.step)
		fin.Compensations = append(fin.Compensations, c.label)
	}
	status := workflows.BatchItemFailed
	if cancelled {
		status = workflows.BatchItemCancelled
		fin.Status = operations.OpCancelled
		fin.Error = workflows.CancelledNotReleased(step, "the operation was cancelled but releasing its resources failed", fin.CompensationErrors)
	} else {
		fin.Status = operations.OpFailed
		fin.Error = workflows.StepFailed(step, err, nil, fin.CompensationErrors)
	}
	// The steps logged so far reach the row first (the failed one in
	// progress), so that Finish ends them as it ends a workflow's.
	if ferr := compensationRetry.do(dctx, func(c context.Context) error {
		return a.temporalError(c, in, "finish", a.flushSteps(c, in))
	}); ferr != nil && workflows.ErrorOf(ferr).Code != models.CodeInvalidStateTransition {
		a.log.ErrorContext(ctx, "recording the steps of the operation failed", "request_id", in.RequestID, "error", ferr)
	}
	if ferr := compensationRetry.do(dctx, func(c context.Context) error { return a.Finish(c, fin) }); ferr != nil {
		a.log.ErrorContext(ctx, "recording the end of the operation failed", "request_id", in.RequestID, "error", ferr)
	}
	var e *operations.OperationError
	if fin.Error != nil {
		e = &operations.OperationError{Code: fin.Error.Code, Message: fin.Error.Message, Details: maps.Clone(fin.Error.Details)}
	}
	return status, e
}

// itemOutcome is the outcome of an item whose operation op has ended.
func itemOutcome(op *operations.Operation) (string, *operations.OperationError) {
	switch op.Status {
	case operations.OpCompleted:
		return workflows.BatchItemCompleted, nil
	case operations.OpCancelled:
		return workflows.BatchItemCancelled, op.Error
	}
	e := op.Error
	if e == nil {
		e = &operations.OperationError{Code: models.CodeProvisioningFailed, Message: fmt.Sprintf("the operation ended %s", op.Status)}
	}
	return workflows.BatchItemFailed, e
}

// stepLog holds the step records of one bulk batch item while it runs, so
// that its operation row is written once before the item ends (with its
// last step, or its failure) instead of twice per step: the row's steps and
// their times are the same, they only reach the row later.
type stepLog struct {
	mu    sync.Mutex
	marks []stepMark
}

type stepMark struct {
	name     string
	started  time.Time
	finished *time.Time
}

type stepLogKey struct{}

// withStepLog returns ctx with an empty step log: Provisioning's steps run
// on it record their steps there (flushSteps writes them).
func withStepLog(ctx context.Context) (context.Context, *stepLog) {
	l := &stepLog{}
	return context.WithValue(ctx, stepLogKey{}, l), l
}

// stepLogOf returns ctx's step log, nil when its steps write the row.
func stepLogOf(ctx context.Context) *stepLog {
	l, _ := ctx.Value(stepLogKey{}).(*stepLog)
	return l
}

// mark records the step name started (at now, the first time) or
// completed (at now).
func (l *stepLog) mark(name string, completed bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.marks {
		if l.marks[i].name == name {
			if completed && l.marks[i].finished == nil {
				l.marks[i].finished = &now
			}
			return
		}
	}
	m := stepMark{name: name, started: now}
	if completed {
		m.finished = &now
	}
	l.marks = append(l.marks, m)
}

// flushSteps writes ctx's step log (when it has one) to the operation in
// one update: the operation in progress (as Begin makes it; no run id: it
// has no workflow of its own) and each logged step started or completed
// at its time. Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation
// has ended).
func (a *Provisioning) flushSteps(ctx context.Context, in workflows.ProvisioningInput) error {
	l := stepLogOf(ctx)
	if l == nil {
		return nil
	}
	l.mu.Lock()
	marks := append([]stepMark(nil), l.marks...)
	l.mu.Unlock()
	_, err := a.operations.UpdateOperation(ctx, in.Scope(), nil, in.RequestID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		op.Status, op.RunID = operations.OpInProgress, ""
		for _, m := range marks {
			st := op.Step(m.name)
			if st.Status == operations.StepCompleted {
				continue
			}
			if st.StartedAt == nil {
				started := m.started
				st.StartedAt = &started
			}
			if m.finished != nil {
				st.Status, st.FinishedAt, st.Error = operations.StepCompleted, m.finished, nil
			} else {
				st.Status, st.Error = operations.StepInProgress, nil
			}
		}
		return nil
	})
	return err
}
