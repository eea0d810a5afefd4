package api_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// categoryBodies returns a valid create body of each kind, by collection path.
func categoryBodies(tn tenant) map[string]map[string]any {
	return map[string]map[string]any{
		"/v1/services/connectivity/internet": {"account_id": tn.account.ID, "service_type": "fiber_business", "bandwidth": "500mbps",
			"location": map[string]any{"address": "1500 Main St", "city": "Dallas", "state": "TX", "zip": "75201"}, "sla": "standard", "billing_cycle": "monthly",
			"contacts": map[string]any{"technical": "noc@example.com"}},
		"/v1/services/connectivity/networks": {"network_type": "mpls", "topology": "hub_and_spoke", "bandwidth": "100mbps", "redundancy": true,
			"locations": []any{map[string]any{"id": "loc_chicago_wacker", "address": "Branch Chicago", "role": "spoke"}, map[string]any{"id": "loc_austin_congress", "address": "HQ", "role": "hub"}}},
		"/v1/services/voice/systems": {"system_type": "cloud_pbx", "features": []string{"auto_attendant", "voicemail_to_email", "conference_bridge"}, "users": 50,
			"phone_numbers": []any{map[string]any{"type": "local", "area_code": "512", "quantity": 10}, map[string]any{"type": "toll_free", "quantity": 2}},
			"integrations":  []string{"crm"}},
		"/v1/services/voice/contact-centers": {"center_type": "omnichannel", "channels": []string{"voice", "chat", "email", "sms"}, "agent_count": 25,
			"features":    []string{"intelligent_routing", "real_time_analytics", "call_recording", "quality_monitoring"},
			"ai_features": map[string]any{"sentiment_analysis": true, "auto_transcription": true, "predictive_dialing": false}},
		"/v1/services/cloud/infrastructure": {"deployment_type": "multi_cloud", "providers": []string{"aws", "azure"}, "regions": []string{"us-east-1", "eu-west-1"},
			"resources": []any{
				map[string]any{"type": "virtual_machine", "specifications": map[string]any{"cpu": 4, "memory": "16GB", "storage": "500GB", "os": "ubuntu-22.04"}, "quantity": 3},
				map[string]any{"type": "load_balancer", "tier": "standard", "ssl_termination": true}},
			"auto_scaling": map[string]any{"enabled": true, "min_instances": 2, "max_instances": 10}},
		"/v1/services/cloud/platforms": {"runtime": "nodejs20", "region": "us-west-2", "environments": []string{"production", "staging"}, "instance_size": "medium",
			"instances": map[string]any{"min": 2, "max": 6}, "custom_domains": []string{"app.example.com"}, "database": map[string]any{"engine": "postgres", "storage": "100GB"}},
		"/v1/services/security/managed": {"service_type": "managed_soc", "coverage": "24x7x365",
			"services": []string{"threat_monitoring", "incident_response", "vulnerability_management", "compliance_reporting"}, "threat_intelligence": true,
			"compliance_frameworks": []string{"soc2", "hipaa", "pci_dss"}, "response_time": map[string]any{"critical": "15_minutes", "high": "1_hour", "medium": "4_hours"}},
		"/v1/services/security/infrastructure": {"infrastructure_type": "next_gen_firewall", "throughput": "1gbps", "location_id": "loc_austin_congress",
			"high_availability": true, "features": []string{"ips", "ssl_inspection"}, "protected_networks": []string{"10.20.0.0/16", "192.168.10.0/24"}},
		"/v1/services/ai/platforms": {"platform_type": "enterprise_ai", "capabilities": []string{"natural_language_processing", "computer_vision", "predictive_analytics"},
			"compute_tier": "gpu_optimized", "data_sources": []string{"data_warehouse", "crm"},
			"models": []any{map[string]any{"name": "churn-predictor", "type": "classification", "framework": "pytorch"}, map[string]any{"name": "support-bot", "type": "language_model", "framework": "huggingface"}}},
	}
}

func TestCategoryCollectionsStartProvisioning(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	var input workflows.ProvisioningInput
	var started client.StartWorkflowOptions
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ProvisioningWorkflow, mock.Anything).
		Run(func(args mock.Arguments) {
			started = args.Get(1).(client.StartWorkflowOptions)
			input = args.Get(3).(workflows.ProvisioningInput)
		}).Return(mocks.NewWorkflowRun(t), nil)
	wantKind := map[string]string{
		"/v1/services/connectivity/internet": "internet", "/v1/services/connectivity/networks": "network", "/v1/services/voice/systems": "phone_system",
		"/v1/services/voice/contact-centers": "contact_center", "/v1/services/cloud/infrastructure": "cloud_infrastructure",
		"/v1/services/cloud/platforms": "cloud_platform", "/v1/services/security/managed": "managed_security",
		"/v1/services/security/infrastructure": "security_infrastructure", "/v1/services/ai/platforms": "ai_platform",
	}
	for path, body := range categoryBodies(a) {
		t.Run(path, func(t *testing.T) {
			var acc operationDoc
			res := h.do("POST", strings.Replace(path, "/v1/", "/api/v1/", 1), a.liveKey, body)
			res.decode(202, &acc)
			o := input.Order
			if !models.HasPrefix(acc.RequestID, "prov") || acc.Type != "provisioning" || input.ServiceID != acc.ServiceID || o.Kind != wantKind[path] ||
				o.AccountID != a.account.ID || o.MonthlyCharge <= 0 || o.Currency != "USD" || o.Spec == nil {
				t.Fatalf("order %+v (answer %s)", o, res.body)
			}
			if kw, _ := started.TypedSearchAttributes.GetKeyword(workflows.OperationTypeKey); kw != "provisioning" {
				t.Fatalf("OperationType %q", kw)
			}
			plan := o.Plan()
			count := map[catalog.AllocationKind]int{}
			for _, r := range plan {
				count[r.Kind]++
			}
			switch o.Kind {
			case "network":
				if len(o.Sites) != 2 || o.Sites[0].Role != "hub" || o.Sites[0].LocationID != "loc_austin_congress" || count[catalog.AllocCapacity] != 2 || count[catalog.AllocVLAN] != 2 || o.Quantity != 2 {
					t.Fatalf("network order %+v plan %+v", o, plan)
				}
			case "phone_system":
				if count[catalog.AllocPhoneNumber] != 12 || o.Quantity != 50 || len(o.Features) != 3 {
					t.Fatalf("phone order %+v plan %+v", o, plan)
				}
			case "contact_center":
				if count[catalog.AllocPhoneNumber] != 1 || o.Quantity != 25 {
					t.Fatalf("contact center order %+v", o)
				}
			case "cloud_infrastructure":
				if len(o.Compute) != 2 || o.Compute[0].Units != 12 || !o.PublicIP || len(o.Deployment) != 2 || o.Quantity != 3 {
					t.Fatalf("cloud order %+v", o)
				}
			case "cloud_platform":
				if len(o.Compute) != 1 || o.Compute[0].Units != 2*2*2 || o.Compute[0].Region != "us-west-2" || len(o.Deployment) != 2 {
					t.Fatalf("platform order %+v", o)
				}
			case "security_infrastructure":
				if o.LocationID != "loc_austin_congress" || o.Bandwidth != "1gbps" || o.Quantity != 2 || count[catalog.AllocVLAN] != 2 || count[catalog.AllocIPBlock] != 1 {
					t.Fatalf("security order %+v plan %+v", o, plan)
				}
			case "ai_platform":
				if len(o.Compute) != 1 || o.Compute[0].Pool != "gpu" || o.Compute[0].Units != 2 || len(o.Deployment) != 2 {
					t.Fatalf("ai order %+v", o)
				}
			case "internet":
				if o.TechnicalContact != "noc@example.com" || o.LocationID != "loc_dallas_main" || count[catalog.AllocCapacity] != 1 {
					t.Fatalf("internet order %+v", o)
				}
			}
		})
	}
	t.Run("POST /v1/services with type and configuration", func(t *testing.T) {
		var acc operationDoc
		h.do("POST", "/v1/services", a.liveKey, map[string]any{"type": "phone_system", "name": "Front desk",
			"configuration": map[string]any{"system_type": "cloud_pbx", "users": 5}}).decode(202, &acc)
		if input.Order.Kind != "phone_system" || input.Order.Name != "Front desk" || input.Order.Quantity != 5 {
			t.Fatalf("order %+v", input.Order)
		}
		h.do("POST", "/v1/services", a.liveKey, map[string]any{"type": "dialup", "configuration": map[string]any{}}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/services", a.liveKey, map[string]any{"type": "phone_system", "service_template": "internet-dedicated-1g"}).wantError(400, "VALIDATION_ERROR")
		h.do("POST", "/v1/services", a.liveKey, map[string]any{}).wantError(400, "VALIDATION_ERROR")
	})
}

func TestCategoryValidation(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	bodies := categoryBodies(a)
	edit := func(path string, fn func(m map[string]any)) map[string]any {
		raw, _ := json.Marshal(bodies[path])
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		fn(m)
		return m
	}
	const (
		network  = "/v1/services/connectivity/networks"
		phone    = "/v1/services/voice/systems"
		center   = "/v1/services/voice/contact-centers"
		cloud    = "/v1/services/cloud/infrastructure"
		platform = "/v1/services/cloud/platforms"
		soc      = "/v1/services/security/managed"
		firewall = "/v1/services/security/infrastructure"
		ai       = "/v1/services/ai/platforms"
	)
	tests := []struct {
		name  string
		path  string
		body  map[string]any
		field string
	}{
		{"two hubs", network, edit(network, func(m map[string]any) { m["locations"].([]any)[0].(map[string]any)["role"] = "hub" }), "locations"},
		{"no spoke", network, edit(network, func(m map[string]any) { m["locations"] = m["locations"].([]any)[1:] }), "locations"},
		{"unknown site", network, edit(network, func(m map[string]any) { m["locations"].([]any)[0].(map[string]any)["id"] = "loc_atlantis" }), "locations[0].id"},
		{"unknown topology", network, edit(network, func(m map[string]any) { m["topology"] = "ring" }), "topology"},
		{"uppercase bandwidth", network, edit(network, func(m map[string]any) { m["bandwidth"] = "100Mbps" }), "bandwidth"},
		{"no users", phone, edit(phone, func(m map[string]any) { delete(m, "users") }), "users"},
		{"bad area code", phone, edit(phone, func(m map[string]any) { m["phone_numbers"].([]any)[0].(map[string]any)["area_code"] = "12" }), "phone_numbers[0].area_code"},
		{"toll-free area code", phone, edit(phone, func(m map[string]any) { m["phone_numbers"].([]any)[1].(map[string]any)["area_code"] = "800" }), "phone_numbers[1].area_code"},
		{"unknown feature", phone, edit(phone, func(m map[string]any) { m["features"] = []string{"fax_to_email"} }), "features[0]"},
		{"unknown channel", center, edit(center, func(m map[string]any) { m["channels"] = []string{"voice", "fax"} }), "channels[1]"},
		{"omnichannel with one channel", center, edit(center, func(m map[string]any) { m["channels"] = []string{"chat"} }), "channels"},
		{"transcription without voice", center, edit(center, func(m map[string]any) { m["channels"], m["features"] = []string{"chat", "email"}, []string{} }), "ai_features.auto_transcription"},
		{"min above max", cloud, edit(cloud, func(m map[string]any) {
			m["auto_scaling"] = map[string]any{"enabled": true, "min_instances": 5, "max_instances": 3}
		}), "auto_scaling"},
		{"memory without unit", cloud, edit(cloud, func(m map[string]any) {
			m["resources"].([]any)[0].(map[string]any)["specifications"].(map[string]any)["memory"] = "16"
		}), "resources[0].specifications.memory"},
		{"multi_cloud with one provider", cloud, edit(cloud, func(m map[string]any) { m["providers"] = []string{"aws"} }), "providers"},
		{"unknown region", cloud, edit(cloud, func(m map[string]any) { m["regions"] = []string{"mars-north-1"} }), "regions[0]"},
		{"no virtual machine", cloud, edit(cloud, func(m map[string]any) { m["resources"] = m["resources"].([]any)[1:] }), "resources"},
		{"instance size", platform, edit(platform, func(m map[string]any) { m["instance_size"] = "huge" }), "instance_size"},
		{"environment name", platform, edit(platform, func(m map[string]any) { m["environments"] = []string{"Prod!"} }), "environments[0]"},
		{"response time format", soc, edit(soc, func(m map[string]any) { m["response_time"].(map[string]any)["critical"] = "15 minutes" }), "response_time.critical"},
		{"response time order", soc, edit(soc, func(m map[string]any) { m["response_time"].(map[string]any)["high"] = "10_minutes" }), "response_time.high"},
		{"compliance without frameworks", soc, edit(soc, func(m map[string]any) { m["compliance_frameworks"] = []string{} }), "compliance_frameworks"},
		{"cidr host bits", firewall, edit(firewall, func(m map[string]any) { m["protected_networks"] = []string{"10.20.0.1/16"} }), "protected_networks[0]"},
		{"cidr overlap", firewall, edit(firewall, func(m map[string]any) { m["protected_networks"] = []string{"10.0.0.0/8", "10.20.0.0/16"} }), "protected_networks[1]"},
		{"not a cidr", firewall, edit(firewall, func(m map[string]any) { m["protected_networks"] = []string{"intranet"} }), "protected_networks[0]"},
		{"both locations", firewall, edit(firewall, func(m map[string]any) {
			m["location"] = map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"}
		}), "location"},
		{"vision on cpu", ai, edit(ai, func(m map[string]any) { m["compute_tier"] = "cpu_standard" }), "compute_tier"},
		{"duplicate model", ai, edit(ai, func(m map[string]any) {
			m["models"] = []any{map[string]any{"name": "m", "type": "classification", "framework": "pytorch"}, map[string]any{"name": "m", "type": "regression", "framework": "xgboost"}}
		}), "models[1].name"},
		{"contact e-mail", ai, edit(ai, func(m map[string]any) { m["contacts"] = map[string]any{"technical": "not-an-address"} }), "contacts.technical"},
		{"another tenant's account", phone, edit(phone, func(m map[string]any) { m["account_id"] = h.tenants[1].account.ID }), "account_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", tc.path, a.liveKey, tc.body).wantError(400, "VALIDATION_ERROR")
			raw, _ := json.Marshal(e.Error.Details["fields"])
			if !strings.Contains(string(raw), `"field":"`+tc.field+`"`) {
				t.Fatalf("want an issue for %s, got %s", tc.field, raw)
			}
		})
	}
	t.Run("availability errors", func(t *testing.T) {
		sandbox := a.testKey
		var acct struct {
			Account struct{ ID string } `json:"account"`
		}
		h.do("POST", "/v1/billing/accounts", sandbox, map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "b@example.com"}).decode(201, &acct)
		body := edit(cloud, func(m map[string]any) { m["regions"] = []string{"sandbox-exhausted-1"} })
		e := h.do("POST", cloud, sandbox, body).wantError(422, "SERVICE_UNAVAILABLE_AT_LOCATION")
		if e.Error.Details["region"] != "sandbox-exhausted-1" || e.Error.Details["resource"] != "vcpu" {
			t.Fatalf("details %v", e.Error.Details)
		}
		// Spec 7's details: service_type, location and alternatives (here
		// the regions that have the vCPUs).
		specShape := func(e errorBody, serviceType string, location map[string]any, alt func(map[string]any) bool) {
			t.Helper()
			d := e.Error.Details
			loc, _ := d["location"].(map[string]any)
			alts, _ := d["alternatives"].([]any)
			if d["service_type"] != serviceType || !reflect.DeepEqual(loc, location) || len(alts) == 0 {
				t.Fatalf("details %v", d)
			}
			for _, a := range alts {
				m, _ := a.(map[string]any)
				if _, ok := m["available"].(bool); !ok || m["service_type"] != serviceType || !alt(m) {
					t.Fatalf("alternative %v", a)
				}
			}
		}
		specShape(e, "vcpu", map[string]any{"region": "sandbox-exhausted-1"}, func(m map[string]any) bool {
			return m["region"] != "sandbox-exhausted-1" && m["region"] != "" && m["available"] == true && m["free"].(float64) >= 1
		})
		h.do("POST", cloud, a.liveKey, body).wantError(400, "VALIDATION_ERROR") // the sandbox region does not exist live
		numbers := edit(phone, func(m map[string]any) {
			m["phone_numbers"] = []any{map[string]any{"type": "local", "area_code": "999", "quantity": 3}}
		})
		e = h.do("POST", phone, sandbox, numbers).wantError(422, "SERVICE_UNAVAILABLE_AT_LOCATION")
		if e.Error.Details["available"] != float64(2) || e.Error.Details["area_code"] != "999" {
			t.Fatalf("details %v", e.Error.Details)
		}
		specShape(e, "local_numbers", map[string]any{"area_code": "999"}, func(m map[string]any) bool {
			return m["area_code"] != "999" && len(m["area_code"].(string)) == 3 && m["available"] == true
		})
		gpu := edit(ai, func(m map[string]any) { m["region"] = "sandbox-exhausted-1" })
		h.do("POST", ai, sandbox, gpu).wantError(422, "SERVICE_UNAVAILABLE_AT_LOCATION")
		lowCap := edit(network, func(m map[string]any) {
			m["network_type"] = "sdwan"
			m["locations"].([]any)[0].(map[string]any)["id"] = "loc_sandbox_low_capacity"
		})
		h.do("POST", network, sandbox, lowCap).wantError(422, "SERVICE_UNAVAILABLE_AT_LOCATION")
	})
	t.Run("needs services:write", func(t *testing.T) {
		var key keyAnswer
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
		h.do("POST", phone, key.APIKey.Key, bodies[phone]).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", phone, key.APIKey.Key, nil).decode(200, nil)
	})
}

// serviceFixture stores, without a workflow, an operational service of
// kind (the category body at path) for tn (live) and returns it.
func serviceFixture(t testing.TB, h *harness, tn tenant, path string, body map[string]any) *services.Service {
	t.Helper()
	ctx := context.Background()
	p := tenantPrincipal(tn)
	kind := ""
	for _, prof := range services.KindProfiles() {
		if "/v1"+prof.Collection == path {
			kind = prof.Kind
		}
	}
	kb, err := services.DecodeKindBody("body", kind, body)
	if err != nil {
		t.Fatal(err)
	}
	o, scope, err := services.NewStore(h.store).PrepareServiceOrder(ctx, p, kb)
	if err != nil {
		t.Fatal(err)
	}
	opID, svcID := models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	if err := operations.NewStore(h.store).CreateOperation(ctx, scope, operations.NewOperation(opID, operations.OpTypeProvisioning, svcID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).EnsureService(ctx, scope, svcID, opID, o); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).TransitionService(ctx, scope, nil, svcID, services.ServiceProvisioning); err != nil {
		t.Fatal(err)
	}
	svc, err := services.NewStore(h.store).CompleteProvisioning(ctx, scope, opID, svcID)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestCategoryListsAndInternetChanges(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	_, internetID := provisionedFixture(t, h, a)
	bodies := categoryBodies(a)
	phone := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	serviceFixture(t, h, h.tenants[1], "/v1/services/voice/systems", categoryBodies(h.tenants[1])["/v1/services/voice/systems"])

	for path, want := range map[string]string{"/v1/services/voice/systems": phone.ID, "/api/v1/services/connectivity/internet": internetID} {
		var list struct {
			Services []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"services"`
			Pagination struct{ Total int } `json:"pagination"`
		}
		h.do("GET", path, a.liveKey, nil).decode(200, &list)
		if len(list.Services) != 1 || list.Services[0].ID != want || list.Pagination.Total != 1 {
			t.Fatalf("%s: %+v", path, list)
		}
	}
	for _, prof := range services.KindProfiles() {
		h.do("GET", "/v1"+prof.Collection+"?status=operational&sort=name:asc&limit=10", a.liveKey, nil).decode(200, nil)
	}
	h.do("GET", "/v1/services/cloud/platforms?status=bogus", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")

	t.Run("a second internet service at the same location conflicts", func(t *testing.T) {
		body := map[string]any{"account_id": a.account.ID, "service_type": "fiber_business", "bandwidth": "100mbps", "sla": "standard",
			"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"}}
		e := h.do("POST", "/v1/services/connectivity/internet", a.liveKey, body).wantError(409, "SERVICE_CONFLICT")
		if e.Error.Details["existing_service_id"] != internetID {
			t.Fatalf("details %v", e.Error.Details)
		}
	})

	var change workflows.ServiceChangeInput
	var decom workflows.DecommissionInput
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ServiceChangeWorkflow, mock.Anything).
		Run(func(args mock.Arguments) { change = args.Get(3).(workflows.ServiceChangeInput) }).Return(mocks.NewWorkflowRun(t), nil).Once()
	var acc operationDoc
	h.do("PUT", "/v1/services/connectivity/internet/"+internetID, a.liveKey, map[string]any{"bandwidth": "10gbps", "sla": "enterprise", "features": []string{"ddos_protection"}}).decode(202, &acc)
	u := change.Update
	if !models.HasPrefix(acc.RequestID, "mod") || acc.Type != "modification" || u.Bandwidth != "10gbps" || u.BandwidthMbps != 10000 || len(u.Capacity) != 1 ||
		u.Capacity[0].LocationID != "loc_austin_congress" || *u.SLA != "enterprise" || u.Windowed() || u.MonthlyCharge <= 0 {
		t.Fatalf("change %+v", u)
	}
	var doc operationDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).decode(200, &doc)
	if len(doc.Steps) != 3 || doc.Steps[0].Name != "validate" || doc.Steps[1].Name != "reserve_capacity" || doc.Steps[2].Name != "apply" {
		t.Fatalf("steps %+v", doc.Steps)
	}
	// the change holds the service: another one conflicts until it ends
	h.do("PUT", "/v1/services/connectivity/internet/"+internetID, a.liveKey, map[string]any{"name": "HQ"}).wantError(409, "SERVICE_CONFLICT")
	h.do("DELETE", "/v1/services/connectivity/internet/"+internetID, a.liveKey, nil).wantError(409, "SERVICE_CONFLICT")
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	if err := services.NewStore(h.store).EndServiceOperation(ctx, scope, internetID, acc.RequestID, operations.FinishInput{Status: operations.OpCancelled}); err != nil {
		t.Fatal(err)
	}

	h.do("PUT", "/v1/services/connectivity/internet/"+internetID, a.liveKey, map[string]any{"bandwidth": "2gbps"}).wantError(400, "VALIDATION_ERROR")
	h.do("PUT", "/v1/services/connectivity/internet/"+internetID, a.liveKey, map[string]any{"bandwidth": "1gbps"}).wantError(400, "VALIDATION_ERROR") // changes nothing
	h.do("PUT", "/v1/services/connectivity/internet/"+phone.ID, a.liveKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")
	h.do("DELETE", "/v1/services/connectivity/internet/"+phone.ID, a.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("PUT", "/v1/services/connectivity/internet/"+internetID, h.tenants[1].liveKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")

	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.DecommissionWorkflow, mock.Anything).
		Run(func(args mock.Arguments) { decom = args.Get(3).(workflows.DecommissionInput) }).Return(mocks.NewWorkflowRun(t), nil).Once()
	h.do("DELETE", "/api/v1/services/connectivity/internet/"+internetID, a.liveKey, nil).decode(202, &acc)
	if !models.HasPrefix(acc.RequestID, "dec") || acc.Type != "decommission" || decom.ServiceID != internetID || decom.Plan.Migrate || decom.Scheduled {
		t.Fatalf("decommission %+v %+v", acc, decom)
	}
}
