package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// DecommissionWorkflow is the registered name of the decommission workflow.
const DecommissionWorkflow = "Decommission"

// DecommissionInput is the one argument of the decommission workflow and of
// its activities: the operation (request id = workflow id, dec_), its
// tenant and the validated plan.
type DecommissionInput struct {
	RequestID      string                    `json:"request_id"`
	OrganizationID string                    `json:"organization_id"`
	Environment    models.Environment        `json:"environment"`
	ServiceID      string                    `json:"service_id"`
	Scheduled      bool                      `json:"scheduled"` // the operation has a wait_for_date step
	Plan           services.DecommissionPlan `json:"plan"`
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
	Input              DecommissionInput          `json:"input"`
	Status             operations.OperationStatus `json:"status"`
	FailedStep         string                     `json:"failed_step"`
	Error              *operations.OperationError `json:"error"`
	Compensated        []string                   `json:"compensated"`
	CompensationErrors []string                   `json:"compensation_errors"`
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
	s, err := newSaga(ctx, in.RequestID, in, sagaSubject(in.RequestID, in.ServiceID, in.OrganizationID, in.Environment))
	if err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	var result DecommissionResult
	err = func() error {
		if err := execute(summarized(actx, s.summary("begin")), DecommissionActivities.Begin, in).Get(actx, nil); err != nil {
			return err
		}
		if in.Scheduled {
			s.begin(services.StepWaitForDate)
			s.progress.Phase, s.progress.ScheduledFor = PhaseScheduled, plan.Date
			if err := execute(summarized(actx, s.waitSummary(services.StepWaitForDate, false)), DecommissionActivities.MarkStep, DecomStepInput{Input: in, Step: services.StepWaitForDate}).Get(actx, nil); err != nil {
				return err
			}
			log.Info("waiting for the decommission date", "request_id", in.RequestID, "until", plan.Date)
			if err := sleepUntil(ctx, plan.Date); err != nil {
				return err
			}
			if err := execute(summarized(actx, s.waitSummary(services.StepWaitForDate, true)), DecommissionActivities.MarkStep, DecomStepInput{Input: in, Step: services.StepWaitForDate, Done: true}).Get(actx, nil); err != nil {
				return err
			}
			s.complete(services.StepWaitForDate)
		}
		s.progress.Phase = PhaseRunning
		if err := s.run(actx, operations.StepValidate, ActivityName(DecommissionActivities.Validate), nil); err != nil {
			return err
		}
		if plan.Migrate {
			if err := s.runWithCompensation(actx, services.StepMigrateData, ActivityName(DecommissionActivities.MigrateData), ActivityName(DecommissionActivities.RollbackMigration), "rollback_migration"); err != nil {
				return err
			}
			if plan.Verify {
				if err := s.run(actx, services.StepVerifyMigration, ActivityName(DecommissionActivities.VerifyMigration), nil); err != nil {
					return err
				}
			}
		}
		// The point of no return: from here the service is taken out, whatever happens.
		s.commit()
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
		for _, st := range []struct{ name, activity string }{
			{services.StepDeactivate, ActivityName(DecommissionActivities.Deactivate)},
			{services.StepReleaseInventory, ActivityName(DecommissionActivities.ReleaseInventory)},
			{services.StepStopBilling, ActivityName(DecommissionActivities.StopBilling)},
		} {
			if err := s.run(dctx, st.name, st.activity, nil); err != nil {
				return err
			}
		}
		return s.run(dctx, services.StepRecordDecommission, ActivityName(DecommissionActivities.Record), &result)
	}()
	if err == nil {
		s.done()
		log.Info("service decommissioned", "request_id", in.RequestID, "service_id", in.ServiceID)
		return &result, nil
	}
	return nil, s.fail(ctx, err, sagaEnding{
		finish: ActivityName(DecommissionActivities.Finish),
		input: func(o sagaOutcome) any {
			return DecomFinishInput{Input: in, Status: o.Status, FailedStep: o.FailedStep, Error: o.Error,
				Compensated: o.Compensated, CompensationErrors: o.CompensationErrors}
		},
		details:         map[string]any{"service_taken_out": s.committed},
		logFailed:       "decommission did not complete",
		logFinishFailed: "recording the end of the decommission failed",
	})
}
