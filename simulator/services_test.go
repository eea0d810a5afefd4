package simulator_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/testenv"
)

// liveService stores an operational service of kind named name for the provider organization in env.
func liveService(t *testing.T, s *models.Store, env models.Environment, id, kind, name string, qty int) *services.Service {
	t.Helper()
	ctx := context.Background()
	org, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scope := models.TenantScope(org.ID, env)
	order := &services.ProvisioningOrder{AccountID: "acct_x", Name: name, Kind: kind, ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated",
		Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "standard", BillingCycle: "monthly", LocationID: "loc_austin_congress", Quantity: qty,
		Location: catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}}
	if _, err := services.NewStore(s).EnsureService(ctx, scope, id, "prov_"+id, order); err != nil {
		t.Fatal(err)
	}
	var svc *services.Service
	for _, to := range []services.ServiceStatus{services.ServiceProvisioning, services.ServiceOperational} {
		if svc, err = services.NewStore(s).TransitionService(ctx, scope, nil, id, to); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}

func TestSampleForCarriesTraffic(t *testing.T) {
	at := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	link := &services.Service{ID: "svc_link", Kind: "internet", SLA: "premium", Status: services.ServiceOperational, BandwidthMbps: 1000}
	a, b := simulator.SampleFor(link, at, time.Minute), simulator.SampleFor(link, at, time.Minute)
	if *a != *b || a.ThroughputMbps <= 0 || a.ThroughputMbps > 1000 || a.DataMB != float64(int(a.ThroughputMbps*60/8*100+0.5))/100 || a.Calls != 0 {
		t.Fatalf("sample %+v", a)
	}
	pbx := &services.Service{ID: "svc_pbx", Kind: "phone_system", SLA: "standard", Status: services.ServiceOperational, Quantity: 200}
	if v := simulator.SampleFor(pbx, at, 10*time.Minute); v.Calls == 0 || v.CallQuality < 4 || v.CallQuality > 4.4 {
		t.Fatalf("voice sample %+v", v)
	}
	down := *link
	down.Status = services.ServiceDown
	if d := simulator.SampleFor(&down, at, time.Minute); d.Up || d.ThroughputMbps != 0 || d.DataMB != 0 {
		t.Fatalf("down sample %+v", d)
	}
}

func TestMagicValuesOfTheServicesArea(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	sim := simulator.New(s, simulator.Options{})
	t.Run("a magic name fails any step in the sandbox", func(t *testing.T) {
		for _, step := range []string{operations.StepValidate, operations.StepConfigure, services.StepMigrateData} {
			o := simulator.Order{Environment: models.EnvTest, Name: simulator.MagicFailName(step)}
			if err := sim.InjectedFault(ctx, o, step); models.ErrorCode(err) != models.CodeProvisioningFailed {
				t.Fatalf("%s: %v", step, err)
			}
			o.Environment = models.EnvLive
			if err := sim.InjectedFault(ctx, o, step); err != nil {
				t.Fatalf("live %s: %v", step, err)
			}
		}
	})
	t.Run("incident names flap at every measurement", func(t *testing.T) {
		down := liveService(t, s, models.EnvTest, "svc_flap_down", "internet", simulator.MagicIncidentDown, 1)
		slow := liveService(t, s, models.EnvTest, "svc_flap_slow", "internet", simulator.MagicIncidentDegraded, 1)
		calm := liveService(t, s, models.EnvLive, "svc_calm", "internet", simulator.MagicIncidentDown, 1) // live: no magic
		scope := models.TenantScope(down.OrganizationID, models.EnvTest)
		start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		p := &models.Principal{OrganizationID: down.OrganizationID, Environment: models.EnvTest, Permissions: []string{"*"}}
		want := []services.ServiceStatus{services.ServiceDown, services.ServiceOperational, services.ServiceDown}
		for i, st := range want {
			if _, err := sim.RecordTelemetry(ctx, start.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
			got, _ := services.NewStore(s).GetService(ctx, p, down.ID)
			other, _ := services.NewStore(s).GetService(ctx, p, slow.ID)
			if got.Status != st || (st == services.ServiceDown) != (other.Status == services.ServiceDegraded) {
				t.Fatalf("measurement %d: %s and %s", i, got.Status, other.Status)
			}
		}
		var samples []telemetry.TelemetrySample
		s.In(ctx, scope).Where("service_id = ?", down.ID).Order("at").Find(&samples)
		if len(samples) != 3 || samples[0].Up || !samples[1].Up {
			t.Fatalf("samples %+v", samples)
		}
		lp := &models.Principal{OrganizationID: calm.OrganizationID, Environment: models.EnvLive, Permissions: []string{"*"}}
		if got, _ := services.NewStore(s).GetService(ctx, lp, calm.ID); got.Status != services.ServiceOperational {
			t.Fatalf("live service %s", got.Status)
		}
		incs, _ := telemetry.NewStore(s).ServiceIncidents(ctx, scope, down.ID)
		if len(incs) != 2 || incs[1].ResolvedAt == nil || incs[0].ResolvedAt != nil {
			t.Fatalf("incidents %+v", incs)
		}
	})
	t.Run("deployments are derived from the operation", func(t *testing.T) {
		items := []services.DeployItem{{Type: "virtual_machine", Name: "vm-1", Region: "us-east-1,eu-west-1", Count: 2}, {Type: "model_endpoint", Name: "m", Region: "us-east-1", Count: 1}}
		o := simulator.Order{OperationID: "prov_deploy", Kind: services.KindCloudInfrastructure}
		a, err := sim.Deploy(ctx, o, items)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := sim.Deploy(ctx, o, items)
		if len(a["instances"].([]any)) != 4 || len(a["endpoints"].([]any)) != 1 || a["instances"].([]any)[3].(map[string]any)["id"] != b["instances"].([]any)[3].(map[string]any)["id"] {
			t.Fatalf("deployment %+v", a)
		}
	})
}

func TestRandomIncidentsOnlyInTicks(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	svc := liveService(t, s, models.EnvLive, "svc_live", "internet", "Branch", 1)
	sim := simulator.New(s, simulator.Options{IncidentRate: 1}) // every measurement would raise one
	if _, err := sim.RecordTelemetry(ctx, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{OrganizationID: svc.OrganizationID, Environment: models.EnvLive, Permissions: []string{"*"}}
	if got, _ := services.NewStore(s).GetService(ctx, p, svc.ID); got.Status != services.ServiceOperational {
		t.Fatalf("RecordTelemetry raised a random incident: %s", got.Status)
	}
	if _, err := sim.Tick(ctx, time.Now().UTC(), time.Minute); err != nil {
		t.Fatal(err)
	}
	got, _ := services.NewStore(s).GetService(ctx, p, svc.ID)
	if got.Status != services.ServiceDegraded && got.Status != services.ServiceDown {
		t.Fatalf("Tick raised no incident: %s", got.Status)
	}
	quiet := simulator.New(s, simulator.Options{IncidentRate: -1})
	other := liveService(t, s, models.EnvLive, "svc_quiet", "internet", "Quiet", 1)
	if _, err := quiet.Tick(ctx, time.Now().UTC(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := services.NewStore(s).GetService(ctx, p, other.ID); got.Status != services.ServiceOperational {
		t.Fatalf("incidents disabled, yet %s", got.Status)
	}
}
