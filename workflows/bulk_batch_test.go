package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/workflows"
)

// batchFake is what fakeBulk's stand-in ProvisionBatch activity records
// and how it behaves.
type batchFake struct {
	inputs      []workflows.BulkBatchInput
	inFlight    int
	maxInFlight int
	// cancelAt, when set, is called by the batch whose chunk holds
	// position cancelAt, which then completes the items before that
	// position, waits for its cancellation and reports the others cancelled.
	cancelAt int
	cancel   func()
	outcomes map[int]workflows.BulkItemOutcome // what each item's operation ended as
	// failAt, when set (> 0), makes the batch whose chunk holds position
	// failAt complete the items before it, then fail for good; abandoned
	// records the inputs that asked to abandon a batch's items.
	failAt    int
	abandoned []workflows.BulkBatchInput
}

// provisionBatch stands in for Bulk.ProvisionBatch: each item completes,
// or fails at activate (PROVISIONING_FAILED) when its position is in fail;
// with StopOnFailure the items after a failed one are not started.
func (f *fakeBulk) provisionBatch(ctx context.Context, in workflows.BulkBatchInput) (*workflows.BulkBatchResult, error) {
	f.mu.Lock()
	if in.ReportOnly {
		defer f.mu.Unlock()
		res := &workflows.BulkBatchResult{}
		for _, it := range in.Items {
			o, ok := f.batch.outcomes[it.Position]
			if !ok {
				o = workflows.BulkItemOutcome{Position: it.Position, Status: workflows.BatchItemNotStarted}
			}
			res.Items = append(res.Items, o)
		}
		return res, nil
	}
	if in.Abandon != nil {
		// The items that ended keep their outcomes; the others fail with
		// the batch's error (their compensations ran).
		defer f.mu.Unlock()
		f.batch.abandoned = append(f.batch.abandoned, in)
		res := &workflows.BulkBatchResult{}
		for _, it := range in.Items {
			o, ok := f.batch.outcomes[it.Position]
			if !ok {
				o = workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemFailed,
					Error: &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "validate failed: " + in.Abandon.Message,
						Details: map[string]any{"step": "validate", "reason_code": string(in.Abandon.Code), "compensated": true}}}
			}
			res.Items = append(res.Items, o)
		}
		return res, nil
	}
	if f.batch.failAt > 0 && slices.ContainsFunc(in.Items, func(it workflows.BulkWorkItem) bool { return it.Position == f.batch.failAt }) {
		defer f.mu.Unlock()
		f.batch.inputs = append(f.batch.inputs, in)
		if f.batch.outcomes == nil {
			f.batch.outcomes = map[int]workflows.BulkItemOutcome{}
		}
		for _, it := range in.Items {
			if it.Position < f.batch.failAt {
				f.batch.outcomes[it.Position] = workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemCompleted}
			}
		}
		return nil, temporal.NewNonRetryableApplicationError("the database is unavailable", string(models.CodeInternal), nil)
	}
	f.batch.inputs = append(f.batch.inputs, in)
	f.batch.inFlight++
	f.batch.maxInFlight = max(f.batch.maxInFlight, f.batch.inFlight)
	cancelHere := f.batch.cancel != nil && slices.ContainsFunc(in.Items, func(it workflows.BulkWorkItem) bool { return it.Position == f.batch.cancelAt })
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.batch.inFlight--
		f.mu.Unlock()
	}()
	res := &workflows.BulkBatchResult{}
	if cancelHere {
		// The items before cancelAt ended before the cancellation came.
		f.mu.Lock()
		if f.batch.outcomes == nil {
			f.batch.outcomes = map[int]workflows.BulkItemOutcome{}
		}
		for _, it := range in.Items {
			if it.Position < f.batch.cancelAt {
				f.batch.outcomes[it.Position] = workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemCompleted}
			}
		}
		f.mu.Unlock()
		f.batch.cancel()
		// Wait for the cancellation (bounded, so that a broken test ends).
		t := time.NewTimer(30 * time.Second)
		defer t.Stop()
		for ctx.Err() == nil {
			activity.RecordHeartbeat(ctx, []workflows.BulkItemOutcome{})
			select {
			case <-ctx.Done():
			case <-t.C:
				return nil, fmt.Errorf("the batch was never cancelled")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	stopped := false
	for _, it := range in.Items {
		o := workflows.BulkItemOutcome{Position: it.Position, ServiceID: it.ServiceID, ChildID: it.ChildID, Status: workflows.BatchItemCompleted}
		switch {
		case cancelHere && it.Position >= f.batch.cancelAt:
			o.Status = workflows.BatchItemCancelled
		case stopped:
			o.Status = workflows.BatchItemNotStarted
		case f.fail[it.Position]:
			o.Status = workflows.BatchItemFailed
			o.Error = &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "activate failed: the network rejected the activate step",
				Details: map[string]any{"step": "activate", "reason_code": "PROVISIONING_FAILED", "compensated": true}}
			stopped = in.StopOnFailure
		}
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
		res.Items = append(res.Items, o)
		if o.Status != workflows.BatchItemNotStarted {
			f.mu.Lock()
			if f.batch.outcomes == nil {
				f.batch.outcomes = map[int]workflows.BulkItemOutcome{}
			}
			f.batch.outcomes[o.Position] = o
			f.mu.Unlock()
		}
	}
	return res, nil
}

func batchInput(n int, opts automation.BulkOptions, batch int) workflows.BulkInput {
	in := bulkInput(operations.OpTypeBulkProvision, n, opts, 0)
	in.Batch = batch
	return in
}

// TestBulkBatchesPartialFailure: with batches, 250 items run in
// ProvisionBatch activities of 25 (two at a time, 25 items each, within
// the window of 50), page by page, never as child workflows; the failed
// items are recorded with their errors and the operation ends partial.
func TestBulkBatchesPartialFailure(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 250, 1, 130, 249)
	res, runs, _, err := runBulk(t, f, batchInput(250, automation.BulkOptions{Parallel: true, MaxConcurrency: 50}, 25), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpPartial || res.Completed != 247 || res.Failed != 3 || runs < 3 {
		t.Fatalf("result %+v after %d runs", res, runs)
	}
	if len(f.started) != 0 {
		t.Fatalf("%d child workflows started", len(f.started))
	}
	if len(f.batch.inputs) != 10 || f.batch.maxInFlight > 2 {
		t.Fatalf("%d batches, %d at once", len(f.batch.inputs), f.batch.maxInFlight)
	}
	seen := map[int]bool{}
	for _, b := range f.batch.inputs {
		if len(b.Items) != 25 || b.Window != 25 || b.StopOnFailure || b.Bulk.RequestID != "bulk_test" || b.Run < 1 || b.Chunk < 1 ||
			b.Positions != fmt.Sprintf("%d-%d", b.Items[0].Position, b.Items[24].Position) {
			t.Fatalf("batch %+v", b)
		}
		for _, it := range b.Items {
			if seen[it.Position] {
				t.Fatalf("item %d ran twice", it.Position)
			}
			seen[it.Position] = true
		}
	}
	st := f.statuses()
	if !slices.Equal(st[automation.ItemFailed], []int{1, 130, 249}) || len(st[automation.ItemCompleted]) != 247 {
		t.Fatalf("statuses %v", st)
	}
	if e := f.items[130].Error; e == nil || e.Code != models.CodeProvisioningFailed || e.Details["step"] != "activate" {
		t.Fatalf("failed item's error %+v", e)
	}
}

// TestBulkBatchesRollbackOnFailure: with rollback_on_failure, one batch
// runs at a time (with the whole window) and stops at the failed item; the
// completed items are rolled back, the others skipped.
func TestBulkBatchesRollbackOnFailure(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 60, 32)
	res, _, _, err := runBulk(t, f, batchInput(60, automation.BulkOptions{Parallel: true, MaxConcurrency: 10, RollbackOnFailure: true}, 25), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpRolledBack || res.RolledBack != 32 || res.Failed != 1 || res.Skipped != 27 {
		t.Fatalf("result %+v", res)
	}
	if len(f.batch.inputs) != 2 || f.batch.maxInFlight != 1 || !f.batch.inputs[1].StopOnFailure || f.batch.inputs[1].Window != 10 {
		t.Fatalf("batches %d, %d at once: %+v", len(f.batch.inputs), f.batch.maxInFlight, f.batch.inputs)
	}
	slices.Sort(f.rollbacks)
	if len(f.rollbacks) != 32 || f.rollbacks[0] != 0 || f.rollbacks[31] != 31 {
		t.Fatalf("rolled back %v", f.rollbacks)
	}
	st := f.statuses()
	if !slices.Equal(st[automation.ItemFailed], []int{32}) || len(st[automation.ItemSkipped]) != 27 || st[automation.ItemSkipped][0] != 33 {
		t.Fatalf("statuses %v", st)
	}
}

// TestBulkBatchesSequential: without parallel, a batch runs its items one
// at a time.
func TestBulkBatchesSequential(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 30)
	res, _, _, err := runBulk(t, f, batchInput(30, automation.BulkOptions{}, 25), nil)
	if err != nil || res.Status != operations.OpCompleted || res.Completed != 30 {
		t.Fatalf("result %+v %v", res, err)
	}
	if len(f.batch.inputs) != 2 || f.batch.inputs[0].Window != 1 || f.batch.maxInFlight != 1 || f.batch.inputs[1].Positions != "25-29" {
		t.Fatalf("batches %+v", f.batch.inputs)
	}
}

// TestBulkBatchesCancelledMidBatch: cancelling the operation while a batch
// runs cancels the batch, which reports its items (those done completed,
// the others cancelled); no new batch starts; the items never started end
// cancelled and the operation ends cancelled.
func TestBulkBatchesCancelledMidBatch(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 100)
	f.batch.cancelAt = 60
	var env *testsuite.TestWorkflowEnvironment
	f.batch.cancel = func() { env.CancelWorkflow() }
	_, _, _, err := runBulk(t, f, batchInput(100, automation.BulkOptions{Parallel: true, MaxConcurrency: 25}, 25), func(e *testsuite.TestWorkflowEnvironment) { env = e })
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "cancel") {
		t.Fatalf("want the cancellation, got %v", err)
	}
	if f.finish == nil || !f.finish.Cancelled {
		t.Fatalf("finish %+v", f.finish)
	}
	if len(f.batch.inputs) != 3 {
		t.Fatalf("%d batches started", len(f.batch.inputs))
	}
	st := f.statuses()
	if len(st[automation.ItemCompleted]) != 60 || len(st[automation.ItemCancelled]) != 40 || st[automation.ItemCancelled][0] != 60 {
		t.Fatalf("statuses %v", st)
	}
}

// TestBulkBatchesNeedTheBatchVersion: a history recorded before batches
// (workflow.GetVersion gives DefaultVersion) keeps running items as child
// workflows even when its input asks for batches.
func TestBulkBatchesNeedTheBatchVersion(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 10)
	f.itemTime = time.Second
	res, _, _, err := runBulk(t, f, batchInput(10, automation.BulkOptions{Parallel: true}, 25), func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("bulk-provision-batches", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if err != nil || res.Completed != 10 || len(f.batch.inputs) != 0 || len(f.started) != 10 {
		t.Fatalf("result %+v %v; %d batches, %d children", res, err, len(f.batch.inputs), len(f.started))
	}
}

// TestBulkBatchesFailedBatchAbandonsItsUnfinishedItems: a batch whose
// activity fails for good (after items of its chunk completed) does not
// fail the items that completed: the workflow asks the activity to
// abandon the others (compensated, failed with the batch's error) and
// records each item as it ended.
func TestBulkBatchesFailedBatchAbandonsItsUnfinishedItems(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 50)
	f.batch.failAt = 30
	res, _, _, err := runBulk(t, f, batchInput(50, automation.BulkOptions{Parallel: true, MaxConcurrency: 50}, 25), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpPartial || res.Completed != 30 || res.Failed != 20 {
		t.Fatalf("result %+v", res)
	}
	if len(f.batch.abandoned) != 1 || f.batch.abandoned[0].Positions != "25-49" || f.batch.abandoned[0].Abandon.Code != models.CodeInternal ||
		f.batch.abandoned[0].Abandon.Message != "the database is unavailable" {
		t.Fatalf("abandoned %+v", f.batch.abandoned)
	}
	st := f.statuses()
	if len(st[automation.ItemCompleted]) != 30 || len(st[automation.ItemFailed]) != 20 || st[automation.ItemFailed][0] != 30 {
		t.Fatalf("statuses %v", st)
	}
	if e := f.items[30].Error; e == nil || e.Details["reason_code"] != string(models.CodeInternal) {
		t.Fatalf("abandoned item's error %+v", e)
	}
}

// TestBulkBatchesFailedBatchBeforeAbandon: a history recorded before
// abandoning (workflow.GetVersion gives DefaultVersion) fails every item
// of a failed batch with its error, as it did.
func TestBulkBatchesFailedBatchBeforeAbandon(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 50)
	f.batch.failAt = 30
	res, _, _, err := runBulk(t, f, batchInput(50, automation.BulkOptions{Parallel: true, MaxConcurrency: 50}, 25), func(env *testsuite.TestWorkflowEnvironment) {
		env.OnGetVersion("bulk-batch-abandon", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	})
	if err != nil || res.Completed != 25 || res.Failed != 25 || len(f.batch.abandoned) != 0 {
		t.Fatalf("result %+v %v; %d abandoned", res, err, len(f.batch.abandoned))
	}
}
