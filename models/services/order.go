package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/operations"
)

// Order sources: a category endpoint's body (spec 2.1), a template or a
// quote (spec 2.2).
const (
	OrderFromInternet = "internet"
	OrderFromTemplate = "template"
	OrderFromCategory = "category"
	OrderFromQuote    = "quote"
)

// Allowed values of the order fields (docs/provisioning.md).
var (
	slaValues        = []string{"standard", "premium", "enterprise"}
	orderCycles      = []string{"monthly"}
	RedundancyValues = []string{"none", "dual_path", "diverse_path"}
	MonitoringValues = []string{"basic", "standard", "advanced"}
	flexPattern      = regexp.MustCompile(`^([0-9]{1,2})_days?$`)
)

// Scheduling bounds of deployment_schedule.preferred_date.
const (
	maxScheduleAhead = 365 * 24 * time.Hour
	maxSchedulePast  = 24 * time.Hour
	maxFlexibility   = 90
)

// OrderSite is one site of a multi-site order (a network's hub and spokes).
type OrderSite struct {
	LocationID string `json:"location_id"`
	Role       string `json:"role,omitempty"`
	Address    string `json:"address,omitempty"`
}

// NumberRequest asks for phone numbers of one kind (local in an area code, or toll-free).
type NumberRequest struct {
	Type     string `json:"type"`
	AreaCode string `json:"area_code,omitempty"`
	Quantity int    `json:"quantity"`
}

// ComputeRequest asks for units of a compute pool (vcpu or gpu) in a region.
type ComputeRequest struct {
	Region string `json:"region"`
	Pool   string `json:"pool"`
	Units  int    `json:"units"`
}

// DeployItem is something the southbound builds for a service (virtual
// machines, an application environment, a model endpoint...).
type DeployItem struct {
	Type   string         `json:"type"`
	Name   string         `json:"name"`
	Region string         `json:"region,omitempty"`
	Count  int            `json:"count"`
	Spec   map[string]any `json:"spec,omitempty"`
}

// ProvisioningOrder is a validated order for one service: what the
// provisioning workflow carries and its activities re-validate. It is plain
// data (JSON) so that it travels in workflow inputs. Kind says which of the
// nine kinds it is (KindProfile); Spec is the category body as validated;
// Sites, Numbers, Compute and PublicIP say what the network must allocate
// (see Plan).
type ProvisioningOrder struct {
	Source           string                `json:"source"`
	AccountID        string                `json:"account_id"`
	Name             string                `json:"name"`
	ServiceType      string                `json:"service_type"`
	Kind             string                `json:"kind"`
	CatalogServiceID string                `json:"catalog_service_id"`
	TemplateID       string                `json:"template_id,omitempty"`
	Bandwidth        string                `json:"bandwidth"`
	BandwidthMbps    int                   `json:"bandwidth_mbps"`
	SLA              string                `json:"sla"`
	BillingCycle     string                `json:"billing_cycle"`
	LocationID       string                `json:"location_id"`
	Location         catalog.LocationInput `json:"location"`
	Redundancy       string                `json:"redundancy"`
	Monitoring       string                `json:"monitoring"`
	PreferredDate    *time.Time            `json:"preferred_date,omitempty"`
	Flexibility      string                `json:"flexibility,omitempty"`
	TechnicalContact string                `json:"technical_contact,omitempty"`
	BillingContact   string                `json:"billing_contact,omitempty"`

	Spec       map[string]any   `json:"spec,omitempty"`
	Quantity   int              `json:"quantity,omitempty"`
	Features   []string         `json:"features,omitempty"`
	Sites      []OrderSite      `json:"sites,omitempty"`
	Numbers    []NumberRequest  `json:"numbers,omitempty"`
	Compute    []ComputeRequest `json:"compute,omitempty"`
	PublicIP   bool             `json:"public_ip,omitempty"`
	Deployment []DeployItem     `json:"deployment,omitempty"`

	MonthlyCharge models.Money `json:"monthly_charge"`
	OneTimeCharge models.Money `json:"one_time_charge"`
	Currency      string       `json:"currency,omitempty"`
	TermMonths    int          `json:"term_months,omitempty"`
	QuoteID       string       `json:"quote_id,omitempty"`
	QuoteItem     int          `json:"quote_item,omitempty"`
}

// Profile returns the kind profile of the order (internet for orders that
// predate kinds).
func (o *ProvisioningOrder) Profile() KindProfile {
	if p, ok := LookupKind(o.Kind); ok {
		return p
	}
	if st, ok := catalog.LookupServiceType(o.ServiceType); ok {
		if p, ok := LookupKind(st.Kind); ok {
			return p
		}
	}
	p, _ := LookupKind(catalog.KindInternet)
	return p
}

// SiteIDs returns the locations of the order: its sites, or its one location.
func (o *ProvisioningOrder) SiteIDs() []string {
	if len(o.Sites) > 0 {
		out := make([]string, len(o.Sites))
		for i, st := range o.Sites {
			out[i] = st.LocationID
		}
		return out
	}
	if o.LocationID != "" {
		return []string{o.LocationID}
	}
	return nil
}

// ResourceRequest is one allocation the network makes for an order: what
// (kind), which slot of the operation it takes (an operation holds one
// allocation per kind and slot), where (a location, region or number
// block chooser) and how much.
type ResourceRequest struct {
	Kind       catalog.AllocationKind `json:"kind"`
	Step       string                 `json:"step"`
	Slot       int                    `json:"slot"`
	LocationID string                 `json:"location_id,omitempty"`
	Pool       string                 `json:"pool,omitempty"`
	Amount     int                    `json:"amount,omitempty"`
	NumberType string                 `json:"number_type,omitempty"`
	AreaCode   string                 `json:"area_code,omitempty"`
}

// Plan returns the allocations the order needs, in the order they are made:
// bandwidth at every site or compute units in every region, and phone
// numbers (step reserve_capacity); a public IP block and VLAN ids
// (step configure). It is derived from the order's fields, so a retried
// step asks for exactly the same things.
func (o *ProvisioningOrder) Plan() []ResourceRequest {
	prof := o.Profile()
	var out []ResourceRequest
	sites := o.SiteIDs()
	if prof.Capacity && o.BandwidthMbps > 0 {
		for i, site := range sites {
			out = append(out, ResourceRequest{Kind: catalog.AllocCapacity, Step: operations.StepReserveCapacity, Slot: i, LocationID: site, Pool: o.ServiceType, Amount: o.BandwidthMbps})
		}
	}
	for i, c := range o.Compute {
		out = append(out, ResourceRequest{Kind: catalog.AllocCapacity, Step: operations.StepReserveCapacity, Slot: i, LocationID: c.Region, Pool: c.Pool, Amount: c.Units})
	}
	slot := 0
	for _, n := range o.Numbers {
		for range n.Quantity {
			out = append(out, ResourceRequest{Kind: catalog.AllocPhoneNumber, Step: operations.StepReserveCapacity, Slot: slot, NumberType: n.Type, AreaCode: n.AreaCode, Amount: 1})
			slot++
		}
	}
	if (prof.PublicIP || o.PublicIP) && (len(sites) > 0 || o.PublicIP) {
		loc := ""
		if len(sites) > 0 {
			loc = sites[0]
		}
		out = append(out, ResourceRequest{Kind: catalog.AllocIPBlock, Step: operations.StepConfigure, LocationID: loc})
	}
	if prof.Located {
		vlans := sites
		if prof.Kind == KindSecurityInfrastructure && o.Quantity > 1 && len(sites) == 1 {
			vlans = slices.Repeat(sites, o.Quantity)
		}
		for i, site := range vlans {
			out = append(out, ResourceRequest{Kind: catalog.AllocVLAN, Step: operations.StepConfigure, Slot: i, LocationID: site})
		}
	}
	return out
}

// InternetInput is the internet service create body (spec 2.1).
type InternetInput struct {
	AccountID    string
	ServiceType  string
	Bandwidth    string
	Location     catalog.LocationInput
	SLA          string
	BillingCycle string
}

// TemplateInput is the provisioning request (spec 2.2) plus the fields a
// template order needs that the specification leaves out: the billing
// account (default: the tenant's oldest) and the location (a postal location
// or a location id from the availability answer).
type TemplateInput struct {
	ServiceTemplate  string
	Bandwidth        string
	Redundancy       string
	Monitoring       string
	PreferredDate    *time.Time
	Flexibility      string
	TechnicalContact string
	BillingContact   string
	AccountID        string
	Location         *catalog.LocationInput
	LocationID       string
}

// PrepareInternetOrder validates an internet service body (spec 2.1) for
// principal p: every field, the billing account (an acct_ of the caller's
// tenant; staff may name any tenant's), availability at the location, and
// that the account has no other internet service there.
// It returns the order and the scope (tenant) it belongs to.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH, SERVICE_CONFLICT.
func (s *Store) PrepareInternetOrder(ctx context.Context, p *models.Principal, in InternetInput) (*ProvisioningOrder, models.Scope, error) {
	return s.PrepareServiceOrder(ctx, p, &InternetBody{
		AccountID: in.AccountID, ServiceType: in.ServiceType, Bandwidth: in.Bandwidth, Location: in.Location, SLA: in.SLA, BillingCycle: in.BillingCycle,
	})
}

// PrepareTemplateOrder validates a provisioning request (spec 2.2) for
// principal p: the template (from the catalog), customizations, schedule,
// contacts, account and location, and availability at the location.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH, SERVICE_CONFLICT.
func (s *Store) PrepareTemplateOrder(ctx context.Context, p *models.Principal, in TemplateInput) (*ProvisioningOrder, models.Scope, error) {
	var v models.Validator
	in.ServiceTemplate = strings.TrimSpace(in.ServiceTemplate)
	if in.ServiceTemplate == "" {
		v.Add("service_template", "is required")
		return nil, models.Scope{}, v.Err()
	}
	tpl, err := s.catalog.Template(ctx, p.Environment, in.ServiceTemplate)
	if err != nil {
		return nil, models.Scope{}, err
	}
	st, _ := catalog.LookupServiceType(tpl.ServiceType)
	o := &ProvisioningOrder{
		Source: OrderFromTemplate, TemplateID: tpl.ID, AccountID: strings.TrimSpace(in.AccountID), ServiceType: tpl.ServiceType,
		Kind: st.Kind, Bandwidth: OrDefault(strings.TrimSpace(in.Bandwidth), tpl.DefaultBandwidth), SLA: tpl.DefaultSLA,
		BillingCycle: "monthly", Redundancy: OrDefault(strings.TrimSpace(in.Redundancy), tpl.Redundancy),
		Monitoring: OrDefault(strings.TrimSpace(in.Monitoring), tpl.Monitoring), PreferredDate: in.PreferredDate,
		Flexibility: strings.TrimSpace(in.Flexibility), TechnicalContact: strings.TrimSpace(in.TechnicalContact),
		BillingContact: strings.TrimSpace(in.BillingContact), LocationID: strings.TrimSpace(in.LocationID), Quantity: 1,
	}
	switch {
	case in.Location != nil && o.LocationID != "":
		v.Add("location", "give either location or location_id, not both")
	case in.Location != nil:
		o.Location = in.Location.Normalize()
		o.Location.Validate(&v, "location")
	case o.LocationID == "":
		v.Add("location", "is required: a postal location {address, city, state, zip} or a location_id from the availability check")
	}
	if o.AccountID == "" && p.IsStaff() {
		v.Add("account_id", "is required when provider staff provision for a customer")
	}
	if err := s.checkOrderFields(ctx, &v, o); err != nil {
		return nil, models.Scope{}, err
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	if err := s.defaultAccount(ctx, p, o); err != nil {
		return nil, models.Scope{}, err
	}
	return s.completeOrder(ctx, p, o)
}

// defaultAccount gives an order without account_id the organization's
// oldest billing account. Errors: VALIDATION_ERROR (none exists).
func (s *Store) defaultAccount(ctx context.Context, p *models.Principal, o *ProvisioningOrder) error {
	if o.AccountID != "" {
		return nil
	}
	var acct models.BillingAccount
	err := s.In(ctx, p.OwnScope()).Order("created_at, id").Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Invalid(models.FieldIssue{Field: "account_id", Issue: "is required: the organization has no billing account yet"})
	}
	if err != nil {
		return models.DBErr(err)
	}
	o.AccountID = acct.ID
	return nil
}

func OrDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// checkOrderFields records the issues of the fields every order has:
// bandwidth (for the kinds ordered with one) and SLA against the catalog
// offer, billing cycle, redundancy, monitoring, schedule and contacts. It
// fills Kind, CatalogServiceID (for location service types), BandwidthMbps,
// a default SLA and a default name. It fails only on database errors.
func (s *Store) checkOrderFields(ctx context.Context, v *models.Validator, o *ProvisioningOrder) error {
	st, isType := catalog.LookupServiceType(o.ServiceType)
	if isType {
		o.Kind, o.CatalogServiceID = st.Kind, st.CatalogServiceID
	}
	prof := o.Profile()
	bwField := OrDefault(prof.Bandwidth, "bandwidth")
	mbps := 0
	if prof.Bandwidth != "" {
		n, issue := catalog.CheckBandwidth(o.Bandwidth)
		if issue != "" {
			v.Add(bwField, issue)
		}
		mbps = n
		o.BandwidthMbps = n
	}
	if o.SLA != "" || prof.Kind == catalog.KindInternet || o.Source == OrderFromTemplate {
		v.Check(slices.Contains(slaValues, o.SLA), "sla", "must be one of standard, premium, enterprise")
	}
	v.Check(slices.Contains(orderCycles, o.BillingCycle), "billing_cycle", "must be monthly")
	v.Check(slices.Contains(RedundancyValues, o.Redundancy), "customizations.redundancy", "must be one of "+strings.Join(RedundancyValues, ", "))
	v.Check(slices.Contains(MonitoringValues, o.Monitoring), "customizations.monitoring", "must be one of "+strings.Join(MonitoringValues, ", "))
	if o.AccountID != "" {
		v.Check(models.HasPrefix(o.AccountID, models.PrefixAccount), "account_id", "must be a billing account id (acct_...)")
	}
	if o.LocationID != "" {
		v.Check(models.HasPrefix(o.LocationID, catalog.PrefixLocation), "location_id", "must be a location id (loc_...)")
	}
	s.checkSchedule(v, o)
	if o.TechnicalContact != "" {
		v.Check(models.ValidEmail(o.TechnicalContact), "contacts.technical", "must be an e-mail address")
	}
	if o.BillingContact != "" {
		v.Check(models.ValidEmail(o.BillingContact), "contacts.billing", "must be an e-mail address")
	}
	if o.CatalogServiceID == "" || (prof.Bandwidth != "" && mbps == 0) || (isType && st.Kind != prof.Kind) {
		return nil
	}
	offer, err := s.catalog.CatalogServiceByID(ctx, o.CatalogServiceID)
	if err != nil {
		return err
	}
	if o.SLA == "" && len(offer.SLAOptions) > 0 {
		o.SLA = offer.SLAOptions[0]
	}
	if o.Name == "" {
		o.Name = defaultServiceName(offer, o)
	}
	if prof.Bandwidth != "" && len(offer.BandwidthOptions) > 0 {
		v.Check(slices.Contains(offer.BandwidthOptions, o.Bandwidth), bwField, fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.BandwidthOptions, ", ")))
	}
	if slices.Contains(slaValues, o.SLA) && len(offer.SLAOptions) > 0 {
		v.Check(slices.Contains(offer.SLAOptions, o.SLA), "sla", fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.SLAOptions, ", ")))
	}
	return nil
}

// checkSchedule records the issues of an order's deployment schedule.
func (s *Store) checkSchedule(v *models.Validator, o *ProvisioningOrder) {
	if o.PreferredDate != nil {
		now := s.Now()
		t := o.PreferredDate.UTC()
		o.PreferredDate = &t
		v.Check(!t.Before(now.Add(-maxSchedulePast)), "deployment_schedule.preferred_date", "must not be in the past")
		v.Check(!t.After(now.Add(maxScheduleAhead)), "deployment_schedule.preferred_date", "must be within 365 days")
	}
	if o.Flexibility != "" {
		m := flexPattern.FindStringSubmatch(o.Flexibility)
		ok := m != nil
		if ok {
			n, _ := strconv.Atoi(m[1])
			ok = n <= maxFlexibility
		}
		v.Check(ok, "deployment_schedule.flexibility", "must be <n>_days with n from 0 to 90, e.g. 3_days")
	}
}

// ScheduleOrder sets an order's deployment schedule: provisioning starts at
// date (within 365 days; at most a day in the past, which means now);
// flexibility (<n>_days, 0 to 90) is recorded. Errors: VALIDATION_ERROR.
func (s *Store) ScheduleOrder(o *ProvisioningOrder, date *time.Time, flexibility string) error {
	o.PreferredDate, o.Flexibility = date, strings.TrimSpace(flexibility)
	var v models.Validator
	s.checkSchedule(&v, o)
	return v.Err()
}

// defaultServiceName names a service after its offer and size.
func defaultServiceName(offer *catalog.CatalogService, o *ProvisioningOrder) string {
	prof := o.Profile()
	switch {
	case prof.Bandwidth != "" && o.Bandwidth != "":
		return offer.Name + " " + o.Bandwidth
	case prof.QuantityField != "" && o.Quantity > 0:
		return fmt.Sprintf("%s (%d %s)", offer.Name, o.Quantity, strings.ReplaceAll(prof.QuantityField, "_", " "))
	}
	return offer.Name
}

// completeOrder resolves the account (and with it the tenant), checks
// availability and conflicts, and prices the order.
func (s *Store) completeOrder(ctx context.Context, p *models.Principal, o *ProvisioningOrder) (*ProvisioningOrder, models.Scope, error) {
	var acct models.BillingAccount
	err := s.In(ctx, p.Scope()).Where("id = ?", o.AccountID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "account_id", Issue: fmt.Sprintf("no billing account %s in this organization", o.AccountID)})
	}
	if err != nil {
		return nil, models.Scope{}, models.DBErr(err)
	}
	scope := models.TenantScope(acct.OrganizationID, p.Environment)
	if err := s.checkOrderAvailability(ctx, scope, o); err != nil {
		return nil, models.Scope{}, err
	}
	if err := s.checkServiceConflict(ctx, scope, o, ""); err != nil {
		return nil, models.Scope{}, err
	}
	if o.MonthlyCharge == 0 && o.OneTimeCharge == 0 {
		price, err := s.PriceOrder(ctx, o, max(o.TermMonths, 1))
		if err != nil {
			return nil, models.Scope{}, err
		}
		o.MonthlyCharge, o.OneTimeCharge, o.Currency, o.TermMonths = price.Monthly, price.OneTime, price.Currency, price.TermMonths
	}
	return o, scope, nil
}

// checkAvailability resolves the order's (one) location and requires its
// service type with its bandwidth there.
func (s *Store) checkAvailability(ctx context.Context, scope models.Scope, o *ProvisioningOrder) error {
	report, err := s.catalog.CheckAvailability(ctx, scope, catalog.AvailabilityQuery{
		Location: o.Location, LocationID: o.LocationID, ServiceTypes: []string{o.ServiceType}, Bandwidth: o.Bandwidth,
	})
	if err != nil {
		return err
	}
	if err := report.Require(o.ServiceType); err != nil {
		return err
	}
	o.LocationID = report.Location.ID
	o.Location = report.Location.Input()
	return nil
}

// checkOrderAvailability checks that the network can deliver the order now,
// as scope sees it: bandwidth at every site, compute units in every region,
// phone numbers in every area code; and resolves a located order's location.
// Errors: LOCATION_NOT_SERVICEABLE, SERVICE_UNAVAILABLE_AT_LOCATION,
// INSUFFICIENT_BANDWIDTH, VALIDATION_ERROR (unknown location id).
func (s *Store) checkOrderAvailability(ctx context.Context, scope models.Scope, o *ProvisioningOrder) error {
	prof := o.Profile()
	switch {
	case prof.Capacity && len(o.Sites) > 0:
		for i, site := range o.Sites {
			report, err := s.catalog.CheckAvailability(ctx, scope, catalog.AvailabilityQuery{LocationID: site.LocationID, ServiceTypes: []string{o.ServiceType}, Bandwidth: o.Bandwidth})
			if err != nil {
				return err
			}
			if err := report.Require(o.ServiceType); err != nil {
				return models.AsError(err).WithDetail("site", i)
			}
			if i == 0 {
				o.LocationID, o.Location = report.Location.ID, report.Location.Input()
			}
		}
	case prof.Capacity:
		if err := s.checkAvailability(ctx, scope, o); err != nil {
			return err
		}
	case prof.Located:
		loc, err := s.resolveLocation(ctx, scope.Environment, o.LocationID, o.Location)
		if err != nil {
			return err
		}
		o.LocationID, o.Location = loc.ID, loc.Input()
	}
	need := map[[2]string]int{}
	for _, c := range o.Compute {
		need[[2]string{c.Region, c.Pool}] += c.Units
	}
	for _, c := range o.Compute {
		key := [2]string{c.Region, c.Pool}
		units, seen := need[key]
		if !seen {
			continue
		}
		delete(need, key)
		left, err := s.catalog.AvailableUnits(ctx, scope, c.Region, c.Pool)
		if err != nil {
			return err
		}
		if units > left {
			return catalog.ComputeShortage(c.Region, c.Pool, units, left)
		}
	}
	wanted := map[[2]string]int{}
	for _, n := range o.Numbers {
		wanted[[2]string{n.Type, n.AreaCode}] += n.Quantity
	}
	for _, n := range o.Numbers {
		key := [2]string{n.Type, n.AreaCode}
		qty, seen := wanted[key]
		if !seen {
			continue
		}
		delete(wanted, key)
		if err := s.catalog.CheckNumbersAvailable(ctx, scope, n.Type, n.AreaCode, qty); err != nil {
			return err
		}
	}
	return nil
}

// resolveLocation returns the serviceable location named by id, or at the
// postal location in. Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE.
func (s *Store) resolveLocation(ctx context.Context, env models.Environment, id string, in catalog.LocationInput) (*catalog.ServiceableLocation, error) {
	if id != "" {
		return s.catalog.LocationByID(ctx, env, "location_id", id)
	}
	return s.catalog.FindLocation(ctx, env, in)
}

// checkServiceConflict refuses an order that conflicts with a service the
// tenant already has (other than except): an internet service body (spec
// 2.1) orders the internet access of a billing account at a location, so a
// second one while an internet service of that account is live (or being
// provisioned) there conflicts. Template and bulk orders add circuits and
// are not limited. Errors: SERVICE_CONFLICT (details: existing_service_id,
// account_id, location_id).
func (s *Store) checkServiceConflict(ctx context.Context, scope models.Scope, o *ProvisioningOrder, except string) error {
	if o.Profile().Kind != catalog.KindInternet || o.Source != OrderFromInternet || o.LocationID == "" {
		return nil
	}
	var existing Service
	q := s.In(ctx, scope).Where("kind = ? AND account_id = ? AND location_id = ? AND status NOT IN ?", catalog.KindInternet, o.AccountID, o.LocationID,
		[]ServiceStatus{ServiceFailed, ServiceDecommissioned})
	if except != "" {
		q = q.Where("id <> ?", except)
	}
	err := q.Order("created_at, id").Limit(1).Find(&existing).Error
	if err != nil {
		return models.DBErr(err)
	}
	if existing.ID == "" {
		return nil
	}
	return models.Errorf(models.CodeServiceConflict, "billing account %s already has internet service %s at location %s; change that service instead", o.AccountID, existing.ID, o.LocationID).
		WithDetail("existing_service_id", existing.ID).WithDetail("account_id", o.AccountID).WithDetail("location_id", o.LocationID)
}

// ValidateOrder re-validates an order inside the tenant scope it belongs
// to, as the provisioning workflow's first step does: the fields, the
// account, the template, availability (capacity may have gone since the
// order was accepted) and conflicts. Errors: as PrepareServiceOrder.
func (s *Store) ValidateOrder(ctx context.Context, scope models.Scope, o *ProvisioningOrder) error {
	return s.ValidateOrderFor(ctx, scope, "", o)
}

// ValidateOrderFor is ValidateOrder for the order of service serviceID,
// which does not conflict with itself. Errors: as PrepareServiceOrder.
func (s *Store) ValidateOrderFor(ctx context.Context, scope models.Scope, serviceID string, o *ProvisioningOrder) error {
	var v models.Validator
	prof := o.Profile()
	if prof.Capacity {
		if _, ok := catalog.LookupServiceType(o.ServiceType); !ok {
			v.Add("service_type", "must be one of "+strings.Join(catalog.ServiceTypeNames(""), ", "))
		}
	} else if _, ok := LookupKind(o.Kind); !ok {
		v.Add("kind", "is not a known kind of service")
	}
	if o.TemplateID != "" {
		if _, err := s.catalog.Template(ctx, scope.Environment, o.TemplateID); err != nil {
			return err
		}
	}
	saved := o.PreferredDate
	o.PreferredDate = nil // a scheduled order is validated when its date has come
	err := s.checkOrderFields(ctx, &v, o)
	o.PreferredDate = saved
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	var acct models.BillingAccount
	err = s.In(ctx, scope).Where("id = ?", o.AccountID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Invalid(models.FieldIssue{Field: "account_id", Issue: fmt.Sprintf("no billing account %s in this organization", o.AccountID)})
	}
	if err != nil {
		return models.DBErr(err)
	}
	if err := s.checkOrderAvailability(ctx, scope, o); err != nil {
		return err
	}
	return s.checkServiceConflict(ctx, scope, o, serviceID)
}

// ---------------------------------------------------------------------------
// Kinds of service and their create bodies (spec 2.1; docs/services.md).

// Kinds of service besides KindInternet and KindNetwork (location.go).
const (
	KindPhoneSystem            = "phone_system"
	KindContactCenter          = "contact_center"
	KindCloudInfrastructure    = "cloud_infrastructure"
	KindCloudPlatform          = "cloud_platform"
	KindManagedSecurity        = "managed_security"
	KindSecurityInfrastructure = "security_infrastructure"
	KindAIPlatform             = "ai_platform"
)

// What PUT /services/{id}/scaling changes for a kind.
const (
	ScaleBandwidth = "bandwidth"
	ScaleQuantity  = "quantity"
)

// KindProfile describes one of the nine kinds of service: where it is
// ordered, what the catalog sells it as, what the network allocates for it,
// how it is priced and what can be changed later. Provisioning, quotes,
// changes and decommissions read these profiles instead of branching on the
// kind, so one workflow serves every kind.
type KindProfile struct {
	Kind          string
	Category      string       // catalog category
	Collection    string       // collection path, under /v1 and /api/v1
	Title         string       // human name
	Offers        []string     // catalog offers that sell the kind; the first is the default
	Located       bool         // delivered at a serviceable location
	Bandwidth     string       // the body field that carries a bandwidth ("" when none)
	Capacity      bool         // the bandwidth is reserved from the location's capacity
	PublicIP      bool         // gets a public IP block
	Reference     string       // prefix of the network's reference for the service
	Scaling       string       // what scaling changes: ScaleBandwidth, ScaleQuantity or ""
	QuantityField string       // the body field that counts billing units ("" for one unit)
	SetupFee      models.Money // one-time fee, per unit when SetupPerUnit
	SetupPerUnit  bool         // the setup fee is charged per unit
	Features      []string     // the features PUT /features may set
}

// kindProfiles is the table of kinds, in catalog order (a new slice each call).
func kindProfiles() []KindProfile {
	return []KindProfile{
		{Kind: catalog.KindInternet, Category: "connectivity", Collection: "/services/connectivity/internet", Title: "internet service",
			Offers: []string{"internet-fiber-dedicated", "internet-fiber-business"}, Located: true, Bandwidth: "bandwidth", Capacity: true, PublicIP: true,
			Reference: "CKT", Scaling: ScaleBandwidth, SetupFee: 50000,
			Features: []string{"static_ip", "ipv6", "ddos_protection", "managed_router", "bgp"}},
		{Kind: catalog.KindNetwork, Category: "connectivity", Collection: "/services/connectivity/networks", Title: "network",
			Offers: []string{"network-mpls", "network-sdwan"}, Located: true, Bandwidth: "bandwidth", Capacity: true, PublicIP: true,
			Reference: "NET", Scaling: ScaleBandwidth, QuantityField: "sites", SetupFee: 75000, SetupPerUnit: true,
			Features: []string{"qos", "encryption", "application_visibility", "wan_optimization"}},
		{Kind: KindPhoneSystem, Category: "voice", Collection: "/services/voice/systems", Title: "phone system",
			Offers: []string{"voice-cloud-pbx"}, Reference: "PBX", Scaling: ScaleQuantity, QuantityField: "users",
			Features: []string{"auto_attendant", "call_forwarding", "voicemail_to_email", "conference_bridge", "call_recording", "hunt_groups", "call_analytics"}},
		{Kind: KindContactCenter, Category: "voice", Collection: "/services/voice/contact-centers", Title: "contact center",
			Offers: []string{"voice-contact-center"}, Reference: "CCX", Scaling: ScaleQuantity, QuantityField: "agent_count", SetupFee: 150000,
			Features: []string{"intelligent_routing", "real_time_analytics", "call_recording", "quality_monitoring", "workforce_management"}},
		{Kind: KindCloudInfrastructure, Category: "cloud", Collection: "/services/cloud/infrastructure", Title: "cloud infrastructure",
			Offers: []string{"cloud-infrastructure"}, Reference: "CLD", QuantityField: "virtual_machines",
			Features: []string{"backup", "monitoring", "private_networking", "disaster_recovery"}},
		{Kind: KindCloudPlatform, Category: "cloud", Collection: "/services/cloud/platforms", Title: "cloud platform",
			Offers: []string{"cloud-platform"}, Reference: "PAS", QuantityField: "environments",
			Features: []string{"ci_cd", "autoscaling", "managed_database", "log_retention"}},
		{Kind: KindManagedSecurity, Category: "security", Collection: "/services/security/managed", Title: "managed security service",
			Offers: []string{"security-managed-soc"}, Reference: "SOC", SetupFee: 500000,
			Features: []string{"threat_hunting", "dark_web_monitoring", "phishing_simulation", "managed_edr"}},
		{Kind: KindSecurityInfrastructure, Category: "security", Collection: "/services/security/infrastructure", Title: "security infrastructure",
			Offers: []string{"security-firewall"}, Located: true, Bandwidth: "throughput", PublicIP: true, Reference: "FW",
			Scaling: ScaleBandwidth, QuantityField: "devices", SetupFee: 100000, SetupPerUnit: true,
			Features: []string{"ips", "url_filtering", "antivirus", "sandboxing", "ssl_inspection", "application_control", "geo_blocking"}},
		{Kind: KindAIPlatform, Category: "ai", Collection: "/services/ai/platforms", Title: "AI platform",
			Offers: []string{"ai-platform"}, Reference: "AIP", QuantityField: "models", SetupFee: 250000,
			Features: []string{"model_monitoring", "explainability", "auto_retraining", "private_endpoints"}},
	}
}

// KindProfiles returns the nine kinds of service, in catalog order.
func KindProfiles() []KindProfile { return kindProfiles() }

// LookupKind returns the profile of kind, and whether it exists.
func LookupKind(kind string) (KindProfile, bool) {
	for _, p := range kindProfiles() {
		if p.Kind == kind {
			return p, true
		}
	}
	return KindProfile{}, false
}

// KindNames returns the names of the kinds.
func KindNames() []string {
	var out []string
	for _, p := range kindProfiles() {
		out = append(out, p.Kind)
	}
	return out
}

// OrderContacts are the people to notify about a service (spec 2.2's contacts).
type OrderContacts struct {
	Technical string `json:"technical,omitempty" maxLength:"320" doc:"E-mail address of the technical contact, notified of provisioning, maintenance and decommission"`
	Billing   string `json:"billing,omitempty" maxLength:"320" doc:"E-mail address of the billing contact"`
}

// OrderExtras are the fields every category body accepts besides the
// specification's (not in the specification).
type OrderExtras struct {
	Name     string         `json:"name,omitempty" maxLength:"200" doc:"The service's name; default: the catalog offer's name and size. Sandbox magic values: see docs/sandbox.md"`
	Contacts *OrderContacts `json:"contacts,omitempty" doc:"Who is notified about the service"`
}

func (e *OrderExtras) apply(o *ProvisioningOrder) {
	o.Name = strings.TrimSpace(e.Name)
	if e.Contacts != nil {
		o.TechnicalContact, o.BillingContact = strings.TrimSpace(e.Contacts.Technical), strings.TrimSpace(e.Contacts.Billing)
	}
}

// KindBody is the create body of one kind of service. Its prepare method
// validates the kind's own fields into an order.
type KindBody interface {
	// ServiceKind returns the kind the body creates.
	ServiceKind() string
	prepare(p *orderPrep, o *ProvisioningOrder) error
}

// orderPrep is the context of validating a body: the store, the caller's
// environment, where issues go, and whether it is a quote (where missing
// fields are listed, not refused).
type orderPrep struct {
	ctx     context.Context
	s       *Store
	env     models.Environment
	v       *models.Validator
	quote   bool
	missing []string
}

// required records field as missing unless ok: an issue for an order, a
// note for a quote. It returns ok.
func (p *orderPrep) required(ok bool, field string) bool {
	if ok {
		return true
	}
	if p.quote {
		p.missing = append(p.missing, field)
	} else {
		p.v.Add(field, "is required")
	}
	return false
}

// NewKindBody returns an empty create body of kind. Errors: VALIDATION_ERROR
// (unknown kind, reported under field).
func NewKindBody(field, kind string) (KindBody, error) {
	switch kind {
	case catalog.KindInternet:
		return &InternetBody{}, nil
	case catalog.KindNetwork:
		return &NetworkBody{}, nil
	case KindPhoneSystem:
		return &PhoneSystemBody{}, nil
	case KindContactCenter:
		return &ContactCenterBody{}, nil
	case KindCloudInfrastructure:
		return &CloudInfrastructureBody{}, nil
	case KindCloudPlatform:
		return &CloudPlatformBody{}, nil
	case KindManagedSecurity:
		return &ManagedSecurityBody{}, nil
	case KindSecurityInfrastructure:
		return &SecurityInfrastructureBody{}, nil
	case KindAIPlatform:
		return &AIPlatformBody{}, nil
	}
	return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be one of " + strings.Join(KindNames(), ", ")})
}

// DecodeKindBody decodes spec (a JSON object) into the create body of kind,
// refusing unknown fields. Errors: VALIDATION_ERROR naming field.
func DecodeKindBody(field, kind string, spec map[string]any) (KindBody, error) {
	body, err := NewKindBody(field, kind)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a JSON object"})
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(body); err != nil {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "is not a valid " + strings.ReplaceAll(kind, "_", " ") + " body: " + jsonIssue(err)})
	}
	return body, nil
}

// jsonIssue turns a decoding error into a client-safe issue.
func jsonIssue(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s", te.Field, te.Type.String())
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + rest
	}
	return "malformed"
}

func specOf(body KindBody) map[string]any {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	delete(m, "account_id")
	delete(m, "name")
	delete(m, "contacts")
	return m
}

// PrepareServiceOrder validates the create body of any kind for principal p:
// the kind's fields (enums, formats, per-kind rules), the common fields,
// the billing account (default: the organization's oldest; required for
// internet), availability (bandwidth, compute, numbers), and conflicts; and
// prices it. It returns the order and the tenant scope it belongs to.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH, SERVICE_CONFLICT.
func (s *Store) PrepareServiceOrder(ctx context.Context, p *models.Principal, body KindBody) (*ProvisioningOrder, models.Scope, error) {
	o, err := s.orderFromBody(ctx, p.Environment, body, false)
	if err != nil {
		return nil, models.Scope{}, err
	}
	if o.Kind != catalog.KindInternet {
		if o.AccountID == "" && p.IsStaff() {
			return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: "account_id", Issue: "is required when provider staff provision for a customer"})
		}
		if err := s.defaultAccount(ctx, p, o); err != nil {
			return nil, models.Scope{}, err
		}
	}
	return s.completeOrder(ctx, p, o)
}

// orderFromBody validates body into an order (no account, availability or
// price yet). For a quote, missing fields are not errors: they are returned
// in the order's Spec under "_missing".
func (s *Store) orderFromBody(ctx context.Context, env models.Environment, body KindBody, quote bool) (*ProvisioningOrder, error) {
	var v models.Validator
	prof, _ := LookupKind(body.ServiceKind())
	o := &ProvisioningOrder{
		Source: OrderFromCategory, Kind: prof.Kind, BillingCycle: "monthly", Redundancy: "none", Monitoring: "standard", Quantity: 1,
	}
	if prof.Kind == catalog.KindInternet {
		o.Source = OrderFromInternet
	}
	pr := &orderPrep{ctx: ctx, s: s, env: env, v: &v, quote: quote}
	if err := body.prepare(pr, o); err != nil {
		return nil, err
	}
	if o.CatalogServiceID == "" && prof.Kind != catalog.KindInternet {
		o.CatalogServiceID = prof.Offers[0]
	}
	if err := s.checkOrderFields(ctx, &v, o); err != nil {
		return nil, err
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	o.Spec = specOf(body)
	if quote && len(pr.missing) > 0 {
		o.Spec["_missing"] = pr.missing
	}
	return o, nil
}

// MissingForProvisioning returns the fields a quoted order still lacks.
func (o *ProvisioningOrder) MissingForProvisioning() []string {
	switch m := o.Spec["_missing"].(type) {
	case []string:
		return m
	case []any:
		out := make([]string, 0, len(m))
		for _, x := range m {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Validation helpers shared by the bodies.
var (
	svcIdentPattern    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	svcAreaCodePattern = regexp.MustCompile(`^[2-9][0-9]{2}$`)
	svcSizePattern     = regexp.MustCompile(`^(?i)([1-9][0-9]{0,5})\s?(GB|TB)$`)
	svcDurationPattern = regexp.MustCompile(`^([1-9][0-9]{0,3})_(minute|minutes|hour|hours)$`)
	svcEnvNamePattern  = regexp.MustCompile(`^[a-z][a-z0-9-]{0,29}$`)
	svcModelPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	svcHostnamePattern = regexp.MustCompile(`^(?i)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
	svcRegionPattern   = regexp.MustCompile(`^[a-z]{2,10}(-[a-z0-9]{1,15}){1,3}$`)
)

// svcCheckList validates a list of values: each allowed (nil allows any
// identifier), no duplicates, between min and max items. It returns the
// list trimmed.
func svcCheckList(v *models.Validator, field string, got, allowed []string, minItems, maxItems int) []string {
	out := make([]string, 0, len(got))
	if len(got) < minItems {
		if minItems == 1 {
			v.Add(field, "must list at least one value")
		} else {
			v.Add(field, fmt.Sprintf("must list at least %d values", minItems))
		}
	}
	if len(got) > maxItems {
		v.Add(field, fmt.Sprintf("must list at most %d values", maxItems))
		return out
	}
	for i, x := range got {
		x = strings.TrimSpace(x)
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case allowed != nil && !slices.Contains(allowed, x):
			v.Add(f, "must be one of "+strings.Join(allowed, ", "))
		case allowed == nil && !svcIdentPattern.MatchString(x):
			v.Add(f, "must be a lowercase identifier (letters, digits, underscores; at most 40)")
		case slices.Contains(out, x):
			v.Add(f, fmt.Sprintf("%q is listed twice", x))
		default:
			out = append(out, x)
		}
	}
	return out
}

// ParseSizeGB parses a size written <n>GB or <n>TB into gigabytes.
// Errors: VALIDATION_ERROR naming field.
func ParseSizeGB(field, s string) (int, error) {
	m := svcSizePattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a size such as 16GB or 2TB"})
	}
	n, _ := strconv.Atoi(m[1])
	if strings.EqualFold(m[2], "TB") {
		n *= 1000
	}
	return n, nil
}

// ParseResponseTime parses <n>_minutes, <n>_hour or <n>_hours into a duration.
// Errors: VALIDATION_ERROR naming field.
func ParseResponseTime(field, s string) (time.Duration, error) {
	m := svcDurationPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, models.Invalid(models.FieldIssue{Field: field, Issue: "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes or 4_hours"})
	}
	n, _ := strconv.Atoi(m[1])
	if strings.HasPrefix(m[2], "hour") {
		return time.Duration(n) * time.Hour, nil
	}
	return time.Duration(n) * time.Minute, nil
}

// InternetBody is the internet service create body (spec 2.1). Its required
// fields are required in the API schema too, so that a client built from the
// OpenAPI document sends them; a body without them is refused with each
// missing field named.
type InternetBody struct {
	AccountID    string                `json:"account_id" required:"true" maxLength:"64" example:"acct_3fK9aZ" doc:"Required: a billing account of the caller's organization"`
	ServiceType  string                `json:"service_type" required:"true" enum:"fiber_dedicated,fiber_business" maxLength:"40" example:"fiber_dedicated" doc:"Required: fiber_dedicated or fiber_business"`
	Bandwidth    string                `json:"bandwidth" required:"true" maxLength:"20" example:"1gbps" doc:"Required: <n>mbps or <n>gbps, lowercase, one of the catalog's options"`
	Location     catalog.LocationInput `json:"location" required:"true" doc:"Required: {address, city, state, zip}"`
	SLA          string                `json:"sla" required:"true" enum:"standard,premium,enterprise" maxLength:"20" example:"premium" doc:"Required: standard, premium or enterprise (as the catalog offers)"`
	BillingCycle string                `json:"billing_cycle,omitempty" maxLength:"20" example:"monthly" doc:"monthly (the default)"`
	OrderExtras
}

// ServiceKind returns internet.
func (b *InternetBody) ServiceKind() string { return catalog.KindInternet }

func (b *InternetBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	b.OrderExtras.apply(o)
	o.AccountID, o.ServiceType = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.ServiceType)
	o.Bandwidth, o.SLA = strings.TrimSpace(b.Bandwidth), strings.TrimSpace(b.SLA)
	o.BillingCycle = OrDefault(strings.TrimSpace(b.BillingCycle), "monthly")
	o.Location = b.Location.Normalize()
	if !p.quote {
		p.v.Check(o.AccountID != "", "account_id", "is required")
	}
	if st, ok := catalog.LookupServiceType(o.ServiceType); !ok || st.Kind != catalog.KindInternet {
		if p.required(o.ServiceType != "", "service_type") {
			p.v.Add("service_type", "must be one of "+strings.Join(catalog.ServiceTypeNames(catalog.KindInternet), ", "))
		} else {
			o.ServiceType = "fiber_dedicated"
		}
	}
	if p.quote {
		if !p.required(o.Bandwidth != "", "bandwidth") {
			o.Bandwidth = quoteDefaultBandwidth(p, o)
		}
		if !p.required(o.SLA != "", "sla") {
			o.SLA = "standard"
		}
		if b.Location != (catalog.LocationInput{}) {
			o.Location.Validate(p.v, "location")
		} else {
			p.required(false, "location")
		}
		return nil
	}
	o.Location.Validate(p.v, "location")
	return nil
}

// quoteDefaultBandwidth returns the smallest bandwidth the order's offer
// sells (what a quote without a bandwidth is priced at).
func quoteDefaultBandwidth(p *orderPrep, o *ProvisioningOrder) string {
	id := o.CatalogServiceID
	if st, ok := catalog.LookupServiceType(o.ServiceType); ok {
		id = st.CatalogServiceID
	}
	if id == "" {
		id = o.Profile().Offers[0]
	}
	offer, err := p.s.catalog.CatalogServiceByID(p.ctx, id)
	if err != nil || len(offer.BandwidthOptions) == 0 {
		return ""
	}
	return offer.BandwidthOptions[0]
}

// NetworkSite is one site of a network (spec 2.1).
type NetworkSite struct {
	ID      string `json:"id" required:"true" minLength:"1" maxLength:"60" example:"loc_austin_congress" doc:"Required: a serviceable location id (loc_...) from the availability check"`
	Address string `json:"address,omitempty" maxLength:"200" doc:"A label for the site (recorded)"`
	Role    string `json:"role,omitempty" enum:"hub,spoke" maxLength:"10" example:"hub" doc:"hub or spoke (hub_and_spoke); omitted otherwise"`
}

// NetworkBody is the network deployment create body (spec 2.1).
type NetworkBody struct {
	AccountID   string        `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	NetworkType string        `json:"network_type" required:"true" enum:"mpls,sdwan" maxLength:"20" example:"sdwan" doc:"Required: mpls or sdwan"`
	Topology    string        `json:"topology" required:"true" enum:"hub_and_spoke,full_mesh,point_to_point" maxLength:"20" example:"hub_and_spoke" doc:"Required: hub_and_spoke (exactly one hub, at least one spoke), full_mesh (at least two sites) or point_to_point (exactly two sites)"`
	Locations   []NetworkSite `json:"locations" required:"true" minItems:"2" maxItems:"50" example:"[{\"id\":\"loc_austin_congress\",\"role\":\"hub\"},{\"id\":\"loc_dallas_main\",\"role\":\"spoke\"}]" doc:"Required: the sites, 2 to 50, each a different location"`
	Bandwidth   string        `json:"bandwidth" required:"true" maxLength:"20" example:"100mbps" doc:"Required: per site, one of the offer's options"`
	Redundancy  bool          `json:"redundancy,omitempty" doc:"Dual-path access at every site"`
	SLA         string        `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise as the offer has it; default: the offer's first"`
	OrderExtras
}

// ServiceKind returns network.
func (b *NetworkBody) ServiceKind() string { return catalog.KindNetwork }

// Network topologies.
var networkTopologies = []string{"hub_and_spoke", "full_mesh", "point_to_point"}

func (b *NetworkBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.Bandwidth, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.Bandwidth), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.NetworkType)
	if st, ok := catalog.LookupServiceType(o.ServiceType); !ok || st.Kind != catalog.KindNetwork {
		if p.required(o.ServiceType != "", "network_type") {
			v.Add("network_type", "must be one of "+strings.Join(catalog.ServiceTypeNames(catalog.KindNetwork), ", "))
		} else {
			o.ServiceType = "mpls"
		}
	}
	if b.Redundancy {
		o.Redundancy = "dual_path"
	}
	if p.quote && !p.required(o.Bandwidth != "", "bandwidth") {
		o.Bandwidth = quoteDefaultBandwidth(p, o)
	}
	topology := strings.TrimSpace(b.Topology)
	if p.required(topology != "", "topology") {
		v.Check(slices.Contains(networkTopologies, topology), "topology", "must be one of "+strings.Join(networkTopologies, ", "))
	}
	if !p.required(len(b.Locations) > 0, "locations") {
		o.Quantity = 2
		return nil
	}
	v.Check(len(b.Locations) >= 2 && len(b.Locations) <= 50, "locations", "must list 2 to 50 sites")
	hubs, spokes := 0, 0
	seen := map[string]bool{}
	for i, l := range b.Locations {
		f := fmt.Sprintf("locations[%d]", i)
		site := OrderSite{LocationID: strings.TrimSpace(l.ID), Role: strings.TrimSpace(l.Role), Address: strings.Join(strings.Fields(l.Address), " ")}
		if site.LocationID == "" {
			v.Add(f+".id", "is required: a location id (loc_...) from the availability check")
		} else if !models.HasPrefix(site.LocationID, catalog.PrefixLocation) {
			v.Add(f+".id", "must be a location id (loc_...)")
		} else if seen[site.LocationID] {
			v.Add(f+".id", fmt.Sprintf("%s is listed twice", site.LocationID))
		} else {
			seen[site.LocationID] = true
			if _, err := p.s.catalog.LocationByID(p.ctx, p.env, f+".id", site.LocationID); err != nil {
				if models.ErrorCode(err) != models.CodeValidation {
					return err
				}
				v.Add(f+".id", fmt.Sprintf("no serviceable location %q", site.LocationID))
			}
		}
		switch site.Role {
		case "hub":
			hubs++
		case "spoke":
			spokes++
		case "":
			if topology == "hub_and_spoke" {
				v.Add(f+".role", "is required with hub_and_spoke: hub or spoke")
			}
		default:
			v.Add(f+".role", "must be hub or spoke")
		}
		o.Sites = append(o.Sites, site)
	}
	switch topology {
	case "hub_and_spoke":
		v.Check(hubs == 1, "locations", fmt.Sprintf("hub_and_spoke needs exactly one hub; %d given", hubs))
		v.Check(spokes >= 1, "locations", "hub_and_spoke needs at least one spoke")
		// the hub is the primary site: it comes first
		slices.SortStableFunc(o.Sites, func(a, b OrderSite) int {
			if a.Role == b.Role {
				return 0
			}
			if a.Role == "hub" {
				return -1
			}
			return 1
		})
	case "point_to_point":
		v.Check(len(b.Locations) == 2, "locations", "point_to_point links exactly two sites")
	}
	if topology != "hub_and_spoke" && hubs+spokes > 0 {
		v.Add("locations", "roles hub and spoke belong to hub_and_spoke; omit them for "+topology)
	}
	o.Quantity = len(o.Sites)
	return nil
}

// PhoneNumberOrder asks for phone numbers (spec 2.1).
type PhoneNumberOrder struct {
	Type     string `json:"type" required:"true" enum:"local,toll_free" maxLength:"10" example:"local" doc:"Required: local or toll_free"`
	AreaCode string `json:"area_code,omitempty" maxLength:"3" example:"512" doc:"Required for local numbers: a three-digit area code"`
	Quantity int    `json:"quantity" required:"true" minimum:"1" maximum:"1000" example:"10" doc:"Required: 1 to 1000"`
}

// PhoneSystemBody is the phone system create body (spec 2.1).
type PhoneSystemBody struct {
	AccountID    string             `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	SystemType   string             `json:"system_type" required:"true" enum:"cloud_pbx,hybrid_pbx" maxLength:"20" example:"cloud_pbx" doc:"Required: cloud_pbx or hybrid_pbx"`
	Features     []string           `json:"features,omitempty" maxItems:"20" doc:"auto_attendant, call_forwarding, voicemail_to_email, conference_bridge, call_recording, hunt_groups, call_analytics"`
	Users        int                `json:"users" required:"true" minimum:"1" maximum:"10000" example:"50" doc:"Required: 1 to 10000"`
	PhoneNumbers []PhoneNumberOrder `json:"phone_numbers,omitempty" maxItems:"20" doc:"Numbers to assign from the number blocks; at most 1000 in all, and at most 10 per user"`
	Integrations []string           `json:"integrations,omitempty" maxItems:"10" doc:"Identifiers of the systems to integrate with (lowercase, e.g. crm, helpdesk)"`
	SLA          string             `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard or premium (the offer's options); default standard"`
	OrderExtras
}

// ServiceKind returns phone_system.
func (b *PhoneSystemBody) ServiceKind() string { return KindPhoneSystem }

var (
	phoneSystemTypes = []string{"cloud_pbx", "hybrid_pbx"}
	numberTypes      = []string{"local", "toll_free"}
)

// checkNumbers validates phone number requests into o.Numbers.
func checkNumbers(v *models.Validator, field string, in []PhoneNumberOrder, o *ProvisioningOrder) int {
	total := 0
	for i, n := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		nr := NumberRequest{Type: strings.TrimSpace(n.Type), AreaCode: strings.TrimSpace(n.AreaCode), Quantity: n.Quantity}
		v.Check(slices.Contains(numberTypes, nr.Type), f+".type", "must be local or toll_free")
		switch nr.Type {
		case "local":
			v.Check(svcAreaCodePattern.MatchString(nr.AreaCode), f+".area_code", "is required for local numbers: three digits, the first 2-9")
		case "toll_free":
			v.Check(nr.AreaCode == "", f+".area_code", "must be omitted for toll_free numbers")
		}
		v.Check(nr.Quantity >= 1 && nr.Quantity <= 1000, f+".quantity", "must be from 1 to 1000")
		total += max(nr.Quantity, 0)
		o.Numbers = append(o.Numbers, nr)
	}
	v.Check(total <= 1000, field, "must ask for at most 1000 numbers in all")
	return total
}

func (b *PhoneSystemBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.SystemType)
	if p.required(o.ServiceType != "", "system_type") {
		v.Check(slices.Contains(phoneSystemTypes, o.ServiceType), "system_type", "must be one of "+strings.Join(phoneSystemTypes, ", "))
	} else {
		o.ServiceType = "cloud_pbx"
	}
	prof, _ := LookupKind(KindPhoneSystem)
	o.Features = svcCheckList(v, "features", b.Features, prof.Features, 0, 20)
	svcCheckList(v, "integrations", b.Integrations, nil, 0, 10)
	if p.required(b.Users != 0, "users") {
		v.Check(b.Users >= 1 && b.Users <= 10000, "users", "must be from 1 to 10000")
	}
	o.Quantity = max(b.Users, 1)
	total := checkNumbers(v, "phone_numbers", b.PhoneNumbers, o)
	if b.Users > 0 {
		v.Check(total <= 10*b.Users, "phone_numbers", "must ask for at most 10 numbers per user")
	}
	return nil
}

// AIFeatures are a contact center's AI features (spec 2.1).
type AIFeatures struct {
	SentimentAnalysis bool `json:"sentiment_analysis,omitempty"`
	AutoTranscription bool `json:"auto_transcription,omitempty"`
	PredictiveDialing bool `json:"predictive_dialing,omitempty"`
}

// ContactCenterBody is the contact center create body (spec 2.1).
type ContactCenterBody struct {
	AccountID  string      `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	CenterType string      `json:"center_type" required:"true" enum:"omnichannel,inbound,outbound,blended" maxLength:"20" example:"omnichannel" doc:"Required: omnichannel (two or more channels), inbound, outbound or blended"`
	Channels   []string    `json:"channels" required:"true" minItems:"1" enum:"voice,chat,email,sms" example:"[\"voice\",\"chat\"]" maxItems:"4" doc:"Required: voice, chat, email, sms"`
	AgentCount int         `json:"agent_count" required:"true" minimum:"1" maximum:"5000" example:"25" doc:"Required: 1 to 5000"`
	Features   []string    `json:"features,omitempty" maxItems:"10" doc:"intelligent_routing, real_time_analytics, call_recording, quality_monitoring, workforce_management"`
	AIFeatures *AIFeatures `json:"ai_features,omitempty"`
	SLA        string      `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns contact_center.
func (b *ContactCenterBody) ServiceKind() string { return KindContactCenter }

var (
	centerTypes    = []string{"omnichannel", "inbound", "outbound", "blended"}
	centerChannels = []string{"voice", "chat", "email", "sms"}
)

func (b *ContactCenterBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.CenterType)
	if p.required(o.ServiceType != "", "center_type") {
		v.Check(slices.Contains(centerTypes, o.ServiceType), "center_type", "must be one of "+strings.Join(centerTypes, ", "))
	} else {
		o.ServiceType = "omnichannel"
	}
	var channels []string
	if p.required(len(b.Channels) > 0, "channels") {
		channels = svcCheckList(v, "channels", b.Channels, centerChannels, 1, 4)
	}
	voice := slices.Contains(channels, "voice")
	if o.ServiceType == "omnichannel" && len(b.Channels) > 0 {
		v.Check(len(channels) >= 2, "channels", "omnichannel needs at least two channels")
	}
	if (o.ServiceType == "outbound" || o.ServiceType == "inbound" || o.ServiceType == "blended") && len(b.Channels) > 0 {
		v.Check(voice, "channels", o.ServiceType+" centers need the voice channel")
	}
	if p.required(b.AgentCount != 0, "agent_count") {
		v.Check(b.AgentCount >= 1 && b.AgentCount <= 5000, "agent_count", "must be from 1 to 5000")
	}
	o.Quantity = max(b.AgentCount, 1)
	prof, _ := LookupKind(KindContactCenter)
	o.Features = svcCheckList(v, "features", b.Features, prof.Features, 0, 10)
	if slices.Contains(o.Features, "call_recording") && len(channels) > 0 {
		v.Check(voice, "features", "call_recording needs the voice channel")
	}
	if ai := b.AIFeatures; ai != nil && len(channels) > 0 {
		v.Check(!ai.AutoTranscription || voice, "ai_features.auto_transcription", "needs the voice channel")
		v.Check(!ai.PredictiveDialing || voice, "ai_features.predictive_dialing", "needs the voice channel")
		v.Check(!ai.PredictiveDialing || o.ServiceType != "inbound", "ai_features.predictive_dialing", "dials out: not available to inbound centers")
	}
	if voice {
		o.Numbers = append(o.Numbers, NumberRequest{Type: "toll_free", Quantity: 1})
	}
	return nil
}

// VMSpecifications size a virtual machine (spec 2.1).
type VMSpecifications struct {
	CPU     int    `json:"cpu" required:"true" minimum:"1" maximum:"128" example:"4" doc:"Required: vCPUs, 1 to 128"`
	Memory  string `json:"memory" required:"true" maxLength:"10" example:"16GB" doc:"Required: <n>GB, 1 to 4096"`
	Storage string `json:"storage" required:"true" maxLength:"10" example:"500GB" doc:"Required: <n>GB or <n>TB, at most 64TB"`
	OS      string `json:"os" required:"true" enum:"ubuntu-20.04,ubuntu-22.04,ubuntu-24.04,debian-12,rhel-9,rocky-9,windows-server-2019,windows-server-2022" maxLength:"30" example:"ubuntu-22.04" doc:"Required: ubuntu-20.04, ubuntu-22.04, ubuntu-24.04, debian-12, rhel-9, rocky-9, windows-server-2019 or windows-server-2022"`
}

// CloudResource is a resource of a cloud infrastructure (spec 2.1).
type CloudResource struct {
	Type           string            `json:"type" required:"true" enum:"virtual_machine,load_balancer" maxLength:"20" example:"virtual_machine" doc:"Required: virtual_machine or load_balancer"`
	Specifications *VMSpecifications `json:"specifications,omitempty" doc:"virtual_machine: required"`
	Quantity       int               `json:"quantity,omitempty" example:"3" doc:"virtual_machine: 1 to 100 (default 1)"`
	Tier           string            `json:"tier,omitempty" enum:"basic,standard,premium" maxLength:"20" example:"standard" doc:"load_balancer: required, basic, standard or premium"`
	SSLTermination bool              `json:"ssl_termination,omitempty" doc:"load_balancer: terminate TLS"`
}

// AutoScaling is the auto-scaling policy of a cloud infrastructure (spec 2.1).
type AutoScaling struct {
	Enabled      bool `json:"enabled,omitempty"`
	MinInstances int  `json:"min_instances,omitempty" doc:"1 or more; at most max_instances"`
	MaxInstances int  `json:"max_instances,omitempty" doc:"at least min_instances; at most 1000"`
}

// CloudInfrastructureBody is the cloud infrastructure create body (spec 2.1).
type CloudInfrastructureBody struct {
	AccountID      string          `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	DeploymentType string          `json:"deployment_type" required:"true" enum:"single_cloud,multi_cloud,hybrid_cloud" maxLength:"20" example:"multi_cloud" doc:"Required: single_cloud (one provider), multi_cloud (two or more) or hybrid_cloud (private plus at least one other)"`
	Providers      []string        `json:"providers" required:"true" minItems:"1" enum:"aws,azure,gcp,oracle,private" example:"[\"aws\",\"azure\"]" maxItems:"5" doc:"Required: aws, azure, gcp, oracle, private"`
	Regions        []string        `json:"regions" required:"true" minItems:"1" example:"[\"us-east-1\"]" maxItems:"10" doc:"Required: region ids, e.g. us-east-1 (see docs/services.md); the resources are deployed in each"`
	Resources      []CloudResource `json:"resources" required:"true" minItems:"1" maxItems:"20" example:"[{\"type\":\"virtual_machine\",\"specifications\":{\"cpu\":4,\"memory\":\"16GB\",\"storage\":\"500GB\",\"os\":\"ubuntu-22.04\"}}]" doc:"Required: at least one virtual_machine"`
	AutoScaling    *AutoScaling    `json:"auto_scaling,omitempty"`
	SLA            string          `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns cloud_infrastructure.
func (b *CloudInfrastructureBody) ServiceKind() string { return KindCloudInfrastructure }

var (
	deploymentTypes  = []string{"single_cloud", "multi_cloud", "hybrid_cloud"}
	cloudProviders   = []string{"aws", "azure", "gcp", "oracle", "private"}
	operatingSystems = []string{"ubuntu-20.04", "ubuntu-22.04", "ubuntu-24.04", "debian-12", "rhel-9", "rocky-9", "windows-server-2019", "windows-server-2022"}
	lbTiers          = []string{"basic", "standard", "premium"}
)

// checkRegions validates region ids: each must exist in env (a compute
// region of the inventory).
func (p *orderPrep) checkRegions(field string, regions []string, minItems, maxItems int, indexed bool) []string {
	v := p.v
	out := make([]string, 0, len(regions))
	if len(regions) < minItems || len(regions) > maxItems {
		v.Add(field, fmt.Sprintf("must list %d to %d regions", minItems, maxItems))
	}
	known, err := p.s.catalog.ComputeRegions(p.ctx, p.env)
	if err != nil {
		return out
	}
	for i, r := range regions {
		r = strings.TrimSpace(r)
		f := field
		if indexed {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		switch {
		case !svcRegionPattern.MatchString(r) || !slices.Contains(known, r):
			v.Add(f, "must be one of "+strings.Join(known, ", "))
		case slices.Contains(out, r):
			v.Add(f, fmt.Sprintf("%q is listed twice", r))
		default:
			out = append(out, r)
		}
	}
	return out
}

func (b *CloudInfrastructureBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.DeploymentType)
	if p.required(o.ServiceType != "", "deployment_type") {
		v.Check(slices.Contains(deploymentTypes, o.ServiceType), "deployment_type", "must be one of "+strings.Join(deploymentTypes, ", "))
	} else {
		o.ServiceType = "single_cloud"
	}
	var providers []string
	if p.required(len(b.Providers) > 0, "providers") {
		providers = svcCheckList(v, "providers", b.Providers, cloudProviders, 1, 5)
		switch o.ServiceType {
		case "single_cloud":
			v.Check(len(providers) == 1, "providers", "single_cloud uses exactly one provider")
		case "multi_cloud":
			v.Check(len(providers) >= 2, "providers", "multi_cloud needs at least two providers")
		case "hybrid_cloud":
			v.Check(slices.Contains(providers, "private") && len(providers) >= 2, "providers", "hybrid_cloud needs private and at least one public provider")
		}
	}
	var regions []string
	if p.required(len(b.Regions) > 0, "regions") {
		regions = p.checkRegions("regions", b.Regions, 1, 10, true)
	} else {
		regions = []string{"us-east-1"}
	}
	vms, vcpus := 0, 0
	if p.required(len(b.Resources) > 0, "resources") {
		v.Check(len(b.Resources) <= 20, "resources", "must list at most 20 resources")
	}
	for i, r := range b.Resources {
		f := fmt.Sprintf("resources[%d]", i)
		switch strings.TrimSpace(r.Type) {
		case "virtual_machine":
			qty := r.Quantity
			if qty == 0 {
				qty = 1
			}
			v.Check(qty >= 1 && qty <= 100, f+".quantity", "must be from 1 to 100")
			v.Check(r.Tier == "" && !r.SSLTermination, f, "tier and ssl_termination belong to load balancers")
			spec := r.Specifications
			if spec == nil {
				v.Add(f+".specifications", "is required for a virtual_machine: {cpu, memory, storage, os}")
				continue
			}
			v.Check(spec.CPU >= 1 && spec.CPU <= 128, f+".specifications.cpu", "must be from 1 to 128")
			if mem, err := ParseSizeGB(f+".specifications.memory", spec.Memory); err != nil || mem > 4096 || strings.HasSuffix(strings.ToUpper(spec.Memory), "TB") {
				v.Add(f+".specifications.memory", "must be <n>GB, from 1GB to 4096GB")
			}
			if st, err := ParseSizeGB(f+".specifications.storage", spec.Storage); err != nil || st > 64000 {
				v.Add(f+".specifications.storage", "must be <n>GB or <n>TB, at most 64TB")
			}
			v.Check(slices.Contains(operatingSystems, strings.TrimSpace(spec.OS)), f+".specifications.os", "must be one of "+strings.Join(operatingSystems, ", "))
			vms += max(qty, 0)
			vcpus += max(qty, 0) * max(spec.CPU, 0)
			o.Deployment = append(o.Deployment, DeployItem{Type: "virtual_machine", Name: fmt.Sprintf("vm-%d", i+1), Count: qty,
				Spec: map[string]any{"cpu": spec.CPU, "memory": strings.ToUpper(strings.ReplaceAll(spec.Memory, " ", "")), "storage": strings.ToUpper(strings.ReplaceAll(spec.Storage, " ", "")), "os": spec.OS}})
		case "load_balancer":
			v.Check(slices.Contains(lbTiers, r.Tier), f+".tier", "is required for a load_balancer: basic, standard or premium")
			v.Check(r.Specifications == nil, f+".specifications", "belongs to virtual machines")
			v.Check(r.Quantity == 0 || r.Quantity == 1, f+".quantity", "a load_balancer entry is one load balancer")
			o.PublicIP = true
			o.Deployment = append(o.Deployment, DeployItem{Type: "load_balancer", Name: fmt.Sprintf("lb-%d", i+1), Count: 1,
				Spec: map[string]any{"tier": r.Tier, "ssl_termination": r.SSLTermination}})
		case "":
			p.required(false, f+".type")
		default:
			v.Add(f+".type", "must be virtual_machine or load_balancer")
		}
	}
	if len(b.Resources) > 0 {
		v.Check(vms > 0, "resources", "must include at least one virtual_machine")
	}
	if as := b.AutoScaling; as != nil {
		if as.Enabled || as.MinInstances != 0 || as.MaxInstances != 0 {
			v.Check(as.MinInstances >= 1, "auto_scaling.min_instances", "must be 1 or more")
			v.Check(as.MaxInstances <= 1000, "auto_scaling.max_instances", "must be at most 1000")
			v.Check(as.MinInstances <= as.MaxInstances, "auto_scaling", "min_instances must not exceed max_instances")
		}
		if as.Enabled && vms > 0 && as.MinInstances <= as.MaxInstances {
			v.Check(vms >= as.MinInstances && vms <= as.MaxInstances, "auto_scaling", fmt.Sprintf("the %d virtual machines ordered must be between min_instances and max_instances", vms))
		}
	}
	// every region runs the resources
	for i := range o.Deployment {
		o.Deployment[i].Region = strings.Join(regions, ",")
	}
	for _, r := range regions {
		if vcpus > 0 {
			o.Compute = append(o.Compute, ComputeRequest{Region: r, Pool: "vcpu", Units: vcpus})
		}
	}
	o.Quantity = max(vms, 1)
	return nil
}

// PlatformInstances bound an application platform's instances.
type PlatformInstances struct {
	Min int `json:"min" required:"true" minimum:"1" maximum:"100" example:"2" doc:"Required: 1 to 100"`
	Max int `json:"max" required:"true" minimum:"1" maximum:"100" example:"10" doc:"Required: min to 100"`
}

// PlatformDatabase is a managed database of an application platform.
type PlatformDatabase struct {
	Engine  string `json:"engine" required:"true" enum:"postgres,mysql,redis" maxLength:"20" example:"postgres" doc:"Required: postgres, mysql or redis"`
	Storage string `json:"storage" required:"true" maxLength:"10" example:"100GB" doc:"Required: <n>GB, 10 to 16000"`
}

// CloudPlatformBody is the cloud platform (platform as a service) create
// body; the specification shows none, this one is of our design
// (docs/services.md).
type CloudPlatformBody struct {
	AccountID     string             `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	Runtime       string             `json:"runtime" required:"true" enum:"nodejs20,python312,go123,java21,dotnet8,ruby33,container" maxLength:"20" example:"nodejs20" doc:"Required: nodejs20, python312, go123, java21, dotnet8, ruby33 or container"`
	Region        string             `json:"region" required:"true" minLength:"1" maxLength:"30" example:"us-east-1" doc:"Required: a region id"`
	Environments  []string           `json:"environments" required:"true" minItems:"1" pattern:"^[a-z][a-z0-9-]{0,29}$" example:"[\"production\"]" maxItems:"10" doc:"Required: 1 to 10 environment names (lowercase letters, digits, dashes), e.g. production, staging"`
	InstanceSize  string             `json:"instance_size" required:"true" enum:"small,medium,large,xlarge" maxLength:"10" example:"medium" doc:"Required: small (1 vCPU), medium (2), large (4) or xlarge (8)"`
	Instances     *PlatformInstances `json:"instances,omitempty" doc:"Instances per environment; default {min: 1, max: 3}"`
	CustomDomains []string           `json:"custom_domains,omitempty" maxItems:"20" doc:"Host names served by the platform"`
	Database      *PlatformDatabase  `json:"database,omitempty"`
	SLA           string             `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard or premium (the offer's options); default standard"`
	OrderExtras
}

// ServiceKind returns cloud_platform.
func (b *CloudPlatformBody) ServiceKind() string { return KindCloudPlatform }

var (
	platformRuntimes = []string{"nodejs20", "python312", "go123", "java21", "dotnet8", "ruby33", "container"}
	instanceSizes    = map[string]int{"small": 1, "medium": 2, "large": 4, "xlarge": 8}
	databaseEngines  = []string{"postgres", "mysql", "redis"}
)

// InstanceSizeVCPUs returns the vCPUs of an application platform instance size (0 when unknown).
func InstanceSizeVCPUs(size string) int { return instanceSizes[size] }

func (b *CloudPlatformBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.Runtime)
	if p.required(o.ServiceType != "", "runtime") {
		v.Check(slices.Contains(platformRuntimes, o.ServiceType), "runtime", "must be one of "+strings.Join(platformRuntimes, ", "))
	} else {
		o.ServiceType = "container"
	}
	region := "us-east-1"
	if p.required(strings.TrimSpace(b.Region) != "", "region") {
		if r := p.checkRegions("region", []string{b.Region}, 1, 1, false); len(r) == 1 {
			region = r[0]
		}
	}
	var envs []string
	if p.required(len(b.Environments) > 0, "environments") {
		if len(b.Environments) > 10 {
			v.Add("environments", "must list at most 10 environments")
		}
		for i, e := range b.Environments {
			e = strings.TrimSpace(e)
			switch {
			case !svcEnvNamePattern.MatchString(e):
				v.Add(fmt.Sprintf("environments[%d]", i), "must be a name of lowercase letters, digits and dashes (at most 30)")
			case slices.Contains(envs, e):
				v.Add(fmt.Sprintf("environments[%d]", i), fmt.Sprintf("%q is listed twice", e))
			default:
				envs = append(envs, e)
			}
		}
	} else {
		envs = []string{"production"}
	}
	size := strings.TrimSpace(b.InstanceSize)
	if p.required(size != "", "instance_size") {
		v.Check(instanceSizes[size] > 0, "instance_size", "must be small, medium, large or xlarge")
	} else {
		size = "small"
	}
	inst := PlatformInstances{Min: 1, Max: 3}
	if b.Instances != nil {
		inst = *b.Instances
		v.Check(inst.Min >= 1 && inst.Min <= 100, "instances.min", "must be from 1 to 100")
		v.Check(inst.Max >= 1 && inst.Max <= 100, "instances.max", "must be from 1 to 100")
		v.Check(inst.Min <= inst.Max, "instances", "min must not exceed max")
	}
	for i, d := range b.CustomDomains {
		v.Check(len(d) <= 253 && svcHostnamePattern.MatchString(d), fmt.Sprintf("custom_domains[%d]", i), "must be a host name, e.g. app.example.com")
	}
	if db := b.Database; db != nil {
		v.Check(slices.Contains(databaseEngines, db.Engine), "database.engine", "must be postgres, mysql or redis")
		if gb, err := ParseSizeGB("database.storage", db.Storage); err != nil || gb < 10 || gb > 16000 {
			v.Add("database.storage", "must be <n>GB from 10GB to 16000GB")
		}
	}
	o.Quantity = max(len(envs), 1)
	if vcpu := instanceSizes[size] * max(inst.Min, 1) * len(envs); vcpu > 0 {
		o.Compute = []ComputeRequest{{Region: region, Pool: "vcpu", Units: vcpu}}
	}
	for _, e := range envs {
		o.Deployment = append(o.Deployment, DeployItem{Type: "application_environment", Name: e, Region: region, Count: 1,
			Spec: map[string]any{"runtime": o.ServiceType, "instance_size": size, "min_instances": inst.Min, "max_instances": inst.Max}})
	}
	return nil
}

// ResponseTimes are a managed security service's response-time targets (spec 2.1).
type ResponseTimes struct {
	Critical string `json:"critical,omitempty" maxLength:"20" example:"15_minutes" doc:"<n>_minutes, <n>_hour or <n>_hours; at least 15 minutes"`
	High     string `json:"high,omitempty" maxLength:"20" example:"1_hour"`
	Medium   string `json:"medium,omitempty" maxLength:"20" example:"4_hours"`
}

// ManagedSecurityBody is the managed security create body (spec 2.1).
type ManagedSecurityBody struct {
	AccountID            string         `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	ServiceType          string         `json:"service_type" required:"true" enum:"managed_soc,managed_detection_response" maxLength:"30" example:"managed_soc" doc:"Required: managed_soc or managed_detection_response"`
	Coverage             string         `json:"coverage" required:"true" enum:"24x7x365,business_hours" maxLength:"20" example:"24x7x365" doc:"Required: 24x7x365 or business_hours"`
	Services             []string       `json:"services" required:"true" minItems:"1" enum:"threat_monitoring,incident_response,vulnerability_management,compliance_reporting" example:"[\"threat_monitoring\"]" maxItems:"4" doc:"Required: threat_monitoring, incident_response, vulnerability_management, compliance_reporting"`
	ThreatIntelligence   bool           `json:"threat_intelligence,omitempty"`
	ComplianceFrameworks []string       `json:"compliance_frameworks,omitempty" maxItems:"6" doc:"soc2, hipaa, pci_dss, iso27001, gdpr, nist_csf; required with compliance_reporting"`
	ResponseTime         *ResponseTimes `json:"response_time,omitempty" doc:"Targets, critical <= high <= medium; default 15_minutes, 1_hour, 4_hours (24x7x365) or 1_hour, 4_hours, 8_hours (business_hours)"`
	SLA                  string         `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"premium or enterprise (the offer's options); default premium"`
	OrderExtras
}

// ServiceKind returns managed_security.
func (b *ManagedSecurityBody) ServiceKind() string { return KindManagedSecurity }

var (
	securityServiceTypes = []string{"managed_soc", "managed_detection_response"}
	coverages            = []string{"24x7x365", "business_hours"}
	securityServices     = []string{"threat_monitoring", "incident_response", "vulnerability_management", "compliance_reporting"}
	complianceFrameworks = []string{"soc2", "hipaa", "pci_dss", "iso27001", "gdpr", "nist_csf"}
)

func (b *ManagedSecurityBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.ServiceType)
	if p.required(o.ServiceType != "", "service_type") {
		v.Check(slices.Contains(securityServiceTypes, o.ServiceType), "service_type", "must be one of "+strings.Join(securityServiceTypes, ", "))
	} else {
		o.ServiceType = "managed_soc"
	}
	coverage := strings.TrimSpace(b.Coverage)
	if p.required(coverage != "", "coverage") {
		v.Check(slices.Contains(coverages, coverage), "coverage", "must be 24x7x365 or business_hours")
	}
	var services []string
	if p.required(len(b.Services) > 0, "services") {
		services = svcCheckList(v, "services", b.Services, securityServices, 1, 4)
	}
	frameworks := svcCheckList(v, "compliance_frameworks", b.ComplianceFrameworks, complianceFrameworks, 0, 6)
	if slices.Contains(services, "compliance_reporting") {
		v.Check(len(frameworks) > 0, "compliance_frameworks", "compliance_reporting needs at least one framework")
	} else if len(frameworks) > 0 && len(b.Services) > 0 {
		v.Add("compliance_frameworks", "frameworks are reported on by compliance_reporting: add it to services")
	}
	if rt := b.ResponseTime; rt != nil {
		floor := 15 * time.Minute
		if coverage == "business_hours" {
			floor = time.Hour
		}
		var prev time.Duration
		for _, x := range []struct{ name, val string }{{"critical", rt.Critical}, {"high", rt.High}, {"medium", rt.Medium}} {
			f := "response_time." + x.name
			if x.val == "" {
				v.Add(f, "is required: <n>_minutes, <n>_hour or <n>_hours")
				continue
			}
			d, err := ParseResponseTime(f, x.val)
			if err != nil {
				v.Add(f, "must be <n>_minutes, <n>_hour or <n>_hours, e.g. 15_minutes or 4_hours")
				continue
			}
			if x.name == "critical" {
				v.Check(d >= floor, f, fmt.Sprintf("must be at least %s with %s coverage", svcHumanDuration(floor), OrDefault(coverage, "this")))
			}
			v.Check(d <= 72*time.Hour, f, "must be at most 72_hours")
			v.Check(d >= prev, f, "must not be shorter than the target of a more severe level")
			prev = d
		}
	}
	o.Features = nil
	return nil
}

func svcHumanDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		n := int(d / time.Hour)
		if n == 1 {
			return "1_hour"
		}
		return fmt.Sprintf("%d_hours", n)
	}
	return fmt.Sprintf("%d_minutes", int(d/time.Minute))
}

// SecurityInfrastructureBody is the cybersecurity infrastructure create
// body; the specification shows none, this one is of our design
// (docs/services.md).
type SecurityInfrastructureBody struct {
	AccountID          string                 `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	InfrastructureType string                 `json:"infrastructure_type" required:"true" enum:"next_gen_firewall,ddos_protection,secure_web_gateway,intrusion_prevention" maxLength:"30" example:"next_gen_firewall" doc:"Required: next_gen_firewall, ddos_protection, secure_web_gateway or intrusion_prevention"`
	Throughput         string                 `json:"throughput" required:"true" maxLength:"20" example:"1gbps" doc:"Required: <n>mbps or <n>gbps, one of the offer's options"`
	Location           *catalog.LocationInput `json:"location,omitempty" doc:"Where the devices sit; one of location and location_id is required"`
	LocationID         string                 `json:"location_id,omitempty" maxLength:"60" example:"loc_austin_congress" doc:"Where the devices sit (or location)"`
	HighAvailability   bool                   `json:"high_availability,omitempty" doc:"Two devices in an active/standby pair"`
	Features           []string               `json:"features,omitempty" maxItems:"10" doc:"ips, url_filtering, antivirus, sandboxing, ssl_inspection, application_control, geo_blocking"`
	ProtectedNetworks  []string               `json:"protected_networks" required:"true" minItems:"1" example:"[\"10.20.0.0/16\"]" maxItems:"50" doc:"Required: 1 to 50 networks in CIDR notation (e.g. 10.20.0.0/16), without host bits, not overlapping"`
	SLA                string                 `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns security_infrastructure.
func (b *SecurityInfrastructureBody) ServiceKind() string { return KindSecurityInfrastructure }

var infrastructureTypes = []string{"next_gen_firewall", "ddos_protection", "secure_web_gateway", "intrusion_prevention"}

func (b *SecurityInfrastructureBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.InfrastructureType)
	if p.required(o.ServiceType != "", "infrastructure_type") {
		v.Check(slices.Contains(infrastructureTypes, o.ServiceType), "infrastructure_type", "must be one of "+strings.Join(infrastructureTypes, ", "))
	} else {
		o.ServiceType = "next_gen_firewall"
	}
	o.Bandwidth = strings.TrimSpace(b.Throughput)
	if !p.required(o.Bandwidth != "", "throughput") {
		o.Bandwidth = quoteDefaultBandwidth(p, o)
	}
	o.LocationID = strings.TrimSpace(b.LocationID)
	switch {
	case b.Location != nil && o.LocationID != "":
		v.Add("location", "give either location or location_id, not both")
	case b.Location != nil:
		o.Location = b.Location.Normalize()
		o.Location.Validate(v, "location")
	case o.LocationID == "":
		if !p.quote {
			v.Add("location", "is required: a postal location {address, city, state, zip} or a location_id from the availability check")
		} else {
			p.missing = append(p.missing, "location")
		}
	}
	prof, _ := LookupKind(KindSecurityInfrastructure)
	o.Features = svcCheckList(v, "features", b.Features, prof.Features, 0, 10)
	if slices.Contains(o.Features, "ssl_inspection") {
		v.Check(o.ServiceType == "next_gen_firewall" || o.ServiceType == "secure_web_gateway", "features", "ssl_inspection needs next_gen_firewall or secure_web_gateway")
	}
	if p.required(len(b.ProtectedNetworks) > 0, "protected_networks") {
		CheckCIDRs(v, "protected_networks", b.ProtectedNetworks, 50)
	}
	o.Quantity = 1
	if b.HighAvailability {
		o.Quantity, o.Redundancy = 2, "dual_path"
	}
	return nil
}

// CheckCIDRs records the issues of a list of networks in CIDR notation:
// each valid, without host bits, none overlapping another, at most max.
// It returns the networks in canonical form.
func CheckCIDRs(v *models.Validator, field string, cidrs []string, maxItems int) []string {
	if len(cidrs) > maxItems {
		v.Add(field, fmt.Sprintf("must list at most %d networks", maxItems))
		return nil
	}
	var out []string
	var seen []svcPrefixAt
	for i, c := range cidrs {
		f := fmt.Sprintf("%s[%d]", field, i)
		pfx, err := svcParsePrefix(c)
		if err != nil {
			v.Add(f, "must be a network in CIDR notation, e.g. 10.20.0.0/16")
			continue
		}
		if pfx.Masked() != pfx {
			v.Add(f, fmt.Sprintf("has host bits set; the network is %s", pfx.Masked()))
			continue
		}
		clash := -1
		for _, s := range seen {
			if s.p.Overlaps(pfx) {
				clash = s.i
				break
			}
		}
		if clash >= 0 {
			v.Add(f, fmt.Sprintf("overlaps %s[%d]", field, clash))
			continue
		}
		seen = append(seen, svcPrefixAt{pfx, i})
		out = append(out, pfx.String())
	}
	return out
}

type svcPrefixAt struct {
	p netip.Prefix
	i int
}

func svcParsePrefix(s string) (netip.Prefix, error) { return netip.ParsePrefix(strings.TrimSpace(s)) }

// AIModel is a model an AI platform serves (spec 2.1).
type AIModel struct {
	Name      string `json:"name" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$" maxLength:"100" example:"churn-predictor" doc:"Required: letters, digits, dots, dashes, underscores"`
	Type      string `json:"type" required:"true" enum:"classification,regression,forecasting,clustering,recommendation,language_model,embedding,object_detection,image_classification,anomaly_detection" maxLength:"30" example:"classification" doc:"Required: classification, regression, forecasting, clustering, recommendation, language_model, embedding, object_detection, image_classification or anomaly_detection"`
	Framework string `json:"framework" required:"true" enum:"pytorch,tensorflow,scikit_learn,xgboost,onnx,huggingface,jax" maxLength:"30" example:"pytorch" doc:"Required: pytorch, tensorflow, scikit_learn, xgboost, onnx, huggingface or jax"`
}

// AIPlatformBody is the AI platform create body (spec 2.1).
type AIPlatformBody struct {
	AccountID    string    `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	PlatformType string    `json:"platform_type" required:"true" enum:"enterprise_ai,machine_learning,inference,mlops" maxLength:"30" example:"enterprise_ai" doc:"Required: enterprise_ai, machine_learning, inference or mlops"`
	Capabilities []string  `json:"capabilities" required:"true" minItems:"1" enum:"natural_language_processing,computer_vision,predictive_analytics,recommendation_engine" example:"[\"natural_language_processing\"]" maxItems:"4" doc:"Required: natural_language_processing, computer_vision, predictive_analytics, recommendation_engine"`
	ComputeTier  string    `json:"compute_tier" required:"true" enum:"cpu_standard,gpu_optimized,gpu_high_memory" maxLength:"30" example:"gpu_optimized" doc:"Required: cpu_standard, gpu_optimized or gpu_high_memory"`
	DataSources  []string  `json:"data_sources,omitempty" maxItems:"20" doc:"Names or addresses of the data sources, at most 200 characters each"`
	Models       []AIModel `json:"models,omitempty" maxItems:"20" doc:"Models to serve, unique names"`
	Region       string    `json:"region,omitempty" maxLength:"30" doc:"A region id; default us-east-1"`
	SLA          string    `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns ai_platform.
func (b *AIPlatformBody) ServiceKind() string { return KindAIPlatform }

var (
	aiPlatformTypes = []string{"enterprise_ai", "machine_learning", "inference", "mlops"}
	aiCapabilities  = []string{"natural_language_processing", "computer_vision", "predictive_analytics", "recommendation_engine"}
	computeTiers    = []string{"cpu_standard", "gpu_optimized", "gpu_high_memory"}
	aiModelTypes    = []string{"classification", "regression", "forecasting", "clustering", "recommendation", "language_model", "embedding", "object_detection", "image_classification", "anomaly_detection"}
	aiFrameworks    = []string{"pytorch", "tensorflow", "scikit_learn", "xgboost", "onnx", "huggingface", "jax"}
)

func (b *AIPlatformBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.PlatformType)
	if p.required(o.ServiceType != "", "platform_type") {
		v.Check(slices.Contains(aiPlatformTypes, o.ServiceType), "platform_type", "must be one of "+strings.Join(aiPlatformTypes, ", "))
	} else {
		o.ServiceType = "enterprise_ai"
	}
	var caps []string
	if p.required(len(b.Capabilities) > 0, "capabilities") {
		caps = svcCheckList(v, "capabilities", b.Capabilities, aiCapabilities, 1, 4)
	}
	tier := strings.TrimSpace(b.ComputeTier)
	if p.required(tier != "", "compute_tier") {
		v.Check(slices.Contains(computeTiers, tier), "compute_tier", "must be one of "+strings.Join(computeTiers, ", "))
	} else {
		tier = "cpu_standard"
	}
	if slices.Contains(caps, "computer_vision") && tier == "cpu_standard" {
		v.Add("compute_tier", "computer_vision needs a GPU tier: gpu_optimized or gpu_high_memory")
	}
	if len(b.DataSources) > 20 {
		v.Add("data_sources", "must list at most 20 sources")
	}
	for i, d := range b.DataSources {
		d = strings.TrimSpace(d)
		v.Check(d != "" && len(d) <= 200 && !strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 }), fmt.Sprintf("data_sources[%d]", i), "must be 1 to 200 printable characters")
	}
	var names []string
	for i, m := range b.Models {
		f := fmt.Sprintf("models[%d]", i)
		switch {
		case !svcModelPattern.MatchString(m.Name):
			v.Add(f+".name", "is required: letters, digits, dots, dashes and underscores, at most 100")
		case slices.Contains(names, m.Name):
			v.Add(f+".name", fmt.Sprintf("%q is listed twice", m.Name))
		default:
			names = append(names, m.Name)
		}
		v.Check(slices.Contains(aiModelTypes, m.Type), f+".type", "must be one of "+strings.Join(aiModelTypes, ", "))
		v.Check(slices.Contains(aiFrameworks, strings.ReplaceAll(m.Framework, "-", "_")), f+".framework", "must be one of "+strings.Join(aiFrameworks, ", "))
	}
	region := "us-east-1"
	if strings.TrimSpace(b.Region) != "" {
		if r := p.checkRegions("region", []string{b.Region}, 1, 1, false); len(r) == 1 {
			region = r[0]
		}
	}
	models := max(len(b.Models), 1)
	o.Quantity = models
	switch tier {
	case "gpu_optimized":
		o.Compute = []ComputeRequest{{Region: region, Pool: "gpu", Units: models}}
	case "gpu_high_memory":
		o.Compute = []ComputeRequest{{Region: region, Pool: "gpu", Units: 2 * models}}
	default:
		o.Compute = []ComputeRequest{{Region: region, Pool: "vcpu", Units: 4 * models}}
	}
	for _, m := range b.Models {
		o.Deployment = append(o.Deployment, DeployItem{Type: "model_endpoint", Name: m.Name, Region: region, Count: 1,
			Spec: map[string]any{"type": m.Type, "framework": m.Framework, "compute_tier": tier}})
	}
	if len(b.Models) == 0 {
		o.Deployment = append(o.Deployment, DeployItem{Type: "workspace", Name: "default", Region: region, Count: 1, Spec: map[string]any{"compute_tier": tier}})
	}
	return nil
}
