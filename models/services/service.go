package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
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

// ---------------------------------------------------------------------------
// Lists.

// ServiceFilter selects services in a list (DECISIONS 2's plain filters).
type ServiceFilter struct {
	Kind        string   // fixed by a category collection
	Statuses    []string // status=operational,degraded
	Types       []string // type: kinds or service types
	Location    string   // a location id, a ZIP code, a state code or a city
	AccountID   string
	Search      string
	Fields      []string // the fields search looks in (default: name, id, service_type, address, city)
	CreatedFrom *time.Time
	CreatedTo   *time.Time
}

var serviceSorts = models.SortFields{
	"created_at": "created_at", "updated_at": "updated_at", "name": "name", "status": "status", "type": "kind",
	"service_type": "service_type", "monthly_charge": "monthly_charge", "status_changed_at": "status_changed_at",
}

// serviceSearchFields maps the names `fields` accepts to columns.
func serviceSearchFields() map[string]string {
	return map[string]string{"name": "name", "id": "id", "service_type": "service_type", "type": "kind", "address": "address",
		"city": "city", "state": "state", "zip": "zip", "location_id": "location_id", "account_id": "account_id", "circuit_id": "circuit_id"}
}

// svcLikePattern escapes s for a LIKE ... ESCAPE '\' pattern that contains it.
func svcLikePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// ListServices returns a page of the services visible to p that match f.
// Errors: VALIDATION_ERROR (unknown status, type, search field or sort).
func (s *Store) ListServices(ctx context.Context, p *models.Principal, f ServiceFilter, page models.PageRequest) ([]Service, int64, error) {
	var v models.Validator
	q := s.In(ctx, p.Scope()).Model(&Service{})
	if f.Kind != "" {
		q = q.Where("kind = ?", f.Kind)
	}
	if len(f.Statuses) > 0 {
		for i, st := range f.Statuses {
			v.Check(ServiceStatus(st).Valid(), fmt.Sprintf("status[%d]", i), "must be a service status (pending, provisioning, operational, degraded, down, maintenance, decommissioning, decommissioned, failed)")
		}
		q = q.Where("status IN ?", f.Statuses)
	}
	if len(f.Types) > 0 {
		for i, t := range f.Types {
			_, isKind := LookupKind(t)
			v.Check(isKind || (len(t) <= 40 && svcIdentPattern.MatchString(t)), fmt.Sprintf("type[%d]", i), "must be a kind ("+strings.Join(KindNames(), ", ")+") or a service type")
		}
		q = q.Where("kind IN ? OR service_type IN ?", f.Types, f.Types)
	}
	if loc := strings.TrimSpace(f.Location); loc != "" {
		switch {
		case strings.HasPrefix(loc, catalog.PrefixLocation+"_"):
			q = q.Where("location_id = ?", loc)
		case catalog.ZipPattern.MatchString(loc):
			q = q.Where("zip = ?", loc)
		case len(loc) == 2 && slices.Contains(catalog.USStates, strings.ToUpper(loc)):
			q = q.Where("state = ?", strings.ToUpper(loc))
		default:
			v.Check(len(loc) <= 100, "location", "must be at most 100 characters")
			q = q.Where("LOWER(city) = ?", strings.ToLower(loc))
		}
	}
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if term := strings.TrimSpace(f.Search); term != "" {
		v.Check(len(term) <= 100, "search", "must be at most 100 characters")
		cols := serviceSearchFields()
		fields := f.Fields
		if len(fields) == 0 {
			fields = []string{"name", "id", "service_type", "address", "city"}
		}
		var conds []string
		var args []any
		for i, name := range fields {
			col, ok := cols[name]
			if !ok {
				names := make([]string, 0, len(cols))
				for k := range cols {
					names = append(names, k)
				}
				slices.Sort(names)
				v.Add(fmt.Sprintf("fields[%d]", i), "must be one of "+strings.Join(names, ", "))
				continue
			}
			conds = append(conds, "LOWER("+col+`) LIKE ? ESCAPE '\'`)
			args = append(args, svcLikePattern(term))
		}
		if len(conds) > 0 {
			q = q.Where("("+strings.Join(conds, " OR ")+")", args...)
		}
	} else if len(f.Fields) > 0 {
		v.Add("fields", "needs search")
	}
	if f.CreatedFrom != nil {
		q = q.Where("created_at >= ?", f.CreatedFrom.UTC())
	}
	if f.CreatedTo != nil {
		q = q.Where("created_at <= ?", f.CreatedTo.UTC())
	}
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	var out []Service
	total, err := models.Paginate(q, page, serviceSorts, &out)
	return out, total, err
}

// ServiceOfKind returns one service of a kind visible to p; a service of
// another kind is NOT_FOUND (a category path names its kind). Errors: NOT_FOUND.
func (s *Store) ServiceOfKind(ctx context.Context, p *models.Principal, kind, id string) (*Service, error) {
	svc, err := s.GetService(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if svc.Kind != kind {
		prof, _ := LookupKind(kind)
		return nil, models.NotFound(OrDefault(prof.Title, "service"))
	}
	return svc, nil
}

// ---------------------------------------------------------------------------
// Changes: modifications and scalings.

// CheckServiceChangeable returns nil when a service may be changed (or
// decommissioned) at now. Errors: SERVICE_MAINTENANCE (in maintenance;
// details.retry_after: seconds until the window ends), INVALID_STATE_TRANSITION
// (not delivered: pending, provisioning, decommissioning, ...), SERVICE_CONFLICT
// (another change is under way: details.operation_id).
func CheckServiceChangeable(svc *Service, now time.Time) error {
	switch svc.Status {
	case ServiceMaintenance:
		retry := 60
		e := models.Errorf(models.CodeServiceMaintenance, "service %s is in maintenance; retry when it ends", svc.ID).WithDetail("status", string(svc.Status))
		if svc.MaintenanceEndsAt != nil {
			retry = max(1, int(math.Ceil(svc.MaintenanceEndsAt.Sub(now).Seconds())))
			e.Message = fmt.Sprintf("service %s is in maintenance until %s; retry after it", svc.ID, models.Timestamp(*svc.MaintenanceEndsAt))
			e.WithDetail("maintenance_ends_at", models.Timestamp(*svc.MaintenanceEndsAt))
		}
		return e.WithDetail("retry_after", retry)
	case ServiceOperational, ServiceDegraded, ServiceDown:
	default:
		return models.Errorf(models.CodeInvalidStateTransition, "a service in status %s cannot be changed", svc.Status).
			WithDetail("status", string(svc.Status)).WithDetail("from", string(svc.Status))
	}
	if svc.PendingOperationID != "" {
		return models.Errorf(models.CodeServiceConflict, "operation %s is already changing service %s; wait for it to end, or cancel it", svc.PendingOperationID, svc.ID).
			WithDetail("operation_id", svc.PendingOperationID)
	}
	return nil
}

// StartServiceOperation stores op (pending) as the one operation now
// changing the service, in one transaction with the checks of
// CheckServiceChangeable, so that two concurrent changes cannot both start.
// Errors: NOT_FOUND, SERVICE_MAINTENANCE, INVALID_STATE_TRANSITION, SERVICE_CONFLICT.
func (s *Store) StartServiceOperation(ctx context.Context, scope models.Scope, serviceID string, op *operations.Operation) error {
	return ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if err := CheckServiceChangeable(&svc, s.Now()); err != nil {
			return err
		}
		res := tx.Model(&Service{}).Where("id = ? AND status = ? AND (pending_operation_id = '' OR pending_operation_id IS NULL)", serviceID, svc.Status).
			Update("pending_operation_id", op.ID)
		if res.Error != nil {
			return models.DBErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return models.Errorf(models.CodeServiceConflict, "service %s changed concurrently; retry", serviceID)
		}
		return models.DBErr(tx.Create(op).Error)
	}))
}

// AbandonServiceOperation removes an operation whose workflow could not be
// started, and frees its service for other changes.
func (s *Store) AbandonServiceOperation(ctx context.Context, scope models.Scope, serviceID, opID string) error {
	return ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Model(&Service{}).Where("id = ? AND pending_operation_id = ?", serviceID, opID).Update("pending_operation_id", "").Error; err != nil {
			return models.DBErr(err)
		}
		return models.DBErr(tx.Where("id = ? AND status = ?", opID, operations.OpPending).Delete(&operations.Operation{}).Error)
	}))
}

// svcErrOrNil returns nil for nil, else err as *Error.
func ErrOrNil(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// MaintenanceWindowInput is the scale request's maintenance_window (spec 2.2).
type MaintenanceWindowInput struct {
	Start    *time.Time
	Duration string
}

// ScalingInput is the scale request (spec 2.2), plus new_quantity for the
// kinds that scale in users or agents.
type ScalingInput struct {
	Action        string
	NewBandwidth  string
	NewQuantity   int
	EffectiveDate *time.Time
	Window        *MaintenanceWindowInput
}

// ServiceUpdateInput is a change asked of a service: any of the fields (nil
// or empty leaves a field as it is). Configuration sets the settings given
// (a null value removes one); Features replaces the feature set.
type ServiceUpdateInput struct {
	Name          *string
	SLA           *string
	Bandwidth     *string
	Contacts      *OrderContacts
	Features      *[]string
	Configuration map[string]any
	Scaling       *ScalingInput
}

// ServiceUpdate is a validated change of a service, what the change
// workflow carries. Nil and empty fields are left as they are.
type ServiceUpdate struct {
	Type             operations.OperationType `json:"type"`
	Name             *string                  `json:"name,omitempty"`
	SLA              *string                  `json:"sla,omitempty"`
	Bandwidth        string                   `json:"bandwidth,omitempty"`
	BandwidthMbps    int                      `json:"bandwidth_mbps,omitempty"`
	Quantity         int                      `json:"quantity,omitempty"`
	Features         *[]string                `json:"features,omitempty"`
	Configuration    map[string]any           `json:"configuration,omitempty"` // the whole new configuration, when it changes
	Redundancy       *string                  `json:"redundancy,omitempty"`
	Monitoring       *string                  `json:"monitoring,omitempty"`
	TechnicalContact *string                  `json:"technical_contact,omitempty"`
	BillingContact   *string                  `json:"billing_contact,omitempty"`
	Action           string                   `json:"scaling_action,omitempty"`
	ApplyAt          *time.Time               `json:"apply_at,omitempty"`
	WindowStart      *time.Time               `json:"window_start,omitempty"`
	WindowEnd        *time.Time               `json:"window_end,omitempty"`
	MonthlyCharge    models.Money             `json:"monthly_charge"`
	Capacity         []ResourceRequest        `json:"capacity,omitempty"` // bandwidth to reserve in place of the current
	Changes          map[string]any           `json:"changes"`            // field: {from, to}
}

// ServiceSites returns the locations a service is delivered at: its sites
// (a network), or its one location.
func ServiceSites(svc *Service) []string {
	var out []string
	if sites, ok := svc.Resources["sites"].([]any); ok {
		for _, st := range sites {
			if m, ok := st.(map[string]any); ok {
				if id, _ := m["location_id"].(string); id != "" {
					out = append(out, id)
				}
			}
		}
	}
	if len(out) == 0 && svc.LocationID != "" {
		out = []string{svc.LocationID}
	}
	return out
}

// Windowed reports whether the update waits for a maintenance window.
func (u *ServiceUpdate) Windowed() bool { return u.WindowStart != nil && u.WindowEnd != nil }

// Steps of changes and decommissions (their operation documents).
const (
	StepWaitForWindow      = "wait_for_window"
	StepStartMaintenance   = "start_maintenance"
	StepApply              = "apply"
	StepEndMaintenance     = "end_maintenance"
	StepWaitForDate        = "wait_for_date"
	StepMigrateData        = "migrate_data"
	StepVerifyMigration    = "verify_migration"
	StepDeactivate         = "deactivate"
	StepReleaseInventory   = "release_inventory"
	StepStopBilling        = "stop_billing"
	StepRecordDecommission = "record_decommission"
)

// UpdateSteps returns the steps of a change's operation.
func UpdateSteps(u *ServiceUpdate) []string {
	var steps []string
	if u.Windowed() {
		steps = append(steps, StepWaitForWindow, StepStartMaintenance)
	}
	steps = append(steps, operations.StepValidate)
	if len(u.Capacity) > 0 {
		steps = append(steps, operations.StepReserveCapacity)
	}
	steps = append(steps, StepApply)
	if u.Windowed() {
		steps = append(steps, StepEndMaintenance)
	}
	return steps
}

// Scaling bounds.
const (
	maxWindowHours  = 24
	maxScaleAhead   = 90 * 24 * time.Hour
	defaultWindowed = time.Hour
)

var svcWindowPattern = regexp.MustCompile(`^([1-9][0-9]?)_hours?$`)

// ParseWindowDuration parses a maintenance window's duration, <n>_hours
// (1_hour to 24_hours). Errors: VALIDATION_ERROR naming field.
func ParseWindowDuration(field, s string) (time.Duration, error) {
	m := svcWindowPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be <n>_hours from 1_hour to 24_hours, e.g. 2_hours"})
	}
	n, _ := strconv.Atoi(m[1])
	if n > maxWindowHours {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be at most 24_hours"})
	}
	return time.Duration(n) * time.Hour, nil
}

// PrepareServiceUpdate validates a change of service id for principal p:
// the fields, the service's state (CheckServiceChangeable), and for a
// bandwidth change the capacity at its sites; and prices the result. It
// returns the service, the change and the tenant scope.
// Errors: NOT_FOUND, VALIDATION_ERROR, SERVICE_MAINTENANCE,
// INVALID_STATE_TRANSITION, SERVICE_CONFLICT, INSUFFICIENT_BANDWIDTH.
func (s *Store) PrepareServiceUpdate(ctx context.Context, p *models.Principal, id string, in ServiceUpdateInput) (*Service, *ServiceUpdate, models.Scope, error) {
	svc, err := s.GetService(ctx, p, id)
	if err != nil {
		return nil, nil, models.Scope{}, err
	}
	scope := models.TenantScope(svc.OrganizationID, svc.Environment)
	u, err := s.validateUpdate(ctx, scope, svc, in)
	if err != nil {
		return nil, nil, models.Scope{}, err
	}
	if err := CheckServiceChangeable(svc, s.Now()); err != nil {
		return nil, nil, models.Scope{}, err
	}
	if err := s.CheckUpdateCapacity(ctx, scope, svc, u); err != nil {
		return nil, nil, models.Scope{}, err
	}
	return svc, u, scope, nil
}

func (s *Store) validateUpdate(ctx context.Context, scope models.Scope, svc *Service, in ServiceUpdateInput) (*ServiceUpdate, error) {
	var v models.Validator
	prof, _ := LookupKind(svc.Kind)
	u := &ServiceUpdate{Type: OpTypeModification, Changes: map[string]any{}}
	change := func(field string, from, to any) { u.Changes[field] = map[string]any{"from": from, "to": to} }
	offer, err := s.catalog.CatalogServiceByID(ctx, svc.CatalogServiceID)
	if err != nil {
		return nil, err
	}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		v.Check(name != "" && len(name) <= 200, "name", "must be 1 to 200 characters")
		if name != svc.Name {
			u.Name = &name
			change("name", svc.Name, name)
		}
	}
	if in.SLA != nil {
		sla := strings.TrimSpace(*in.SLA)
		v.Check(slices.Contains(offer.SLAOptions, sla), "sla", fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.SLAOptions, ", ")))
		if sla != svc.SLA {
			u.SLA = &sla
			change("sla", svc.SLA, sla)
		}
	}
	if c := in.Contacts; c != nil {
		if t := strings.TrimSpace(c.Technical); t != "" {
			v.Check(models.ValidEmail(t), "contacts.technical", "must be an e-mail address")
			if t != svc.TechnicalContact {
				u.TechnicalContact = &t
				change("contacts.technical", svc.TechnicalContact, t)
			}
		}
		if b := strings.TrimSpace(c.Billing); b != "" {
			v.Check(models.ValidEmail(b), "contacts.billing", "must be an e-mail address")
			if b != svc.BillingContact {
				u.BillingContact = &b
				change("contacts.billing", svc.BillingContact, b)
			}
		}
	}
	if in.Features != nil {
		feats := svcCheckList(&v, "features", *in.Features, prof.Features, 0, 20)
		slices.Sort(feats)
		current := slices.Clone(svc.Features)
		slices.Sort(current)
		if !slices.Equal(feats, current) {
			u.Features = &feats
			change("features", svc.Features, feats)
		}
	}
	if in.Configuration != nil {
		cfg, monitoring, redundancy := s.mergeConfiguration(&v, svc, in.Configuration)
		if !svcJSONEqual(cfg, svc.Configuration) {
			u.Configuration = cfg
			change("configuration", svc.Configuration, cfg)
		}
		if monitoring != "" && monitoring != svc.Monitoring {
			u.Monitoring = &monitoring
			change("monitoring", svc.Monitoring, monitoring)
		}
		if redundancy != "" && redundancy != svc.Redundancy {
			u.Redundancy = &redundancy
			change("redundancy", svc.Redundancy, redundancy)
		}
	}
	newBandwidth := ""
	if in.Bandwidth != nil {
		newBandwidth = strings.TrimSpace(*in.Bandwidth)
		if prof.Bandwidth == "" {
			v.Add("bandwidth", fmt.Sprintf("a %s has no bandwidth", prof.Title))
			newBandwidth = ""
		}
	}
	if sc := in.Scaling; sc != nil {
		u.Type = OpTypeScaling
		s.validateScaling(&v, svc, prof, sc, u, &newBandwidth)
	}
	if newBandwidth != "" && newBandwidth != svc.Bandwidth {
		field := "bandwidth"
		if in.Scaling != nil {
			field = "new_bandwidth"
		}
		mbps, issue := catalog.CheckBandwidth(newBandwidth)
		if issue != "" {
			v.Add(field, issue)
		} else if len(offer.BandwidthOptions) > 0 && !slices.Contains(offer.BandwidthOptions, newBandwidth) {
			v.Add(field, fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.BandwidthOptions, ", ")))
		} else {
			if in.Scaling != nil {
				switch in.Scaling.Action {
				case "scale_up":
					v.Check(mbps > svc.BandwidthMbps, field, fmt.Sprintf("scale_up needs more than the current %s", svc.Bandwidth))
				case "scale_down":
					v.Check(mbps < svc.BandwidthMbps, field, fmt.Sprintf("scale_down needs less than the current %s", svc.Bandwidth))
				}
			}
			u.Bandwidth, u.BandwidthMbps = newBandwidth, mbps
			change(OrDefault(prof.Bandwidth, "bandwidth"), svc.Bandwidth, newBandwidth)
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if len(u.Changes) == 0 {
		return nil, models.Invalid(models.FieldIssue{Field: "(body)", Issue: "changes nothing: every field given has its current value"})
	}
	if u.BandwidthMbps > 0 && prof.Capacity {
		for i, site := range ServiceSites(svc) {
			u.Capacity = append(u.Capacity, ResourceRequest{Kind: catalog.AllocCapacity, Step: operations.StepReserveCapacity, Slot: i, LocationID: site, Pool: svc.ServiceType, Amount: u.BandwidthMbps})
		}
	}
	price, err := s.PriceService(ctx, svc, u)
	if err != nil {
		return nil, err
	}
	u.MonthlyCharge = price.Monthly
	if price.Monthly != svc.MonthlyCharge {
		change("monthly_charge", svc.MonthlyCharge, price.Monthly)
	}
	return u, nil
}

// validateScaling checks the scale request: its action, the new size, the
// effective date and the maintenance window (default: one hour from the
// effective date, or from now).
func (s *Store) validateScaling(v *models.Validator, svc *Service, prof KindProfile, sc *ScalingInput, u *ServiceUpdate, newBandwidth *string) {
	now := s.Now()
	u.Action = strings.TrimSpace(sc.Action)
	if !slices.Contains([]string{"scale_up", "scale_down"}, u.Action) {
		v.Add("scaling_action", "is required: scale_up or scale_down")
	}
	switch prof.Scaling {
	case ScaleBandwidth:
		*newBandwidth = strings.TrimSpace(sc.NewBandwidth)
		v.Check(*newBandwidth != "", "new_bandwidth", "is required: the bandwidth after scaling, e.g. 10gbps")
		v.Check(sc.NewQuantity == 0, "new_quantity", fmt.Sprintf("a %s scales in bandwidth: use new_bandwidth", prof.Title))
	case ScaleQuantity:
		v.Check(sc.NewBandwidth == "", "new_bandwidth", fmt.Sprintf("a %s scales in %s: use new_quantity", prof.Title, strings.ReplaceAll(prof.QuantityField, "_", " ")))
		limit := 10000
		if prof.Kind == KindContactCenter {
			limit = 5000
		}
		switch {
		case sc.NewQuantity < 1 || sc.NewQuantity > limit:
			v.Add("new_quantity", fmt.Sprintf("is required: the number of %s after scaling, 1 to %d", strings.ReplaceAll(prof.QuantityField, "_", " "), limit))
		case u.Action == "scale_up" && sc.NewQuantity <= svc.Quantity:
			v.Add("new_quantity", fmt.Sprintf("scale_up needs more than the current %d", svc.Quantity))
		case u.Action == "scale_down" && sc.NewQuantity >= svc.Quantity:
			v.Add("new_quantity", fmt.Sprintf("scale_down needs fewer than the current %d", svc.Quantity))
		default:
			u.Quantity = sc.NewQuantity
			u.Changes[prof.QuantityField] = map[string]any{"from": svc.Quantity, "to": sc.NewQuantity}
		}
	default:
		v.Add("scaling_action", fmt.Sprintf("a %s does not scale through this endpoint; change its configuration (PUT /v1/services/%s/configuration)", prof.Title, svc.ID))
		return
	}
	var start time.Time
	length := defaultWindowed
	if w := sc.Window; w != nil {
		if w.Start == nil {
			v.Add("maintenance_window.start", "is required")
		} else {
			start = w.Start.UTC()
		}
		if w.Duration == "" {
			v.Add("maintenance_window.duration", "is required: <n>_hours")
		} else if d, err := ParseWindowDuration("maintenance_window.duration", w.Duration); err != nil {
			v.Add("maintenance_window.duration", "must be <n>_hours from 1_hour to 24_hours, e.g. 2_hours")
		} else {
			length = d
		}
	} else if sc.EffectiveDate != nil {
		start = sc.EffectiveDate.UTC()
	} else {
		start = now
	}
	if start.IsZero() {
		return
	}
	if start.Before(now) {
		start = now.Truncate(time.Second)
	}
	v.Check(!start.After(now.Add(maxScaleAhead)), "maintenance_window.start", "must be within 90 days")
	end := start.Add(length)
	apply := start
	if sc.EffectiveDate != nil {
		eff := sc.EffectiveDate.UTC()
		if eff.After(apply) {
			apply = eff
		}
		if sc.Window != nil {
			v.Check(!eff.After(end) && !eff.Equal(end), "effective_date", "must fall within the maintenance window")
		}
		v.Check(!eff.Before(now.Add(-maxSchedulePast)), "effective_date", "must not be in the past")
	}
	u.WindowStart, u.WindowEnd, u.ApplyAt = &start, &end, &apply
}

// CheckUpdateCapacity requires the new bandwidth of u at every site of the
// service, counting what it holds there now as free.
// Errors: INSUFFICIENT_BANDWIDTH (details: location_id, requested, available).
func (s *Store) CheckUpdateCapacity(ctx context.Context, scope models.Scope, svc *Service, u *ServiceUpdate) error {
	for _, c := range u.Capacity {
		left, err := s.catalog.AvailableMbps(ctx, scope, c.LocationID, c.Pool)
		if err != nil {
			return err
		}
		held, err := catalog.HeldByService(s.In(ctx, scope), svc.ID, "", c.LocationID, c.Pool)
		if err != nil {
			return models.DBErr(err)
		}
		if free := left + held; c.Amount > free {
			return models.Errorf(models.CodeInsufficientBandwidth, "%s at location %s has %s for this service; %s was requested", c.Pool, c.LocationID,
				catalog.FormatBandwidth(free), catalog.FormatBandwidth(c.Amount)).
				WithDetail("location_id", c.LocationID).WithDetail("service_type", c.Pool).
				WithDetail("requested", catalog.FormatBandwidth(c.Amount)).WithDetail("available", catalog.FormatBandwidth(free))
		}
	}
	return nil
}

func svcJSONEqual(a, b any) bool {
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}

// ScheduleMaintenance records a change's maintenance window on its service
// and, in the same transaction, writes service.maintenance_scheduled and
// notifies the technical contact. Scheduling it again changes nothing.
// Errors: NOT_FOUND.
func (s *Store) ScheduleMaintenance(ctx context.Context, scope models.Scope, serviceID, opID string, u *ServiceUpdate) error {
	if !u.Windowed() {
		return nil
	}
	return ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.MaintenanceStartsAt != nil && svc.MaintenanceStartsAt.Equal(*u.WindowStart) && svc.PendingOperationID == opID {
			return nil
		}
		svc.MaintenanceStartsAt, svc.MaintenanceEndsAt = u.WindowStart, u.WindowEnd
		if err := tx.Model(&svc).Select("maintenance_starts_at", "maintenance_ends_at").Updates(&svc).Error; err != nil {
			return models.DBErr(err)
		}
		window := map[string]any{"start": models.Timestamp(*u.WindowStart), "end": models.Timestamp(*u.WindowEnd)}
		data := map[string]any{"service": ServiceSummary(&svc), "maintenance_window": window, "changes": u.Changes, "request_id": opID}
		if u.ApplyAt != nil {
			data["effective_date"] = models.Timestamp(*u.ApplyAt)
		}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(svcEventMaintenanceScheduled, svc.ID, data)); err != nil {
			return err
		}
		return notifyContacts(tx, &svc, opID, "maintenance_scheduled", fmt.Sprintf("Maintenance of %s on %s", svc.Name, models.Timestamp(*u.WindowStart)),
			map[string]any{"service_id": svc.ID, "maintenance_window": window, "request_id": opID}, ContactTechnical)
	}))
}

// EnterMaintenance moves the service into maintenance for operation opID
// (service.status_changed). Entering again changes nothing.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) EnterMaintenance(ctx context.Context, scope models.Scope, serviceID, opID string) error {
	return ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		_, err := s.MoveServiceTx(ctx, scope, tx, serviceID, ServiceMaintenance, "scheduled_maintenance", opID)
		return err
	}))
}

// ApplyServiceUpdate makes the change u to the service in one transaction:
// its fields, price and configuration; for a bandwidth change the capacity
// it held before (under other operations) is released; service.modified is
// written (data: service, changes, request_id). When complete, the
// operation completes in the same transaction and the service is free for
// other changes. Applying it again changes nothing. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION.
func (s *Store) ApplyServiceUpdate(ctx context.Context, scope models.Scope, serviceID, opID string, u *ServiceUpdate, complete bool) (*Service, error) {
	var out *Service
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.LastChangeID != opID {
			if !svc.Live() {
				return models.Errorf(models.CodeInvalidStateTransition, "service %s is %s and can no longer be changed", svc.ID, svc.Status).WithDetail("status", string(svc.Status))
			}
			cols := []string{"last_change_id", "monthly_charge"}
			svc.LastChangeID, svc.MonthlyCharge = opID, u.MonthlyCharge
			set := func(col string, apply func()) { apply(); cols = append(cols, col) }
			if u.Name != nil {
				set("name", func() { svc.Name = *u.Name })
			}
			if u.SLA != nil {
				set("sla", func() { svc.SLA = *u.SLA })
			}
			if u.TechnicalContact != nil {
				set("technical_contact", func() { svc.TechnicalContact = *u.TechnicalContact })
			}
			if u.BillingContact != nil {
				set("billing_contact", func() { svc.BillingContact = *u.BillingContact })
			}
			if u.Features != nil {
				set("features", func() { svc.Features = *u.Features })
			}
			if u.Configuration != nil {
				set("configuration", func() { svc.Configuration = u.Configuration })
			}
			if u.Monitoring != nil {
				set("monitoring", func() { svc.Monitoring = *u.Monitoring })
			}
			if u.Redundancy != nil {
				set("redundancy", func() { svc.Redundancy = *u.Redundancy })
			}
			if u.Bandwidth != "" {
				set("bandwidth", func() { svc.Bandwidth, svc.BandwidthMbps = u.Bandwidth, u.BandwidthMbps })
				cols = append(cols, "bandwidth_mbps")
			}
			if u.Quantity > 0 {
				set("quantity", func() { svc.Quantity = u.Quantity })
				if prof, ok := LookupKind(svc.Kind); ok && prof.QuantityField != "" && svc.Spec != nil {
					if _, has := svc.Spec[prof.QuantityField]; has {
						svc.Spec[prof.QuantityField] = u.Quantity
						cols = append(cols, "spec")
					}
				}
			}
			if err := tx.Model(&svc).Select(cols).Updates(&svc).Error; err != nil {
				return models.DBErr(err)
			}
			if len(u.Capacity) > 0 {
				if _, err := s.catalog.ReleaseWhereTx(tx, []catalog.AllocationKind{catalog.AllocCapacity}, "service_id = ? AND operation_id <> ?", svc.ID, opID); err != nil {
					return models.DBErr(err)
				}
			}
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(svcEventModified, svc.ID, map[string]any{
				"service": ServiceSummary(&svc), "changes": u.Changes, "type": string(u.Type), "request_id": opID,
			})); err != nil {
				return err
			}
		}
		if complete {
			if err := s.operations.CompleteOperationTx(ctx, tx, opID, StepApply, map[string]any{"service_id": svc.ID, "changes": u.Changes, "service_url": "/v1/services/" + svc.ID}); err != nil {
				return err
			}
			if err := tx.Model(&Service{}).Where("id = ? AND pending_operation_id = ?", svc.ID, opID).Update("pending_operation_id", "").Error; err != nil {
				return models.DBErr(err)
			}
		}
		out = &svc
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// LeaveMaintenance ends operation opID's maintenance of the service: back to
// operational (service.status_changed), window cleared; when complete, the
// operation completes in the same transaction and the service is free for
// other changes. Leaving again changes nothing. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION.
func (s *Store) LeaveMaintenance(ctx context.Context, scope models.Scope, serviceID, opID string, complete bool, result map[string]any) error {
	return ErrOrNil(s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.Status == ServiceMaintenance && svc.PendingOperationID == opID {
			if _, err := s.MoveServiceTx(ctx, scope, tx, serviceID, ServiceOperational, "maintenance_ended", opID); err != nil {
				return err
			}
		}
		if svc.PendingOperationID == opID {
			if err := tx.Model(&Service{}).Where("id = ?", serviceID).Updates(map[string]any{"maintenance_starts_at": nil, "maintenance_ends_at": nil}).Error; err != nil {
				return models.DBErr(err)
			}
		}
		if complete {
			if err := s.operations.CompleteOperationTx(ctx, tx, opID, StepEndMaintenance, result); err != nil {
				return err
			}
			if err := tx.Model(&Service{}).Where("id = ? AND pending_operation_id = ?", serviceID, opID).Update("pending_operation_id", "").Error; err != nil {
				return models.DBErr(err)
			}
		}
		return nil
	}))
}

// EndServiceOperation ends operation opID of the service that did not
// complete (failed or cancelled): the operation is finished, a maintenance
// it started ends, and the service is free for other changes. Calling it
// again changes nothing. Errors: INVALID_STATE_TRANSITION.
func (s *Store) EndServiceOperation(ctx context.Context, scope models.Scope, serviceID, opID string, fin operations.FinishInput) error {
	// The service first, so that whoever sees the operation ended may change the service.
	if err := s.LeaveMaintenance(ctx, scope, serviceID, opID, false, nil); err != nil && models.ErrorCode(err) != models.CodeNotFound {
		return err
	}
	if err := s.In(ctx, scope).Model(&Service{}).Where("id = ? AND pending_operation_id = ?", serviceID, opID).Update("pending_operation_id", "").Error; err != nil {
		return models.DBErr(err)
	}
	_, err := s.operations.FinishOperation(ctx, scope, opID, fin)
	return err
}

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

// ---------------------------------------------------------------------------
// Configuration settings (PUT /services/{id}/configuration).

// settingRule says what values a configuration setting takes.
type settingRule struct {
	Type   string // enum, bool, int, email, emails, ips, cidrs, hostnames, countries, strings, timezone, response_time
	Values []string
	Min    int
	Max    int // int: the range; lists: the most items
	Doc    string
}

// SettingDoc describes one configuration setting of a kind.
type SettingDoc struct {
	Name        string
	Type        string
	Values      []string
	Min, Max    int
	Description string
}

// serviceSettings returns the settings a kind of service accepts.
func serviceSettings(kind string) map[string]settingRule {
	common := map[string]settingRule{
		"alert_emails":              {Type: "emails", Max: 10, Doc: "addresses that receive alerts about the service"},
		"maintenance_notifications": {Type: "bool", Doc: "notify the contacts of scheduled maintenance"},
	}
	connectivity := map[string]settingRule{
		"qos_profile":     {Type: "enum", Values: []string{"standard", "voice_priority", "bulk_data"}, Doc: "traffic class priorities"},
		"monitoring":      {Type: "enum", Values: MonitoringValues, Doc: "monitoring level (also the service's monitoring)"},
		"routed_prefixes": {Type: "cidrs", Max: 20, Doc: "customer networks routed to the service, CIDR notation, not overlapping"},
	}
	own := map[string]map[string]settingRule{
		catalog.KindInternet: {
			"dns_servers": {Type: "ips", Max: 4, Doc: "resolvers handed out to the customer's equipment"},
			"redundancy":  {Type: "enum", Values: RedundancyValues, Doc: "access redundancy (also the service's redundancy)"},
		},
		catalog.KindNetwork: {
			"encryption": {Type: "bool", Doc: "encrypt traffic between sites"},
			"redundancy": {Type: "enum", Values: RedundancyValues, Doc: "access redundancy at every site"},
		},
		KindPhoneSystem: {
			"voicemail_email":          {Type: "email", Doc: "where voicemail is sent when voicemail_to_email is on"},
			"recording_retention_days": {Type: "int", Min: 1, Max: 3650},
			"timezone":                 {Type: "timezone", Doc: "IANA time zone of the business hours"},
		},
		KindContactCenter: {
			"max_queue_wait_seconds":   {Type: "int", Min: 10, Max: 3600},
			"recording_retention_days": {Type: "int", Min: 1, Max: 3650},
			"timezone":                 {Type: "timezone"},
		},
		KindCloudInfrastructure: {
			"backup_retention_days": {Type: "int", Min: 1, Max: 365},
			"min_instances":         {Type: "int", Min: 1, Max: 1000, Doc: "auto-scaling lower bound (at most max_instances)"},
			"max_instances":         {Type: "int", Min: 1, Max: 1000, Doc: "auto-scaling upper bound"},
		},
		KindCloudPlatform: {
			"min_instances":      {Type: "int", Min: 1, Max: 100, Doc: "instances per environment, lower bound (at most max_instances)"},
			"max_instances":      {Type: "int", Min: 1, Max: 100},
			"log_retention_days": {Type: "int", Min: 1, Max: 365},
			"custom_domains":     {Type: "hostnames", Max: 20},
		},
		KindManagedSecurity: {
			"escalation_emails":      {Type: "emails", Max: 10},
			"response_time_critical": {Type: "response_time", Doc: "<n>_minutes, <n>_hour or <n>_hours; critical <= high <= medium"},
			"response_time_high":     {Type: "response_time"},
			"response_time_medium":   {Type: "response_time"},
		},
		KindSecurityInfrastructure: {
			"protected_networks":  {Type: "cidrs", Max: 50, Doc: "networks behind the devices, CIDR notation, not overlapping"},
			"log_retention_days":  {Type: "int", Min: 1, Max: 365},
			"geo_block_countries": {Type: "countries", Max: 50, Doc: "ISO 3166 alpha-2 codes of the countries blocked"},
		},
		KindAIPlatform: {
			"data_sources":            {Type: "strings", Max: 20, Doc: "names or addresses of the data sources"},
			"max_gpu_hours_per_month": {Type: "int", Min: 1, Max: 100000},
		},
	}
	out := map[string]settingRule{}
	for k, r := range common {
		out[k] = r
	}
	if kind == catalog.KindInternet || kind == catalog.KindNetwork {
		for k, r := range connectivity {
			out[k] = r
		}
	}
	for k, r := range own[kind] {
		out[k] = r
	}
	return out
}

// ServiceSettings documents the configuration settings of a kind, by name.
func ServiceSettings(kind string) []SettingDoc {
	rules := serviceSettings(kind)
	out := make([]SettingDoc, 0, len(rules))
	for name, r := range rules {
		out = append(out, SettingDoc{Name: name, Type: r.Type, Values: r.Values, Min: r.Min, Max: r.Max, Description: r.Doc})
	}
	slices.SortFunc(out, func(a, b SettingDoc) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var svcCountryPattern = regexp.MustCompile(`^[A-Z]{2}$`)

// checkSetting validates one setting's value and returns it normalised.
func checkSetting(v *models.Validator, field string, r settingRule, val any) any {
	list := func() ([]string, bool) {
		items, ok := val.([]any)
		if !ok {
			if ss, ok2 := val.([]string); ok2 {
				for _, x := range ss {
					items = append(items, x)
				}
				ok = true
			}
		}
		if !ok {
			v.Add(field, "must be a list of strings")
			return nil, false
		}
		if r.Max > 0 && len(items) > r.Max {
			v.Add(field, fmt.Sprintf("must list at most %d values", r.Max))
			return nil, false
		}
		out := make([]string, 0, len(items))
		for i, it := range items {
			str, ok := it.(string)
			if !ok {
				v.Add(fmt.Sprintf("%s[%d]", field, i), "must be a string")
				return nil, false
			}
			out = append(out, strings.TrimSpace(str))
		}
		return out, true
	}
	switch r.Type {
	case "enum":
		str, ok := val.(string)
		if !ok || !slices.Contains(r.Values, str) {
			v.Add(field, "must be one of "+strings.Join(r.Values, ", "))
			return nil
		}
		return str
	case "bool":
		b, ok := val.(bool)
		if !ok {
			v.Add(field, "must be true or false")
			return nil
		}
		return b
	case "int":
		f, ok := val.(float64)
		if n, isInt := val.(int); isInt {
			f, ok = float64(n), true
		}
		if !ok || f != math.Trunc(f) || f < float64(r.Min) || f > float64(r.Max) {
			v.Add(field, fmt.Sprintf("must be a whole number from %d to %d", r.Min, r.Max))
			return nil
		}
		return int(f)
	case "email":
		str, ok := val.(string)
		if !ok || !models.ValidEmail(str) {
			v.Add(field, "must be an e-mail address")
			return nil
		}
		return str
	case "timezone":
		str, ok := val.(string)
		if ok && str != "" && str != "Local" {
			_, err := time.LoadLocation(str)
			ok = err == nil
		} else {
			ok = false
		}
		if !ok {
			v.Add(field, "must be an IANA time zone, e.g. America/Chicago")
			return nil
		}
		return str
	case "response_time":
		str, ok := val.(string)
		if !ok {
			v.Add(field, "must be <n>_minutes, <n>_hour or <n>_hours")
			return nil
		}
		if _, err := ParseResponseTime(field, str); err != nil {
			v.Add(field, "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes")
			return nil
		}
		return str
	}
	items, ok := list()
	if !ok {
		return nil
	}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch r.Type {
		case "emails":
			v.Check(models.ValidEmail(it), f, "must be an e-mail address")
		case "ips":
			_, err := netip.ParseAddr(it)
			v.Check(err == nil, f, "must be an IPv4 or IPv6 address")
		case "hostnames":
			v.Check(len(it) <= 253 && svcHostnamePattern.MatchString(it), f, "must be a host name, e.g. app.example.com")
		case "countries":
			v.Check(svcCountryPattern.MatchString(it), f, "must be an ISO 3166 alpha-2 country code in upper case, e.g. DE")
		case "strings":
			v.Check(it != "" && len(it) <= 200, f, "must be 1 to 200 characters")
		}
	}
	if r.Type == "cidrs" {
		return CheckCIDRs(v, field, items, r.Max)
	}
	return items
}

// mergeConfiguration validates settings against the service's kind and
// merges them into its configuration (a null value removes a setting). It
// returns the new configuration, and the monitoring and redundancy settings
// when given (they are also columns of the service).
func (s *Store) mergeConfiguration(v *models.Validator, svc *Service, settings map[string]any) (cfg map[string]any, monitoring, redundancy string) {
	rules := serviceSettings(svc.Kind)
	cfg = map[string]any{}
	for k, val := range svc.Configuration {
		cfg[k] = val
	}
	if len(settings) == 0 {
		v.Add("configuration", "must set at least one setting")
	}
	names := make([]string, 0, len(rules))
	for k := range rules {
		names = append(names, k)
	}
	slices.Sort(names)
	for k, val := range settings {
		field := "configuration." + k
		r, ok := rules[k]
		if !ok {
			v.Add(field, fmt.Sprintf("is not a setting of a %s; settings: %s", strings.ReplaceAll(svc.Kind, "_", " "), strings.Join(names, ", ")))
			continue
		}
		if val == nil {
			delete(cfg, k)
			continue
		}
		if norm := checkSetting(v, field, r, val); norm != nil {
			cfg[k] = norm
			switch k {
			case "monitoring":
				monitoring, _ = norm.(string)
			case "redundancy":
				redundancy, _ = norm.(string)
			}
		}
	}
	asInt := func(k string, def int) int {
		switch n := cfg[k].(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return def
	}
	if _, has := rules["min_instances"]; has {
		lo, hi := asInt("min_instances", 1), asInt("max_instances", 1000)
		v.Check(lo <= hi, "configuration.min_instances", "must not exceed max_instances")
	}
	if _, has := rules["response_time_critical"]; has {
		var prev time.Duration
		for _, k := range []string{"response_time_critical", "response_time_high", "response_time_medium"} {
			str, _ := cfg[k].(string)
			if str == "" {
				continue
			}
			d, err := ParseResponseTime(k, str)
			if err != nil {
				continue
			}
			v.Check(d >= prev, "configuration."+k, "must not be shorter than the target of a more severe level")
			prev = d
		}
	}
	return cfg, monitoring, redundancy
}

// ProvisionedData is the data of a service.provisioned event.
func ProvisionedData(svc *Service, opID string) map[string]any {
	return map[string]any{
		"service": map[string]any{
			"id": svc.ID, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
			"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID,
		},
		"request_id": opID,
	}
}
