package operations

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
)

// OperationStatus is the status of a long-running operation (DECISIONS 5).
type OperationStatus string

// Operation statuses; the last five are terminal.
const (
	OpPending    OperationStatus = "pending"
	OpInProgress OperationStatus = "in_progress"
	OpCompleted  OperationStatus = "completed"
	OpPartial    OperationStatus = "partial"
	OpFailed     OperationStatus = "failed"
	OpRolledBack OperationStatus = "rolled_back"
	OpCancelled  OperationStatus = "cancelled"
)

// CompletedAtOrder is the sort expression of completed_at for a table of
// runs with status and finished_at columns (report runs, support reports),
// as their answers show it: the completed ones first, by their finish time
// (the key the direction applies to), the others after them (all null:
// ties by id).
const CompletedAtOrder = "CASE WHEN status = '" + string(OpCompleted) + "' THEN 0 ELSE 1 END, " +
	"CASE WHEN status = '" + string(OpCompleted) + "' THEN finished_at END"

// Terminal reports whether an operation in status s has ended.
func (s OperationStatus) Terminal() bool {
	switch s {
	case OpCompleted, OpPartial, OpFailed, OpRolledBack, OpCancelled:
		return true
	}
	return false
}

// OperationType says what an operation does.
type OperationType string

// Operation types.
const (
	OpTypeProvisioning OperationType = "provisioning"
	// OpTypeSupportReport is a support report run (rpt_...).
	OpTypeSupportReport OperationType = "support_report"
	// OpTypeAnalyticsReport is an analytics report builder run (rpt_...).
	OpTypeAnalyticsReport OperationType = "analytics_report"
)

// ReadPermission returns the permission needed to see operations of type t.
func (t OperationType) ReadPermission() string {
	switch t {
	case OpTypeSupportReport:
		return "support:read"
	case OpTypeAnalyticsReport:
		return "analytics:read"
	}
	return "services:read"
}

// WritePermission returns the permission needed to cancel operations of type t.
func (t OperationType) WritePermission() string {
	switch t {
	case OpTypeSupportReport:
		return "support:read"
	case OpTypeAnalyticsReport:
		return "analytics:read"
	}
	return "services:write"
}

// StepStatus is the status of one step of an operation.
type StepStatus string

// Step statuses: a completed step that compensation undid is compensated; steps
// that never ran because the operation ended first are skipped.
const (
	StepPending     StepStatus = "pending"
	StepInProgress  StepStatus = "in_progress"
	StepCompleted   StepStatus = "completed"
	StepFailed      StepStatus = "failed"
	StepCancelled   StepStatus = "cancelled"
	StepCompensated StepStatus = "compensated"
	StepSkipped     StepStatus = "skipped"
)

// Provisioning steps, in order.
const (
	StepSchedule        = "wait_for_schedule"
	StepValidate        = "validate"
	StepReserveCapacity = "reserve_capacity"
	StepConfigure       = "configure"
	StepActivate        = "activate"
	StepRecordService   = "record_service"
)

// ProvisioningSteps returns the steps of a provisioning operation; scheduled
// orders start by waiting for their preferred date.
func ProvisioningSteps(scheduled bool) []string {
	steps := []string{StepValidate, StepReserveCapacity, StepConfigure, StepActivate, StepRecordService}
	if scheduled {
		steps = append([]string{StepSchedule}, steps...)
	}
	return steps
}

// OperationError is the error of a failed operation or step.
type OperationError struct {
	Code    models.Code    `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// OperationStep is one step of an operation.
type OperationStep struct {
	Name       string          `json:"name"`
	Status     StepStatus      `json:"status"`
	StartedAt  *time.Time      `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
	Error      *OperationError `json:"error"`
}

// OperationItem is the status of one item of a bulk operation.
type OperationItem struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Error  *OperationError `json:"error"`
}

// Operation is a long-running operation run by a Temporal workflow
// (DECISIONS 5). Its id is the workflow id. The API creates the row (pending)
// before starting the workflow; only the workflow's activities change it.
type Operation struct {
	ID string `gorm:"primaryKey;size:64"`
	models.Tenant
	Type       OperationType   `gorm:"size:40;not null;index"`
	Status     OperationStatus `gorm:"size:20;not null;index"`
	ResourceID string          `gorm:"size:64;index"`
	Steps      []OperationStep `gorm:"serializer:json;type:text"`
	Items      []OperationItem `gorm:"serializer:json;type:text"`
	Result     map[string]any  `gorm:"serializer:json;type:text"`
	Error      *OperationError `gorm:"serializer:json;type:text"`
	Input      map[string]any  `gorm:"serializer:json;type:text"`
	RunID      string          `gorm:"size:64"`
	CreatedBy  string          `gorm:"size:40"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// Progress counts an operation's steps (or items, for bulk operations).
type Progress struct {
	Total     int
	Completed int
	Failed    int
	Percent   int
}

// Progress returns the operation's progress.
func (op *Operation) Progress() Progress {
	var p Progress
	count := func(done, failed bool) {
		p.Total++
		if done {
			p.Completed++
		}
		if failed {
			p.Failed++
		}
	}
	if len(op.Items) > 0 {
		for _, it := range op.Items {
			count(it.Status == "completed", it.Status == "failed")
		}
	} else {
		for _, st := range op.Steps {
			count(st.Status == StepCompleted, st.Status == StepFailed)
		}
	}
	if p.Total > 0 {
		p.Percent = p.Completed * 100 / p.Total
	}
	if op.Status == OpCompleted {
		p.Percent = 100
	}
	return p
}

// NewOperation returns a pending operation of type t with id, listing steps.
func NewOperation(id string, t OperationType, resourceID, createdBy string, steps []string, input map[string]any) *Operation {
	op := &Operation{ID: id, Type: t, Status: OpPending, ResourceID: resourceID, CreatedBy: createdBy, Input: input, Items: []OperationItem{}}
	for _, name := range steps {
		op.Steps = append(op.Steps, OperationStep{Name: name, Status: StepPending})
	}
	return op
}

// CreateOperation stores a new operation in scope.
func (s *Store) CreateOperation(ctx context.Context, scope models.Scope, op *Operation) error {
	return models.DBErr(s.In(ctx, scope).Create(op).Error)
}

// DeleteOperation removes an operation whose workflow could not be started.
func (s *Store) DeleteOperation(ctx context.Context, scope models.Scope, id string) error {
	return models.DBErr(s.In(ctx, scope).Where("id = ? AND status = ?", id, OpPending).Delete(&Operation{}).Error)
}

// GetOperation returns one operation visible to p; another tenant's
// operation is NOT_FOUND. Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS.
func (s *Store) GetOperation(ctx context.Context, p *models.Principal, id string) (*Operation, error) {
	op, err := s.OperationIn(ctx, p.Scope(), id)
	if err != nil {
		return nil, err
	}
	if err := checkRead(p, op); err != nil {
		return nil, err
	}
	return op, nil
}

// OperationSnapshot is GetOperation returning a snapshot of the
// operation's row: prev itself when the row is unchanged since prev (a
// snapshot it returned before, or nil; see models.RowReader). The
// snapshot's operation is shared: never modified. Errors: NOT_FOUND,
// INSUFFICIENT_PERMISSIONS.
func (s *Store) OperationSnapshot(ctx context.Context, p *models.Principal, id string, prev *models.RowSnapshot[Operation], ver models.RowVersion) (*models.RowSnapshot[Operation], error) {
	snap, err := s.rows.Read(ctx, p.Scope(), id, prev, ver)
	if err != nil {
		return nil, models.NotFoundOr(err, "operation")
	}
	if err := checkRead(p, snap.Row); err != nil {
		return nil, err
	}
	return snap, nil
}

// checkRead returns nil when p may read op. Errors: INSUFFICIENT_PERMISSIONS.
func checkRead(p *models.Principal, op *Operation) error {
	if !p.Can(op.Type.ReadPermission()) {
		return models.Errorf(models.CodeInsufficientPermissions, "this operation needs permission %s", op.Type.ReadPermission()).
			WithDetail("required_permission", op.Type.ReadPermission())
	}
	return nil
}

// OperationIn returns one operation in scope. Errors: NOT_FOUND.
func (s *Store) OperationIn(ctx context.Context, scope models.Scope, id string) (*Operation, error) {
	var op Operation
	err := s.In(ctx, scope).Where("id = ?", id).Take(&op).Error
	return &op, models.NotFoundOr(err, "operation")
}

// CheckCancellable returns nil when p may cancel op now. Errors:
// INSUFFICIENT_PERMISSIONS, INVALID_STATE_TRANSITION (the operation ended).
func CheckCancellable(p *models.Principal, op *Operation) error {
	if !p.Can(op.Type.WritePermission()) {
		return models.Errorf(models.CodeInsufficientPermissions, "cancelling this operation needs permission %s", op.Type.WritePermission()).
			WithDetail("required_permission", op.Type.WritePermission())
	}
	if op.Status.Terminal() && op.Status != OpCancelled {
		return models.Errorf(models.CodeInvalidStateTransition, "the operation is %s and can no longer be cancelled", op.Status).
			WithDetail("status", string(op.Status))
	}
	if parent := op.BulkParent(); parent != "" && op.Status != OpCancelled {
		return models.Errorf(models.CodeInvalidStateTransition, "the operation runs as an item of bulk operation %s: cancel that operation", parent).
			WithDetail("bulk_request_id", parent)
	}
	return nil
}

// BulkParent returns the bulk operation whose workflow runs op, when op is
// an item of a bulk job without a workflow of its own (a bulk provisioning
// item runs in its job's batch activities, or waits for its own workflow:
// RunID empty); "" otherwise.
func (op *Operation) BulkParent() string {
	if op.RunID != "" {
		return ""
	}
	parent, _ := op.Input["bulk_request_id"].(string)
	return parent
}

// UpdateOperation applies fn to the operation in one transaction (the row
// locked on PostgreSQL) and saves it.
func (s *Store) UpdateOperation(ctx context.Context, scope models.Scope, tx *gorm.DB, id string, fn func(op *Operation) error) (*Operation, error) {
	var out *Operation
	var from OperationStatus
	run := func(tx *gorm.DB) error {
		var op Operation
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&op).Error; err != nil {
			return models.NotFoundOr(err, "operation")
		}
		from = op.Status
		if err := fn(&op); err != nil {
			return err
		}
		op.UpdatedAt = s.Now()
		err := tx.Model(&Operation{}).Where("id = ?", id).Select("status", "steps", "items", "result", "error", "run_id", "updated_at", "finished_at").Updates(&op).Error
		if err != nil {
			return err
		}
		out = &op
		return nil
	}
	var err error
	if tx != nil {
		err = run(tx)
	} else {
		err = s.In(ctx, scope).Transaction(run)
	}
	if err != nil {
		var me *models.Error
		if errors.As(err, &me) {
			return nil, me
		}
		return nil, models.DBErr(err)
	}
	if s.Observer != nil && from != out.Status {
		s.Observer.OperationStatusChanged(string(out.Type), string(from), string(out.Status))
	}
	return out, nil
}

// Step returns the operation's step name, appending it as pending when the
// operation has none yet.
func (op *Operation) Step(name string) *OperationStep {
	for i := range op.Steps {
		if op.Steps[i].Name == name {
			return &op.Steps[i]
		}
	}
	op.Steps = append(op.Steps, OperationStep{Name: name, Status: StepPending})
	return &op.Steps[len(op.Steps)-1]
}

// ErrTerminal is the INVALID_STATE_TRANSITION of a change to an operation
// that has already ended.
func ErrTerminal(op *Operation) error {
	return models.Errorf(models.CodeInvalidStateTransition, "operation %s is already %s", op.ID, op.Status).WithDetail("status", string(op.Status))
}

// BeginOperation marks the operation in progress and records its workflow
// run id. Calling it again is harmless. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) BeginOperation(ctx context.Context, scope models.Scope, id, runID string) (*Operation, error) {
	return s.UpdateOperation(ctx, scope, nil, id, func(op *Operation) error {
		if op.Status.Terminal() {
			return ErrTerminal(op)
		}
		op.Status, op.RunID = OpInProgress, runID
		return nil
	})
}

// StartStep marks a step in progress (again, after a retry). Errors:
// NOT_FOUND, INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) StartStep(ctx context.Context, scope models.Scope, id, step string) error {
	_, err := s.UpdateOperation(ctx, scope, nil, id, func(op *Operation) error {
		if op.Status.Terminal() {
			return ErrTerminal(op)
		}
		st := op.Step(step)
		if st.Status == StepCompleted {
			return nil
		}
		now := s.Now()
		if st.StartedAt == nil {
			st.StartedAt = &now
		}
		st.Status, st.Error, op.Status = StepInProgress, nil, OpInProgress
		return nil
	})
	return err
}

// CompleteStep marks a step completed. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) CompleteStep(ctx context.Context, scope models.Scope, id, step string) error {
	_, err := s.completeStep(ctx, scope, nil, id, step, nil)
	return err
}

func (s *Store) completeStep(ctx context.Context, scope models.Scope, tx *gorm.DB, id, step string, extra func(op *Operation)) (*Operation, error) {
	return s.UpdateOperation(ctx, scope, tx, id, func(op *Operation) error {
		if op.Status.Terminal() {
			return ErrTerminal(op)
		}
		st := op.Step(step)
		now := s.Now()
		if st.StartedAt == nil {
			st.StartedAt = &now
		}
		if st.Status != StepCompleted {
			st.Status, st.FinishedAt, st.Error = StepCompleted, &now, nil
		}
		if extra != nil {
			extra(op)
		}
		return nil
	})
}

// CompleteOperationTx marks the last step and the operation completed with
// result, inside tx (the transaction that also records the service's state
// change and its event). Completing a completed operation is harmless.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (ended otherwise).
func (s *Store) CompleteOperationTx(ctx context.Context, tx *gorm.DB, id, lastStep string, result map[string]any) error {
	var op Operation
	if err := tx.Where("id = ?", id).Take(&op).Error; err != nil {
		return models.NotFoundOr(err, "operation")
	}
	if op.Status == OpCompleted {
		return nil
	}
	_, err := s.completeStep(ctx, models.Scope{}, tx, id, lastStep, func(op *Operation) {
		now := s.Now()
		op.Status, op.Result, op.FinishedAt, op.Error = OpCompleted, result, &now, nil
	})
	return err
}

// FinishInput says how an operation ended when it did not complete.
type FinishInput struct {
	Status      OperationStatus // failed, cancelled or rolled_back
	FailedStep  string          // the step that failed or was interrupted
	Error       *OperationError
	Compensated []string // completed steps whose effects were undone
	Result      map[string]any
}

// FinishOperation ends an operation that did not complete: the failed (or
// interrupted) step is marked failed (cancelled), compensated steps
// compensated, steps that never ran skipped. Finishing it again with the same
// status is harmless. Errors: VALIDATION_ERROR (not a terminal status),
// NOT_FOUND, INVALID_STATE_TRANSITION (it already ended otherwise).
func (s *Store) FinishOperation(ctx context.Context, scope models.Scope, id string, in FinishInput) (*Operation, error) {
	if !in.Status.Terminal() || in.Status == OpCompleted {
		return nil, models.Invalid(models.FieldIssue{Field: "status", Issue: fmt.Sprintf("%q does not end an operation that did not complete", in.Status)})
	}
	return s.UpdateOperation(ctx, scope, nil, id, func(op *Operation) error {
		if op.Status == in.Status {
			return nil
		}
		if op.Status.Terminal() {
			return ErrTerminal(op)
		}
		now := s.Now()
		for i := range op.Steps {
			st := &op.Steps[i]
			switch {
			case st.Name == in.FailedStep && st.Status != StepCompleted:
				if in.Status == OpCancelled {
					st.Status = StepCancelled
				} else {
					st.Status, st.Error = StepFailed, in.Error
				}
				if st.StartedAt == nil {
					st.StartedAt = &now
				}
				st.FinishedAt = &now
			case st.Status == StepCompleted && slices.Contains(in.Compensated, st.Name):
				st.Status = StepCompensated
			case st.Status == StepInProgress:
				st.Status, st.FinishedAt = StepCancelled, &now
			case st.Status == StepPending:
				st.Status = StepSkipped
			}
		}
		op.Status, op.Error, op.FinishedAt = in.Status, in.Error, &now
		if in.Result != nil {
			op.Result = in.Result
		}
		return nil
	})
}

// RecentOperations returns the newest operations in scope, newest first.
// Errors: INTERNAL_ERROR.
func (s *Store) RecentOperations(ctx context.Context, scope models.Scope, limit int) ([]Operation, error) {
	var out []Operation
	err := s.In(ctx, scope).Order("created_at DESC, id DESC").Limit(limit).Find(&out).Error
	return out, models.DBErr(err)
}

// Bulk operation types (DECISIONS 5): one parent workflow per operation, one
// item per service.
const (
	OpTypeBulkProvision OperationType = "bulk_provision"
	OpTypeBulkModify    OperationType = "bulk_modify"
	OpTypeBulkStatus    OperationType = "bulk_status"
)

// IsBulk reports whether operations of type t are bulk operations (with items).
func (t OperationType) IsBulk() bool {
	return t == OpTypeBulkProvision || t == OpTypeBulkModify || t == OpTypeBulkStatus
}

// OperationFilter selects operations for ListOperations.
type OperationFilter struct {
	Type       OperationType   // empty: every type
	Status     OperationStatus // empty: every status
	ResourceID string          // empty: any resource
	// Expr is a filter expression over OperationFilterSchema's fields
	// (docs/filtering.md); empty: no such filter.
	Expr string
}

var operationSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "finished_at": "finished_at", "type": "type", "status": "status"}

// Readable narrows q, a query of operations, to the types p may read:
// report runs need their own read permissions (support reports
// support:read, analytics reports analytics:read), every other type
// services:read.
func Readable(p *models.Principal, q *gorm.DB) *gorm.DB {
	var readable, unreadable []OperationType
	for _, t := range []OperationType{OpTypeSupportReport, OpTypeAnalyticsReport} {
		if p.Can(t.ReadPermission()) {
			readable = append(readable, t)
		} else {
			unreadable = append(unreadable, t)
		}
	}
	switch {
	case p.Can(OpTypeProvisioning.ReadPermission()):
		if len(unreadable) > 0 {
			q = q.Where("type NOT IN ?", unreadable)
		}
	case len(readable) > 0:
		q = q.Where("type IN ?", readable)
	default:
		q = q.Where("1 = 0")
	}
	return q
}

// ListOperations returns a page of the operations in p's scope that f
// selects and p may read (support reports need support:read, analytics
// reports analytics:read, the others services:read), newest first by default. Errors: VALIDATION_ERROR (sort,
// filter).
func (s *Store) ListOperations(ctx context.Context, p *models.Principal, f OperationFilter, page models.PageRequest) ([]Operation, int64, error) {
	q := Readable(p, s.In(ctx, p.Scope()).Model(&Operation{}))
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.ResourceID != "" {
		q = q.Where("resource_id = ?", f.ResourceID)
	}
	if strings.TrimSpace(f.Expr) != "" {
		expr, err := filter.Compile(OperationFilterSchema(), f.Expr)
		if err != nil {
			return nil, 0, err
		}
		q = q.Where(expr.SQL, expr.Args...)
	}
	var out []Operation
	total, err := models.Paginate(q, page, operationSorts, &out)
	return out, total, err
}
