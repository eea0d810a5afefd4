package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/api/serviceerror"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// orchestrationFixture stores, without a workflow, a manual orchestration
// of tn (live) with one wait step, and returns its workflow id.
func orchestrationFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	ctx := context.Background()
	p := &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_fixture", OrganizationID: tn.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	def, err := automation.NewStore(h.store).ValidateOrchestration(ctx, p, automation.OrchestrationInput{Name: "Fixture", Steps: []automation.OrchestrationStep{
		{Order: 1, Action: automation.ActionWait, Parameters: map[string]any{"duration": "1m"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := models.NewID(models.PrefixWorkflow)
	if _, err := automation.NewStore(h.store).CreateOrchestration(ctx, p.OwnScope(), def, id, p.ID); err != nil {
		t.Fatal(err)
	}
	return id
}

type orchestrationDoc struct {
	RequestID string `json:"request_id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Steps     []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"steps"`
	Items         []map[string]any `json:"items"`
	Orchestration struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Trigger string `json:"trigger"`
		Active  bool   `json:"active"`
		Steps   []struct {
			Order     int            `json:"order"`
			Action    string         `json:"action"`
			DependsOn []int          `json:"depends_on"`
			Params    map[string]any `json:"parameters"`
		} `json:"steps"`
	} `json:"orchestration"`
	Workflow struct {
		ID string `json:"id"`
	} `json:"workflow"`
}

func TestOrchestrationWorkflows(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc, _ := operatingService(t, h, a)
	body := map[string]any{
		"name": "Branch roll-out",
		"steps": []any{
			map[string]any{"order": 1, "action": "run_availability_check", "parameters": map[string]any{"location": "loc_austin_congress", "service_types": []string{"fiber_dedicated"}}},
			map[string]any{"order": 2, "action": "provision_service", "parameters": map[string]any{"template": "internet-dedicated-1g", "location": "${steps.1.location_id}"}, "depends_on": []int{1}},
			map[string]any{"order": 3, "action": "modify_service", "parameters": map[string]any{"service_id": svc, "changes": map[string]any{"monitoring": "advanced"}}},
			map[string]any{"order": 4, "action": "notify", "parameters": map[string]any{"event": "service.status_changed", "message": "done: ${steps.2.service_id}"}, "depends_on": []int{2, 3}},
			map[string]any{"order": 5, "action": "wait", "parameters": map[string]any{"duration": "15m"}},
		},
	}
	t.Run("without a workflow engine", func(t *testing.T) {
		h.do("POST", "/v1/services/orchestration/workflows", a.liveKey, body).wantError(503, "DEPENDENCY_UNAVAILABLE")
	})
	mc := mockTemporal(t, h)
	var started startedWorkflow
	expectStart(t, mc, workflows.OrchestrationWorkflow, &started)
	var acc struct {
		RequestID  string `json:"request_id"`
		WorkflowID string `json:"workflow_id"`
		Type       string `json:"type"`
		Status     string `json:"status"`
		StatusURL  string `json:"status_url"`
		Trigger    string `json:"trigger"`
	}
	res := h.do("POST", "/api/v1/services/orchestration/workflows", a.liveKey, body).decode(202, &acc)
	if !models.HasPrefix(acc.RequestID, "wf") || acc.WorkflowID != acc.RequestID || acc.Type != "orchestration" || acc.Trigger != "manual" ||
		acc.Status != "pending" || res.header.Get("Location") != acc.StatusURL {
		t.Fatalf("accepted %+v", acc)
	}
	in, ok := started.arg.(workflows.OrchestrationInput)
	if !ok || started.opts.ID != acc.RequestID || started.opts.TaskQueue != "platform" || len(in.Steps) != 5 || in.Run.RequestID != acc.RequestID ||
		in.Run.OrganizationID != a.org.ID || in.Event != nil {
		t.Fatalf("started %+v %+v", started.opts, started.arg)
	}
	var doc orchestrationDoc
	for _, path := range []string{"/v1/services/orchestration/workflows/", "/api/v1/services/orchestration/workflows/"} {
		h.do("GET", path+acc.RequestID, a.liveKey, nil).decode(200, &doc)
		if doc.RequestID != acc.RequestID || doc.Type != "orchestration" || len(doc.Steps) != 5 || doc.Steps[1].Name != "2:provision_service" ||
			doc.Orchestration.ID != acc.RequestID || doc.Orchestration.Name != "Branch roll-out" || len(doc.Orchestration.Steps) != 5 ||
			doc.Orchestration.Steps[3].DependsOn[1] != 3 || doc.Workflow.ID != acc.RequestID {
			t.Fatalf("document %+v", doc)
		}
	}
	var op orchestrationDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).decode(200, &op)
	if op.Status != doc.Status || len(op.Steps) != 5 {
		t.Fatalf("operation %+v", op)
	}
	h.do("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, b.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, a.testKey, nil).wantError(404, "NOT_FOUND")
	_, prov := operatingService(t, h, a)
	h.do("GET", "/v1/services/orchestration/workflows/"+prov, a.liveKey, nil).wantError(404, "NOT_FOUND")

	t.Run("server-sent events", func(t *testing.T) {
		id := orchestrationFixture(t, h, a)
		scope := models.TenantScope(a.org.ID, models.EnvLive)
		if _, err := automation.NewStore(h.store).FinishOrchestration(context.Background(), scope, id, true, nil); err != nil {
			t.Fatal(err)
		}
		res := h.do("GET", "/v1/services/orchestration/workflows/"+id, a.liveKey, nil, "Accept", "text/event-stream")
		if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(res.body), "event: operation") ||
			!strings.Contains(string(res.body), `"status":"cancelled"`) {
			t.Fatalf("stream %d %s", res.status, res.body)
		}
		h.do("GET", "/v1/services/orchestration/workflows/"+id, b.liveKey, nil, "Accept", "text/event-stream").wantError(404, "NOT_FOUND")
	})

	t.Run("event trigger", func(t *testing.T) {
		var started startedWorkflow
		expectStart(t, mc, workflows.OrchestrationTriggerWorkflow, &started)
		var acc struct {
			RequestID string `json:"request_id"`
			Type      string `json:"type"`
			Trigger   string `json:"trigger"`
		}
		h.do("POST", "/v1/services/orchestration/workflows", a.liveKey, map[string]any{
			"name": "Tune new services", "trigger": "event:service.provisioned",
			"steps": []any{map[string]any{"order": 1, "action": "modify_service", "parameters": map[string]any{"service_id": "${event.resource_id}", "changes": map[string]any{"monitoring": "advanced"}}}},
		}).decode(202, &acc)
		in, ok := started.arg.(workflows.OrchestrationTriggerInput)
		if acc.Type != "orchestration_trigger" || acc.Trigger != "event:service.provisioned" || !ok || in.EventType != "service.provisioned" || in.Trigger.RequestID != acc.RequestID {
			t.Fatalf("accepted %+v, started %+v", acc, started.arg)
		}
		var doc orchestrationDoc
		h.do("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, a.liveKey, nil).decode(200, &doc)
		if doc.Type != "orchestration_trigger" || !doc.Orchestration.Active || len(doc.Items) != 0 || len(doc.Steps) != 0 {
			t.Fatalf("trigger %+v", doc)
		}
		defs, err := automation.NewStore(h.store).OrchestrationsTriggeredBy(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), "service.provisioned")
		if err != nil || len(defs) != 1 || defs[0].ID != acc.RequestID {
			t.Fatalf("%+v %v", defs, err)
		}
	})

	t.Run("invalid workflows", func(t *testing.T) {
		stepsWith := func(steps ...map[string]any) map[string]any {
			list := make([]any, len(steps))
			for i, s := range steps {
				list[i] = s
			}
			return map[string]any{"name": "x", "steps": list}
		}
		wait := func(order int, deps ...int) map[string]any {
			return map[string]any{"order": order, "action": "wait", "parameters": map[string]any{"duration": "1m"}, "depends_on": deps}
		}
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"a cycle", stepsWith(wait(1, 2), wait(2, 1)), "steps"},
			{"an unknown dependency", stepsWith(wait(1), wait(2, 7)), "steps[1].depends_on[0]"},
			{"an unknown action", stepsWith(map[string]any{"order": 1, "action": "teleport"}), "steps[0].action"},
			{"another trigger", map[string]any{"name": "x", "trigger": "schedule:daily", "steps": []any{wait(1)}}, "trigger"},
			{"an unknown event", map[string]any{"name": "x", "trigger": "event:service.exploded", "steps": []any{wait(1)}}, "trigger"},
			{"no name", map[string]any{"steps": []any{wait(1)}}, "name"},
			{"no steps", map[string]any{"name": "x"}, "steps"},
			{"a bad parameter", stepsWith(map[string]any{"order": 1, "action": "wait", "parameters": map[string]any{"duration": "forever"}}), "steps[0].parameters.duration"},
			{"another tenant's service", stepsWith(map[string]any{"order": 1, "action": "suspend_service", "parameters": map[string]any{"service_id": svc}}), "steps[0].parameters.service_id"},
			{"another tenant's service to notify about", stepsWith(map[string]any{"order": 1, "action": "notify",
				"parameters": map[string]any{"event": "service.modified", "message": "hi", "service_id": svc}}), "steps[0].parameters.service_id"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				key := a.liveKey
				if strings.HasPrefix(tc.name, "another tenant's service") {
					key = b.liveKey
				}
				e := h.do("POST", "/v1/services/orchestration/workflows", key, tc.body).wantError(400, "VALIDATION_ERROR")
				if f := fieldNames(e); f[tc.field] == "" {
					t.Fatalf("no issue for %s: %v", tc.field, f)
				}
			})
		}
	})
	t.Run("workflow engine down", func(t *testing.T) {
		var id string
		mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.OrchestrationWorkflow, mock.Anything).
			Run(func(args mock.Arguments) { id = args.Get(3).(workflows.OrchestrationInput).Run.RequestID }).
			Return(nil, serviceerror.NewUnavailable("down")).Once()
		h.do("POST", "/v1/services/orchestration/workflows", a.liveKey, body).wantError(503, "DEPENDENCY_UNAVAILABLE")
		h.do("GET", "/v1/services/orchestration/workflows/"+id, a.liveKey, nil).wantError(404, "NOT_FOUND")
	})
	t.Run("needs services:write", func(t *testing.T) {
		var key keyAnswer
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "reader", "permissions": []string{"services:read"}}).decode(201, &key)
		h.do("POST", "/v1/services/orchestration/workflows", key.APIKey.Key, body).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, key.APIKey.Key, nil).decode(200, nil)
	})
}

// TestOrchestrationParameterSchemasArePublished checks that /openapi.json
// carries the JSON Schema of every action's parameters, the one the domain
// validates steps with.
func TestOrchestrationParameterSchemasArePublished(t *testing.T) {
	h := newHarness(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Type                 string         `json:"type"`
				Required             []string       `json:"required"`
				Properties           map[string]any `json:"properties"`
				AdditionalProperties *bool          `json:"additionalProperties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	h.do("GET", "/openapi.json", "", nil).decode(200, &doc)
	for _, a := range automation.OrchestrationActions() {
		s, ok := doc.Components.Schemas["OrchestrationParameters_"+a.Name]
		if !ok {
			t.Errorf("no schema for the parameters of %s", a.Name)
			continue
		}
		var required []string
		for _, ps := range a.Params {
			if ps.Required {
				required = append(required, ps.Name)
			}
			if _, ok := s.Properties[ps.Name]; !ok {
				t.Errorf("%s: no property %s", a.Name, ps.Name)
			}
		}
		if s.Type != "object" || len(s.Properties) != len(a.Params) || s.AdditionalProperties == nil || *s.AdditionalProperties ||
			strings.Join(s.Required, ",") != strings.Join(required, ",") {
			t.Errorf("%s: schema %+v", a.Name, s)
		}
	}
}

// TestServiceConfigurationSchemasArePublished checks that /openapi.json
// carries the JSON Schema of every kind's configuration settings.
func TestServiceConfigurationSchemasArePublished(t *testing.T) {
	h := newHarness(t)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties           map[string]any `json:"properties"`
				AdditionalProperties *bool          `json:"additionalProperties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	h.do("GET", "/openapi.json", "", nil).decode(200, &doc)
	for _, k := range services.KindNames() {
		s, ok := doc.Components.Schemas["ServiceConfiguration_"+k]
		want := services.SettingsSchema(k)["properties"].(map[string]any)
		if !ok || len(s.Properties) != len(want) || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema %+v, want the properties %v", k, s, want)
		}
	}
}
