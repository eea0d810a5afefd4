package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// Orchestration holds the dependencies of the orchestration activities,
// registered by worker.RegisterActivities under the names
// "Orchestration.<Method>" (workflows.OrchestrationActivities): the store, the southbound and (to hand events to triggers) a
// Temporal client, which may be nil where no events are dispatched.
type Orchestration struct {
	store      *models.Store
	operations *operations.Store
	catalog    *catalog.Store
	services   *services.Store
	automation *automation.Store
	net        simulator.Southbound
	temporal   client.Client
	log        *slog.Logger
}

// NewOrchestration returns the orchestration activities.
func NewOrchestration(store *models.Store, net simulator.Southbound, c client.Client, log *slog.Logger) *Orchestration {
	if log == nil {
		log = slog.Default()
	}
	return &Orchestration{store: store, operations: operations.NewStore(store), catalog: catalog.NewStore(store), services: services.NewStore(store), automation: automation.NewStore(store), net: net, temporal: c, log: log}
}

func (a *Orchestration) fail(ctx context.Context, what string, err error) error {
	return bulkAppError(ctx, a.log, what, err)
}

// Begin marks the run (or the trigger's standing operation) in progress and
// records the current run id. Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (a *Orchestration) Begin(ctx context.Context, ref workflows.OrchestrationRef) error {
	runID := activity.GetInfo(ctx).WorkflowExecution.RunID
	_, err := a.operations.BeginOperation(ctx, ref.Scope(), ref.RequestID, runID)
	return a.fail(ctx, workflows.ActivityName(workflows.OrchestrationActivities.Begin), err)
}

// MarkStep records a step's start, completion or failure on the run's operation.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the run has ended).
func (a *Orchestration) MarkStep(ctx context.Context, in workflows.OrchestrationMarkInput) error {
	scope := in.Run.Scope()
	var err error
	switch in.Mark {
	case workflows.MarkStarted:
		err = a.operations.StartStep(ctx, scope, in.Run.RequestID, in.Step)
	case workflows.MarkCompleted:
		err = a.operations.CompleteStep(ctx, scope, in.Run.RequestID, in.Step)
	default:
		err = a.automation.FailStep(ctx, scope, in.Run.RequestID, in.Step, in.Error)
	}
	return a.fail(ctx, workflows.ActivityName(workflows.OrchestrationActivities.MarkStep), err)
}

// orchPrincipal is the principal a run acts as: a customer of the run's
// organization and environment with its creator's permissions, never more
// (runs that carry none act with services:read and services:write, what
// creating an orchestration requires).
func orchPrincipal(run workflows.OrchestrationRef) *models.Principal {
	perms := run.Permissions
	if perms == nil {
		perms = []string{"services:read", "services:write"}
	}
	return &models.Principal{Kind: models.PrincipalAPIKey, ID: run.CreatedBy, OrganizationID: run.OrganizationID,
		Environment: run.Environment, Role: models.RoleCustomer, Permissions: perms}
}

// stepPrincipal returns the principal a step acts as, refusing a step whose
// action needs a permission the orchestration's creator did not hold.
// Errors: INSUFFICIENT_PERMISSIONS.
func stepPrincipal(in workflows.OrchestrationStepInput) (*models.Principal, error) {
	p := orchPrincipal(in.Run)
	return p, automation.StepPrincipalCan(p, in.Step)
}

func orchString(params map[string]any, name string) string {
	s, _ := params[name].(string)
	return strings.TrimSpace(s)
}

func orchStrings(params map[string]any, name string) map[string]string {
	out := map[string]string{}
	m, _ := params[name].(map[string]any)
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = strings.TrimSpace(s)
		}
	}
	return out
}

// orchStepError names the step's parameter in a validation error.
func orchStepError(step automation.OrchestrationStep, err error) error {
	e := models.AsError(err)
	if e.Code == models.CodeValidation {
		return models.Errorf(models.CodeValidation, "step %d (%s): %s", step.Order, step.Action, e.Message)
	}
	return err
}

// PrepareProvision validates a provision_service step (as POST
// /services/provision would, availability included) and creates, once, the
// provisioning operation its child workflow runs as. Its request id and
// service id derive from the run and the step, so a retry finds them.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH.
func (a *Orchestration) PrepareProvision(ctx context.Context, in workflows.OrchestrationStepInput) (*workflows.ProvisioningInput, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.PrepareProvision)
	if _, err := stepPrincipal(in); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	c := orchStrings(in.Parameters, "customizations")
	tin := services.TemplateInput{ServiceTemplate: orchString(in.Parameters, "template"), AccountID: orchString(in.Parameters, "account_id"),
		Bandwidth: c["bandwidth"], Redundancy: c["redundancy"], Monitoring: c["monitoring"]}
	id, loc, err := automation.ParseLocation("location", orchString(in.Parameters, "location"))
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	tin.LocationID, tin.Location = id, loc
	o, scope, err := a.services.PrepareTemplateOrder(ctx, orchPrincipal(in.Run), tin)
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	seed := fmt.Sprintf("%s#%d", in.Run.RequestID, in.Step.Order)
	childID, svcID := automation.DerivedID(models.PrefixProvisioning, seed), automation.DerivedID(models.PrefixService, seed)
	op := operations.NewOperation(childID, operations.OpTypeProvisioning, svcID, in.Run.CreatedBy, operations.ProvisioningSteps(false), map[string]any{
		"orchestration_request_id": in.Run.RequestID, "step": in.Step.Order, "trigger_depth": in.Run.Depth,
	})
	if _, err := a.automation.EnsureOperation(ctx, scope, op); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	return &workflows.ProvisioningInput{RequestID: childID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
		ServiceID: svcID, Order: *o}, nil
}

// ChangeService performs a suspend_service or resume_service step (once
// per step) and returns the service's id and status.
// Errors: NOT_FOUND, SERVICE_CONFLICT, SERVICE_MAINTENANCE, INVALID_STATE_TRANSITION.
func (a *Orchestration) ChangeService(ctx context.Context, in workflows.OrchestrationStepInput) (map[string]any, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.ChangeService)
	if _, err := stepPrincipal(in); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	req := automation.ChangeRequest{Key: automation.ChangeKey(in.Run.RequestID, in.Step.Order), OperationID: in.Run.RequestID,
		ServiceID: orchString(in.Parameters, "service_id"), Kind: automation.ChangeResume}
	if in.Step.Action == automation.ActionSuspendService {
		req.Kind = automation.ChangeSuspend
	}
	svc, err := bulkChangeService(ctx, a.store, a.net, in.Run.Scope(), req)
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	return map[string]any{"service_id": svc.ID, "status": string(svc.Status)}, nil
}

// PrepareChange prepares a modify_service or scale_service step: its
// modification (mod_) or scaling (scl_) operation, once per step, claiming
// the service, for a child ServiceChange workflow; Noop when a modification
// changes nothing. Errors: NOT_FOUND, VALIDATION_ERROR, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION, SERVICE_CONFLICT, INSUFFICIENT_BANDWIDTH.
func (a *Orchestration) PrepareChange(ctx context.Context, in workflows.OrchestrationStepInput) (*workflows.ChangeStart, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.PrepareChange)
	if _, err := stepPrincipal(in); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	upd, _, err := automation.StepUpdateInput(in.Step.Action, in.Parameters)
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	prefix := services.PrefixModification
	if in.Step.Action == automation.ActionScaleService {
		prefix = services.PrefixScaling
	}
	scope := in.Run.Scope()
	id := automation.DerivedID(prefix, fmt.Sprintf("%s#%d", in.Run.RequestID, in.Step.Order))
	c, err := a.automation.PrepareChangeOperation(ctx, scope, in.Run.CreatedBy, id, orchString(in.Parameters, "service_id"), upd,
		map[string]any{"orchestration_request_id": in.Run.RequestID, "step": in.Step.Order, "trigger_depth": in.Run.Depth})
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	return changeStart(scope, c), nil
}

// CheckAvailability performs a run_availability_check step: it fails when a
// service type asked for cannot be ordered at the location with the
// bandwidth asked for (or, when none is named, when nothing can), so that
// the steps depending on it are skipped. It returns the location id, the
// available service types and available: true.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH.
func (a *Orchestration) CheckAvailability(ctx context.Context, in workflows.OrchestrationStepInput) (map[string]any, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.CheckAvailability)
	if _, err := stepPrincipal(in); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	id, loc, err := automation.ParseLocation("location", orchString(in.Parameters, "location"))
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	q := catalog.AvailabilityQuery{LocationID: id, Bandwidth: orchString(in.Parameters, "bandwidth")}
	if loc != nil {
		q.Location = *loc
	}
	if list, ok := in.Parameters["service_types"].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				q.ServiceTypes = append(q.ServiceTypes, s)
			}
		}
	}
	report, err := a.catalog.CheckAvailability(ctx, in.Run.Scope(), q)
	if err != nil {
		return nil, a.fail(ctx, what, orchStepError(in.Step, err))
	}
	if len(q.ServiceTypes) > 0 {
		for _, t := range q.ServiceTypes {
			if err := report.Require(t); err != nil {
				return nil, a.fail(ctx, what, err)
			}
		}
	} else if err := report.Check(); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	available := []string{}
	for _, s := range report.Services {
		if s.Available {
			available = append(available, s.Type.Name)
		}
	}
	return map[string]any{"location_id": report.Location.ID, "available": true, "service_types": available}, nil
}

// Notify performs a notify step: it writes, once, an outbox event of the
// step's type (delivered to webhook subscribers like any other) about the
// step's service, or about the run when none is named, carrying the message
// and the run (data.orchestration: workflow_id, request_id, step, depth).
// Errors: NOT_FOUND (service_id), VALIDATION_ERROR.
func (a *Orchestration) Notify(ctx context.Context, in workflows.OrchestrationStepInput) (map[string]any, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.Notify)
	if _, err := stepPrincipal(in); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	scope := in.Run.Scope()
	typ, msg := orchString(in.Parameters, "event"), orchString(in.Parameters, "message")
	data := map[string]any{
		"message":       msg,
		"orchestration": map[string]any{"workflow_id": in.Run.DefinitionID, "request_id": in.Run.RequestID, "step": in.Step.Order, "depth": in.Run.Depth},
	}
	resource := in.Run.RequestID
	if id := orchString(in.Parameters, "service_id"); id != "" {
		p := orchPrincipal(in.Run)
		svc, err := a.services.GetService(ctx, p, id)
		if err != nil {
			return nil, a.fail(ctx, what, orchStepError(in.Step, err))
		}
		resource = svc.ID
		data["service"] = map[string]any{"id": svc.ID, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType, "name": svc.Name}
	}
	ev := eventlog.NewEvent(typ, resource, data)
	ev.ID = automation.DerivedID(models.PrefixEvent, fmt.Sprintf("%s#%d", in.Run.RequestID, in.Step.Order))
	if err := a.automation.RecordEventOnce(ctx, scope, ev); err != nil {
		return nil, a.fail(ctx, what, err)
	}
	return map[string]any{"event_id": ev.ID, "event": typ}, nil
}

// Finish ends the run (models.FinishOrchestration) and, for a triggered
// run, records its outcome in the trigger's items.
func (a *Orchestration) Finish(ctx context.Context, in workflows.OrchestrationFinishInput) error {
	what := workflows.ActivityName(workflows.OrchestrationActivities.Finish)
	scope := in.Run.Scope()
	op, err := a.automation.FinishOrchestration(ctx, scope, in.Run.RequestID, in.Cancelled, in.Outcomes)
	if err != nil {
		return a.fail(ctx, what, err)
	}
	if in.Run.TriggerID != "" {
		if err := a.automation.RecordTriggerRun(ctx, scope, in.Run.TriggerID, in.Run.RequestID, op.Status, op.Error); err != nil {
			return a.fail(ctx, what, err)
		}
	}
	return nil
}

// PrepareRun prepares the run that event in.Event starts for the trigger:
// its operation (once per event: its id is models.TriggeredRunID of the
// trigger and the event) and its workflow input. It returns an empty input
// when the event comes from a chain of triggered runs MaxTriggerDepth deep,
// the trigger is no longer active, or the event's run has already ended (an
// event handed over again after its run, even once the engine has
// forgotten the run's workflow, starts nothing).
func (a *Orchestration) PrepareRun(ctx context.Context, in workflows.PrepareRunInput) (*workflows.OrchestrationInput, error) {
	what := workflows.ActivityName(workflows.OrchestrationActivities.PrepareRun)
	scope := in.Trigger.Scope()
	depth := a.automation.EventTriggerDepth(ctx, scope, in.Event.Data)
	if depth >= automation.MaxTriggerDepth {
		a.log.WarnContext(ctx, "event not run: too deep a chain of triggered orchestrations", "trigger", in.Trigger.RequestID, "event", in.Event.ID, "depth", depth)
		return &workflows.OrchestrationInput{}, nil
	}
	run, def, err := a.automation.PrepareTriggeredRun(ctx, scope, in.Trigger.RequestID, in.Event, depth+1)
	if models.ErrorCode(err) == models.CodeInvalidStateTransition {
		return &workflows.OrchestrationInput{}, nil
	}
	if err != nil {
		return nil, a.fail(ctx, what, err)
	}
	if run.Status.Terminal() {
		return &workflows.OrchestrationInput{}, nil
	}
	return &workflows.OrchestrationInput{
		Run: workflows.OrchestrationRef{RequestID: run.ID, OrganizationID: scope.OrganizationID, Environment: scope.Environment,
			DefinitionID: def.ID, TriggerID: def.ID, Depth: depth + 1, CreatedBy: def.CreatedBy, Permissions: def.CreatorPermissions},
		Steps: def.Steps, Event: in.Event.Map(),
	}, nil
}

// FinishTrigger ends an event trigger that was cancelled: the orchestration
// becomes inactive and its operation cancelled.
func (a *Orchestration) FinishTrigger(ctx context.Context, ref workflows.OrchestrationRef) error {
	return a.fail(ctx, workflows.ActivityName(workflows.OrchestrationActivities.FinishTrigger), a.automation.FinishTrigger(ctx, ref.Scope(), ref.RequestID))
}

// DispatchEvent hands an outbox event to the event triggers of its
// organization waiting for its type (see DispatchOrchestrationEvent) and
// returns how many it reached. Errors: DEPENDENCY_UNAVAILABLE (no Temporal client).
func (a *Orchestration) DispatchEvent(ctx context.Context, in workflows.OrchestrationEventInput) (int, error) {
	ev := &eventlog.Event{ID: in.Event.ID, Type: in.Event.Type, ResourceID: in.Event.ResourceID, Data: in.Event.Data,
		Tenant: models.Tenant{OrganizationID: in.OrganizationID, Environment: in.Environment}}
	n, err := DispatchOrchestrationEvent(ctx, a.temporal, a.store, ev)
	return n, a.fail(ctx, workflows.ActivityName(workflows.OrchestrationActivities.DispatchEvent), err)
}

// OrchestrationEventHook returns the events dispatcher's OnEvent hook
// (events.Options.OnEvent) that hands every outbox event to the event
// triggers of orchestrations (DispatchOrchestrationEvent) through c.
// Handing an event over twice starts one run.
func OrchestrationEventHook(c client.Client, store *models.Store) func(context.Context, *eventlog.Event) error {
	return func(ctx context.Context, ev *eventlog.Event) error {
		_, err := DispatchOrchestrationEvent(ctx, c, store, ev)
		return err
	}
}

// DispatchOrchestrationEvent hands ev, an outbox event, to every active
// orchestration of ev's organization and environment whose trigger is
// event:<ev.Type>, by signalling its trigger workflow
// (workflows.SignalOrchestrationEvent); the trigger then starts one run per
// event (a redelivered event starts nothing new). A trigger whose workflow
// no longer exists is deactivated. The events dispatcher calls it once per
// outbox event (OrchestrationEventHook), and a workflow may run the
// Orchestration.DispatchEvent activity instead. It returns how many
// triggers it reached.
// Errors: DEPENDENCY_UNAVAILABLE (no client, or Temporal unreachable).
func DispatchOrchestrationEvent(ctx context.Context, c client.Client, store *models.Store, ev *eventlog.Event) (int, error) {
	scope := models.TenantScope(ev.OrganizationID, ev.Environment)
	defs, err := automation.NewStore(store).OrchestrationsTriggeredBy(ctx, scope, ev.Type)
	if err != nil || len(defs) == 0 {
		return 0, err
	}
	if c == nil {
		return 0, models.Errorf(models.CodeDependencyUnavailable, "no workflow engine is configured to run triggered orchestrations")
	}
	payload := automation.TriggerEvent{ID: ev.ID, Type: ev.Type, ResourceID: ev.ResourceID, Data: ev.Data}
	sent := 0
	for _, def := range defs {
		err := c.SignalWorkflow(ctx, def.ID, "", workflows.SignalOrchestrationEvent, payload)
		var nf *serviceerror.NotFound
		switch {
		case errors.As(err, &nf):
			if derr := automation.NewStore(store).DeactivateOrchestration(ctx, scope, def.ID); derr != nil {
				return sent, derr
			}
		case err != nil:
			e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable; retry later")
			e.Cause = err
			return sent, e
		default:
			sent++
		}
	}
	return sent, nil
}
