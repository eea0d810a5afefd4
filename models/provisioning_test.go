package models_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// provisioningTenant creates an organization with a live billing account and
// returns a customer principal of it.
func provisioningTenant(t *testing.T, s *models.Store, name string) (*models.Principal, *models.BillingAccount) {
	t.Helper()
	ctx := context.Background()
	org, err := identity.NewStore(s).CreateOrganization(ctx, admin(t, s), identity.OrganizationInput{Name: name, Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	p := &models.Principal{ID: "ak_test", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return p, acct
}

var austin = catalog.LocationInput{Address: "100 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}

func TestServiceTransitions(t *testing.T) {
	all := []services.ServiceStatus{services.ServicePending, services.ServiceProvisioning, services.ServiceOperational, services.ServiceDegraded,
		services.ServiceDown, services.ServiceMaintenance, services.ServiceDecommissioning, services.ServiceDecommissioned, services.ServiceFailed}
	allowed := map[services.ServiceStatus][]services.ServiceStatus{
		services.ServicePending:         {services.ServiceProvisioning, services.ServiceFailed},
		services.ServiceProvisioning:    {services.ServiceOperational, services.ServiceFailed},
		services.ServiceOperational:     {services.ServiceDegraded, services.ServiceDown, services.ServiceMaintenance, services.ServiceDecommissioning},
		services.ServiceDegraded:        {services.ServiceOperational, services.ServiceDown, services.ServiceMaintenance, services.ServiceDecommissioning},
		services.ServiceDown:            {services.ServiceOperational, services.ServiceDegraded, services.ServiceMaintenance, services.ServiceDecommissioning},
		services.ServiceMaintenance:     {services.ServiceOperational, services.ServiceDegraded, services.ServiceDown},
		services.ServiceDecommissioning: {services.ServiceDecommissioned},
	}
	for _, from := range all {
		for _, to := range all {
			want := slices.Contains(allowed[from], to)
			t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
				err := services.CheckServiceTransition(from, to)
				if want && err != nil {
					t.Fatalf("want allowed, got %v", err)
				}
				if !want && models.ErrorCode(err) != models.CodeInvalidStateTransition {
					t.Fatalf("want INVALID_STATE_TRANSITION, got %v", err)
				}
			})
		}
	}
	if services.ServiceStatus("bogus").Valid() || !services.ServiceOperational.Valid() {
		t.Fatal("Valid is wrong")
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"100mbps", 100, false}, {"1gbps", 1000, false}, {"10gbps", 10000, false}, {"500mbps", 500, false},
		{"1Gbps", 0, true}, {"1 gbps", 0, true}, {"1000", 0, true}, {"0mbps", 0, true}, {"01gbps", 0, true},
		{"1.5gbps", 0, true}, {"", 0, true}, {"401gbps", 0, true}, {"-1mbps", 0, true},
	}
	for _, tc := range tests {
		got, err := catalog.ParseBandwidth("bandwidth", tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseBandwidth(%q) = %d, %v; want %d, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && models.ErrorCode(err) != models.CodeValidation {
			t.Errorf("ParseBandwidth(%q): code %s", tc.in, models.ErrorCode(err))
		}
	}
	for mbps, want := range map[int]string{100: "100mbps", 1000: "1gbps", 1500: "1500mbps", 10000: "10gbps"} {
		if got := catalog.FormatBandwidth(mbps); got != want {
			t.Errorf("FormatBandwidth(%d) = %s, want %s", mbps, got, want)
		}
	}
}

func TestFindLocation(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		env    models.Environment
		in     catalog.LocationInput
		wantID string
		code   models.Code
	}{
		{"exact", models.EnvLive, austin, "loc_austin_congress", ""},
		{"other spellings and ZIP+4", models.EnvLive, catalog.LocationInput{Address: " 100  congress avenue.", City: "AUSTIN", State: "tx", Zip: "78701-1234"}, "loc_austin_congress", ""},
		{"another address", models.EnvLive, catalog.LocationInput{Address: "101 Congress Ave", City: "Austin", State: "TX", Zip: "78701"}, "", models.CodeLocationNotServiceable},
		{"sandbox site live", models.EnvLive, catalog.LocationInput{Address: "1 Sandbox Way", City: "Testville", State: "CA", Zip: "94000"}, "", models.CodeLocationNotServiceable},
		{"sandbox site in the sandbox", models.EnvTest, catalog.LocationInput{Address: "1 Sandbox Way", City: "Testville", State: "CA", Zip: "94000"}, "loc_sandbox_all", ""},
		{"live site in the sandbox", models.EnvTest, austin, "loc_austin_congress", ""},
		{"bad zip", models.EnvLive, catalog.LocationInput{Address: "x", City: "y", State: "TX", Zip: "1234"}, "", models.CodeValidation},
		{"bad state", models.EnvLive, catalog.LocationInput{Address: "x", City: "y", State: "ZZ", Zip: "12345"}, "", models.CodeValidation},
		{"missing fields", models.EnvLive, catalog.LocationInput{}, "", models.CodeValidation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			loc, err := catalog.NewStore(s).FindLocation(ctx, tc.env, tc.in)
			if tc.code != "" {
				if models.ErrorCode(err) != tc.code {
					t.Fatalf("want %s, got %v", tc.code, err)
				}
				return
			}
			if err != nil || loc.ID != tc.wantID {
				t.Fatalf("got %+v, %v; want %s", loc, err, tc.wantID)
			}
		})
	}
}

func TestCheckAvailability(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	denver := catalog.LocationInput{Address: "1700 Lincoln St", City: "Denver", State: "CO", Zip: "80203"}
	boise := catalog.LocationInput{Address: "800 W Main St", City: "Boise", State: "ID", Zip: "83702"}
	tests := []struct {
		name      string
		q         catalog.AvailabilityQuery
		errCode   models.Code // of CheckAvailability
		checkCode models.Code // of report.Check()
		types     []string    // services answered
	}{
		{"everything offered", catalog.AvailabilityQuery{Location: austin}, "", "", []string{"fiber_dedicated", "fiber_business", "mpls", "sdwan"}},
		{"only what the location offers", catalog.AvailabilityQuery{Location: denver}, "", "", []string{"fiber_business", "sdwan"}},
		{"by location id", catalog.AvailabilityQuery{LocationID: "loc_boise_main"}, "", "", []string{"fiber_business"}},
		{"not offered", catalog.AvailabilityQuery{Location: denver, ServiceTypes: []string{"fiber_dedicated"}}, "", models.CodeUnavailableAtLocation, []string{"fiber_dedicated"}},
		{"too much bandwidth", catalog.AvailabilityQuery{Location: boise, Bandwidth: "1gbps"}, "", models.CodeInsufficientBandwidth, []string{"fiber_business"}},
		{"mixed", catalog.AvailabilityQuery{Location: denver, ServiceTypes: []string{"fiber_dedicated", "sdwan"}, Bandwidth: "1gbps"}, "", "", []string{"fiber_dedicated", "sdwan"}},
		{"none offered of several", catalog.AvailabilityQuery{Location: boise, ServiceTypes: []string{"mpls", "sdwan"}}, "", models.CodeUnavailableAtLocation, []string{"mpls", "sdwan"}},
		{"outside the area", catalog.AvailabilityQuery{Location: catalog.LocationInput{Address: "1 Main St", City: "Nowhere", State: "TX", Zip: "79999"}}, models.CodeLocationNotServiceable, "", nil},
		{"unknown type", catalog.AvailabilityQuery{Location: austin, ServiceTypes: []string{"dsl"}}, models.CodeValidation, "", nil},
		{"bad bandwidth", catalog.AvailabilityQuery{Location: austin, Bandwidth: "fast"}, models.CodeValidation, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := catalog.NewStore(s).CheckAvailability(ctx, models.TenantScope("", models.EnvLive), tc.q)
			if tc.errCode != "" {
				if models.ErrorCode(err) != tc.errCode {
					t.Fatalf("want %s, got %v", tc.errCode, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range r.Services {
				got = append(got, a.Type.Name)
			}
			if !slices.Equal(got, tc.types) {
				t.Fatalf("services %v, want %v", got, tc.types)
			}
			err = r.Check()
			if tc.checkCode == "" && err != nil || tc.checkCode != "" && models.ErrorCode(err) != tc.checkCode {
				t.Fatalf("Check() = %v, want %q", err, tc.checkCode)
			}
		})
	}
	t.Run("alternatives", func(t *testing.T) {
		r, err := catalog.NewStore(s).CheckAvailability(ctx, models.TenantScope("", models.EnvLive), catalog.AvailabilityQuery{Location: denver, ServiceTypes: []string{"fiber_dedicated"}, Bandwidth: "1gbps"})
		if err != nil {
			t.Fatal(err)
		}
		e := models.AsError(r.Require("fiber_dedicated"))
		alts, _ := e.Details["alternatives"].([]catalog.Alternative)
		want := []catalog.Alternative{{ServiceType: "fiber_business", Available: true, Bandwidth: "1gbps"}, {ServiceType: "sdwan", Available: true, Bandwidth: "1gbps"}}
		if e.Code != models.CodeUnavailableAtLocation || !slices.Equal(alts, want) {
			t.Fatalf("got %v %+v", e, alts)
		}
	})
}

func TestPrepareInternetOrder(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "A")
	_, other := provisioningTenant(t, s, "B")
	valid := func(edit func(in *services.InternetInput)) services.InternetInput {
		in := services.InternetInput{AccountID: acct.ID, ServiceType: "fiber_dedicated", Bandwidth: "10gbps", Location: austin, SLA: "enterprise"}
		if edit != nil {
			edit(&in)
		}
		return in
	}
	tests := []struct {
		name string
		in   services.InternetInput
		code models.Code
	}{
		{"valid", valid(nil), ""},
		{"explicit monthly", valid(func(in *services.InternetInput) { in.BillingCycle = "monthly" }), ""},
		{"other tenant's account", valid(func(in *services.InternetInput) { in.AccountID = other.ID }), models.CodeValidation},
		{"annual", valid(func(in *services.InternetInput) { in.BillingCycle = "annual" }), models.CodeValidation},
		{"network type", valid(func(in *services.InternetInput) { in.ServiceType = "sdwan" }), models.CodeValidation},
		{"bandwidth not in catalog", valid(func(in *services.InternetInput) { in.Bandwidth = "2gbps" }), models.CodeValidation},
		{"sla not offered", valid(func(in *services.InternetInput) { in.ServiceType, in.Bandwidth = "fiber_business", "1gbps" }), models.CodeValidation},
		{"location outside the area", valid(func(in *services.InternetInput) { in.Location.Zip = "78799" }), models.CodeLocationNotServiceable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, scope, err := services.NewStore(s).PrepareInternetOrder(ctx, p, tc.in)
			if tc.code != "" {
				if models.ErrorCode(err) != tc.code {
					t.Fatalf("want %s, got %v", tc.code, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if scope.OrganizationID != p.OrganizationID || o.LocationID != "loc_austin_congress" || o.BandwidthMbps != 10000 ||
				o.CatalogServiceID != "internet-fiber-dedicated" || o.Kind != catalog.KindInternet || o.BillingCycle != "monthly" {
				t.Fatalf("order %+v scope %+v", o, scope)
			}
			if err := services.NewStore(s).ValidateOrder(ctx, scope, o); err != nil {
				t.Fatalf("a prepared order must re-validate: %v", err)
			}
		})
	}
}

func TestInventoryAllocationsAreIdempotent(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := provisioningTenant(t, s, "A")
	scope := p.OwnScope()
	req := func(op string, mbps int) catalog.AllocationRequest {
		return catalog.AllocationRequest{OperationID: op, ServiceID: "svc_" + op, LocationID: "loc_boise_main", ServiceType: "fiber_business", Mbps: mbps}
	}
	allocated := func() int {
		t.Helper()
		c, err := catalog.NewStore(s).Capacity(ctx, models.EnvLive, "loc_boise_main", "fiber_business")
		if err != nil {
			t.Fatal(err)
		}
		return c.AllocatedMbps
	}

	first, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req("op1", 300))
	if err != nil {
		t.Fatal(err)
	}
	again, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req("op1", 300))
	if err != nil || again.ID != first.ID || allocated() != 300 {
		t.Fatalf("a repeated reservation must return the first: %+v %v, allocated %d", again, err, allocated())
	}
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req("op2", 300)); models.ErrorCode(err) != models.CodeInsufficientBandwidth {
		t.Fatalf("want INSUFFICIENT_BANDWIDTH, got %v", err)
	}
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, catalog.AllocationRequest{OperationID: "op3", LocationID: "loc_boise_main", ServiceType: "mpls", Mbps: 10}); models.ErrorCode(err) != models.CodeUnavailableAtLocation {
		t.Fatalf("want SERVICE_UNAVAILABLE_AT_LOCATION, got %v", err)
	}
	if allocated() != 300 {
		t.Fatalf("failed reservations must not allocate: %d", allocated())
	}

	ip1, err := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op1", 0))
	if err != nil {
		t.Fatal(err)
	}
	ip1again, _ := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op1", 0))
	ip2, err := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op2", 0))
	if err != nil || ip1.CIDR != ip1again.CIDR || ip1.CIDR == ip2.CIDR || ip1.CIDR != "100.64.0.0/29" || ip1.Gateway != "100.64.0.1" || ip2.CIDR != "100.64.0.8/29" {
		t.Fatalf("IP blocks %s %s %s, %v", ip1.CIDR, ip1again.CIDR, ip2.CIDR, err)
	}
	v1, _ := catalog.NewStore(s).AllocateVLAN(ctx, scope, req("op1", 0))
	v2, _ := catalog.NewStore(s).AllocateVLAN(ctx, scope, req("op2", 0))
	if v1.VLANID != 100 || v2.VLANID != 101 {
		t.Fatalf("VLANs %d %d", v1.VLANID, v2.VLANID)
	}

	n, err := catalog.NewStore(s).ReleaseAllocations(ctx, scope, "op1")
	if err != nil || n != 3 || allocated() != 0 {
		t.Fatalf("release: %d %v, allocated %d", n, err, allocated())
	}
	if n, err := catalog.NewStore(s).ReleaseAllocations(ctx, scope, "op1"); err != nil || n != 0 || allocated() != 0 {
		t.Fatalf("second release: %d %v, allocated %d", n, err, allocated())
	}
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req("op1", 300)); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("reserving again after release: %v", err)
	}
	ip3, _ := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op4", 0))
	if ip3.CIDR != "100.64.0.0/29" {
		t.Fatalf("a released block is reused first: %s", ip3.CIDR)
	}
	// A gap between blocks in use is filled before the end; with no gap
	// the next block follows the last.
	if ip, _ := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op5", 0)); ip.CIDR != "100.64.0.16/29" {
		t.Fatalf("third block %s", ip.CIDR)
	}
	if n, _ := catalog.NewStore(s).ReleaseAllocations(ctx, scope, "op2", catalog.AllocIPBlock); n != 1 {
		t.Fatalf("release of op2's block released %d", n)
	}
	if ip, _ := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op6", 0)); ip.CIDR != "100.64.0.8/29" {
		t.Fatalf("the gap's block %s", ip.CIDR)
	}
	if ip, _ := catalog.NewStore(s).AllocateIPBlock(ctx, scope, req("op7", 0)); ip.CIDR != "100.64.0.24/29" {
		t.Fatalf("the block after the last %s", ip.CIDR)
	}
	if n, _ := catalog.NewStore(s).ReleaseAllocations(ctx, scope, "op2", catalog.AllocVLAN); n != 1 {
		t.Fatalf("release by kind released %d", n)
	}

	t.Run("sandbox has its own inventory", func(t *testing.T) {
		test := models.TenantScope(p.OrganizationID, models.EnvTest)
		ip, err := catalog.NewStore(s).AllocateIPBlock(ctx, test, req("op9", 0))
		if err != nil || ip.CIDR != "198.18.0.0/29" {
			t.Fatalf("%+v %v", ip, err)
		}
	})

	t.Run("each organization's sandbox is its own", func(t *testing.T) {
		q, _ := provisioningTenant(t, s, "B")
		low := func(op string, mbps int) catalog.AllocationRequest {
			return catalog.AllocationRequest{OperationID: op, ServiceID: "svc_" + op, LocationID: "loc_sandbox_low_capacity", ServiceType: "fiber_dedicated", Mbps: mbps}
		}
		a, b := models.TenantScope(p.OrganizationID, models.EnvTest), models.TenantScope(q.OrganizationID, models.EnvTest)
		for _, sc := range []models.Scope{a, b} { // both get the whole 100 Mbps and the same first IP block and VLAN
			if _, err := catalog.NewStore(s).ReserveCapacity(ctx, sc, low("sb-"+sc.OrganizationID, 100)); err != nil {
				t.Fatal(err)
			}
			if v, err := catalog.NewStore(s).AllocateVLAN(ctx, sc, low("sb-"+sc.OrganizationID, 0)); err != nil || v.VLANID != 100 {
				t.Fatalf("VLAN %+v %v", v, err)
			}
		}
		if _, err := catalog.NewStore(s).ReserveCapacity(ctx, a, low("sb-more", 100)); models.ErrorCode(err) != models.CodeInsufficientBandwidth {
			t.Fatalf("A's sandbox is full: %v", err)
		}
		left, err := catalog.NewStore(s).AvailableMbps(ctx, a, "loc_sandbox_low_capacity", "fiber_dedicated")
		if err != nil || left != 0 {
			t.Fatalf("A has %d left, %v", left, err)
		}
		r, err := catalog.NewStore(s).CheckAvailability(ctx, a, catalog.AvailabilityQuery{LocationID: "loc_sandbox_low_capacity", ServiceTypes: []string{"fiber_dedicated"}})
		if err != nil || r.Check() == nil {
			t.Fatalf("availability in A's sandbox: %v %v", r, err)
		}
		if _, err := catalog.NewStore(s).ReleaseAllocations(ctx, a, "sb-"+a.OrganizationID); err != nil {
			t.Fatal(err)
		}
		if left, _ := catalog.NewStore(s).AvailableMbps(ctx, a, "loc_sandbox_low_capacity", "fiber_dedicated"); left != 100 {
			t.Fatalf("after release A has %d left", left)
		}
		if left, _ := catalog.NewStore(s).AvailableMbps(ctx, b, "loc_sandbox_low_capacity", "fiber_dedicated"); left != 0 {
			t.Fatalf("B's sandbox changed with A's: %d left", left)
		}
	})

	t.Run("sandbox availability of every type at once", func(t *testing.T) {
		// What the organization holds at a site, by service type, and
		// nothing of another organization's.
		q, _ := provisioningTenant(t, s, "C")
		a, c := models.TenantScope(p.OrganizationID, models.EnvTest), models.TenantScope(q.OrganizationID, models.EnvTest)
		all := func(op, typ string, mbps int) catalog.AllocationRequest {
			return catalog.AllocationRequest{OperationID: op, ServiceID: "svc_" + op, LocationID: "loc_sandbox_all", ServiceType: typ, Mbps: mbps}
		}
		for _, r := range []struct {
			sc      models.Scope
			op, typ string
			mbps    int
		}{{a, "all-1", "fiber_dedicated", 300}, {a, "all-2", "fiber_dedicated", 200}, {a, "all-3", "mpls", 1000}, {c, "all-4", "sdwan", 700}} {
			if _, err := catalog.NewStore(s).ReserveCapacity(ctx, r.sc, all(r.op, r.typ, r.mbps)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := catalog.NewStore(s).ReleaseAllocations(ctx, a, "all-2"); err != nil {
			t.Fatal(err)
		}
		r, err := catalog.NewStore(s).CheckAvailability(ctx, a, catalog.AvailabilityQuery{LocationID: "loc_sandbox_all"})
		if err != nil {
			t.Fatal(err)
		}
		for typ, want := range map[string]int{"fiber_dedicated": 1_000_000 - 300, "mpls": 1_000_000 - 1000, "sdwan": 1_000_000, "fiber_business": 1_000_000} {
			got, ok := r.Find(typ)
			if !ok || got.AvailableMbps != want {
				t.Errorf("%s: %d available (%v), want %d", typ, got.AvailableMbps, ok, want)
			}
			if left, _ := catalog.NewStore(s).AvailableMbps(ctx, a, "loc_sandbox_all", typ); left != want {
				t.Errorf("%s: AvailableMbps %d, the report %d", typ, left, want)
			}
		}
	})

	t.Run("concurrent retries allocate once", func(t *testing.T) {
		var wg sync.WaitGroup
		ids := make([]uint64, 8)
		errs := make([]error, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req("op-concurrent", 100))
				errs[i] = err
				if a != nil {
					ids[i] = a.ID
				}
			}()
		}
		wg.Wait()
		for i := range ids {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("attempt %d: %d, %v (first %d)", i, ids[i], errs[i], ids[0])
			}
		}
		if a := allocated(); a != 100 {
			t.Fatalf("allocated %d, want 100", a)
		}
	})
	t.Run("concurrent orders never oversell", func(t *testing.T) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := catalog.NewStore(s).ReserveCapacity(ctx, scope, req(fmt.Sprintf("op-race-%d", i), 100)); err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if models.ErrorCode(err) != models.CodeInsufficientBandwidth {
					t.Errorf("unexpected error %v", err)
				}
			}()
		}
		wg.Wait()
		if ok != 4 || allocated() != 500 {
			t.Fatalf("%d reservations succeeded, allocated %d; want 4 and 500", ok, allocated())
		}
	})
}

func TestOperationLifecycle(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "A")
	q, _ := provisioningTenant(t, s, "B")
	scope := p.OwnScope()
	op := operations.NewOperation("prov_lifecycle", operations.OpTypeProvisioning, "svc_x", p.ID, operations.ProvisioningSteps(false), nil)
	if err := operations.NewStore(s).CreateOperation(ctx, scope, op); err != nil {
		t.Fatal(err)
	}
	if _, err := operations.NewStore(s).GetOperation(ctx, q, op.ID); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
	reader := *p
	reader.Permissions = []string{"billing:read"}
	if _, err := operations.NewStore(s).GetOperation(ctx, &reader, op.ID); models.ErrorCode(err) != models.CodeInsufficientPermissions {
		t.Fatalf("without services:read: %v", err)
	}
	if _, err := operations.NewStore(s).BeginOperation(ctx, scope, op.ID, "run-1"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{operations.StepValidate, operations.StepReserveCapacity} {
		if err := operations.NewStore(s).StartStep(ctx, scope, op.ID, step); err != nil {
			t.Fatal(err)
		}
		if err := operations.NewStore(s).CompleteStep(ctx, scope, op.ID, step); err != nil {
			t.Fatal(err)
		}
	}
	if err := operations.NewStore(s).CompleteStep(ctx, scope, op.ID, operations.StepReserveCapacity); err != nil {
		t.Fatalf("completing twice: %v", err)
	}
	if err := operations.NewStore(s).StartStep(ctx, scope, op.ID, operations.StepConfigure); err != nil {
		t.Fatal(err)
	}
	got, _ := operations.NewStore(s).GetOperation(ctx, p, op.ID)
	if pr := got.Progress(); got.Status != operations.OpInProgress || got.RunID != "run-1" || pr.Total != 5 || pr.Completed != 2 || pr.Percent != 40 {
		t.Fatalf("in progress: %+v %+v", got, pr)
	}
	if err := operations.CheckCancellable(p, got); err != nil {
		t.Fatalf("a running operation is cancellable: %v", err)
	}
	fail := operations.FinishInput{Status: operations.OpFailed, FailedStep: operations.StepConfigure, Compensated: []string{operations.StepReserveCapacity},
		Error: &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "configure failed"}}
	done, err := operations.NewStore(s).FinishOperation(ctx, scope, op.ID, fail)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]operations.StepStatus{
		operations.StepValidate: operations.StepCompleted, operations.StepReserveCapacity: operations.StepCompensated, operations.StepConfigure: operations.StepFailed,
		operations.StepActivate: operations.StepSkipped, operations.StepRecordService: operations.StepSkipped,
	}
	for _, st := range done.Steps {
		if st.Status != want[st.Name] {
			t.Errorf("step %s is %s, want %s", st.Name, st.Status, want[st.Name])
		}
	}
	if done.Status != operations.OpFailed || done.FinishedAt == nil || done.Error.Code != models.CodeProvisioningFailed || done.Progress().Failed != 1 {
		t.Fatalf("failed: %+v", done)
	}
	if _, err := operations.NewStore(s).FinishOperation(ctx, scope, op.ID, fail); err != nil {
		t.Fatalf("finishing twice the same way: %v", err)
	}
	if _, err := operations.NewStore(s).FinishOperation(ctx, scope, op.ID, operations.FinishInput{Status: operations.OpCancelled}); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("finishing otherwise: %v", err)
	}
	if err := operations.NewStore(s).StartStep(ctx, scope, op.ID, operations.StepActivate); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a step after the end: %v", err)
	}
	if err := operations.CheckCancellable(p, done); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a failed operation cannot be cancelled: %v", err)
	}
	if _, err := operations.NewStore(s).FinishOperation(ctx, scope, op.ID, operations.FinishInput{Status: operations.OpCompleted}); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("completed is not a finish status: %v", err)
	}
	_ = acct
}

func TestCompleteProvisioningWritesTheOutboxEvent(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "A")
	o, scope, err := services.NewStore(s).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: acct.ID, ServiceType: "fiber_business", Bandwidth: "100mbps", Location: austin, SLA: "standard"})
	if err != nil {
		t.Fatal(err)
	}
	if err := operations.NewStore(s).CreateOperation(ctx, scope, operations.NewOperation("prov_outbox", operations.OpTypeProvisioning, "svc_outbox", p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).EnsureService(ctx, scope, "svc_outbox", "prov_outbox", o); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).CompleteProvisioning(ctx, scope, "prov_outbox", "svc_outbox"); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("pending cannot become operational: %v", err)
	}
	if evs, _ := eventlog.NewStore(s).EventsFor(ctx, scope, "svc_outbox"); len(evs) != 0 {
		t.Fatalf("a failed transition must not leave an event: %+v", evs)
	}
	if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, "svc_outbox", services.ServiceProvisioning); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		svc, err := services.NewStore(s).CompleteProvisioning(ctx, scope, "prov_outbox", "svc_outbox")
		if err != nil || svc.Status != services.ServiceOperational || svc.ActivatedAt == nil {
			t.Fatalf("%+v %v", svc, err)
		}
	}
	evs, err := eventlog.NewStore(s).EventsFor(ctx, scope, "svc_outbox")
	// The status move is reported as service.status_changed, then service.provisioned, both in the outbox.
	if err != nil || len(evs) != 2 || evs[0].Type != "service.status_changed" || evs[0].Data["from"] != "provisioning" ||
		evs[0].Data["to"] != "operational" || evs[0].Data["reason"] != "provisioned" || evs[0].Data["request_id"] != "prov_outbox" {
		t.Fatalf("events: %+v %v", evs, err)
	}
	if ev := evs[1]; ev.Type != eventlog.EventServiceProvisioned || ev.DispatchedAt != nil || !models.HasPrefix(ev.ID, "evt") ||
		ev.OrganizationID != p.OrganizationID || ev.Data["request_id"] != "prov_outbox" {
		t.Fatalf("events: %+v", evs)
	}
	op, _ := operations.NewStore(s).GetOperation(ctx, p, "prov_outbox")
	if op.Status != operations.OpCompleted || op.Result["service_id"] != "svc_outbox" || op.Progress().Percent != 100 {
		t.Fatalf("operation: %+v", op)
	}
	if err := operations.CheckCancellable(p, op); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a completed operation cannot be cancelled: %v", err)
	}
}

func TestServiceStatusFromTelemetry(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, acct := provisioningTenant(t, s, "A")
	o, scope, err := services.NewStore(s).PrepareInternetOrder(ctx, p, services.InternetInput{AccountID: acct.ID, ServiceType: "fiber_dedicated", Bandwidth: "1gbps", Location: austin, SLA: "enterprise"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(s).EnsureService(ctx, scope, "svc_tel", "prov_tel", o); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pendingSample := &telemetry.TelemetrySample{ServiceID: "svc_tel", At: now.Add(-time.Minute), Up: true, LatencyMs: 5}
	if err := telemetry.NewStore(s).RecordTelemetry(ctx, scope, pendingSample); err != nil {
		t.Fatal(err)
	}
	r, err := telemetry.NewStore(s).StatusReport(ctx, p, "svc_tel", now)
	if err != nil || r.UptimePercentage != nil || r.Metrics != nil || r.Connectivity != telemetry.HealthUnknown {
		t.Fatalf("a service not yet operational has no measurements: %+v %v", r, err)
	}
	if err := s.In(ctx, scope).Delete(pendingSample).Error; err != nil {
		t.Fatal(err)
	}
	for _, to := range []services.ServiceStatus{services.ServiceProvisioning, services.ServiceOperational} {
		if _, err := services.NewStore(s).TransitionService(ctx, scope, nil, "svc_tel", to); err != nil {
			t.Fatal(err)
		}
	}
	r, err = telemetry.NewStore(s).StatusReport(ctx, p, "svc_tel", now)
	if err != nil || r.UptimePercentage != nil || r.Metrics != nil || r.LastIncident != nil || r.Connectivity != telemetry.HealthUnknown {
		t.Fatalf("without telemetry: %+v %v", r, err)
	}
	sample := func(ago time.Duration, up bool, latency, jitter, loss, util float64, alerts int) *telemetry.TelemetrySample {
		return &telemetry.TelemetrySample{ServiceID: "svc_tel", At: now.Add(-ago), Up: up, LatencyMs: latency, JitterMs: jitter, PacketLossPct: loss, UtilizationPct: util, SecurityAlerts: alerts}
	}
	err = telemetry.NewStore(s).RecordTelemetry(ctx, scope,
		sample(40*24*time.Hour, false, 0, 0, 100, 0, 0), // outside the uptime window, but the last incident before the others
		sample(3*time.Hour, false, 0, 0, 100, 0, 0),
		sample(2*time.Hour, true, 10, 1, 0, 50, 1),
		sample(50*time.Minute, true, 10, 1, 0.01, 40, 0),
		sample(10*time.Minute, true, 30, 2, 0.03, 60, 0),
		sample(-time.Hour, false, 0, 0, 100, 0, 0), // in the future: ignored
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err = telemetry.NewStore(s).StatusReport(ctx, p, "svc_tel", now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples != 4 || *r.UptimePercentage != 75 || !r.LastIncident.Equal(now.Add(-3*time.Hour)) {
		t.Fatalf("uptime %v, last incident %v, samples %d", *r.UptimePercentage, r.LastIncident, r.Samples)
	}
	want := telemetry.PerformanceMetrics{LatencyMs: 20, JitterMs: 1.5, PacketLoss: 0.02, BandwidthUtilization: 50}
	if *r.Metrics != want {
		t.Fatalf("metrics %+v, want %+v", *r.Metrics, want)
	}
	// enterprise: latency 20 and jitter 3 allowed; 20 is not above the target.
	if r.Connectivity != telemetry.HealthHealthy || r.Performance != telemetry.HealthHealthy || r.Security != telemetry.HealthWarning {
		t.Fatalf("health %s %s %s", r.Connectivity, r.Performance, r.Security)
	}
	q, _ := provisioningTenant(t, s, "B")
	if _, err := telemetry.NewStore(s).StatusReport(ctx, q, "svc_tel", now); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
}

func TestSeedProvisioningIsIdempotent(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := provisioningTenant(t, s, "A")
	if _, err := catalog.NewStore(s).ReserveCapacity(ctx, p.OwnScope(), catalog.AllocationRequest{OperationID: "op", LocationID: "loc_austin_congress", ServiceType: "mpls", Mbps: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.NewStore(s).Seed(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.NewStore(s).Capacity(ctx, models.EnvLive, "loc_austin_congress", "mpls")
	if err != nil || c.AllocatedMbps != 100 || c.CapacityMbps != 5000 {
		t.Fatalf("a second seed must keep allocations: %+v %v", c, err)
	}
	if _, err := catalog.NewStore(s).Capacity(ctx, models.EnvLive, "loc_sandbox_all", "mpls"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("sandbox locations have no live capacity: %v", err)
	}
	tpls, _ := catalog.NewStore(s).Templates(ctx, models.EnvLive)
	all, _ := catalog.NewStore(s).Templates(ctx, models.EnvTest)
	if len(tpls) != 5 || len(all) != 10 {
		t.Fatalf("templates: %d live, %d sandbox", len(tpls), len(all))
	}
}
