package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
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
	return models.Errorf(models.CodeInvalidStateTransition, "a service cannot move from %s to %s", from, to).
		WithDetail("from", string(from)).WithDetail("to", string(to)).WithDetail("allowed", allowed)
}

// Service is a customer's provisioned (or provisioning) service (svc_).
type Service struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
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

	// Spec is the category body the service was ordered with (its kind's
	// fields, as validated); Features, Configuration and Resources are what
	// the service has now (features, settings of PUT /configuration, what
	// the network built: phone numbers, instances, endpoints, sites).
	Spec          map[string]any `gorm:"serializer:json;type:text"`
	Features      []string       `gorm:"serializer:json;type:text"`
	Configuration map[string]any `gorm:"serializer:json;type:text"`
	Resources     map[string]any `gorm:"serializer:json;type:text"`
	Quantity      int            `gorm:"not null;default:1"`
	// Price: the monthly recurring and one-time charges (after the term
	// discount), in Currency, for TermMonths; QuoteID when ordered from a quote.
	MonthlyCharge models.Money `gorm:"not null;default:0"`
	OneTimeCharge models.Money `gorm:"not null;default:0"`
	Currency      string       `gorm:"size:3"`
	TermMonths    int          `gorm:"not null;default:1"`
	QuoteID       string       `gorm:"size:40"`
	// PendingOperationID is the change, scaling or decommission now under
	// way (one at a time); LastChangeID the last change applied.
	PendingOperationID  string `gorm:"size:64;index"`
	LastChangeID        string `gorm:"size:64"`
	MaintenanceStartsAt *time.Time
	MaintenanceEndsAt   *time.Time
	DecommissionedAt    *time.Time
	DecommissionReason  string `gorm:"size:500"`
	// BillingEndedAt is when billing of the service stopped (decommission);
	// billing reads it.
	BillingEndedAt *time.Time
}

// Live reports whether the service is delivered (operational, degraded,
// down or in maintenance): the statuses the network measures.
func (svc *Service) Live() bool {
	switch svc.Status {
	case ServiceOperational, ServiceDegraded, ServiceDown, ServiceMaintenance:
		return true
	}
	return false
}

// EnsureService creates the service that an order will provision, with id
// and status pending, or returns it when it already exists (a retried
// activity).
func (s *Store) EnsureService(ctx context.Context, scope models.Scope, id, opID string, o *ProvisioningOrder) (*Service, error) {
	now := s.Now()
	svc := &Service{
		ID: id, AccountID: o.AccountID, Name: o.Name, Kind: o.Kind, ServiceType: o.ServiceType,
		CatalogServiceID: o.CatalogServiceID, TemplateID: o.TemplateID, Status: ServicePending,
		Bandwidth: o.Bandwidth, BandwidthMbps: o.BandwidthMbps, SLA: o.SLA, BillingCycle: o.BillingCycle,
		LocationID: o.LocationID, Address: o.Location.Address, City: o.Location.City, State: o.Location.State, Zip: o.Location.Zip,
		Redundancy: o.Redundancy, Monitoring: o.Monitoring, TechnicalContact: o.TechnicalContact, BillingContact: o.BillingContact,
		OperationID: opID, StatusChangedAt: now,
		Spec: o.Spec, Features: o.Features, Configuration: map[string]any{}, Resources: map[string]any{}, Quantity: max(o.Quantity, 1),
		MonthlyCharge: o.MonthlyCharge, OneTimeCharge: o.OneTimeCharge, Currency: o.Currency, TermMonths: max(o.TermMonths, 1), QuoteID: o.QuoteID,
	}
	if svc.Features == nil {
		svc.Features = []string{}
	}
	if len(o.Sites) > 0 {
		sites := make([]any, len(o.Sites))
		for i, st := range o.Sites {
			sites[i] = map[string]any{"location_id": st.LocationID, "role": st.Role, "address": st.Address}
		}
		svc.Resources["sites"] = sites
	}
	delete(svc.Spec, "_missing")
	db := s.In(ctx, scope)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(svc).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var got Service
	if err := db.Where("id = ?", id).Take(&got).Error; err != nil {
		return nil, models.NotFoundOr(err, "service")
	}
	return &got, nil
}

// GetService returns one service visible to p. Errors: NOT_FOUND.
func (s *Store) GetService(ctx context.Context, p *models.Principal, id string) (*Service, error) {
	return s.ServiceIn(ctx, p.Scope(), id)
}

// ServiceSnapshot is GetService returning a snapshot of the service's
// row: prev itself when the row is unchanged since prev (a snapshot it
// returned before, or nil; see models.RowReader). The snapshot's service
// is shared: never modified. Errors: NOT_FOUND.
func (s *Store) ServiceSnapshot(ctx context.Context, p *models.Principal, id string, prev *models.RowSnapshot[Service], ver models.RowVersion) (*models.RowSnapshot[Service], error) {
	snap, err := s.rows.Read(ctx, p.Scope(), id, prev, ver)
	if err != nil {
		return nil, models.NotFoundOr(err, "service")
	}
	return snap, nil
}

// ServiceIn returns the service id in scope. Errors: NOT_FOUND.
func (s *Store) ServiceIn(ctx context.Context, scope models.Scope, id string) (*Service, error) {
	var svc Service
	err := s.In(ctx, scope).Where("id = ?", id).Take(&svc).Error
	return &svc, models.NotFoundOr(err, "service")
}

// TransitionService moves a service to status to, inside tx when tx is not
// nil. Moving to the status the service already has is a no-op (so retried
// activities succeed). Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) TransitionService(ctx context.Context, scope models.Scope, tx *gorm.DB, id string, to ServiceStatus) (*Service, error) {
	db := tx
	if db == nil {
		db = s.In(ctx, scope)
	}
	var svc Service
	if err := db.Where("id = ?", id).Take(&svc).Error; err != nil {
		return nil, models.NotFoundOr(err, "service")
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
		return nil, models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, models.Errorf(models.CodeServiceConflict, "the service changed status concurrently; retry")
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
func (s *Store) SetServiceNetwork(ctx context.Context, scope models.Scope, id string, n NetworkAssignment) error {
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
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("service")
	}
	return nil
}

// FailService moves a service that has not become operational to failed
// (compensation of a provisioning), writing service.status_changed (reason,
// request_id opID) in the same transaction; a service already failed, or
// missing, is left as it is.
func (s *Store) FailService(ctx context.Context, scope models.Scope, id, reason, opID string) error {
	svc, err := s.ServiceIn(ctx, scope, id)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Status != ServicePending && svc.Status != ServiceProvisioning {
		return nil
	}
	_, err = s.MoveService(ctx, scope, id, ServiceFailed, reason, opID)
	var me *models.Error
	if errors.As(err, &me) && me.Code == models.CodeServiceConflict {
		return s.FailService(ctx, scope, id, reason, opID)
	}
	return err
}

// MoveService moves a service to status to and writes service.status_changed
// (data: service, from, to, reason, request_id opID) to the outbox, in one
// transaction. Moving to its current status changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION, SERVICE_CONFLICT.
func (s *Store) MoveService(ctx context.Context, scope models.Scope, id string, to ServiceStatus, reason, opID string) (*Service, error) {
	var out *Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		moved, err := s.MoveServiceTx(ctx, scope, tx, id, to, reason, opID)
		out = moved
		return err
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// CompleteProvisioning is the state change that ends a provisioning, in one
// transaction: the service becomes operational, service.status_changed
// (provisioning → operational, reason provisioned) and service.provisioned
// events are written to the outbox, and the operation completes with the service as
// its result. Calling it again after it committed changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) CompleteProvisioning(ctx context.Context, scope models.Scope, opID, serviceID string) (*Service, error) {
	var out *Service
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		var op operations.Operation
		if err := tx.Where("id = ?", opID).Take(&op).Error; err != nil {
			return models.NotFoundOr(err, "operation")
		}
		if op.Status == operations.OpCompleted {
			var svc Service
			if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
				return models.NotFoundOr(err, "service")
			}
			out = &svc
			return nil
		}
		if op.Status.Terminal() {
			return operations.ErrTerminal(&op)
		}
		svc, err := s.MoveServiceTx(ctx, scope, tx, serviceID, ServiceOperational, "provisioned", opID)
		if err != nil {
			return err
		}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(eventlog.EventServiceProvisioned, svc.ID, ProvisionedData(svc, opID))); err != nil {
			return err
		}
		if err := notifyContacts(tx, svc, opID, "service_provisioned", fmt.Sprintf("Your %s is in service", svc.Name),
			map[string]any{"service_id": svc.ID, "status": string(svc.Status), "request_id": opID}, ContactTechnical, ContactBilling); err != nil {
			return err
		}
		result := map[string]any{"service_id": svc.ID, "status": string(svc.Status), "service_url": "/v1/services/" + svc.ID}
		if err := s.operations.CompleteOperationTx(ctx, tx, opID, operations.StepRecordService, result); err != nil {
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

// ClearServiceNetwork forgets the network assignment of a service whose
// resources were released (compensation). A missing service is ignored.
func (s *Store) ClearServiceNetwork(ctx context.Context, scope models.Scope, id string) error {
	updates := map[string]any{"ip_block": "", "gateway": "", "vlan_id": 0, "circuit_id": ""}
	return models.DBErr(s.In(ctx, scope).Model(&Service{}).Where("id = ?", id).Updates(updates).Error)
}

// Operation types of the services area besides provisioning (DECISIONS 5).
const (
	OpTypeModification operations.OperationType = "modification"
	OpTypeScaling      operations.OperationType = "scaling"
	OpTypeDecommission operations.OperationType = "decommission"
)

// Identifier prefixes of service changes (not in DECISIONS 2; see
// docs/services.md): modifications and scalings. Decommissions use dec_.
const (
	PrefixModification = "mod"
	PrefixScaling      = "scl"
	PrefixIncident     = "inc"
)

// Event names of the services area written here (DECISIONS 9; the
// canonical names are in package webhooks).
const (
	svcEventModified             = "service.modified"
	EventServiceDown             = "service.down"
	EventServiceRestored         = "service.restored"
	EventServicePerformanceAlert = "service.performance_alert"
	svcEventMaintenanceScheduled = "service.maintenance_scheduled"
	svcEventDecommissioned       = "service.decommissioned"
	svcEventStatusChanged        = "service.status_changed"
)

// ServiceSummary is the service as events describe it.
func ServiceSummary(svc *Service) map[string]any {
	return map[string]any{
		"id": svc.ID, "name": svc.Name, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
		"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID, "quantity": svc.Quantity,
	}
}

// MoveServiceTx moves a service to status to inside tx and writes
// service.status_changed (data: service, from, to, reason, request_id):
// every move of a service's lifecycle is reported, those of a provisioning
// included. Moving to its current status changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) MoveServiceTx(ctx context.Context, scope models.Scope, tx *gorm.DB, id string, to ServiceStatus, reason, opID string) (*Service, error) {
	var before Service
	if err := tx.Where("id = ?", id).Take(&before).Error; err != nil {
		return nil, models.NotFoundOr(err, "service")
	}
	if before.Status == to {
		return &before, nil
	}
	moved, err := s.TransitionService(ctx, scope, tx, id, to)
	if err != nil {
		return nil, err
	}
	data := map[string]any{"service": ServiceSummary(moved), "from": string(before.Status), "to": string(to), "reason": reason}
	if opID != "" {
		data["request_id"] = opID
	}
	if err := eventlog.RecordEvent(tx, eventlog.NewEvent(svcEventStatusChanged, id, data)); err != nil {
		return nil, err
	}
	return moved, nil
}

// Contact roles notified about a service.
const (
	ContactTechnical = "technical"
	ContactBilling   = "billing"
)

// notifyContacts writes a notification for each of the service's contacts
// of the given roles that has an address, inside tx. A notification of the
// same template and operation is written once per recipient.
func notifyContacts(tx *gorm.DB, svc *Service, opID, template, subject string, data map[string]any, roles ...string) error {
	for _, role := range roles {
		to := svc.TechnicalContact
		if role == ContactBilling {
			to = svc.BillingContact
		}
		if to == "" {
			continue
		}
		var n int64
		if err := tx.Model(&eventlog.ContactNotification{}).Where("service_id = ? AND operation_id = ? AND template = ? AND recipient = ?", svc.ID, opID, template, to).Count(&n).Error; err != nil {
			return models.DBErr(err)
		}
		if n > 0 {
			continue
		}
		row := &eventlog.ContactNotification{ID: models.NewID(eventlog.PrefixNotification), ServiceID: svc.ID, OperationID: opID, Channel: "email", Role: role,
			Recipient: to, Template: template, Subject: subject, Data: data}
		if err := tx.Create(row).Error; err != nil {
			return models.DBErr(err)
		}
	}
	return nil
}

// Notifications returns the notifications written about a service, oldest first.
func (s *Store) ServiceNotifications(ctx context.Context, scope models.Scope, serviceID string) ([]eventlog.ContactNotification, error) {
	var out []eventlog.ContactNotification
	err := s.In(ctx, scope).Where("service_id = ?", serviceID).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// NotifyProvisioningFailed tells a failed provisioning's contacts (once).
func (s *Store) NotifyProvisioningFailed(ctx context.Context, scope models.Scope, serviceID, opID, reason string) error {
	return s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		err := tx.Where("id = ?", serviceID).Take(&svc).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return models.DBErr(err)
		}
		return notifyContacts(tx, &svc, opID, "provisioning_failed", fmt.Sprintf("Provisioning of %s failed", svc.Name),
			map[string]any{"service_id": svc.ID, "request_id": opID, "reason": reason}, ContactTechnical)
	})
}

// SetServiceResources records what the network built for a service (merged
// into Resources) and its reference. Errors: NOT_FOUND.
func (s *Store) SetServiceResources(ctx context.Context, scope models.Scope, id string, resources map[string]any) error {
	return s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", id).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.Resources == nil {
			svc.Resources = map[string]any{}
		}
		for k, v := range resources {
			svc.Resources[k] = v
		}
		return models.DBErr(tx.Model(&svc).Select("resources").Updates(&svc).Error)
	})
}
