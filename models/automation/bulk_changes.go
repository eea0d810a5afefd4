package automation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// ServiceSnapshot is what a status change touches.
type ServiceSnapshot struct {
	Status services.ServiceStatus `json:"status"`
}

// Kinds of status change (bulk status and the suspend_service and
// resume_service orchestration actions).
const (
	ChangeSuspend = ActionSuspend
	ChangeResume  = ActionResume
)

// ServiceChange records one status change made to a service by a bulk item
// or an orchestration step (Key = "<request_id>#<position or step>"): the
// status before and after, so that the change is made once however often
// its activity runs, and can be undone (rollback_on_failure).
type ServiceChange struct {
	Key string `gorm:"primaryKey;column:change_key;size:100"`
	models.Tenant
	ServiceID   string          `gorm:"size:40;not null;index"`
	OperationID string          `gorm:"size:64;not null;index"`
	Kind        string          `gorm:"size:20;not null"`
	Before      ServiceSnapshot `gorm:"serializer:json;type:text"`
	After       ServiceSnapshot `gorm:"serializer:json;type:text"`
	AppliedAt   time.Time
	RevertedAt  *time.Time
}

// Event names written by status changes and rollbacks (DECISIONS 9).
const (
	eventServiceStatusChanged  = "service.status_changed"
	eventServiceDecommissioned = "service.decommissioned"
)

// ChangeRequest is a status change to make to one service: suspend or resume.
type ChangeRequest struct {
	Key         string
	OperationID string
	ServiceID   string
	Kind        string
}

// ServiceChangeTarget returns the status a change of kind moves svc to at
// now, or the error that forbids it: a suspension moves a delivered service
// (operational, degraded, down) to maintenance, a resumption moves a
// suspended one back to operational; a service already there stays.
// Errors: SERVICE_MAINTENANCE (resuming a service in a scheduled maintenance
// window, a scaling's: details maintenance_ends_at, retry_after and the
// scaling's operation_id), SERVICE_CONFLICT (another change of the service
// is under way), INVALID_STATE_TRANSITION, VALIDATION_ERROR (unknown kind).
func ServiceChangeTarget(kind string, svc *services.Service, now time.Time) (services.ServiceStatus, error) {
	if kind == ChangeResume && svc.Status == services.ServiceMaintenance && svc.MaintenanceEndsAt != nil && svc.MaintenanceEndsAt.After(now) {
		// A scheduled window (a scaling's) ends on its own: resuming it is
		// SERVICE_MAINTENANCE, even though its scaling is changing the service.
		e := models.Errorf(models.CodeServiceMaintenance, "service %s is in a scheduled maintenance window until %s", svc.ID, models.Timestamp(*svc.MaintenanceEndsAt)).
			WithDetail("maintenance_ends_at", models.Timestamp(*svc.MaintenanceEndsAt)).
			WithDetail("retry_after", max(1, int(math.Ceil(svc.MaintenanceEndsAt.Sub(now).Seconds()))))
		if svc.PendingOperationID != "" {
			e.WithDetail("operation_id", svc.PendingOperationID)
		}
		return "", e
	}
	if svc.PendingOperationID != "" {
		return "", models.Errorf(models.CodeServiceConflict, "operation %s is already changing service %s; wait for it to end, or cancel it", svc.PendingOperationID, svc.ID).
			WithDetail("operation_id", svc.PendingOperationID)
	}
	switch kind {
	case ChangeSuspend:
		if svc.Status == services.ServiceMaintenance {
			return svc.Status, nil
		}
		return services.ServiceMaintenance, services.CheckServiceTransition(svc.Status, services.ServiceMaintenance)
	case ChangeResume:
		switch {
		case svc.Status == services.ServiceOperational:
			return svc.Status, nil
		case svc.Status != services.ServiceMaintenance:
			return "", models.Errorf(models.CodeInvalidStateTransition, "only a suspended service (status maintenance) can be resumed; this one is %s", svc.Status).
				WithDetail("from", string(svc.Status)).WithDetail("to", string(services.ServiceOperational))
		}
		return services.ServiceOperational, nil
	}
	return "", models.Invalid(models.FieldIssue{Field: "action", Issue: fmt.Sprintf("unknown change %q", kind)})
}

// ServiceForChange returns the service a status change would act on, after
// checking that the change is allowed now. Errors: NOT_FOUND, and those of
// ServiceChangeTarget.
func (s *Store) ServiceForChange(ctx context.Context, scope models.Scope, kind, serviceID string) (*services.Service, error) {
	svc, err := s.services.ServiceIn(ctx, scope, serviceID)
	if err != nil {
		return nil, err
	}
	if _, err := ServiceChangeTarget(kind, svc, s.Now()); err != nil {
		return nil, err
	}
	return svc, nil
}

// ApplyServiceChange makes the status change req, once: in one transaction
// it checks the service, moves it, records the change (ServiceChange) and
// writes service.status_changed (data: service, from, to, reason: suspend
// or resume, request_id) to the outbox. Applying the same key again returns
// the service as it is. Errors: NOT_FOUND, and those of ServiceChangeTarget.
func (s *Store) ApplyServiceChange(ctx context.Context, scope models.Scope, req ChangeRequest) (*services.Service, error) {
	var out *services.Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var done ServiceChange
		err := tx.Where("change_key = ?", req.Key).Take(&done).Error
		if err == nil {
			var svc services.Service
			if err := tx.Where("id = ?", done.ServiceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			out = &svc
			return nil
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return models.DBErr(err)
		}
		var svc services.Service
		if err := tx.Where("id = ?", req.ServiceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		to, err := ServiceChangeTarget(req.Kind, &svc, s.Now())
		if err != nil {
			return err
		}
		before := svc.Status
		if to != svc.Status {
			moved, err := s.services.TransitionService(ctx, scope, tx, svc.ID, to)
			if err != nil {
				return err
			}
			svc = *moved
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceStatusChanged, svc.ID, map[string]any{
				"service": serviceEventData(&svc), "from": string(before), "to": string(to), "reason": req.Kind, "request_id": req.OperationID,
			})); err != nil {
				return err
			}
		}
		rec := &ServiceChange{Key: req.Key, ServiceID: svc.ID, OperationID: req.OperationID, Kind: req.Kind,
			Before: ServiceSnapshot{Status: before}, After: ServiceSnapshot{Status: svc.Status}, AppliedAt: s.Now()}
		if err := tx.Create(rec).Error; err != nil {
			return models.DBErr(err)
		}
		out = &svc
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// RevertServiceChange undoes the status change recorded under key, once:
// the service moves back, with service.status_changed (reason: rollback).
// A change that was never made, changed nothing, or was undone already is
// left alone. Errors: SERVICE_CONFLICT (the service left the status the
// change gave it, or another change is under way), INVALID_STATE_TRANSITION.
func (s *Store) RevertServiceChange(ctx context.Context, scope models.Scope, key string) error {
	return asErrorOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var rec ServiceChange
		err := tx.Where("change_key = ?", key).Take(&rec).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return models.DBErr(err)
		}
		if rec.RevertedAt != nil {
			return nil
		}
		if rec.Before.Status != rec.After.Status {
			var svc services.Service
			if err := tx.Where("id = ?", rec.ServiceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			if svc.Status != rec.After.Status || svc.PendingOperationID != "" {
				return models.Errorf(models.CodeServiceConflict, "service %s moved on (%s) since the change: it cannot be undone", svc.ID, svc.Status)
			}
			moved, err := s.services.TransitionService(ctx, scope, tx, svc.ID, rec.Before.Status)
			if err != nil {
				return err
			}
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceStatusChanged, svc.ID, map[string]any{
				"service": serviceEventData(moved), "from": string(rec.After.Status), "to": string(rec.Before.Status), "reason": "rollback", "request_id": rec.OperationID,
			})); err != nil {
				return err
			}
		}
		return models.DBErr(tx.Model(&ServiceChange{}).Where("change_key = ?", key).Update("reverted_at", s.Now()).Error)
	}))
}

// asErrorOrNil returns nil for nil, else err as *Error.
func asErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// serviceEventData is the `service` object of the events written here, the
// same summary as the services area's events.
func serviceEventData(svc *services.Service) map[string]any {
	return map[string]any{
		"id": svc.ID, "name": svc.Name, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
		"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID, "quantity": svc.Quantity,
	}
}

// RetireProvisionedService ends a service that a bulk rollback undid after
// it had been provisioned: operational (or degraded, down) →
// decommissioning → decommissioned, with a service.decommissioned event
// (reason: rollback, billing_ended_at), in one transaction; its network
// assignment is cleared, its billing ends (billing_ended_at, kept if already
// set, as a decommission does) and its decommission is recorded. A service
// already decommissioned, failed, or missing is left alone; one never
// activated is marked failed. Errors: SERVICE_CONFLICT (another change is
// under way), INVALID_STATE_TRANSITION (e.g. in maintenance).
func (s *Store) RetireProvisionedService(ctx context.Context, scope models.Scope, serviceID, opID string) error {
	svc, err := s.services.ServiceIn(ctx, scope, serviceID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	switch svc.Status {
	case services.ServiceDecommissioned, services.ServiceFailed:
		return nil
	case services.ServicePending, services.ServiceProvisioning:
		return s.services.FailService(ctx, scope, serviceID, "rollback", opID)
	}
	if svc.PendingOperationID != "" {
		return models.Errorf(models.CodeServiceConflict, "operation %s is changing service %s: it cannot be rolled back now", svc.PendingOperationID, svc.ID)
	}
	return asErrorOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if svc.Status != services.ServiceDecommissioning {
			if _, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, services.ServiceDecommissioning, "rollback", opID); err != nil {
				return err
			}
		}
		moved, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, services.ServiceDecommissioned, "rollback", opID)
		if err != nil {
			return err
		}
		now := s.Now()
		updates := map[string]any{"ip_block": "", "gateway": "", "vlan_id": 0, "circuit_id": "",
			"decommissioned_at": now, "decommission_reason": "rollback of " + opID}
		billingEnded := now
		if moved.BillingEndedAt != nil {
			billingEnded = moved.BillingEndedAt.UTC()
		} else {
			updates["billing_ended_at"] = now
		}
		if err := tx.Model(&services.Service{}).Where("id = ?", serviceID).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(eventServiceDecommissioned, serviceID, map[string]any{
			"service": serviceEventData(moved), "reason": "rollback", "request_id": opID, "billing_ended_at": models.Timestamp(billingEnded),
		}))
	}))
}

// CancelPendingOperations ends as cancelled the provisioning operations of
// ids that never started (still pending): bulk items that were skipped or
// cancelled before their workflow ran. Others are left alone.
func (s *Store) CancelPendingOperations(ctx context.Context, scope models.Scope, ids []string) error {
	for start := 0; start < len(ids); start += 500 {
		var pending []string
		err := s.In(ctx, scope).Model(&operations.Operation{}).Where("id IN ? AND status = ?", ids[start:min(start+500, len(ids))], operations.OpPending).Pluck("id", &pending).Error
		if err != nil {
			return models.DBErr(err)
		}
		for _, id := range pending {
			_, err := s.operations.FinishOperation(ctx, scope, id, operations.FinishInput{Status: operations.OpCancelled, Result: map[string]any{"reason": "the bulk operation ended before this item started"}})
			if err != nil && models.ErrorCode(err) != models.CodeInvalidStateTransition {
				return err
			}
		}
	}
	return nil
}

// DeleteBulkOperation removes a bulk operation whose workflow could not be
// started: the operation (still pending) and its items, and, for a retry,
// the mark it left on the retried operation.
func (s *Store) DeleteBulkOperation(ctx context.Context, scope models.Scope, id, retryOf string) error {
	return models.DBErr(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("operation_id = ?", id).Delete(&BulkItem{}).Error; err != nil {
			return err
		}
		if err := tx.Where("id = ? AND status = ?", id, operations.OpPending).Delete(&operations.Operation{}).Error; err != nil {
			return err
		}
		if retryOf == "" {
			return nil
		}
		_, err := s.operations.UpdateOperation(ctx, scope, tx, retryOf, func(orig *operations.Operation) error {
			if by, _ := orig.Result["retried_by"].(string); by == id {
				delete(orig.Result, "retried_by")
			}
			return nil
		})
		return err
	}))
}
