package services

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
)

// ---------------------------------------------------------------------------
// Decommission.

// DecommissionInput is the decommission request (spec 2.2).
type DecommissionInput struct {
	Date              *time.Time
	MigrationRequired bool
	Destination       string
	Verification      bool
	Reason            string
}

// DecommissionPlan is a validated decommission, what its workflow carries.
type DecommissionPlan struct {
	ServiceID   string     `json:"service_id"`
	Date        *time.Time `json:"decommission_date,omitempty"`
	Migrate     bool       `json:"migrate"`
	Destination string     `json:"destination,omitempty"`
	Verify      bool       `json:"verify"`
	Reason      string     `json:"reason,omitempty"`
}

// Scheduled reports whether the decommission waits for its date at now.
func (d *DecommissionPlan) Scheduled(now time.Time) bool { return d.Date != nil && d.Date.After(now) }

// DecommissionSteps returns the steps of a decommission's operation.
func DecommissionSteps(d *DecommissionPlan, scheduled bool) []string {
	var steps []string
	if scheduled {
		steps = append(steps, StepWaitForDate)
	}
	steps = append(steps, operations.StepValidate)
	if d.Migrate {
		steps = append(steps, StepMigrateData)
		if d.Verify {
			steps = append(steps, StepVerifyMigration)
		}
	}
	return append(steps, StepDeactivate, StepReleaseInventory, StepStopBilling, StepRecordDecommission)
}

// PrepareDecommission validates a decommission of service id for principal
// p: the date (at most a day in the past, which means now; within 365
// days), the data migration (a destination of the same tenant and kind,
// delivered, not the service itself; verification only with a migration),
// the reason (at most 500 characters) and the service's state.
// Errors: NOT_FOUND, VALIDATION_ERROR, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION, SERVICE_CONFLICT.
func (s *Store) PrepareDecommission(ctx context.Context, p *models.Principal, id string, in DecommissionInput) (*Service, *DecommissionPlan, models.Scope, error) {
	svc, err := s.GetService(ctx, p, id)
	if err != nil {
		return nil, nil, models.Scope{}, err
	}
	scope := models.TenantScope(svc.OrganizationID, svc.Environment)
	var v models.Validator
	plan := &DecommissionPlan{ServiceID: svc.ID, Migrate: in.MigrationRequired, Destination: strings.TrimSpace(in.Destination),
		Verify: in.Verification, Reason: strings.TrimSpace(in.Reason)}
	now := s.Now()
	if in.Date != nil {
		t := in.Date.UTC()
		v.Check(!t.Before(now.Add(-maxSchedulePast)), "decommission_date", "must not be in the past")
		v.Check(!t.After(now.Add(maxScheduleAhead)), "decommission_date", "must be within 365 days")
		plan.Date = &t
	}
	v.Check(len(plan.Reason) <= 500, "reason", "must be at most 500 characters")
	switch {
	case plan.Migrate && plan.Destination == "":
		v.Add("data_migration.destination", "is required when data_migration.required is true: the id of the service that receives the data")
	case !plan.Migrate && plan.Destination != "":
		v.Add("data_migration.required", "must be true to migrate data to a destination")
	case !plan.Migrate && plan.Verify:
		v.Add("data_migration.verification", "needs a migration (data_migration.required)")
	case plan.Migrate:
		switch {
		case !models.HasPrefix(plan.Destination, models.PrefixService):
			v.Add("data_migration.destination", "must be a service id (svc_...)")
		case plan.Destination == svc.ID:
			v.Add("data_migration.destination", "must be another service than the one decommissioned")
		default:
			if err := s.checkMigrationDestination(ctx, scope, svc, plan.Destination); err != nil {
				if models.ErrorCode(err) != models.CodeValidation {
					return nil, nil, models.Scope{}, err
				}
				v.Add("data_migration.destination", models.AsError(err).Details["fields"].([]models.FieldIssue)[0].Issue)
			}
		}
	}
	if err := v.Err(); err != nil {
		return nil, nil, models.Scope{}, err
	}
	if err := CheckServiceChangeable(svc, now); err != nil {
		return nil, nil, models.Scope{}, err
	}
	return svc, plan, scope, nil
}

// checkMigrationDestination requires the destination of a migration to be
// a delivered service of the same tenant and kind.
// Errors: VALIDATION_ERROR (field data_migration.destination).
func (s *Store) checkMigrationDestination(ctx context.Context, scope models.Scope, src *Service, destID string) error {
	dest, err := s.ServiceIn(ctx, scope, destID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return models.Invalid(models.FieldIssue{Field: "data_migration.destination", Issue: fmt.Sprintf("no service %s in this organization", destID)})
	}
	if err != nil {
		return err
	}
	switch {
	case dest.Kind != src.Kind:
		return models.Invalid(models.FieldIssue{Field: "data_migration.destination", Issue: fmt.Sprintf("must be a %s like the service decommissioned; %s is a %s", src.Kind, dest.ID, dest.Kind)})
	case dest.Status != ServiceOperational && dest.Status != ServiceDegraded && dest.Status != ServiceDown && dest.Status != ServiceMaintenance:
		return models.Invalid(models.FieldIssue{Field: "data_migration.destination", Issue: fmt.Sprintf("must be in service; %s is %s", dest.ID, dest.Status)})
	case dest.PendingOperationID != "" && strings.HasPrefix(dest.PendingOperationID, models.PrefixDecommission+"_"):
		return models.Invalid(models.FieldIssue{Field: "data_migration.destination", Issue: fmt.Sprintf("%s is being decommissioned itself", dest.ID)})
	}
	return nil
}

// CheckMigrationDestination requires, again, that destID can receive the
// data of serviceID: a service of the same tenant and kind, in service and
// not being decommissioned itself. The decommission's migration steps call
// it, since the destination may have changed since the operation began.
// Errors: NOT_FOUND, VALIDATION_ERROR (field data_migration.destination).
func (s *Store) CheckMigrationDestination(ctx context.Context, scope models.Scope, serviceID, destID string) error {
	src, err := s.ServiceIn(ctx, scope, serviceID)
	if err != nil {
		return err
	}
	return s.checkMigrationDestination(ctx, scope, src, destID)
}

// ValidateDecommission re-checks a decommission when its date has come: the
// service is still decommissionable by this operation, and the destination
// can still receive the data. Errors: NOT_FOUND, VALIDATION_ERROR,
// SERVICE_MAINTENANCE, INVALID_STATE_TRANSITION, SERVICE_CONFLICT.
func (s *Store) ValidateDecommission(ctx context.Context, scope models.Scope, opID string, d *DecommissionPlan) error {
	svc, err := s.ServiceIn(ctx, scope, d.ServiceID)
	if err != nil {
		return err
	}
	if svc.Status == ServiceDecommissioning && svc.PendingOperationID == opID {
		return nil
	}
	check := *svc
	if check.PendingOperationID == opID {
		check.PendingOperationID = ""
	}
	if err := CheckServiceChangeable(&check, s.Now()); err != nil {
		return err
	}
	if d.Migrate {
		return s.checkMigrationDestination(ctx, scope, svc, d.Destination)
	}
	return nil
}

// BeginDecommissioning moves the service to decommissioning for operation
// opID (service.status_changed). Doing it again changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) BeginDecommissioning(ctx context.Context, scope models.Scope, serviceID, opID, reason string) (*Service, error) {
	var out *Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		moved, err := s.MoveServiceTx(ctx, scope, tx, serviceID, ServiceDecommissioning, OrDefault(reason, "decommission"), opID)
		out = moved
		return err
	})
	return out, ErrOrNil(err)
}

// StopBilling records when billing of the service stopped (once: stopping
// again keeps the first time) and returns it. Errors: NOT_FOUND.
func (s *Store) StopBilling(ctx context.Context, scope models.Scope, serviceID string) (time.Time, error) {
	var at time.Time
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.BillingEndedAt != nil {
			at = svc.BillingEndedAt.UTC()
			return nil
		}
		at = s.Now()
		return models.DBErr(tx.Model(&Service{}).Where("id = ?", serviceID).Update("billing_ended_at", at).Error)
	})
	return at, ErrOrNil(err)
}

// CompleteDecommission is the state change that ends a decommission, in one
// transaction: the service becomes decommissioned (its network assignment
// forgotten), service.decommissioned is written (data: service, reason,
// migration, billing_ended_at, request_id), the contacts are notified, and
// the operation completes. Calling it again after it committed changes
// nothing. Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) CompleteDecommission(ctx context.Context, scope models.Scope, opID string, d *DecommissionPlan) (*Service, error) {
	var out *Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var op operations.Operation
		if err := tx.Where("id = ?", opID).Take(&op).Error; err != nil {
			return models.NotFoundOr(err, "operation")
		}
		if op.Status == operations.OpCompleted {
			var svc Service
			if err := tx.Where("id = ?", d.ServiceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			out = &svc
			return nil
		}
		if op.Status.Terminal() {
			return operations.ErrTerminal(&op)
		}
		svc, err := s.MoveServiceTx(ctx, scope, tx, d.ServiceID, ServiceDecommissioned, OrDefault(d.Reason, "decommission"), opID)
		if err != nil {
			return err
		}
		now := s.Now()
		svc.DecommissionedAt, svc.DecommissionReason, svc.PendingOperationID = &now, d.Reason, ""
		svc.IPBlock, svc.Gateway, svc.VLANID, svc.CircuitID = "", "", 0, ""
		if err := tx.Model(svc).Select("decommissioned_at", "decommission_reason", "pending_operation_id", "ip_block", "gateway", "vlan_id", "circuit_id").Updates(svc).Error; err != nil {
			return models.DBErr(err)
		}
		data := map[string]any{"service": ServiceSummary(svc), "reason": d.Reason, "request_id": opID}
		if svc.BillingEndedAt != nil {
			data["billing_ended_at"] = models.Timestamp(*svc.BillingEndedAt)
		}
		if d.Migrate {
			data["migration"] = map[string]any{"destination": d.Destination, "verified": d.Verify}
		}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(svcEventDecommissioned, svc.ID, data)); err != nil {
			return err
		}
		if err := notifyContacts(tx, svc, opID, "service_decommissioned", fmt.Sprintf("%s has been decommissioned", svc.Name),
			map[string]any{"service_id": svc.ID, "request_id": opID, "reason": d.Reason}, ContactTechnical, ContactBilling); err != nil {
			return err
		}
		result := map[string]any{"service_id": svc.ID, "status": string(svc.Status), "service_url": "/v1/services/" + svc.ID,
			"decommissioned_at": models.Timestamp(now)}
		if svc.BillingEndedAt != nil {
			result["billing_ended_at"] = models.Timestamp(*svc.BillingEndedAt)
		}
		if d.Migrate {
			result["migration"] = map[string]any{"destination": d.Destination, "verified": d.Verify}
		}
		if err := s.operations.CompleteOperationTx(ctx, tx, opID, StepRecordDecommission, result); err != nil {
			return err
		}
		out = svc
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// Data migration statuses.
const (
	MigrationCopied     = "copied"
	MigrationVerified   = "verified"
	MigrationMismatch   = "mismatch"
	MigrationRolledBack = "rolled_back"
)

// DataMigration is the data a decommission copied from its service to a
// destination service: what was copied (items, bytes) and the checksums
// of the source and of what the destination received.
type DataMigration struct {
	OperationID string `gorm:"primaryKey;size:64"`
	models.Tenant
	SourceServiceID      string `gorm:"size:40;not null;index"`
	DestinationServiceID string `gorm:"size:40;not null;index"`
	Items                int    `gorm:"not null"`
	Bytes                int64  `gorm:"not null"`
	SourceChecksum       string `gorm:"size:64;not null"`
	DestinationChecksum  string `gorm:"size:64;not null"`
	Status               string `gorm:"size:20;not null"`
	CreatedAt            time.Time
	VerifiedAt           *time.Time
	RolledBackAt         *time.Time
}

// RecordMigration stores a migration, once per operation: recording it
// again returns the first. Errors: none but database failures.
func (s *Store) RecordMigration(ctx context.Context, scope models.Scope, m *DataMigration) (*DataMigration, error) {
	db := s.In(ctx, scope)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(m).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return s.DataMigrationOf(ctx, scope, m.OperationID)
}

// Migration returns the migration of a decommission. Errors: NOT_FOUND.
func (s *Store) DataMigrationOf(ctx context.Context, scope models.Scope, opID string) (*DataMigration, error) {
	var m DataMigration
	err := s.In(ctx, scope).Where("operation_id = ?", opID).Take(&m).Error
	return &m, models.NotFoundOr(err, "data migration")
}

// SetMigrationStatus records a migration's verification (verified or
// mismatch) or rollback. Errors: NOT_FOUND.
func (s *Store) SetMigrationStatus(ctx context.Context, scope models.Scope, opID, status string) error {
	updates := map[string]any{"status": status}
	now := s.Now()
	switch status {
	case MigrationVerified, MigrationMismatch:
		updates["verified_at"] = now
	case MigrationRolledBack:
		updates["rolled_back_at"] = now
	}
	res := s.In(ctx, scope).Model(&DataMigration{}).Where("operation_id = ?", opID).Updates(updates)
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("data migration")
	}
	return nil
}
