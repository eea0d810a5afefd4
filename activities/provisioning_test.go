package activities_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

type fixture struct {
	store *models.Store
	env   *testsuite.TestActivityEnvironment
	prov  *activities.Provisioning
	org   string
}

func newFixture(t *testing.T, net func(*models.Store) simulator.Southbound) *fixture {
	t.Helper()
	ctx := context.Background()
	store, _ := testenv.SeededStore(t)
	provider, err := identity.NewStore(store).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := &models.Principal{ID: "ak_admin", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	org, err := identity.NewStore(store).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "Tenant", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	var southbound simulator.Southbound = simulator.New(store, simulator.Options{})
	if net != nil {
		southbound = net(store)
	}
	f := &fixture{store: store, prov: activities.NewProvisioning(store, southbound, nil), org: org.ID}
	var suite testsuite.WorkflowTestSuite
	f.env = suite.NewTestActivityEnvironment()
	f.env.RegisterActivity(f.prov)
	return f
}

// order accepts an order for the tenant in env (live or test) and stores its
// pending operation, as the API does.
func (f *fixture) order(t *testing.T, env models.Environment, loc catalog.LocationInput, serviceType, bandwidth string) workflows.ProvisioningInput {
	t.Helper()
	ctx := context.Background()
	p := &models.Principal{ID: "ak_x", OrganizationID: f.org, Environment: env, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(f.store).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	o, scope, err := services.NewStore(f.store).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: acct.ID, ServiceType: serviceType, Bandwidth: bandwidth, Location: loc, SLA: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	in := workflows.ProvisioningInput{RequestID: models.NewID(models.PrefixProvisioning), OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: models.NewID(models.PrefixService), Order: *o}
	if err := operations.NewStore(f.store).CreateOperation(ctx, scope, operations.NewOperation(in.RequestID, operations.OpTypeProvisioning, in.ServiceID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	return in
}

func (f *fixture) run(t *testing.T, fn any, in any) error {
	t.Helper()
	_, err := f.env.ExecuteActivity(fn, in)
	return err
}

func (f *fixture) must(t *testing.T, fn any, in any) {
	t.Helper()
	if err := f.run(t, fn, in); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) allocations(t *testing.T, in workflows.ProvisioningInput) (active, released int) {
	t.Helper()
	rows, err := catalog.NewStore(f.store).Allocations(context.Background(), in.Scope(), in.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rows {
		if a.ReleasedAt == nil {
			active++
		} else {
			released++
		}
	}
	return active, released
}

func (f *fixture) capacity(t *testing.T, in workflows.ProvisioningInput) int {
	t.Helper()
	c, err := catalog.NewStore(f.store).Capacity(context.Background(), in.Environment, in.Order.LocationID, in.Order.ServiceType)
	if err != nil {
		t.Fatal(err)
	}
	return c.AllocatedMbps
}

var austin = catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}

func TestStepsAreIdempotent(t *testing.T) {
	f := newFixture(t, nil)
	in := f.order(t, models.EnvLive, austin, "fiber_dedicated", "1gbps")
	ctx := context.Background()
	for attempt := range 2 { // every activity run twice, as a retry would
		f.must(t, f.prov.Begin, in)
		f.must(t, f.prov.Validate, in)
		f.must(t, f.prov.ReserveCapacity, in)
		f.must(t, f.prov.Configure, in)
		f.must(t, f.prov.Activate, in)
		if active, _ := f.allocations(t, in); active != 3 || f.capacity(t, in) != 1000 {
			t.Fatalf("attempt %d: %d allocations, %d Mbps allocated", attempt, active, f.capacity(t, in))
		}
	}
	for range 2 {
		v, err := f.env.ExecuteActivity(f.prov.RecordService, in)
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.ProvisioningResult
		if err := v.Get(&res); err != nil || res.ServiceID != in.ServiceID || res.Status != "operational" {
			t.Fatalf("%+v %v", res, err)
		}
	}
	p := &models.Principal{OrganizationID: in.OrganizationID, Environment: in.Environment, Permissions: []string{"*"}}
	svc, err := services.NewStore(f.store).GetService(ctx, p, in.ServiceID)
	if err != nil || svc.Status != services.ServiceOperational || svc.IPBlock == "" || svc.VLANID == 0 || svc.CircuitID == "" || svc.OperationID != in.RequestID {
		t.Fatalf("service: %+v %v", svc, err)
	}
	op, _ := operations.NewStore(f.store).GetOperation(ctx, p, in.RequestID)
	if op.Status != operations.OpCompleted || op.RunID == "" || op.Progress().Completed != 5 {
		t.Fatalf("operation: %+v", op)
	}
	// Every status move is reported once, however often the steps ran:
	// pending → provisioning, provisioning → operational, then service.provisioned.
	evs, _ := eventlog.NewStore(f.store).EventsFor(ctx, in.Scope(), in.ServiceID)
	type move struct{ typ, from, to string }
	var got []move
	for _, ev := range evs {
		from, _ := ev.Data["from"].(string)
		to, _ := ev.Data["to"].(string)
		got = append(got, move{ev.Type, from, to})
		if ev.Type == "service.status_changed" && ev.Data["request_id"] != in.RequestID {
			t.Fatalf("status change without its request id: %+v", ev.Data)
		}
	}
	want := []move{{"service.status_changed", "pending", "provisioning"}, {"service.status_changed", "provisioning", "operational"}, {"service.provisioned", "", ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("events: %+v", got)
	}
}

func TestFailureAndCompensation(t *testing.T) {
	f := newFixture(t, nil)
	in := f.order(t, models.EnvTest, catalog.LocationInput{Address: "30 Failure Ave", City: "Testville", State: "CA", Zip: "94001"}, "fiber_dedicated", "1gbps")
	f.must(t, f.prov.Begin, in)
	f.must(t, f.prov.Validate, in)
	f.must(t, f.prov.ReserveCapacity, in)
	err := f.run(t, f.prov.Configure, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) || !appErr.NonRetryable() {
		t.Fatalf("want a non-retryable PROVISIONING_FAILED, got %v", err)
	}
	if active, _ := f.allocations(t, in); active != 3 {
		t.Fatalf("configure allocated before failing: %d active", active)
	}
	for range 2 {
		f.must(t, f.prov.ReleaseNetwork, in)
		f.must(t, f.prov.ReleaseCapacity, in)
	}
	if active, released := f.allocations(t, in); active != 0 || released != 3 || f.capacity(t, in) != 0 {
		t.Fatalf("after compensation: %d active, %d released, %d Mbps", active, released, f.capacity(t, in))
	}
	fin := workflows.FinishInput{Input: in, Status: operations.OpFailed, FailedStep: operations.StepConfigure, Compensated: []string{operations.StepReserveCapacity},
		Error: &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "configure failed"}}
	f.must(t, f.prov.Finish, fin)
	f.must(t, f.prov.Finish, fin)
	ctx := context.Background()
	p := &models.Principal{OrganizationID: in.OrganizationID, Environment: in.Environment, Permissions: []string{"*"}}
	svc, _ := services.NewStore(f.store).GetService(ctx, p, in.ServiceID)
	op, _ := operations.NewStore(f.store).GetOperation(ctx, p, in.RequestID)
	if svc.Status != services.ServiceFailed || svc.IPBlock != "" || op.Status != operations.OpFailed || op.Error.Code != models.CodeProvisioningFailed {
		t.Fatalf("service %s (%s), operation %s", svc.Status, svc.IPBlock, op.Status)
	}
	// The failure is a status move too, reported once however often Finish ran.
	evs, _ := eventlog.NewStore(f.store).EventsFor(ctx, in.Scope(), in.ServiceID)
	if len(evs) != 2 || evs[1].Type != "service.status_changed" || evs[1].Data["from"] != "provisioning" || evs[1].Data["to"] != "failed" ||
		evs[1].Data["reason"] != "provisioning_failed" || evs[1].Data["request_id"] != in.RequestID {
		t.Fatalf("events: %+v", evs)
	}
}

func TestValidateSeesCapacityGone(t *testing.T) {
	f := newFixture(t, nil)
	boise := catalog.LocationInput{Address: "800 W Main St", City: "Boise", State: "ID", Zip: "83702"}
	first := f.order(t, models.EnvLive, boise, "fiber_business", "500mbps")
	second := f.order(t, models.EnvLive, boise, "fiber_business", "500mbps") // accepted while the capacity was free
	f.must(t, f.prov.Validate, first)
	f.must(t, f.prov.ReserveCapacity, first)
	err := f.run(t, f.prov.Validate, second)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeInsufficientBandwidth) || !appErr.NonRetryable() {
		t.Fatalf("want a non-retryable INSUFFICIENT_BANDWIDTH, got %v", err)
	}
}

// brokenNetwork fails every call with an internal error.
type brokenNetwork struct{ simulator.Southbound }

func (brokenNetwork) ReserveCapacity(context.Context, simulator.Order) (simulator.Reservation, error) {
	return simulator.Reservation{}, models.Internal(errors.New("connection reset by the network controller"))
}

func TestInternalFailuresAreRetryable(t *testing.T) {
	f := newFixture(t, func(s *models.Store) simulator.Southbound {
		return brokenNetwork{simulator.New(s, simulator.Options{})}
	})
	in := f.order(t, models.EnvLive, austin, "fiber_dedicated", "1gbps")
	err := f.run(t, f.prov.ReserveCapacity, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeInternal) || appErr.NonRetryable() {
		t.Fatalf("want a retryable INTERNAL_ERROR, got %v", err)
	}
	if appErr.Message() != "an internal error occurred" {
		t.Fatalf("internal causes must not travel: %q", appErr.Message())
	}
}
