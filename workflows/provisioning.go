package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// ProvisioningWorkflow is the registered name of the provisioning workflow.
const ProvisioningWorkflow = "Provisioning"

// QueryProgress is the query that returns a running provisioning's ProvisioningProgress.
const QueryProgress = "progress"

// ProvisioningInput is the one argument of the provisioning workflow and of
// its activities: the operation (request id = workflow id), its tenant, the
// service id chosen by the API, and the validated order.
type ProvisioningInput struct {
	RequestID      string                     `json:"request_id"`
	OrganizationID string                     `json:"organization_id"`
	Environment    models.Environment         `json:"environment"`
	ServiceID      string                     `json:"service_id"`
	Scheduled      bool                       `json:"scheduled"` // the operation has a wait_for_schedule step
	Order          services.ProvisioningOrder `json:"order"`
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
	Input              ProvisioningInput          `json:"input"`
	Status             operations.OperationStatus `json:"status"`
	FailedStep         string                     `json:"failed_step"`
	Error              *operations.OperationError `json:"error"`
	Compensated        []string                   `json:"compensated"`   // steps whose compensation ran
	Compensations      []string                   `json:"compensations"` // the compensations that ran, in order
	CompensationErrors []string                   `json:"compensation_errors"`
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

// StepHeartbeatTimeout is the heartbeat timeout of the steps and
// compensations: the network calls heartbeat while they wait, so a step
// whose worker stopped or died is retried by another worker after this
// long instead of after its start-to-close timeout.
const StepHeartbeatTimeout = 15 * time.Second

// StepActivityOptions are the options of the provisioning steps: retried with
// backoff (activities are idempotent and mark business failures
// non-retryable), heartbeating (StepHeartbeatTimeout), and waited for on
// cancellation so that compensation runs after the step has really stopped.
// Activity options are not workflow commands: changing them needs no
// workflow.GetVersion.
func StepActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    StepHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5,
		},
		WaitForCancellation: true,
	}
}

// CompensationActivityOptions are the options of compensations and of the
// final bookkeeping: retried longer, because they must happen; heartbeating
// as the steps do.
func CompensationActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    StepHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 20,
		},
	}
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
	s, err := newSaga(ctx, in.RequestID, in, sagaSubject(in.RequestID, in.ServiceID, in.OrganizationID, in.Environment))
	if err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, StepActivityOptions())

	var result ProvisioningResult
	err = func() error {
		if err := execute(summarized(actx, s.summary("begin")), ProvisioningActivities.Begin, in).Get(actx, nil); err != nil {
			return err
		}
		if in.Scheduled {
			s.begin(operations.StepSchedule)
			s.progress.Phase, s.progress.ScheduledFor = PhaseScheduled, in.Order.PreferredDate
			if err := execute(summarized(actx, s.waitSummary(operations.StepSchedule, false)), ProvisioningActivities.MarkStep, StepInput{Input: in, Step: operations.StepSchedule}).Get(actx, nil); err != nil {
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
			if err := execute(summarized(actx, s.waitSummary(operations.StepSchedule, true)), ProvisioningActivities.MarkStep, StepInput{Input: in, Step: operations.StepSchedule, Done: true}).Get(actx, nil); err != nil {
				return err
			}
			s.complete(operations.StepSchedule)
		}
		s.progress.Phase = PhaseRunning
		if err := s.run(actx, operations.StepValidate, ActivityName(ProvisioningActivities.Validate), nil); err != nil {
			return err
		}
		if err := s.runWithCompensation(actx, operations.StepReserveCapacity, ActivityName(ProvisioningActivities.ReserveCapacity), ActivityName(ProvisioningActivities.ReleaseCapacity), "release_capacity"); err != nil {
			return err
		}
		if err := s.runWithCompensation(actx, operations.StepConfigure, ActivityName(ProvisioningActivities.Configure), ActivityName(ProvisioningActivities.ReleaseNetwork), "release_network"); err != nil {
			return err
		}
		if err := s.runWithCompensation(actx, operations.StepActivate, ActivityName(ProvisioningActivities.Activate), ActivityName(ProvisioningActivities.Deactivate), "deactivate"); err != nil {
			return err
		}
		return s.run(actx, operations.StepRecordService, ActivityName(ProvisioningActivities.RecordService), &result)
	}()
	if err == nil {
		s.done()
		log.Info("service provisioned", "request_id", in.RequestID, "service_id", result.ServiceID)
		return &result, nil
	}
	return nil, s.fail(ctx, err, sagaEnding{
		finish: ActivityName(ProvisioningActivities.Finish),
		input: func(o sagaOutcome) any {
			return FinishInput{Input: in, Status: o.Status, FailedStep: o.FailedStep, Error: o.Error,
				Compensated: o.Compensated, Compensations: o.Compensations, CompensationErrors: o.CompensationErrors}
		},
		cancelledButNotReleased: "the operation was cancelled but releasing its resources failed",
		logFailed:               "provisioning did not complete; compensating",
		logCompensationFailed:   "compensation failed",
		logFinishFailed:         "recording the end of the operation failed",
	})
}
