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
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
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
		got, err := automation.ParseTrigger(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseTrigger(%q) = %q, %v", tc.in, got, err)
		}
	}
	// Every subscribable event of the webhook catalogue can trigger an orchestration, and nothing else can.
	names := webhooks.EventNames()
	if !slices.Equal(sortedCopy(names), sortedCopy(automation.TriggerEvents())) {
		t.Fatalf("trigger events %v differ from the webhook catalogue %v", automation.TriggerEvents(), names)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func st(order int, action string, params map[string]any, deps ...int) automation.OrchestrationStep {
	return automation.OrchestrationStep{Order: order, Action: action, Parameters: params, DependsOn: deps}
}

func TestValidateOrchestration(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, own := bulkTenant(t, s, "Orchestrator", models.EnvTest)
	svc := runningService(t, s, p, "loc_sandbox_all")
	prov := func(order int, deps ...int) automation.OrchestrationStep {
		return st(order, automation.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all"}, deps...)
	}
	notify := func(order int, msg string, deps ...int) automation.OrchestrationStep {
		return st(order, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": msg}, deps...)
	}
	tests := []struct {
		name    string
		in      automation.OrchestrationInput
		field   string // "" when valid
		message string // part of the issue
	}{
		{"a valid DAG", automation.OrchestrationInput{Name: "Roll-out", Steps: []automation.OrchestrationStep{
			notify(4, "done ${steps.2.service_id}", 2, 3), prov(2, 1), prov(3, 1),
			st(1, automation.ActionRunAvailabilityCheck, map[string]any{"location": "100 Congress Ave, Austin, TX 78701", "service_types": []any{"fiber_dedicated"}, "bandwidth": "1gbps"}),
			st(5, automation.ActionModifyService, map[string]any{"service_id": "${steps.2.service_id}", "changes": map[string]any{"sla": "enterprise"}}, 4),
			st(6, automation.ActionSuspendService, map[string]any{"service_id": svc.ID}),
			st(7, automation.ActionWait, map[string]any{"duration": "1h30m"}, 6),
			st(8, automation.ActionResumeService, map[string]any{"service_id": svc.ID}, 7),
			st(9, automation.ActionScaleService, map[string]any{"service_id": svc.ID, "scaling_action": "scale_up", "new_bandwidth": "10gbps",
				"maintenance_window": map[string]any{"start": time.Now().UTC().Add(48 * time.Hour).Format(time.RFC3339), "duration": "2_hours"}}, 8),
			st(10, automation.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"monitoring": "advanced", "name": "HQ"}}, 9),
		}}, "", ""},
		{"an event trigger with event references", automation.OrchestrationInput{Name: "On provisioned", Trigger: "event:service.provisioned", Steps: []automation.OrchestrationStep{
			st(1, automation.ActionModifyService, map[string]any{"service_id": "${event.data.service.id}", "changes": map[string]any{"monitoring": "advanced"}}),
			notify(2, "provisioned ${event.resource_id}", 1),
		}}, "", ""},
		{"no name", automation.OrchestrationInput{Steps: []automation.OrchestrationStep{prov(1)}}, "name", "required"},
		{"other trigger", automation.OrchestrationInput{Name: "x", Trigger: "cron:* * * * *", Steps: []automation.OrchestrationStep{prov(1)}}, "trigger", "manual"},
		{"no steps", automation.OrchestrationInput{Name: "x"}, "steps", "at least one"},
		{"a cycle", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1, 3), prov(2, 1), prov(3, 2)}}, "steps", "cycle: 1 → 3 → 2 → 1"},
		{"a self dependency", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1, 1)}}, "steps[0].depends_on[0]", "itself"},
		{"an unknown dependency", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1), prov(2, 9)}}, "steps[1].depends_on[0]", "no step has order 9"},
		{"a repeated order", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1), prov(1)}}, "steps[1].order", "used by another"},
		{"order zero", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(0)}}, "steps[0].order", "positive"},
		{"an unknown action", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, "reboot_router", nil)}}, "steps[0].action", "unknown action"},
		{"an unknown parameter", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionWait, map[string]any{"duration": "1m", "colour": "red"})}}, "steps[0].parameters.colour", "not a parameter"},
		{"a missing parameter", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g"})}}, "steps[0].parameters.location", "required"},
		{"an unknown template", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionProvisionService, map[string]any{"template": "nope", "location": "loc_sandbox_all"})}}, "steps[0].parameters.template", "no provisioning template"},
		{"an unknown location", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "loc_mars"})}}, "steps[0].parameters.location", "no serviceable location"},
		{"an unknown service", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionSuspendService, map[string]any{"service_id": "svc_nope"})}}, "steps[0].parameters.service_id", "no service"},
		{"bad changes", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"sla": "gold"}})}}, "steps[0].parameters.changes.sla", "standard"},
		{"a bad scaling action", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionScaleService, map[string]any{"service_id": svc.ID, "scaling_action": "scale_sideways", "new_bandwidth": "10gbps"})}}, "steps[0].parameters.scaling_action", "scale_up"},
		{"a bandwidth the offer lacks", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{"bandwidth": "3gbps"}})}}, "steps[0].parameters.changes.bandwidth", "offers"},
		{"empty changes", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionModifyService, map[string]any{"service_id": svc.ID, "changes": map[string]any{}})}}, "steps[0].parameters.changes", "at least one"},
		{"a wrong type", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionWait, map[string]any{"duration": 60})}}, "steps[0].parameters.duration", "string"},
		{"a bad duration", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionWait, map[string]any{"duration": "45d"})}}, "steps[0].parameters.duration", "30 days"},
		{"wait with both", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionWait, map[string]any{"duration": "1m", "until": "2030-01-01T00:00:00Z"})}}, "steps[0].parameters", "either"},
		{"notify of a lifecycle event", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionNotify, map[string]any{"event": "service.provisioned", "message": "m"})}}, "steps[0].parameters.event", "must be one of"},
		{"a reference to a step not depended on", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1), notify(2, "${steps.1.service_id}")}}, "steps[1].parameters", "must be one this step depends on"},
		{"a reference to an unknown output", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{prov(1), notify(2, "${steps.1.ip}", 1)}}, "steps[1].parameters", "outputs service_id"},
		{"an event reference without an event", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{notify(1, "${event.id}")}}, "steps[0].parameters", "needs an event trigger"},
		{"a malformed reference", automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{notify(1, "${steps.one}")}}, "steps[0].parameters", "malformed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, err := automation.NewStore(s).ValidateOrchestration(ctx, p, tc.in)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(def.Steps) != len(tc.in.Steps) || !slices.IsSortedFunc(def.Steps, func(a, b automation.OrchestrationStep) int { return a.Order - b.Order }) {
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
		_, err := automation.NewStore(s).ValidateOrchestration(ctx, other, automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{st(1, automation.ActionSuspendService, map[string]any{"service_id": svc.ID})}})
		if f := fieldsOf(t, err); f["steps[0].parameters.service_id"] == "" {
			t.Fatalf("%v", f)
		}
	})
	t.Run("a billing account the caller cannot see is refused before the 202", func(t *testing.T) {
		_, others := bulkTenant(t, s, "Other's account", models.EnvTest)
		step := func(acct string) automation.OrchestrationInput {
			return automation.OrchestrationInput{Name: "x", Steps: []automation.OrchestrationStep{
				st(1, automation.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all", "account_id": acct})}}
		}
		for _, acct := range []string{"acct_doesNotExist000000", others.ID} {
			_, err := automation.NewStore(s).ValidateOrchestration(ctx, p, step(acct))
			if f := fieldsOf(t, err); !strings.Contains(f["steps[0].parameters.account_id"], "no billing account") {
				t.Fatalf("%s: %v", acct, f)
			}
		}
		if _, err := automation.NewStore(s).ValidateOrchestration(ctx, p, step(own.ID)); err != nil {
			t.Fatalf("its own account: %v", err)
		}
	})
	t.Run("too many steps", func(t *testing.T) {
		var steps []automation.OrchestrationStep
		for i := 1; i <= automation.MaxOrchestrationSteps+1; i++ {
			steps = append(steps, notify(i, "m"))
		}
		if f := fieldsOf(t, func() error {
			_, err := automation.NewStore(s).ValidateOrchestration(ctx, p, automation.OrchestrationInput{Name: "x", Steps: steps})
			return err
		}()); f["steps"] == "" {
			t.Fatalf("%v", f)
		}
	})
}

func TestResolveParameters(t *testing.T) {
	outputs := map[int]map[string]any{1: {"service_id": "svc_1", "available": true}, 2: {"until": "2030-01-01T00:00:00Z"}}
	event := automation.TriggerEvent{ID: "evt_1", Type: "service.provisioned", ResourceID: "svc_9", Data: map[string]any{"service": map[string]any{"id": "svc_9"}}}.Map()
	got, err := automation.ResolveParameters(map[string]any{
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
	if _, err := automation.ResolveParameters(map[string]any{"x": "${steps.3.service_id}"}, outputs, nil); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a missing output: %v", err)
	}
	if _, err := automation.ResolveParameters(map[string]any{"x": "${event.data.nope}"}, outputs, event); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a missing event field: %v", err)
	}
}

func TestOrchestrationsAndTriggers(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, _ := bulkTenant(t, s, "Triggers", models.EnvLive)
	scope := p.OwnScope()
	steps := []automation.OrchestrationStep{
		st(1, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": "a"}),
		st(2, automation.ActionWait, map[string]any{"duration": "1m"}, 1),
	}
	manual, err := automation.NewStore(s).ValidateOrchestration(ctx, p, automation.OrchestrationInput{Name: "Manual", Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	op, err := automation.NewStore(s).CreateOrchestration(ctx, scope, manual, "wf_manual", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if op.Type != automation.OpTypeOrchestration || len(op.Steps) != 2 || op.Steps[0].Name != "1:notify" || op.Steps[1].Name != "2:wait" || manual.Active {
		t.Fatalf("manual run %+v", op)
	}
	if _, _, err := automation.NewStore(s).GetOrchestration(ctx, p, "wf_manual"); err != nil {
		t.Fatal(err)
	}

	t.Run("a run reports what ran, failed and was skipped", func(t *testing.T) {
		if err := operations.NewStore(s).StartStep(ctx, scope, "wf_manual", "1:notify"); err != nil {
			t.Fatal(err)
		}
		if err := automation.NewStore(s).FailStep(ctx, scope, "wf_manual", "1:notify", &operations.OperationError{Code: models.CodeNotFound, Message: "service not found"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			fin, err := automation.NewStore(s).FinishOrchestration(ctx, scope, "wf_manual", false, []automation.StepOutcome{{Order: 1, Status: operations.StepFailed}})
			if err != nil {
				t.Fatal(err)
			}
			if fin.Status != operations.OpFailed || fin.Error == nil || fin.Error.Code != models.CodeNotFound || fin.Steps[1].Status != operations.StepSkipped ||
				fmt.Sprint(fin.Result["skipped"]) != "[2:wait]" || fmt.Sprint(fin.Result["failed"]) != "[1:notify]" {
				t.Fatalf("finished %+v %+v", fin, fin.Error)
			}
		}
	})

	trig, err := automation.NewStore(s).ValidateOrchestration(ctx, p, automation.OrchestrationInput{Name: "On provisioned", Trigger: "event:service.provisioned", Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	top, err := automation.NewStore(s).CreateOrchestration(ctx, scope, trig, "wf_trigger", p.ID)
	if err != nil || top.Type != automation.OpTypeOrchestrationTrigger || len(top.Steps) != 0 || !trig.Active || trig.Trigger != "event:service.provisioned" {
		t.Fatalf("%+v %v", top, err)
	}
	defs, err := automation.NewStore(s).OrchestrationsTriggeredBy(ctx, scope, "service.provisioned")
	if err != nil || len(defs) != 1 || defs[0].ID != "wf_trigger" {
		t.Fatalf("%+v %v", defs, err)
	}
	other, _ := bulkTenant(t, s, "Other", models.EnvLive)
	if defs, _ := automation.NewStore(s).OrchestrationsTriggeredBy(ctx, other.OwnScope(), "service.provisioned"); len(defs) != 0 {
		t.Fatal("another tenant's event triggers this tenant's orchestration")
	}
	if defs, _ := automation.NewStore(s).OrchestrationsTriggeredBy(ctx, models.TenantScope(p.OrganizationID, models.EnvTest), "service.provisioned"); len(defs) != 0 {
		t.Fatal("a sandbox event triggers a live orchestration")
	}
	ev := automation.TriggerEvent{ID: "evt_a", Type: "service.provisioned", ResourceID: "svc_a", Data: map[string]any{"request_id": "prov_x"}}
	var runID string
	for range 2 {
		run, def, err := automation.NewStore(s).PrepareTriggeredRun(ctx, scope, "wf_trigger", ev, 1)
		if err != nil {
			t.Fatal(err)
		}
		runID = run.ID
		if run.ID != automation.TriggeredRunID("wf_trigger", "evt_a") || !models.HasPrefix(run.ID, "wf") || run.Input["definition_id"] != "wf_trigger" || def.ID != "wf_trigger" || len(run.Steps) != 2 {
			t.Fatalf("run %+v", run)
		}
	}
	tr, _ := operations.NewStore(s).OperationIn(ctx, scope, "wf_trigger")
	if len(tr.Items) != 1 || tr.Items[0].ID != runID || tr.Status != operations.OpInProgress {
		t.Fatalf("trigger items %+v", tr)
	}
	if got, _, _ := automation.NewStore(s).GetOrchestration(ctx, p, runID); got == nil {
		t.Fatal("a triggered run is an orchestration operation")
	}
	if d, _ := automation.NewStore(s).OrchestrationIn(ctx, scope, "wf_trigger"); d.Runs != 1 {
		t.Fatalf("runs counted %d", d.Runs)
	}
	if err := automation.NewStore(s).RecordTriggerRun(ctx, scope, "wf_trigger", runID, operations.OpCompleted, nil); err != nil {
		t.Fatal(err)
	}
	if tr, _ := operations.NewStore(s).OperationIn(ctx, scope, "wf_trigger"); tr.Items[0].Status != "completed" {
		t.Fatalf("run status not recorded: %+v", tr.Items)
	}
	if d := automation.NewStore(s).EventTriggerDepth(ctx, scope, map[string]any{"request_id": runID}); d != 1 {
		t.Fatalf("depth of an event of a triggered run: %d", d)
	}
	if d := automation.NewStore(s).EventTriggerDepth(ctx, scope, map[string]any{"orchestration": map[string]any{"depth": 2.0}}); d != 2 {
		t.Fatalf("depth carried by a notify event: %d", d)
	}
	for range 2 {
		if err := automation.NewStore(s).FinishTrigger(ctx, scope, "wf_trigger"); err != nil {
			t.Fatal(err)
		}
	}
	if tr, _ := operations.NewStore(s).OperationIn(ctx, scope, "wf_trigger"); tr.Status != operations.OpCancelled {
		t.Fatalf("trigger %s", tr.Status)
	}
	if defs, _ := automation.NewStore(s).OrchestrationsTriggeredBy(ctx, scope, "service.provisioned"); len(defs) != 0 {
		t.Fatal("an ended trigger still listens")
	}
	if _, _, err := automation.NewStore(s).PrepareTriggeredRun(ctx, scope, "wf_trigger", automation.TriggerEvent{ID: "evt_b", Type: "service.provisioned"}, 1); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("a run of an ended trigger: %v", err)
	}
	if _, _, err := automation.NewStore(s).GetOrchestration(ctx, other, "wf_trigger"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("another tenant: %v", err)
	}
	if err := automation.NewStore(s).DeleteOrchestration(ctx, scope, "wf_manual"); err != nil {
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
		_, err := automation.ResolveParameters(params, map[int]map[string]any{}, nil)
		if err == nil || !strings.Contains(err.Error(), "${steps.1.service_id}") {
			t.Fatalf("error %v does not name the first key's reference", err)
		}
	}
}
