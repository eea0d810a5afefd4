package automation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// BulkStatusInput is POST /services/bulk/status with an action.
type BulkStatusInput struct {
	ServiceIDs []string
	Action     string
	Options    BulkOptions
}

// PrepareBulkStatus validates a bulk status change for principal p: 1 to
// 1,000 distinct services of one organization and the action suspend
// (operational, degraded or down → maintenance) or resume (maintenance →
// operational). Whether each service can make the move is decided per item
// when the operation runs. Errors: VALIDATION_ERROR.
func (s *Store) PrepareBulkStatus(ctx context.Context, p *models.Principal, in BulkStatusInput) (*BulkPlan, error) {
	var v models.Validator
	v.Check(in.Action == ActionSuspend || in.Action == ActionResume, "action", "must be suspend or resume (or absent, to read the statuses)")
	in.Options.validate(&v)
	svcs, scope, err := s.servicesForBulk(ctx, p, &v, in.ServiceIDs, func(i int) string { return fmt.Sprintf("service_ids[%d]", i) }, "service_ids")
	if err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	plan := &BulkPlan{Type: operations.OpTypeBulkStatus, Scope: scope, Options: in.Options, Input: map[string]any{"action": in.Action}}
	for i := range in.ServiceIDs {
		svc := svcs[i]
		plan.Items = append(plan.Items, BulkItem{Position: i, ServiceID: svc.ID, Action: in.Action,
			Spec: map[string]any{"service_id": svc.ID, "action": in.Action}})
	}
	return plan, nil
}

// ServiceStatusEntry is one service's status in a bulk status read.
type ServiceStatusEntry struct {
	ServiceID       string
	Found           bool
	Status          services.ServiceStatus
	StatusChangedAt time.Time
}

// BulkServiceStatuses returns the status of each service named (at most
// 1,000), in order; services that p cannot see are reported not found, the
// same as ids that do not exist. Errors: VALIDATION_ERROR.
func (s *Store) BulkServiceStatuses(ctx context.Context, p *models.Principal, ids []string) ([]ServiceStatusEntry, error) {
	var v models.Validator
	v.Check(len(ids) > 0, "service_ids", "must list at least one service")
	v.Check(len(ids) <= MaxBulkItems, "service_ids", fmt.Sprintf("must list at most %d services", MaxBulkItems))
	if err := v.Err(); err != nil {
		return nil, err
	}
	byID := map[string]services.Service{}
	for start := 0; start < len(ids); start += 500 {
		var batch []services.Service
		err := s.In(ctx, p.Scope()).Select("id", "organization_id", "environment", "status", "status_changed_at").
			Where("id IN ?", ids[start:min(start+500, len(ids))]).Find(&batch).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		for _, svc := range batch {
			byID[svc.ID] = svc
		}
	}
	out := make([]ServiceStatusEntry, len(ids))
	for i, id := range ids {
		svc, ok := byID[id]
		out[i] = ServiceStatusEntry{ServiceID: id, Found: ok, Status: svc.Status, StatusChangedAt: svc.StatusChangedAt}
	}
	return out, nil
}

// CreateBulkOperation stores a bulk operation (pending, every item pending)
// and its items in one transaction, as the principal createdBy. For a retry
// it also records the new operation on the retried one (result.retried_by),
// refusing a second retry of the same operation.
// Errors: INVALID_STATE_TRANSITION (already retried), NOT_FOUND.
func (s *Store) CreateBulkOperation(ctx context.Context, plan *BulkPlan, id, createdBy string) (*operations.Operation, error) {
	input := map[string]any{"orchestration": plan.Options, "total": len(plan.Items)}
	for k, val := range plan.Input {
		input[k] = val
	}
	if plan.RetryOf != "" {
		input["retry_of"] = plan.RetryOf
	}
	op := operations.NewOperation(id, plan.Type, "", createdBy, nil, input)
	op.Steps = []operations.OperationStep{}
	op.Items = make([]operations.OperationItem, len(plan.Items))
	items := make([]BulkItem, len(plan.Items))
	for i, it := range plan.Items {
		it.OperationID, it.Position = id, i
		items[i] = it
		op.Items[i] = operations.OperationItem{ID: it.ServiceID, Status: ItemPending}
	}
	err := s.Tx(ctx, plan.Scope, func(tx *gorm.DB) error {
		if plan.RetryOf != "" {
			_, err := s.operations.UpdateOperation(ctx, plan.Scope, tx, plan.RetryOf, func(orig *operations.Operation) error {
				if by, ok := orig.Result["retried_by"].(string); ok && by != "" {
					return models.Errorf(models.CodeInvalidStateTransition, "operation %s was already retried by %s", orig.ID, by).WithDetail("retried_by", by)
				}
				if orig.Result == nil {
					orig.Result = map[string]any{}
				}
				orig.Result["retried_by"] = id
				return nil
			})
			if err != nil {
				return err
			}
		}
		if err := tx.Create(op).Error; err != nil {
			return err
		}
		return tx.CreateInBatches(items, 200).Error
	})
	if err != nil {
		return nil, models.DBErr(err)
	}
	return op, nil
}

// BulkItems returns the items of operation opID at positions [from, from+limit)
// whose status (in the operation's items) is one of statuses (any when
// none), in position order, and the position after the last one examined.
// Errors: NOT_FOUND.
func (s *Store) BulkItems(ctx context.Context, scope models.Scope, opID string, from, limit int, statuses ...string) ([]BulkItem, int, error) {
	op, err := s.operations.OperationIn(ctx, scope, opID)
	if err != nil {
		return nil, from, err
	}
	var positions []int
	next := from
	for ; next < len(op.Items) && len(positions) < limit; next++ {
		if len(statuses) == 0 || slices.Contains(statuses, op.Items[next].Status) {
			positions = append(positions, next)
		}
	}
	if len(positions) == 0 {
		return nil, next, nil
	}
	var items []BulkItem
	err = s.In(ctx, scope).Where("operation_id = ? AND position IN ?", opID, positions).Order("position").Find(&items).Error
	return items, next, models.DBErr(err)
}

// EnsureChildOperations creates, once, the provisioning operation (pending)
// that each bulk provisioning item runs as, so that the item's Provisioning
// workflow can start. Calling it again changes nothing.
func (s *Store) EnsureChildOperations(ctx context.Context, scope models.Scope, createdBy string, items []BulkItem) error {
	ops := make([]*operations.Operation, 0, len(items))
	for _, it := range items {
		if it.ChildID == "" || it.Order == nil {
			continue
		}
		ops = append(ops, operations.NewOperation(it.ChildID, operations.OpTypeProvisioning, it.ServiceID, createdBy, operations.ProvisioningSteps(false),
			map[string]any{"bulk_request_id": it.OperationID, "position": it.Position}))
	}
	if len(ops) == 0 {
		return nil
	}
	return models.DBErr(s.In(ctx, scope).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ops, 100).Error)
}
