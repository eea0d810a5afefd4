package services

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
)

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
		feats := CheckList(&v, "features", *in.Features, prof.Features, 0, 20)
		slices.Sort(feats)
		current := slices.Clone(svc.Features)
		slices.Sort(current)
		if !slices.Equal(feats, current) {
			u.Features = &feats
			change("features", svc.Features, feats)
		}
	}
	if in.Configuration != nil {
		cfg, monitoring, redundancy, err := s.mergeConfiguration(&v, svc, in.Configuration)
		if err != nil {
			return nil, err
		}
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
	if in.Name == nil && (u.Bandwidth != "" || u.Quantity > 0) {
		// A service still under the name it was given for its size
		// ("Dedicated Internet 100mbps") is renamed for its new size; a name
		// of the customer's own stays.
		was := ProvisioningOrder{Kind: svc.Kind, ServiceType: svc.ServiceType, Bandwidth: svc.Bandwidth, Quantity: svc.Quantity}
		if old := defaultServiceName(offer, &was); svc.Name == old {
			now := was
			now.Bandwidth = OrDefault(u.Bandwidth, svc.Bandwidth)
			if u.Quantity > 0 {
				now.Quantity = u.Quantity
			}
			if name := defaultServiceName(offer, &now); name != old {
				u.Name = &name
				change("name", old, name)
			}
		}
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

// CheckChangeCancellable returns nil unless op is a change (a modification
// or a scaling) whose change has already been applied to its service (the
// apply step completed, or the service already carries the change) or is
// being applied (the apply step runs, and is not cancelled), or a
// decommission that has started taking the service out (deactivate). Once
// applied, a change is no longer cancelled (a scaling finishes its
// maintenance window), nor is a decommission past deactivate. Errors:
// INVALID_STATE_TRANSITION (details: status, step: the step the operation
// has reached, applied: true, or false while the change is being applied).
func (s *Store) CheckChangeCancellable(ctx context.Context, op *operations.Operation) error {
	if op.Type == OpTypeDecommission && !op.Status.Terminal() {
		return decommissionCancellable(op)
	}
	if (op.Type != OpTypeModification && op.Type != OpTypeScaling) || op.Status.Terminal() {
		return nil
	}
	applied, applying, reached := false, false, ""
	for _, st := range op.Steps {
		if st.Status == operations.StepPending || st.Status == operations.StepSkipped {
			continue
		}
		reached = st.Name
		if st.Name == StepApply && st.Status == operations.StepCompleted {
			applied = true
		}
		if st.Name == StepApply && st.Status == operations.StepInProgress {
			applying = true
		}
	}
	if !applied && op.ResourceID != "" {
		// The apply step records its end after the change: the service says
		// whether the change is already made.
		svc, err := s.ServiceIn(ctx, models.TenantScope(op.OrganizationID, op.Environment), op.ResourceID)
		switch {
		case models.ErrorCode(err) == models.CodeNotFound:
		case err != nil:
			return err
		case svc.LastChangeID == op.ID:
			applied = true
		}
	}
	if applying && !applied {
		return models.Errorf(models.CodeInvalidStateTransition, "the %s is being applied (step %s) and can no longer be cancelled", op.Type, StepApply).
			WithDetail("status", string(op.Status)).WithDetail("step", StepApply).WithDetail("applied", false)
	}
	if !applied {
		return nil
	}
	if reached == "" {
		reached = StepApply
	}
	return models.Errorf(models.CodeInvalidStateTransition, "the %s has been applied (step %s) and can no longer be cancelled", op.Type, reached).
		WithDetail("status", string(op.Status)).WithDetail("step", reached).WithDetail("applied", true)
}

// decommissionCancellable refuses the cancellation of a decommission whose
// deactivate step has started: from there the service is being taken out
// and the remaining steps run to the end.
func decommissionCancellable(op *operations.Operation) error {
	past, reached := false, ""
	for _, st := range op.Steps {
		if st.Status == operations.StepPending || st.Status == operations.StepSkipped {
			continue
		}
		reached = st.Name
		if st.Name == StepDeactivate {
			past = true
		}
	}
	if !past {
		return nil
	}
	return models.Errorf(models.CodeInvalidStateTransition, "the decommission has taken the service out (step %s) and can no longer be cancelled", reached).
		WithDetail("status", string(op.Status)).WithDetail("step", reached).WithDetail("applied", true)
}
