package models_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/webhooks"
)

func TestParseTrigger(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"", "", false}, {"manual", "", false}, {"event:service.provisioned", "service.provisioned", false},
		{"event:invoice.generated", "invoice.created", false}, {"event:ticket.escalated", "ticket.escalated", false},
		{"event:service.exploded", "", true}, {"event:", "", true}, {"cron:5m", "", true}, {"Manual", "", true}, {"event:webhook.test", "", true},
	}
	for _, tc := range tests {
		got, err := models.ParseTrigger(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseTrigger(%q) = %q, %v", tc.in, got, err)
		}
	}
	// Every subscribable event of the webhook catalogue can trigger an orchestration, and nothing else can.
	names := webhooks.EventNames()
	if !slices.Equal(sortedCopy(names), sortedCopy(models.TriggerEvents())) {
		t.Fatalf("trigger events %v differ from the webhook catalogue %v", models.TriggerEvents(), names)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func st(order int, action string, params map[string]any, deps ...int) models.OrchestrationStep {
	return models.OrchestrationStep{Order: order, Action: action, Parameters: params, DependsOn: deps}
}

func TestValidateOrchestration(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "Orchestrator", models.EnvTest)
	svc := runningService(t, s, p, "loc_sandbox_all")
	prov := func(order int, deps ...int) models.OrchestrationStep {
		return st(order, models.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all"}, deps...)
	}
	notify := func(order int, msg string, deps ...int) models.OrchestrationStep {
		return st(order, models.ActionNotify, map[string]any{"event": "service.status_changed", "message": msg}, deps...)
	}
	tests := []struct {
		name    string
		in      models.OrchestrationInput
		field   string // "" when valid
		message string // part of the issue
	}{
		{"a valid DAG", models.OrchestrationInput{Name: "Roll-out", Steps: []models.OrchestrationStep{
			notify(4, "done ${steps.2.service_id}", 2, 3), prov(2, 1), prov(3, 1),
			st(1, models.ActionRunAvailabilityCheck, map[string]any{"location": "100 Congress Ave, Austin, TX 78701", "service_types": []any{"fiber_dedicated"}, "bandwidth": "1gbps"}),
			st(5, models.ActionModifyService, map[string]any{"service_id": "${steps.2.service_id}", "changes": map[string]any{"sla": "enterprise"}}, 4),
			st(6, models.ActionSuspendService, map[string]any{"service_id": svc.ID}),
			st(7, models.ActionWait, map[string]any{"duration": "1h30m"}, 6),
			st(8, models.ActionResumeService, map[string]any{"service_id": svc.ID}, 7),
			st(9, models.ActionScaleService, map[string]any{"service_id": svc.ID, "scaling_action": "scale_up", "new_bandwidth": "10gbps",
				"maintenance_window": map[string]any{"start": time.Now().UTC().Add(48 * time.Hour).Format(time.RFC3339), "duration": "2_hours"}}, 8),
			st(10, models.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"monitoring": "advanced", "name": "HQ"}}, 9),
		}}, "", ""},
		{"an event trigger with event references", models.OrchestrationInput{Name: "On provisioned", Trigger: "event:service.provisioned", Steps: []models.OrchestrationStep{
			st(1, models.ActionModifyService, map[string]any{"service_id": "${event.data.service.id}", "changes": map[string]any{"monitoring": "advanced"}}),
			notify(2, "provisioned ${event.resource_id}", 1),
		}}, "", ""},
		{"no name", models.OrchestrationInput{Steps: []models.OrchestrationStep{prov(1)}}, "name", "required"},
		{"other trigger", models.OrchestrationInput{Name: "x", Trigger: "cron:* * * * *", Steps: []models.OrchestrationStep{prov(1)}}, "trigger", "manual"},
		{"no steps", models.OrchestrationInput{Name: "x"}, "steps", "at least one"},
		{"a cycle", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1, 3), prov(2, 1), prov(3, 2)}}, "steps", "cycle: 1 → 3 → 2 → 1"},
		{"a self dependency", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1, 1)}}, "steps[0].depends_on[0]", "itself"},
		{"an unknown dependency", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1), prov(2, 9)}}, "steps[1].depends_on[0]", "no step has order 9"},
		{"a repeated order", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1), prov(1)}}, "steps[1].order", "used by another"},
		{"order zero", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(0)}}, "steps[0].order", "positive"},
		{"an unknown action", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, "reboot_router", nil)}}, "steps[0].action", "unknown action"},
		{"an unknown parameter", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionWait, map[string]any{"duration": "1m", "colour": "red"})}}, "steps[0].parameters.colour", "not a parameter"},
		{"a missing parameter", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g"})}}, "steps[0].parameters.location", "required"},
		{"an unknown template", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionProvisionService, map[string]any{"template": "nope", "location": "loc_sandbox_all"})}}, "steps[0].parameters.template", "no provisioning template"},
		{"an unknown location", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "loc_mars"})}}, "steps[0].parameters.location", "no serviceable location"},
		{"an unknown service", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionSuspendService, map[string]any{"service_id": "svc_nope"})}}, "steps[0].parameters.service_id", "no service"},
		{"bad changes", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"sla": "gold"}})}}, "steps[0].parameters.changes.sla", "standard"},
		{"a bad scaling action", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionScaleService, map[string]any{"service_id": svc.ID, "scaling_action": "scale_sideways", "new_bandwidth": "10gbps"})}}, "steps[0].parameters.scaling_action", "scale_up"},
		{"a bandwidth the offer lacks", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"bandwidth": "3gbps"}})}}, "steps[0].parameters.changes.bandwidth", "offers"},
		{"empty changes", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{}})}}, "steps[0].parameters.changes", "at least one"},
		{"a wrong type", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionWait, map[string]any{"duration": 60})}}, "steps[0].parameters.duration", "string"},
		{"a bad duration", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionWait, map[string]any{"duration": "45d"})}}, "steps[0].parameters.duration", "30 days"},
		{"wait with both", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionWait, map[string]any{"duration": "1m", "until": "2030-01-01T00:00:00Z"})}}, "steps[0].parameters", "either"},
		{"notify of a lifecycle event", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionNotify, map[string]any{"event": "service.provisioned", "message": "m"})}}, "steps[0].parameters.event", "must be one of"},
		{"a reference to a step not depended on", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1), notify(2, "${steps.1.service_id}")}}, "steps[1].parameters", "must be one this step depends on"},
		{"a reference to an unknown output", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{prov(1), notify(2, "${steps.1.ip}", 1)}}, "steps[1].parameters", "outputs service_id"},
		{"an event reference without an event", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{notify(1, "${event.id}")}}, "steps[0].parameters", "needs an event trigger"},
		{"a malformed reference", models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{notify(1, "${steps.one}")}}, "steps[0].parameters", "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, err := s.ValidateOrchestration(ctx, p, tc.in)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(def.Steps) != len(tc.in.Steps) || !slices.IsSortedFunc(def.Steps, func(a, b models.OrchestrationStep) int { return a.Order - b.Order }) {
					t.Fatalf("steps not kept in order: %+v", def.Steps)
				}
				return
			}
			f := fieldsOf(t, err)
			if !strings.Contains(f[tc.field], tc.message) {
				t.Fatalf("issue of %s = %q, want it to mention %q (all: %v)", tc.field, f[tc.field], tc.message, f)
			}
		})
	}
	t.Run("another tenant's service is unknown", func(t *testing.T) {
		other, _ := bulkTenant(t, s, "Other", models.EnvTest)
		_, err := s.ValidateOrchestration(ctx, other, models.OrchestrationInput{Name: "x", Steps: []models.OrchestrationStep{st(1, models.ActionSuspendService, map[string]any{"service_id": svc.ID})}})
		if f := fieldsOf(t, err); f["steps[0].parameters.service_id"] == "" {
			t.Fatalf("%v", f)
		}
	})
	t.Run("too many steps", func(t *testing.T) {
		var steps []models.OrchestrationStep
		for i := 1; i <= models.MaxOrchestrationSteps+1; i++ {
			steps = append(steps, notify(i, "m"))
		}
		if f := fieldsOf(t, func() error {
			_, err := s.ValidateOrchestration(ctx, p, models.OrchestrationInput{Name: "x", Steps: steps})
			return err
		}()); f["steps"] == "" {
			t.Fatalf("%v", f)
		}
	})
}

func TestResolveParameters(t *testing.T) {
	outputs := map[int]map[string]any{1: {"service_id": "svc_1", "available": true}, 2: {"until": "2030-01-01T00:00:00Z"}}
	event := models.TriggerEvent{ID: "evt_1", Type: "service.provisioned", ResourceID: "svc_9", Data: map[string]any{"service": map[string]any{"id": "svc_9"}}}.Map()
	got, err := models.ResolveParameters(map[string]any{
		"service_id": "${steps.1.service_id}",
		"message":    "svc ${steps.1.service_id} (event ${event.id} on ${event.data.service.id}) at ${steps.2.until}",
		"flag":       "${steps.1.available}",
		"changes":    map[string]any{"name": "for ${event.resource_id}"},
		"list":       []any{"${steps.1.service_id}", "plain"},
	}, outputs, event)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"service_id": "svc_1", "message": "svc svc_1 (event evt_1 on svc_9) at 2030-01-01T00:00:00Z", "flag": true,
		"changes": map[string]any{"name": "for svc_9"}, "list": []any{"svc_1", "plain"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if _, err := models.ResolveParameters(map[string]any{"x": "${steps.3.service_id}"}, outputs, nil); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a missing output: %v", err)
	}
	if _, err := models.ResolveParameters(map[string]any{"x": "${event.data.nope}"}, outputs, event); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a missing event field: %v", err)
	}
}

func TestOrchestrationsAndTriggers(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "Triggers", models.EnvLive)
	scope := p.OwnScope()
	steps := []models.OrchestrationStep{
		st(1, models.ActionNotify, map[string]any{"event": "service.status_changed", "message": "a"}),
		st(2, models.ActionWait, map[string]any{"duration": "1m"}, 1),
	}
	manual, err := s.ValidateOrchestration(ctx, p, models.OrchestrationInput{Name: "Manual", Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.CreateOrchestration(ctx, scope, manual, "wf_manual", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if op.Type != models.OpTypeOrchestration || len(op.Steps) != 2 || op.Steps[0].Name != "1:notify" || op.Steps[1].Name != "2:wait" || manual.Active {
		t.Fatalf("manual run %+v", op)
	}
	if _, _, err := s.GetOrchestration(ctx, p, "wf_manual"); err != nil {
		t.Fatal(err)
	}

	t.Run("a run reports what ran, failed and was skipped", func(t *testing.T) {
		if err := s.StartStep(ctx, scope, "wf_manual", "1:notify"); err != nil {
			t.Fatal(err)
		}
		if err := s.FailStep(ctx, scope, "wf_manual", "1:notify", &models.OperationError{Code: models.CodeNotFound, Message: "service not found"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			fin, err := s.FinishOrchestration(ctx, scope, "wf_manual", false, []models.StepOutcome{{Order: 1, Status: models.StepFailed}})
			if err != nil {
				t.Fatal(err)
			}
			if fin.Status != models.OpFailed || fin.Error == nil || fin.Error.Code != models.CodeNotFound || fin.Steps[1].Status != models.StepSkipped ||
				fmt.Sprint(fin.Result["skipped"]) != "[2:wait]" || fmt.Sprint(fin.Result["failed"]) != "[1:notify]" {
				t.Fatalf("finished %+v %+v", fin, fin.Error)
			}
		}
	})

	trig, err := s.ValidateOrchestration(ctx, p, models.OrchestrationInput{Name: "On provisioned", Trigger: "event:service.provisioned", Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	top, err := s.CreateOrchestration(ctx, scope, trig, "wf_trigger", p.ID)
	if err != nil || top.Type != models.OpTypeOrchestrationTrigger || len(top.Steps) != 0 || !trig.Active || trig.Trigger != "event:service.provisioned" {
		t.Fatalf("%+v %v", top, err)
	}
	defs, err := s.OrchestrationsTriggeredBy(ctx, scope, "service.provisioned")
	if err != nil || len(defs) != 1 || defs[0].ID != "wf_trigger" {
		t.Fatalf("%+v %v", defs, err)
	}
	other, _ := bulkTenant(t, s, "Other", models.EnvLive)
	if defs, _ := s.OrchestrationsTriggeredBy(ctx, other.OwnScope(), "service.provisioned"); len(defs) != 0 {
		t.Fatal("another tenant's event triggers this tenant's orchestration")
	}
	if defs, _ := s.OrchestrationsTriggeredBy(ctx, models.TenantScope(p.OrganizationID, models.EnvTest), "service.provisioned"); len(defs) != 0 {
		t.Fatal("a sandbox event triggers a live orchestration")
	}
	ev := models.TriggerEvent{ID: "evt_a", Type: "service.provisioned", ResourceID: "svc_a", Data: map[string]any{"request_id": "prov_x"}}
	var runID string
	for range 2 {
		run, def, err := s.PrepareTriggeredRun(ctx, scope, "wf_trigger", ev, 1)
		if err != nil {
			t.Fatal(err)
		}
		runID = run.ID
		if run.ID != models.TriggeredRunID("wf_trigger", "evt_a") || !models.HasPrefix(run.ID, "wf") || run.Input["definition_id"] != "wf_trigger" || def.ID != "wf_trigger" || len(run.Steps) != 2 {
			t.Fatalf("run %+v", run)
		}
	}
	tr, _ := s.OperationIn(ctx, scope, "wf_trigger")
	if len(tr.Items) != 1 || tr.Items[0].ID != runID || tr.Status != models.OpInProgress {
		t.Fatalf("trigger items %+v", tr)
	}
	if got, _, _ := s.GetOrchestration(ctx, p, runID); got == nil {
		t.Fatal("a triggered run is an orchestration operation")
	}
	if d, _ := s.OrchestrationIn(ctx, scope, "wf_trigger"); d.Runs != 1 {
		t.Fatalf("runs counted %d", d.Runs)
	}
	if err := s.RecordTriggerRun(ctx, scope, "wf_trigger", runID, models.OpCompleted, nil); err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.OperationIn(ctx, scope, "wf_trigger"); tr.Items[0].Status != "completed" {
		t.Fatalf("run status not recorded: %+v", tr.Items)
	}
	if d := s.EventTriggerDepth(ctx, scope, map[string]any{"request_id": runID}); d != 1 {
		t.Fatalf("depth of an event of a triggered run: %d", d)
	}
	if d := s.EventTriggerDepth(ctx, scope, map[string]any{"orchestration": map[string]any{"depth": 2.0}}); d != 2 {
		t.Fatalf("depth carried by a notify event: %d", d)
	}
	for range 2 {
		if err := s.FinishTrigger(ctx, scope, "wf_trigger"); err != nil {
			t.Fatal(err)
		}
	}
	if tr, _ := s.OperationIn(ctx, scope, "wf_trigger"); tr.Status != models.OpCancelled {
		t.Fatalf("trigger %s", tr.Status)
	}
	if defs, _ := s.OrchestrationsTriggeredBy(ctx, scope, "service.provisioned"); len(defs) != 0 {
		t.Fatal("an ended trigger still listens")
	}
	if _, _, err := s.PrepareTriggeredRun(ctx, scope, "wf_trigger", models.TriggerEvent{ID: "evt_b", Type: "service.provisioned"}, 1); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a run of an ended trigger: %v", err)
	}
	if _, _, err := s.GetOrchestration(ctx, other, "wf_trigger"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
	if err := s.DeleteOrchestration(ctx, scope, "wf_manual"); err != nil {
		t.Fatal(err)
	}
}

// TestResolveParametersNamesTheSameReferenceEveryTime: workflows replay
// ResolveParameters, so with several unresolved references the error names
// the same one on every run (keys are walked in order, not in map order).
func TestResolveParametersNamesTheSameReferenceEveryTime(t *testing.T) {
	params := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		params[k] = "${steps." + strconv.Itoa(int(k[0]-'a'+1)) + ".service_id}"
	}
	for range 50 {
		_, err := models.ResolveParameters(params, map[int]map[string]any{}, nil)
		if err == nil || !strings.Contains(err.Error(), "${steps.1.service_id}") {
			t.Fatalf("error %v does not name the first key's reference", err)
		}
	}
}
