package services

import (
	"context"
	"errors"
	"fmt"
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
	if err := s.CheckOrderFields(ctx, &v, o); err != nil {
		return nil, models.Scope{}, err
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	acct, err := s.defaultAccount(ctx, p, o)
	if err != nil {
		return nil, models.Scope{}, err
	}
	return s.completeOrder(ctx, p, o, acct)
}

// OrderAccount returns the billing account an order or a quote of p is
// for, in one read: accountID in p's organization or, when accountID is
// empty, the organization's oldest billing account. Errors:
// VALIDATION_ERROR (account_id: none exists, or no such account).
func (s *Store) OrderAccount(ctx context.Context, p *models.Principal, accountID string) (*models.BillingAccount, error) {
	if accountID == "" {
		return s.oldestAccount(ctx, p)
	}
	return s.accountByID(ctx, p, accountID)
}

// accountByID reads the billing account id in p's scope. Errors:
// VALIDATION_ERROR (account_id: no such account in the organization).
func (s *Store) accountByID(ctx context.Context, p *models.Principal, id string) (*models.BillingAccount, error) {
	acct := new(models.BillingAccount)
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.Invalid(models.FieldIssue{Field: "account_id", Issue: fmt.Sprintf("no billing account %s in this organization", id)})
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	return acct, nil
}

// defaultAccount gives an order without account_id the organization's
// oldest billing account and returns it (nil when the order named one).
// Errors: VALIDATION_ERROR (none exists).
func (s *Store) defaultAccount(ctx context.Context, p *models.Principal, o *ProvisioningOrder) (*models.BillingAccount, error) {
	if o.AccountID != "" {
		return nil, nil
	}
	acct, err := s.oldestAccount(ctx, p)
	if err != nil {
		return nil, err
	}
	o.AccountID = acct.ID
	return acct, nil
}

// oldestAccount reads the oldest billing account of p's organization.
// Errors: VALIDATION_ERROR (account_id: none exists).
func (s *Store) oldestAccount(ctx context.Context, p *models.Principal) (*models.BillingAccount, error) {
	acct := new(models.BillingAccount)
	err := s.In(ctx, p.OwnScope()).Order("created_at, id").Take(acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.Invalid(models.FieldIssue{Field: "account_id", Issue: "is required: the organization has no billing account yet"})
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	return acct, nil
}

// OrDefault returns v, or def when v is empty.
func OrDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// CheckOrderFields records the issues of the fields every order has:
// bandwidth (for the kinds ordered with one) and SLA against the catalog
// offer, billing cycle, redundancy, monitoring, schedule and contacts. It
// fills Kind, CatalogServiceID (for location service types), BandwidthMbps,
// a default SLA and a default name. It fails only on database errors.
func (s *Store) CheckOrderFields(ctx context.Context, v *models.Validator, o *ProvisioningOrder) error {
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

// CompleteOrder resolves the account (and with it the tenant), checks
// availability and conflicts, and prices the order.
func (s *Store) CompleteOrder(ctx context.Context, p *models.Principal, o *ProvisioningOrder) (*ProvisioningOrder, models.Scope, error) {
	return s.completeOrder(ctx, p, o, nil)
}

// completeOrder is CompleteOrder with the order's account when the caller
// has just read it (defaultAccount), or nil to read it.
func (s *Store) completeOrder(ctx context.Context, p *models.Principal, o *ProvisioningOrder, acct *models.BillingAccount) (*ProvisioningOrder, models.Scope, error) {
	if acct == nil || acct.ID != o.AccountID {
		var err error
		if acct, err = s.accountByID(ctx, p, o.AccountID); err != nil {
			return nil, models.Scope{}, err
		}
	}
	scope := models.TenantScope(acct.OrganizationID, p.Environment)
	if err := s.CheckOrderAvailability(ctx, scope, o); err != nil {
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

// CheckOrderAvailability checks that the network can deliver the order now,
// as scope sees it: bandwidth at every site, compute units in every region,
// phone numbers in every area code; and resolves a located order's location.
// Errors: LOCATION_NOT_SERVICEABLE, SERVICE_UNAVAILABLE_AT_LOCATION,
// INSUFFICIENT_BANDWIDTH, VALIDATION_ERROR (unknown location id).
func (s *Store) CheckOrderAvailability(ctx context.Context, scope models.Scope, o *ProvisioningOrder) error {
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
			alts, err := s.catalog.ComputeAlternatives(ctx, scope, c.Pool, c.Region, units)
			if err != nil {
				return err
			}
			return catalog.ComputeShortage(c.Region, c.Pool, units, left, alts)
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
	err := s.CheckOrderFields(ctx, &v, o)
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
	if err := s.CheckOrderAvailability(ctx, scope, o); err != nil {
		return err
	}
	return s.checkServiceConflict(ctx, scope, o, serviceID)
}
