package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

var austin = map[string]any{"address": "100 Congress Avenue", "city": "Austin", "state": "tx", "zip": "78701"}

// tenantPrincipal is a customer principal of tn acting on live data.
func tenantPrincipal(tn tenant) *models.Principal {
	return &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_fixture", OrganizationID: tn.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
}

// provisionedFixture stores, without a workflow, a completed provisioning of
// an operational internet service for tn (live), with one telemetry sample.
// It returns the operation's request id and the service id.
func provisionedFixture(t testing.TB, h *harness, tn tenant) (requestID, serviceID string) {
	t.Helper()
	ctx := context.Background()
	p := tenantPrincipal(tn)
	// a template order (1gbps fiber_dedicated, premium): several of them may share a location
	o, scope, err := services.NewStore(h.store).PrepareTemplateOrder(ctx, p, services.TemplateInput{
		ServiceTemplate: "internet-dedicated-1g", AccountID: tn.account.ID, LocationID: "loc_austin_congress",
	})
	if err != nil {
		t.Fatal(err)
	}
	requestID, serviceID = models.NewID(models.PrefixProvisioning), models.NewID(models.PrefixService)
	if err := operations.NewStore(h.store).CreateOperation(ctx, scope, operations.NewOperation(requestID, operations.OpTypeProvisioning, serviceID, p.ID, operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := operations.NewStore(h.store).BeginOperation(ctx, scope, requestID, "run-fixture"); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).EnsureService(ctx, scope, serviceID, requestID, o); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).TransitionService(ctx, scope, nil, serviceID, services.ServiceProvisioning); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).CompleteProvisioning(ctx, scope, requestID, serviceID); err != nil {
		t.Fatal(err)
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, simulator.Sample(serviceID, "premium", services.ServiceOperational, time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	return requestID, serviceID
}

// withTemporal replaces h's server by one using the mocked Temporal client.
func withTemporal(t *testing.T, h *harness) *mocks.Client {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	mc := mocks.NewClient(t)
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Temporal: mc})
	// GET adds live detail when Temporal answers; here it does not.
	mc.On("DescribeWorkflowExecution", mock.Anything, mock.Anything, mock.Anything).Return(nil, errors.New("unavailable")).Maybe()
	mc.On("QueryWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(nil, errors.New("unavailable")).Maybe()
	return mc
}

type operationDoc struct {
	RequestID string `json:"request_id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	StatusURL string `json:"status_url"`
	ServiceID string `json:"service_id"`
	CreatedAt string `json:"created_at"`
	Progress  struct {
		Total, Completed, Failed, Percent int
	} `json:"progress"`
	Steps []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"steps"`
	Result   map[string]any `json:"result"`
	Error    map[string]any `json:"error"`
	Workflow struct {
		ID    string `json:"id"`
		RunID string `json:"run_id"`
		UIURL string `json:"ui_url"`
	} `json:"workflow"`
	Metadata map[string]any `json:"metadata"`
}

func TestAvailability(t *testing.T) {
	h := newHarness(t)
	live, sandbox := h.tenants[0].liveKey, h.tenants[0].testKey
	loc := func(address, city, state, zip string) map[string]any {
		return map[string]any{"address": address, "city": city, "state": state, "zip": zip}
	}
	tests := []struct {
		name       string
		key        string
		method     string
		path       string
		body       any
		wantStatus int
		wantCode   string
		check      func(t *testing.T, raw []byte)
	}{
		{name: "every type offered at a location", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": austin}, wantStatus: 200, check: func(t *testing.T, raw []byte) {
				var out struct {
					Location struct {
						LocationID string `json:"location_id"`
					} `json:"location"`
					Services []struct {
						ServiceType string   `json:"service_type"`
						Available   bool     `json:"available"`
						Bandwidth   string   `json:"bandwidth"`
						Options     []string `json:"bandwidth_options"`
					} `json:"services"`
				}
				mustJSON(t, raw, &out)
				if out.Location.LocationID != "loc_austin_congress" || len(out.Services) != 4 {
					t.Fatalf("got %s", raw)
				}
				for _, s := range out.Services {
					if !s.Available || s.Bandwidth == "" || len(s.Options) == 0 {
						t.Fatalf("%s should be available with options: %s", s.ServiceType, raw)
					}
				}
			}},
		{name: "query form with a requirement", key: live, method: "GET",
			path:       "/api/v1/services/availability?address=1500+Main+Street&city=Dallas&state=TX&zip=75201&service_types=fiber_dedicated,sdwan&bandwidth_requirements=1gbps",
			wantStatus: 200, check: func(t *testing.T, raw []byte) {
				if !strings.Contains(string(raw), `"service_type":"sdwan"`) || strings.Contains(string(raw), "fiber_business") {
					t.Fatalf("want exactly the requested types: %s", raw)
				}
			}},
		{name: "some requested types unavailable", key: live, method: "POST", path: "/v1/services/availability/check",
			body:       map[string]any{"location": loc("1700 Lincoln St", "Denver", "CO", "80203"), "service_types": []string{"fiber_dedicated", "fiber_business"}},
			wantStatus: 200, check: func(t *testing.T, raw []byte) {
				if !strings.Contains(string(raw), `"reason":"SERVICE_UNAVAILABLE_AT_LOCATION"`) {
					t.Fatalf("want a reason for fiber_dedicated: %s", raw)
				}
			}},
		{name: "outside the service area", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": loc("9 Nowhere Rd", "Austin", "TX", "78799")}, wantStatus: 422, wantCode: "LOCATION_NOT_SERVICEABLE"},
		{name: "type not offered has alternatives", key: live, method: "POST", path: "/v1/services/availability/check",
			body:       map[string]any{"location": loc("1700 Lincoln St", "Denver", "CO", "80203"), "service_types": []string{"fiber_dedicated"}},
			wantStatus: 422, wantCode: "SERVICE_UNAVAILABLE_AT_LOCATION", check: func(t *testing.T, raw []byte) {
				var e errorBody
				mustJSON(t, raw, &e)
				alts, _ := e.Error.Details["alternatives"].([]any)
				if e.Error.Details["service_type"] != "fiber_dedicated" || e.Error.Details["location"] == nil || len(alts) != 2 {
					t.Fatalf("details: %s", raw)
				}
				first := alts[0].(map[string]any)
				if first["service_type"] != "fiber_business" || first["available"] != true || first["bandwidth"] != "1gbps" {
					t.Fatalf("alternative: %v", first)
				}
			}},
		{name: "not enough bandwidth", key: live, method: "POST", path: "/v1/services/availability/check",
			body:       map[string]any{"location": loc("800 W Main St", "Boise", "ID", "83702"), "service_types": []string{"fiber_business"}, "bandwidth_requirements": "1gbps"},
			wantStatus: 422, wantCode: "INSUFFICIENT_BANDWIDTH"},
		{name: "malformed zip", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": loc("100 Congress Ave", "Austin", "TX", "7870")}, wantStatus: 400, wantCode: "VALIDATION_ERROR"},
		{name: "uppercase bandwidth unit", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": austin, "bandwidth_requirements": "1Gbps"}, wantStatus: 400, wantCode: "VALIDATION_ERROR"},
		{name: "unknown service type", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": austin, "service_types": []string{"dialup"}}, wantStatus: 400, wantCode: "VALIDATION_ERROR"},
		{name: "sandbox locations do not exist live", key: live, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": loc("1 Sandbox Way", "Testville", "CA", "94000")}, wantStatus: 422, wantCode: "LOCATION_NOT_SERVICEABLE"},
		{name: "sandbox locations exist in the sandbox", key: sandbox, method: "POST", path: "/v1/services/availability/check",
			body: map[string]any{"location": loc("1 Sandbox Way", "Testville", "CA", "94000")}, wantStatus: 200},
		{name: "needs a credential", key: "", method: "GET", path: "/v1/services/availability?zip=78701", wantStatus: 401, wantCode: "UNAUTHENTICATED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(tc.method, tc.path, tc.key, tc.body)
			if tc.wantCode != "" {
				res.wantError(tc.wantStatus, tc.wantCode)
			} else {
				res.decode(tc.wantStatus, nil)
			}
			if tc.check != nil {
				tc.check(t, res.body)
			}
		})
	}
}

func mustJSON(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func TestInternetServiceValidation(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	valid := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{"account_id": a.account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps",
			"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"}, "sla": "premium", "billing_cycle": "monthly"}
		if edit != nil {
			edit(m)
		}
		return m
	}
	location := func(m map[string]any) map[string]any { return m["location"].(map[string]any) }
	tests := []struct {
		name       string
		body       map[string]any
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"missing account", valid(func(m map[string]any) { delete(m, "account_id") }), 400, "VALIDATION_ERROR", "account_id"},
		{"another tenant's account", valid(func(m map[string]any) { m["account_id"] = b.account.ID }), 400, "VALIDATION_ERROR", "account_id"},
		{"not an account id", valid(func(m map[string]any) { m["account_id"] = "cus_123" }), 400, "VALIDATION_ERROR", "account_id"},
		{"unknown service type", valid(func(m map[string]any) { m["service_type"] = "mpls" }), 400, "VALIDATION_ERROR", "service_type"},
		{"bandwidth unit in uppercase", valid(func(m map[string]any) { m["bandwidth"] = "1GBPS" }), 400, "VALIDATION_ERROR", "bandwidth"},
		{"bandwidth without unit", valid(func(m map[string]any) { m["bandwidth"] = "1000" }), 400, "VALIDATION_ERROR", "bandwidth"},
		{"bandwidth the catalog does not offer", valid(func(m map[string]any) { m["bandwidth"] = "200mbps" }), 400, "VALIDATION_ERROR", "bandwidth"},
		{"unknown sla", valid(func(m map[string]any) { m["sla"] = "gold" }), 400, "VALIDATION_ERROR", "sla"},
		{"sla the offer does not have", valid(func(m map[string]any) {
			m["service_type"], m["bandwidth"], m["sla"] = "fiber_business", "100mbps", "enterprise"
		}), 400, "VALIDATION_ERROR", "sla"},
		{"billing cycle", valid(func(m map[string]any) { m["billing_cycle"] = "weekly" }), 400, "VALIDATION_ERROR", "billing_cycle"},
		{"zip", valid(func(m map[string]any) { location(m)["zip"] = "ABCDE" }), 400, "VALIDATION_ERROR", "location.zip"},
		{"state", valid(func(m map[string]any) { location(m)["state"] = "Texas" }), 400, "VALIDATION_ERROR", "location.state"},
		{"empty address", valid(func(m map[string]any) { location(m)["address"] = " " }), 400, "VALIDATION_ERROR", "location.address"},
		{"unknown field", valid(func(m map[string]any) { m["colour"] = "blue" }), 400, "VALIDATION_ERROR", ""},
		{"location outside the area", valid(func(m map[string]any) { location(m)["zip"] = "78799" }), 422, "LOCATION_NOT_SERVICEABLE", ""},
		{"type not offered there", valid(func(m map[string]any) {
			m["location"] = map[string]any{"address": "1700 Lincoln St", "city": "Denver", "state": "CO", "zip": "80203"}
		}), 422, "SERVICE_UNAVAILABLE_AT_LOCATION", ""},
		{"bandwidth not left", valid(func(m map[string]any) {
			m["service_type"], m["sla"] = "fiber_business", "standard"
			m["location"] = map[string]any{"address": "800 W Main St", "city": "Boise", "state": "ID", "zip": "83702"}
		}), 422, "INSUFFICIENT_BANDWIDTH", ""},
		{"valid, but no workflow engine", valid(nil), 503, "DEPENDENCY_UNAVAILABLE", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", "/v1/services/connectivity/internet", a.liveKey, tc.body).wantError(tc.wantStatus, tc.wantCode)
			if tc.wantField != "" {
				raw, _ := json.Marshal(e.Error.Details["fields"])
				if !strings.Contains(string(raw), `"field":"`+tc.wantField+`"`) {
					t.Fatalf("want an issue for %s, got %s", tc.wantField, raw)
				}
			}
		})
	}
	t.Run("needs services:write", func(t *testing.T) {
		var key keyAnswer
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
		h.do("POST", "/v1/services/connectivity/internet", key.APIKey.Key, valid(nil)).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
}

func TestProvisioningStartsTheWorkflow(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	var started client.StartWorkflowOptions
	var input workflows.ProvisioningInput
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ProvisioningWorkflow, mock.Anything).
		Run(func(args mock.Arguments) {
			started = args.Get(1).(client.StartWorkflowOptions)
			input = args.Get(3).(workflows.ProvisioningInput)
		}).Return(mocks.NewWorkflowRun(t), nil).Once()

	body := map[string]any{"account_id": a.account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "location": austin, "sla": "premium"}
	res := h.do("POST", "/api/v1/services/connectivity/internet", a.liveKey, body)
	var acc operationDoc
	res.decode(202, &acc)
	if !models.HasPrefix(acc.RequestID, "prov") || acc.Status != "pending" || acc.Type != "provisioning" || !models.HasPrefix(acc.ServiceID, "svc") ||
		acc.CreatedAt == "" || acc.Metadata == nil || !strings.HasSuffix(acc.StatusURL, "/v1/operations/"+acc.RequestID) {
		t.Fatalf("202 body: %s", res.body)
	}
	if res.header.Get("Location") != acc.StatusURL {
		t.Fatalf("Location %q, want %q", res.header.Get("Location"), acc.StatusURL)
	}
	if started.ID != acc.RequestID || started.TaskQueue != workflows.TaskQueue || started.WorkflowIDReusePolicy != enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("start options: %+v", started)
	}
	sa := started.TypedSearchAttributes
	if org, _ := sa.GetKeyword(workflows.OrganizationIDKey); org != a.org.ID {
		t.Fatalf("OrganizationId %q", org)
	}
	if env, _ := sa.GetKeyword(workflows.EnvironmentKey); env != "live" {
		t.Fatalf("Environment %q", env)
	}
	if typ, _ := sa.GetKeyword(workflows.OperationTypeKey); typ != "provisioning" {
		t.Fatalf("OperationType %q", typ)
	}
	if rid, _ := sa.GetKeyword(workflows.ResourceIDKey); rid != acc.ServiceID {
		t.Fatalf("ResourceId %q", rid)
	}
	if input.RequestID != acc.RequestID || input.ServiceID != acc.ServiceID || input.Order.LocationID != "loc_austin_congress" ||
		input.Order.BandwidthMbps != 1000 || input.Order.Location.State != "TX" || input.Scheduled {
		t.Fatalf("workflow input: %+v", input)
	}

	var doc operationDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).decode(200, &doc)
	if doc.Status != "pending" || doc.Progress.Total != 5 || doc.Progress.Percent != 0 || len(doc.Steps) != 5 || doc.Steps[0].Name != "validate" ||
		doc.Workflow.ID != acc.RequestID || doc.Workflow.UIURL != "http://localhost:8233/namespaces/default/workflows/"+acc.RequestID {
		t.Fatalf("operation: %+v", doc)
	}
	var alias operationDoc
	h.do("GET", "/api/v1/services/provision/"+acc.RequestID+"/status", a.liveKey, nil).decode(200, &alias)
	if alias.RequestID != doc.RequestID || alias.Status != doc.Status {
		t.Fatalf("alias: %+v", alias)
	}
	h.do("GET", "/v1/operations/"+acc.RequestID, h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")

	t.Run("from a template, scheduled", func(t *testing.T) {
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ProvisioningWorkflow, mock.Anything).
			Run(func(args mock.Arguments) { input = args.Get(3).(workflows.ProvisioningInput) }).
			Return(mocks.NewWorkflowRun(t), nil).Once()
		when := time.Now().UTC().Add(72 * time.Hour).Truncate(time.Second)
		body := map[string]any{
			"service_template": "mpls-site-100m", "location_id": "loc_austin_congress",
			"customizations":      map[string]any{"bandwidth": "1gbps", "monitoring": "basic"},
			"deployment_schedule": map[string]any{"preferred_date": when.Format(time.RFC3339), "flexibility": "3_days"},
			"contacts":            map[string]any{"technical": "noc@example.com", "billing": "ap@example.com"},
		}
		var acc operationDoc
		h.do("POST", "/v1/services/provision", a.liveKey, body).decode(202, &acc)
		o := input.Order
		if !input.Scheduled || o.TemplateID != "mpls-site-100m" || o.ServiceType != "mpls" || o.Bandwidth != "1gbps" || o.Monitoring != "basic" ||
			o.Redundancy != "dual_path" || o.SLA != "premium" || o.AccountID != a.account.ID || !o.PreferredDate.Equal(when) || o.Location.City != "Austin" {
			t.Fatalf("order: %+v", o)
		}
		var doc operationDoc
		h.do("GET", acc.StatusURL[strings.Index(acc.StatusURL, "/v1/"):], a.liveKey, nil).decode(200, &doc)
		if len(doc.Steps) != 6 || doc.Steps[0].Name != "wait_for_schedule" {
			t.Fatalf("steps: %+v", doc.Steps)
		}
	})
	t.Run("template errors", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			body map[string]any
			code string
		}{
			{"unknown template", map[string]any{"service_template": "nope", "location_id": "loc_austin_congress"}, "VALIDATION_ERROR"},
			{"sandbox template live", map[string]any{"service_template": "sandbox-fail-configure", "location_id": "loc_austin_congress"}, "VALIDATION_ERROR"},
			{"no location", map[string]any{"service_template": "internet-dedicated-1g"}, "VALIDATION_ERROR"},
			{"bad redundancy", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_austin_congress", "customizations": map[string]any{"redundancy": "triple"}}, "VALIDATION_ERROR"},
			{"past date", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_austin_congress", "deployment_schedule": map[string]any{"preferred_date": "2020-01-01T00:00:00Z"}}, "VALIDATION_ERROR"},
			{"bad flexibility", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_austin_congress", "deployment_schedule": map[string]any{"flexibility": "soon"}}, "VALIDATION_ERROR"},
			{"bad contact", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_austin_congress", "contacts": map[string]any{"technical": "not-an-email"}}, "VALIDATION_ERROR"},
			{"unknown location id", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_atlantis"}, "VALIDATION_ERROR"},
			{"type not at location", map[string]any{"service_template": "internet-dedicated-1g", "location_id": "loc_denver_lincoln"}, "SERVICE_UNAVAILABLE_AT_LOCATION"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status := 400
				if tc.code != "VALIDATION_ERROR" {
					status = 422
				}
				h.do("POST", "/v1/services/provision", a.liveKey, tc.body).wantError(status, tc.code)
			})
		}
	})
	t.Run("templates list", func(t *testing.T) {
		var live, sandbox struct {
			Templates []struct{ ID string } `json:"templates"`
		}
		h.do("GET", "/v1/services/provision/templates", a.liveKey, nil).decode(200, &live)
		h.do("GET", "/v1/services/provision/templates", a.testKey, nil).decode(200, &sandbox)
		if len(live.Templates) != 5 || len(sandbox.Templates) != 10 {
			t.Fatalf("live %d templates, sandbox %d", len(live.Templates), len(sandbox.Templates))
		}
	})
	t.Run("workflow engine down", func(t *testing.T) {
		var id string
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ProvisioningWorkflow, mock.Anything).
			Run(func(args mock.Arguments) { id = args.Get(1).(client.StartWorkflowOptions).ID }).
			Return(nil, serviceerror.NewUnavailable("down")).Once()
		res := h.do("POST", "/v1/services/connectivity/internet", a.liveKey, body)
		res.wantError(503, "DEPENDENCY_UNAVAILABLE")
		if res.header.Get("Retry-After") == "" {
			t.Fatal("503 without Retry-After")
		}
		h.do("GET", "/v1/operations/"+id, a.liveKey, nil).wantError(404, "NOT_FOUND")
	})
}

func TestOperationCancel(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a, b := h.tenants[0], h.tenants[1]
	completed, _ := provisionedFixture(t, h, a)

	h.do("POST", "/v1/operations/"+completed+"/cancel", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	h.do("POST", "/v1/operations/"+completed+"/cancel", b.liveKey, nil).wantError(404, "NOT_FOUND")

	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	running := models.NewID(models.PrefixProvisioning)
	if err := operations.NewStore(h.store).CreateOperation(ctx, scope, operations.NewOperation(running, operations.OpTypeProvisioning, "svc_x", "ak_x", operations.ProvisioningSteps(false), nil)); err != nil {
		t.Fatal(err)
	}
	var key keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
	h.do("POST", "/v1/operations/"+running+"/cancel", key.APIKey.Key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")

	mc.On("CancelWorkflow", mock.Anything, running, "").Return(nil).Once()
	var doc operationDoc
	res := h.do("POST", "/v1/operations/"+running+"/cancel", a.liveKey, nil).decode(202, &doc)
	if doc.RequestID != running || res.header.Get("Location") == "" {
		t.Fatalf("cancel answer: %s", res.body)
	}
	if _, err := operations.NewStore(h.store).FinishOperation(ctx, scope, running, operations.FinishInput{Status: operations.OpCancelled}); err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/v1/operations/"+running+"/cancel", a.liveKey, nil).decode(200, &doc)
	if doc.Status != "cancelled" {
		t.Fatalf("status %s", doc.Status)
	}
}

// sseEvents parses a text/event-stream body into its operation documents.
func sseEvents(t *testing.T, raw []byte) []operationDoc {
	t.Helper()
	var out []operationDoc
	for _, block := range strings.Split(string(raw), "\n\n") {
		var event, data string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				event = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		if event == "operation" {
			var d operationDoc
			mustJSON(t, []byte(data), &d)
			out = append(out, d)
		}
	}
	return out
}

func TestOperationEventStream(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	completed, _ := provisionedFixture(t, h, a)

	res := h.do("GET", "/v1/operations/"+completed, a.liveKey, nil, "Accept", "text/event-stream")
	if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	events := sseEvents(t, res.body)
	if len(events) != 1 || events[0].Status != "completed" || events[0].RequestID != completed {
		t.Fatalf("events: %s", res.body)
	}
	h.do("GET", "/v1/operations/"+completed, h.tenants[1].liveKey, nil, "Accept", "text/event-stream").wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/operations/"+completed, "", nil, "Accept", "text/event-stream").wantError(401, "UNAUTHENTICATED")

	t.Run("follows changes until a terminal status", func(t *testing.T) {
		ctx := context.Background()
		scope := models.TenantScope(a.org.ID, models.EnvLive)
		id := models.NewID(models.PrefixProvisioning)
		if err := operations.NewStore(h.store).CreateOperation(ctx, scope, operations.NewOperation(id, operations.OpTypeProvisioning, "svc_x", "ak_x", operations.ProvisioningSteps(false), nil)); err != nil {
			t.Fatal(err)
		}
		go func() {
			// The stream ends only when the operation does; each change is a
			// separate write that the stream may or may not see in between.
			_, _ = operations.NewStore(h.store).BeginOperation(ctx, scope, id, "run")
			_ = operations.NewStore(h.store).StartStep(ctx, scope, id, operations.StepValidate)
			_, _ = operations.NewStore(h.store).FinishOperation(ctx, scope, id, operations.FinishInput{Status: operations.OpFailed, FailedStep: operations.StepValidate,
				Error: &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "validate failed"}})
		}()
		res := h.do("GET", "/api/v1/services/provision/"+id+"/status", a.liveKey, nil, "Accept", "text/event-stream")
		events := sseEvents(t, res.body)
		if len(events) == 0 {
			t.Fatalf("no events: %s", res.body)
		}
		last := events[len(events)-1]
		if last.Status != "failed" || last.Error["code"] != "PROVISIONING_FAILED" {
			t.Fatalf("last event: %+v", last)
		}
		for i := 1; i < len(events); i++ {
			if events[i].Status == events[i-1].Status && len(events[i].Steps) > 0 && events[i].Steps[0].Status == events[i-1].Steps[0].Status {
				t.Fatalf("event %d repeats the previous one", i)
			}
		}
	})
}

func TestServiceAndStatus(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	_, svcID := provisionedFixture(t, h, a)
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	now := time.Now().UTC()
	var samples []*telemetry.TelemetrySample
	for i := 1; i <= 9; i++ { // 9 samples over the last few hours, the 5th down
		status := services.ServiceOperational
		if i == 5 {
			status = services.ServiceDown
		}
		samples = append(samples, simulator.Sample(svcID, "premium", status, now.Add(-time.Duration(i)*20*time.Minute)))
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, samples...); err != nil {
		t.Fatal(err)
	}

	var st struct {
		ServiceID          string   `json:"service_id"`
		Status             string   `json:"status"`
		UptimePercentage   *float64 `json:"uptime_percentage"`
		LastIncident       *string  `json:"last_incident"`
		PerformanceMetrics *struct {
			LatencyMs            float64 `json:"latency_ms"`
			BandwidthUtilization float64 `json:"bandwidth_utilization"`
			PacketLoss           float64 `json:"packet_loss"`
			JitterMs             float64 `json:"jitter_ms"`
		} `json:"performance_metrics"`
		HealthChecks map[string]string `json:"health_checks"`
	}
	h.do("GET", "/v1/services/"+svcID+"/status", a.liveKey, nil).decode(200, &st)
	// 10 samples (the fixture's turn-up sample and these 9), one down.
	if st.ServiceID != svcID || st.Status != "operational" || st.UptimePercentage == nil || *st.UptimePercentage != 90 {
		t.Fatalf("status: %+v", st)
	}
	if st.LastIncident == nil || *st.LastIncident != models.Timestamp(samples[4].At) {
		t.Fatalf("last_incident %v, want %s", st.LastIncident, models.Timestamp(samples[4].At))
	}
	if st.PerformanceMetrics == nil || st.PerformanceMetrics.LatencyMs <= 0 || st.PerformanceMetrics.BandwidthUtilization <= 0 {
		t.Fatalf("metrics: %+v", st.PerformanceMetrics)
	}
	if st.HealthChecks["connectivity"] != "healthy" || st.HealthChecks["performance"] != "healthy" {
		t.Fatalf("health: %v", st.HealthChecks)
	}

	var svc struct {
		Service struct {
			ID      string `json:"id"`
			Status  string `json:"status"`
			Network struct {
				IPBlock string `json:"ip_block"`
			} `json:"network"`
			Location struct {
				LocationID string `json:"location_id"`
			} `json:"location"`
			ActivatedAt *string `json:"activated_at"`
		} `json:"service"`
	}
	h.do("GET", "/v1/services/"+svcID, a.liveKey, nil).decode(200, &svc)
	if svc.Service.ID != svcID || svc.Service.Status != "operational" || svc.Service.Location.LocationID != "loc_austin_congress" || svc.Service.ActivatedAt == nil {
		t.Fatalf("service: %+v", svc)
	}
	h.do("GET", "/v1/services/"+svcID+"/status", h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/services/svc_unknown", a.liveKey, nil).wantError(404, "NOT_FOUND")
	// fixed paths still reach their own operations
	h.do("GET", "/v1/services/catalog", a.liveKey, nil).decode(200, nil)
	h.do("GET", "/v1/services/availability?address=100+Congress+Ave&city=Austin&state=TX&zip=78701", a.liveKey, nil).decode(200, nil)
}

// TestOrderReadsItsDefaultAccountOnce: a template order without account_id
// takes the organization's oldest billing account and reads it once.
func TestOrderReadsItsDefaultAccountOnce(t *testing.T) {
	h := newHarness(t)
	tn := h.tenants[0]
	var reads atomic.Int64
	const name = "test:count_account_reads"
	if err := h.store.DB.Callback().Query().After("gorm:query").Register(name, func(db *gorm.DB) {
		if db.Statement.Table == "billing_accounts" {
			reads.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.store.DB.Callback().Query().Remove(name) })
	o, _, err := services.NewStore(h.store).PrepareTemplateOrder(context.Background(), tenantPrincipal(tn),
		services.TemplateInput{ServiceTemplate: "internet-dedicated-1g", LocationID: "loc_austin_congress", Bandwidth: "100mbps"})
	if err != nil || o.AccountID != tn.account.ID {
		t.Fatalf("order %+v %v, want the account %s", o, err, tn.account.ID)
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("the account was read %d times, want once", n)
	}
}
