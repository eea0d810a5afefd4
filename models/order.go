package models

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
)

// Order sources: the category endpoint's body (spec 2.1) or a template (spec 2.2).
const (
	OrderFromInternet = "internet"
	OrderFromTemplate = "template"
)

// Allowed values of the order fields (docs/provisioning.md).
var (
	slaValues        = []string{"standard", "premium", "enterprise"}
	orderCycles      = []string{"monthly"}
	redundancyValues = []string{"none", "dual_path", "diverse_path"}
	monitoringValues = []string{"basic", "standard", "advanced"}
	flexPattern      = regexp.MustCompile(`^([0-9]{1,2})_days?$`)
)

// Scheduling bounds of deployment_schedule.preferred_date.
const (
	maxScheduleAhead = 365 * 24 * time.Hour
	maxSchedulePast  = 24 * time.Hour
	maxFlexibility   = 90
)

// ProvisioningOrder is a validated order for one service at one location:
// what the provisioning workflow carries and its activities re-validate. It
// is plain data (JSON) so that it travels in workflow inputs.
type ProvisioningOrder struct {
	Source           string        `json:"source"`
	AccountID        string        `json:"account_id"`
	Name             string        `json:"name"`
	ServiceType      string        `json:"service_type"`
	Kind             string        `json:"kind"`
	CatalogServiceID string        `json:"catalog_service_id"`
	TemplateID       string        `json:"template_id,omitempty"`
	Bandwidth        string        `json:"bandwidth"`
	BandwidthMbps    int           `json:"bandwidth_mbps"`
	SLA              string        `json:"sla"`
	BillingCycle     string        `json:"billing_cycle"`
	LocationID       string        `json:"location_id"`
	Location         LocationInput `json:"location"`
	Redundancy       string        `json:"redundancy"`
	Monitoring       string        `json:"monitoring"`
	PreferredDate    *time.Time    `json:"preferred_date,omitempty"`
	Flexibility      string        `json:"flexibility,omitempty"`
	TechnicalContact string        `json:"technical_contact,omitempty"`
	BillingContact   string        `json:"billing_contact,omitempty"`
}

// InternetInput is the internet service create body (spec 2.1).
type InternetInput struct {
	AccountID    string
	ServiceType  string
	Bandwidth    string
	Location     LocationInput
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
	Location         *LocationInput
	LocationID       string
}

// PrepareInternetOrder validates an internet service body (spec 2.1) for
// principal p: every field, the billing account (an acct_ of the caller's
// tenant; staff may name any tenant's), and availability at the location.
// It returns the order and the scope (tenant) it belongs to.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH.
func (s *Store) PrepareInternetOrder(ctx context.Context, p *Principal, in InternetInput) (*ProvisioningOrder, Scope, error) {
	o := &ProvisioningOrder{
		Source: OrderFromInternet, AccountID: strings.TrimSpace(in.AccountID), ServiceType: strings.TrimSpace(in.ServiceType),
		Bandwidth: strings.TrimSpace(in.Bandwidth), SLA: strings.TrimSpace(in.SLA), BillingCycle: strings.TrimSpace(in.BillingCycle),
		Location: in.Location.Normalize(), Redundancy: "none", Monitoring: "standard",
	}
	if o.BillingCycle == "" {
		o.BillingCycle = "monthly"
	}
	var v Validator
	v.Check(o.AccountID != "", "account_id", "is required")
	if st, ok := LookupServiceType(o.ServiceType); !ok || st.Kind != KindInternet {
		v.Add("service_type", "must be one of "+strings.Join(serviceTypeNames(KindInternet), ", "))
	}
	o.Location.Validate(&v, "location")
	if err := s.checkOrderFields(ctx, &v, o); err != nil {
		return nil, Scope{}, err
	}
	if err := v.Err(); err != nil {
		return nil, Scope{}, err
	}
	return s.completeOrder(ctx, p, o)
}

// PrepareTemplateOrder validates a provisioning request (spec 2.2) for
// principal p: the template (from the catalog), customizations, schedule,
// contacts, account and location, and availability at the location.
// Errors: VALIDATION_ERROR, LOCATION_NOT_SERVICEABLE,
// SERVICE_UNAVAILABLE_AT_LOCATION, INSUFFICIENT_BANDWIDTH.
func (s *Store) PrepareTemplateOrder(ctx context.Context, p *Principal, in TemplateInput) (*ProvisioningOrder, Scope, error) {
	var v Validator
	in.ServiceTemplate = strings.TrimSpace(in.ServiceTemplate)
	if in.ServiceTemplate == "" {
		v.Add("service_template", "is required")
		return nil, Scope{}, v.Err()
	}
	tpl, err := s.Template(ctx, p.Environment, in.ServiceTemplate)
	if err != nil {
		return nil, Scope{}, err
	}
	st, _ := LookupServiceType(tpl.ServiceType)
	o := &ProvisioningOrder{
		Source: OrderFromTemplate, TemplateID: tpl.ID, AccountID: strings.TrimSpace(in.AccountID), ServiceType: tpl.ServiceType,
		Kind: st.Kind, Bandwidth: orDefault(strings.TrimSpace(in.Bandwidth), tpl.DefaultBandwidth), SLA: tpl.DefaultSLA,
		BillingCycle: "monthly", Redundancy: orDefault(strings.TrimSpace(in.Redundancy), tpl.Redundancy),
		Monitoring: orDefault(strings.TrimSpace(in.Monitoring), tpl.Monitoring), PreferredDate: in.PreferredDate,
		Flexibility: strings.TrimSpace(in.Flexibility), TechnicalContact: strings.TrimSpace(in.TechnicalContact),
		BillingContact: strings.TrimSpace(in.BillingContact), LocationID: strings.TrimSpace(in.LocationID),
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
		return nil, Scope{}, err
	}
	if err := v.Err(); err != nil {
		return nil, Scope{}, err
	}
	if o.AccountID == "" {
		var acct BillingAccount
		err := s.In(ctx, p.OwnScope()).Order("created_at, id").Take(&acct).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, Scope{}, Invalid(FieldIssue{Field: "account_id", Issue: "is required: the organization has no billing account yet"})
		}
		if err != nil {
			return nil, Scope{}, dbErr(err)
		}
		o.AccountID = acct.ID
	}
	return s.completeOrder(ctx, p, o)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// checkOrderFields records the issues of the fields every order has:
// bandwidth and SLA against the catalog offer of the service type, billing
// cycle, redundancy, monitoring, schedule and contacts. It fills Kind,
// CatalogServiceID and BandwidthMbps. It fails only on database errors.
func (s *Store) checkOrderFields(ctx context.Context, v *Validator, o *ProvisioningOrder) error {
	st, ok := LookupServiceType(o.ServiceType)
	if ok {
		o.Kind, o.CatalogServiceID = st.Kind, st.CatalogServiceID
	}
	mbps, err := ParseBandwidth("bandwidth", o.Bandwidth)
	if err != nil {
		v.Add("bandwidth", "must be a number followed by mbps or gbps in lowercase, e.g. 500mbps or 1gbps")
	}
	o.BandwidthMbps = mbps
	v.Check(slices.Contains(slaValues, o.SLA), "sla", "must be one of standard, premium, enterprise")
	v.Check(slices.Contains(orderCycles, o.BillingCycle), "billing_cycle", "must be monthly")
	v.Check(slices.Contains(redundancyValues, o.Redundancy), "customizations.redundancy", "must be one of "+strings.Join(redundancyValues, ", "))
	v.Check(slices.Contains(monitoringValues, o.Monitoring), "customizations.monitoring", "must be one of "+strings.Join(monitoringValues, ", "))
	if o.AccountID != "" {
		v.Check(HasPrefix(o.AccountID, PrefixAccount), "account_id", "must be a billing account id (acct_...)")
	}
	if o.LocationID != "" {
		v.Check(HasPrefix(o.LocationID, PrefixLocation), "location_id", "must be a location id (loc_...)")
	}
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
	if o.TechnicalContact != "" {
		v.Check(validEmail(o.TechnicalContact), "contacts.technical", "must be an e-mail address")
	}
	if o.BillingContact != "" {
		v.Check(validEmail(o.BillingContact), "contacts.billing", "must be an e-mail address")
	}
	if !ok || mbps == 0 {
		return nil
	}
	offer, err := s.CatalogServiceByID(ctx, st.CatalogServiceID)
	if err != nil {
		return err
	}
	if o.Name == "" {
		o.Name = offer.Name + " " + o.Bandwidth
	}
	if len(offer.BandwidthOptions) > 0 {
		v.Check(slices.Contains(offer.BandwidthOptions, o.Bandwidth), "bandwidth", fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.BandwidthOptions, ", ")))
	}
	if slices.Contains(slaValues, o.SLA) && len(offer.SLAOptions) > 0 {
		v.Check(slices.Contains(offer.SLAOptions, o.SLA), "sla", fmt.Sprintf("%s offers %s", offer.Name, strings.Join(offer.SLAOptions, ", ")))
	}
	return nil
}

// completeOrder resolves the account (and with it the tenant) and the
// location, and checks availability.
func (s *Store) completeOrder(ctx context.Context, p *Principal, o *ProvisioningOrder) (*ProvisioningOrder, Scope, error) {
	var acct BillingAccount
	err := s.In(ctx, p.Scope()).Where("id = ?", o.AccountID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, Scope{}, Invalid(FieldIssue{Field: "account_id", Issue: fmt.Sprintf("no billing account %s in this organization", o.AccountID)})
	}
	if err != nil {
		return nil, Scope{}, dbErr(err)
	}
	scope := TenantScope(acct.OrganizationID, p.Environment)
	if err := s.checkAvailability(ctx, scope, o); err != nil {
		return nil, Scope{}, err
	}
	return o, scope, nil
}

// checkAvailability resolves the order's location and requires its service
// type with its bandwidth there.
func (s *Store) checkAvailability(ctx context.Context, scope Scope, o *ProvisioningOrder) error {
	report, err := s.CheckAvailability(ctx, scope, AvailabilityQuery{
		Location: o.Location, LocationID: o.LocationID, ServiceTypes: []string{o.ServiceType}, Bandwidth: o.Bandwidth,
	})
	if err != nil {
		return err
	}
	if err := report.Require(o.ServiceType); err != nil {
		return err
	}
	o.LocationID = report.Location.ID
	o.Location = report.Location.input()
	return nil
}

// ValidateOrder re-validates an order inside the tenant scope it belongs
// to, as the provisioning workflow's first step does: the fields, the
// account, the template, and availability (capacity may have gone since the
// order was accepted). Errors: as PrepareInternetOrder.
func (s *Store) ValidateOrder(ctx context.Context, scope Scope, o *ProvisioningOrder) error {
	var v Validator
	if _, ok := LookupServiceType(o.ServiceType); !ok {
		v.Add("service_type", "must be one of "+strings.Join(serviceTypeNames(""), ", "))
	}
	if o.TemplateID != "" {
		if _, err := s.Template(ctx, scope.Environment, o.TemplateID); err != nil {
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
	var acct BillingAccount
	err = s.In(ctx, scope).Where("id = ?", o.AccountID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Invalid(FieldIssue{Field: "account_id", Issue: fmt.Sprintf("no billing account %s in this organization", o.AccountID)})
	}
	if err != nil {
		return dbErr(err)
	}
	return s.checkAvailability(ctx, scope, o)
}
