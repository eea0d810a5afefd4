package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// reportHeartbeat is how often Generate reports that it is alive while the
// report is written (below workflows.ReportActivityOptions' heartbeat
// timeout).
const reportHeartbeat = 10 * time.Second

// Reports holds the dependencies of the support report activities: the
// support store over the blob store reports are written to, the public
// base URL their download links are under and how long a link works.
type Reports struct {
	store   *support.Store
	baseURL string
	linkTTL time.Duration
}

// NewReports returns the report activities over store and blobs; linkTTL
// zero means support.DefaultReportLinkTTL.
func NewReports(store *models.Store, blobs *blob.Bucket, baseURL string, linkTTL time.Duration) *Reports {
	if linkTTL <= 0 {
		linkTTL = support.DefaultReportLinkTTL
	}
	return &Reports{store: support.NewStore(store, support.WithBlobs(blobs)), baseURL: baseURL, linkTTL: linkTTL}
}

// Begin marks the report in progress with the workflow's run id. Calling
// it again is harmless. Errors: NOT_FOUND, INVALID_STATE_TRANSITION (not retried).
func (a *Reports) Begin(ctx context.Context, in workflows.ReportInput) error {
	op, err := a.store.ReportByID(ctx, in.ReportID)
	if err != nil {
		return reportError(err)
	}
	ops := operations.NewStore(a.store.Core())
	_, err = ops.BeginOperation(ctx, models.TenantScope(op.OrganizationID, op.Environment), in.ReportID, activity.GetInfo(ctx).WorkflowExecution.RunID)
	return reportError(err)
}

// Generate writes the report's file to the blob store
// (support.Store.GenerateReport), heartbeating while it works, and returns
// its result. A retry writes the file again under the same key.
func (a *Reports) Generate(ctx context.Context, in workflows.ReportInput) (*support.ReportResult, error) {
	stop := heartbeatEvery(ctx, reportHeartbeat)
	defer stop()
	res, err := a.store.GenerateReport(ctx, in.ReportID)
	if err != nil {
		return nil, reportError(err)
	}
	activity.GetLogger(ctx).Info("report generated", "report_id", in.ReportID, "rows", res.RowCount, "bytes", res.SizeBytes)
	return res, nil
}

// Complete completes the report (support.Store.CompleteReport) with a
// download link signed for the link lifetime, which an e-mail delivery
// sends. Completing it again is harmless.
func (a *Reports) Complete(ctx context.Context, in workflows.ReportCompleteInput) error {
	expires := a.store.Core().Now().Add(a.linkTTL).Truncate(time.Second)
	link, err := a.store.ReportLink(ctx, a.baseURL, in.ReportID, expires)
	if err != nil {
		return reportError(err)
	}
	return reportError(a.store.CompleteReport(ctx, in.ReportID, &in.Result, link, expires))
}

// Fail ends the report failed (report.failed) or cancelled. Ending it
// again the same way is harmless.
func (a *Reports) Fail(ctx context.Context, in workflows.ReportFailInput) error {
	return reportError(a.store.FailReport(ctx, in.ReportID, in.Status, in.Step, in.Error))
}

// reportError converts a report activity's failure: the codes that a retry
// may fix are retried, the others end the run at once.
func reportError(err error) error { return ApplicationError(err, RetryByCode) }
