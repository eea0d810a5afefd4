package automation

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// orchestrationSteps returns the operation steps of a run of def.
func orchestrationSteps(def *OrchestrationDefinition) []string {
	names := make([]string, len(def.Steps))
	for i, st := range def.Steps {
		names[i] = StepName(st)
	}
	return names
}

// CreateOrchestration stores a validated orchestration under id (wf_) and,
// in the same transaction, its operation with the same id: for a manual
// trigger the run (type orchestration, one step per step), for an event
// trigger the standing operation (type orchestration_trigger, whose items
// will be its runs). The definition of an event trigger is active.
func (s *Store) CreateOrchestration(ctx context.Context, scope models.Scope, def *OrchestrationDefinition, id, createdBy string) (*operations.Operation, error) {
	def.ID, def.CreatedBy, def.Active = id, createdBy, def.EventType != ""
	input := map[string]any{"name": def.Name, "trigger": def.Trigger, "steps": def.Steps}
	var op *operations.Operation
	if def.EventType == "" {
		op = operations.NewOperation(id, OpTypeOrchestration, id, createdBy, orchestrationSteps(def), input)
	} else {
		op = operations.NewOperation(id, OpTypeOrchestrationTrigger, id, createdBy, nil, input)
		op.Steps = []operations.OperationStep{}
	}
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Create(def).Error; err != nil {
			return err
		}
		return tx.Create(op).Error
	})
	if err != nil {
		return nil, models.DBErr(err)
	}
	return op, nil
}

// OrchestrationIn returns the orchestration id in scope. Errors: NOT_FOUND.
func (s *Store) OrchestrationIn(ctx context.Context, scope models.Scope, id string) (*OrchestrationDefinition, error) {
	var def OrchestrationDefinition
	err := s.In(ctx, scope).Where("id = ?", id).Take(&def).Error
	return &def, models.NotFoundOr(err, "orchestration workflow")
}

// GetOrchestration returns an orchestration operation visible to p (a run,
// or an event trigger's standing operation) and its definition.
// Errors: NOT_FOUND (also for operations that are not orchestrations),
// INSUFFICIENT_PERMISSIONS.
func (s *Store) GetOrchestration(ctx context.Context, p *models.Principal, id string) (*operations.Operation, *OrchestrationDefinition, error) {
	op, err := s.operations.GetOperation(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if op.Type != OpTypeOrchestration && op.Type != OpTypeOrchestrationTrigger {
		return nil, nil, models.NotFound("orchestration workflow")
	}
	defID := op.ID
	if d, ok := op.Input["definition_id"].(string); ok && d != "" {
		defID = d
	}
	def, err := s.OrchestrationIn(ctx, models.TenantScope(op.OrganizationID, op.Environment), defID)
	if err != nil {
		return nil, nil, err
	}
	return op, def, nil
}

// OrchestrationsTriggeredBy returns the active orchestrations of scope (an
// organization and environment) whose trigger is event:<eventType>, oldest first.
func (s *Store) OrchestrationsTriggeredBy(ctx context.Context, scope models.Scope, eventType string) ([]OrchestrationDefinition, error) {
	var out []OrchestrationDefinition
	err := s.In(ctx, scope).Where("event_type = ? AND active = ?", eventType, true).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// TriggerEvent is the event that starts a triggered run, as its steps see it
// through ${event....}.
type TriggerEvent struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	ResourceID string         `json:"resource_id"`
	Data       map[string]any `json:"data"`
}

// Map returns the event as ${event....} references see it.
func (e TriggerEvent) Map() map[string]any {
	return map[string]any{"id": e.ID, "type": e.Type, "resource_id": e.ResourceID, "data": e.Data}
}

// TriggerDepth returns how deep in a chain of triggered runs an event was
// written: 0 for events not written by an orchestration run.
func TriggerDepth(data map[string]any) int {
	o, _ := data["orchestration"].(map[string]any)
	d, _ := models.NumberAsInt(o["depth"]) // json.Number when read from the event log
	return d
}

// EventTriggerDepth returns how deep in a chain of triggered runs the event
// with data was written: the depth its data carries (events of notify
// steps), or that of the operation named by its data.request_id (a run, or
// a provisioning started by one, records trigger_depth in its input); 0 for
// events of anything else.
func (s *Store) EventTriggerDepth(ctx context.Context, scope models.Scope, data map[string]any) int {
	depth := TriggerDepth(data)
	if id, ok := data["request_id"].(string); ok && id != "" {
		if op, err := s.operations.OperationIn(ctx, scope, id); err == nil {
			switch d := op.Input["trigger_depth"].(type) {
			case float64:
				depth = max(depth, int(d))
			case int:
				depth = max(depth, d)
			}
		}
	}
	return depth
}

// RecordEventOnce writes ev to the outbox in scope unless an event with its
// id exists (an activity's retry with a derived id).
func (s *Store) RecordEventOnce(ctx context.Context, scope models.Scope, ev *eventlog.Event) error {
	return models.DBErr(s.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).Create(ev).Error)
}

// TriggeredRunID returns the request id of the run that event evtID starts
// for orchestration defID: the same event always gives the same run.
func TriggeredRunID(defID, evtID string) string {
	return DerivedID(models.PrefixWorkflow, defID+"/"+evtID)
}

// PrepareTriggeredRun creates, once, the operation of the run of
// orchestration defID that event ev starts (pending, one step per step;
// depth is its place in a chain of triggered runs, see EventTriggerDepth),
// lists it first in the trigger's items (keeping the latest 100) and counts
// it on the definition. It returns the run's operation and the definition.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the trigger is no longer active).
func (s *Store) PrepareTriggeredRun(ctx context.Context, scope models.Scope, defID string, ev TriggerEvent, depth int) (*operations.Operation, *OrchestrationDefinition, error) {
	runID := TriggeredRunID(defID, ev.ID)
	var (
		run *operations.Operation
		def OrchestrationDefinition
	)
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", defID).Take(&def).Error; err != nil {
			return models.NotFoundOr(err, "orchestration workflow")
		}
		var existing operations.Operation
		err := tx.Where("id = ?", runID).Take(&existing).Error
		if err == nil {
			run = &existing
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		if !def.Active {
			return models.Errorf(models.CodeInvalidStateTransition, "orchestration %s is no longer active", defID)
		}
		run = operations.NewOperation(runID, OpTypeOrchestration, defID, def.CreatedBy, orchestrationSteps(&def), map[string]any{
			"definition_id": defID, "name": def.Name, "trigger": def.Trigger, "steps": def.Steps, "event": ev.Map(), "trigger_depth": depth,
		})
		if err := tx.Create(run).Error; err != nil {
			return err
		}
		if err := tx.Model(&OrchestrationDefinition{}).Where("id = ?", defID).Update("runs", gorm.Expr("runs + 1")).Error; err != nil {
			return err
		}
		_, err = s.operations.UpdateOperation(ctx, scope, tx, defID, func(op *operations.Operation) error {
			if op.Status.Terminal() {
				return operations.ErrTerminal(op)
			}
			op.Status = operations.OpInProgress
			op.Items = append([]operations.OperationItem{{ID: runID, Status: string(operations.OpPending)}}, op.Items...)
			if len(op.Items) > MaxTriggerRunsListed {
				op.Items = op.Items[:MaxTriggerRunsListed]
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return run, &def, nil
}

// RecordTriggerRun sets the status (and error) of run runID in the items of
// event trigger triggerID. A trigger that has ended, or no longer lists the
// run, is left alone.
func (s *Store) RecordTriggerRun(ctx context.Context, scope models.Scope, triggerID, runID string, status operations.OperationStatus, e *operations.OperationError) error {
	_, err := s.operations.UpdateOperation(ctx, scope, nil, triggerID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		for i := range op.Items {
			if op.Items[i].ID == runID {
				op.Items[i].Status, op.Items[i].Error = string(status), e
			}
		}
		return nil
	})
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	return err
}

// FinishTrigger ends an event trigger (it was cancelled): its definition
// becomes inactive and its operation cancelled, with the number of runs it
// started as result. Calling it again is harmless.
func (s *Store) FinishTrigger(ctx context.Context, scope models.Scope, id string) error {
	var def OrchestrationDefinition
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&def).Error; err != nil {
			return models.NotFoundOr(err, "orchestration workflow")
		}
		return tx.Model(&OrchestrationDefinition{}).Where("id = ?", id).Update("active", false).Error
	})
	if err != nil {
		return models.AsError(err)
	}
	_, err = s.operations.FinishOperation(ctx, scope, id, operations.FinishInput{Status: operations.OpCancelled, Result: map[string]any{"runs": def.Runs, "active": false}})
	if models.ErrorCode(err) == models.CodeInvalidStateTransition {
		return nil
	}
	return err
}

// DeactivateOrchestration marks an orchestration inactive (its trigger's
// workflow is gone), so that no event is sent to it again.
func (s *Store) DeactivateOrchestration(ctx context.Context, scope models.Scope, id string) error {
	return models.DBErr(s.In(ctx, scope).Model(&OrchestrationDefinition{}).Where("id = ?", id).Update("active", false).Error)
}

// StepOutcome is how one step of a run ended.
type StepOutcome struct {
	Order  int                        `json:"order"`
	Status operations.StepStatus      `json:"status"`
	Output map[string]any             `json:"output,omitempty"`
	Error  *operations.OperationError `json:"error,omitempty"`
}

// FailStep marks a step failed with e. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) FailStep(ctx context.Context, scope models.Scope, id, step string, e *operations.OperationError) error {
	_, err := s.operations.UpdateOperation(ctx, scope, nil, id, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		st := op.Step(step)
		now := s.Now()
		if st.StartedAt == nil {
			st.StartedAt = &now
		}
		st.Status, st.FinishedAt, st.Error = operations.StepFailed, &now, e
		return nil
	})
	return err
}

// FinishOrchestration ends a run: completed when every step completed,
// cancelled when it was cancelled, failed otherwise. Steps still pending
// become skipped and steps still running cancelled; the result lists the
// steps that ran (completed), failed and were skipped, and each step's
// outputs by order. Finishing it again is harmless.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (it ended otherwise).
func (s *Store) FinishOrchestration(ctx context.Context, scope models.Scope, id string, cancelled bool, outcomes []StepOutcome) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, id, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		now := s.Now()
		var ran, failed, skipped, stopped []string
		for i := range op.Steps {
			st := &op.Steps[i]
			switch st.Status {
			case operations.StepPending:
				st.Status = operations.StepSkipped
			case operations.StepInProgress:
				st.Status, st.FinishedAt = operations.StepCancelled, &now
			}
			switch st.Status {
			case operations.StepCompleted:
				ran = append(ran, st.Name)
			case operations.StepFailed:
				failed = append(failed, st.Name)
			case operations.StepSkipped:
				skipped = append(skipped, st.Name)
			case operations.StepCancelled:
				stopped = append(stopped, st.Name)
			}
		}
		outputs := map[string]any{}
		for _, o := range outcomes {
			if o.Output != nil {
				outputs[strconv.Itoa(o.Order)] = o.Output
			}
		}
		op.Result = map[string]any{"ran": nonNil(ran), "failed": nonNil(failed), "skipped": nonNil(skipped), "cancelled": nonNil(stopped), "outputs": outputs}
		op.Error = nil
		switch {
		case cancelled:
			op.Status = operations.OpCancelled
		case len(failed) == 0 && len(skipped) == 0 && len(stopped) == 0:
			op.Status = operations.OpCompleted
		default:
			op.Status = operations.OpFailed
			details := map[string]any{"failed_steps": nonNil(failed), "skipped_steps": nonNil(skipped)}
			code, msg := models.CodeProvisioningFailed, "the orchestration did not complete"
			for _, st := range op.Steps {
				if st.Status == operations.StepFailed && st.Error != nil {
					code, msg = st.Error.Code, fmt.Sprintf("step %s failed: %s", st.Name, st.Error.Message)
					details["first_failed_step"] = st.Name
					break
				}
			}
			if len(skipped) > 0 {
				msg += fmt.Sprintf("; %d dependent steps were skipped", len(skipped))
			}
			op.Error = &operations.OperationError{Code: code, Message: msg, Details: details}
		}
		op.FinishedAt = &now
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// EnsureOperation creates op in scope unless an operation with its id
// exists (an activity's retry); either way it returns the stored one.
func (s *Store) EnsureOperation(ctx context.Context, scope models.Scope, op *operations.Operation) (*operations.Operation, error) {
	db := s.In(ctx, scope)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(op).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return s.operations.OperationIn(ctx, scope, op.ID)
}

// DeleteOrchestration removes an orchestration whose workflow could not be
// started: its definition and its operation (still pending).
func (s *Store) DeleteOrchestration(ctx context.Context, scope models.Scope, id string) error {
	return models.DBErr(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND status = ?", id, operations.OpPending).Delete(&operations.Operation{}).Error; err != nil {
			return err
		}
		return tx.Where("id = ?", id).Delete(&OrchestrationDefinition{}).Error
	}))
}

// StepUpdateInput returns the change of service that a modify_service or
// scale_service step's (resolved) parameters ask for, and whether every
// value is known (no reference left). Errors: VALIDATION_ERROR (fields
// relative to the step's parameters).
func StepUpdateInput(action string, params map[string]any) (services.ServiceUpdateInput, bool, error) {
	complete := true
	str := func(v any) string {
		sv, _ := v.(string)
		if hasRef(sv) {
			complete = false
		}
		return strings.TrimSpace(sv)
	}
	if action == ActionModifyService {
		c, _ := params["changes"].(map[string]any)
		ch := ServiceChanges{Name: str(c["name"]), SLA: str(c["sla"]), Bandwidth: str(c["bandwidth"]), Redundancy: str(c["redundancy"]), Monitoring: str(c["monitoring"])}
		if ch.Empty() {
			return services.ServiceUpdateInput{}, false, models.Invalid(models.FieldIssue{Field: "changes", Issue: "must change at least one of name, sla, bandwidth, redundancy, monitoring"})
		}
		return ch.UpdateInput(), complete, nil
	}
	var v models.Validator
	sc := &services.ScalingInput{Action: str(params["scaling_action"]), NewBandwidth: str(params["new_bandwidth"])}
	switch n := params["new_quantity"].(type) {
	case float64:
		sc.NewQuantity = int(n)
	case int:
		sc.NewQuantity = n
	}
	if d := str(params["effective_date"]); d != "" && !hasRef(d) {
		t, err := time.Parse(time.RFC3339, d)
		v.Check(err == nil, "effective_date", "must be an RFC 3339 time")
		sc.EffectiveDate = &t
	}
	if w, ok := params["maintenance_window"].(map[string]any); ok {
		sc.Window = &services.MaintenanceWindowInput{Duration: str(w["duration"])}
		if st := str(w["start"]); st != "" && !hasRef(st) {
			t, err := time.Parse(time.RFC3339, st)
			v.Check(err == nil, "maintenance_window.start", "must be an RFC 3339 time")
			sc.Window.Start = &t
		}
	}
	if err := v.Err(); err != nil {
		return services.ServiceUpdateInput{}, false, err
	}
	return services.ServiceUpdateInput{Scaling: sc}, complete, nil
}
