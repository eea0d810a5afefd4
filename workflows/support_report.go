package workflows

import (
	"context"
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
	actx := workflow.WithActivityOptions(ctx, ReportActivityOptions())
	step := support.ReportStepQuery
	err := func() error {
		if err := execute(actx, ReportsActivities.Begin, in).Get(actx, nil); err != nil {
			return err
		}
		var res support.ReportResult
		if err := call(actx, ReportsActivities.Generate, in).Get(actx, &res); err != nil {
			return err
		}
		step = support.ReportStepDeliver
		return execute(actx, ReportsActivities.Complete, ReportCompleteInput{ReportID: in.ReportID, Result: res}).Get(actx, nil)
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
	if ferr := execute(dctx, ReportsActivities.Fail, end).Get(dctx, nil); ferr != nil {
		workflow.GetLogger(ctx).Error("recording the end of a report run failed", "report_id", in.ReportID, "error", ferr)
	}
	return err
}
