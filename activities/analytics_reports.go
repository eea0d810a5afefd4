package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/reportrun"
	"github.com/telcoplatform/platform/workflows"
)

// AnalyticsReports holds the dependencies of the analytics report builder's
// activities: the reports store over the blob store the files go to, the
// public base URL of their links and how long a link works.
type AnalyticsReports struct {
	store   *reports.Store
	baseURL string
	linkTTL time.Duration
}

// NewAnalyticsReports returns the analytics report activities; linkTTL
// zero means reportrun.DefaultLinkTTL.
func NewAnalyticsReports(store *models.Store, blobs *blob.Bucket, baseURL string, linkTTL time.Duration) *AnalyticsReports {
	if linkTTL <= 0 {
		linkTTL = reportrun.DefaultLinkTTL
	}
	return &AnalyticsReports{store: reports.NewStore(store, blobs), baseURL: baseURL, linkTTL: linkTTL}
}

// Prepare creates the run of a schedule's firing (once per key) and
// returns it; an empty report id when the definition is gone or
// unscheduled. Errors: VALIDATION_ERROR (not retried: the saved query no
// longer holds), INTERNAL_ERROR.
func (a *AnalyticsReports) Prepare(ctx context.Context, in workflows.PrepareReportInput) (*workflows.PreparedReport, error) {
	id, scope, err := a.store.PrepareScheduledRun(ctx, in.DefinitionID, in.Key, in.At)
	if err != nil || id == "" {
		return &workflows.PreparedReport{}, reportError(err)
	}
	activity.GetLogger(ctx).Info("scheduled report prepared", "definition_id", in.DefinitionID, "report_id", id)
	return &workflows.PreparedReport{ReportID: id, OrganizationID: scope.OrganizationID, Environment: scope.Environment}, nil
}

// Begin marks the run in progress with the workflow's run id. Calling it
// again is harmless. Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (a *AnalyticsReports) Begin(ctx context.Context, in workflows.ReportInput) error {
	op, err := a.store.RunByID(ctx, in.ReportID)
	if err != nil {
		return reportError(err)
	}
	ops := operations.NewStore(a.store.Core())
	_, err = ops.BeginOperation(ctx, models.TenantScope(op.OrganizationID, op.Environment), in.ReportID, activity.GetInfo(ctx).WorkflowExecution.RunID)
	return reportError(err)
}

// Generate writes the run's file to the blob store (reports.Store.GenerateRun),
// heartbeating while it works. A retry writes the file again under the same key.
func (a *AnalyticsReports) Generate(ctx context.Context, in workflows.ReportInput) (*reports.Result, error) {
	stop := heartbeatEvery(ctx, reportHeartbeat)
	defer stop()
	res, err := a.store.GenerateRun(ctx, in.ReportID)
	if err != nil {
		return nil, reportError(err)
	}
	activity.GetLogger(ctx).Info("analytics report generated", "report_id", in.ReportID, "rows", res.RowCount, "bytes", res.SizeBytes)
	return res, nil
}

// Complete completes the run with a download link signed for the link
// lifetime (mailed, or put in the event, as the run's delivery asks).
// Completing it again is harmless.
func (a *AnalyticsReports) Complete(ctx context.Context, in workflows.AnalyticsReportCompleteInput) error {
	expires := a.store.Core().Now().Add(a.linkTTL).Truncate(time.Second)
	link, err := a.store.Links(ctx, a.baseURL)
	if err != nil {
		return reportError(err)
	}
	return reportError(a.store.CompleteRun(ctx, in.ReportID, &in.Result, link(in.ReportID, expires), expires))
}

// Fail ends the run failed (analytics_report.failed) or cancelled. Ending
// it again the same way is harmless.
func (a *AnalyticsReports) Fail(ctx context.Context, in workflows.ReportFailInput) error {
	return reportError(a.store.FailRun(ctx, in.ReportID, in.Status, in.Step, in.Error))
}

// heartbeatEvery records a heartbeat every interval until the returned
// stop is called or ctx ends.
func heartbeatEvery(ctx context.Context, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
