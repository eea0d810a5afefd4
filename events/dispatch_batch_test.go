package events_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/workflows"
)

// fakeEngine stands for the workflow engine's starts: a workflow id is
// started once; starting it again answers "already started", as the
// engine does for the delivery workflows (duplicate ids refused). fail,
// when set, makes a start fail before it reaches the engine.
type fakeEngine struct {
	mu      sync.Mutex
	started map[string]int // workflow id -> starts that went through (at most 1)
	calls   int
	fail    func(id string) bool
}

func newFakeEngine(t *testing.T) (*fakeEngine, *mocks.Client) {
	e := &fakeEngine{started: map[string]int{}}
	mc := mocks.NewClient(t)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.WebhookDeliveryWorkflow, mock.Anything).Return(
		func(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.calls++
			if e.fail != nil && e.fail(o.ID) {
				return nil, errors.New("temporal unreachable")
			}
			if e.started[o.ID] > 0 {
				return nil, serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "", "")
			}
			e.started[o.ID]++
			return nil, nil
		}).Maybe()
	return e, mc
}

// serviceEvents records n service events, each about a resource of its
// own, one second apart (the oldest first).
func (f *dispatchFixture) serviceEvents(t *testing.T, n int, resource func(i int) string) []*eventlog.Event {
	t.Helper()
	base := time.Now().UTC().Add(time.Hour).Truncate(time.Microsecond)
	out := make([]*eventlog.Event, n)
	for i := range out {
		ev := eventlog.NewEvent(eventlog.EventServiceProvisioned, resource(i), nil)
		if err := f.store.Tx(context.Background(), f.p.OwnScope(), func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration(i) * time.Second)
		if err := f.store.In(context.Background(), models.SystemScope()).Model(&eventlog.Event{}).Where("id = ?", ev.ID).Update("created_at", at).Error; err != nil {
			t.Fatal(err)
		}
		ev.CreatedAt = at
		out[i] = ev
	}
	return out
}

// moreSubscriptions adds n subscriptions to service events.
func (f *dispatchFixture) moreSubscriptions(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := eventlog.NewStore(f.store).CreateWebhook(context.Background(), f.p, eventlog.WebhookSpec{Area: "all", URL: "https://hooks.example.com/y",
			Events: []string{"service.provisioned"}, Active: true, Secret: secret}); err != nil {
			t.Fatal(err)
		}
	}
}

// allDeliveries returns every delivery row.
func (f *dispatchFixture) allDeliveries(t *testing.T) []eventlog.WebhookDelivery {
	t.Helper()
	var out []eventlog.WebhookDelivery
	if err := f.store.In(context.Background(), models.SystemScope()).Order("created_at, id").Find(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTwoDispatchersRacing runs two dispatchers over the same outbox at
// once, in small batches, until it is empty: every (event, subscription)
// has one delivery row, whose workflow was started once.
func TestTwoDispatchersRacing(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	f.moreSubscriptions(t, 2) // f.sub and these two take service events
	const nEvents = 40
	f.serviceEvents(t, nEvents, func(i int) string { return fmt.Sprintf("svc_%d", i) })
	engine, mc := newFakeEngine(t)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w := range 2 {
		d := events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", BatchSize: 7, StartConcurrency: 4, StartGrace: time.Hour})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := d.DispatchOnce(ctx); err != nil {
					errs[w] = err
					return
				}
				if und, err := eventlog.NewStore(f.store).UndispatchedEvents(ctx, 1); err != nil || len(und) == 0 {
					errs[w] = err
					return
				}
			}
			errs[w] = errors.New("the outbox did not empty")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rows := f.allDeliveries(t)
	if len(rows) != nEvents*3 {
		t.Fatalf("%d delivery rows, want %d", len(rows), nEvents*3)
	}
	pairs := map[[2]string]bool{}
	for _, r := range rows {
		k := [2]string{r.EventID, r.SubscriptionID}
		if pairs[k] {
			t.Fatalf("two rows for %v", k)
		}
		pairs[k] = true
		if r.WorkflowStartedAt == nil {
			t.Fatalf("row %s not marked started", r.ID)
		}
		if engine.started[r.ID] != 1 {
			t.Fatalf("row %s: workflow started %d times", r.ID, engine.started[r.ID])
		}
	}
	if len(engine.started) != len(rows) {
		t.Fatalf("%d workflows started for %d rows", len(engine.started), len(rows))
	}
}

// TestDispatcherRetriesAFailedStart fails the start of one delivery of the
// third of five events: the round dispatches the first two events (and
// starts the other deliveries), the next one starts the failed delivery
// once and dispatches the rest.
func TestDispatcherRetriesAFailedStart(t *testing.T) {
	f := newDispatchFixture(t)
	ctx := context.Background()
	f.moreSubscriptions(t, 1)
	evs := f.serviceEvents(t, 5, func(i int) string { return "svc_same" })
	engine, mc := newFakeEngine(t)
	el := eventlog.NewStore(f.store)

	// The rows exist before the round (a previous dispatcher wrote them and
	// died): the failing one is known.
	d := events.NewDispatcher(f.store, nil, events.Options{TaskQueue: "q", StartGrace: time.Hour})
	if _, err := d.DispatchOnce(ctx); models.ErrorCode(err) != models.CodeDependencyUnavailable {
		t.Fatalf("without an engine: %v", err)
	}
	rows, err := el.EventDeliveries(ctx, []string{evs[2].ID})
	if err != nil || len(rows) != 2 {
		t.Fatalf("%+v %v", rows, err)
	}
	bad := rows[1].ID
	engine.fail = func(id string) bool { return id == bad }

	d = events.NewDispatcher(f.store, mc, events.Options{TaskQueue: "q", StartGrace: time.Hour})
	st, err := d.DispatchOnce(ctx)
	if models.ErrorCode(err) != models.CodeDependencyUnavailable || st.Events != 2 || st.Started != 9 {
		t.Fatalf("round 1: %+v %v", st, err)
	}
	und, _ := el.UndispatchedEvents(ctx, 10)
	if len(und) != 3 || und[0].ID != evs[2].ID {
		t.Fatalf("undispatched after round 1: %+v", und)
	}
	for _, r := range f.allDeliveries(t) {
		if (r.WorkflowStartedAt == nil) != (r.ID == bad) {
			t.Fatalf("row %s started at %v", r.ID, r.WorkflowStartedAt)
		}
	}

	engine.fail = nil
	st, err = d.DispatchOnce(ctx)
	if err != nil || st.Events != 3 || st.Started != 1 || st.Deliveries != 6 {
		t.Fatalf("round 2: %+v %v", st, err)
	}
	if und, _ := el.UndispatchedEvents(ctx, 10); len(und) != 0 {
		t.Fatalf("undispatched after round 2: %+v", und)
	}
	rows = f.allDeliveries(t)
	if len(rows) != 10 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.WorkflowStartedAt == nil || engine.started[r.ID] != 1 {
			t.Fatalf("row %s: started at %v, %d starts", r.ID, r.WorkflowStartedAt, engine.started[r.ID])
		}
	}
	if engine.calls != 11 {
		t.Fatalf("%d start calls, want 11 (10 rows, one of them twice)", engine.calls)
	}
}
