package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
)

// DecommissionWorkflow is the registered name of the decommission workflow.
const DecommissionWorkflow = "Decommission"

// Registered names of the decommission activities (activities.Services).
const (
	ActivityDecomBegin             = "Decommission.Begin"
	ActivityDecomMarkStep          = "Decommission.MarkStep"
	ActivityDecomValidate          = "Decommission.Validate"
	ActivityDecomMigrateData       = "Decommission.MigrateData"
	ActivityDecomVerifyMigration   = "Decommission.VerifyMigration"
	ActivityDecomRollbackMigration = "Decommission.RollbackMigration"
	ActivityDecomDeactivate        = "Decommission.Deactivate"
	ActivityDecomReleaseInventory  = "Decommission.ReleaseInventory"
	ActivityDecomStopBilling       = "Decommission.StopBilling"
	ActivityDecomRecord            = "Decommission.Record"
	ActivityDecomFinish            = "Decommission.Finish"
)

// DecommissionInput is the one argument of the decommission workflow and of
// its activities: the operation (request id = workflow id, dec_), its
// tenant and the validated plan.
type DecommissionInput struct {
	RequestID      string                  `json:"request_id"`
	OrganizationID string                  `json:"organization_id"`
	Environment    models.Environment      `json:"environment"`
	ServiceID      string                  `json:"service_id"`
	Scheduled      bool                    `json:"scheduled"` // the operation has a wait_for_date step
	Plan           models.DecommissionPlan `json:"plan"`
}

// Scope returns the tenant scope the operation belongs to.
func (in DecommissionInput) Scope() models.Scope {
	return models.TenantScope(in.OrganizationID, in.Environment)
}

// DecomStepInput marks the wait_for_date step: started, or done.
type DecomStepInput struct {
	Input DecommissionInput `json:"input"`
	Step  string            `json:"step"`
	Done  bool              `json:"done"`
}

// DecomFinishInput ends a decommission that did not complete.
type DecomFinishInput struct {
	Input              DecommissionInput      `json:"input"`
	Status             models.OperationStatus `json:"status"`
	FailedStep         string                 `json:"failed_step"`
	Error              *models.OperationError `json:"error"`
	Compensated        []string               `json:"compensated"`
	CompensationErrors []string               `json:"compensation_errors"`
}

// DecommissionResult is what a completed decommission returns.
type DecommissionResult struct {
	ServiceID string `json:"service_id"`
	Status    string `json:"status"`
}

// Decommission takes a service out: it waits for the decommission date with
// a durable timer, checks the service (and the migration's destination)
// again, copies the service's data to the destination and verifies the copy
// when asked, then, past the point of no return, moves the service to
// decommissioning and deactivates it, releases its inventory (capacity, IP
// blocks, VLANs, numbers, compute), stops its billing, and records it
// decommissioned (service.decommissioned). A failure or cancellation before
// the point of no return removes the copied data and ends the operation
// failed (PROVISIONING_FAILED) or cancelled, with the service as it was;
// after it, the steps are retried longer and are not cancelled.
func Decommission(ctx workflow.Context, in DecommissionInput) (*DecommissionResult, error) {
	log := workflow.GetLogger(ctx)
	plan := in.Plan
	progress := ProvisioningProgress{Phase: PhaseStarting, Completed: []string{}}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (ProvisioningProgress, error) { return progress, nil }); err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	var (
		comps     []compensation
		step      string
		committed bool
		result    DecommissionResult
	)
	run := func(c workflow.Context, name, activity, undo, label string, out any) error {
		step, progress.CurrentStep = name, name
		if undo != "" {
			comps = append(comps, compensation{step: name, activity: undo, label: label})
		}
		if err := workflow.ExecuteActivity(c, activity, in).Get(c, out); err != nil {
			return err
		}
		progress.Completed = append(progress.Completed, name)
		return nil
	}
	err := func() error {
		if err := workflow.ExecuteActivity(actx, ActivityDecomBegin, in).Get(actx, nil); err != nil {
			return err
		}
		if in.Scheduled {
			step, progress.Phase, progress.CurrentStep, progress.ScheduledFor = models.StepWaitForDate, PhaseScheduled, models.StepWaitForDate, plan.Date
			if err := workflow.ExecuteActivity(actx, ActivityDecomMarkStep, DecomStepInput{Input: in, Step: models.StepWaitForDate}).Get(actx, nil); err != nil {
				return err
			}
			log.Info("waiting for the decommission date", "request_id", in.RequestID, "until", plan.Date)
			if err := sleepUntil(ctx, plan.Date); err != nil {
				return err
			}
			if err := workflow.ExecuteActivity(actx, ActivityDecomMarkStep, DecomStepInput{Input: in, Step: models.StepWaitForDate, Done: true}).Get(actx, nil); err != nil {
				return err
			}
			progress.Completed = append(progress.Completed, models.StepWaitForDate)
		}
		progress.Phase = PhaseRunning
		if err := run(actx, models.StepValidate, ActivityDecomValidate, "", "", nil); err != nil {
			return err
		}
		if plan.Migrate {
			if err := run(actx, models.StepMigrateData, ActivityDecomMigrateData, ActivityDecomRollbackMigration, "rollback_migration", nil); err != nil {
				return err
			}
			if plan.Verify {
				if err := run(actx, models.StepVerifyMigration, ActivityDecomVerifyMigration, "", "", nil); err != nil {
					return err
				}
			}
		}
		// The point of no return: from here the service is taken out, whatever happens.
		committed = true
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
		for _, st := range []struct{ name, activity string }{
			{models.StepDeactivate, ActivityDecomDeactivate},
			{models.StepReleaseInventory, ActivityDecomReleaseInventory},
			{models.StepStopBilling, ActivityDecomStopBilling},
		} {
			if err := run(dctx, st.name, st.activity, "", "", nil); err != nil {
				return err
			}
		}
		return run(dctx, models.StepRecordDecommission, ActivityDecomRecord, "", "", &result)
	}()
	if err == nil {
		progress.Phase, progress.CurrentStep = PhaseDone, ""
		log.Info("service decommissioned", "request_id", in.RequestID, "service_id", in.ServiceID)
		return &result, nil
	}

	cancelled := !committed && (temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled))
	log.Warn("decommission did not complete", "request_id", in.RequestID, "step", step, "cancelled", cancelled, "error", err)
	progress.Phase = PhaseCompensating
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
	fin := DecomFinishInput{Input: in, FailedStep: step, Compensated: []string{}, CompensationErrors: []string{}}
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
		details := map[string]any{"step": step, "reason_code": string(r.code), "compensated": len(fin.CompensationErrors) == 0, "service_taken_out": committed}
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
	if ferr := workflow.ExecuteActivity(dctx, ActivityDecomFinish, fin).Get(dctx, nil); ferr != nil {
		log.Error("recording the end of the decommission failed", "request_id", in.RequestID, "error", ferr)
	}
	progress.Phase, progress.CurrentStep = PhaseDone, ""
	if cancelled {
		return nil, err
	}
	return nil, temporal.NewNonRetryableApplicationError(fin.Error.Message, string(models.CodeProvisioningFailed), err, fin.Error.Details)
}
