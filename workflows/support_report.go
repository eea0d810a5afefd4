package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
)

// SupportReportWorkflow is the registered name of the support report run
// (its activities: ReportsActivities). Its workflow id is the report's id
// (rpt_...), which is also the operation's request_id.
const SupportReportWorkflow = "SupportReport"

// ReportInput is the one argument of the SupportReport workflow and of its
// Begin and Generate activities.
type ReportInput struct {
	ReportID string `json:"report_id"`
}

// ReportCompleteInput is the argument of Reports.Complete.
type ReportCompleteInput struct {
	ReportID string               `json:"report_id"`
	Result   support.ReportResult `json:"result"`
}

// ReportFailInput is the argument of Reports.Fail: how the run ended.
type ReportFailInput struct {
	ReportID string                     `json:"report_id"`
	Status   operations.OperationStatus `json:"status"` // failed or cancelled
	Step     string                     `json:"step"`
	Error    *operations.OperationError `json:"error,omitempty"`
}

// ReportsActivities are the activities of the SupportReport workflow
// (activities.Reports), named "Reports.<Method>".
type ReportsActivities interface {
	Begin(ctx context.Context, in ReportInput) error
	Generate(ctx context.Context, in ReportInput) (*support.ReportResult, error)
	Complete(ctx context.Context, in ReportCompleteInput) error
	Fail(ctx context.Context, in ReportFailInput) error
}

// ReportActivityOptions are the options of the report activities: the
// query and the file may take a while on a large period (the activity
// heartbeats while it writes), and each is idempotent, so a failure is
// retried a few times.
func ReportActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 5},
	}
}

// SupportReport runs a support report (DECISIONS 5: an operation): it
// marks it in progress, computes the file into the blob store (step query),
// then completes it (step deliver: the result, report.completed, the e-mail
// with the link when asked). A failure ends it failed (report.failed); a
// cancellation ends it cancelled. Either way the ending is recorded in a
// disconnected context, so a cancelled run still records it.
func SupportReport(ctx workflow.Context, in ReportInput) error {
	return runReport(ctx, in, reportSteps[ReportsActivities, support.ReportResult, ReportCompleteInput]{
		begin: ReportsActivities.Begin, generate: ReportsActivities.Generate, complete: ReportsActivities.Complete, fail: ReportsActivities.Fail,
		completeInput: func(id string, res support.ReportResult) ReportCompleteInput {
			return ReportCompleteInput{ReportID: id, Result: res}
		},
		query: support.ReportStepQuery, deliver: support.ReportStepDeliver,
	})
}

// reportSteps are the activities of a report run workflow (of activity
// group I, whose Generate returns R and whose Complete takes C) and the
// names of its two steps.
type reportSteps[I, R, C any] struct {
	begin         func(I, context.Context, ReportInput) error
	generate      func(I, context.Context, ReportInput) (*R, error)
	complete      func(I, context.Context, C) error
	fail          func(I, context.Context, ReportFailInput) error
	completeInput func(id string, res R) C
	query         string // the step Generate runs in
	deliver       string // the step Complete runs in
}

// runReport runs a report: Begin, Generate (step query), then Complete
// (step deliver). A failure ends it failed, a cancellation cancelled,
// recorded by Fail in a disconnected context so that a cancelled run
// still records it.
func runReport[I, R, C any](ctx workflow.Context, in ReportInput, st reportSteps[I, R, C]) error {
	actx := workflow.WithActivityOptions(ctx, ReportActivityOptions())
	step := st.query
	err := func() error {
		if err := execute(summarized(actx, "begin report "+in.ReportID), st.begin, in).Get(actx, nil); err != nil {
			return err
		}
		var res R
		if err := call(summarized(actx, "generate report "+in.ReportID), st.generate, in).Get(actx, &res); err != nil {
			return err
		}
		step = st.deliver
		return execute(summarized(actx, "deliver report "+in.ReportID), st.complete, st.completeInput(in.ReportID, res)).Get(actx, nil)
	}()
	if err == nil {
		return nil
	}
	end := ReportFailInput{ReportID: in.ReportID, Status: operations.OpFailed, Step: step}
	if temporal.IsCanceledError(err) {
		end.Status = operations.OpCancelled
	} else {
		e := ErrorOf(err)
		end.Error = &operations.OperationError{Code: e.Code, Message: e.Message, Details: e.Details}
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, ReportActivityOptions())
	dctx = summarized(dctx, fmt.Sprintf("record report %s %s", in.ReportID, end.Status))
	if ferr := execute(dctx, st.fail, end).Get(dctx, nil); ferr != nil {
		workflow.GetLogger(ctx).Error("recording the end of a report run failed", "report_id", in.ReportID, "error", ferr)
	}
	return err
}
