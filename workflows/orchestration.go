package workflows

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
)

// Registered names of the orchestration workflows: a run of an
// orchestration's steps, and the standing workflow of an event trigger.
const (
	OrchestrationWorkflow        = "Orchestration"
	OrchestrationTriggerWorkflow = "OrchestrationTrigger"
)

// SignalOrchestrationEvent is the signal that hands an event
// (automation.TriggerEvent) to an event trigger's workflow.
const SignalOrchestrationEvent = "orchestration-event"

// triggerRunsPerRun is how many events one run of a trigger's workflow
// handles before it continues as new.
const triggerRunsPerRun = 100

// OrchestrationRef names a run of an orchestration and its tenant.
type OrchestrationRef struct {
	RequestID      string             `json:"request_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	DefinitionID   string             `json:"definition_id"`
	// TriggerID is the event trigger that started the run ("" for a manual run).
	TriggerID string `json:"trigger_id,omitempty"`
	// Depth counts the triggered runs that led to this one (0 for a manual run).
	Depth     int    `json:"depth"`
	CreatedBy string `json:"created_by"`
	// Permissions are the creator's permissions when it created the
	// orchestration: the steps act with them, never more (nil in runs
	// started before they were recorded: services:read and services:write,
	// what creating an orchestration requires).
	Permissions []string `json:"permissions"`
}

// Scope returns the tenant scope of the run.
func (r OrchestrationRef) Scope() models.Scope {
	return models.TenantScope(r.OrganizationID, r.Environment)
}

func (r OrchestrationRef) bulkRef() BulkRef {
	return BulkRef{RequestID: r.RequestID, OrganizationID: r.OrganizationID, Environment: r.Environment, CreatedBy: r.CreatedBy}
}

// OrchestrationInput is the one argument of the orchestration workflow.
type OrchestrationInput struct {
	Run   OrchestrationRef               `json:"run"`
	Steps []automation.OrchestrationStep `json:"steps"`
	// Event is the triggering event ({id, type, resource_id, data}); nil for a manual run.
	Event map[string]any `json:"event,omitempty"`
}

// subject names the run (or trigger) in its activities' summaries.
func (r OrchestrationRef) subject() string {
	return fmt.Sprintf("%s of %s for %s (%s)", r.RequestID, r.DefinitionID, r.OrganizationID, r.Environment)
}

// OrchestrationStepInput is a step to run, its references resolved.
type OrchestrationStepInput struct {
	Run        OrchestrationRef             `json:"run"`
	Step       automation.OrchestrationStep `json:"step"`
	Parameters map[string]any               `json:"parameters"`
}

// Marks of OrchestrationMarkInput.
const (
	MarkStarted   = "started"
	MarkCompleted = "completed"
	MarkFailed    = "failed"
)

// OrchestrationMarkInput records a step's start or end on the operation.
type OrchestrationMarkInput struct {
	Run   OrchestrationRef           `json:"run"`
	Step  string                     `json:"step"`
	Mark  string                     `json:"mark"`
	Error *operations.OperationError `json:"error,omitempty"`
}

// OrchestrationFinishInput ends a run.
type OrchestrationFinishInput struct {
	Run       OrchestrationRef         `json:"run"`
	Cancelled bool                     `json:"cancelled"`
	Outcomes  []automation.StepOutcome `json:"outcomes"`
}

// OrchestrationResult is what a run returns: its final status and which steps ran.
type OrchestrationResult struct {
	Status    operations.OperationStatus `json:"status"`
	Completed []int                      `json:"completed"`
	Failed    []int                      `json:"failed"`
	Skipped   []int                      `json:"skipped"`
}

// OrchestrationProgress is the live state of a run (QueryProgress).
type OrchestrationProgress struct {
	Phase     string `json:"phase"`
	Running   []int  `json:"running"`
	Completed []int  `json:"completed"`
	Failed    []int  `json:"failed"`
	Skipped   []int  `json:"skipped"`
}

// OrchestrationTriggerInput is the one argument of an event trigger's workflow.
type OrchestrationTriggerInput struct {
	Trigger   OrchestrationRef `json:"trigger"` // RequestID = DefinitionID = the trigger's wf_ id
	EventType string           `json:"event_type"`
	Handled   int              `json:"handled"` // events handled by earlier runs
}

// PrepareRunInput asks for the run that an event starts.
type PrepareRunInput struct {
	Trigger OrchestrationRef        `json:"trigger"`
	Event   automation.TriggerEvent `json:"event"`
}

// OrchestrationEventInput is an outbox event handed to event triggers.
type OrchestrationEventInput struct {
	OrganizationID string                  `json:"organization_id"`
	Environment    models.Environment      `json:"environment"`
	Event          automation.TriggerEvent `json:"event"`
}

type stepDone struct {
	order  int
	output map[string]any
	err    error
}

// Orchestration runs an orchestration's steps as a DAG: a step starts when
// every step it depends on has completed, independent steps run in
// parallel, and a failed step makes every step that depends on it (directly
// or not) skipped while the others go on. Each step's action has real
// effects (provision_service runs a child Provisioning workflow, wait a
// durable timer, notify writes an outbox event, ...); later steps read
// earlier outputs through ${steps.<order>.<output>}. The operation records
// each step, and ends completed, or failed listing which steps ran, failed
// and were skipped. Cancellation stops the running steps (a provisioning in
// flight compensates itself) and starts no others; the operation ends
// cancelled. It returns which steps ran, or the cancellation.
func Orchestration(ctx workflow.Context, in OrchestrationInput) (*OrchestrationResult, error) {
	log := workflow.GetLogger(ctx)
	status := map[int]operations.StepStatus{}
	byOrder := map[int]automation.OrchestrationStep{}
	for _, st := range in.Steps {
		status[st.Order], byOrder[st.Order] = operations.StepPending, st
	}
	outputs := map[int]map[string]any{}
	outcomes := []automation.StepOutcome{}
	phase := PhaseRunning
	list := func(want operations.StepStatus) []int {
		out := []int{}
		for _, st := range in.Steps {
			if status[st.Order] == want {
				out = append(out, st.Order)
			}
		}
		return out
	}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (OrchestrationProgress, error) {
		return OrchestrationProgress{Phase: phase, Running: list(operations.StepInProgress), Completed: list(operations.StepCompleted),
			Failed: list(operations.StepFailed), Skipped: list(operations.StepSkipped)}, nil
	}); err != nil {
		return nil, err
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, BookkeepingActivityOptions())
	if err := execute(summarized(dctx, "begin: "+in.Run.subject()), OrchestrationActivities.Begin, in.Run).Get(dctx, nil); err != nil {
		return nil, err
	}
	// bookkeeping returns a context for recording, derived from the
	// coroutine's own context ctx, that cancellation does not reach.
	bookkeeping := func(ctx workflow.Context) workflow.Context {
		d, _ := workflow.NewDisconnectedContext(ctx)
		return workflow.WithActivityOptions(d, BookkeepingActivityOptions())
	}
	mark := func(ctx workflow.Context, step automation.OrchestrationStep, m string, e *operations.OperationError) {
		err := execute(summarized(ctx, fmt.Sprintf("mark step %d %s: %s", step.Order, m, in.Run.subject())), OrchestrationActivities.MarkStep, OrchestrationMarkInput{Run: in.Run, Step: automation.StepName(step), Mark: m, Error: e}).Get(ctx, nil)
		if err != nil {
			log.Error("recording a step failed", "request_id", in.Run.RequestID, "step", step.Order, "error", err)
		}
	}

	done := workflow.NewChannel(ctx)
	running := 0
	for {
		if ctx.Err() == nil {
			for _, st := range in.Steps {
				if status[st.Order] != operations.StepPending {
					continue
				}
				ready, blocked := true, false
				for _, d := range st.DependsOn {
					switch status[d] {
					case operations.StepCompleted:
					case operations.StepFailed, operations.StepSkipped, operations.StepCancelled:
						blocked = true
					default:
						ready = false
					}
				}
				switch {
				case blocked:
					status[st.Order] = operations.StepSkipped
				case ready:
					status[st.Order] = operations.StepInProgress
					running++
					step := st
					params, rerr := automation.ResolveParameters(step.Parameters, outputs, in.Event)
					workflow.Go(ctx, func(gctx workflow.Context) {
						gd := bookkeeping(gctx)
						mark(gd, step, MarkStarted, nil)
						if rerr != nil {
							done.Send(gd, stepDone{order: step.Order, err: temporal.NewNonRetryableApplicationError(models.AsError(rerr).Message, string(models.CodeValidation), nil)})
							return
						}
						out, err := runStep(gctx, in.Run, step, params)
						done.Send(gd, stepDone{order: step.Order, output: out, err: err})
					})
				}
			}
		}
		if running == 0 {
			// Steps skipped because a dependency failed may unblock nothing
			// else; loop until no pending step can change.
			if ctx.Err() == nil && slices.ContainsFunc(in.Steps, func(st automation.OrchestrationStep) bool {
				return status[st.Order] == operations.StepPending && dependsOnEnded(st, status)
			}) {
				continue
			}
			break
		}
		var d stepDone
		done.Receive(dctx, &d)
		running--
		step := byOrder[d.order]
		switch {
		case d.err == nil:
			status[d.order], outputs[d.order] = operations.StepCompleted, d.output
			outcomes = append(outcomes, automation.StepOutcome{Order: d.order, Status: operations.StepCompleted, Output: d.output})
			mark(dctx, step, MarkCompleted, nil)
		case ctx.Err() != nil && (temporal.IsCanceledError(d.err) || errors.Is(d.err, workflow.ErrCanceled)):
			status[d.order] = operations.StepCancelled
			outcomes = append(outcomes, automation.StepOutcome{Order: d.order, Status: operations.StepCancelled})
		default:
			e := itemError(d.err)
			status[d.order] = operations.StepFailed
			outcomes = append(outcomes, automation.StepOutcome{Order: d.order, Status: operations.StepFailed, Error: e})
			mark(dctx, step, MarkFailed, e)
			log.Warn("orchestration step failed", "request_id", in.Run.RequestID, "step", d.order, "error", d.err)
		}
	}
	phase = PhaseDone
	cancelled := ctx.Err() != nil
	err := execute(summarized(dctx, "finish: "+in.Run.subject()), OrchestrationActivities.Finish, OrchestrationFinishInput{Run: in.Run, Cancelled: cancelled, Outcomes: outcomes}).Get(dctx, nil)
	if err != nil {
		return nil, err
	}
	res := &OrchestrationResult{Status: operations.OpCompleted, Completed: list(operations.StepCompleted), Failed: list(operations.StepFailed), Skipped: list(operations.StepSkipped)}
	for _, st := range in.Steps {
		if status[st.Order] == operations.StepPending {
			res.Skipped = append(res.Skipped, st.Order)
		}
	}
	switch {
	case cancelled:
		res.Status = operations.OpCancelled
		return res, ctx.Err()
	case len(res.Failed) > 0 || len(res.Skipped) > 0:
		res.Status = operations.OpFailed
	}
	return res, nil
}

// dependsOnEnded reports whether a pending step waits on a dependency that
// can no longer complete.
func dependsOnEnded(st automation.OrchestrationStep, status map[int]operations.StepStatus) bool {
	for _, d := range st.DependsOn {
		switch status[d] {
		case operations.StepFailed, operations.StepSkipped, operations.StepCancelled:
			return true
		}
	}
	return false
}

// runStep performs one step's action and returns its outputs.
func runStep(ctx workflow.Context, run OrchestrationRef, step automation.OrchestrationStep, params map[string]any) (map[string]any, error) {
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	actx = summarized(actx, fmt.Sprintf("step %d, %s: %s", step.Order, step.Action, run.subject()))
	in := OrchestrationStepInput{Run: run, Step: step, Parameters: params}
	var out map[string]any
	switch step.Action {
	case automation.ActionProvisionService:
		var pin ProvisioningInput
		if err := call(actx, OrchestrationActivities.PrepareProvision, in).Get(actx, &pin); err != nil {
			return nil, err
		}
		cctx := workflow.WithChildOptions(ctx, ChildOperationOptions(run.bulkRef(), pin.RequestID, pin.ServiceID, operations.OpTypeProvisioning))
		var res ProvisioningResult
		if err := workflow.ExecuteChildWorkflow(cctx, ProvisioningWorkflow, pin).Get(cctx, &res); err != nil {
			return nil, err
		}
		return map[string]any{"service_id": pin.ServiceID, "request_id": pin.RequestID, "status": res.Status}, nil
	case automation.ActionModifyService, automation.ActionScaleService:
		cs, err := runChange(ctx, run.bulkRef(), OrchestrationActivities.PrepareChange, in)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"service_id": params["service_id"], "request_id": cs.Input.RequestID, "status": "unchanged"}
		if !cs.Noop {
			out["status"] = "applied"
		}
		return out, nil
	case automation.ActionSuspendService, automation.ActionResumeService:
		err := call(actx, OrchestrationActivities.ChangeService, in).Get(actx, &out)
		return out, err
	case automation.ActionRunAvailabilityCheck:
		err := call(actx, OrchestrationActivities.CheckAvailability, in).Get(actx, &out)
		return out, err
	case automation.ActionNotify:
		err := call(actx, OrchestrationActivities.Notify, in).Get(actx, &out)
		return out, err
	case automation.ActionWait:
		var until time.Time
		if d, ok := params["duration"].(string); ok {
			wait, err := automation.ParseWait(d)
			if err != nil {
				return nil, temporal.NewNonRetryableApplicationError("wait: duration "+err.Error(), string(models.CodeValidation), nil)
			}
			until = workflow.Now(ctx).Add(wait)
		} else {
			u, _ := params["until"].(string)
			t, err := time.Parse(time.RFC3339, u)
			if err != nil {
				return nil, temporal.NewNonRetryableApplicationError("wait: until must be an RFC 3339 time", string(models.CodeValidation), nil)
			}
			until = t
		}
		if wait := until.Sub(workflow.Now(ctx)); wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
		return map[string]any{"until": models.Timestamp(until)}, nil
	}
	return nil, temporal.NewNonRetryableApplicationError("unknown action "+step.Action, string(models.CodeValidation), nil)
}

// OrchestrationTrigger is the standing workflow of an event-triggered
// orchestration (its id is the orchestration's wf_ id). It waits for
// SignalOrchestrationEvent; for each event of its type it prepares a run
// (an operation whose id derives from the event, so a redelivered event
// starts nothing twice) and starts it as a child Orchestration workflow that
// outlives it (parent close policy abandon). It continues as new every 100
// events, after handling every signal already received. Cancelling it
// deactivates the orchestration: its operation ends cancelled; runs already
// started go on. It returns the cancellation.
func OrchestrationTrigger(ctx workflow.Context, in OrchestrationTriggerInput) error {
	log := workflow.GetLogger(ctx)
	handled := 0
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (map[string]any, error) {
		return map[string]any{"phase": "listening", "event_type": in.EventType, "events_handled": in.Handled + handled}, nil
	}); err != nil {
		return err
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, BookkeepingActivityOptions())
	if err := execute(summarized(dctx, "begin trigger "+in.Trigger.subject()), OrchestrationActivities.Begin, in.Trigger).Get(dctx, nil); err != nil {
		return err
	}
	events := workflow.GetSignalChannel(ctx, SignalOrchestrationEvent)
	handle := func(ev automation.TriggerEvent) {
		handled++
		if ev.Type != in.EventType {
			return
		}
		var run OrchestrationInput
		err := call(summarized(dctx, fmt.Sprintf("prepare the run for event %s: trigger %s", ev.ID, in.Trigger.subject())), OrchestrationActivities.PrepareRun, PrepareRunInput{Trigger: in.Trigger, Event: ev}).Get(dctx, &run)
		if err != nil {
			log.Error("preparing a triggered run failed", "trigger", in.Trigger.RequestID, "event", ev.ID, "error", err)
			return
		}
		if run.Run.RequestID == "" {
			return // nothing to run (too deep a chain of triggers)
		}
		cctx := workflow.WithChildOptions(dctx, workflow.ChildWorkflowOptions{
			WorkflowID:            run.Run.RequestID,
			ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes: searchAttributes(run.Run.OrganizationID, run.Run.Environment, string(automation.OpTypeOrchestration), run.Run.DefinitionID),
		})
		child := workflow.ExecuteChildWorkflow(cctx, OrchestrationWorkflow, run)
		if err := child.GetChildWorkflowExecution().Get(cctx, nil); err != nil {
			var started *temporal.ChildWorkflowExecutionAlreadyStartedError
			if !errors.As(err, &started) {
				log.Error("starting a triggered run failed", "trigger", in.Trigger.RequestID, "run", run.Run.RequestID, "error", err)
			}
		}
	}
	for {
		var ev automation.TriggerEvent
		cancelled := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(events, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ev) })
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.Select(ctx)
		if cancelled {
			if err := execute(summarized(dctx, "end trigger "+in.Trigger.subject()), OrchestrationActivities.FinishTrigger, in.Trigger).Get(dctx, nil); err != nil {
				log.Error("ending the trigger failed", "trigger", in.Trigger.RequestID, "error", err)
			}
			return ctx.Err()
		}
		handle(ev)
		if handled >= triggerRunsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			for events.ReceiveAsync(&ev) {
				handle(ev)
			}
			in.Handled += handled
			return workflow.NewContinueAsNewError(ctx, OrchestrationTriggerWorkflow, in)
		}
	}
}
