package workflows_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

var austinLoc = catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}

// internetService provisions a 1gbps internet service at Austin through the
// workflow and returns its input.
func internetService(t *testing.T, e *servicesEnv, env models.Environment, account string) workflows.ProvisioningInput {
	t.Helper()
	in, err := e.provision(env, &services.InternetBody{AccountID: account, ServiceType: "fiber_dedicated", Bandwidth: "1gbps", Location: austinLoc, SLA: "premium"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func demoAccount(t *testing.T, e *servicesEnv, env models.Environment) string {
	t.Helper()
	var acct models.BillingAccount
	if err := e.store.In(context.Background(), e.principal(env).OwnScope()).Order("created_at").Take(&acct).Error; err != nil {
		t.Fatal(err)
	}
	return acct.ID
}

// startChange accepts a change as the API does and returns the workflow input.
func startChange(t *testing.T, e *servicesEnv, env models.Environment, serviceID string, in services.ServiceUpdateInput) workflows.ServiceChangeInput {
	t.Helper()
	ctx := context.Background()
	svc, u, scope, err := services.NewStore(e.store).PrepareServiceUpdate(ctx, e.principal(env), serviceID, in)
	if err != nil {
		t.Fatal(err)
	}
	prefix := services.PrefixModification
	if u.Type == services.OpTypeScaling {
		prefix = services.PrefixScaling
	}
	op := operations.NewOperation(models.NewID(prefix), u.Type, svc.ID, "ak_x", services.UpdateSteps(u), nil)
	if err := services.NewStore(e.store).StartServiceOperation(ctx, scope, svc.ID, op); err != nil {
		t.Fatal(err)
	}
	return workflows.ServiceChangeInput{RequestID: op.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID, Update: *u}
}

func TestScalingWaitsForTheMaintenanceWindow(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	prov := internetService(t, e, models.EnvLive, demoAccount(t, e, models.EnvLive))
	scope := prov.Scope()

	wenv := e.env()
	now := time.Now().UTC().Truncate(time.Second)
	wenv.SetStartTime(now)
	start := now.Add(48 * time.Hour)
	effective := start.Add(30 * time.Minute)
	in := startChange(t, e, models.EnvLive, prov.ServiceID, services.ServiceUpdateInput{Scaling: &services.ScalingInput{
		Action: "scale_up", NewBandwidth: "10gbps", EffectiveDate: &effective,
		Window: &services.MaintenanceWindowInput{Start: &start, Duration: "2_hours"},
	}})
	type seen struct {
		status    services.ServiceStatus
		bandwidth string
		opStatus  operations.OperationStatus
	}
	var before, waiting, applied seen
	look := func(s *seen) func() {
		return func() {
			svc := e.service(models.EnvLive, prov.ServiceID)
			*s = seen{svc.Status, svc.Bandwidth, e.operation(models.EnvLive, in.RequestID).Status}
		}
	}
	wenv.RegisterDelayedCallback(look(&before), 24*time.Hour)                 // scheduled, not yet in the window
	wenv.RegisterDelayedCallback(look(&waiting), 48*time.Hour+10*time.Minute) // in maintenance, not yet effective
	wenv.RegisterDelayedCallback(look(&applied), 49*time.Hour)                // applied, still in the window
	wenv.ExecuteWorkflow(workflows.ServiceChangeWorkflow, in)
	if err := wenv.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if before != (seen{services.ServiceOperational, "1gbps", operations.OpInProgress}) ||
		waiting != (seen{services.ServiceMaintenance, "1gbps", operations.OpInProgress}) ||
		applied != (seen{services.ServiceMaintenance, "10gbps", operations.OpInProgress}) {
		t.Fatalf("before %+v, waiting %+v, applied %+v", before, waiting, applied)
	}
	if end := wenv.Now(); end.Before(start.Add(2 * time.Hour)) {
		t.Fatalf("ended at %v, before the window's end", end)
	}
	svc := e.service(models.EnvLive, prov.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Status != services.ServiceOperational || svc.Bandwidth != "10gbps" || svc.BandwidthMbps != 10000 || svc.PendingOperationID != "" ||
		svc.MaintenanceEndsAt != nil || svc.MonthlyCharge <= prov.Order.MonthlyCharge || op.Status != operations.OpCompleted || op.Progress().Percent != 100 {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
	for _, st := range op.Steps {
		if st.Status != operations.StepCompleted {
			t.Fatalf("step %s is %s", st.Name, st.Status)
		}
	}
	want := []string{"service.status_changed", "service.status_changed", "service.provisioned", "service.maintenance_scheduled", "service.status_changed", "service.modified", "service.status_changed"}
	if got := e.eventTypes(scope, prov.ServiceID); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	// the new capacity replaced the old: only 10gbps is held at Austin
	c, _ := catalog.NewStore(e.store).Capacity(ctx, models.EnvLive, "loc_austin_congress", "fiber_dedicated")
	if c.AllocatedMbps != 10000 {
		t.Fatalf("%d Mbps allocated at Austin, want 10000", c.AllocatedMbps)
	}
	if n, _ := services.NewStore(e.store).ServiceNotifications(ctx, scope, prov.ServiceID); len(n) != 0 {
		t.Fatalf("notifications without contacts: %+v", n)
	}
}

func TestScalingCancelledBeforeTheWindow(t *testing.T) {
	e := newServicesEnv(t)
	prov := internetService(t, e, models.EnvLive, demoAccount(t, e, models.EnvLive))
	wenv := e.env()
	start := time.Now().UTC().Add(72 * time.Hour)
	in := startChange(t, e, models.EnvLive, prov.ServiceID, services.ServiceUpdateInput{Scaling: &services.ScalingInput{
		Action: "scale_down", NewBandwidth: "500mbps", Window: &services.MaintenanceWindowInput{Start: &start, Duration: "1_hour"},
	}})
	wenv.RegisterDelayedCallback(wenv.CancelWorkflow, 24*time.Hour)
	wenv.ExecuteWorkflow(workflows.ServiceChangeWorkflow, in)
	if err := wenv.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("want the cancellation, got %v", err)
	}
	svc := e.service(models.EnvLive, prov.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Status != services.ServiceOperational || svc.Bandwidth != "1gbps" || svc.PendingOperationID != "" || svc.MaintenanceStartsAt != nil ||
		op.Status != operations.OpCancelled || op.Steps[0].Status != operations.StepCancelled {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
}

func TestScalingFailureInTheWindowIsCompensated(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	prov := internetService(t, e, models.EnvTest, demoAccount(t, e, models.EnvTest))
	scope := prov.Scope()
	wenv := e.env()
	start := time.Now().UTC().Add(time.Hour)
	in := startChange(t, e, models.EnvTest, prov.ServiceID, services.ServiceUpdateInput{Scaling: &services.ScalingInput{
		Action: "scale_up", NewBandwidth: "10gbps", Window: &services.MaintenanceWindowInput{Start: &start, Duration: "4_hours"},
	}})
	// the sandbox's magic name makes the network refuse the change's validate step, in the window
	if err := e.store.In(ctx, scope).Model(&services.Service{}).Where("id = ?", prov.ServiceID).Update("name", simulator.MagicFailName(operations.StepValidate)).Error; err != nil {
		t.Fatal(err)
	}
	wenv.ExecuteWorkflow(workflows.ServiceChangeWorkflow, in)
	var appErr *temporal.ApplicationError
	if err := wenv.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) {
		t.Fatalf("want PROVISIONING_FAILED, got %v", err)
	}
	svc := e.service(models.EnvTest, prov.ServiceID)
	op := e.operation(models.EnvTest, in.RequestID)
	if svc.Status != services.ServiceOperational || svc.Bandwidth != "1gbps" || svc.PendingOperationID != "" || op.Status != operations.OpFailed ||
		op.Error.Code != models.CodeProvisioningFailed || op.Error.Details["step"] != operations.StepValidate || op.Error.Details["applied"] != false {
		t.Fatalf("service %+v, operation %+v %+v", svc, op, op.Error)
	}
	got := e.eventTypes(scope, prov.ServiceID)
	want := []string{"service.status_changed", "service.status_changed", "service.provisioned", "service.maintenance_scheduled", "service.status_changed", "service.status_changed"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v (into maintenance and out again)", got, want)
	}
	if left, _ := catalog.NewStore(e.store).AvailableMbps(ctx, scope, "loc_austin_congress", "fiber_dedicated"); left != 20000-1000 {
		t.Fatalf("%d Mbps left in the sandbox at Austin", left)
	}
}

func TestModificationAppliesAtOnce(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	pbx, err := e.provision(models.EnvLive, &services.PhoneSystemBody{SystemType: "cloud_pbx", Users: 20,
		PhoneNumbers: []services.PhoneNumberOrder{{Type: "local", AreaCode: "512", Quantity: 3}}, OrderExtras: services.OrderExtras{Contacts: &services.OrderContacts{Technical: "noc@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	name, feats := "Reception", []string{"call_recording"}
	in := startChange(t, e, models.EnvLive, pbx.ServiceID, services.ServiceUpdateInput{Name: &name, Features: &feats, Configuration: map[string]any{"timezone": "America/Chicago"}})
	wenv := e.env()
	wenv.ExecuteWorkflow(workflows.ServiceChangeWorkflow, in)
	if err := wenv.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	svc := e.service(models.EnvLive, pbx.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Name != "Reception" || !slices.Equal(svc.Features, feats) || svc.Configuration["timezone"] != "America/Chicago" || svc.MonthlyCharge != in.Update.MonthlyCharge ||
		svc.PendingOperationID != "" || op.Status != operations.OpCompleted || len(op.Steps) != 2 {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
	if got := e.eventTypes(pbx.Scope(), pbx.ServiceID); !slices.Equal(got, []string{"service.status_changed", "service.status_changed", "service.provisioned", "service.modified"}) {
		t.Fatalf("events %v", got)
	}
	notes, _ := services.NewStore(e.store).ServiceNotifications(ctx, pbx.Scope(), pbx.ServiceID)
	if len(notes) != 1 || notes[0].Template != "service_provisioned" || notes[0].Recipient != "noc@example.com" {
		t.Fatalf("notifications %+v", notes)
	}
	numbers, _ := svc.Resources["phone_numbers"].([]any)
	if len(numbers) != 3 || !strings.HasPrefix(numbers[0].(map[string]any)["number"].(string), "+1512555") {
		t.Fatalf("resources %+v", svc.Resources)
	}
}

// TestCancelWhileTheChangeIsAppliedIsTooLate cancels a scaling while its
// apply step runs: the step is not cancelled (before, the workflow
// compensated at once, releasing the new capacity, while the activity still
// saved the change), so the change completes with its capacity kept.
func TestCancelWhileTheChangeIsAppliedIsTooLate(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	prov := internetService(t, e, models.EnvLive, demoAccount(t, e, models.EnvLive))
	in := startChange(t, e, models.EnvLive, prov.ServiceID, services.ServiceUpdateInput{Scaling: &services.ScalingInput{
		Action: "scale_up", NewBandwidth: "10gbps"}})
	wenv := e.env()
	applyName := workflows.ActivityName(workflows.ServiceChangeActivities.Apply)
	cancelled := false
	wenv.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == applyName && !cancelled {
			cancelled = true
			wenv.CancelWorkflow()
		}
	})
	wenv.ExecuteWorkflow(workflows.ServiceChangeWorkflow, in)
	if !cancelled {
		t.Fatal("the apply step never ran")
	}
	if err := wenv.GetWorkflowError(); err != nil {
		t.Fatalf("want the change completed, got %v", err)
	}
	svc := e.service(models.EnvLive, prov.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Bandwidth != "10gbps" || svc.PendingOperationID != "" || op.Status != operations.OpCompleted {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
	c, _ := catalog.NewStore(e.store).Capacity(ctx, models.EnvLive, "loc_austin_congress", "fiber_dedicated")
	if c.AllocatedMbps != 10000 {
		t.Fatalf("%d Mbps allocated at Austin, want the 10000 of the change", c.AllocatedMbps)
	}
}
