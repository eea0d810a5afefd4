package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// Defaults of the Dispatcher's Options.
const (
	DefaultBatchSize    = 100
	DefaultPollInterval = time.Second
	DefaultStartGrace   = 5 * time.Second
	// DefaultStartConcurrency is how many workflow starts a round has in
	// flight at once.
	DefaultStartConcurrency = 64
	startTimeout            = 10 * time.Second
	onEventTimeout          = 30 * time.Second
)

// Options configure a Dispatcher.
type Options struct {
	// TaskQueue of the delivery workflows (default workflows.TaskQueue).
	TaskQueue string
	// BatchSize is how many events (and unstarted deliveries) one round
	// handles (default DefaultBatchSize).
	BatchSize int
	// PollInterval is the pause between rounds when there is nothing left
	// to do (default DefaultPollInterval).
	PollInterval time.Duration
	// StartGrace is how old a delivery whose workflow was never started
	// must be before a round starts it (default DefaultStartGrace): the
	// API starts the workflows of redeliveries and tests itself, and the
	// round only takes over when that did not happen.
	StartGrace time.Duration
	// StartConcurrency is how many workflow starts a round has in flight
	// at once (default DefaultStartConcurrency).
	StartConcurrency int
	// RetryDelays replaces the retry schedule of the deliveries it starts
	// (tests only; empty means webhooks.RetryDelay).
	RetryDelays []time.Duration
	// OnEvent, when set, is called once per event in the round that
	// dispatches it, after its deliveries are started and before it is
	// marked dispatched (the worker hands events to the event triggers of
	// orchestrations with it: activities.OrchestrationEventHook). An error
	// stops the round and leaves the event undispatched, so the next round
	// calls OnEvent again: it must be idempotent (a crash between OnEvent
	// and the mark calls it again too).
	OnEvent func(ctx context.Context, ev *eventlog.Event) error
	// Announce, when set, is called with each batch of committed events a
	// round reads, before it dispatches them (the worker publishes them
	// as wake-ups of the API's real-time streams). It must not block for
	// long; its failures are the caller's to log.
	Announce func(ctx context.Context, evs []eventlog.Event)
	// TrackerPollInterval and TrackerRetryInterval are passed to the
	// tracker sync workflows it starts (zero: the workflow's defaults).
	TrackerPollInterval, TrackerRetryInterval time.Duration
	Logger                                    *slog.Logger
}

// Dispatcher hands committed outbox events to delivery. Each round it
// takes the events not yet dispatched, oldest first, a batch at a time;
// for each it writes one delivery row per matching subscription and per
// matching support chat integration (unique per event and subscription or
// integration; the rows of the whole batch in one transaction), starts one
// workflow per row with the row's id as workflow id (many at once), signals
// the sync workflow of each active support tracker integration of the
// event's tenant (support events only; signalTrackers), calls
// Options.OnEvent (the event triggers of orchestrations), then marks the
// event dispatched; finally it starts the workflows of older delivery rows
// that have none. Every step is idempotent, so a crash between any two of
// them, or two dispatchers at once, never delivers an event twice to a
// subscription: a repeated insert keeps the existing row and a repeated
// start finds the workflow already started (or, once it ended, refuses the
// duplicate id).
type Dispatcher struct {
	store    *models.Store
	eventlog *eventlog.Store
	support  *support.Store
	tc       client.Client
	opts     Options
	log      *slog.Logger
	nudge    chan struct{}
}

// NewDispatcher returns a Dispatcher over store that starts workflows
// through tc (nil: deliveries are written but not started; a dispatcher
// with a client starts them later).
func NewDispatcher(store *models.Store, tc client.Client, opts Options) *Dispatcher {
	if opts.TaskQueue == "" {
		opts.TaskQueue = workflows.TaskQueue
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.StartGrace <= 0 {
		opts.StartGrace = DefaultStartGrace
	}
	if opts.StartConcurrency <= 0 {
		opts.StartConcurrency = DefaultStartConcurrency
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{store: store, eventlog: eventlog.NewStore(store), support: support.NewStore(store), tc: tc, opts: opts, log: log, nudge: make(chan struct{}, 1)}
}

// Stats count what one round did.
type Stats struct {
	Events     int // events dispatched
	Deliveries int // delivery rows of those events
	Started    int // workflows started (or found already started)
	Resumed    int // older rows whose workflow was started by the sweep
}

// Run dispatches until ctx ends, one round after another, pausing
// PollInterval (or until Nudge) when a round found less than a full batch.
// It returns nil when ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.log.Info("event dispatcher running", "task_queue", d.opts.TaskQueue, "poll_interval", d.opts.PollInterval)
	for {
		st, err := d.DispatchOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			d.log.Warn("event dispatch round failed; retrying", "error", err)
		}
		if err == nil && (st.Events == d.opts.BatchSize || st.Resumed == d.opts.BatchSize) {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.nudge:
		case <-time.After(d.opts.PollInterval):
		}
	}
}

// Nudge makes a running Run start its next round now (for callers in the
// same process; correctness never depends on it).
func (d *Dispatcher) Nudge() {
	select {
	case d.nudge <- struct{}{}:
	default:
	}
}

// DispatchOnce runs one round (see Dispatcher), a batch of events at a
// time: it reads the candidate subscriptions once per tenant of the batch,
// writes the delivery rows of every event of the batch in one transaction,
// starts their workflows concurrently (Options.StartConcurrency at a time,
// eagerly), marks the started rows (a few hundred per statement), then
// walks the events in order
// (tracker signals, Options.OnEvent) and marks those it got through
// dispatched in one statement. It stops at the first event whose
// deliveries cannot be started, or for which Options.OnEvent fails,
// leaving it and the later ones for the next round (whose starts of the
// rows already started find them started).
// Errors: INTERNAL_ERROR (database), DEPENDENCY_UNAVAILABLE (workflow
// engine), or the error of OnEvent.
func (d *Dispatcher) DispatchOnce(ctx context.Context) (Stats, error) {
	var st Stats
	evs, err := d.eventlog.UndispatchedEvents(ctx, d.opts.BatchSize)
	if err != nil {
		return st, err
	}
	if len(evs) > 0 {
		if d.opts.Announce != nil {
			d.opts.Announce(ctx, evs)
		}
		n, err := d.dispatchEvents(ctx, evs, &st)
		st.Events = n
		if err != nil {
			return st, err
		}
	}
	older, err := d.eventlog.UnstartedDeliveries(ctx, time.Now().UTC().Add(-d.opts.StartGrace), d.opts.BatchSize)
	if err != nil {
		return st, err
	}
	errs := d.startMany(ctx, older)
	for i := range older {
		if errs[i] != nil {
			return st, errs[i]
		}
		st.Resumed++
	}
	return st, nil
}

// dispatchEvents hands evs (oldest first) to delivery and returns how many
// of them, from the first, it marked dispatched.
func (d *Dispatcher) dispatchEvents(ctx context.Context, evs []eventlog.Event, st *Stats) (int, error) {
	cands, err := d.eventlog.SubscriptionsForEvents(ctx, evs)
	if err != nil {
		return 0, err
	}
	// The rows of each event: its chat integrations, then its
	// subscriptions, oldest first (a fixed order: see
	// eventlog.Store.InsertEventDeliveries). An event whose chat
	// integrations cannot be read ends the batch before it.
	var rows []*eventlog.WebhookDelivery
	var stop error
	for i := range evs {
		ev := &evs[i]
		chats, err := d.chatTargets(ctx, ev)
		if err != nil {
			evs, stop = evs[:i], err
			break
		}
		for j := range chats {
			rows = append(rows, eventlog.NewEventDelivery(ev, &chats[j], eventlog.DeliveryToChat))
		}
		subs := cands[eventlog.CandidateKey{OrganizationID: ev.OrganizationID, Environment: ev.Environment}]
		for j := range subs {
			if !subs[j].CreatedAt.After(ev.CreatedAt) && Matches(&subs[j], ev) {
				rows = append(rows, eventlog.NewEventDelivery(ev, &subs[j], eventlog.DeliveryToWebhook))
			}
		}
	}
	if len(evs) == 0 {
		return 0, stop
	}
	if err := d.eventlog.InsertEventDeliveries(ctx, rows); err != nil {
		return 0, err
	}
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].ID
	}
	dels, err := d.eventlog.EventDeliveries(ctx, ids)
	if err != nil {
		return 0, err
	}
	st.Deliveries += len(dels)
	var todo []eventlog.WebhookDelivery
	for i := range dels {
		if dels[i].WorkflowStartedAt == nil && !dels[i].Status.Terminal() {
			todo = append(todo, dels[i])
		}
	}
	errs := d.startMany(ctx, todo)
	failed := map[string]error{} // event id -> first failed start
	for i := range todo {
		if errs[i] != nil {
			if _, ok := failed[todo[i].EventID]; !ok {
				failed[todo[i].EventID] = errs[i]
			}
			continue
		}
		st.Started++
	}
	var done []string
	for i := range evs {
		ev := &evs[i]
		if err := failed[ev.ID]; err != nil {
			stop = err
			break
		}
		if err := d.signalTrackers(ctx, ev); err != nil {
			stop = err
			break
		}
		if err := d.onEvent(ctx, ev); err != nil {
			stop = err
			break
		}
		done = append(done, ev.ID)
	}
	if err := d.eventlog.MarkEventsDispatched(ctx, done); err != nil {
		return 0, err
	}
	return len(done), stop
}

// markChunk is how many started deliveries startMany marks at a time.
const markChunk = 200

// startMany starts the workflows of dels, Options.StartConcurrency at a
// time, marks those it started (or found started), markChunk rows per
// statement as their starts complete, and returns the error of each start
// (nil: started and marked).
func (d *Dispatcher) startMany(ctx context.Context, dels []eventlog.WebhookDelivery) []error {
	errs := make([]error, len(dels))
	if len(dels) == 0 {
		return errs
	}
	if d.tc == nil {
		for i := range errs {
			errs[i] = models.Errorf(models.CodeDependencyUnavailable, "no workflow engine is configured")
		}
		return errs
	}
	for lo := 0; lo < len(dels); lo += markChunk {
		hi := min(lo+markChunk, len(dels))
		sem := make(chan struct{}, d.opts.StartConcurrency)
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func(i int) {
				defer func() { <-sem; wg.Done() }()
				errs[i] = d.startWorkflow(ctx, &dels[i])
			}(i)
		}
		wg.Wait()
		var started []string
		for i := lo; i < hi; i++ {
			if errs[i] == nil {
				started = append(started, dels[i].ID)
			}
		}
		if err := d.eventlog.MarkDeliveriesStarted(ctx, started); err != nil {
			for i := lo; i < hi; i++ {
				if errs[i] == nil {
					errs[i] = err
				}
			}
		}
	}
	return errs
}

// onEvent calls Options.OnEvent (if any) on ev, within onEventTimeout.
func (d *Dispatcher) onEvent(ctx context.Context, ev *eventlog.Event) error {
	if d.opts.OnEvent == nil {
		return nil
	}
	hctx, cancel := context.WithTimeout(ctx, onEventTimeout)
	defer cancel()
	return d.opts.OnEvent(hctx, ev)
}

// Start starts the workflow of delivery del (workflow id = del.ID, a
// duplicate id refused, "already started" counted as success) and records
// that it exists. Errors: DEPENDENCY_UNAVAILABLE (no or unreachable
// workflow engine), INTERNAL_ERROR.
func (d *Dispatcher) Start(ctx context.Context, del *eventlog.WebhookDelivery) error {
	if err := d.startWorkflow(ctx, del); err != nil {
		return err
	}
	return d.eventlog.MarkDeliveryStarted(ctx, del.ID)
}

// startWorkflow starts the workflow of delivery del (Start without the
// mark).
func (d *Dispatcher) startWorkflow(ctx context.Context, del *eventlog.WebhookDelivery) error {
	if d.tc == nil {
		return models.Errorf(models.CodeDependencyUnavailable, "no workflow engine is configured")
	}
	opts := workflows.StartOptions(workflows.TaskQueues{Interactive: d.opts.TaskQueue}, workflows.Start{ID: del.ID, Priority: workflows.Interactive,
		OrganizationID: del.OrganizationID, Environment: del.Environment, OperationType: workflows.OperationTypeWebhookDelivery, ResourceID: del.ResourceID})
	// Eager start: when a worker of the task queue runs on the same client
	// (the worker process runs the dispatcher), the engine hands it the
	// workflow's first task in the answer to the start, with no trip
	// through the task queue; otherwise (or when the worker has no free
	// slot) the start is an ordinary one.
	opts.EnableEagerStart = true
	in := workflows.WebhookDeliveryInput{
		DeliveryID: del.ID, OrganizationID: del.OrganizationID, Environment: del.Environment, RetryDelays: d.opts.RetryDelays,
	}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if _, err := d.tc.ExecuteWorkflow(sctx, opts, workflows.WebhookDeliveryWorkflow, in); err != nil {
		var already *serviceerror.WorkflowExecutionAlreadyStarted
		if !errors.As(err, &already) {
			e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable")
			e.Cause = err
			return e
		}
	}
	return nil
}

// StartAll starts the workflows of dels, logging (not returning) failures:
// a delivery whose start failed is started by a later dispatch round.
func (d *Dispatcher) StartAll(ctx context.Context, dels []eventlog.WebhookDelivery) {
	if d.tc == nil {
		return
	}
	for i := range dels {
		if err := d.Start(ctx, &dels[i]); err != nil {
			d.log.WarnContext(ctx, "starting a delivery failed; the dispatcher will retry", "delivery_id", dels[i].ID, "error", err)
		}
	}
}

// Redeliver sends event eventID again, as a new delivery with its own
// attempt log: to subscription subscriptionID, or ("") to every
// subscription the dispatcher matched with it that is still there and
// active. Both the event and the subscriptions must be visible to p.
// Errors: NOT_FOUND (the event), VALIDATION_ERROR on subscription_id (no
// such subscription visible to p, or it does not receive this event's type
// or tenant),
// INVALID_STATE_TRANSITION (the subscription is paused, or no active
// subscription received the event).
func (d *Dispatcher) Redeliver(ctx context.Context, p *models.Principal, eventID, subscriptionID string) ([]eventlog.WebhookDelivery, error) {
	ev, err := d.eventlog.GetEvent(ctx, p, eventID, nil)
	if err != nil {
		return nil, err
	}
	var subs []eventlog.WebhookSubscription
	if subscriptionID != "" {
		sub, err := d.eventlog.GetWebhook(ctx, p, subscriptionID)
		if models.ErrorCode(err) == models.CodeNotFound {
			// An id in the body that names nothing p may see (made up, or
			// another tenant's) is a bad field, not a missing resource.
			return nil, models.Invalid(models.FieldIssue{Field: "subscription_id", Issue: "no webhook subscription " + subscriptionID + " that this credential may see"})
		}
		if err != nil {
			return nil, err
		}
		if !sub.Active {
			return nil, models.Errorf(models.CodeInvalidStateTransition, "the subscription is paused; resume it first")
		}
		if ev.Type == eventlog.EventWebhookTest {
			if ev.ResourceID != sub.ID {
				return nil, models.Invalid(models.FieldIssue{Field: "subscription_id", Issue: "a test event is sent only to the subscription it tested"})
			}
		} else if !eventlog.SubscriptionMayReceive(sub, ev) || !Matches(sub, ev) {
			return nil, models.Invalid(models.FieldIssue{Field: "subscription_id", Issue: "the subscription does not receive " + ev.Type + " events of this organization"})
		}
		subs = append(subs, *sub)
	} else {
		ids, err := d.eventlog.MatchedSubscriptionIDs(ctx, p, ev.ID)
		if err != nil {
			return nil, err
		}
		if ev.Type == eventlog.EventWebhookTest {
			ids = append(ids, ev.ResourceID)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			sub, err := d.eventlog.GetWebhook(ctx, p, id)
			if models.ErrorCode(err) == models.CodeNotFound {
				continue
			}
			if err != nil {
				return nil, err
			}
			if sub.Active {
				subs = append(subs, *sub)
			}
		}
		if len(subs) == 0 {
			return nil, models.Errorf(models.CodeInvalidStateTransition, "no active subscription of yours received this event; name one with subscription_id")
		}
	}
	dels, err := d.eventlog.CreateRedeliveries(ctx, p, ev, subs)
	if err != nil {
		return nil, err
	}
	d.StartAll(ctx, dels)
	return dels, nil
}

// SendTest sends a signed webhook.test event to subscription webhookID
// (visible to p) alone, paused or not. Errors: NOT_FOUND, INTERNAL_ERROR.
func (d *Dispatcher) SendTest(ctx context.Context, p *models.Principal, webhookID string) (*eventlog.WebhookDelivery, *eventlog.Event, error) {
	sub, err := d.eventlog.GetWebhook(ctx, p, webhookID)
	if err != nil {
		return nil, nil, err
	}
	data := map[string]any{
		"webhook_id": sub.ID,
		"message":    "This is a test delivery from the platform. Verify its signature with your subscription's secret.",
	}
	del, ev, err := d.eventlog.CreateTestDelivery(ctx, sub, data)
	if err != nil {
		return nil, nil, err
	}
	d.StartAll(ctx, []eventlog.WebhookDelivery{*del})
	return del, ev, nil
}
