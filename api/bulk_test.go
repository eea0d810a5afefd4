package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// mockTemporal replaces h's server by one whose Temporal client is a mock
// (live detail on GET is never available).
func mockTemporal(t *testing.T, h *harness) *mocks.Client {
	t.Helper()
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	mc := mocks.NewClient(t)
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Temporal: mc})
	mc.On("DescribeWorkflowExecution", mock.Anything, mock.Anything, mock.Anything).Return(nil, errors.New("unavailable")).Maybe()
	mc.On("QueryWorkflow", mock.Anything, mock.Anything, mock.Anything, mock.Anything).Return(nil, errors.New("unavailable")).Maybe()
	return mc
}

// startedWorkflow records the last workflow a mocked client was asked to start.
type startedWorkflow struct {
	opts client.StartWorkflowOptions
	name string
	arg  any
}

func expectStart(t *testing.T, mc *mocks.Client, name string, got *startedWorkflow) {
	t.Helper()
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, name, mock.Anything).
		Run(func(args mock.Arguments) {
			*got = startedWorkflow{opts: args.Get(1).(client.StartWorkflowOptions), name: args.Get(2).(string), arg: args.Get(3)}
		}).Return(mocks.NewWorkflowRun(t), nil).Once()
}

// operatingService stores an operational live service of tn, as a
// completed provisioning would, and returns its id and its provisioning's.
func operatingService(t *testing.T, h *harness, tn tenant) (serviceID, requestID string) {
	t.Helper()
	ctx := context.Background()
	p := &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_fixture", OrganizationID: tn.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	o, scope, err := services.NewStore(h.store).PrepareTemplateOrder(ctx, p, services.TemplateInput{ServiceTemplate: "internet-dedicated-1g", LocationID: "loc_austin_congress"})
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
	if _, err := services.NewStore(h.store).CompleteProvisioning(ctx, scope, opID, svcID); err != nil {
		t.Fatal(err)
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, simulator.Sample(svcID, "premium", services.ServiceOperational, h.store.Now())); err != nil {
		t.Fatal(err)
	}
	return svcID, opID
}

type bulkAccepted struct {
	RequestID string `json:"request_id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	StatusURL string `json:"status_url"`
	Total     int    `json:"total"`
	RetryOf   string `json:"retry_of"`
	CreatedAt string `json:"created_at"`
}

type bulkDoc struct {
	RequestID string `json:"request_id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Progress  struct {
		Total, Completed, Failed, Percent int
	} `json:"progress"`
	Items []struct {
		ID     string         `json:"id"`
		Status string         `json:"status"`
		Error  map[string]any `json:"error"`
	} `json:"items"`
	Result map[string]any `json:"result"`
	Error  map[string]any `json:"error"`
}

func fieldNames(e errorBody) map[string]string {
	out := map[string]string{}
	fields, _ := e.Error.Details["fields"].([]any)
	for _, f := range fields {
		m := f.(map[string]any)
		out[m["field"].(string)], _ = m["issue"].(string)
	}
	return out
}

func TestBulkProvision(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	h.do("POST", "/v1/billing/accounts", a.testKey, map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "b@example.com"}).decode(201, nil)
	t.Run("without a workflow engine", func(t *testing.T) {
		h.do("POST", "/v1/services/bulk/provision", a.testKey, map[string]any{"services": []any{
			map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all"}}}).wantError(503, "DEPENDENCY_UNAVAILABLE")
	})
	mc := mockTemporal(t, h)
	var started startedWorkflow
	expectStart(t, mc, workflows.BulkWorkflow, &started)
	svcs := []any{}
	for i := range 3 {
		svcs = append(svcs, map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all",
			"customizations": map[string]any{"monitoring": []string{"basic", "standard", "advanced"}[i]}})
	}
	svcs = append(svcs, map[string]any{"template": "sandbox-fail-activate", "location": "1 Sandbox Way, Testville, CA 94000"})
	body := map[string]any{"services": svcs, "orchestration": map[string]any{"parallel": true, "rollback_on_failure": true, "max_concurrency": 4}}
	var acc bulkAccepted
	res := h.do("POST", "/api/v1/services/bulk/provision", a.testKey, body).decode(202, &acc)
	if !models.HasPrefix(acc.RequestID, "bulk") || acc.Type != "bulk_provision" || acc.Status != "pending" || acc.Total != 4 ||
		acc.StatusURL != "http://localhost:8080/v1/operations/"+acc.RequestID || res.header.Get("Location") != acc.StatusURL {
		t.Fatalf("accepted %+v", acc)
	}
	in, ok := started.arg.(workflows.BulkInput)
	if !ok || started.opts.ID != acc.RequestID || started.opts.TaskQueue != "platform-background" || in.Total != 4 || in.Bulk.Type != operations.OpTypeBulkProvision ||
		in.Bulk.OrganizationID != a.org.ID || in.Bulk.Environment != models.EnvTest || !in.Options.Parallel || !in.Options.RollbackOnFailure || in.Options.Window() != 4 {
		t.Fatalf("started %+v %+v", started.opts, started.arg)
	}
	var doc bulkDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.testKey, nil).decode(200, &doc)
	if doc.Type != "bulk_provision" || doc.Status != "pending" || len(doc.Items) != 4 || doc.Progress.Total != 4 || doc.Items[0].Status != "pending" ||
		!models.HasPrefix(doc.Items[3].ID, "svc") {
		t.Fatalf("operation %+v", doc)
	}
	h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/operations/"+acc.RequestID, h.tenants[1].testKey, nil).wantError(404, "NOT_FOUND")

	t.Run("invalid requests", func(t *testing.T) {
		many := make([]any, automation.MaxBulkItems+1)
		for i := range many {
			many[i] = svcs[0]
		}
		for _, tc := range []struct {
			name   string
			body   any
			status int
			code   string
			field  string
		}{
			{"no services", map[string]any{}, 400, "VALIDATION_ERROR", "services"},
			{"too many services", map[string]any{"services": many}, 400, "VALIDATION_ERROR", "services"},
			{"unknown field", map[string]any{"services": svcs[:1], "priority": "high"}, 400, "VALIDATION_ERROR", ""},
			{"unknown template", map[string]any{"services": []any{svcs[0], map[string]any{"template": "nope", "location": "loc_sandbox_all"}}}, 400, "VALIDATION_ERROR", "services[1].template"},
			{"malformed location", map[string]any{"services": []any{map[string]any{"template": "internet-dedicated-1g", "location": "Testville"}}}, 400, "VALIDATION_ERROR", "services[0].location"},
			{"bad customization", map[string]any{"services": []any{map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all", "customizations": map[string]any{"bandwidth": "1GBPS"}}}}, 400, "VALIDATION_ERROR", "services[0].customizations.bandwidth"},
			{"too much concurrency", map[string]any{"services": svcs[:1], "orchestration": map[string]any{"parallel": true, "max_concurrency": 500}}, 400, "VALIDATION_ERROR", ""},
			{"no concurrency", map[string]any{"services": svcs[:1], "orchestration": map[string]any{"parallel": true, "max_concurrency": 0}}, 400, "VALIDATION_ERROR", ""},
			{"another tenant's account", map[string]any{"services": svcs[:1], "account_id": h.tenants[1].account.ID}, 400, "VALIDATION_ERROR", "account_id"},
			{"unserviceable location", map[string]any{"services": []any{svcs[0], map[string]any{"template": "internet-dedicated-1g", "location": "9 Nowhere Rd, Testville, CA 94999"}}}, 422, "LOCATION_NOT_SERVICEABLE", ""},
			{"type not offered", map[string]any{"services": []any{map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_business_only"}}}, 422, "SERVICE_UNAVAILABLE_AT_LOCATION", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := h.do("POST", "/v1/services/bulk/provision", a.testKey, tc.body).wantError(tc.status, tc.code)
				if tc.field != "" {
					if f := fieldNames(e); f[tc.field] == "" {
						t.Fatalf("no issue for %s: %v", tc.field, f)
					}
				}
				if tc.status == 422 && (e.Error.Details["items"] == nil || e.Error.Details["index"] == nil) {
					t.Fatalf("422 without the failing items: %v", e.Error.Details)
				}
			})
		}
	})
	t.Run("needs services:write", func(t *testing.T) {
		var key keyAnswer
		h.do("POST", "/v1/auth/api-keys", a.testKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
		h.do("POST", "/v1/services/bulk/provision", key.APIKey.Key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
	t.Run("workflow engine down", func(t *testing.T) {
		var id string
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.BulkWorkflow, mock.Anything).
			Run(func(args mock.Arguments) { id = args.Get(1).(client.StartWorkflowOptions).ID }).
			Return(nil, serviceerror.NewUnavailable("down")).Once()
		h.do("POST", "/v1/services/bulk/provision", a.testKey, body).wantError(503, "DEPENDENCY_UNAVAILABLE")
		h.do("GET", "/v1/operations/"+id, a.testKey, nil).wantError(404, "NOT_FOUND")
	})
}

func TestBulkModify(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	s1, _ := operatingService(t, h, a)
	s2, _ := operatingService(t, h, a)
	theirs, _ := operatingService(t, h, b)
	mc := mockTemporal(t, h)
	var started startedWorkflow
	expectStart(t, mc, workflows.BulkWorkflow, &started)
	var acc bulkAccepted
	h.do("POST", "/v1/services/bulk/modify", a.liveKey, map[string]any{
		"services": []any{map[string]any{"service_id": s1}, map[string]any{"service_id": s2, "changes": map[string]any{"sla": "enterprise"}}},
		"changes":  map[string]any{"monitoring": "advanced"},
	}).decode(202, &acc)
	in := started.arg.(workflows.BulkInput)
	if acc.Type != "bulk_modify" || acc.Total != 2 || in.Bulk.Type != operations.OpTypeBulkModify || in.Options.Window() != 1 || started.opts.TaskQueue != "platform-background" {
		t.Fatalf("accepted %+v, started %+v", acc, in)
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"another tenant's service", map[string]any{"services": []any{map[string]any{"service_id": theirs, "changes": map[string]any{"name": "x"}}}}, "services[0].service_id"},
		{"a service twice", map[string]any{"services": []any{map[string]any{"service_id": s1}, map[string]any{"service_id": s1}}, "changes": map[string]any{"name": "x"}}, "services[1].service_id"},
		{"no change", map[string]any{"services": []any{map[string]any{"service_id": s1}}}, "services[0].changes"},
		{"a bad sla", map[string]any{"services": []any{map[string]any{"service_id": s1, "changes": map[string]any{"sla": "gold"}}}}, "services[0].changes.sla"},
		{"no services", map[string]any{"changes": map[string]any{"name": "x"}}, "services"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := h.do("POST", "/v1/services/bulk/modify", a.liveKey, tc.body).wantError(400, "VALIDATION_ERROR")
			if f := fieldNames(e); f[tc.field] == "" {
				t.Fatalf("no issue for %s: %v", tc.field, f)
			}
			if strings.Contains(string(e.Error.Message), b.org.ID) {
				t.Fatal("reveals the other tenant")
			}
		})
	}
}

func TestBulkStatus(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	s1, _ := operatingService(t, h, a)
	theirs, _ := operatingService(t, h, b)
	mc := mockTemporal(t, h)

	var read struct {
		Services []struct {
			ServiceID       string         `json:"service_id"`
			Status          *string        `json:"status"`
			StatusChangedAt *string        `json:"status_changed_at"`
			Error           map[string]any `json:"error"`
		} `json:"services"`
		RequestID string `json:"request_id"`
	}
	h.do("POST", "/v1/services/bulk/status", a.liveKey, map[string]any{"service_ids": []string{s1, theirs, "svc_missing"}}).decode(200, &read)
	if len(read.Services) != 3 || read.Services[0].Status == nil || *read.Services[0].Status != "operational" || read.Services[0].StatusChangedAt == nil ||
		read.Services[1].Status != nil || read.Services[1].Error["code"] != "NOT_FOUND" || read.Services[2].Error["code"] != "NOT_FOUND" || read.RequestID != "" {
		t.Fatalf("statuses %+v", read)
	}
	var key keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
	h.do("POST", "/v1/services/bulk/status", key.APIKey.Key, map[string]any{"service_ids": []string{s1}}).decode(200, nil)
	h.do("POST", "/v1/services/bulk/status", key.APIKey.Key, map[string]any{"service_ids": []string{s1}, "action": "suspend"}).wantError(403, "INSUFFICIENT_PERMISSIONS")

	var started startedWorkflow
	expectStart(t, mc, workflows.BulkWorkflow, &started)
	var acc bulkAccepted
	res := h.do("POST", "/v1/services/bulk/status", a.liveKey, map[string]any{"service_ids": []string{s1}, "action": "suspend",
		"orchestration": map[string]any{"parallel": true}}).decode(202, &acc)
	if acc.Type != "bulk_status" || acc.Total != 1 || res.header.Get("Location") != acc.StatusURL || started.arg.(workflows.BulkInput).Bulk.Type != operations.OpTypeBulkStatus {
		t.Fatalf("accepted %+v", acc)
	}
	for _, tc := range []struct {
		name string
		body any
	}{
		{"unknown action", map[string]any{"service_ids": []string{s1}, "action": "reboot"}},
		{"another tenant's service", map[string]any{"service_ids": []string{theirs}, "action": "resume"}},
		{"no services", map[string]any{"service_ids": []string{}}},
		{"orchestration without action", map[string]any{"service_ids": []string{s1}, "orchestration": map[string]any{"parallel": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.do("POST", "/v1/services/bulk/status", a.liveKey, tc.body).wantError(400, "VALIDATION_ERROR")
		})
	}
}

// finishedBulk stores a bulk provisioning of tn's sandbox with n items, of
// which the positions in failed failed and the others completed.
func finishedBulk(t *testing.T, h *harness, tn tenant, n int, failed ...int) string {
	t.Helper()
	ctx := context.Background()
	p := &models.Principal{ID: "ak_fixture", OrganizationID: tn.org.ID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, err := billing.NewStore(h.store).CreateAccount(ctx, p, billing.AccountInput{Name: "Sandbox", Currency: "USD", BillingEmail: "b@example.com"}); err != nil {
		t.Fatal(err)
	}
	items := make([]automation.BulkProvisionItem, n)
	for i := range items {
		items[i] = automation.BulkProvisionItem{Template: "internet-dedicated-1g", Location: "loc_sandbox_all"}
	}
	plan, err := automation.NewStore(h.store).PrepareBulkProvision(ctx, p, automation.BulkProvisionInput{Items: items})
	if err != nil {
		t.Fatal(err)
	}
	id := models.NewID(models.PrefixBulk)
	if _, err := automation.NewStore(h.store).CreateBulkOperation(ctx, plan, id, p.ID); err != nil {
		t.Fatal(err)
	}
	var updates []automation.ItemUpdate
	for i := range n {
		u := automation.ItemUpdate{Position: i, Status: automation.ItemCompleted}
		for _, f := range failed {
			if f == i {
				u = automation.ItemUpdate{Position: i, Status: automation.ItemFailed, Error: &operations.OperationError{Code: models.CodeProvisioningFailed, Message: "activate failed"}}
			}
		}
		updates = append(updates, u)
	}
	if _, err := automation.NewStore(h.store).RecordBulkItems(ctx, plan.Scope, id, updates); err != nil {
		t.Fatal(err)
	}
	if _, err := automation.NewStore(h.store).FinishBulk(ctx, plan.Scope, id, automation.BulkFinish{}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestBulkRetry(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	id := finishedBulk(t, h, a, 4, 1, 3)
	mc := mockTemporal(t, h)
	var doc bulkDoc
	h.do("GET", "/v1/operations/"+id, a.testKey, nil).decode(200, &doc)
	if doc.Status != "partial" || doc.Result["retry_url"] != "/v1/operations/"+id+"/retry" || doc.Progress.Failed != 2 || doc.Error["code"] != "PROVISIONING_FAILED" {
		t.Fatalf("operation %+v", doc)
	}
	var started startedWorkflow
	expectStart(t, mc, workflows.BulkWorkflow, &started)
	var acc bulkAccepted
	h.do("POST", "/v1/operations/"+id+"/retry", a.testKey, map[string]any{"orchestration": map[string]any{"parallel": true, "max_concurrency": 2}}).decode(202, &acc)
	in := started.arg.(workflows.BulkInput)
	if acc.RetryOf != id || acc.Total != 2 || acc.Type != "bulk_provision" || in.Total != 2 || in.Options.Window() != 2 {
		t.Fatalf("retry %+v %+v", acc, in)
	}
	var retried bulkDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.testKey, nil).decode(200, &retried)
	if len(retried.Items) != 2 || retried.Items[0].ID == doc.Items[1].ID {
		t.Fatalf("retried items %+v", retried.Items)
	}
	h.do("GET", "/v1/operations/"+id, a.testKey, nil).decode(200, &doc)
	if doc.Result["retried_by"] != acc.RequestID {
		t.Fatalf("original %+v", doc.Result)
	}
	h.do("POST", "/v1/operations/"+id+"/retry", a.testKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	h.do("POST", "/v1/operations/"+acc.RequestID+"/retry", a.testKey, nil).wantError(409, "INVALID_STATE_TRANSITION") // still pending
	h.do("POST", "/v1/operations/"+id+"/retry", h.tenants[1].testKey, nil).wantError(404, "NOT_FOUND")
	done := finishedBulk(t, h, h.tenants[1], 2)
	h.do("POST", "/v1/operations/"+done+"/retry", h.tenants[1].testKey, map[string]any{}).wantError(409, "INVALID_STATE_TRANSITION")
	_, prov := operatingService(t, h, a)
	h.do("POST", "/v1/operations/"+prov+"/retry", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	h.do("POST", "/v1/operations/bulk_nope/retry", a.liveKey, nil).wantError(404, "NOT_FOUND")
}
