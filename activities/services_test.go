package activities_test

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// provisioned runs every provisioning step of an internet order at Austin.
func (f *fixture) provisioned(t *testing.T) workflows.ProvisioningInput {
	t.Helper()
	in := f.order(t, models.EnvLive, austin, "fiber_dedicated", "1gbps")
	f.must(t, f.prov.Begin, in)
	f.must(t, f.prov.Validate, in)
	f.must(t, f.prov.ReserveCapacity, in)
	f.must(t, f.prov.Configure, in)
	f.must(t, f.prov.Activate, in)
	if _, err := f.env.ExecuteActivity(f.prov.RecordService, in); err != nil {
		t.Fatal(err)
	}
	return in
}

func servicesEnv(f *fixture) (*activities.Services, *testsuite.TestActivityEnvironment) {
	svcs := activities.NewServices(f.store, simulator.New(f.store, simulator.Options{}), nil, nil)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(svcs)
	return svcs, env
}

func TestChangeActivitiesAreIdempotent(t *testing.T) {
	f := newFixture(t, nil)
	prov := f.provisioned(t)
	svcs, env := servicesEnv(f)
	ctx := context.Background()
	p := &models.Principal{OrganizationID: prov.OrganizationID, Environment: prov.Environment, Permissions: []string{"*"}}
	bw := "10gbps"
	svc, u, scope, err := services.NewStore(f.store).PrepareServiceUpdate(ctx, p, prov.ServiceID, services.ServiceUpdateInput{Bandwidth: &bw})
	if err != nil {
		t.Fatal(err)
	}
	op := operations.NewOperation(models.NewID(services.PrefixModification), u.Type, svc.ID, "ak_x", services.UpdateSteps(u), nil)
	if err := services.NewStore(f.store).StartServiceOperation(ctx, scope, svc.ID, op); err != nil {
		t.Fatal(err)
	}
	in := workflows.ServiceChangeInput{RequestID: op.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID, Update: *u}
	for _, fn := range []any{svcs.ChangeBegin, svcs.ChangeValidate, svcs.ChangeReserveCapacity, svcs.ChangeApply} {
		for range 2 { // each run again, as a retry would
			if _, err := env.ExecuteActivity(fn, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, _ := catalog.NewStore(f.store).Capacity(ctx, models.EnvLive, "loc_austin_congress", "fiber_dedicated")
	got, _ := services.NewStore(f.store).GetService(ctx, p, svc.ID)
	done, _ := operations.NewStore(f.store).GetOperation(ctx, p, op.ID)
	evs, _ := eventlog.NewStore(f.store).EventsFor(ctx, scope, svc.ID)
	if c.AllocatedMbps != 10000 || got.Bandwidth != "10gbps" || got.PendingOperationID != "" || done.Status != operations.OpCompleted || len(evs) != 4 || evs[3].Type != "service.modified" {
		t.Fatalf("allocated %d, service %+v, operation %s, %d events", c.AllocatedMbps, got, done.Status, len(evs))
	}
}

func TestDecommissionActivitiesAreIdempotent(t *testing.T) {
	f := newFixture(t, nil)
	prov := f.provisioned(t)
	svcs, env := servicesEnv(f)
	ctx := context.Background()
	p := &models.Principal{OrganizationID: prov.OrganizationID, Environment: prov.Environment, Permissions: []string{"*"}}
	svc, plan, scope, err := services.NewStore(f.store).PrepareDecommission(ctx, p, prov.ServiceID, services.DecommissionInput{Reason: "moving"})
	if err != nil {
		t.Fatal(err)
	}
	op := operations.NewOperation(models.NewID(models.PrefixDecommission), services.OpTypeDecommission, svc.ID, "ak_x", services.DecommissionSteps(plan, false), nil)
	if err := services.NewStore(f.store).StartServiceOperation(ctx, scope, svc.ID, op); err != nil {
		t.Fatal(err)
	}
	in := workflows.DecommissionInput{RequestID: op.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID, Plan: *plan}
	for _, fn := range []any{svcs.DecomBegin, svcs.DecomValidate, svcs.DecomDeactivate, svcs.DecomReleaseInventory, svcs.DecomStopBilling, svcs.DecomRecord} {
		for range 2 { // each run again, as a retry would
			if _, err := env.ExecuteActivity(fn, in); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, _ := services.NewStore(f.store).GetService(ctx, p, svc.ID)
	done, _ := operations.NewStore(f.store).GetOperation(ctx, p, op.ID)
	allocs, _ := catalog.NewStore(f.store).ServiceAllocations(ctx, scope, svc.ID)
	c, _ := catalog.NewStore(f.store).Capacity(ctx, models.EnvLive, "loc_austin_congress", "fiber_dedicated")
	evs, _ := eventlog.NewStore(f.store).EventsFor(ctx, scope, svc.ID)
	if got.Status != services.ServiceDecommissioned || got.BillingEndedAt == nil || got.IPBlock != "" || done.Status != operations.OpCompleted ||
		len(allocs) != 0 || c.AllocatedMbps != 0 || len(evs) != 6 || evs[5].Type != "service.decommissioned" {
		t.Fatalf("service %+v, operation %s, %d allocations, %d Mbps, events %d", got, done.Status, len(allocs), c.AllocatedMbps, len(evs))
	}
}

// TestMigrationNeedsALiveDestination: the migration steps check the
// destination again. Before, a decommission migrated and "verified" its
// data onto a destination decommissioned meanwhile, and completed.
func TestMigrationNeedsALiveDestination(t *testing.T) {
	f := newFixture(t, nil)
	src, dest := f.provisioned(t), f.provisioned(t)
	svcs, env := servicesEnv(f)
	ctx := context.Background()
	p := &models.Principal{OrganizationID: src.OrganizationID, Environment: src.Environment, Permissions: []string{"*"}}
	store := services.NewStore(f.store)
	svc, plan, scope, err := store.PrepareDecommission(ctx, p, src.ServiceID, services.DecommissionInput{Reason: "consolidate",
		MigrationRequired: true, Destination: dest.ServiceID, Verification: true})
	if err != nil {
		t.Fatal(err)
	}
	op := operations.NewOperation(models.NewID(models.PrefixDecommission), services.OpTypeDecommission, svc.ID, "ak_x", services.DecommissionSteps(plan, false), nil)
	if err := store.StartServiceOperation(ctx, scope, svc.ID, op); err != nil {
		t.Fatal(err)
	}
	in := workflows.DecommissionInput{RequestID: op.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID, Plan: *plan}
	for _, fn := range []any{svcs.DecomBegin, svcs.DecomValidate, svcs.DecomMigrateData} {
		if _, err := env.ExecuteActivity(fn, in); err != nil {
			t.Fatal(err)
		}
	}
	// The destination leaves service while the data is being moved.
	if err := f.store.In(ctx, scope).Model(&services.Service{}).Where("id = ?", dest.ServiceID).Update("status", services.ServiceDecommissioned).Error; err != nil {
		t.Fatal(err)
	}
	for _, fn := range []any{svcs.DecomMigrateData, svcs.DecomVerifyMigration} {
		_, err := env.ExecuteActivity(fn, in)
		if err == nil || !strings.Contains(err.Error(), dest.ServiceID) {
			t.Fatalf("a step went on with a decommissioned destination: %v", err)
		}
	}
}
