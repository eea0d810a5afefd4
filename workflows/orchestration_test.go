package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/workflows"
)

// fakeOrchestration stands in for the orchestration activities and the
// Provisioning child workflow. It records when (in workflow time) each step
// started and ended, and fails the steps listed in fail.
type fakeOrchestration struct {
	mu        sync.Mutex
	env       *testsuite.TestWorkflowEnvironment
	start     time.Time
	fail      map[int]bool
	began     map[int]time.Duration
	ended     map[int]time.Duration
	marks     []string
	params    map[int]map[string]any
	finish    *workflows.OrchestrationFinishInput
	provTime  time.Duration
	triggered []string // run ids started by a trigger
	finished  bool     // FinishTrigger ran
}

func newFakeOrchestration(fail ...int) *fakeOrchestration {
	f := &fakeOrchestration{fail: map[int]bool{}, began: map[int]time.Duration{}, ended: map[int]time.Duration{}, params: map[int]map[string]any{}, provTime: 10 * time.Minute}
	for _, o := range fail {
		f.fail[o] = true
	}
	return f
}

func (f *fakeOrchestration) now() time.Duration { return f.env.Now().Sub(f.start) }

func (f *fakeOrchestration) mark(_ context.Context, in workflows.OrchestrationMarkInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.marks = append(f.marks, in.Step+":"+in.Mark)
	var order int
	_, _ = fmt.Sscanf(in.Step, "%d:", &order)
	if in.Mark == workflows.MarkStarted {
		f.began[order] = f.now()
	} else {
		f.ended[order] = f.now()
	}
	return nil
}

func (f *fakeOrchestration) step(in workflows.OrchestrationStepInput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.params[in.Step.Order] = in.Parameters
	if f.fail[in.Step.Order] {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("step %d failed", in.Step.Order), string(models.CodeUnavailableAtLocation), nil)
	}
	return nil
}

func (f *fakeOrchestration) register(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	f.env, f.start = env, env.Now()
	env.RegisterWorkflowWithOptions(workflows.Orchestration, workflow.RegisterOptions{Name: workflows.OrchestrationWorkflow})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.ProvisioningInput) (*workflows.ProvisioningResult, error) {
		if err := workflow.Sleep(ctx, f.provTime); err != nil {
			return nil, err
		}
		return &workflows.ProvisioningResult{ServiceID: in.ServiceID, Status: "operational"}, nil
	}, workflow.RegisterOptions{Name: workflows.ProvisioningWorkflow})
	reg := func(fn any, name string) { env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(func(context.Context, workflows.OrchestrationRef) error { return nil }, workflows.ActivityName(workflows.OrchestrationActivities.Begin))
	reg(f.mark, workflows.ActivityName(workflows.OrchestrationActivities.MarkStep))
	reg(func(_ context.Context, in workflows.OrchestrationStepInput) (*workflows.ProvisioningInput, error) {
		if err := f.step(in); err != nil {
			return nil, err
		}
		return &workflows.ProvisioningInput{RequestID: fmt.Sprintf("prov_step%d", in.Step.Order), OrganizationID: in.Run.OrganizationID,
			Environment: in.Run.Environment, ServiceID: fmt.Sprintf("svc_step%d", in.Step.Order)}, nil
	}, workflows.ActivityName(workflows.OrchestrationActivities.PrepareProvision))
	out := func(_ context.Context, in workflows.OrchestrationStepInput) (map[string]any, error) {
		if err := f.step(in); err != nil {
			return nil, err
		}
		return map[string]any{"service_id": in.Parameters["service_id"], "status": "operational", "location_id": "loc_x", "available": true, "event_id": "evt_x"}, nil
	}
	reg(out, workflows.ActivityName(workflows.OrchestrationActivities.ChangeService))
	reg(func(_ context.Context, in workflows.OrchestrationStepInput) (*workflows.ChangeStart, error) {
		if err := f.step(in); err != nil {
			return nil, err
		}
		id, _ := in.Parameters["service_id"].(string)
		return &workflows.ChangeStart{Type: services.OpTypeModification, Input: workflows.ServiceChangeInput{RequestID: fmt.Sprintf("mod_step%d", in.Step.Order), ServiceID: id}}, nil
	}, workflows.ActivityName(workflows.OrchestrationActivities.PrepareChange))
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.ServiceChangeInput) (*workflows.ServiceChangeResult, error) {
		return &workflows.ServiceChangeResult{ServiceID: in.ServiceID, Status: "operational"}, workflow.Sleep(ctx, time.Minute)
	}, workflow.RegisterOptions{Name: workflows.ServiceChangeWorkflow})
	reg(out, workflows.ActivityName(workflows.OrchestrationActivities.CheckAvailability))
	reg(out, workflows.ActivityName(workflows.OrchestrationActivities.Notify))
	reg(func(_ context.Context, in workflows.OrchestrationFinishInput) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.finish = &in
		return nil
	}, workflows.ActivityName(workflows.OrchestrationActivities.Finish))
	return env
}

func orchestrationInput(steps ...automation.OrchestrationStep) workflows.OrchestrationInput {
	return workflows.OrchestrationInput{
		Run:   workflows.OrchestrationRef{RequestID: "wf_test", OrganizationID: "org_test", Environment: models.EnvTest, DefinitionID: "wf_test", CreatedBy: "ak_test"},
		Steps: steps,
	}
}

func step(order int, action string, params map[string]any, deps ...int) automation.OrchestrationStep {
	if params == nil {
		params = map[string]any{}
	}
	return automation.OrchestrationStep{Order: order, Action: action, Parameters: params, DependsOn: deps}
}

func outcomeStatuses(in *workflows.OrchestrationFinishInput) map[int]operations.StepStatus {
	out := map[int]operations.StepStatus{}
	for _, o := range in.Outcomes {
		out[o.Order] = o.Status
	}
	return out
}

func TestOrchestrationRunsTheDAGInOrderAndInParallel(t *testing.T) {
	f := newFakeOrchestration()
	env := f.register(t)
	in := orchestrationInput(
		step(1, automation.ActionRunAvailabilityCheck, map[string]any{"location": "loc_sandbox_all"}),
		step(2, automation.ActionProvisionService, map[string]any{"template": "internet-dedicated-1g", "location": "${steps.1.location_id}"}, 1),
		step(3, automation.ActionProvisionService, map[string]any{"template": "internet-business-100m", "location": "loc_sandbox_all"}, 1),
		step(4, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": "ready: ${steps.2.service_id} and ${steps.3.service_id}"}, 2, 3),
		step(5, automation.ActionWait, map[string]any{"duration": "30m"}),
		step(6, automation.ActionModifyService, map[string]any{"service_id": "${steps.2.service_id}", "changes": map[string]any{"sla": "enterprise"}}, 4, 5),
	)
	env.ExecuteWorkflow(workflows.OrchestrationWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.OrchestrationResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != operations.OpCompleted || len(res.Completed) != 6 {
		t.Fatalf("result %+v %v", res, err)
	}
	b, e := f.began, f.ended
	// 1 and 5 have no dependencies: they start together.
	if b[1] != 0 || b[5] != 0 {
		t.Fatalf("independent steps did not start at once: %v", b)
	}
	// 2 and 3 depend on 1 only: they run in parallel, after it.
	if b[2] != b[3] || b[2] < e[1] {
		t.Fatalf("steps 2 and 3: began %v, ended %v", b, e)
	}
	// 4 waits for both provisionings; 6 for 4 and the 30-minute timer.
	if b[4] < e[2] || b[4] < e[3] || e[2] < 10*time.Minute || b[6] < e[4] || b[6] < 30*time.Minute {
		t.Fatalf("ordering: began %v, ended %v", b, e)
	}
	if got := f.params[4]["message"]; got != "ready: svc_step2 and svc_step3" {
		t.Fatalf("references not resolved: %v", got)
	}
	if f.params[2]["location"] != "loc_x" || f.params[6]["service_id"] != "svc_step2" {
		t.Fatalf("references not resolved: %v %v", f.params[2], f.params[6])
	}
	if f.finish == nil || f.finish.Cancelled || len(f.finish.Outcomes) != 6 {
		t.Fatalf("finish %+v", f.finish)
	}
	for _, o := range f.finish.Outcomes {
		if o.Order == 2 && (o.Output["service_id"] != "svc_step2" || o.Output["request_id"] != "prov_step2") {
			t.Fatalf("provision output %+v", o.Output)
		}
		if o.Order == 5 && o.Output["until"] == nil {
			t.Fatalf("wait output %+v", o.Output)
		}
		if o.Order == 6 && (o.Output["request_id"] != "mod_step6" || o.Output["status"] != "applied" || o.Output["service_id"] != "svc_step2") {
			t.Fatalf("modify output %+v", o.Output)
		}
	}
}

func TestOrchestrationFailureSkipsDependantsOnly(t *testing.T) {
	f := newFakeOrchestration(2)
	env := f.register(t)
	in := orchestrationInput(
		step(1, automation.ActionRunAvailabilityCheck, map[string]any{"location": "loc_sandbox_all"}),
		step(2, automation.ActionRunAvailabilityCheck, map[string]any{"location": "loc_sandbox_low_capacity"}, 1),
		step(3, automation.ActionProvisionService, map[string]any{"template": "t", "location": "loc_sandbox_low_capacity"}, 2),
		step(4, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": "m"}, 3),
		step(5, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": "m"}, 1),
		step(6, automation.ActionWait, map[string]any{"duration": "1m"}, 5, 4),
	)
	env.ExecuteWorkflow(workflows.OrchestrationWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res workflows.OrchestrationResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != operations.OpFailed || !slices.Equal(res.Completed, []int{1, 5}) || !slices.Equal(res.Failed, []int{2}) || !slices.Equal(res.Skipped, []int{3, 4, 6}) {
		t.Fatalf("result %+v", res)
	}
	st := outcomeStatuses(f.finish)
	if st[1] != operations.StepCompleted || st[2] != operations.StepFailed || st[5] != operations.StepCompleted || len(st) != 3 {
		t.Fatalf("outcomes %v", st)
	}
	for _, o := range f.finish.Outcomes {
		if o.Order == 2 && (o.Error == nil || o.Error.Code != models.CodeUnavailableAtLocation) {
			t.Fatalf("failed step's error %+v", o.Error)
		}
	}
	for _, order := range []int{3, 4, 6} {
		if _, ran := f.began[order]; ran {
			t.Fatalf("step %d depends on a failed step and still started", order)
		}
	}
	if !slices.Contains(f.marks, "2:run_availability_check:failed") {
		t.Fatalf("marks %v", f.marks)
	}
}

func TestOrchestrationWaitIsADurableTimer(t *testing.T) {
	f := newFakeOrchestration()
	env := f.register(t)
	until := env.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
	env.ExecuteWorkflow(workflows.OrchestrationWorkflow, orchestrationInput(
		step(1, automation.ActionWait, map[string]any{"until": until}),
		step(2, automation.ActionWait, map[string]any{"duration": "2h"}, 1),
	))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if f.ended[1] < 72*time.Hour-time.Second || f.ended[2] < 74*time.Hour-time.Second {
		t.Fatalf("timers did not wait: ended %v", f.ended)
	}
}

func TestOrchestrationCancelled(t *testing.T) {
	f := newFakeOrchestration()
	env := f.register(t)
	env.RegisterDelayedCallback(env.CancelWorkflow, 5*time.Minute)
	env.ExecuteWorkflow(workflows.OrchestrationWorkflow, orchestrationInput(
		step(1, automation.ActionProvisionService, map[string]any{"template": "t", "location": "loc_sandbox_all"}),
		step(2, automation.ActionWait, map[string]any{"duration": "1h"}),
		step(3, automation.ActionNotify, map[string]any{"event": "service.status_changed", "message": "m"}, 1, 2),
	))
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("want the cancellation, got %v", err)
	}
	if f.finish == nil || !f.finish.Cancelled {
		t.Fatalf("finish %+v", f.finish)
	}
	st := outcomeStatuses(f.finish)
	if st[1] != operations.StepCancelled || st[2] != operations.StepCancelled {
		t.Fatalf("outcomes %v", st)
	}
	if _, ran := f.began[3]; ran {
		t.Fatal("a step started after the cancellation")
	}
}

func TestOrchestrationTriggerStartsOneRunPerEvent(t *testing.T) {
	f := newFakeOrchestration()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.OrchestrationTrigger, workflow.RegisterOptions{Name: workflows.OrchestrationTriggerWorkflow})
	var runsMu sync.Mutex
	runs := map[string]int{}
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in workflows.OrchestrationInput) (*workflows.OrchestrationResult, error) {
		runsMu.Lock()
		runs[in.Run.RequestID]++
		runsMu.Unlock()
		if in.Event["type"] != "service.provisioned" || in.Run.TriggerID != "wf_trigger" || in.Run.Depth != 1 {
			return nil, errors.New("bad run input")
		}
		return &workflows.OrchestrationResult{Status: operations.OpCompleted}, workflow.Sleep(ctx, time.Hour)
	}, workflow.RegisterOptions{Name: workflows.OrchestrationWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, workflows.OrchestrationRef) error { return nil }, activity.RegisterOptions{Name: workflows.ActivityName(workflows.OrchestrationActivities.Begin)})
	env.RegisterActivityWithOptions(func(_ context.Context, in workflows.PrepareRunInput) (*workflows.OrchestrationInput, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if in.Event.ID == "evt_deep" {
			return &workflows.OrchestrationInput{}, nil
		}
		id := automation.TriggeredRunID(in.Trigger.RequestID, in.Event.ID)
		f.triggered = append(f.triggered, id)
		return &workflows.OrchestrationInput{Run: workflows.OrchestrationRef{RequestID: id, OrganizationID: in.Trigger.OrganizationID,
			Environment: in.Trigger.Environment, DefinitionID: in.Trigger.RequestID, TriggerID: in.Trigger.RequestID, Depth: 1},
			Event: in.Event.Map()}, nil
	}, activity.RegisterOptions{Name: workflows.ActivityName(workflows.OrchestrationActivities.PrepareRun)})
	env.RegisterActivityWithOptions(func(context.Context, workflows.OrchestrationRef) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.finished = true
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityName(workflows.OrchestrationActivities.FinishTrigger)})

	send := func(at time.Duration, ev automation.TriggerEvent) {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.SignalOrchestrationEvent, ev) }, at)
	}
	send(time.Minute, automation.TriggerEvent{ID: "evt_1", Type: "service.provisioned", ResourceID: "svc_1"})
	send(2*time.Minute, automation.TriggerEvent{ID: "evt_2", Type: "service.modified", ResourceID: "svc_1"})
	send(3*time.Minute, automation.TriggerEvent{ID: "evt_1", Type: "service.provisioned", ResourceID: "svc_1"}) // redelivered
	send(4*time.Minute, automation.TriggerEvent{ID: "evt_3", Type: "service.provisioned", ResourceID: "svc_2"})
	send(5*time.Minute, automation.TriggerEvent{ID: "evt_deep", Type: "service.provisioned", ResourceID: "svc_3"})
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	env.ExecuteWorkflow(workflows.OrchestrationTriggerWorkflow, workflows.OrchestrationTriggerInput{
		Trigger:   workflows.OrchestrationRef{RequestID: "wf_trigger", OrganizationID: "org_test", Environment: models.EnvLive, DefinitionID: "wf_trigger"},
		EventType: "service.provisioned",
	})
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("want the cancellation, got %v", err)
	}
	if !f.finished {
		t.Fatal("cancelling the trigger did not end it")
	}
	// evt_1 twice and evt_3: two distinct runs, each started once; the other type and the too-deep event start nothing.
	runsMu.Lock()
	defer runsMu.Unlock()
	if len(runs) != 2 || runs[automation.TriggeredRunID("wf_trigger", "evt_1")] != 1 || runs[automation.TriggeredRunID("wf_trigger", "evt_3")] != 1 {
		t.Fatalf("runs %v (prepared %v)", runs, f.triggered)
	}
}
