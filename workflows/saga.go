package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// compensation undoes one step.
type compensation struct {
	step     string
	activity string
	label    string
}

// saga runs the steps of an operation and remembers how to undo them. A
// step that allocates something registers its compensation before it runs;
// when a step fails or the workflow is cancelled, fail runs the
// compensations in reverse order and records the end of the operation. The
// saga also holds the operation's live progress, which QueryProgress
// reports.
//
// Every step and compensation activity is called with the same argument,
// the workflow's input.
type saga struct {
	ctx       workflow.Context
	in        any    // the argument of every step and compensation activity
	requestID string // the operation, for the logs
	progress  ProvisioningProgress
	step      string         // the step running, or the last one started
	comps     []compensation // in the order their steps started
	committed bool           // past the point of no return: no longer cancelled
	subject   string         // what the activities act on, for their summaries
}

// newSaga starts the saga of the operation requestID, whose activities take
// in, and answers QueryProgress with its progress. subject names what the
// activities act on (sagaSubject): every activity's summary in the
// Temporal UI says which step it runs on it.
func newSaga(ctx workflow.Context, requestID string, in any, subject string) (*saga, error) {
	s := &saga{ctx: ctx, in: in, requestID: requestID, subject: subject, progress: ProvisioningProgress{Phase: PhaseStarting, Completed: []string{}}}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (ProvisioningProgress, error) { return s.progress, nil }); err != nil {
		return nil, err
	}
	return s, nil
}

// sagaSubject names what an operation's activities act on: the service,
// the operation and the tenant, as their summaries show it.
func sagaSubject(requestID, serviceID, organizationID string, env models.Environment) string {
	return fmt.Sprintf("service %s, operation %s, for %s (%s)", serviceID, requestID, organizationID, env)
}

// summary is the Temporal UI summary of the saga's activity for step (or
// what it does): the step, then the saga's subject.
func (s *saga) summary(step string) string {
	return step + ": " + s.subject
}

// waitSummary is the summary of the activity that marks the waiting step
// name begun, or done.
func (s *saga) waitSummary(name string, done bool) string {
	if done {
		return s.summary("end waiting: " + name)
	}
	return s.summary("wait: " + name)
}

// begin makes name the current step (the one a failure is reported at).
func (s *saga) begin(name string) {
	s.step, s.progress.CurrentStep = name, name
	s.publish()
}

// complete records that the step name has completed.
func (s *saga) complete(name string) {
	s.progress.Completed = append(s.progress.Completed, name)
	s.publish()
}

// done reports the saga over, whichever way it ended.
func (s *saga) done() {
	s.progress.Phase, s.progress.CurrentStep = PhaseDone, ""
	s.publish()
}

// publish sets the workflow's current details (what an operator reads in
// the Temporal UI) from the progress: the phase, the step running, the
// steps completed. It is no workflow command: it changes no history.
func (s *saga) publish() {
	workflow.SetCurrentDetails(s.ctx, progressDetails(s.progress))
}

// progressDetails renders a progress as the current details' Markdown.
func progressDetails(p ProvisioningProgress) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Phase**: %s", p.Phase))
	if p.CurrentStep != "" {
		b.WriteString(fmt.Sprintf("\n\n**Step**: `%s`", p.CurrentStep))
	}
	if p.ScheduledFor != nil {
		b.WriteString(fmt.Sprintf("\n\n**Scheduled for**: %s", models.Timestamp(*p.ScheduledFor)))
	}
	if len(p.Completed) > 0 {
		b.WriteString(fmt.Sprintf("\n\n**Completed**: %s", strings.Join(p.Completed, ", ")))
	}
	return b.String()
}

// commit marks the point of no return: a failure after it is never reported
// as a cancellation.
func (s *saga) commit() {
	s.committed = true
}

// run runs the step name: it makes it the current step, executes activity
// on ctx with the saga's input, decoding its result into out (nil for none),
// and records it completed when it succeeds.
func (s *saga) run(ctx workflow.Context, name, activity string, out any) error {
	s.begin(name)
	if err := workflow.ExecuteActivity(summarized(ctx, s.summary(name)), activity, s.in).Get(ctx, out); err != nil {
		return err
	}
	s.complete(name)
	return nil
}

// runWithCompensation runs the step name like run, after registering undo,
// reported as label, as its compensation. The compensation is registered
// before the step runs: compensations are idempotent and release whatever
// the step managed to allocate, even when it failed half-way or was
// cancelled.
func (s *saga) runWithCompensation(ctx workflow.Context, name, activity, undo, label string) error {
	s.comps = append(s.comps, compensation{step: name, activity: undo, label: label})
	return s.run(ctx, name, activity, nil)
}

// sagaOutcome is how an operation that did not complete ended: what its
// finish activity records.
type sagaOutcome struct {
	Status             operations.OperationStatus
	FailedStep         string
	Error              *operations.OperationError // nil for a cancellation, unless sagaEnding.cancelledButNotReleased says otherwise
	Compensated        []string                   // steps whose compensation ran
	Compensations      []string                   // labels of the compensations that ran, in order
	CompensationErrors []string
}

// sagaEnding is what a workflow does differently when its saga fails.
type sagaEnding struct {
	// finish is the activity that records the end of the operation, and
	// input builds its argument from the outcome.
	finish string
	input  func(sagaOutcome) any
	// details are the workflow's own keys in the details of the
	// PROVISIONING_FAILED error; the failure's details do not override them.
	details map[string]any
	// cancelledButNotReleased, when set, is the message of the error a
	// cancellation records when one of its compensations failed. When
	// empty, a cancellation records no error.
	cancelledButNotReleased string
	// The log messages: the failure (a warning), a failed compensation (an
	// error; not logged when empty) and a failed finish activity (an error).
	logFailed, logCompensationFailed, logFinishFailed string
}

// fail ends a saga whose step failed with err, or that was cancelled: it
// runs the compensations registered so far in reverse order on a
// disconnected context (so that they survive the cancellation), with
// CompensationActivityOptions, then the finish activity, with the operation
// failed (error PROVISIONING_FAILED, whose details name the step, the
// reason and whether everything was released) or cancelled. A failed
// compensation does not stop the others. ctx is the workflow's context. It
// returns what the workflow returns: the cancellation, or a non-retryable
// PROVISIONING_FAILED application error.
func (s *saga) fail(ctx workflow.Context, err error, end sagaEnding) error {
	log := workflow.GetLogger(ctx)
	cancelled := !s.committed && (temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled))
	log.Warn(end.logFailed, "request_id", s.requestID, "step", s.step, "cancelled", cancelled, "error", err)
	s.progress.Phase = PhaseCompensating
	s.publish()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, CompensationActivityOptions())
	out := sagaOutcome{FailedStep: s.step, Compensated: []string{}, Compensations: []string{}, CompensationErrors: []string{}}
	for i := len(s.comps) - 1; i >= 0; i-- {
		c := s.comps[i]
		cctx := summarized(dctx, s.summary(fmt.Sprintf("undo %s (%s)", c.step, c.label)))
		if cerr := workflow.ExecuteActivity(cctx, c.activity, s.in).Get(cctx, nil); cerr != nil {
			if end.logCompensationFailed != "" {
				log.Error(end.logCompensationFailed, "request_id", s.requestID, "step", c.step, "error", cerr)
			}
			out.CompensationErrors = append(out.CompensationErrors, fmt.Sprintf("%s: %s", c.label, ErrorOf(cerr).Message))
			continue
		}
		out.Compensated = append(out.Compensated, c.step)
		out.Compensations = append(out.Compensations, c.label)
	}
	switch {
	case cancelled:
		out.Status = operations.OpCancelled
		if end.cancelledButNotReleased != "" {
			out.Error = CancelledNotReleased(s.step, end.cancelledButNotReleased, out.CompensationErrors)
		}
	default:
		out.Status = operations.OpFailed
		out.Error = StepFailed(s.step, err, end.details, out.CompensationErrors)
	}
	fctx := summarized(dctx, s.summary("record the operation "+string(out.Status)))
	if ferr := workflow.ExecuteActivity(fctx, end.finish, end.input(out)).Get(fctx, nil); ferr != nil {
		log.Error(end.logFinishFailed, "request_id", s.requestID, "error", ferr)
	}
	s.done()
	if cancelled {
		return err
	}
	return temporal.NewNonRetryableApplicationError(out.Error.Message, string(models.CodeProvisioningFailed), err, out.Error.Details)
}
