package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
)

// ProvisioningWorkflow is the registered name of the provisioning workflow.
const ProvisioningWorkflow = "Provisioning"

// Registered names of the provisioning activities (activities.Provisioning).
const (
	ActivityBegin           = "Provisioning.Begin"
	ActivityMarkStep        = "Provisioning.MarkStep"
	ActivityValidate        = "Provisioning.Validate"
	ActivityReserveCapacity = "Provisioning.ReserveCapacity"
	ActivityConfigure       = "Provisioning.Configure"
	ActivityActivate        = "Provisioning.Activate"
	ActivityRecordService   = "Provisioning.RecordService"
	ActivityReleaseCapacity = "Provisioning.ReleaseCapacity"
	ActivityReleaseNetwork  = "Provisioning.ReleaseNetwork"
	ActivityDeactivate      = "Provisioning.Deactivate"
	ActivityFinish          = "Provisioning.Finish"
)

// QueryProgress is the query that returns a running provisioning's ProvisioningProgress.
const QueryProgress = "progress"

// ProvisioningInput is the one argument of the provisioning workflow and of
// its activities: the operation (request id = workflow id), its tenant, the
// service id chosen by the API, and the validated order.
type ProvisioningInput struct {
	RequestID      string                   `json:"request_id"`
	OrganizationID string                   `json:"organization_id"`
	Environment    models.Environment       `json:"environment"`
	ServiceID      string                   `json:"service_id"`
	Scheduled      bool                     `json:"scheduled"` // the operation has a wait_for_schedule step
	Order          models.ProvisioningOrder `json:"order"`
}

// Scope returns the tenant scope the operation belongs to.
func (in ProvisioningInput) Scope() models.Scope {
	return models.TenantScope(in.OrganizationID, in.Environment)
}

// StepInput marks a step that no activity of its own runs (wait_for_schedule).
type StepInput struct {
	Input ProvisioningInput `json:"input"`
	Step  string            `json:"step"`
	Done  bool              `json:"done"`
}

// FinishInput ends an operation that did not complete.
type FinishInput struct {
	Input              ProvisioningInput      `json:"input"`
	Status             models.OperationStatus `json:"status"`
	FailedStep         string                 `json:"failed_step"`
	Error              *models.OperationError `json:"error"`
	Compensated        []string               `json:"compensated"`   // steps whose compensation ran
	Compensations      []string               `json:"compensations"` // the compensations that ran, in order
	CompensationErrors []string               `json:"compensation_errors"`
}

// ProvisioningResult is what a completed provisioning returns.
type ProvisioningResult struct {
	ServiceID string `json:"service_id"`
	Status    string `json:"status"`
}

// Phases of a provisioning, as QueryProgress reports them.
const (
	PhaseStarting     = "starting"
	PhaseScheduled    = "scheduled"
	PhaseRunning      = "running"
	PhaseCompensating = "compensating"
	PhaseDone         = "done"
)

// ProvisioningProgress is the live state of a provisioning workflow.
type ProvisioningProgress struct {
	Phase        string     `json:"phase"`
	CurrentStep  string     `json:"current_step,omitempty"`
	Completed    []string   `json:"completed_steps"`
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
}

// StepActivityOptions are the options of the provisioning steps: retried with
// backoff (activities are idempotent and mark business failures
// non-retryable), and waited for on cancellation so that compensation runs
// after the step has really stopped.
func StepActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5,
		},
		WaitForCancellation: true,
	}
}

// CompensationActivityOptions are the options of compensations and of the
// final bookkeeping: retried longer, because they must happen.
func CompensationActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 20,
		},
	}
}

// compensation undoes one step.
type compensation struct {
	step     string
	activity string
	label    string
}

// compensationLabel names a compensation activity in the operation's result.
func compensationLabel(activity string) string {
	switch activity {
	case ActivityReleaseCapacity:
		return "release_capacity"
	case ActivityReleaseNetwork:
		return "release_network"
	case ActivityDeactivate:
		return "deactivate"
	}
	return activity
}

// Provisioning provisions one service: validate → reserve capacity →
// configure → activate → record the service (status operational), after
// waiting for the order's preferred date when it has one. If a step fails,
// or the workflow is cancelled, the compensations of the steps that started
// run in reverse order on a disconnected context (so they survive the
// cancellation), and the operation ends failed (error PROVISIONING_FAILED)
// or cancelled. It returns the service, or an error: a PROVISIONING_FAILED
// application error, or the cancellation.
func Provisioning(ctx workflow.Context, in ProvisioningInput) (*ProvisioningResult, error) {
	log := workflow.GetLogger(ctx)
	progress := ProvisioningProgress{Phase: PhaseStarting, Completed: []string{}}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (ProvisioningProgress, error) { return progress, nil }); err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())

	var (
		comps  []compensation
		step   string
		result ProvisioningResult
	)
	run := func(name, activity string, undo string, out any) error {
		step, progress.CurrentStep = name, name
		if undo != "" {
			// Registered before the step runs: compensations are idempotent and
			// release whatever the step managed to allocate, even when it failed
			// half-way or was cancelled.
			comps = append(comps, compensation{step: name, activity: undo, label: compensationLabel(undo)})
		}
		if err := workflow.ExecuteActivity(actx, activity, in).Get(actx, out); err != nil {
			return err
		}
		progress.Completed = append(progress.Completed, name)
		return nil
	}

	err := func() error {
		if err := workflow.ExecuteActivity(actx, ActivityBegin, in).Get(actx, nil); err != nil {
			return err
		}
		if in.Scheduled {
			step, progress.Phase, progress.CurrentStep = models.StepSchedule, PhaseScheduled, models.StepSchedule
			progress.ScheduledFor = in.Order.PreferredDate
			if err := workflow.ExecuteActivity(actx, ActivityMarkStep, StepInput{Input: in, Step: models.StepSchedule}).Get(actx, nil); err != nil {
				return err
			}
			if in.Order.PreferredDate != nil {
				if wait := in.Order.PreferredDate.Sub(workflow.Now(ctx)); wait > 0 {
					log.Info("waiting for the preferred deployment date", "request_id", in.RequestID, "until", in.Order.PreferredDate)
					if err := workflow.Sleep(ctx, wait); err != nil {
						return err
					}
				}
			}
			if err := workflow.ExecuteActivity(actx, ActivityMarkStep, StepInput{Input: in, Step: models.StepSchedule, Done: true}).Get(actx, nil); err != nil {
				return err
			}
			progress.Completed = append(progress.Completed, models.StepSchedule)
		}
		progress.Phase = PhaseRunning
		if err := run(models.StepValidate, ActivityValidate, "", nil); err != nil {
			return err
		}
		if err := run(models.StepReserveCapacity, ActivityReserveCapacity, ActivityReleaseCapacity, nil); err != nil {
			return err
		}
		if err := run(models.StepConfigure, ActivityConfigure, ActivityReleaseNetwork, nil); err != nil {
			return err
		}
		if err := run(models.StepActivate, ActivityActivate, ActivityDeactivate, nil); err != nil {
			return err
		}
		return run(models.StepRecordService, ActivityRecordService, "", &result)
	}()
	if err == nil {
		progress.Phase, progress.CurrentStep = PhaseDone, ""
		log.Info("service provisioned", "request_id", in.RequestID, "service_id", result.ServiceID)
		return &result, nil
	}

	cancelled := temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled)
	log.Warn("provisioning did not complete; compensating", "request_id", in.RequestID, "step", step, "cancelled", cancelled, "error", err)
	progress.Phase = PhaseCompensating
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
	fin := FinishInput{Input: in, FailedStep: step, Compensated: []string{}, Compensations: []string{}, CompensationErrors: []string{}}
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		if cerr := workflow.ExecuteActivity(dctx, c.activity, in).Get(dctx, nil); cerr != nil {
			log.Error("compensation failed", "request_id", in.RequestID, "step", c.step, "error", cerr)
			fin.CompensationErrors = append(fin.CompensationErrors, fmt.Sprintf("%s: %s", c.label, reasonOf(cerr).message))
			continue
		}
		fin.Compensated = append(fin.Compensated, c.step)
		fin.Compensations = append(fin.Compensations, c.label)
	}
	r := reasonOf(err)
	switch {
	case cancelled && len(fin.CompensationErrors) == 0:
		fin.Status = models.OpCancelled
	case cancelled:
		fin.Status = models.OpCancelled
		fin.Error = &models.OperationError{Code: models.CodeProvisioningFailed, Message: "the operation was cancelled but releasing its resources failed",
			Details: map[string]any{"step": step, "compensated": false, "compensation_errors": fin.CompensationErrors}}
	default:
		fin.Status = models.OpFailed
		details := map[string]any{"step": step, "reason_code": string(r.code), "compensated": len(fin.CompensationErrors) == 0}
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
	if ferr := workflow.ExecuteActivity(dctx, ActivityFinish, fin).Get(dctx, nil); ferr != nil {
		log.Error("recording the end of the operation failed", "request_id", in.RequestID, "error", ferr)
	}
	progress.Phase, progress.CurrentStep = PhaseDone, ""
	if cancelled {
		return nil, err
	}
	return nil, temporal.NewNonRetryableApplicationError(fin.Error.Message, string(models.CodeProvisioningFailed), err, fin.Error.Details)
}

type reason struct {
	code    models.Code
	message string
	details map[string]any
}

// reasonOf extracts the code, client-safe message and details that an
// activity put in its application error.
func reasonOf(err error) reason {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		r := reason{code: models.Code(appErr.Type()), message: appErr.Message()}
		if appErr.HasDetails() {
			var d map[string]any
			if appErr.Details(&d) == nil {
				r.details = d
			}
		}
		if r.code == "" {
			r.code = models.CodeInternal
		}
		return r
	}
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) {
		return reason{code: models.CodeDependencyUnavailable, message: "the network did not answer in time"}
	}
	if temporal.IsCanceledError(err) {
		return reason{code: models.CodeProvisioningFailed, message: "cancelled"}
	}
	return reason{code: models.CodeInternal, message: "an internal error occurred"}
}
