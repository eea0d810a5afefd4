package support

import (
	"context"
	"fmt"
	"io"
	"time"

	"gocloud.dev/blob"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/reportrun"
)

// Report events (in the support area's event groups).
const (
	EventReportCompleted = "report.completed"
	EventReportFailed    = "report.failed"
)

// DefaultReportLinkTTL is how long a report's download link works when the
// platform sets no other (REPORT_LINK_TTL).
const DefaultReportLinkTTL = reportrun.DefaultLinkTTL

// reportsPath is the collection of support reports, their links' prefix.
const reportsPath = "/v1/support/reports"

// blobErr is a blob store failure (reportrun.BlobError).
func blobErr(err error) error { return reportrun.BlobError(err) }

// reportBlobKey is where a report's file is kept in the blob store.
func reportBlobKey(spec *ReportSpec, id string) string {
	return "reports/" + spec.OrganizationID + "/" + id + "." + spec.Extension()
}

// GenerateReport computes report id's file and streams it to the blob
// store, marking the query step; a retry writes the same file again. It
// returns the result to complete the report with. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the report ended), DEPENDENCY_UNAVAILABLE (no
// blob store, or it failed), INTERNAL_ERROR.
func (s *Store) GenerateReport(ctx context.Context, id string) (*ReportResult, error) {
	ops := operations.NewStore(s.core)
	op, err := s.ReportByID(ctx, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	if err := ops.StartStep(ctx, scope, id, ReportStepQuery); err != nil {
		return nil, err
	}
	spec, err := SpecOf(op)
	if err != nil {
		return nil, err
	}
	if s.blobs == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "reports need a blob store (BLOB_URL)")
	}
	now := s.now()
	key := reportBlobKey(spec, id)
	bw, err := s.blobs.NewWriter(ctx, key, &blob.WriterOptions{ContentType: spec.ContentType()})
	if err != nil {
		return nil, blobErr(err)
	}
	counter := &reportrun.CountingWriter{W: bw}
	st, err := s.writeReport(ctx, counter, id, spec, now)
	if err != nil {
		_ = bw.Close() // the partial file is replaced by the retry
		return nil, err
	}
	if err := bw.Close(); err != nil {
		return nil, blobErr(err)
	}
	res := &ReportResult{BlobKey: key, RowCount: st.Rows, Columns: ReportColumns(spec), SizeBytes: counter.N,
		DataFreshness: st.Newest, GeneratedAt: now, Tickets: st.Tickets}
	if err := ops.CompleteStep(ctx, scope, id, ReportStepQuery); err != nil {
		return nil, err
	}
	return res, nil
}

// writeReport writes the report file to w.
func (s *Store) writeReport(ctx context.Context, w io.Writer, id string, spec *ReportSpec, now time.Time) (ReportStats, error) {
	f, err := NewReportFile(w, id, spec, now)
	if err != nil {
		return ReportStats{}, blobErr(err)
	}
	st, err := s.RunReport(ctx, spec, f)
	if err != nil {
		return st, err
	}
	if err := f.Close(st.Newest); err != nil {
		return st, blobErr(err)
	}
	return st, nil
}

// CompleteReport completes report id with res in one transaction: the
// deliver step and the operation completed, report.completed recorded,
// and for e-mail delivery the message with link (the signed download link)
// queued to the notification e-mail. Completing a completed report does
// nothing. Errors: NOT_FOUND, INVALID_STATE_TRANSITION (ended otherwise),
// INTERNAL_ERROR (e-mail delivery without SECRETS_KEY).
func (s *Store) CompleteReport(ctx context.Context, id string, res *ReportResult, link string, linkExpires time.Time) error {
	op, err := s.ReportByID(ctx, id)
	if err != nil {
		return err
	}
	if op.Status == operations.OpCompleted {
		return nil
	}
	spec, err := SpecOf(op)
	if err != nil {
		return err
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	ops := operations.NewStore(s.core)
	return s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		if spec.DeliveryMethod == DeliveryEmail {
			if s.core.Sealer == nil {
				return models.Internal(nil).WithDetail("reason", "e-mail delivery needs SECRETS_KEY to seal the message")
			}
			m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: spec.NotificationEmail, Template: "support_report_ready", Role: "report",
				Subject: "Your support report " + id + " is ready",
				Body: fmt.Sprintf("Your %s report (%d rows, %s to %s, %s) is ready.\n\nDownload it: %s\n\nThe link works until %s; after that, "+
					"GET /v1/support/reports/%s for a new one.\n", spec.ReportType, res.RowCount, models.Timestamp(spec.Start), models.Timestamp(spec.End),
					spec.Format, link, models.Timestamp(linkExpires), id)}
			if _, err := s.eventlog.QueueMessageIn(tx, m); err != nil {
				return err
			}
		}
		if err := ops.CompleteOperationTx(ctx, tx, id, ReportStepDeliver, res.ResultMap()); err != nil {
			return err
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventReportCompleted, id, reportEventData(op.ID, spec, res, nil)))
	})
}

// FailReport ends report id failed (or cancelled) with e at step and, when
// failed, records report.failed. Failing a report that ended the same way
// does nothing. Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) FailReport(ctx context.Context, id string, status operations.OperationStatus, step string, e *operations.OperationError) error {
	op, err := s.ReportByID(ctx, id)
	if err != nil {
		return err
	}
	if op.Status == status {
		return nil
	}
	spec, err := SpecOf(op)
	if err != nil {
		return err
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	ops := operations.NewStore(s.core)
	if _, err := ops.FinishOperation(ctx, scope, id, operations.FinishInput{Status: status, FailedStep: step, Error: e}); err != nil {
		return err
	}
	if status != operations.OpFailed {
		return nil
	}
	return s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventReportFailed, id, reportEventData(id, spec, nil, e)))
	})
}

// reportEventData is the data of report.completed and report.failed.
func reportEventData(id string, spec *ReportSpec, res *ReportResult, e *operations.OperationError) map[string]any {
	rep := map[string]any{"id": id, "report_type": spec.ReportType, "format": spec.Format, "delivery_method": spec.DeliveryMethod,
		"status_url": "/v1/support/reports/" + id}
	if res != nil {
		rep["status"], rep["row_count"] = ReportCompleted, res.RowCount
	}
	if e != nil {
		rep["status"], rep["error"] = ReportFailed, map[string]any{"code": e.Code, "message": e.Message}
	}
	return map[string]any{"report": rep}
}

// ReportLink returns the signed download link of report id under baseURL,
// valid until expires: {baseURL}/v1/support/reports/{id}/download?expires=
// <unix seconds>&signature=<hex HMAC-SHA256>. Errors: INTERNAL_ERROR (no
// SECRETS_KEY to keep the signing secret).
func (s *Store) ReportLink(ctx context.Context, baseURL, id string, expires time.Time) (string, error) {
	link, err := s.ReportLinks(ctx, baseURL)
	if err != nil {
		return "", err
	}
	return link(id, expires), nil
}

// ReportLinks returns a function making ReportLink's links, with the
// signing secret read once (for a page of reports). Errors: as ReportLink.
func (s *Store) ReportLinks(ctx context.Context, baseURL string) (func(id string, expires time.Time) string, error) {
	signer, err := reportrun.LoadSigner(ctx, s.identity)
	if err != nil {
		return nil, err
	}
	return func(id string, expires time.Time) string { return signer.Link(baseURL, reportsPath, id, expires) }, nil
}

// OpenReportDownload checks a download link's expiry and signature at now
// and opens the completed report's file. The caller closes the reader.
// Errors: INVALID_SIGNATURE (a link not signed by the platform), TOKEN_EXPIRED
// (the link expired), NOT_FOUND (no such completed report, or its file is
// gone), DEPENDENCY_UNAVAILABLE (blob store).
func (s *Store) OpenReportDownload(ctx context.Context, id, expires, signature string, now time.Time) (*operations.Operation, *ReportSpec, io.ReadCloser, error) {
	signer, err := reportrun.LoadSigner(ctx, s.identity)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := signer.Check(id, expires, signature, reportsPath+"/"+id, now); err != nil {
		return nil, nil, nil, err
	}
	op, err := s.ReportByID(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	res := ResultOf(op)
	if op.Status != operations.OpCompleted || res == nil {
		return nil, nil, nil, models.Errorf(models.CodeNotFound, "report %s has no file", id)
	}
	spec, err := SpecOf(op)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := reportrun.Open(ctx, s.blobs, res.BlobKey, id)
	if err != nil {
		return nil, nil, nil, err
	}
	return op, spec, r, nil
}
