package activities_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/payments"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// fakeUsage answers MonthlyUsage from a map ("2006-01" → requests) and
// records which months were read.
type fakeUsage struct {
	mu     sync.Mutex
	counts map[string]int64
	read   []string
	err    error
}

func (u *fakeUsage) MonthlyUsage(_ context.Context, _ string, month time.Time) (int64, int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.read = append(u.read, billing.MonthKey(month))
	if u.err != nil {
		return 0, 0, u.err
	}
	return u.counts[billing.MonthKey(month)], 0, nil
}

type billingFixture struct {
	store *models.Store
	env   *testsuite.TestActivityEnvironment
	p     *models.Principal
	acct  *models.BillingAccount
	svc   string
}

func newBillingFixture(t *testing.T, plan models.Plan, usage activities.APIUsage) *billingFixture {
	t.Helper()
	ctx := context.Background()
	store, _ := testenv.SeededStore(t)
	provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := &models.Principal{ID: "ak_admin", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(store).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "Billed", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(store).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct.ID, Name: "Business Fiber", Kind: "internet", ServiceType: "fiber_business",
		CatalogServiceID: "internet-fiber-business", Status: services.ServiceOperational, Bandwidth: "100mbps", BandwidthMbps: 100, SLA: "standard",
		BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701",
		OperationID: "prov_fixture", StatusChangedAt: store.Now()}
	if err := store.In(ctx, p.OwnScope()).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	bill := activities.NewBilling(store, nil, usage, nil)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	// Registered like the worker does: the struct under its group's prefix.
	env.RegisterActivityWithOptions(bill, activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.BillingActivities]()})
	return &billingFixture{store: store, env: env, p: p, acct: acct, svc: svc.ID}
}

func (f *billingFixture) subscribe(t *testing.T) workflows.SubscriptionInput {
	t.Helper()
	subs, _, err := billing.NewStore(f.store).CreateSubscriptions(context.Background(), f.p, billing.RecurringInput{AccountID: f.acct.ID, Services: []billing.RecurringItem{{ServiceID: f.svc}}})
	if err != nil {
		t.Fatal(err)
	}
	return workflows.SubscriptionInput{SubscriptionID: subs[0].ID, OrganizationID: f.p.OrganizationID, Environment: models.EnvLive}
}

func TestBillingActivitiesCloseAndCollect(t *testing.T) {
	usage := &fakeUsage{counts: map[string]int64{}}
	f := newBillingFixture(t, models.PlanDeveloper, usage)
	in := f.subscribe(t)
	v, err := f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.BeginSubscription), in)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.SubscriptionState
	if err := v.Get(&st); err != nil || st.Status != billing.SubscriptionActive || st.Cycle != "monthly" || !st.PeriodEnd.After(st.PeriodStart) {
		t.Fatalf("state %+v %v", st, err)
	}
	// The month before the close had 75,000 requests: 25,000 beyond the developer plan's 50,000 at 0.001 USD.
	closeAt := st.PeriodEnd
	usage.counts[billing.MonthKey(closeAt.AddDate(0, -1, 0))] = 75_000
	cin := workflows.ClosePeriodInput{SubscriptionID: in.SubscriptionID, OrganizationID: in.OrganizationID, Environment: in.Environment, PeriodStart: st.PeriodStart, CloseAt: closeAt}
	var res workflows.ClosePeriodResult
	for range 2 { // retried: one invoice
		v, err = f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.ClosePeriod), cin)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Get(&res); err != nil {
			t.Fatal(err)
		}
	}
	if res.InvoiceID == "" || res.Total != 8900+2500 || res.AutoPay || res.Ended || res.InvoiceStatus != billing.InvoicePending {
		t.Fatalf("close %+v", res)
	}
	if len(usage.read) != 4 { // two months, read by each of the two attempts
		t.Fatalf("months read %v", usage.read)
	}
	inv := workflows.InvoiceActionInput{InvoiceID: res.InvoiceID, OrganizationID: in.OrganizationID, Environment: in.Environment, Attempt: 1}
	v, err = f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.AutoPay), inv)
	if err != nil {
		t.Fatal(err)
	}
	var out workflows.AutoPayOutcome
	if err := v.Get(&out); err != nil || out.Settled || out.FailureCode != billing.FailureNoPaymentMethod {
		t.Fatalf("auto-pay without a method: %+v %v", out, err)
	}
	proc := payments.NewProcessor(f.store, nil, nil)
	if _, _, err := proc.AddPaymentMethod(context.Background(), f.p, f.acct.ID, billing.PaymentMethodInput{CardToken: payments.TokenVisa,
		BillingAddress: &billing.BillingAddress{Street: "1 Main St", City: "Austin", Zip: "78701", Country: "US"}}, true); err != nil {
		t.Fatal(err)
	}
	on := true
	if _, err := billing.NewStore(f.store).UpdatePreferences(context.Background(), f.p, f.acct.ID, billing.PreferencesInput{AutoPay: &on}); err != nil {
		t.Fatal(err)
	}
	inv.Attempt = 2
	v, err = f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.AutoPay), inv)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Get(&out); err != nil || !out.Settled || !out.Paid || out.PaymentID != payments.AutoPayID(res.InvoiceID, 2) {
		t.Fatalf("auto-pay: %+v %v", out, err)
	}
	if _, err := f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.MarkOverdue), inv); err != nil {
		t.Fatal(err)
	}
	got, err := billing.NewStore(f.store).InvoiceIn(context.Background(), f.p.OwnScope(), res.InvoiceID)
	if err != nil || got.Status != billing.InvoicePaid {
		t.Fatalf("a paid invoice is not marked overdue: %+v %v", got, err)
	}
}

func TestBillingActivitiesFailures(t *testing.T) {
	usage := &fakeUsage{err: errors.New("redis down")}
	f := newBillingFixture(t, models.PlanDeveloper, usage)
	missing := workflows.SubscriptionInput{SubscriptionID: "sub_missing", OrganizationID: f.p.OrganizationID, Environment: models.EnvLive}
	_, err := f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.BeginSubscription), missing)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeNotFound) || !appErr.NonRetryable() {
		t.Fatalf("a missing subscription is a non-retryable NOT_FOUND: %v", err)
	}
	// Counters that cannot be read do not stop the close: the overage waits for a later one.
	in := f.subscribe(t)
	v, err := f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.BeginSubscription), in)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.SubscriptionState
	_ = v.Get(&st)
	v, err = f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.ClosePeriod), workflows.ClosePeriodInput{SubscriptionID: in.SubscriptionID, OrganizationID: in.OrganizationID,
		Environment: in.Environment, PeriodStart: st.PeriodStart, CloseAt: st.PeriodEnd})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.ClosePeriodResult
	if err := v.Get(&res); err != nil || res.Total != 8900 {
		t.Fatalf("close %+v %v", res, err)
	}
	_, err = f.env.ExecuteActivity(workflows.ActivityName(workflows.BillingActivities.MarkOverdue), workflows.InvoiceActionInput{InvoiceID: "inv_missing", OrganizationID: in.OrganizationID, Environment: in.Environment})
	if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeNotFound) {
		t.Fatalf("missing invoice: %v", err)
	}
}
