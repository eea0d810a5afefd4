package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ServiceStatus is a service's lifecycle state (DECISIONS 10b).
type ServiceStatus string

// Service lifecycle: pending → provisioning → operational ⇄ degraded | down |
// maintenance → decommissioning → decommissioned, or failed.
const (
	ServicePending         ServiceStatus = "pending"
	ServiceProvisioning    ServiceStatus = "provisioning"
	ServiceOperational     ServiceStatus = "operational"
	ServiceDegraded        ServiceStatus = "degraded"
	ServiceDown            ServiceStatus = "down"
	ServiceMaintenance     ServiceStatus = "maintenance"
	ServiceDecommissioning ServiceStatus = "decommissioning"
	ServiceDecommissioned  ServiceStatus = "decommissioned"
	ServiceFailed          ServiceStatus = "failed"
)

// serviceTransitions returns the statuses a service may move to from each
// status: the one table of the lifecycle.
func serviceTransitions() map[ServiceStatus][]ServiceStatus {
	return map[ServiceStatus][]ServiceStatus{
		ServicePending:         {ServiceProvisioning, ServiceFailed},
		ServiceProvisioning:    {ServiceOperational, ServiceFailed},
		ServiceOperational:     {ServiceDegraded, ServiceDown, ServiceMaintenance, ServiceDecommissioning},
		ServiceDegraded:        {ServiceOperational, ServiceDown, ServiceMaintenance, ServiceDecommissioning},
		ServiceDown:            {ServiceOperational, ServiceDegraded, ServiceMaintenance, ServiceDecommissioning},
		ServiceMaintenance:     {ServiceOperational, ServiceDegraded, ServiceDown},
		ServiceDecommissioning: {ServiceDecommissioned},
		ServiceDecommissioned:  {},
		ServiceFailed:          {},
	}
}

// Valid reports whether s is a known service status.
func (s ServiceStatus) Valid() bool {
	_, ok := serviceTransitions()[s]
	return ok
}

// NextStatuses returns the statuses a service in status s may move to.
func (s ServiceStatus) NextStatuses() []ServiceStatus {
	return slices.Clone(serviceTransitions()[s])
}

// CheckServiceTransition returns nil when a service may move from one status
// to the other. Errors: INVALID_STATE_TRANSITION (details: from, to, allowed).
func CheckServiceTransition(from, to ServiceStatus) error {
	next, ok := serviceTransitions()[from]
	if ok && slices.Contains(next, to) {
		return nil
	}
	allowed := make([]string, len(next))
	for i, n := range next {
		allowed[i] = string(n)
	}
	return Errorf(CodeInvalidStateTransition, "a service cannot move from %s to %s", from, to).
		WithDetail("from", string(from)).WithDetail("to", string(to)).WithDetail("allowed", allowed)
}

// Service is a customer's provisioned (or provisioning) service (svc_).
type Service struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	AccountID        string        `gorm:"size:40;not null;index"`
	Name             string        `gorm:"size:200;not null"`
	Kind             string        `gorm:"size:40;not null"`
	ServiceType      string        `gorm:"size:40;not null"`
	CatalogServiceID string        `gorm:"size:60;not null"`
	TemplateID       string        `gorm:"size:60"`
	Status           ServiceStatus `gorm:"size:20;not null;index"`
	Bandwidth        string        `gorm:"size:20;not null"`
	BandwidthMbps    int           `gorm:"not null"`
	SLA              string        `gorm:"size:20;not null"`
	BillingCycle     string        `gorm:"size:20;not null"`
	LocationID       string        `gorm:"size:60;not null;index"`
	Address          string        `gorm:"size:200;not null"`
	City             string        `gorm:"size:100;not null"`
	State            string        `gorm:"size:2;not null"`
	Zip              string        `gorm:"size:10;not null"`
	Redundancy       string        `gorm:"size:20"`
	Monitoring       string        `gorm:"size:20"`
	TechnicalContact string        `gorm:"size:320"`
	BillingContact   string        `gorm:"size:320"`
	IPBlock          string        `gorm:"size:43"`
	Gateway          string        `gorm:"size:39"`
	VLANID           int           `gorm:"not null;default:0"`
	CircuitID        string        `gorm:"size:60"`
	OperationID      string        `gorm:"size:64;not null;index"`
	ActivatedAt      *time.Time
	StatusChangedAt  time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// EnsureService creates the service that an order will provision, with id
// and status pending, or returns it when it already exists (a retried
// activity).
func (s *Store) EnsureService(ctx context.Context, scope Scope, id, opID string, o *ProvisioningOrder) (*Service, error) {
	now := s.Now()
	svc := &Service{
		ID: id, AccountID: o.AccountID, Name: o.Name, Kind: o.Kind, ServiceType: o.ServiceType,
		CatalogServiceID: o.CatalogServiceID, TemplateID: o.TemplateID, Status: ServicePending,
		Bandwidth: o.Bandwidth, BandwidthMbps: o.BandwidthMbps, SLA: o.SLA, BillingCycle: o.BillingCycle,
		LocationID: o.LocationID, Address: o.Location.Address, City: o.Location.City, State: o.Location.State, Zip: o.Location.Zip,
		Redundancy: o.Redundancy, Monitoring: o.Monitoring, TechnicalContact: o.TechnicalContact, BillingContact: o.BillingContact,
		OperationID: opID, StatusChangedAt: now,
	}
	db := s.In(ctx, scope)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(svc).Error; err != nil {
		return nil, dbErr(err)
	}
	var got Service
	if err := db.Where("id = ?", id).Take(&got).Error; err != nil {
		return nil, notFoundOr(err, "service")
	}
	return &got, nil
}

// GetService returns one service visible to p. Errors: NOT_FOUND.
func (s *Store) GetService(ctx context.Context, p *Principal, id string) (*Service, error) {
	return s.serviceIn(ctx, p.Scope(), id)
}

func (s *Store) serviceIn(ctx context.Context, scope Scope, id string) (*Service, error) {
	var svc Service
	err := s.In(ctx, scope).Where("id = ?", id).Take(&svc).Error
	return &svc, notFoundOr(err, "service")
}

// TransitionService moves a service to status to, inside tx when tx is not
// nil. Moving to the status the service already has is a no-op (so retried
// activities succeed). Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) TransitionService(ctx context.Context, scope Scope, tx *gorm.DB, id string, to ServiceStatus) (*Service, error) {
	db := tx
	if db == nil {
		db = s.In(ctx, scope)
	}
	var svc Service
	if err := db.Where("id = ?", id).Take(&svc).Error; err != nil {
		return nil, notFoundOr(err, "service")
	}
	if svc.Status == to {
		return &svc, nil
	}
	if err := CheckServiceTransition(svc.Status, to); err != nil {
		return nil, err
	}
	now := s.Now()
	updates := map[string]any{"status": to, "status_changed_at": now}
	if to == ServiceOperational && svc.ActivatedAt == nil {
		updates["activated_at"] = now
	}
	res := db.Model(&Service{}).Where("id = ? AND status = ?", id, svc.Status).Updates(updates)
	if res.Error != nil {
		return nil, dbErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, Errorf(CodeServiceConflict, "the service changed status concurrently; retry")
	}
	svc.Status, svc.StatusChangedAt = to, now
	if v, ok := updates["activated_at"]; ok {
		t := v.(time.Time)
		svc.ActivatedAt = &t
	}
	return &svc, nil
}

// NetworkAssignment is what the network gave a service.
type NetworkAssignment struct {
	IPBlock   string
	Gateway   string
	VLANID    int
	CircuitID string
}

// SetServiceNetwork records the non-empty parts of the network assignment
// on the service. Errors: NOT_FOUND.
func (s *Store) SetServiceNetwork(ctx context.Context, scope Scope, id string, n NetworkAssignment) error {
	updates := map[string]any{}
	if n.IPBlock != "" {
		updates["ip_block"], updates["gateway"] = n.IPBlock, n.Gateway
	}
	if n.VLANID != 0 {
		updates["vlan_id"] = n.VLANID
	}
	if n.CircuitID != "" {
		updates["circuit_id"] = n.CircuitID
	}
	if len(updates) == 0 {
		return nil
	}
	res := s.In(ctx, scope).Model(&Service{}).Where("id = ?", id).Updates(updates)
	if res.Error != nil {
		return dbErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return NotFound("service")
	}
	return nil
}

// FailService moves a service that has not become operational to failed
// (compensation of a provisioning); a service already failed, or missing,
// is left as it is.
func (s *Store) FailService(ctx context.Context, scope Scope, id string) error {
	svc, err := s.serviceIn(ctx, scope, id)
	if ErrorCode(err) == CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Status != ServicePending && svc.Status != ServiceProvisioning {
		return nil
	}
	_, err = s.TransitionService(ctx, scope, nil, id, ServiceFailed)
	var me *Error
	if errors.As(err, &me) && me.Code == CodeServiceConflict {
		return s.FailService(ctx, scope, id)
	}
	return err
}

// CompleteProvisioning is the state change that ends a provisioning, in one
// transaction: the service becomes operational, a service.provisioned event
// is written to the outbox, and the operation completes with the service as
// its result. Calling it again after it committed changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) CompleteProvisioning(ctx context.Context, scope Scope, opID, serviceID string) (*Service, error) {
	var out *Service
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		var op Operation
		if err := tx.Where("id = ?", opID).Take(&op).Error; err != nil {
			return notFoundOr(err, "operation")
		}
		if op.Status == OpCompleted {
			var svc Service
			if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
				return notFoundOr(err, "service")
			}
			out = &svc
			return nil
		}
		if op.Status.Terminal() {
			return errTerminal(&op)
		}
		svc, err := s.TransitionService(ctx, scope, tx, serviceID, ServiceOperational)
		if err != nil {
			return err
		}
		if err := RecordEvent(tx, NewEvent(EventServiceProvisioned, svc.ID, ProvisionedData(svc, opID))); err != nil {
			return err
		}
		result := map[string]any{"service_id": svc.ID, "status": string(svc.Status), "service_url": "/v1/services/" + svc.ID}
		if err := s.CompleteOperationTx(ctx, tx, opID, StepRecordService, result); err != nil {
			return err
		}
		out = svc
		return nil
	})
	if err != nil {
		return nil, AsError(err)
	}
	return out, nil
}

// ClearServiceNetwork forgets the network assignment of a service whose
// resources were released (compensation). A missing service is ignored.
func (s *Store) ClearServiceNetwork(ctx context.Context, scope Scope, id string) error {
	updates := map[string]any{"ip_block": "", "gateway": "", "vlan_id": 0, "circuit_id": ""}
	return dbErr(s.In(ctx, scope).Model(&Service{}).Where("id = ?", id).Updates(updates).Error)
}
