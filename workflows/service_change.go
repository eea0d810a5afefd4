package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
)

// ServiceChangeWorkflow is the registered name of the workflow that changes
// a service: a modification (at once) or a scaling (in a maintenance window).
const ServiceChangeWorkflow = "ServiceChange"

// Registered names of the change activities (activities.Services).
const (
	ActivityChangeBegin            = "ServiceChange.Begin"
	ActivityChangeMarkStep         = "ServiceChange.MarkStep"
	ActivityChangeStartMaintenance = "ServiceChange.StartMaintenance"
	ActivityChangeValidate         = "ServiceChange.Validate"
	ActivityChangeReserveCapacity  = "ServiceChange.ReserveCapacity"
	ActivityChangeApply            = "ServiceChange.Apply"
	ActivityChangeEndMaintenance   = "ServiceChange.EndMaintenance"
	ActivityChangeReleaseCapacity  = "ServiceChange.ReleaseCapacity"
	ActivityChangeFinish           = "ServiceChange.Finish"
)

// ServiceChangeInput is the one argument of the change workflow and of its
// activities: the operation (request id = workflow id), its tenant, the
// service and the validated change.
type ServiceChangeInput struct {
	RequestID      string               `json:"request_id"`
	OrganizationID string               `json:"organization_id"`
	Environment    models.Environment   `json:"environment"`
	ServiceID      string               `json:"service_id"`
	Update         models.ServiceUpdate `json:"update"`
}

// Scope returns the tenant scope the operation belongs to.
func (in ServiceChangeInput) Scope() models.Scope {
	return models.TenantScope(in.OrganizationID, in.Environment)
}

// ChangeStepInput marks a step of a change that no activity of its own runs
// (the waits): started, or done.
type ChangeStepInput struct {
	Input ServiceChangeInput `json:"input"`
	Step  string             `json:"step"`
	Done  bool               `json:"done"`
}

// ChangeFinishInput ends a change that did not complete.
type ChangeFinishInput struct {
	Input              ServiceChangeInput     `json:"input"`
	Status             models.OperationStatus `json:"status"`
	FailedStep         string                 `json:"failed_step"`
	Error              *models.OperationError `json:"error"`
	Compensated        []string               `json:"compensated"`
	CompensationErrors []string               `json:"compensation_errors"`
}

// ServiceChangeResult is what a completed change returns.
type ServiceChangeResult struct {
	ServiceID string `json:"service_id"`
	Status    string `json:"status"`
}

// sleepUntil waits on a durable timer until t (not at all when t has passed).
func sleepUntil(ctx workflow.Context, t *time.Time) error {
	if t == nil {
		return nil
	}
	if d := t.Sub(workflow.Now(ctx)); d > 0 {
		return workflow.Sleep(ctx, d)
	}
	return nil
}

// ServiceChange changes a service. A modification validates, reserves the
// new bandwidth when it changes one (in place of the old), and applies the
// change (service.modified), completing the operation. A scaling first
// records its maintenance window (service.maintenance_scheduled), waits for
// the window's start with a durable timer, puts the service in maintenance,
// waits for the effective date if later, applies the change the same way,
// and leaves maintenance at the window's end. A failure or cancellation
// before the change is applied releases the new capacity, ends the
// maintenance and ends the operation failed (PROVISIONING_FAILED) or
// cancelled; once applied, the change is no longer cancelled (the rest runs
// on a disconnected context).
func ServiceChange(ctx workflow.Context, in ServiceChangeInput) (*ServiceChangeResult, error) {
	log := workflow.GetLogger(ctx)
	u := in.Update
	progress := ProvisioningProgress{Phase: PhaseStarting, Completed: []string{}}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (ProvisioningProgress, error) { return progress, nil }); err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	var (
		comps   []compensation
		step    string
		applied bool
	)
	run := func(c workflow.Context, name, activity, undo string) error {
		step, progress.CurrentStep = name, name
		if undo != "" {
			comps = append(comps, compensation{step: name, activity: undo, label: "release_capacity"})
		}
		if err := workflow.ExecuteActivity(c, activity, in).Get(c, nil); err != nil {
			return err
		}
		progress.Completed = append(progress.Completed, name)
		return nil
	}
	mark := func(c workflow.Context, name string, done bool) error {
		return workflow.ExecuteActivity(c, ActivityChangeMarkStep, ChangeStepInput{Input: in, Step: name, Done: done}).Get(c, nil)
	}

	err := func() error {
		if err := workflow.ExecuteActivity(actx, ActivityChangeBegin, in).Get(actx, nil); err != nil {
			return err
		}
		if u.Windowed() {
			step, progress.Phase, progress.CurrentStep, progress.ScheduledFor = models.StepWaitForWindow, PhaseScheduled, models.StepWaitForWindow, u.WindowStart
			if err := mark(actx, models.StepWaitForWindow, false); err != nil {
				return err
			}
			log.Info("waiting for the maintenance window", "request_id", in.RequestID, "start", u.WindowStart)
			if err := sleepUntil(ctx, u.WindowStart); err != nil {
				return err
			}
			if err := mark(actx, models.StepWaitForWindow, true); err != nil {
				return err
			}
			progress.Completed = append(progress.Completed, models.StepWaitForWindow)
			progress.Phase = PhaseRunning
			if err := run(actx, models.StepStartMaintenance, ActivityChangeStartMaintenance, ""); err != nil {
				return err
			}
			if err := sleepUntil(ctx, u.ApplyAt); err != nil {
				return err
			}
		}
		progress.Phase = PhaseRunning
		if err := run(actx, models.StepValidate, ActivityChangeValidate, ""); err != nil {
			return err
		}
		if len(u.Capacity) > 0 {
			if err := run(actx, models.StepReserveCapacity, ActivityChangeReserveCapacity, ActivityChangeReleaseCapacity); err != nil {
				return err
			}
		}
		if err := run(actx, models.StepApply, ActivityChangeApply, ""); err != nil {
			return err
		}
		applied = true
		return nil
	}()
	if err == nil && u.Windowed() {
		// Applied: the rest is no longer cancelled.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dactx := workflow.WithActivityOptions(dctx, CompensationActivityOptions())
		step, progress.CurrentStep = models.StepEndMaintenance, models.StepEndMaintenance
		err = func() error {
			if err := mark(dactx, models.StepEndMaintenance, false); err != nil {
				return err
			}
			if err := sleepUntil(dctx, u.WindowEnd); err != nil {
				return err
			}
			if err := workflow.ExecuteActivity(dactx, ActivityChangeEndMaintenance, in).Get(dactx, nil); err != nil {
				return err
			}
			progress.Completed = append(progress.Completed, models.StepEndMaintenance)
			return nil
		}()
	}
	if err == nil {
		progress.Phase, progress.CurrentStep = PhaseDone, ""
		return &ServiceChangeResult{ServiceID: in.ServiceID, Status: "completed"}, nil
	}

	cancelled := !applied && (temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled))
	log.Warn("service change did not complete", "request_id", in.RequestID, "step", step, "cancelled", cancelled, "error", err)
	progress.Phase = PhaseCompensating
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
	fin := ChangeFinishInput{Input: in, FailedStep: step, Compensated: []string{}, CompensationErrors: []string{}}
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		if cerr := workflow.ExecuteActivity(dctx, c.activity, in).Get(dctx, nil); cerr != nil {
			fin.CompensationErrors = append(fin.CompensationErrors, fmt.Sprintf("%s: %s", c.label, reasonOf(cerr).message))
			continue
		}
		fin.Compensated = append(fin.Compensated, c.step)
	}
	r := reasonOf(err)
	if cancelled {
		fin.Status = models.OpCancelled
	} else {
		fin.Status = models.OpFailed
		details := map[string]any{"step": step, "reason_code": string(r.code), "compensated": len(fin.CompensationErrors) == 0, "applied": applied}
		for k, v := range r.details {
			if _, taken := details[k]; !taken {
				details[k] = v
			}
		}
		if len(fin.CompensationErrors) > 0 {
			details["compensation_errors"] = fin.CompensationErrors
		}
		fin.Error = &models.OperationError{Code: models.CodeProvisioningFailed, Message: fmt.Sprintf("%s failed: %s", step, r.message), Details: details}
	}
	if ferr := workflow.ExecuteActivity(dctx, ActivityChangeFinish, fin).Get(dctx, nil); ferr != nil {
		log.Error("recording the end of the change failed", "request_id", in.RequestID, "error", ferr)
	}
	progress.Phase, progress.CurrentStep = PhaseDone, ""
	if cancelled {
		return nil, err
	}
	return nil, temporal.NewNonRetryableApplicationError(fin.Error.Message, string(models.CodeProvisioningFailed), err, fin.Error.Details)
}
