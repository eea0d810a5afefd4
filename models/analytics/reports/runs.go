package reports

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"time"

	"gocloud.dev/blob"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/reportrun"
)

// RunsPath is the collection of runs, their download links' prefix.
const RunsPath = "/v1/analytics/reports"

// Result is what a completed run's operation keeps: where its file is and
// what it holds.
type Result struct {
	BlobKey       string           `json:"blob_key"`
	RowCount      int64            `json:"row_count"`
	Columns       []builder.Column `json:"columns"`
	SizeBytes     int64            `json:"size_bytes"`
	DataFreshness *time.Time       `json:"data_freshness"`
	GeneratedAt   time.Time        `json:"generated_at"`
}

// NewRunOperation returns the operation of run id of spec.
func NewRunOperation(id string, spec *Spec) *operations.Operation {
	resource := spec.DefinitionID
	if resource == "" {
		resource = id
	}
	return operations.NewOperation(id, operations.OpTypeAnalyticsReport, resource, spec.RequestedBy, []string{StepQuery, StepDeliver}, models.AsMap(spec))
}

// SpecOf reads a run's spec from its operation. Errors: INTERNAL_ERROR.
func SpecOf(op *operations.Operation) (*Spec, error) {
	raw, err := json.Marshal(op.Input)
	if err != nil {
		return nil, models.Internal(err)
	}
	var spec Spec
	if err := json.Unmarshal(raw, &spec); err != nil || spec.Query.Dataset == "" {
		return nil, models.Internal(err).WithDetail("reason", "the operation is not an analytics report run")
	}
	return &spec, nil
}

// ResultOf reads a completed run's result; nil when it has none.
func ResultOf(op *operations.Operation) *Result {
	if op.Result == nil {
		return nil
	}
	raw, err := json.Marshal(op.Result)
	if err != nil {
		return nil
	}
	var r Result
	if json.Unmarshal(raw, &r) != nil || r.BlobKey == "" {
		return nil
	}
	return &r
}

// Status is a run's status from its operation's.
func Status(op *operations.Operation) string {
	switch op.Status {
	case operations.OpCompleted:
		return StatusCompleted
	case operations.OpFailed, operations.OpRolledBack, operations.OpPartial:
		return StatusFailed
	case operations.OpCancelled:
		return StatusCancelled
	}
	return StatusGenerating
}

// NewRun validates a run of in for p and returns its operation (not
// stored). Errors: as Validate, NOT_FOUND (staff's organization_id).
func (s *Store) NewRun(ctx context.Context, p *models.Principal, in Request) (*operations.Operation, error) {
	spec, err := Validate(p, in, s.now())
	if err != nil {
		return nil, err
	}
	if err := s.checkOrganization(ctx, spec.ReadOrganizationID); err != nil {
		return nil, err
	}
	return NewRunOperation(models.NewID(models.PrefixReport), spec), nil
}

// NewDefinitionRun returns the operation (not stored) of a run of saved
// definition id by p, checked as a new request of p (so p's own
// permissions apply). Errors: NOT_FOUND, as Validate.
func (s *Store) NewDefinitionRun(ctx context.Context, p *models.Principal, id string) (*operations.Operation, error) {
	d, err := s.GetDefinition(ctx, p, id)
	if err != nil {
		return nil, err
	}
	spec, err := Validate(p, d.Request(), s.now())
	if err != nil {
		return nil, err
	}
	spec.DefinitionID = d.ID
	return NewRunOperation(models.NewID(models.PrefixReport), spec), nil
}

// MarkRun records run id as definition defID's last run.
func (s *Store) MarkRun(ctx context.Context, scope models.Scope, defID, id string, at time.Time) error {
	return markRun(s.core.In(ctx, scope), defID, id, at)
}

// markRun records run id as definition defID's last run on db.
func markRun(db *gorm.DB, defID, id string, at time.Time) error {
	return models.DBErr(db.Model(&Definition{}).Where("id = ?", defID).Updates(map[string]any{"last_run_id": id, "last_run_at": at}).Error)
}

// ScheduledRunID is the id of the run that the scheduled start key (the
// schedule's workflow id of one firing) makes: the same on every retry.
func ScheduledRunID(key string) string {
	sum := sha256.Sum256([]byte("analytics-report-run\x00" + key))
	id := new(big.Int).SetBytes(sum[:]).Text(62)
	return models.PrefixReport + "_" + id[:20]
}

// PrepareScheduledRun creates (once per key) the run of definition defID
// that its schedule starts at now, and returns its id and tenant; "" when
// the definition is gone or no longer scheduled (the run is skipped). The
// query is checked again, as of now. Errors: VALIDATION_ERROR (the saved
// query no longer valid), INTERNAL_ERROR.
func (s *Store) PrepareScheduledRun(ctx context.Context, defID, key string, now time.Time) (string, models.Scope, error) {
	d, err := s.DefinitionByID(ctx, defID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return "", models.Scope{}, nil
	}
	if err != nil {
		return "", models.Scope{}, err
	}
	if d.Schedule == nil {
		return "", models.Scope{}, nil
	}
	id := ScheduledRunID(key)
	scope := models.TenantScope(d.OrganizationID, d.Environment)
	var n int64
	if err := s.core.In(ctx, scope).Model(&operations.Operation{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return "", scope, models.DBErr(err)
	}
	if n > 0 {
		return id, scope, nil
	}
	plan, err := builder.Validate(d.Query, now)
	if err != nil {
		return "", scope, err
	}
	spec := &Spec{Query: plan.Definition, From: plan.From.UTC(), To: plan.To.UTC(), Format: d.Format, DeliveryMethod: d.DeliveryMethod,
		NotificationEmail: d.NotificationEmail, ReadOrganizationID: d.ReadScope(), Environment: d.Environment,
		OrganizationID: d.OrganizationID, RequestedBy: d.CreatedBy, DefinitionID: d.ID, Scheduled: true}
	op := NewRunOperation(id, spec)
	err = s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Create(op).Error; err != nil {
			return models.DBErr(err)
		}
		return markRun(tx, d.ID, id, now)
	})
	if err != nil {
		return "", scope, err
	}
	return id, scope, nil
}

// GetRun returns run id of p's organization and environment. Errors: NOT_FOUND.
func (s *Store) GetRun(ctx context.Context, p *models.Principal, id string) (*operations.Operation, error) {
	var op operations.Operation
	if err := s.core.In(ctx, p.OwnScope()).Where("id = ? AND type = ?", id, operations.OpTypeAnalyticsReport).Take(&op).Error; err != nil {
		return nil, models.NotFoundOr(err, "report")
	}
	return &op, nil
}

// RunByID returns a run whatever its tenant (its workflow and its signed
// link name it). Errors: NOT_FOUND.
func (s *Store) RunByID(ctx context.Context, id string) (*operations.Operation, error) {
	var op operations.Operation
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ? AND type = ?", id, operations.OpTypeAnalyticsReport).Take(&op).Error; err != nil {
		return nil, models.NotFoundOr(err, "report")
	}
	return &op, nil
}

// runSorts are the fields a list of runs sorts by: created_at, and
// completed_at, the completed runs by the time they completed, then the
// others (which have no completed_at) whatever the direction.
var runSorts = models.SortFields{"created_at": "created_at", "completed_at": operations.CompletedAtOrder}

// ListRuns returns a page of the runs of p's organization and environment
// in page's order (runSorts; default newest first), ties by id; status
// filters by run status, definitionID by definition. Errors:
// VALIDATION_ERROR (status, sort).
func (s *Store) ListRuns(ctx context.Context, p *models.Principal, status, definitionID string, page models.PageRequest) ([]operations.Operation, int64, error) {
	q := s.core.In(ctx, p.OwnScope()).Model(&operations.Operation{}).Where("type = ?", operations.OpTypeAnalyticsReport)
	switch status {
	case "":
	case StatusGenerating:
		q = q.Where("status IN ?", []string{string(operations.OpPending), string(operations.OpInProgress)})
	case StatusCompleted:
		q = q.Where("status = ?", operations.OpCompleted)
	case StatusFailed:
		q = q.Where("status IN ?", []string{string(operations.OpFailed), string(operations.OpRolledBack), string(operations.OpPartial)})
	case StatusCancelled:
		q = q.Where("status = ?", operations.OpCancelled)
	default:
		return nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be generating, completed, failed or cancelled"})
	}
	if definitionID != "" {
		q = q.Where("resource_id = ?", definitionID)
	}
	var out []operations.Operation
	total, err := models.Paginate(q, page, runSorts, &out)
	return out, total, err
}

// blobKey is where run id's file is kept.
func blobKey(spec *Spec, id string) string {
	return "analytics-reports/" + spec.OrganizationID + "/" + id + "." + spec.Extension()
}

// GenerateRun computes run id's file into the blob store, marking the
// query step; a retry writes the same file again. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the run ended), VALIDATION_ERROR (the query
// no longer valid), DEPENDENCY_UNAVAILABLE (blob store), INTERNAL_ERROR.
func (s *Store) GenerateRun(ctx context.Context, id string) (*Result, error) {
	op, err := s.RunByID(ctx, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	ops := operations.NewStore(s.core)
	if err := ops.StartStep(ctx, scope, id, StepQuery); err != nil {
		return nil, err
	}
	spec, err := SpecOf(op)
	if err != nil {
		return nil, err
	}
	plan, err := spec.Plan()
	if err != nil {
		return nil, err
	}
	if s.blobs == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "reports need a blob store (BLOB_URL)")
	}
	now := s.now()
	key := blobKey(spec, id)
	bw, err := s.blobs.NewWriter(ctx, key, &blob.WriterOptions{ContentType: spec.ContentType()})
	if err != nil {
		return nil, reportrun.BlobError(err)
	}
	counter := &reportrun.CountingWriter{W: bw}
	st, err := s.builder.Write(ctx, counter, id, plan, spec.BuilderScope(), spec.Format, now)
	if err != nil {
		_ = bw.Close() // the partial file is replaced by the retry
		return nil, err
	}
	if err := bw.Close(); err != nil {
		return nil, reportrun.BlobError(err)
	}
	if err := ops.CompleteStep(ctx, scope, id, StepQuery); err != nil {
		return nil, err
	}
	return &Result{BlobKey: key, RowCount: st.Rows, Columns: plan.Columns, SizeBytes: counter.N, DataFreshness: st.Newest, GeneratedAt: now}, nil
}

// CompleteRun completes run id with res in one transaction: the deliver
// step and the operation completed, analytics_report.completed recorded
// (with link when delivered by webhook), and for e-mail delivery the
// message with link queued. Completing a completed run does nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION, INTERNAL_ERROR (e-mail
// delivery without SECRETS_KEY).
func (s *Store) CompleteRun(ctx context.Context, id string, res *Result, link string, linkExpires time.Time) error {
	op, err := s.RunByID(ctx, id)
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
	ops := operations.NewStore(s.core)
	return s.core.Tx(ctx, models.TenantScope(op.OrganizationID, op.Environment), func(tx *gorm.DB) error {
		if spec.DeliveryMethod == DeliveryEmail {
			if s.core.Sealer == nil {
				return models.Internal(nil).WithDetail("reason", "e-mail delivery needs SECRETS_KEY to seal the message")
			}
			m := eventlog.Message{Channel: eventlog.ChannelEmail, Recipient: spec.NotificationEmail, Template: "analytics_report_ready", Role: "report",
				Subject: "Your analytics report " + id + " is ready",
				Body: fmt.Sprintf("Your %s report (%d rows, %s to %s, %s) is ready.\n\nDownload it: %s\n\nThe link works until %s; after that, "+
					"GET %s/%s for a new one.\n", spec.Query.Dataset, res.RowCount, models.Timestamp(spec.From), models.Timestamp(spec.To),
					spec.Format, link, models.Timestamp(linkExpires), RunsPath, id)}
			if _, err := s.eventlog.QueueMessageIn(tx, m); err != nil {
				return err
			}
		}
		if err := ops.CompleteOperationTx(ctx, tx, id, StepDeliver, models.AsMap(res)); err != nil {
			return err
		}
		data := eventData(id, spec, res, nil)
		if spec.DeliveryMethod == DeliveryWebhook {
			rep := data["report"].(map[string]any)
			rep["download_url"], rep["download_url_expires_at"] = link, models.Timestamp(linkExpires)
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventCompleted, id, data))
	})
}

// FailRun ends run id failed (or cancelled) with e at step and, when
// failed, records analytics_report.failed, in one transaction. Ending it
// again the same way does nothing. Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) FailRun(ctx context.Context, id string, status operations.OperationStatus, step string, e *operations.OperationError) error {
	op, err := s.RunByID(ctx, id)
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
	return s.core.Tx(ctx, scope, func(tx *gorm.DB) error {
		if _, err := operations.NewStore(s.core.Bound(tx)).FinishOperation(ctx, scope, id, operations.FinishInput{Status: status, FailedStep: step, Error: e}); err != nil {
			return err
		}
		if status != operations.OpFailed {
			return nil
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventFailed, id, eventData(id, spec, nil, e)))
	})
}

// eventData is the data of analytics_report.completed and .failed.
func eventData(id string, spec *Spec, res *Result, e *operations.OperationError) map[string]any {
	rep := map[string]any{"id": id, "dataset": spec.Query.Dataset, "format": spec.Format, "delivery_method": spec.DeliveryMethod,
		"status_url": RunsPath + "/" + id, "scheduled": spec.Scheduled}
	if spec.DefinitionID != "" {
		rep["definition_id"] = spec.DefinitionID
	}
	if res != nil {
		rep["status"], rep["row_count"] = StatusCompleted, res.RowCount
	}
	if e != nil {
		rep["status"], rep["error"] = StatusFailed, map[string]any{"code": e.Code, "message": e.Message}
	}
	return map[string]any{"report": rep}
}

// Links returns a function making runs' signed download links under
// baseURL, with the signing secret read once. Errors: INTERNAL_ERROR (no
// SECRETS_KEY).
func (s *Store) Links(ctx context.Context, baseURL string) (func(id string, expires time.Time) string, error) {
	signer, err := reportrun.LoadSigner(ctx, s.identity)
	if err != nil {
		return nil, err
	}
	return func(id string, expires time.Time) string { return signer.Link(baseURL, RunsPath, id, expires) }, nil
}

// OpenDownload checks a download link at now and opens the completed
// run's file; the caller closes it. Errors: INVALID_SIGNATURE,
// TOKEN_EXPIRED, NOT_FOUND (no completed run, or its file is gone),
// DEPENDENCY_UNAVAILABLE.
func (s *Store) OpenDownload(ctx context.Context, id, expires, signature string, now time.Time) (*operations.Operation, *Spec, io.ReadCloser, error) {
	signer, err := reportrun.LoadSigner(ctx, s.identity)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := signer.Check(id, expires, signature, RunsPath+"/"+id, now); err != nil {
		return nil, nil, nil, err
	}
	op, err := s.RunByID(ctx, id)
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
