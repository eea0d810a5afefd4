package activities_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

var (
	sandboxSite = catalog.LocationInput{Address: "1 Sandbox Way", City: "Testville", State: "CA", Zip: "94000"}
	failingSite = catalog.LocationInput{Address: "30 Failure Ave", City: "Testville", State: "CA", Zip: "94001"} // fails at configure
)

// batchOf returns a ProvisionBatch input of the provisionings ins, at
// positions 0, 1...
func batchOf(window int, ins ...workflows.ProvisioningInput) workflows.BulkBatchInput {
	b := workflows.BulkBatchInput{Bulk: workflows.BulkRef{RequestID: "bulk_test", OrganizationID: ins[0].OrganizationID, Environment: ins[0].Environment,
		Type: operations.OpTypeBulkProvision}, Run: 1, Chunk: 1, Window: window}
	for i, in := range ins {
		o := in.Order
		b.Items = append(b.Items, workflows.BulkWorkItem{Position: i, ServiceID: in.ServiceID, ChildID: in.RequestID, Order: &o})
	}
	return b
}

func provisionBatch(t *testing.T, f *fixture, bulk *activities.Bulk, in workflows.BulkBatchInput) workflows.BulkBatchResult {
	t.Helper()
	v, err := f.env.ExecuteActivity(bulk.ProvisionBatch, in)
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.BulkBatchResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestProvisionBatch: each item of a batch runs as a Provisioning workflow
// would: the completed ones end operational with every step of their
// operation completed; the failed one is compensated and its operation
// ends failed as the workflow's saga records it; running the batch again
// runs nothing again; a retried attempt skips the items its heartbeat
// details say have ended.
func TestProvisionBatch(t *testing.T) {
	f := newFixture(t, nil)
	net := simulator.New(f.store, simulator.Options{})
	bulk := activities.NewBulk(f.store, net, nil)
	f.env.RegisterActivity(bulk)
	ok1 := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	bad := f.order(t, models.EnvTest, failingSite, "fiber_dedicated", "100mbps")
	ok2 := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	in := batchOf(2, ok1, bad, ok2)

	res := provisionBatch(t, f, bulk, in)
	if res.Completed != 2 || res.Failed != 1 || len(res.Items) != 3 {
		t.Fatalf("result %+v", res)
	}
	failed := res.Items[1]
	if failed.Status != workflows.BatchItemFailed || failed.Error == nil || failed.Error.Code != models.CodeProvisioningFailed ||
		failed.Error.Message == "" || failed.Error.Details["step"] != operations.StepConfigure || failed.Error.Details["compensated"] != true ||
		failed.Error.Details["reason_code"] != string(models.CodeProvisioningFailed) {
		t.Fatalf("failed item %+v", failed)
	}
	ctx := context.Background()
	p := &models.Principal{OrganizationID: ok1.OrganizationID, Environment: ok1.Environment, Permissions: []string{"*"}}
	for _, in := range []workflows.ProvisioningInput{ok1, ok2} {
		op, err := operations.NewStore(f.store).GetOperation(ctx, p, in.RequestID)
		if err != nil || op.Status != operations.OpCompleted || op.Progress().Completed != 5 || op.RunID != "" {
			t.Fatalf("operation %+v %v", op, err)
		}
		for _, st := range op.Steps {
			if st.StartedAt == nil || st.FinishedAt == nil || st.FinishedAt.Before(*st.StartedAt) {
				t.Fatalf("step %+v", st)
			}
		}
		svc, err := services.NewStore(f.store).GetService(ctx, p, in.ServiceID)
		if err != nil || svc.Status != services.ServiceOperational {
			t.Fatalf("service %+v %v", svc, err)
		}
	}
	op, _ := operations.NewStore(f.store).GetOperation(ctx, p, bad.RequestID)
	steps := map[string]operations.StepStatus{}
	for _, st := range op.Steps {
		steps[st.Name] = st.Status
	}
	if op.Status != operations.OpFailed || op.Error == nil || op.Error.Message != failed.Error.Message || steps[operations.StepValidate] != operations.StepCompleted ||
		steps[operations.StepReserveCapacity] != operations.StepCompensated || steps[operations.StepConfigure] != operations.StepFailed ||
		steps[operations.StepActivate] != operations.StepSkipped || op.Result["compensations"] == nil {
		t.Fatalf("failed operation %s %+v %v %v", op.Status, op.Error, steps, op.Result)
	}
	if active, released := f.allocations(t, bad); active != 0 || released == 0 {
		t.Fatalf("failed item: %d allocations active, %d released", active, released)
	}
	svc, _ := services.NewStore(f.store).GetService(ctx, p, bad.ServiceID)
	if svc.Status != services.ServiceFailed {
		t.Fatalf("failed item's service is %s", svc.Status)
	}

	// Again (a retry without heartbeat details): the ended operations give the outcomes.
	again := provisionBatch(t, f, bulk, in)
	if again.Completed != 2 || again.Failed != 1 || again.Items[1].Error == nil || again.Items[1].Error.Message != failed.Error.Message {
		t.Fatalf("again %+v", again)
	}

	// A retried attempt resumes from its heartbeat details: an item they
	// report ended is not run (this one has no order: run, it would fail).
	resume := in
	resume.Items = append(resume.Items, workflows.BulkWorkItem{Position: 3, ServiceID: "svc_none", ChildID: "prov_none"})
	f.env.SetHeartbeatDetails([]workflows.BulkItemOutcome{{Position: 3, ServiceID: "svc_none", ChildID: "prov_none", Status: workflows.BatchItemCompleted}})
	resumed := provisionBatch(t, f, bulk, resume)
	if resumed.Completed != 3 || resumed.Failed != 1 || resumed.Items[3].Status != workflows.BatchItemCompleted {
		t.Fatalf("resumed %+v", resumed)
	}
}

// TestProvisionBatchStopsOnFailure: with StopOnFailure, one item at a time,
// the items after a failed one do not start.
func TestProvisionBatchStopsOnFailure(t *testing.T) {
	f := newFixture(t, nil)
	bulk := activities.NewBulk(f.store, simulator.New(f.store, simulator.Options{}), nil)
	f.env.RegisterActivity(bulk)
	ok := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	bad := f.order(t, models.EnvTest, failingSite, "fiber_dedicated", "100mbps")
	never := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	in := batchOf(1, ok, bad, never)
	in.StopOnFailure = true
	res := provisionBatch(t, f, bulk, in)
	got := []string{res.Items[0].Status, res.Items[1].Status, res.Items[2].Status}
	if got[0] != workflows.BatchItemCompleted || got[1] != workflows.BatchItemFailed || got[2] != workflows.BatchItemNotStarted || res.NotStarted != 1 {
		t.Fatalf("outcomes %v", got)
	}
	p := &models.Principal{OrganizationID: never.OrganizationID, Environment: never.Environment, Permissions: []string{"*"}}
	op, _ := operations.NewStore(f.store).GetOperation(context.Background(), p, never.RequestID)
	if op.Status != operations.OpPending {
		t.Fatalf("the item not started is %s", op.Status)
	}
}

// TestProvisionBatchInterrupted: a batch whose context ends without a
// cancellation from its workflow (here its attempt's time runs out while
// the network is slow) undoes nothing: it fails, its item's operation stays
// in progress, and the retry provisions the item.
func TestProvisionBatchInterrupted(t *testing.T) {
	f := newFixture(t, nil)
	slow := activities.NewBulk(f.store, simulator.New(f.store, simulator.Options{StepDelay: 3 * time.Second}), nil)
	f.env.RegisterActivity(slow)
	item := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	in := batchOf(1, item)
	// The worker stops a second into the batch.
	root, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	f.env.SetWorkerOptions(sdkworker.Options{BackgroundActivityContext: root})
	time.AfterFunc(time.Second, func() { stop(errors.New("worker stopping")) })
	if _, err := f.env.ExecuteActivity(slow.ProvisionBatch, in); err == nil {
		t.Fatal("an interrupted batch answered")
	}
	p := &models.Principal{OrganizationID: item.OrganizationID, Environment: item.Environment, Permissions: []string{"*"}}
	op, err := operations.NewStore(f.store).GetOperation(context.Background(), p, item.RequestID)
	if err != nil || op.Status.Terminal() {
		t.Fatalf("the interrupted item's operation is %s (%v): it must stay in progress", op.Status, err)
	}

	retry := newFixture(t, nil)
	retry.store = f.store
	fast := activities.NewBulk(f.store, simulator.New(f.store, simulator.Options{}), nil)
	retry.env.RegisterActivity(fast)
	res := provisionBatch(t, retry, fast, in)
	if res.Completed != 1 || res.Items[0].Status != workflows.BatchItemCompleted {
		t.Fatalf("retry %+v", res)
	}
}

// TestProvisionBatchAbandon: after a batch failed for good, abandoning it
// reports the item that completed as completed, and ends the item left in
// progress (its capacity reserved) and the one never begun: compensated,
// their services failed, their operations failed with the batch's error as
// the reason, at the step they were running.
func TestProvisionBatchAbandon(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	fast := activities.NewBulk(f.store, simulator.New(f.store, simulator.Options{}), nil)
	f.env.RegisterActivity(fast)
	done := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	if res := provisionBatch(t, f, fast, batchOf(1, done)); res.Completed != 1 {
		t.Fatalf("first item %+v", res)
	}
	// The second was left in progress, its capacity and network taken, by
	// a batch that failed.
	half := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	f.must(t, f.prov.Begin, half)
	f.must(t, f.prov.Validate, half)
	f.must(t, f.prov.ReserveCapacity, half)
	f.must(t, f.prov.Configure, half)
	if active, _ := f.allocations(t, half); active == 0 {
		t.Fatal("the interrupted item holds no capacity")
	}
	never := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")

	in := batchOf(1, done, half, never)
	in.Abandon = &operations.OperationError{Code: models.CodeInternal, Message: "the database is unavailable"}
	res := provisionBatch(t, f, fast, in)
	if res.Completed != 1 || res.Failed != 2 || res.Items[0].Status != workflows.BatchItemCompleted {
		t.Fatalf("abandoned %+v", res)
	}
	p := &models.Principal{OrganizationID: done.OrganizationID, Environment: done.Environment, Permissions: []string{"*"}}
	for _, in := range []workflows.ProvisioningInput{half, never} {
		op, err := operations.NewStore(f.store).GetOperation(ctx, p, in.RequestID)
		if err != nil || op.Status != operations.OpFailed || op.Error == nil || op.Error.Details["reason_code"] != string(models.CodeInternal) ||
			!strings.Contains(op.Error.Message, "the database is unavailable") || op.Error.Details["compensated"] != true {
			t.Fatalf("abandoned operation %+v %v", op, err)
		}
		if active, _ := f.allocations(t, in); active != 0 {
			t.Fatalf("%s: %d allocations still active", in.RequestID, active)
		}
		// A service exists once its validation passed; it ends failed.
		svc, err := services.NewStore(f.store).GetService(ctx, p, in.ServiceID)
		if in.RequestID == never.RequestID && models.ErrorCode(err) == models.CodeNotFound {
			continue
		}
		if err != nil || svc.Status != services.ServiceFailed {
			t.Fatalf("%s: abandoned item's service %s %v", in.RequestID, svc.Status, err)
		}
	}
	op, _ := operations.NewStore(f.store).GetOperation(ctx, p, never.RequestID)
	if op.Error.Details["step"] != operations.StepValidate {
		t.Fatalf("never-begun item failed at %v", op.Error.Details["step"])
	}
	// Abandoning again changes nothing: every item has ended.
	if again := provisionBatch(t, f, fast, in); again.Completed != 1 || again.Failed != 2 {
		t.Fatalf("again %+v", again)
	}
}

// gatedNet holds the activation of one service until its gate opens (or
// the call's context ends).
type gatedNet struct {
	simulator.Southbound
	serviceID string
	gate      chan struct{}
	once      sync.Once
}

func (n *gatedNet) Activate(ctx context.Context, o simulator.Order) (simulator.Circuit, error) {
	if o.ServiceID == n.serviceID {
		select {
		case <-n.gate:
		case <-ctx.Done():
			return simulator.Circuit{}, ctx.Err()
		}
	}
	return n.Southbound.Activate(ctx, o)
}

func (n *gatedNet) open() { n.once.Do(func() { close(n.gate) }) }

// bulkOperationOf stores the bulk operation of batch in: in progress, its
// items in_progress (as the workflow writes them when their chunk starts).
func bulkOperationOf(t *testing.T, f *fixture, in workflows.BulkBatchInput) {
	t.Helper()
	op := operations.NewOperation(in.Bulk.RequestID, operations.OpTypeBulkProvision, "", "ak_x", nil, nil)
	op.Status = operations.OpInProgress
	for _, it := range in.Items {
		op.Items = append(op.Items, operations.OperationItem{ID: it.ServiceID, Status: automation.ItemInProgress})
	}
	if err := operations.NewStore(f.store).CreateOperation(context.Background(), in.Bulk.Scope(), op); err != nil {
		t.Fatal(err)
	}
}

// TestProvisionBatchRecordsItemsAsTheyEnd: a batch writes its items'
// outcomes to the bulk operation while it runs (every second, or every ten
// items that end), not only when it answers: with the last of four items
// held at its activation, the bulk operation shows the three that ended
// (completed, failed with the error the workflow records, completed) while
// the fourth is still in progress. Its last outcome is written before it
// answers, each as the workflow records it from the result. Running the
// batch again writes nothing, and never moves back an item that has ended
// since (rolled back).
func TestProvisionBatchRecordsItemsAsTheyEnd(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	ok1 := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	bad := f.order(t, models.EnvTest, failingSite, "fiber_dedicated", "100mbps")
	ok2 := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	held := f.order(t, models.EnvTest, sandboxSite, "fiber_dedicated", "100mbps")
	net := &gatedNet{Southbound: simulator.New(f.store, simulator.Options{}), serviceID: held.ServiceID, gate: make(chan struct{})}
	t.Cleanup(net.open)
	bulk := activities.NewBulk(f.store, net, nil)
	f.env.RegisterActivity(bulk)
	in := batchOf(1, ok1, bad, ok2, held) // sequential, as parallel: false runs it
	in.Bulk.RequestID = models.NewID(models.PrefixBulk)
	bulkOperationOf(t, f, in)
	p := &models.Principal{OrganizationID: ok1.OrganizationID, Environment: ok1.Environment, Permissions: []string{"*"}}
	read := func() *operations.Operation {
		t.Helper()
		op, err := operations.NewStore(f.store).GetOperation(ctx, p, in.Bulk.RequestID)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	statuses := func(op *operations.Operation) []string {
		var s []string
		for _, it := range op.Items {
			s = append(s, it.Status)
		}
		return s
	}

	type answer struct {
		res workflows.BulkBatchResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		var a answer
		v, err := f.env.ExecuteActivity(bulk.ProvisionBatch, in)
		if a.err = err; err == nil {
			a.err = v.Get(&a.res)
		}
		answered <- a
	}()

	want := []string{automation.ItemCompleted, automation.ItemFailed, automation.ItemCompleted, automation.ItemInProgress}
	var op *operations.Operation
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		op = read()
		if slices.Equal(statuses(op), want) {
			break
		}
		if time.Now().After(deadline) {
			net.open()
			<-answered
			t.Fatalf("while the batch runs its bulk operation's items are %v (progress %+v): the items that ended must show, want %v",
				statuses(op), op.Progress(), want)
		}
	}
	select {
	case a := <-answered:
		t.Fatalf("the batch answered while its last item was held: %+v %v", a.res, a.err)
	default:
	}
	if pr := op.Progress(); pr.Completed != 2 || pr.Failed != 1 || pr.Total != 4 {
		t.Fatalf("progress while the batch runs %+v", pr)
	}
	if e := op.Items[1].Error; e == nil || e.Code != models.CodeProvisioningFailed || e.Details["step"] != operations.StepConfigure {
		t.Fatalf("failed item's error while the batch runs %+v", e)
	}

	net.open()
	a := <-answered
	if a.err != nil {
		t.Fatal(a.err)
	}
	if a.res.Completed != 3 || a.res.Failed != 1 {
		t.Fatalf("result %+v", a.res)
	}
	// Every outcome is on the operation as the workflow records it from
	// the result: its write at the end of the page changes nothing.
	op = read()
	for _, o := range a.res.Items {
		u, _ := o.ItemUpdate()
		got := op.Items[o.Position]
		if got.Status != u.Status || (u.Error == nil) != (got.Error == nil) || (u.Error != nil && (got.Error.Code != u.Error.Code || got.Error.Message != u.Error.Message)) {
			t.Fatalf("item %d is %s %+v; the workflow records %s %+v", o.Position, got.Status, got.Error, u.Status, u.Error)
		}
	}

	// The first item is rolled back since (rollback_on_failure); a retried
	// attempt that resumes from its heartbeat details, or runs again, reports
	// the same outcomes and writes nothing: the rolled back item stays so.
	if _, err := automation.NewStore(f.store).RecordBulkItems(ctx, in.Bulk.Scope(), in.Bulk.RequestID,
		[]automation.ItemUpdate{{Position: 0, Status: automation.ItemRolledBack}}); err != nil {
		t.Fatal(err)
	}
	before := read()
	f.env.SetHeartbeatDetails(a.res.Items[:2])
	again := provisionBatch(t, f, bulk, in)
	if again.Completed != 3 || again.Failed != 1 {
		t.Fatalf("again %+v", again)
	}
	after := read()
	if !after.UpdatedAt.Equal(before.UpdatedAt) || !slices.Equal(statuses(after), statuses(before)) || after.Items[0].Status != automation.ItemRolledBack {
		t.Fatalf("running the batch again changed the operation: %v (updated %v) -> %v (updated %v)", statuses(before), before.UpdatedAt, statuses(after), after.UpdatedAt)
	}
}
