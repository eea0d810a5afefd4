package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// fakeBulk stands in for the database and the network of the bulk
// activities, and for the Provisioning child workflow: it keeps the
// operation's items, fails the positions listed in fail, and measures how
// many items are in flight at once.
type fakeBulk struct {
	mu          sync.Mutex
	kind        operations.OperationType
	items       []operations.OperationItem
	work        []workflows.BulkWorkItem
	fail        map[int]bool
	itemTime    time.Duration
	inFlight    int
	maxInFlight int
	started     []int // positions, in start order
	rollbacks   []int
	records     int
	loads       []workflows.BulkLoadInput
	finish      *automation.BulkFinish
	startsByRun map[int]int
	run         int // the run being executed (set by runBulk)
	batch       batchFake
}

func newFakeBulk(kind operations.OperationType, n int, fail ...int) *fakeBulk {
	f := &fakeBulk{kind: kind, fail: map[int]bool{}, itemTime: time.Minute, startsByRun: map[int]int{}}
	for i := 0; i < n; i++ {
		f.items = append(f.items, operations.OperationItem{ID: fmt.Sprintf("svc_%04d", i), Status: automation.ItemPending})
		w := workflows.BulkWorkItem{Position: i, ServiceID: fmt.Sprintf("svc_%04d", i)}
		if kind == operations.OpTypeBulkProvision {
			w.ChildID = fmt.Sprintf("prov_%04d", i)
			w.Order = &services.ProvisioningOrder{ServiceType: "fiber_dedicated", LocationID: "loc_sandbox_all", BandwidthMbps: 100}
		} else {
			w.Changes = &automation.ServiceChanges{SLA: "enterprise"}
		}
		f.work = append(f.work, w)
	}
	for _, p := range fail {
		f.fail[p] = true
	}
	return f
}

func positionOf(serviceID string) int {
	var n int
	_, _ = fmt.Sscanf(serviceID, "svc_%d", &n)
	return n
}

func (f *fakeBulk) enter(pos int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.started = append(f.started, pos)
	f.startsByRun[f.run]++
}

func (f *fakeBulk) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inFlight--
}

// provisioning is the stand-in Provisioning child workflow: it takes
// itemTime of workflow time, then fails (PROVISIONING_FAILED at activate)
// or succeeds.
func (f *fakeBulk) provisioning(ctx workflow.Context, in workflows.ProvisioningInput) (*workflows.ProvisioningResult, error) {
	pos := positionOf(in.ServiceID)
	f.enter(pos)
	defer f.leave()
	if err := workflow.Sleep(ctx, f.itemTime); err != nil {
		return nil, err
	}
	if f.fail[pos] {
		return nil, temporal.NewNonRetryableApplicationError("activate failed: the network rejected the activate step", string(models.CodeProvisioningFailed), nil,
			map[string]any{"step": "activate", "reason_code": "PROVISIONING_FAILED"})
	}
	return &workflows.ProvisioningResult{ServiceID: in.ServiceID, Status: "operational"}, nil
}

func (f *fakeBulk) load(_ context.Context, in workflows.BulkLoadInput) (*workflows.BulkPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, in)
	page := &workflows.BulkPage{Items: []workflows.BulkWorkItem{}}
	next := in.From
	for ; next < len(f.items) && len(page.Items) < in.Limit; next++ {
		if slices.Contains(in.Statuses, f.items[next].Status) {
			page.Items = append(page.Items, f.work[next])
		}
	}
	page.Next = next
	return page, nil
}

func (f *fakeBulk) record(_ context.Context, in workflows.BulkRecordInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records++
	for _, u := range in.Updates {
		it := &f.items[u.Position]
		if automation.ItemTerminal(it.Status) && !automation.ItemTerminal(u.Status) {
			continue
		}
		it.Status, it.Error = u.Status, u.Error
	}
	return nil
}

func (f *fakeBulk) apply(_ context.Context, in workflows.BulkItemInput) error {
	f.enter(in.Item.Position)
	defer f.leave()
	if f.fail[in.Item.Position] {
		return temporal.NewNonRetryableApplicationError("the service is in maintenance (suspended)", string(models.CodeServiceMaintenance), nil)
	}
	return nil
}

// prepareChange stands in for Bulk.PrepareChange: item 0 of a modification
// changes nothing (Noop); the others get a change operation.
func (f *fakeBulk) prepareChange(_ context.Context, in workflows.BulkItemInput) (*workflows.ChangeStart, error) {
	if in.Item.Position == 0 {
		return &workflows.ChangeStart{Noop: true}, nil
	}
	return &workflows.ChangeStart{Type: services.OpTypeModification, Input: workflows.ServiceChangeInput{
		RequestID: fmt.Sprintf("mod_%04d", in.Item.Position), OrganizationID: in.Bulk.OrganizationID, Environment: in.Bulk.Environment, ServiceID: in.Item.ServiceID}}, nil
}

// prepareRevert stands in for Bulk.PrepareRevert.
func (f *fakeBulk) prepareRevert(_ context.Context, in workflows.BulkItemInput) (*workflows.ChangeStart, error) {
	f.mu.Lock()
	f.rollbacks = append(f.rollbacks, in.Item.Position)
	f.mu.Unlock()
	return &workflows.ChangeStart{Type: services.OpTypeModification, Input: workflows.ServiceChangeInput{
		RequestID: fmt.Sprintf("mod_%04d_rb", in.Item.Position), ServiceID: in.Item.ServiceID}}, nil
}

// serviceChange is the stand-in ServiceChange child workflow.
func (f *fakeBulk) serviceChange(ctx workflow.Context, in workflows.ServiceChangeInput) (*workflows.ServiceChangeResult, error) {
	pos := positionOf(in.ServiceID)
	rollback := len(in.RequestID) > 8
	if !rollback {
		f.enter(pos)
		defer f.leave()
	}
	if err := workflow.Sleep(ctx, f.itemTime); err != nil {
		return nil, err
	}
	if f.fail[pos] && !rollback {
		return nil, temporal.NewNonRetryableApplicationError("service svc is in maintenance", string(models.CodeServiceMaintenance), nil)
	}
	return &workflows.ServiceChangeResult{ServiceID: in.ServiceID, Status: "operational"}, nil
}

func (f *fakeBulk) rollback(_ context.Context, in workflows.BulkItemInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rollbacks = append(f.rollbacks, in.Item.Position)
	return nil
}

func (f *fakeBulk) finishOp(_ context.Context, in workflows.BulkFinishInput) (*workflows.BulkResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fin := in.Finish
	f.finish = &fin
	left := automation.ItemSkipped
	if fin.Cancelled {
		left = automation.ItemCancelled
	}
	for i := range f.items {
		if !automation.ItemTerminal(f.items[i].Status) {
			f.items[i].Status = left
		}
	}
	o := automation.CountItems(f.items)
	return &workflows.BulkResult{Status: automation.BulkStatus(o, fin), Total: o.Total, Completed: o.Completed, Failed: o.Failed,
		RolledBack: o.RolledBack, Skipped: o.Skipped, Cancelled: o.Cancelled}, nil
}

func (f *fakeBulk) statuses() map[string][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]int{}
	for i, it := range f.items {
		out[it.Status] = append(out[it.Status], i)
	}
	return out
}

func (f *fakeBulk) env(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.Bulk, workflow.RegisterOptions{Name: workflows.BulkWorkflow})
	env.RegisterWorkflowWithOptions(f.provisioning, workflow.RegisterOptions{Name: workflows.ProvisioningWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, workflows.BulkRef) error { return nil }, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Begin)})
	env.RegisterActivityWithOptions(f.load, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Load)})
	env.RegisterActivityWithOptions(f.record, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Record)})
	env.RegisterActivityWithOptions(f.apply, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Apply)})
	env.RegisterActivityWithOptions(f.rollback, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Rollback)})
	env.RegisterActivityWithOptions(f.finishOp, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.Finish)})
	env.RegisterActivityWithOptions(f.prepareChange, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.PrepareChange)})
	env.RegisterActivityWithOptions(f.prepareRevert, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.PrepareRevert)})
	env.RegisterWorkflowWithOptions(f.serviceChange, workflow.RegisterOptions{Name: workflows.ServiceChangeWorkflow})
	env.RegisterActivityWithOptions(f.provisionBatch, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BulkActivities.ProvisionBatch)})
	return env
}

func bulkInput(kind operations.OperationType, n int, opts automation.BulkOptions, pageSize int) workflows.BulkInput {
	return workflows.BulkInput{
		Bulk:  workflows.BulkRef{RequestID: "bulk_test", OrganizationID: "org_test", Environment: models.EnvTest, Type: kind, CreatedBy: "ak_test"},
		Total: n, Options: opts, PageSize: pageSize,
	}
}

// runBulk runs the bulk workflow to its end, starting each run after a
// continue-as-new in a fresh test environment (the test suite ends a
// top-level run at continue-as-new), and returns the result, the final
// number of runs, the size of the largest continue-as-new input and the final error.
func runBulk(t *testing.T, f *fakeBulk, in workflows.BulkInput, setup func(env *testsuite.TestWorkflowEnvironment)) (*workflows.BulkResult, int, int, error) {
	t.Helper()
	runs, largest := 0, 0
	for {
		runs++
		if runs > 1000 {
			t.Fatal("the bulk workflow never ends")
		}
		f.mu.Lock()
		f.run = runs
		f.mu.Unlock()
		env := f.env(t)
		if setup != nil && runs == 1 {
			setup(env)
		}
		env.ExecuteWorkflow(workflows.BulkWorkflow, in)
		if !env.IsWorkflowCompleted() {
			t.Fatal("the workflow did not complete")
		}
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			if can.WorkflowType.Name != workflows.BulkWorkflow {
				t.Fatalf("continued as %s", can.WorkflowType.Name)
			}
			size := 0
			for _, p := range can.Input.GetPayloads() {
				size += len(p.GetData())
			}
			largest = max(largest, size)
			var next workflows.BulkInput
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
				t.Fatal(err)
			}
			in = next
			continue
		}
		var res workflows.BulkResult
		if err == nil {
			if gerr := env.GetWorkflowResult(&res); gerr != nil {
				t.Fatal(gerr)
			}
			return &res, runs, largest, nil
		}
		return nil, runs, largest, err
	}
}

func TestBulkProvisionPartialFailure(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 25, 3, 17)
	res, runs, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkProvision, 25, automation.BulkOptions{Parallel: true, MaxConcurrency: 5}, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpPartial || res.Completed != 23 || res.Failed != 2 || res.Total != 25 {
		t.Fatalf("result %+v", res)
	}
	if runs != 3 {
		t.Fatalf("%d runs, want 3 (pages of 10)", runs)
	}
	st := f.statuses()
	if !slices.Equal(st[automation.ItemFailed], []int{3, 17}) || len(st[automation.ItemCompleted]) != 23 {
		t.Fatalf("item statuses %v", st)
	}
	e := f.items[17].Error
	if e == nil || e.Code != models.CodeProvisioningFailed || e.Details["step"] != "activate" {
		t.Fatalf("item error %+v", e)
	}
	if f.maxInFlight != 5 {
		t.Fatalf("at most %d items in flight, want the window of 5", f.maxInFlight)
	}
	if len(f.rollbacks) != 0 || f.finish == nil || f.finish.RolledBack || f.finish.Cancelled {
		t.Fatalf("rollbacks %v, finish %+v", f.rollbacks, f.finish)
	}
	if f.records > 25 {
		t.Fatalf("%d writes of the items for 25 items: they should be batched", f.records)
	}
}

func TestBulkSequentialRollbackOnFailure(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 12, 4)
	res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkProvision, 12, automation.BulkOptions{RollbackOnFailure: true}, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpRolledBack || res.RolledBack != 4 || res.Failed != 1 || res.Skipped != 7 {
		t.Fatalf("result %+v", res)
	}
	if !slices.Equal(f.started, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("started %v: sequential items must run in order and stop at the failure", f.started)
	}
	if f.maxInFlight != 1 {
		t.Fatalf("parallel=false ran %d at once", f.maxInFlight)
	}
	rolled := slices.Clone(f.rollbacks)
	slices.Sort(rolled)
	if !slices.Equal(rolled, []int{0, 1, 2, 3}) {
		t.Fatalf("rolled back %v, want every completed item", f.rollbacks)
	}
	st := f.statuses()
	if !slices.Equal(st[automation.ItemRolledBack], []int{0, 1, 2, 3}) || !slices.Equal(st[automation.ItemFailed], []int{4}) || len(st[automation.ItemSkipped]) != 7 {
		t.Fatalf("statuses %v", st)
	}
	if !f.finish.RolledBack {
		t.Fatalf("finish %+v", f.finish)
	}
}

func TestBulkParallelRollbackCompensatesEveryCompletedItem(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 40, 6)
	res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkProvision, 40, automation.BulkOptions{Parallel: true, MaxConcurrency: 4, RollbackOnFailure: true}, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := f.statuses()
	if res.Status != operations.OpRolledBack || !slices.Equal(st[automation.ItemFailed], []int{6}) || len(st[automation.ItemCompleted]) != 0 {
		t.Fatalf("result %+v, statuses %v", res, st)
	}
	// Every item that completed was rolled back; none started once the failure was seen.
	rolled := slices.Clone(f.rollbacks)
	slices.Sort(rolled)
	if !slices.Equal(rolled, st[automation.ItemRolledBack]) || len(rolled) != len(f.started)-1 || len(st[automation.ItemSkipped]) != 40-len(f.started) {
		t.Fatalf("rolled back %v, started %v, statuses %v", f.rollbacks, f.started, st)
	}
	if len(f.started) > 12 {
		t.Fatalf("items kept starting after the failure: %v", f.started)
	}
}

func TestBulkOfAThousandItemsContinuesAsNew(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkProvision, 1000, 500)
	f.itemTime = 10 * time.Second
	res, runs, largest, err := runBulk(t, f, bulkInput(operations.OpTypeBulkProvision, 1000, automation.BulkOptions{Parallel: true, MaxConcurrency: 10}, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpPartial || res.Completed != 999 || res.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	if runs != 10 {
		t.Fatalf("%d runs, want 10 (pages of %d)", runs, workflows.DefaultBulkPageSize)
	}
	for run, n := range f.startsByRun {
		if n > workflows.DefaultBulkPageSize {
			t.Fatalf("run %d started %d items, more than a page", run, n)
		}
	}
	if f.maxInFlight != 10 {
		t.Fatalf("%d items in flight at most, want the window of 10", f.maxInFlight)
	}
	if largest > 2048 {
		t.Fatalf("continue-as-new carried %d bytes: the items must stay in the database", largest)
	}
	if len(f.started) != 1000 {
		t.Fatalf("%d items started", len(f.started))
	}
	for _, l := range f.loads {
		if l.Limit != workflows.DefaultBulkPageSize {
			t.Fatalf("load of %d items", l.Limit)
		}
	}
}

func TestBulkModifyItemsRunAsServiceChanges(t *testing.T) {
	f := newFakeBulk(operations.OpTypeBulkModify, 8, 2)
	res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkModify, 8, automation.BulkOptions{Parallel: true, MaxConcurrency: 3}, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Item 0 changes nothing (it completes without a child); item 2's change fails.
	if res.Status != operations.OpPartial || res.Failed != 1 || res.Completed != 7 || len(f.started) != 7 || f.maxInFlight != 3 {
		t.Fatalf("result %+v, started %v, in flight %d", res, f.started, f.maxInFlight)
	}
	if e := f.items[2].Error; e == nil || e.Code != models.CodeServiceMaintenance {
		t.Fatalf("item error %+v", e)
	}
	t.Run("rolled back by reverse changes", func(t *testing.T) {
		f := newFakeBulk(operations.OpTypeBulkModify, 6, 3)
		res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkModify, 6, automation.BulkOptions{RollbackOnFailure: true}, 0), nil)
		if err != nil || res.Status != operations.OpRolledBack || res.RolledBack != 3 || res.Skipped != 2 {
			t.Fatalf("result %+v, %v", res, err)
		}
		rolled := slices.Clone(f.rollbacks)
		slices.Sort(rolled)
		if !slices.Equal(rolled, []int{0, 1, 2}) {
			t.Fatalf("reverted %v", f.rollbacks)
		}
	})
	t.Run("status items: all fail", func(t *testing.T) {
		f := newFakeBulk(operations.OpTypeBulkStatus, 3, 0, 1, 2)
		res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkStatus, 3, automation.BulkOptions{}, 0), nil)
		if err != nil || res.Status != operations.OpFailed {
			t.Fatalf("result %+v, %v", res, err)
		}
	})
	t.Run("status items: all complete", func(t *testing.T) {
		f := newFakeBulk(operations.OpTypeBulkStatus, 3)
		res, _, _, err := runBulk(t, f, bulkInput(operations.OpTypeBulkStatus, 3, automation.BulkOptions{Parallel: true}, 0), nil)
		if err != nil || res.Status != operations.OpCompleted || res.Completed != 3 {
			t.Fatalf("result %+v, %v", res, err)
		}
	})
}

func TestBulkCancelled(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollback_on_failure=%v", rollback), func(t *testing.T) {
			f := newFakeBulk(operations.OpTypeBulkProvision, 30)
			in := bulkInput(operations.OpTypeBulkProvision, 30, automation.BulkOptions{Parallel: true, MaxConcurrency: 4, RollbackOnFailure: rollback}, 0)
			// Items take a minute each: after 150 s, 8 have completed and 4 are running.
			res, runs, _, err := runBulk(t, f, in, func(env *testsuite.TestWorkflowEnvironment) {
				env.RegisterDelayedCallback(env.CancelWorkflow, 150*time.Second)
			})
			if !temporal.IsCanceledError(err) || res != nil || runs != 1 {
				t.Fatalf("want the cancellation, got %v (%d runs)", err, runs)
			}
			st := f.statuses()
			if len(st[automation.ItemCancelled]) != 22 || f.finish == nil || !f.finish.Cancelled {
				t.Fatalf("statuses %v, finish %+v", st, f.finish)
			}
			if rollback {
				if len(st[automation.ItemRolledBack]) != 8 || len(f.rollbacks) != 8 || !f.finish.RolledBack {
					t.Fatalf("rollback on cancel: statuses %v, rollbacks %v", st, f.rollbacks)
				}
			} else if len(st[automation.ItemCompleted]) != 8 || len(f.rollbacks) != 0 {
				t.Fatalf("statuses %v, rollbacks %v", st, f.rollbacks)
			}
		})
	}
}
