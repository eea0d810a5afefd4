package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// fakeInvoice is an invoice of the ledger.
type fakeInvoice struct {
	id          string
	periodStart time.Time
	closeAt     time.Time
	attempts    []time.Time
	paid        bool
	overdueAt   *time.Time
}

// ledger stands in for the billing activities: one subscription whose
// periods, invoices and payments live in memory. plan scripts the outcome
// of each auto-pay attempt per invoice number (1-based; default: success).
type ledger struct {
	mu          sync.Mutex
	now         func() time.Time
	cycle       string
	anchor      int
	status      billing.SubscriptionStatus
	periodStart time.Time
	periodEnd   time.Time
	cancelAt    *time.Time
	autoPay     bool
	invoices    []*fakeInvoice
	plan        map[int][]bool
	calls       []string
}

func newLedger(start time.Time, cycle string, autoPay bool) *ledger {
	return &ledger{cycle: cycle, anchor: start.Day(), status: billing.SubscriptionPending, periodStart: start,
		periodEnd: billing.PeriodEnd(start, cycle, start.Day()), autoPay: autoPay, plan: map[int][]bool{}, now: time.Now}
}

func (l *ledger) register(r sdkworker.Registry) {
	r.RegisterActivityWithOptions(l.begin, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.BeginSubscription)})
	r.RegisterActivityWithOptions(l.close, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.ClosePeriod)})
	r.RegisterActivityWithOptions(l.autoPayAttempt, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.AutoPay)})
	r.RegisterActivityWithOptions(l.markOverdue, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.MarkOverdue)})
}

func (l *ledger) begin(_ context.Context, in workflows.SubscriptionInput) (*workflows.SubscriptionState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "begin")
	if l.status == billing.SubscriptionPending {
		l.status = billing.SubscriptionActive
	}
	return &workflows.SubscriptionState{Status: l.status, Cycle: l.cycle, PeriodStart: l.periodStart, PeriodEnd: l.periodEnd, CancelAt: l.cancelAt}, nil
}

func (l *ledger) close(_ context.Context, in workflows.ClosePeriodInput) (*workflows.ClosePeriodResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "close")
	if !in.PeriodStart.Equal(l.periodStart) || l.status == billing.SubscriptionCancelled {
		return nil, fmt.Errorf("period %s closed twice", in.PeriodStart)
	}
	inv := &fakeInvoice{id: fmt.Sprintf("inv_%d", len(l.invoices)+1), periodStart: in.PeriodStart, closeAt: in.CloseAt}
	l.invoices = append(l.invoices, inv)
	res := &workflows.ClosePeriodResult{InvoiceID: inv.id, InvoiceStatus: billing.InvoicePending, Total: 29900, AutoPay: l.autoPay, Cycle: l.cycle,
		DueAt: l.now().Add(billing.PaymentTerm(l.cycle, l.autoPay))}
	if l.cancelAt != nil && !l.cancelAt.After(in.CloseAt) {
		l.status, res.Ended, res.EndedReason = billing.SubscriptionCancelled, true, billing.EndedCancelled
		return res, nil
	}
	l.periodStart, l.periodEnd = l.periodEnd, billing.PeriodEnd(l.periodEnd, l.cycle, l.anchor)
	return res, nil
}

func (l *ledger) invoice(id string) (*fakeInvoice, int) {
	for i, inv := range l.invoices {
		if inv.id == id {
			return inv, i + 1
		}
	}
	return nil, 0
}

func (l *ledger) autoPayAttempt(_ context.Context, in workflows.InvoiceActionInput) (*workflows.AutoPayOutcome, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "auto_pay")
	inv, n := l.invoice(in.InvoiceID)
	if inv.paid {
		return &workflows.AutoPayOutcome{Settled: true, Paid: true}, nil
	}
	inv.attempts = append(inv.attempts, l.now())
	ok := true
	if plan := l.plan[n]; len(plan) >= in.Attempt {
		ok = plan[in.Attempt-1]
	}
	if !ok {
		return &workflows.AutoPayOutcome{FailureCode: billing.FailureCardDeclined, PaymentID: fmt.Sprintf("pay_%d_%d", n, in.Attempt)}, nil
	}
	inv.paid = true
	return &workflows.AutoPayOutcome{Settled: true, Paid: true, PaymentID: fmt.Sprintf("pay_%d_%d", n, in.Attempt)}, nil
}

func (l *ledger) markOverdue(_ context.Context, in workflows.InvoiceActionInput) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "mark_overdue")
	inv, _ := l.invoice(in.InvoiceID)
	if !inv.paid && inv.overdueAt == nil {
		t := l.now()
		inv.overdueAt = &t
	}
	return nil
}

func (l *ledger) cancel(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cancelAt = &at
}

// runChain runs the subscription workflow in the test suite from start,
// following every continue-as-new with a fresh environment that starts
// where the previous run stopped, until the workflow completes; during the
// run with index i, during(i, env) may schedule callbacks. It returns the
// inputs of the runs.
func runChain(t *testing.T, l *ledger, start time.Time, maxRuns int, during func(i int, env *testsuite.TestWorkflowEnvironment)) []workflows.SubscriptionInput {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	in := workflows.SubscriptionInput{SubscriptionID: "sub_test", OrganizationID: "org_test", Environment: models.EnvLive}
	now := start
	var inputs []workflows.SubscriptionInput
	for i := 0; i < maxRuns; i++ {
		inputs = append(inputs, in)
		env := suite.NewTestWorkflowEnvironment()
		env.SetStartTime(now)
		env.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflow})
		l.register(env)
		l.mu.Lock()
		l.now = env.Now
		l.mu.Unlock()
		if during != nil {
			during(i, env)
		}
		env.ExecuteWorkflow(workflows.SubscriptionWorkflow, in)
		if !env.IsWorkflowCompleted() {
			t.Fatalf("run %d did not complete", i)
		}
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if !errors.As(err, &can) {
			if err != nil {
				t.Fatalf("run %d: %v", i, err)
			}
			return inputs
		}
		if can.WorkflowType.Name != workflows.SubscriptionWorkflow {
			t.Fatalf("continued as %s", can.WorkflowType.Name)
		}
		var next workflows.SubscriptionInput
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
			t.Fatal(err)
		}
		in, now = next, env.Now()
	}
	t.Fatalf("still running after %d runs", maxRuns)
	return nil
}

// TestSubscriptionThirteenMonthlyCycles bills a monthly subscription with
// auto-pay through 13 periods, one run per period: the third invoice's
// payment fails and succeeds on the first dunning retry a day later; the
// seventh's fails on every retry (1, 3 and 7 days later) and the invoice
// becomes overdue; the subscription is cancelled at the end of the
// thirteenth period.
func TestSubscriptionThirteenMonthlyCycles(t *testing.T) {
	start := time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)
	l := newLedger(start, billing.CycleMonthly, true)
	l.plan[3] = []bool{false, true}
	l.plan[7] = []bool{false, false, false, false}
	inputs := runChain(t, l, start, 20, func(i int, env *testsuite.TestWorkflowEnvironment) {
		if i == 12 {
			// During the 13th period the customer cancels at its end: the API
			// records it, then signals.
			env.RegisterDelayedCallback(func() {
				l.mu.Lock()
				end := l.periodEnd
				l.mu.Unlock()
				l.cancel(end)
				env.SignalWorkflow(workflows.SignalCancelSubscription, workflows.CancelSignal{At: end})
			}, 5*24*time.Hour)
		}
	})
	if len(inputs) != 13 {
		t.Fatalf("%d runs, want 13 (one per period)", len(inputs))
	}
	for i, in := range inputs {
		if in.Runs != i {
			t.Fatalf("run %d carries runs=%d", i, in.Runs)
		}
	}
	if len(l.invoices) != 13 {
		t.Fatalf("%d invoices", len(l.invoices))
	}
	wantEnds := []string{"2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30", "2026-07-31", "2026-08-31",
		"2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31", "2027-01-31", "2027-02-28"}
	for i, inv := range l.invoices {
		if got := inv.closeAt.Format("2006-01-02"); got != wantEnds[i] || inv.closeAt.Hour() != 10 {
			t.Fatalf("invoice %d closed at %s, want %s 10:00", i+1, inv.closeAt, wantEnds[i])
		}
		switch i + 1 {
		case 3:
			if !inv.paid || len(inv.attempts) != 2 || inv.attempts[1].Sub(inv.attempts[0]) != 24*time.Hour || inv.overdueAt != nil {
				t.Fatalf("invoice 3: %+v", inv)
			}
		case 7:
			if inv.paid || len(inv.attempts) != 4 || inv.overdueAt == nil {
				t.Fatalf("invoice 7: %+v", inv)
			}
			for k, d := range []time.Duration{24 * time.Hour, 72 * time.Hour, 168 * time.Hour} {
				if got := inv.attempts[k+1].Sub(inv.attempts[0]); got != d {
					t.Fatalf("retry %d after %v, want %v", k+1, got, d)
				}
			}
			if !inv.overdueAt.Equal(inv.attempts[3]) {
				t.Fatalf("overdue at %s, last retry at %s", inv.overdueAt, inv.attempts[3])
			}
		default:
			if !inv.paid || len(inv.attempts) != 1 || !inv.attempts[0].Equal(inv.closeAt) || inv.overdueAt != nil {
				t.Fatalf("invoice %d: %+v", i+1, inv)
			}
		}
	}
	// The dunning of invoice 7 was carried over the continue-as-new of its period.
	if len(inputs[7].Collections) != 1 || inputs[7].Collections[0].InvoiceID != "inv_7" || inputs[7].Collections[0].Attempts != 1 {
		t.Fatalf("run 8 input %+v", inputs[7])
	}
	if n := countOf(l.calls, "mark_overdue"); n != 1 {
		t.Fatalf("mark_overdue called %d times", n)
	}
	if l.status != billing.SubscriptionCancelled {
		t.Fatalf("status %s", l.status)
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// TestSubscriptionCancelledNowClosesAtOnce: a cancellation signalled in the
// middle of a period closes it at the cancellation time (the period is
// billed up to then), and the workflow ends once the last invoice is
// collected (here without auto-pay: at its due date, marked overdue).
func TestSubscriptionCancelledNowClosesAtOnce(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	l := newLedger(start, billing.CycleMonthly, false)
	cancelAt := start.Add(10 * 24 * time.Hour)
	inputs := runChain(t, l, start, 3, func(i int, env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			l.cancel(cancelAt)
			env.SignalWorkflow(workflows.SignalCancelSubscription, workflows.CancelSignal{At: cancelAt})
		}, 10*24*time.Hour)
	})
	if len(inputs) != 1 || len(l.invoices) != 1 || !l.invoices[0].closeAt.Equal(cancelAt) {
		t.Fatalf("runs %d, invoices %+v", len(inputs), l.invoices)
	}
	inv := l.invoices[0]
	if inv.overdueAt == nil || !inv.overdueAt.Equal(cancelAt.Add(30*24*time.Hour)) || len(inv.attempts) != 0 {
		t.Fatalf("without auto-pay the invoice is watched until its due date: %+v", inv)
	}
}

// TestSubscriptionCancellationRecordedWithoutASignal: the row alone (no
// signal delivered) still ends the subscription when the period closes.
func TestSubscriptionCancellationRecordedWithoutASignal(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	l := newLedger(start, billing.CycleMonthly, true)
	l.cancel(start.Add(48 * time.Hour))
	inputs := runChain(t, l, start, 3, nil)
	if len(inputs) != 1 || len(l.invoices) != 1 || !l.invoices[0].closeAt.Equal(start.Add(48*time.Hour)) || !l.invoices[0].paid {
		t.Fatalf("runs %d invoices %+v", len(inputs), l.invoices)
	}
}

// TestSubscriptionProrationWithTheRealActivities runs the workflow in the
// test suite against the billing activities on a real database: the
// quantity goes from 1 to 2 ten days into a 31-day period and the
// subscription is cancelled 21 days in; the invoice prorates both.
func TestSubscriptionProrationWithTheRealActivities(t *testing.T) {
	ctx := context.Background()
	store, _ := testenv.SeededStore(t)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	store.Now = env.Now
	p, acct, svcID := billingFixture(t, store)
	scope := p.OwnScope()
	subs, _, err := billing.NewStore(store).CreateSubscriptions(ctx, p, billing.RecurringInput{AccountID: acct.ID, Services: []billing.RecurringItem{{ServiceID: svcID}}})
	if err != nil {
		t.Fatal(err)
	}
	sub := subs[0]
	env.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflow})
	bill := activities.NewBilling(store, nil, nil, nil)
	env.RegisterActivityWithOptions(bill.BeginSubscription, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.BeginSubscription)})
	env.RegisterActivityWithOptions(bill.ClosePeriod, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.ClosePeriod)})
	env.RegisterActivityWithOptions(bill.AutoPay, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.AutoPay)})
	env.RegisterActivityWithOptions(bill.MarkOverdue, activity.RegisterOptions{Name: workflows.ActivityName(workflows.BillingActivities.MarkOverdue)})
	env.RegisterDelayedCallback(func() {
		if _, err := billing.NewStore(store).UpdateSubscription(ctx, p, sub.ID, billing.SubscriptionPatch{Quantity: ptrTo(2)}); err != nil {
			t.Error(err)
		}
	}, 10*24*time.Hour)
	env.RegisterDelayedCallback(func() {
		cur, err := billing.NewStore(store).CancelSubscription(ctx, p, sub.ID, false)
		if err != nil {
			t.Error(err)
			return
		}
		env.SignalWorkflow(workflows.SignalCancelSubscription, workflows.CancelSignal{At: *cur.CancelAt})
	}, 21*24*time.Hour)
	env.ExecuteWorkflow(workflows.SubscriptionWorkflow, workflows.SubscriptionInput{SubscriptionID: sub.ID, OrganizationID: p.OrganizationID, Environment: models.EnvLive})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	invs, total, err := billing.NewStore(store).ListInvoices(ctx, p, billing.InvoiceFilter{})
	if err != nil || total != 1 {
		t.Fatalf("invoices %d %v", total, err)
	}
	inv := invs[0]
	// 299.00 × 1 × 10/31 + 299.00 × 2 × 11/31
	if len(inv.Lines) != 2 || inv.Lines[0].Amount != 9645 || inv.Lines[1].Amount != 21219 || inv.Total != 30864 || inv.Status != billing.InvoiceOverdue {
		t.Fatalf("invoice %+v lines %+v", inv, inv.Lines)
	}
	ended, _ := billing.NewStore(store).SubscriptionIn(ctx, scope, sub.ID)
	if ended.Status != billing.SubscriptionCancelled || ended.EndedReason != billing.EndedCancelled {
		t.Fatalf("subscription %+v", ended)
	}
	evs, _ := eventlog.NewStore(store).EventsFor(ctx, scope, sub.ID)
	if len(evs) != 2 || evs[0].Type != "subscription.created" || evs[1].Type != "subscription.cancelled" {
		t.Fatalf("events %+v", evs)
	}
	if evs, _ := eventlog.NewStore(store).EventsFor(ctx, scope, inv.ID); len(evs) != 2 || evs[1].Type != "invoice.overdue" {
		t.Fatalf("invoice events %+v", evs)
	}
}

func ptrTo[T any](v T) *T { return &v }

// billingFixture returns the demo tenant (live) with a new USD account and
// an operational 1 Gbps dedicated internet service row.
func billingFixture(t *testing.T, store *models.Store) (*models.Principal, *models.BillingAccount, string) {
	t.Helper()
	ctx := context.Background()
	demo, err := seed.NewStore(store).DemoOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(store).CreateAccount(ctx, p, billing.AccountInput{Name: "Billing test", Currency: "USD", BillingEmail: "billing@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct.ID, Name: "Dedicated Fiber", Kind: "internet", ServiceType: "fiber_dedicated",
		CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "premium",
		BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701",
		OperationID: "prov_fixture", StatusChangedAt: store.Now()}
	if err := store.In(ctx, p.OwnScope()).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	return p, acct, svc.ID
}

// TestSubscriptionHistoryStaysBounded runs a subscription with one-second
// sandbox periods on a real Temporal dev server (the test suite does not
// model history size) and checks that continue-as-new keeps every run's
// history small and the same size, however many periods have passed.
func TestSubscriptionHistoryStaysBounded(t *testing.T) {
	addr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	queue := "billing-" + models.RandomString(6)
	w := sdkworker.New(c, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(workflows.Subscription, workflow.RegisterOptions{Name: workflows.SubscriptionWorkflow})
	l := newLedger(time.Now().UTC().Truncate(time.Second), "sandbox_1s", true)
	l.plan[2] = []bool{false, true} // a retry carried over a continue-as-new
	l.register(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	id := "sub_" + models.RandomString(12)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, workflows.SubscriptionWorkflow,
		workflows.SubscriptionInput{SubscriptionID: id, OrganizationID: "org_test", Environment: models.EnvTest})
	if err != nil {
		t.Fatal(err)
	}
	const periods = 8
	deadline := time.Now().Add(90 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.invoices)
		l.mu.Unlock()
		if n >= periods {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d periods closed", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	at := time.Now().UTC()
	l.cancel(at)
	if err := c.SignalWorkflow(ctx, id, "", workflows.SignalCancelSubscription, workflows.CancelSignal{At: at}); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.GetWorkflow(waitCtx, id, "").Get(waitCtx, nil); err != nil {
		t.Fatalf("the subscription workflow ended with %v", err)
	}
	if run.GetRunID() == "" {
		t.Fatal("no run id")
	}
	// Walk the chain of runs back from the last one.
	var sizes []int
	runID := ""
	for {
		iter := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		events, prev := 0, ""
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			if events == 0 {
				prev = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
			}
			events++
		}
		sizes = append(sizes, events)
		if prev == "" {
			break
		}
		runID = prev
	}
	slices.Reverse(sizes)
	if len(sizes) < periods {
		t.Fatalf("%d runs for %d periods: %v", len(sizes), periods, sizes)
	}
	for i, n := range sizes {
		if n > 60 {
			t.Fatalf("run %d has %d history events (sizes %v): continue-as-new does not bound the history", i, n, sizes)
		}
	}
	if first, last := sizes[0], sizes[len(sizes)-2]; last > first+20 {
		t.Fatalf("history grows with the number of periods: %v", sizes)
	}
	t.Logf("history events per run: %v", sizes)
}
