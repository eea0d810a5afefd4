package automation

import (
	"context"
	"fmt"
	"slices"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// ItemUpdate is a new status of one bulk item.
type ItemUpdate struct {
	Position int                        `json:"position"`
	Status   string                     `json:"status"`
	Error    *operations.OperationError `json:"error,omitempty"`
}

// RecordBulkItems applies updates to the operation's items in one write. An
// update never moves an item that has ended back to pending or in_progress.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (the operation has ended).
func (s *Store) RecordBulkItems(ctx context.Context, scope models.Scope, opID string, updates []ItemUpdate) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, opID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return operations.ErrTerminal(op)
		}
		op.Status = operations.OpInProgress
		for _, u := range updates {
			if u.Position < 0 || u.Position >= len(op.Items) {
				continue
			}
			it := &op.Items[u.Position]
			if ItemTerminal(it.Status) && !ItemTerminal(u.Status) {
				continue
			}
			it.Status, it.Error = u.Status, u.Error
		}
		return nil
	})
}

// BulkFinish says how a bulk operation's workflow ended.
type BulkFinish struct {
	Cancelled  bool `json:"cancelled"`   // the operation was cancelled
	RolledBack bool `json:"rolled_back"` // rollback_on_failure undid the completed items
}

// BulkOutcome counts a bulk operation's items by status.
type BulkOutcome struct {
	Total, Completed, Failed, RolledBack, Skipped, Cancelled, Other int
	// RollbackFailed counts completed items whose rollback failed.
	RollbackFailed int
}

// CountItems counts items by status.
func CountItems(items []operations.OperationItem) BulkOutcome {
	o := BulkOutcome{Total: len(items)}
	for _, it := range items {
		switch it.Status {
		case ItemCompleted:
			o.Completed++
			if it.Error != nil {
				o.RollbackFailed++
			}
		case ItemFailed:
			o.Failed++
		case ItemRolledBack:
			o.RolledBack++
		case ItemSkipped:
			o.Skipped++
		case ItemCancelled:
			o.Cancelled++
		default:
			o.Other++
		}
	}
	return o
}

// BulkStatus returns the final status of a bulk operation whose items ended
// as o: cancelled when it was cancelled; rolled_back when a rollback undid
// every completed item (failed when some could not be undone); otherwise
// completed when every item completed, failed when none did, partial between.
func BulkStatus(o BulkOutcome, fin BulkFinish) operations.OperationStatus {
	switch {
	case fin.Cancelled:
		return operations.OpCancelled
	case fin.RolledBack && o.RollbackFailed > 0:
		return operations.OpFailed
	case fin.RolledBack:
		return operations.OpRolledBack
	case o.Completed == o.Total:
		return operations.OpCompleted
	case o.Completed == 0:
		return operations.OpFailed
	}
	return operations.OpPartial
}

// bulkFailureCode is the code of a bulk operation's error.
func bulkFailureCode(t operations.OperationType, items []operations.OperationItem) models.Code {
	if t == operations.OpTypeBulkProvision {
		return models.CodeProvisioningFailed
	}
	for _, it := range items {
		if it.Status == ItemFailed && it.Error != nil {
			return it.Error.Code
		}
	}
	return models.CodeServiceConflict
}

// FinishBulk ends a bulk operation: items that never ended become skipped
// (cancelled when the operation was cancelled), the status follows
// BulkStatus from the items, the result counts them, and the error (status
// failed, partial or rolled_back) summarises the failures; the first failed
// item is in details. Finishing it again is harmless.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (it ended otherwise).
func (s *Store) FinishBulk(ctx context.Context, scope models.Scope, opID string, fin BulkFinish) (*operations.Operation, error) {
	return s.operations.UpdateOperation(ctx, scope, nil, opID, func(op *operations.Operation) error {
		if op.Status.Terminal() {
			return nil
		}
		left := ItemSkipped
		if fin.Cancelled {
			left = ItemCancelled
		}
		for i := range op.Items {
			if !ItemTerminal(op.Items[i].Status) {
				op.Items[i].Status = left
			}
		}
		o := CountItems(op.Items)
		now := s.Now()
		op.Status, op.FinishedAt = BulkStatus(o, fin), &now
		result := map[string]any{
			"total": o.Total, "completed": o.Completed, "failed": o.Failed, "rolled_back": o.RolledBack,
			"skipped": o.Skipped, "cancelled": o.Cancelled,
		}
		if op.Result != nil {
			if by, ok := op.Result["retried_by"]; ok {
				result["retried_by"] = by
			}
		}
		if retry, ok := op.Input["retry_of"]; ok {
			result["retry_of"] = retry
		}
		if op.Status != operations.OpCompleted && o.Completed < o.Total {
			result["retry_url"] = "/v1/operations/" + op.ID + "/retry"
		}
		op.Result = result
		op.Error = nil
		if op.Status == operations.OpFailed || op.Status == operations.OpPartial || op.Status == operations.OpRolledBack {
			first := -1
			for i, it := range op.Items {
				if it.Status == ItemFailed || (it.Status == ItemCompleted && it.Error != nil) {
					first = i
					break
				}
			}
			details := map[string]any{"failed": o.Failed, "total": o.Total}
			msg := fmt.Sprintf("%d of %d items failed", o.Failed, o.Total)
			if o.RollbackFailed > 0 {
				details["rollback_failed"] = o.RollbackFailed
				msg += fmt.Sprintf("; %d completed items could not be rolled back", o.RollbackFailed)
			} else if fin.RolledBack {
				msg += "; the completed items were rolled back"
			}
			if first >= 0 {
				details["first_failed_position"] = first
				details["first_failed_service_id"] = op.Items[first].ID
				if e := op.Items[first].Error; e != nil {
					details["first_error"] = map[string]any{"code": string(e.Code), "message": e.Message}
					msg += fmt.Sprintf("; the first (services[%d]): %s", first, e.Message)
				}
			}
			op.Error = &operations.OperationError{Code: bulkFailureCode(op.Type, op.Items), Message: msg, Details: details}
		}
		return nil
	})
}

// retryableStatuses are the final statuses of a bulk operation that retry accepts.
var retryableStatuses = []operations.OperationStatus{operations.OpPartial, operations.OpFailed, operations.OpRolledBack, operations.OpCancelled}

// PrepareBulkRetry plans a new bulk operation that runs again the items of
// bulk operation opID that did not complete (failed, rolled_back, skipped or
// cancelled), with its orchestration options unless options is given. A
// provisioning item is validated again (availability may have changed) and
// gets a new service id. Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS,
// VALIDATION_ERROR (not a bulk operation), INVALID_STATE_TRANSITION (still
// running, completed, or already retried), and PrepareBulkProvision's 422 codes.
func (s *Store) PrepareBulkRetry(ctx context.Context, p *models.Principal, opID string, options *BulkOptions) (*BulkPlan, error) {
	op, err := s.operations.GetOperation(ctx, p, opID)
	if err != nil {
		return nil, err
	}
	if !op.Type.IsBulk() {
		return nil, models.Invalid(models.FieldIssue{Field: "request_id", Issue: fmt.Sprintf("only bulk operations can be retried; %s is a %s operation", op.ID, op.Type)})
	}
	if !slices.Contains(retryableStatuses, op.Status) {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "operation %s is %s: only a partial, failed, rolled_back or cancelled bulk operation can be retried", op.ID, op.Status).
			WithDetail("status", string(op.Status))
	}
	if by, ok := op.Result["retried_by"].(string); ok && by != "" {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "operation %s was already retried by %s", op.ID, by).WithDetail("retried_by", by)
	}
	var positions []int
	for i, it := range op.Items {
		if it.Status != ItemCompleted {
			positions = append(positions, i)
		}
	}
	if len(positions) == 0 {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "every item of operation %s completed: nothing to retry", op.ID)
	}
	scope := models.TenantScope(op.OrganizationID, op.Environment)
	var items []BulkItem
	for start := 0; start < len(positions); start += 500 {
		var batch []BulkItem
		err := s.In(ctx, scope).Where("operation_id = ? AND position IN ?", op.ID, positions[start:min(start+500, len(positions))]).
			Order("position").Find(&batch).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		items = append(items, batch...)
	}
	opts := bulkOptionsFrom(op.Input)
	if options != nil {
		opts = *options
	}
	var plan *BulkPlan
	switch op.Type {
	case operations.OpTypeBulkProvision:
		in := BulkProvisionInput{Options: opts}
		in.AccountID, _ = op.Input["account_id"].(string)
		for _, it := range items {
			in.Items = append(in.Items, provisionItemFromSpec(it.Spec))
		}
		plan, err = s.PrepareBulkProvision(ctx, p, in)
	case operations.OpTypeBulkModify:
		in := BulkModifyInput{Options: opts}
		for _, it := range items {
			var ch ServiceChanges
			if it.Changes != nil {
				ch = *it.Changes
			}
			in.Items = append(in.Items, BulkModifyItem{ServiceID: it.ServiceID, Changes: ch})
		}
		plan, err = s.PrepareBulkModify(ctx, p, in)
	default:
		in := BulkStatusInput{Options: opts}
		for _, it := range items {
			in.ServiceIDs = append(in.ServiceIDs, it.ServiceID)
			in.Action = it.Action
		}
		plan, err = s.PrepareBulkStatus(ctx, p, in)
	}
	if err != nil {
		return nil, err
	}
	plan.RetryOf = op.ID
	for i := range plan.Items {
		src := items[i].Position
		plan.Items[i].SourcePosition = &src
	}
	return plan, nil
}

// bulkOptionsFrom reads the orchestration options stored in an operation's input.
func bulkOptionsFrom(input map[string]any) BulkOptions {
	var o BulkOptions
	m, _ := input["orchestration"].(map[string]any)
	o.Parallel, _ = m["parallel"].(bool)
	o.RollbackOnFailure, _ = m["rollback_on_failure"].(bool)
	if n, ok := m["max_concurrency"].(float64); ok {
		o.MaxConcurrency = int(n)
	}
	return o
}
