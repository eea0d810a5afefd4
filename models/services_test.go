package models_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/webhooks"
)

func TestFormatsOfTheBodies(t *testing.T) {
	t.Run("response times", func(t *testing.T) {
		for in, want := range map[string]time.Duration{"15_minutes": 15 * time.Minute, "1_minute": time.Minute, "1_hour": time.Hour, "4_hours": 4 * time.Hour} {
			if got, err := services.ParseResponseTime("f", in); err != nil || got != want {
				t.Fatalf("%s: %v %v", in, got, err)
			}
		}
		for _, bad := range []string{"15 minutes", "0_minutes", "15m", "1_day", "", "_hours", "2_hourss"} {
			if _, err := services.ParseResponseTime("f", bad); models.ErrorCode(err) != models.CodeValidation {
				t.Fatalf("%q accepted", bad)
			}
		}
	})
	t.Run("sizes", func(t *testing.T) {
		for in, want := range map[string]int{"16GB": 16, "2TB": 2000, "500gb": 500, "1 TB": 1000} {
			if got, err := services.ParseSizeGB("f", in); err != nil || got != want {
				t.Fatalf("%s: %d %v", in, got, err)
			}
		}
		for _, bad := range []string{"16", "16MB", "GB", "0GB", "-1GB"} {
			if _, err := services.ParseSizeGB("f", bad); err == nil {
				t.Fatalf("%q accepted", bad)
			}
		}
	})
	t.Run("maintenance windows", func(t *testing.T) {
		for in, want := range map[string]time.Duration{"1_hour": time.Hour, "2_hours": 2 * time.Hour, "24_hours": 24 * time.Hour} {
			if got, err := services.ParseWindowDuration("f", in); err != nil || got != want {
				t.Fatalf("%s: %v %v", in, got, err)
			}
		}
		for _, bad := range []string{"25_hours", "0_hours", "90_minutes", "2 hours"} {
			if _, err := services.ParseWindowDuration("f", bad); err == nil {
				t.Fatalf("%q accepted", bad)
			}
		}
	})
	t.Run("networks", func(t *testing.T) {
		tests := []struct {
			in   []string
			bad  string
			want []string
		}{
			{[]string{"10.0.0.0/8", "192.168.1.0/24", "2001:db8::/32"}, "", []string{"10.0.0.0/8", "192.168.1.0/24", "2001:db8::/32"}},
			{[]string{"10.0.0.1/8"}, "f[0]", nil},
			{[]string{"10.0.0.0/33"}, "f[0]", nil},
			{[]string{"intranet"}, "f[0]", nil},
			{[]string{"10.0.0.0/8", "10.1.0.0/16"}, "f[1]", nil},
			{[]string{"192.168.0.0/24", "192.168.0.0/16"}, "f[1]", nil},
		}
		for _, tc := range tests {
			var v models.Validator
			got := services.CheckCIDRs(&v, "f", tc.in, 50)
			err := v.Err()
			if tc.bad == "" && (err != nil || !slices.Equal(got, tc.want)) {
				t.Fatalf("%v: %v %v", tc.in, got, err)
			}
			if tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) && models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Field != tc.bad) {
				t.Fatalf("%v: want an issue for %s, got %v", tc.in, tc.bad, err)
			}
		}
	})
	t.Run("term discounts", func(t *testing.T) {
		for months, pct := range map[int]int{1: 0, 11: 0, 12: 5, 23: 5, 24: 10, 35: 10, 36: 15, 60: 15} {
			if got := services.TermDiscountPercent(months); got != pct {
				t.Fatalf("%d months: %d %%", months, got)
			}
		}
	})
}

func TestKindProfilesMatchTheCatalog(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, p := range services.KindProfiles() {
		if seen[p.Collection] || !strings.HasPrefix(p.Collection, "/services/") || p.Reference == "" {
			t.Fatalf("profile %+v", p)
		}
		seen[p.Collection] = true
		for _, id := range p.Offers {
			offer, err := catalog.NewStore(s).CatalogServiceByID(ctx, id)
			if err != nil || offer.Kind != p.Kind || offer.Category != p.Category {
				t.Fatalf("%s: offer %s: %+v %v", p.Kind, id, offer, err)
			}
		}
		if _, err := services.NewKindBody("type", p.Kind); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 9 {
		t.Fatalf("%d kinds", len(seen))
	}
}

func TestPricing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		order   services.ProvisioningOrder
		term    int
		monthly models.Money
		oneTime models.Money
	}{
		{"smallest bandwidth, standard", services.ProvisioningOrder{Kind: "internet", CatalogServiceID: "internet-fiber-dedicated", Bandwidth: "100mbps", SLA: "standard"}, 1, 29900, 50000},
		{"third option, premium", services.ProvisioningOrder{Kind: "internet", CatalogServiceID: "internet-fiber-dedicated", Bandwidth: "1gbps", SLA: "premium"}, 1, 149500, 50000},
		{"enterprise, 36 months", services.ProvisioningOrder{Kind: "internet", CatalogServiceID: "internet-fiber-dedicated", Bandwidth: "10gbps", SLA: "enterprise"}, 36, 304980, 50000},
		{"network per site with dual path", services.ProvisioningOrder{Kind: "network", CatalogServiceID: "network-mpls", Bandwidth: "50mbps", SLA: "standard", Quantity: 3, Redundancy: "dual_path"}, 1, 3*45000 + 3*11250, 3 * 75000},
		{"users and numbers", services.ProvisioningOrder{Kind: "phone_system", CatalogServiceID: "voice-cloud-pbx", SLA: "standard", Quantity: 10,
			Numbers: []services.NumberRequest{{Type: "local", AreaCode: "512", Quantity: 3}, {Type: "toll_free", Quantity: 1}}, Features: []string{"call_recording", "auto_attendant"}}, 1, 10*1999 + 300 + 200 + 10*300, 0},
		{"features per service", services.ProvisioningOrder{Kind: "internet", CatalogServiceID: "internet-fiber-business", Bandwidth: "50mbps", SLA: "standard", Features: []string{"ddos_protection", "ipv6"}}, 12, 17860, 50000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := services.NewStore(s).PriceOrder(ctx, &tc.order, tc.term)
			if err != nil {
				t.Fatal(err)
			}
			if p.Monthly != tc.monthly || p.OneTime != tc.oneTime || p.Currency != "USD" || p.MonthlySubtotal-p.Discount != p.Monthly {
				t.Fatalf("price %+v (monthly %s, want %s)", p, p.Monthly, tc.monthly)
			}
		})
	}
}

func TestNumbersAndComputeInventory(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := provisioningTenant(t, s, "Inventory")
	scope := p.OwnScope()
	req := catalog.AllocationRequest{OperationID: "prov_numbers", ServiceID: "svc_numbers"}
	first, err := catalog.NewStore(s).AllocateNumbers(ctx, scope, req, "local", "512", []int{0, 1, 2})
	if err != nil || len(first) != 3 || first[0].Reference != "+15125550000" || first[2].Reference != "+15125550002" {
		t.Fatalf("numbers %+v %v", first, err)
	}
	again, err := catalog.NewStore(s).AllocateNumbers(ctx, scope, req, "local", "512", []int{0, 1, 2, 3})
	if err != nil || len(again) != 4 || again[0].ID != first[0].ID || again[3].Reference != "+15125550003" {
		t.Fatalf("retried %+v %v", again, err)
	}
	other, err := catalog.NewStore(s).AllocateNumbers(ctx, scope, catalog.AllocationRequest{OperationID: "prov_other", ServiceID: "svc_other"}, "toll_free", "", []int{0})
	if err != nil || !strings.HasPrefix(other[0].Reference, "+1800555") {
		t.Fatalf("toll-free %+v %v", other, err)
	}
	if n, err := catalog.NewStore(s).ReleaseServiceAllocations(ctx, scope, "svc_numbers", ""); err != nil || n != 4 {
		t.Fatalf("released %d %v", n, err)
	}
	reused, err := catalog.NewStore(s).AllocateNumbers(ctx, scope, catalog.AllocationRequest{OperationID: "prov_reuse", ServiceID: "svc_reuse"}, "local", "512", []int{0})
	if err != nil || reused[0].Reference != "+15125550000" {
		t.Fatalf("the freed number is not reused: %+v %v", reused, err)
	}
	if _, err := catalog.NewStore(s).AllocateNumbers(ctx, scope, catalog.AllocationRequest{OperationID: "prov_x", ServiceID: "svc_x"}, "local", "999", []int{0}); models.ErrorCode(err) != models.CodeUnavailableAtLocation {
		t.Fatalf("the sandbox area code exists live: %v", err)
	}

	if _, err := catalog.NewStore(s).ReserveUnits(ctx, scope, catalog.AllocationRequest{OperationID: "prov_vm", ServiceID: "svc_vm", LocationID: "us-east-1", ServiceType: "gpu", Mbps: 300}); models.ErrorCode(err) != models.CodeUnavailableAtLocation {
		t.Fatalf("300 GPUs reserved: %v", err)
	}
	for slot, region := range []string{"us-east-1", "eu-west-1"} {
		if _, err := catalog.NewStore(s).ReserveUnits(ctx, scope, catalog.AllocationRequest{OperationID: "prov_vm", ServiceID: "svc_vm", LocationID: region, ServiceType: "vcpu", Mbps: 64, Slot: slot}); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := catalog.NewStore(s).AvailableUnits(ctx, scope, "us-east-1", "vcpu"); left != 20000-64 {
		t.Fatalf("%d vCPUs left", left)
	}
	regions, _ := catalog.NewStore(s).ComputeRegions(ctx, models.EnvLive)
	sandboxRegions, _ := catalog.NewStore(s).ComputeRegions(ctx, models.EnvTest)
	if slices.Contains(regions, "sandbox-exhausted-1") || !slices.Contains(sandboxRegions, "sandbox-exhausted-1") || len(regions) != 6 {
		t.Fatalf("regions %v / %v", regions, sandboxRegions)
	}
}

func TestScalingCapacityReplacesTheOld(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := provisioningTenant(t, s, "Scaler")
	scope := p.OwnScope()
	// Boise has 500 Mbps of fiber_business: a service holding 300 can grow to 500 only by replacing its own
	old := catalog.AllocationRequest{OperationID: "prov_a", ServiceID: "svc_a", LocationID: "loc_boise_main", ServiceType: "fiber_business", Mbps: 300}
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, old); err != nil {
		t.Fatal(err)
	}
	grow := catalog.AllocationRequest{OperationID: "scl_a", ServiceID: "svc_a", LocationID: "loc_boise_main", ServiceType: "fiber_business", Mbps: 500}
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, grow); models.ErrorCode(err) != models.CodeInsufficientBandwidth {
		t.Fatalf("without Replaces: %v", err)
	}
	grow.Replaces = true
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, grow); err != nil {
		t.Fatal(err)
	}
	if n, err := catalog.NewStore(s).ReleaseServiceAllocations(ctx, scope, "svc_a", "scl_a", catalog.AllocCapacity); err != nil || n != 1 {
		t.Fatalf("released %d %v", n, err)
	}
	if c, _ := catalog.NewStore(s).Capacity(ctx, models.EnvLive, "loc_boise_main", "fiber_business"); c.AllocatedMbps != 500 {
		t.Fatalf("%d Mbps allocated", c.AllocatedMbps)
	}
}

func TestServiceChangeRules(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ends := now.Add(90 * time.Minute)
	tests := []struct {
		svc  services.Service
		code models.Code
	}{
		{services.Service{Status: services.ServiceOperational}, ""},
		{services.Service{Status: services.ServiceDegraded}, ""},
		{services.Service{Status: services.ServiceDown}, ""},
		{services.Service{Status: services.ServiceMaintenance, MaintenanceEndsAt: &ends}, models.CodeServiceMaintenance},
		{services.Service{Status: services.ServiceMaintenance}, models.CodeServiceMaintenance},
		{services.Service{Status: services.ServiceOperational, PendingOperationID: "scl_x"}, models.CodeServiceConflict},
		{services.Service{Status: services.ServicePending}, models.CodeInvalidStateTransition},
		{services.Service{Status: services.ServiceProvisioning}, models.CodeInvalidStateTransition},
		{services.Service{Status: services.ServiceDecommissioning}, models.CodeInvalidStateTransition},
		{services.Service{Status: services.ServiceDecommissioned}, models.CodeInvalidStateTransition},
		{services.Service{Status: services.ServiceFailed}, models.CodeInvalidStateTransition},
	}
	for _, tc := range tests {
		err := services.CheckServiceChangeable(&tc.svc, now)
		if (tc.code == "" && err != nil) || (tc.code != "" && models.ErrorCode(err) != tc.code) {
			t.Fatalf("%+v: %v, want %s", tc.svc, err, tc.code)
		}
	}
	e := models.AsError(services.CheckServiceChangeable(&tests[3].svc, now))
	if e.Details["retry_after"] != 5400 || e.Details["maintenance_ends_at"] != "2026-11-22T11:30:00Z" {
		t.Fatalf("details %v", e.Details)
	}
}

func TestIncidentsMoveTheServiceAndWriteEvents(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "Incidents")
	scope := p.OwnScope()
	svc := operational(t, s, p, acct)
	at := time.Now().UTC()
	if inc, err := telemetry.NewStore(s).RaiseIncident(ctx, scope, svc.ID, telemetry.IncidentDegraded, "jitter", map[string]any{"latency_ms": 80}, at); err != nil || inc == nil {
		t.Fatalf("%+v %v", inc, err)
	}
	if inc, err := telemetry.NewStore(s).RaiseIncident(ctx, scope, svc.ID, telemetry.IncidentDown, "fiber cut", nil, at.Add(time.Minute)); err != nil || inc == nil || inc.Kind != "down" {
		t.Fatalf("%+v %v", inc, err)
	}
	if inc, err := telemetry.NewStore(s).RaiseIncident(ctx, scope, svc.ID, telemetry.IncidentDegraded, "again", nil, at.Add(2*time.Minute)); err != nil || inc != nil {
		t.Fatalf("a down service degraded: %+v %v", inc, err)
	}
	open, _ := telemetry.NewStore(s).OpenIncident(ctx, scope, svc.ID)
	if open == nil || open.Kind != "down" {
		t.Fatalf("open %+v", open)
	}
	if inc, err := telemetry.NewStore(s).ResolveIncident(ctx, scope, svc.ID, at.Add(10*time.Minute)); err != nil || inc == nil || inc.ResolvedAt == nil {
		t.Fatalf("%+v %v", inc, err)
	}
	if inc, err := telemetry.NewStore(s).ResolveIncident(ctx, scope, svc.ID, at.Add(11*time.Minute)); err != nil || inc != nil {
		t.Fatalf("resolved twice: %+v %v", inc, err)
	}
	got, _ := services.NewStore(s).GetService(ctx, p, svc.ID)
	evs, _ := eventlog.NewStore(s).EventsFor(ctx, scope, svc.ID)
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
		if _, known := webhooks.Canonical(ev.Type); !known {
			t.Fatalf("%s is not a canonical event name", ev.Type)
		}
	}
	want := []string{"service.status_changed", "service.provisioned", "service.status_changed", "service.performance_alert", "service.status_changed", "service.down", "service.status_changed", "service.restored"}
	if got.Status != services.ServiceOperational || !slices.Equal(types, want) {
		t.Fatalf("status %s, events %v", got.Status, types)
	}
	all, _ := telemetry.NewStore(s).ServiceIncidents(ctx, scope, svc.ID)
	if len(all) != 2 || all[0].ResolvedAt == nil || all[1].ResolvedAt == nil {
		t.Fatalf("incidents %+v", all)
	}
}

// operational stores an operational internet service at Austin (a template order) for p.
func operational(t *testing.T, s *models.Store, p *models.Principal, acct *models.BillingAccount) *services.Service {
	t.Helper()
	ctx := context.Background()
	o, scope, err := services.NewStore(s).PrepareTemplateOrder(ctx, p, services.TemplateInput{ServiceTemplate: "internet-dedicated-1g", AccountID: acct.ID, LocationID: "loc_austin_congress"})
	if err != nil {
		t.Fatal(err)
	}
	opID, svcID := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	if err := operations.NewStore(s).CreateOperation(ctx, scope, operations.NewOperation(opID, operations.OpTypeProvisioning, svcID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).EnsureService(ctx, scope, svcID, opID, o); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, svcID, services.ServiceProvisioning); err != nil {
		t.Fatal(err)
	}
	svc, err := services.NewStore(s).CompleteProvisioning(ctx, scope, opID, svcID)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestConflictsOnlyForTheInternetBody(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "Conflicts")
	operational(t, s, p, acct)
	operational(t, s, p, acct) // templates add circuits
	_, _, err := services.NewStore(s).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: acct.ID, ServiceType: "fiber_business", Bandwidth: "100mbps", Location: austin, SLA: "standard"})
	if models.ErrorCode(err) != models.CodeServiceConflict {
		t.Fatalf("want SERVICE_CONFLICT, got %v", err)
	}
	other, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Second", Currency: "USD", BillingEmail: "b2@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := services.NewStore(s).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: other.ID, ServiceType: "fiber_business", Bandwidth: "100mbps", Location: austin, SLA: "standard"}); err != nil {
		t.Fatalf("another account: %v", err)
	}
}
