package workflows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// startDecommission accepts a decommission as the API does.
func startDecommission(t *testing.T, e *servicesEnv, env models.Environment, serviceID string, in services.DecommissionInput, now time.Time) workflows.DecommissionInput {
	t.Helper()
	ctx := context.Background()
	svc, plan, scope, err := services.NewStore(e.store).PrepareDecommission(ctx, e.principal(env), serviceID, in)
	if err != nil {
		t.Fatal(err)
	}
	scheduled := plan.Scheduled(now)
	op := operations.NewOperation(models.NewID(models.PrefixDecommission), services.OpTypeDecommission, svc.ID, "ak_x", services.DecommissionSteps(plan, scheduled), nil)
	if err := services.NewStore(e.store).StartServiceOperation(ctx, scope, svc.ID, op); err != nil {
		t.Fatal(err)
	}
	return workflows.DecommissionInput{RequestID: op.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment, ServiceID: svc.ID,
		Scheduled: scheduled, Plan: *plan}
}

func phoneSystem(t *testing.T, e *servicesEnv, env models.Environment, name string) workflows.ProvisioningInput {
	t.Helper()
	in, err := e.provision(env, &services.PhoneSystemBody{SystemType: "cloud_pbx", Users: 10, Features: []string{"voicemail_to_email"},
		PhoneNumbers: []services.PhoneNumberOrder{{Type: "local", AreaCode: "512", Quantity: 4}, {Type: "toll_free", Quantity: 1}},
		OrderExtras:  services.OrderExtras{Name: name, Contacts: &services.OrderContacts{Technical: "noc@example.com", Billing: "ap@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestDecommissionWithMigrationAtItsDate(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	old := phoneSystem(t, e, models.EnvLive, "Old PBX")
	dest := phoneSystem(t, e, models.EnvLive, "New PBX")
	scope := old.Scope()
	if got := e.active(scope, old.ServiceID); got[catalog.AllocPhoneNumber] != 5 {
		t.Fatalf("allocations %v", got)
	}
	// traffic to migrate
	svc := e.service(models.EnvLive, old.ServiceID)
	if err := telemetry.NewStore(e.store).RecordTelemetry(ctx, scope, simulator.SampleFor(svc, time.Now().UTC(), time.Hour)); err != nil {
		t.Fatal(err)
	}

	wenv := e.env()
	now := time.Now().UTC().Truncate(time.Second)
	wenv.SetStartTime(now)
	date := now.Add(3 * 24 * time.Hour)
	in := startDecommission(t, e, models.EnvLive, old.ServiceID, services.DecommissionInput{Date: &date, MigrationRequired: true, Destination: dest.ServiceID,
		Verification: true, Reason: "consolidation"}, now)
	var waiting services.ServiceStatus
	wenv.RegisterDelayedCallback(func() { waiting = e.service(models.EnvLive, old.ServiceID).Status }, 48*time.Hour)
	wenv.ExecuteWorkflow(workflows.DecommissionWorkflow, in)
	if err := wenv.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if waiting != services.ServiceOperational || wenv.Now().Before(date) {
		t.Fatalf("while waiting the service was %s; ended at %v, before %v", waiting, wenv.Now(), date)
	}
	svc = e.service(models.EnvLive, old.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Status != services.ServiceDecommissioned || svc.BillingEndedAt == nil || svc.DecommissionedAt == nil || svc.DecommissionReason != "consolidation" ||
		svc.PendingOperationID != "" || op.Status != operations.OpCompleted || op.Result["billing_ended_at"] == nil {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
	wantSteps := []string{"wait_for_date", "validate", "migrate_data", "verify_migration", "deactivate", "release_inventory", "stop_billing", "record_decommission"}
	for i, st := range op.Steps {
		if st.Name != wantSteps[i] || st.Status != operations.StepCompleted {
			t.Fatalf("steps %+v", op.Steps)
		}
	}
	m, err := services.NewStore(e.store).DataMigrationOf(ctx, scope, in.RequestID)
	if err != nil || m.Status != services.MigrationVerified || m.DestinationServiceID != dest.ServiceID || m.Bytes <= 0 || m.SourceChecksum != m.DestinationChecksum {
		t.Fatalf("migration %+v %v", m, err)
	}
	if got := e.active(scope, old.ServiceID); len(got) != 0 {
		t.Fatalf("still allocated: %v", got)
	}
	if got := e.active(scope, dest.ServiceID); got[catalog.AllocPhoneNumber] != 5 {
		t.Fatalf("the destination lost its numbers: %v", got)
	}
	want := []string{"service.status_changed", "service.status_changed", "service.provisioned", "service.status_changed", "service.status_changed", "service.decommissioned"}
	if got := e.eventTypes(scope, old.ServiceID); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	notes, _ := services.NewStore(e.store).ServiceNotifications(ctx, scope, old.ServiceID)
	if len(notes) != 4 || notes[2].Template != "service_decommissioned" {
		t.Fatalf("notifications %+v", notes)
	}
	// the numbers it held are free again: a new order takes the lowest
	again := phoneSystem(t, e, models.EnvLive, "Again")
	numbers := e.service(models.EnvLive, again.ServiceID).Resources["phone_numbers"].([]any)
	if numbers[0].(map[string]any)["number"] != "+15125550000" {
		t.Fatalf("numbers %v", numbers)
	}
}

func TestDecommissionVerificationFailureRollsBack(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	old := phoneSystem(t, e, models.EnvTest, "Old PBX")
	dest := phoneSystem(t, e, models.EnvTest, "New PBX")
	wenv := e.env()
	in := startDecommission(t, e, models.EnvTest, old.ServiceID, services.DecommissionInput{MigrationRequired: true, Destination: dest.ServiceID,
		Verification: true, Reason: simulator.MagicFailVerification}, time.Now())
	wenv.ExecuteWorkflow(workflows.DecommissionWorkflow, in)
	var appErr *temporal.ApplicationError
	if err := wenv.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) {
		t.Fatalf("want PROVISIONING_FAILED, got %v", err)
	}
	svc := e.service(models.EnvTest, old.ServiceID)
	op := e.operation(models.EnvTest, in.RequestID)
	if svc.Status != services.ServiceOperational || svc.BillingEndedAt != nil || svc.PendingOperationID != "" || op.Status != operations.OpFailed ||
		op.Error.Details["step"] != services.StepVerifyMigration || op.Error.Details["service_taken_out"] != false || op.Error.Details["sandbox"] != true {
		t.Fatalf("service %+v, operation %+v %+v", svc, op, op.Error)
	}
	if m, _ := services.NewStore(e.store).DataMigrationOf(ctx, old.Scope(), in.RequestID); m.Status != services.MigrationRolledBack {
		t.Fatalf("migration %+v", m)
	}
	for _, st := range op.Steps {
		want := map[string]operations.StepStatus{"validate": operations.StepCompleted, "migrate_data": operations.StepCompensated, "verify_migration": operations.StepFailed}[st.Name]
		if want == "" {
			want = operations.StepSkipped
		}
		if st.Status != want {
			t.Fatalf("step %s is %s, want %s", st.Name, st.Status, want)
		}
	}
	if got := e.active(old.Scope(), old.ServiceID); got[catalog.AllocPhoneNumber] != 5 {
		t.Fatalf("allocations %v", got)
	}
}

func TestDecommissionCancelledWhileWaiting(t *testing.T) {
	e := newServicesEnv(t)
	prov := internetService(t, e, models.EnvLive, demoAccount(t, e, models.EnvLive))
	wenv := e.env()
	date := time.Now().UTC().Add(30 * 24 * time.Hour)
	in := startDecommission(t, e, models.EnvLive, prov.ServiceID, services.DecommissionInput{Date: &date}, time.Now())
	wenv.RegisterDelayedCallback(wenv.CancelWorkflow, 24*time.Hour)
	wenv.ExecuteWorkflow(workflows.DecommissionWorkflow, in)
	if err := wenv.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("want the cancellation, got %v", err)
	}
	svc := e.service(models.EnvLive, prov.ServiceID)
	op := e.operation(models.EnvLive, in.RequestID)
	if svc.Status != services.ServiceOperational || svc.PendingOperationID != "" || op.Status != operations.OpCancelled || op.Steps[0].Status != operations.StepCancelled {
		t.Fatalf("service %+v, operation %+v", svc, op)
	}
	if got := e.active(prov.Scope(), prov.ServiceID); got[catalog.AllocCapacity] != 1 || got[catalog.AllocIPBlock] != 1 {
		t.Fatalf("allocations %v", got)
	}
}

func TestProvisioningEveryKindAndCompensation(t *testing.T) {
	e := newServicesEnv(t)
	ctx := context.Background()
	account := demoAccount(t, e, models.EnvTest)
	bodies := map[string]services.KindBody{
		"network": &services.NetworkBody{NetworkType: "sdwan", Topology: "full_mesh", Bandwidth: "100mbps",
			Locations: []services.NetworkSite{{ID: "loc_sandbox_all"}, {ID: "loc_austin_congress"}, {ID: "loc_dallas_main"}}},
		"contact_center": &services.ContactCenterBody{CenterType: "omnichannel", Channels: []string{"voice", "chat"}, AgentCount: 10},
		"cloud_infrastructure": &services.CloudInfrastructureBody{DeploymentType: "single_cloud", Providers: []string{"aws"}, Regions: []string{"us-east-1"},
			Resources: []services.CloudResource{{Type: "virtual_machine", Quantity: 2, Specifications: &services.VMSpecifications{CPU: 2, Memory: "8GB", Storage: "100GB", OS: "debian-12"}},
				{Type: "load_balancer", Tier: "basic"}}},
		"cloud_platform":   &services.CloudPlatformBody{Runtime: "go123", Region: "eu-west-1", Environments: []string{"production"}, InstanceSize: "small"},
		"managed_security": &services.ManagedSecurityBody{ServiceType: "managed_soc", Coverage: "24x7x365", Services: []string{"threat_monitoring"}},
		"security_infrastructure": &services.SecurityInfrastructureBody{InfrastructureType: "ddos_protection", Throughput: "10gbps", LocationID: "loc_sandbox_all",
			ProtectedNetworks: []string{"10.0.0.0/8"}},
		"ai_platform": &services.AIPlatformBody{PlatformType: "inference", Capabilities: []string{"predictive_analytics"}, ComputeTier: "gpu_high_memory",
			Models: []services.AIModel{{Name: "forecast", Type: "forecasting", Framework: "xgboost"}}},
	}
	want := map[string]map[catalog.AllocationKind]int{
		"network":                 {catalog.AllocCapacity: 3, catalog.AllocIPBlock: 1, catalog.AllocVLAN: 3},
		"contact_center":          {catalog.AllocPhoneNumber: 1},
		"cloud_infrastructure":    {catalog.AllocCapacity: 1, catalog.AllocIPBlock: 1},
		"cloud_platform":          {catalog.AllocCapacity: 1},
		"managed_security":        {},
		"security_infrastructure": {catalog.AllocIPBlock: 1, catalog.AllocVLAN: 1},
		"ai_platform":             {catalog.AllocCapacity: 1},
	}
	for kind, body := range bodies {
		t.Run(kind, func(t *testing.T) {
			in, err := e.provision(models.EnvTest, body)
			if err != nil {
				t.Fatal(err)
			}
			svc := e.service(models.EnvTest, in.ServiceID)
			if svc.Status != services.ServiceOperational || svc.Kind != kind || svc.CircuitID == "" || svc.MonthlyCharge <= 0 {
				t.Fatalf("service %+v", svc)
			}
			got := e.active(in.Scope(), in.ServiceID)
			for k, n := range want[kind] {
				if got[k] != n {
					t.Fatalf("allocations %v, want %v", got, want[kind])
				}
			}
			switch kind {
			case "cloud_infrastructure":
				if len(svc.Resources["instances"].([]any)) != 2 || len(svc.Resources["load_balancers"].([]any)) != 1 {
					t.Fatalf("resources %+v", svc.Resources)
				}
			case "network":
				if len(svc.Resources["sites"].([]any)) != 3 {
					t.Fatalf("resources %+v", svc.Resources)
				}
			case "managed_security":
				if svc.Resources["soc"] == nil {
					t.Fatalf("resources %+v", svc.Resources)
				}
			}
		})
	}
	t.Run("a sandbox failure releases every slot", func(t *testing.T) {
		body := &services.NetworkBody{NetworkType: "mpls", Topology: "hub_and_spoke", Bandwidth: "1gbps", AccountID: account,
			Locations:   []services.NetworkSite{{ID: "loc_sandbox_all", Role: "hub"}, {ID: "loc_austin_congress", Role: "spoke"}},
			OrderExtras: services.OrderExtras{Name: simulator.MagicFailName(operations.StepRecordService), Contacts: &services.OrderContacts{Technical: "noc@example.com"}}}
		in, err := e.provision(models.EnvTest, body)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != string(models.CodeProvisioningFailed) {
			t.Fatalf("want PROVISIONING_FAILED, got %v", err)
		}
		allocs, _ := catalog.NewStore(e.store).Allocations(ctx, in.Scope(), in.RequestID)
		if len(allocs) != 5 {
			t.Fatalf("allocations %+v", allocs)
		}
		for _, a := range allocs {
			if a.ReleasedAt == nil {
				t.Fatalf("%s slot %d still allocated", a.Kind, a.Slot)
			}
		}
		svc := e.service(models.EnvTest, in.ServiceID)
		notes, _ := services.NewStore(e.store).ServiceNotifications(ctx, in.Scope(), in.ServiceID)
		if svc.Status != services.ServiceFailed || len(notes) != 1 || notes[0].Template != "provisioning_failed" {
			t.Fatalf("service %s, notifications %+v", svc.Status, notes)
		}
	})
	t.Run("scheduled", func(t *testing.T) {
		wenv := e.env()
		now := time.Now().UTC().Truncate(time.Second)
		wenv.SetStartTime(now)
		o, scope, err := services.NewStore(e.store).PrepareServiceOrder(ctx, e.principal(models.EnvTest), &services.ManagedSecurityBody{ServiceType: "managed_detection_response",
			Coverage: "business_hours", Services: []string{"incident_response"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := services.NewStore(e.store).ScheduleOrder(o, new(now.Add(5*24*time.Hour)), "2_days"); err != nil {
			t.Fatal(err)
		}
		in := workflows.ProvisioningInput{RequestID: models.NewID(models.PrefixProvisioning), OrganizationID: scope.OrganizationID, Environment: scope.Environment,
			ServiceID: models.NewID(models.PrefixService), Order: *o, Scheduled: true}
		if err := operations.NewStore(e.store).CreateOperation(ctx, scope, operations.NewOperation(in.RequestID, operations.OpTypeProvisioning, in.ServiceID, "ak_x", operations.ProvisioningSteps(true), nil)); err != nil {
			t.Fatal(err)
		}
		// During the wait the service exists, pending (its id names it);
		// it is provisioned on its date.
		var during services.ServiceStatus
		wenv.RegisterDelayedCallback(func() {
			if svc, err := services.NewStore(e.store).GetService(ctx, e.principal(models.EnvTest), in.ServiceID); err == nil {
				during = svc.Status
			}
		}, 4*24*time.Hour)
		wenv.ExecuteWorkflow(workflows.ProvisioningWorkflow, in)
		if err := wenv.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if during != services.ServicePending || wenv.Now().Before(*o.PreferredDate) || e.service(models.EnvTest, in.ServiceID).Status != services.ServiceOperational {
			t.Fatalf("during the wait: %q; ended %v", during, wenv.Now())
		}
	})
}
