package simulator_test

import (
	"context"
	"errors"
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

func TestInjectedFaults(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	sim := simulator.New(s, simulator.Options{})
	ctx := context.Background()
	tests := []struct {
		name     string
		env      models.Environment
		location string
		template string
		step     string
		wantFail bool
	}{
		{"magic location in the sandbox", models.EnvTest, "loc_sandbox_fail_configure", "", operations.StepConfigure, true},
		{"magic location, another step", models.EnvTest, "loc_sandbox_fail_configure", "", operations.StepActivate, false},
		{"magic template in the sandbox", models.EnvTest, "loc_sandbox_all", "sandbox-fail-activate", operations.StepActivate, true},
		{"magic template, another step", models.EnvTest, "loc_sandbox_all", "sandbox-fail-activate", operations.StepValidate, false},
		{"every step has a magic value", models.EnvTest, "loc_sandbox_fail_record", "", operations.StepRecordService, true},
		{"never live", models.EnvLive, "loc_sandbox_fail_configure", "sandbox-fail-configure", operations.StepConfigure, false},
		{"ordinary location", models.EnvTest, "loc_austin_congress", "internet-dedicated-1g", operations.StepConfigure, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sim.InjectedFault(ctx, simulator.Order{Environment: tc.env, LocationID: tc.location, TemplateID: tc.template}, tc.step)
			if tc.wantFail != (err != nil) {
				t.Fatalf("fault = %v, want failure %v", err, tc.wantFail)
			}
			if err != nil && models.ErrorCode(err) != models.CodeProvisioningFailed {
				t.Fatalf("code %s", models.ErrorCode(err))
			}
		})
	}
}

func TestSouthboundCallsAreKeyedByOperation(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	org, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sim := simulator.New(s, simulator.Options{})
	o := simulator.Order{OperationID: "prov_sim", ServiceID: "svc_sim", OrganizationID: org.ID, Environment: models.EnvTest,
		LocationID: "loc_sandbox_low_capacity", ServiceType: "fiber_dedicated", BandwidthMbps: 100, SLA: "standard"}
	for attempt := range 2 {
		r, err := sim.ReserveCapacity(ctx, o)
		if err != nil || r.Mbps != 100 {
			t.Fatalf("attempt %d: %+v %v", attempt, r, err)
		}
		ip, err := sim.AllocateIP(ctx, o)
		if err != nil || ip.CIDR != "198.18.0.0/29" {
			t.Fatalf("attempt %d: %+v %v", attempt, ip, err)
		}
		vlan, err := sim.AllocateVLAN(ctx, o)
		if err != nil || vlan != 100 {
			t.Fatalf("attempt %d: %d %v", attempt, vlan, err)
		}
		c1, err := sim.Activate(ctx, o)
		if err != nil || c1.ID == "" {
			t.Fatal(err)
		}
		c2, _ := sim.Activate(ctx, o)
		if c1 != c2 {
			t.Fatalf("circuit ids %s and %s", c1.ID, c2.ID)
		}
	}
	var samples int64
	if err := s.In(ctx, o.Scope()).Model(&telemetry.TelemetrySample{}).Where("service_id = ?", "svc_sim").Count(&samples).Error; err != nil || samples != 1 {
		t.Fatalf("turn-up samples: %d %v", samples, err)
	}
	other := o
	other.OperationID = "prov_sim2"
	if _, err := sim.ReserveCapacity(ctx, other); models.ErrorCode(err) != models.CodeInsufficientBandwidth {
		t.Fatalf("the location is full: %v", err)
	}
	for range 2 {
		if err := sim.Release(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sim.ReserveCapacity(ctx, other); err != nil {
		t.Fatalf("released capacity is free again: %v", err)
	}
}

func TestStepDelayStopsWithTheContext(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	sim := simulator.New(s, simulator.Options{StepDelay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := sim.CheckFeasibility(ctx, simulator.Order{Environment: models.EnvLive})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestSamples(t *testing.T) {
	at := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	a := simulator.Sample("svc_1", "premium", services.ServiceOperational, at)
	b := simulator.Sample("svc_1", "premium", services.ServiceOperational, at)
	if *a != *b {
		t.Fatalf("samples of the same inputs differ: %+v %+v", a, b)
	}
	target := telemetry.SLATargets("premium")
	if !a.Up || a.LatencyMs <= 0 || a.LatencyMs > target.LatencyMs || a.JitterMs > target.JitterMs || a.PacketLossPct > target.PacketLossPct ||
		a.UtilizationPct <= 0 || a.UtilizationPct > 100 {
		t.Fatalf("an operational sample is within its SLA: %+v", a)
	}
	if d := simulator.Sample("svc_1", "premium", services.ServiceDown, at); d.Up || d.PacketLossPct != 100 {
		t.Fatalf("down: %+v", d)
	}
	if d := simulator.Sample("svc_1", "premium", services.ServiceDegraded, at); d.LatencyMs <= target.LatencyMs || d.PacketLossPct <= target.PacketLossPct {
		t.Fatalf("degraded: %+v", d)
	}
}

func TestRecordTelemetry(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	org, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scope := models.TenantScope(org.ID, models.EnvLive)
	order := &services.ProvisioningOrder{AccountID: "acct_x", Name: "x", Kind: "internet", ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated",
		Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "standard", BillingCycle: "monthly", LocationID: "loc_austin_congress",
		Location: catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}}
	for _, id := range []string{"svc_up", "svc_pending"} {
		if _, err := services.NewStore(s).EnsureService(ctx, scope, id, "prov_"+id, order); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []services.ServiceStatus{services.ServiceProvisioning, services.ServiceOperational} {
		if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, "svc_up", to); err != nil {
			t.Fatal(err)
		}
	}
	sim := simulator.New(s, simulator.Options{})
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		n, err := sim.RecordTelemetry(ctx, start.Add(time.Duration(i)*time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("round %d: %d samples, %v", i, n, err)
		}
	}
	var rows []telemetry.TelemetrySample
	if err := s.In(ctx, scope).Order("at").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].ServiceID != "svc_up" || rows[0].OrganizationID != org.ID || !rows[2].At.Equal(start.Add(2*time.Minute)) {
		t.Fatalf("samples: %+v", rows)
	}
}
