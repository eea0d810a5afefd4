package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// ServiceChangeWorkflow is the registered name of the workflow that changes
// a service: a modification (at once) or a scaling (in a maintenance window).
const ServiceChangeWorkflow = "ServiceChange"

// ServiceChangeInput is the one argument of the change workflow and of its
// activities: the operation (request id = workflow id), its tenant, the
// service and the validated change.
type ServiceChangeInput struct {
	RequestID      string                 `json:"request_id"`
	OrganizationID string                 `json:"organization_id"`
	Environment    models.Environment     `json:"environment"`
	ServiceID      string                 `json:"service_id"`
	Update         services.ServiceUpdate `json:"update"`
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
	Input              ServiceChangeInput         `json:"input"`
	Status             operations.OperationStatus `json:"status"`
	FailedStep         string                     `json:"failed_step"`
	Error              *operations.OperationError `json:"error"`
	Compensated        []string                   `json:"compensated"`
	CompensationErrors []string                   `json:"compensation_errors"`
}

// ServiceChangeResult is what a completed change returns.
type ServiceChangeResult struct {
	ServiceID string `json:"service_id"`
	Status    string `json:"status"`
}

// serviceChangeApplyChange is the workflow.GetVersion change id of the
// apply step run on a disconnected context (version 1): before it, a
// cancel that arrived while the step ran compensated at once, and the
// activity could still save the change afterwards.
const serviceChangeApplyChange = "service-change-apply-not-cancelled"

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
// cancelled. The apply step itself is not cancelled once it has started (a
// cancel that arrives meanwhile is too late), and once applied the change is
// no longer cancelled (the rest runs on a disconnected context).
func ServiceChange(ctx workflow.Context, in ServiceChangeInput) (*ServiceChangeResult, error) {
	log := workflow.GetLogger(ctx)
	u := in.Update
	s, err := newSaga(ctx, in.RequestID, in, sagaSubject(in.RequestID, in.ServiceID, in.OrganizationID, in.Environment))
	if err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())
	mark := func(c workflow.Context, name string, done bool) error {
		return execute(summarized(c, s.waitSummary(name, done)), ServiceChangeActivities.MarkStep, ChangeStepInput{Input: in, Step: name, Done: done}).Get(c, nil)
	}

	err = func() error {
		if err := execute(summarized(actx, s.summary("begin")), ServiceChangeActivities.Begin, in).Get(actx, nil); err != nil {
			return err
		}
		if u.Windowed() {
			s.begin(services.StepWaitForWindow)
			s.progress.Phase, s.progress.ScheduledFor = PhaseScheduled, u.WindowStart
			if err := mark(actx, services.StepWaitForWindow, false); err != nil {
				return err
			}
			log.Info("waiting for the maintenance window", "request_id", in.RequestID, "start", u.WindowStart)
			if err := sleepUntil(ctx, u.WindowStart); err != nil {
				return err
			}
			if err := mark(actx, services.StepWaitForWindow, true); err != nil {
				return err
			}
			s.complete(services.StepWaitForWindow)
			s.progress.Phase = PhaseRunning
			if err := s.run(actx, services.StepStartMaintenance, ActivityName(ServiceChangeActivities.StartMaintenance), nil); err != nil {
				return err
			}
			if err := sleepUntil(ctx, u.ApplyAt); err != nil {
				return err
			}
		}
		s.progress.Phase = PhaseRunning
		if err := s.run(actx, operations.StepValidate, ActivityName(ServiceChangeActivities.Validate), nil); err != nil {
			return err
		}
		if len(u.Capacity) > 0 {
			if err := s.runWithCompensation(actx, operations.StepReserveCapacity, ActivityName(ServiceChangeActivities.ReserveCapacity), ActivityName(ServiceChangeActivities.ReleaseCapacity), "release_capacity"); err != nil {
				return err
			}
		}
		applyCtx := actx
		if workflow.GetVersion(ctx, serviceChangeApplyChange, workflow.DefaultVersion, 1) >= 1 {
			// A cancel that came before the apply step still cancels. Once
			// the step runs it is not cancelled: the activity would save
			// the change while the compensations undid what it needs.
			if ctx.Err() != nil {
				s.begin(services.StepApply) // the step the cancellation stopped (the one before it completed)
				return ctx.Err()
			}
			dctx, _ := workflow.NewDisconnectedContext(ctx)
			applyCtx = workflow.WithActivityOptions(dctx, StepActivityOptions())
		}
		if err := s.run(applyCtx, services.StepApply, ActivityName(ServiceChangeActivities.Apply), nil); err != nil {
			return err
		}
		s.commit()
		return nil
	}()
	if err == nil && u.Windowed() {
		// Applied: the rest is no longer cancelled.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dactx := workflow.WithActivityOptions(dctx, CompensationActivityOptions())
		s.begin(services.StepEndMaintenance)
		err = func() error {
			if err := mark(dactx, services.StepEndMaintenance, false); err != nil {
				return err
			}
			if err := sleepUntil(dctx, u.WindowEnd); err != nil {
				return err
			}
			return s.run(dactx, services.StepEndMaintenance, ActivityName(ServiceChangeActivities.EndMaintenance), nil)
		}()
	}
	if err == nil {
		s.done()
		return &ServiceChangeResult{ServiceID: in.ServiceID, Status: "completed"}, nil
	}
	return nil, s.fail(ctx, err, sagaEnding{
		finish: ActivityName(ServiceChangeActivities.Finish),
		input: func(o sagaOutcome) any {
			return ChangeFinishInput{Input: in, Status: o.Status, FailedStep: o.FailedStep, Error: o.Error,
				Compensated: o.Compensated, CompensationErrors: o.CompensationErrors}
		},
		details:         map[string]any{"applied": s.committed},
		logFailed:       "service change did not complete",
		logFinishFailed: "recording the end of the change failed",
	})
}
