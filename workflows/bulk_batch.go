package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
)

// DefaultBulkBatch is how many bulk provisioning items one ProvisionBatch
// activity runs (BulkInput.Batch as the API sets it).
const DefaultBulkBatch = 25

// bulkBatchChange is the workflow.GetVersion change id of the batch shape
// of bulk provisioning: version 1 runs items in ProvisionBatch activities
// (when BulkInput.Batch is set), DefaultVersion as child Provisioning
// workflows.
const bulkBatchChange = "bulk-provision-batches"

// bulkBatchAbandonChange is the workflow.GetVersion change id of what a
// batch whose activity failed for good does: version 1 asks the activity
// for the outcomes of its items that ended and abandons the others
// (BulkBatchInput.Abandon); DefaultVersion fails them all with its error.
const bulkBatchAbandonChange = "bulk-batch-abandon"

// BatchHeartbeatTimeout is the heartbeat timeout of a ProvisionBatch
// activity, which heartbeats every second and after each item.
const BatchHeartbeatTimeout = 10 * time.Second

// Outcomes of one item of a ProvisionBatch activity (BulkItemOutcome.Status):
// the bulk item statuses completed, failed and cancelled, and not_started
// (the batch stopped before the item: cancellation, or a failure with
// rollback_on_failure).
const (
	BatchItemCompleted  = automation.ItemCompleted
	BatchItemFailed     = automation.ItemFailed
	BatchItemCancelled  = automation.ItemCancelled
	BatchItemNotStarted = "not_started"
)

// BulkBatchInput is one chunk of bulk provisioning items for a
// ProvisionBatch activity: which run and chunk of the operation it is, its
// items (in position order), how many of them may run at once, and whether
// a failed item stops the items not yet started (rollback_on_failure).
type BulkBatchInput struct {
	Bulk          BulkRef `json:"bulk"`
	Run           int     `json:"run"`
	Chunk         int     `json:"chunk"`
	Positions     string  `json:"positions"` // the items' positions, for people: "100-124"
	Window        int     `json:"window"`
	StopOnFailure bool    `json:"stop_on_failure"`
	// ReportOnly asks for the outcomes of items that have ended (from
	// their operations) and runs nothing: the others are not_started.
	ReportOnly bool `json:"report_only,omitempty"`
	// Abandon, set when the batch's activity failed for good, ends the
	// items that have not ended: each one's compensations run (all of
	// them, in reverse order: they are idempotent and release only what
	// was taken) and its operation ends failed with this error as the
	// reason. The items that ended are reported as they ended.
	Abandon *operations.OperationError `json:"abandon,omitempty"`
	Items   []BulkWorkItem             `json:"items"`
}

// BulkItemOutcome is how one item of a ProvisionBatch activity ended: its
// status (BatchItem*), and for a failed item the error its provisioning
// operation recorded (as a child Provisioning workflow's failure carries
// it). A cancellation whose compensation failed carries that error too.
type BulkItemOutcome struct {
	Position  int                        `json:"position"`
	ServiceID string                     `json:"service_id"`
	ChildID   string                     `json:"child_id"`
	Status    string                     `json:"status"`
	Error     *operations.OperationError `json:"error,omitempty"`
}

// ItemUpdate returns the item status that outcome o records on the bulk
// operation (a failed item without an error gets a PROVISIONING_FAILED
// one; an item not started goes back to pending), and false for a status
// that records nothing. The workflow and the ProvisionBatch activity (which
// writes its items' outcomes as they end) record the same update, so that
// writing an outcome again changes nothing.
func (o BulkItemOutcome) ItemUpdate() (automation.ItemUpdate, bool) {
	u := automation.ItemUpdate{Position: o.Position}
	switch o.Status {
	case BatchItemCompleted:
		u.Status = automation.ItemCompleted
	case BatchItemCancelled:
		u.Status = automation.ItemCancelled
	case BatchItemFailed:
		u.Status, u.Error = automation.ItemFailed, o.Error
		if u.Error == nil {
			u.Error = &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "the item failed"}
		}
	case BatchItemNotStarted:
		u.Status = automation.ItemPending
	default:
		return u, false
	}
	return u, true
}

// BulkBatchResult is what a ProvisionBatch activity returns: each item's
// outcome, in position order, and the counts.
type BulkBatchResult struct {
	Items      []BulkItemOutcome `json:"items"`
	Completed  int               `json:"completed"`
	Failed     int               `json:"failed"`
	Cancelled  int               `json:"cancelled"`
	NotStarted int               `json:"not_started"`
}

// BatchActivityOptions are the options of a ProvisionBatch activity: long
// enough for a chunk of items at the network's pace (each item's steps are
// retried inside it as the Provisioning workflow retries its activities),
// heartbeating (BatchHeartbeatTimeout; the details are the outcomes so far,
// so that a retried attempt resumes), and waited for on cancellation so
// that the items in flight compensate first.
func BatchActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    BatchHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10,
		},
		WaitForCancellation: true,
	}
}

// AbandonActivityOptions are the options of the ProvisionBatch activity
// that abandons a failed batch's unfinished items (BulkBatchInput.Abandon):
// it compensates them one after the other, each compensation retried for
// up to several minutes, heartbeating every second, and is retried as
// compensations are.
func AbandonActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    BatchHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 20,
		},
	}
}

// batchShape reports whether this run provisions its items in
// ProvisionBatch activities: a bulk provisioning whose input asks for
// batches, on a history that has (or now records) the batch version.
func batchShape(ctx workflow.Context, in BulkInput) bool {
	if in.Bulk.Type != operations.OpTypeBulkProvision || in.Batch <= 0 {
		return false
	}
	return workflow.GetVersion(ctx, bulkBatchChange, workflow.DefaultVersion, 1) >= 1
}

// batchWindow returns how many ProvisionBatch activities of batch items run
// at once, and how many items each runs at once, within width items in
// flight: one activity when a failure must stop every new item
// (rollback_on_failure), else as many as the window holds.
func batchWindow(width, batch int, stopOnFailure bool) (activities, each int) {
	activities = 1
	if !stopOnFailure {
		activities = max(1, width/batch)
	}
	return activities, max(1, width/activities)
}

// positions describes the positions of items for people: "7", "100-124"
// or "3, 9, 12" (for items that are not consecutive).
func positions(items []BulkWorkItem) string {
	if len(items) == 0 {
		return ""
	}
	first, last := items[0].Position, items[len(items)-1].Position
	if last-first == len(items)-1 {
		if first == last {
			return fmt.Sprint(first)
		}
		return fmt.Sprintf("%d-%d", first, last)
	}
	s := ""
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(it.Position)
	}
	return s
}

// runBatches runs a page of bulk provisioning items in chunks of batch,
// each a ProvisionBatch activity, at most `activities` at a time with each
// running `each` items at once, while stop is false. start is called with
// each chunk as it starts, done with each item's outcome (dctx runs the
// bookkeeping that must survive a cancellation). It returns how
// many items were in the chunks it started. inFlight counts the items of
// the chunks running.
func runBatches(ctx, dctx workflow.Context, b BulkBatchInput, batch, activities int, stop func() bool, tick func(),
	start func([]BulkWorkItem), done func(BulkItemOutcome), inFlight *int) int {
	items := b.Items
	var chunks [][]BulkWorkItem
	for i := 0; i < len(items); i += batch {
		chunks = append(chunks, items[i:min(i+batch, len(items))])
	}
	sel := workflow.NewSelector(ctx)
	next, running, started := 0, 0, 0
	for {
		for running < activities && next < len(chunks) && !stop() {
			c := chunks[next]
			next++
			started += len(c)
			start(c)
			in := b
			in.Chunk, in.Items, in.Positions = next, c, positions(c)
			opts := BatchActivityOptions()
			opts.Summary = fmt.Sprintf("run %d, chunk %d: items %s of %s", in.Run, in.Chunk, in.Positions, bulkSubject(in.Bulk))
			actx := workflow.WithActivityOptions(ctx, opts)
			f := call(actx, BulkActivities.ProvisionBatch, in)
			running++
			*inFlight += len(c)
			sel.AddFuture(f, func(f workflow.Future) {
				running--
				*inFlight -= len(c)
				var res BulkBatchResult
				err := f.Get(ctx, &res)
				if err != nil && temporal.IsCanceledError(err) {
					// Cancelled before answering: its items that ended are
					// read from their operations (the others end cancelled
					// with the operation).
					rin := in
					rin.ReportOnly = true
					rctx := summarized(dctx, fmt.Sprintf("run %d, chunk %d: outcomes of items %s of %s", in.Run, in.Chunk, in.Positions, bulkSubject(in.Bulk)))
					if call(rctx, BulkActivities.ProvisionBatch, rin).Get(rctx, &res) == nil {
						err = nil
					}
				}
				if err != nil && !temporal.IsCanceledError(err) &&
					workflow.GetVersion(ctx, bulkBatchAbandonChange, workflow.DefaultVersion, 1) >= 1 {
					// The activity failed for good: the items that ended keep
					// their outcomes, the others are compensated and fail
					// with its error.
					ain := in
					ain.Abandon = itemError(err)
					actx := workflow.WithActivityOptions(dctx, AbandonActivityOptions())
					actx = summarized(actx, fmt.Sprintf("run %d, chunk %d: abandon the unfinished items of %s of %s", in.Run, in.Chunk, in.Positions, bulkSubject(in.Bulk)))
					if call(actx, BulkActivities.ProvisionBatch, ain).Get(actx, &res) == nil {
						err = nil
					}
				}
				if err != nil {
					// The activity itself failed (its retries exhausted, or it
					// was cancelled before answering) and its items' outcomes
					// could not be read: its items end with its error.
					status, e := BatchItemFailed, itemError(err)
					if temporal.IsCanceledError(err) {
						status, e = BatchItemCancelled, nil
					}
					for _, it := range c {
						done(BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: status, Error: e})
					}
					return
				}
				for _, o := range res.Items {
					done(o)
				}
			})
		}
		tick()
		if running == 0 {
			return started
		}
		sel.Select(ctx)
	}
}
