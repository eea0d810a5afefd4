package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// BulkWorkflow is the registered name of the bulk workflow (bulk provision,
// bulk modify and bulk status changes).
const BulkWorkflow = "Bulk"

// BackgroundTaskQueue returns the background task queue that goes with the
// interactive queue taskQueue (spec 8: bulk jobs and reports are background
// priority): "<taskQueue>-background".
func BackgroundTaskQueue(taskQueue string) string { return taskQueue + "-background" }

// Defaults of the bulk workflow.
const (
	// DefaultBulkPageSize is how many items one run of the bulk workflow
	// starts before it continues as new, which keeps each run's history small.
	DefaultBulkPageSize = 100
	// bulkFlushInterval bounds how stale the operation's items may get.
	bulkFlushInterval = time.Second
)

// Phases of a bulk workflow.
const (
	BulkPhaseRun      = "run"
	BulkPhaseRollback = "rollback"
	BulkPhaseFinish   = "finish"
)

// BulkRef names a bulk operation and its tenant: what every bulk activity needs.
type BulkRef struct {
	RequestID      string                   `json:"request_id"`
	OrganizationID string                   `json:"organization_id"`
	Environment    models.Environment       `json:"environment"`
	Type           operations.OperationType `json:"type"`
	CreatedBy      string                   `json:"created_by"`
}

// bulkSubject names a bulk operation in its activities' summaries.
func bulkSubject(b BulkRef) string {
	return fmt.Sprintf("%s %s for %s (%s)", b.Type, b.RequestID, b.OrganizationID, b.Environment)
}

// Scope returns the tenant scope the operation belongs to.
func (r BulkRef) Scope() models.Scope { return models.TenantScope(r.OrganizationID, r.Environment) }

// BulkState is what one run of the bulk workflow hands to the next when it
// continues as new: a cursor and counters, never the items themselves
// (those stay in the database).
type BulkState struct {
	Phase     string `json:"phase"`
	Next      int    `json:"next"` // position of the next item to consider in this phase
	Runs      int    `json:"runs"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// Stopped is set when a failure with rollback_on_failure stopped new items.
	Stopped    bool `json:"stopped"`
	RolledBack int  `json:"rolled_back"`
}

// BulkInput is the one argument of the bulk workflow.
type BulkInput struct {
	Bulk     BulkRef                `json:"bulk"`
	Total    int                    `json:"total"`
	Options  automation.BulkOptions `json:"options"`
	PageSize int                    `json:"page_size"` // 0: DefaultBulkPageSize
	// Batch, when positive, runs bulk provisioning items in ProvisionBatch
	// activities of Batch items each instead of one child Provisioning
	// workflow per item (the API sets DefaultBulkBatch; inputs written
	// before batches existed have 0).
	Batch int       `json:"batch,omitempty"`
	State BulkState `json:"state"`
}

// BulkWorkItem is one item as the workflow runs it.
type BulkWorkItem struct {
	Position  int                         `json:"position"`
	ServiceID string                      `json:"service_id"`
	ChildID   string                      `json:"child_id,omitempty"`
	Order     *services.ProvisioningOrder `json:"order,omitempty"`
	Changes   *automation.ServiceChanges  `json:"changes,omitempty"`
	Action    string                      `json:"action,omitempty"`
}

// BulkLoadInput asks for the next page of items in one of statuses.
type BulkLoadInput struct {
	Bulk     BulkRef  `json:"bulk"`
	From     int      `json:"from"`
	Limit    int      `json:"limit"`
	Statuses []string `json:"statuses"`
}

// BulkPage is a page of items and the position after the last one examined.
type BulkPage struct {
	Items []BulkWorkItem `json:"items"`
	Next  int            `json:"next"`
}

// BulkItemInput is one item to act on (apply, roll back).
type BulkItemInput struct {
	Bulk BulkRef      `json:"bulk"`
	Item BulkWorkItem `json:"item"`
}

// BulkRecordInput carries new item statuses to the operation.
type BulkRecordInput struct {
	Bulk    BulkRef                 `json:"bulk"`
	Updates []automation.ItemUpdate `json:"updates"`
}

// BulkFinishInput ends the operation.
type BulkFinishInput struct {
	Bulk   BulkRef               `json:"bulk"`
	Finish automation.BulkFinish `json:"finish"`
}

// BulkResult is what a bulk workflow returns: the operation's final status
// and its items counted by status.
type BulkResult struct {
	Status     operations.OperationStatus `json:"status"`
	Total      int                        `json:"total"`
	Completed  int                        `json:"completed"`
	Failed     int                        `json:"failed"`
	RolledBack int                        `json:"rolled_back"`
	Skipped    int                        `json:"skipped"`
	Cancelled  int                        `json:"cancelled"`
}

// BulkProgress is the live state of a bulk workflow (QueryProgress).
type BulkProgress struct {
	Phase     string `json:"phase"`
	Run       int    `json:"run"`
	Next      int    `json:"next"`
	InFlight  int    `json:"in_flight"`
	Window    int    `json:"window"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
}

// BookkeepingActivityOptions are the options of the activities that read and
// write the operation row: short, retried until they succeed.
func BookkeepingActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 20,
		},
	}
}

// ChildOperationOptions returns the child workflow options of operation
// childID (of type opType, about resourceID) that a bulk item or an
// orchestration step runs as, in the tenant of ref: its id is the
// operation's request id; it inherits the parent's task queue; a cancelled
// parent cancels it (it then compensates) and waits for it.
func ChildOperationOptions(ref BulkRef, childID, resourceID string, opType operations.OperationType) workflow.ChildWorkflowOptions {
	return workflow.ChildWorkflowOptions{
		WorkflowID:            childID,
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation:   true,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: searchAttributes(ref.OrganizationID, ref.Environment, string(opType), resourceID),
	}
}

// ChangeStart is a change of a service ready to run as a child
// ServiceChange workflow (the services area's modification or scaling), or
// Noop when there is nothing to change.
type ChangeStart struct {
	Noop  bool                     `json:"noop"`
	Type  operations.OperationType `json:"type"`
	Input ServiceChangeInput       `json:"input"`
}

// runChange prepares a change with the activity prepare (its argument arg)
// and runs it as a child ServiceChange workflow, returning what was
// prepared.
func runChange[I, In any](ctx workflow.Context, ref BulkRef, prepare func(I, context.Context, In) (*ChangeStart, error), arg In) (*ChangeStart, error) {
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	var cs ChangeStart
	if err := call(summarized(actx, "prepare the change: "+bulkSubject(ref)), prepare, arg).Get(actx, &cs); err != nil {
		return nil, err
	}
	if cs.Noop {
		return &cs, nil
	}
	cctx := workflow.WithChildOptions(ctx, ChildOperationOptions(ref, cs.Input.RequestID, cs.Input.ServiceID, cs.Type))
	return &cs, workflow.ExecuteChildWorkflow(cctx, ServiceChangeWorkflow, cs.Input).Get(cctx, nil)
}

// changeFuture runs runChange in its own coroutine (one per item in flight)
// and returns a future that is ready when it ends.
func changeFuture[I, In any](ctx workflow.Context, ref BulkRef, prepare func(I, context.Context, In) (*ChangeStart, error), arg In) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(gctx workflow.Context) {
		_, err := runChange(gctx, ref, prepare, arg)
		set.Set(nil, err)
	})
	return f
}

// itemError returns the error of a failed item from the error its child
// workflow or activity ended with.
func itemError(err error) *operations.OperationError {
	e := ErrorOf(err)
	return &operations.OperationError{Code: e.Code, Message: e.Message, Details: e.Details}
}

// recorder buffers item updates and writes them to the operation in
// batches: when enough items have ended, when a second has passed since the
// last write, and at the end of each page. Writes are bookkeeping: they run on a context that
// cancellation does not reach.
type recorder struct {
	ctx     workflow.Context
	ref     BulkRef
	buf     []automation.ItemUpdate
	ended   int
	every   int
	last    time.Time
	flushes int
	// flushed, when set, runs after each write (the workflow publishes its
	// progress then).
	flushed func()
}

func (r *recorder) add(u automation.ItemUpdate) {
	r.buf = append(r.buf, u)
	if automation.ItemTerminal(u.Status) {
		r.ended++
	}
	if r.ended >= r.every {
		r.flush()
	}
}

// tick writes what is buffered when the last write is older than the flush
// interval (so started items show as in_progress even when none ends soon).
func (r *recorder) tick() {
	if workflow.Now(r.ctx).Sub(r.last) >= bulkFlushInterval {
		r.flush()
	}
}

func (r *recorder) flush() {
	if len(r.buf) == 0 {
		return
	}
	err := execute(summarized(r.ctx, fmt.Sprintf("record %d items: %s", len(r.buf), bulkSubject(r.ref))), BulkActivities.Record, BulkRecordInput{Bulk: r.ref, Updates: r.buf}).Get(r.ctx, nil)
	if err != nil {
		workflow.GetLogger(r.ctx).Error("recording bulk items failed", "request_id", r.ref.RequestID, "error", err)
	}
	r.buf, r.ended, r.last = nil, 0, workflow.Now(r.ctx)
	r.flushes++
	if r.flushed != nil {
		r.flushed()
	}
}

// bulkDetails renders a bulk workflow's progress as its current details
// (Markdown), what an operator reads in the Temporal UI.
func bulkDetails(p BulkProgress, total int) string {
	return fmt.Sprintf("**Phase**: %s (run %d)\n\n**Items**: %d completed, %d failed of %d; next position %d\n\n**In flight**: %d (window %d)",
		p.Phase, p.Run, p.Completed, p.Failed, total, p.Next, p.InFlight, p.Window)
}

// runWindow runs items with at most width in flight (a sliding window over a
// selector: no goroutine per item), calling start for each item while stop
// is false, filled (if not nil) each time the window has been filled, and
// done as each item ends. It returns how many items it started.
func runWindow(ctx workflow.Context, items []BulkWorkItem, width int, stop func() bool,
	start func(BulkWorkItem) workflow.Future, filled func(), done func(BulkWorkItem, error), inFlight *int) int {
	sel := workflow.NewSelector(ctx)
	started := 0
	for {
		for *inFlight < width && started < len(items) && !stop() {
			it := items[started]
			started++
			f := start(it)
			*inFlight++
			sel.AddFuture(f, func(f workflow.Future) {
				*inFlight--
				done(it, f.Get(ctx, nil))
			})
		}
		if filled != nil {
			filled()
		}
		if *inFlight == 0 {
			return started
		}
		sel.Select(ctx)
	}
}

// Bulk runs a bulk operation: its items, at most options.Window() at a time
// (one when not parallel), each as a child Provisioning workflow (bulk
// provision), a child ServiceChange workflow (bulk modify) or one activity
// (bulk status). One run handles one
// page of items and continues as new with a cursor, so a 1,000-item job
// never holds more than a page of history nor more than the window of items
// in flight. Item statuses reach the operation in batches. A failed item
// with rollback_on_failure stops new items; when the running ones have ended,
// every completed item is rolled back (its compensation), page by page, and
// the operation ends rolled_back. Otherwise it ends completed, partial or
// failed. Cancellation stops new items and cancels the running ones (a
// provisioning compensates itself); with rollback_on_failure the completed
// items are rolled back too; the operation ends cancelled. It returns the
// counts, or the cancellation.
func Bulk(ctx workflow.Context, in BulkInput) (*BulkResult, error) {
	log := workflow.GetLogger(ctx)
	if in.PageSize <= 0 {
		in.PageSize = DefaultBulkPageSize
	}
	if in.State.Phase == "" {
		in.State.Phase = BulkPhaseRun
	}
	st := &in.State
	st.Runs++
	width := in.Options.Window()
	inFlight := 0
	progress := func() BulkProgress {
		return BulkProgress{Phase: st.Phase, Run: st.Runs, Next: st.Next, InFlight: inFlight, Window: width, Completed: st.Completed, Failed: st.Failed}
	}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (BulkProgress, error) { return progress(), nil }); err != nil {
		return nil, err
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, BookkeepingActivityOptions())
	if err := execute(summarized(dctx, "begin: "+bulkSubject(in.Bulk)), BulkActivities.Begin, in.Bulk).Get(dctx, nil); err != nil {
		return nil, err
	}
	// The first filled window is written at once (last is the zero time).
	rec := &recorder{ctx: dctx, ref: in.Bulk, every: max(10, width)}
	rec.flushed = func() { workflow.SetCurrentDetails(ctx, bulkDetails(progress(), in.Total)) }
	rec.flushed()
	cancelled := func() bool { return ctx.Err() != nil }
	pages := 0
	batched := batchShape(ctx, in)

	load := func(statuses ...string) (*BulkPage, error) {
		var page BulkPage
		err := call(summarized(dctx, fmt.Sprintf("load items from position %d: %s", st.Next, bulkSubject(in.Bulk))), BulkActivities.Load, BulkLoadInput{Bulk: in.Bulk, From: st.Next, Limit: in.PageSize, Statuses: statuses}).Get(dctx, &page)
		return &page, err
	}

	for {
		if st.Phase == BulkPhaseRun && (st.Next >= in.Total || st.Stopped || cancelled()) {
			if st.Stopped || (cancelled() && in.Options.RollbackOnFailure) {
				st.Phase, st.Next = BulkPhaseRollback, 0
			} else {
				st.Phase = BulkPhaseFinish
			}
		}
		// One page per run: the next page starts a new run with a fresh history
		// (not after a cancellation, which this run must see to its end).
		if pages > 0 && !cancelled() && st.Phase != BulkPhaseFinish {
			rec.flush()
			log.Info("bulk operation continues as new", "request_id", in.Bulk.RequestID, "phase", st.Phase, "next", st.Next, "run", st.Runs)
			return nil, workflow.NewContinueAsNewError(ctx, BulkWorkflow, in)
		}
		switch st.Phase {
		case BulkPhaseRun:
			page, err := load(automation.ItemPending)
			if err != nil {
				return nil, err
			}
			if len(page.Items) == 0 {
				st.Next = page.Next
				continue
			}
			suggested := false
			stop := func() bool {
				if !suggested && workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
					suggested = true
				}
				return cancelled() || st.Stopped || suggested
			}
			start := func(it BulkWorkItem) workflow.Future {
				rec.add(automation.ItemUpdate{Position: it.Position, Status: automation.ItemInProgress})
				switch in.Bulk.Type {
				case operations.OpTypeBulkProvision:
					cctx := workflow.WithChildOptions(ctx, ChildOperationOptions(in.Bulk, it.ChildID, it.ServiceID, operations.OpTypeProvisioning))
					return workflow.ExecuteChildWorkflow(cctx, ProvisioningWorkflow, ProvisioningInput{
						RequestID: it.ChildID, OrganizationID: in.Bulk.OrganizationID, Environment: in.Bulk.Environment,
						ServiceID: it.ServiceID, Order: *it.Order,
					})
				case operations.OpTypeBulkModify:
					return changeFuture(ctx, in.Bulk, BulkActivities.PrepareChange, BulkItemInput{Bulk: in.Bulk, Item: it})
				}
				actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
				return execute(summarized(actx, fmt.Sprintf("item %d (%s %s): %s", it.Position, it.Action, it.ServiceID, bulkSubject(in.Bulk))), BulkActivities.Apply, BulkItemInput{Bulk: in.Bulk, Item: it})
			}
			done := func(it BulkWorkItem, err error) {
				u := automation.ItemUpdate{Position: it.Position, Status: automation.ItemCompleted}
				switch {
				case err == nil:
					st.Completed++
				case temporal.IsCanceledError(err) || errors.Is(err, workflow.ErrCanceled):
					u.Status = automation.ItemCancelled
				default:
					u.Status, u.Error = automation.ItemFailed, itemError(err)
					st.Failed++
					if in.Options.RollbackOnFailure {
						st.Stopped = true
					}
				}
				rec.add(u)
			}
			var started int
			if batched {
				activities, each := batchWindow(width, in.Batch, in.Options.RollbackOnFailure)
				b := BulkBatchInput{Bulk: in.Bulk, Run: st.Runs, Window: each, StopOnFailure: in.Options.RollbackOnFailure, Items: page.Items}
				startChunk := func(c []BulkWorkItem) {
					for _, it := range c {
						rec.add(automation.ItemUpdate{Position: it.Position, Status: automation.ItemInProgress})
					}
				}
				// As done, from the outcome an item's provisioning ended with.
				// (The batch has written the outcomes of its items as they
				// ended; writing them again here changes nothing.) An item not
				// started, shown in progress with its chunk, never ran (a
				// stop): it goes back to pending.
				doneItem := func(o BulkItemOutcome) {
					u, ok := o.ItemUpdate()
					if !ok {
						return
					}
					switch o.Status {
					case BatchItemCompleted:
						st.Completed++
					case BatchItemFailed:
						st.Failed++
						if in.Options.RollbackOnFailure {
							st.Stopped = true
						}
					}
					rec.add(u)
				}
				started = runBatches(ctx, dctx, b, in.Batch, activities, stop, rec.tick, startChunk, doneItem, &inFlight)
			} else {
				started = runWindow(ctx, page.Items, width, stop, start, rec.tick, done, &inFlight)
			}
			if started < len(page.Items) {
				st.Next = page.Items[started].Position
			} else {
				st.Next = page.Next
			}
			rec.flush()
			pages++
		case BulkPhaseRollback:
			page, err := load(automation.ItemCompleted)
			if err != nil {
				return nil, err
			}
			if len(page.Items) == 0 {
				st.Phase = BulkPhaseFinish
				continue
			}
			// Compensation must happen: it runs on the disconnected context.
			cctx := workflow.WithActivityOptions(dctx, CompensationActivityOptions())
			start := func(it BulkWorkItem) workflow.Future {
				if in.Bulk.Type == operations.OpTypeBulkModify {
					return changeFuture(cctx, in.Bulk, BulkActivities.PrepareRevert, BulkItemInput{Bulk: in.Bulk, Item: it})
				}
				return execute(summarized(cctx, fmt.Sprintf("roll back item %d (%s): %s", it.Position, it.ServiceID, bulkSubject(in.Bulk))), BulkActivities.Rollback, BulkItemInput{Bulk: in.Bulk, Item: it})
			}
			done := func(it BulkWorkItem, err error) {
				if err != nil {
					e := itemError(err)
					e.Message = "rollback failed: " + e.Message
					rec.add(automation.ItemUpdate{Position: it.Position, Status: automation.ItemCompleted, Error: e})
					return
				}
				st.RolledBack++
				rec.add(automation.ItemUpdate{Position: it.Position, Status: automation.ItemRolledBack})
			}
			runWindow(dctx, page.Items, width, func() bool { return false }, start, rec.tick, done, &inFlight)
			st.Next = page.Next
			rec.flush()
			pages++
		case BulkPhaseFinish:
			rec.flush()
			fin := automation.BulkFinish{Cancelled: cancelled(), RolledBack: st.Stopped || (cancelled() && in.Options.RollbackOnFailure)}
			var res BulkResult
			if err := call(summarized(dctx, "finish: "+bulkSubject(in.Bulk)), BulkActivities.Finish, BulkFinishInput{Bulk: in.Bulk, Finish: fin}).Get(dctx, &res); err != nil {
				return nil, err
			}
			log.Info("bulk operation ended", "request_id", in.Bulk.RequestID, "status", res.Status, "runs", st.Runs)
			if fin.Cancelled {
				return &res, ctx.Err()
			}
			return &res, nil
		default:
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown bulk phase %q", st.Phase), string(models.CodeInternal), nil)
		}
	}
}
