package models

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Organization is a customer tenant (or the provider's own organization,
// whose staff act across tenants).
type Organization struct {
	ID         string `gorm:"primaryKey;size:40" json:"id"`
	Name       string `gorm:"size:200;not null" json:"name"`
	Plan       Plan   `gorm:"size:20;not null" json:"plan"`
	CustomerID string `gorm:"size:40;uniqueIndex;not null" json:"customer_id"`
	Provider   bool   `gorm:"not null;default:false" json:"-"`
	// Custom-plan limits (used only when Plan is custom; 0 = unlimited).
	CustomHourly     int       `gorm:"not null;default:0" json:"-"`
	CustomBurst      int       `gorm:"not null;default:0" json:"-"`
	CustomConcurrent int       `gorm:"not null;default:0" json:"-"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	// AccessPolicy holds the secondary access controls that bind every
	// credential of the organization (nil: none); see AccessPolicy.
	AccessPolicy *AccessPolicy `gorm:"serializer:json;type:text" json:"access_policy,omitempty"`
}

// OrganizationInput is the body of create and update.
type OrganizationInput struct {
	Name         string
	Plan         Plan
	CustomerID   string
	CustomLimits *RateLimits // custom plan only
	// AccessPolicy replaces the organization's access policy when not nil
	// (an empty policy removes every restriction); nil leaves it as it is.
	AccessPolicy *AccessPolicy
	// Origin is where the request making the change comes from: a policy
	// that would refuse it on the caller's own organization is refused.
	Origin RequestOrigin
}

// Limits returns the organization's plan limits, with the negotiated numbers
// of a custom plan.
func (o *Organization) Limits() PlanLimits {
	l := o.Plan.Limits()
	if o.Plan == PlanCustom {
		l.HourlyLimit, l.BurstLimit, l.Concurrent = o.CustomHourly, o.CustomBurst, o.CustomConcurrent
	}
	return l
}

func (in *OrganizationInput) validate(creating bool) error {
	var v Validator
	in.Name = strings.TrimSpace(in.Name)
	if creating || in.Name != "" {
		v.Check(in.Name != "", "name", "is required")
		v.Check(len(in.Name) <= 200, "name", "must be at most 200 characters")
	}
	if creating || in.Plan != "" {
		v.Check(in.Plan.Valid(), "plan", "must be one of developer, business, enterprise, custom")
	}
	if in.CustomerID != "" {
		v.Check(HasPrefix(in.CustomerID, PrefixCustomer), "customer_id", "must look like cust_...")
	}
	if c := in.CustomLimits; c != nil {
		v.Check(in.Plan == PlanCustom, "custom_limits", "apply only to the custom plan (send plan: custom)")
		v.Check(c.Hourly >= 0 && c.Burst >= 0 && c.Concurrent >= 0, "custom_limits", "must not be negative (0 = unlimited)")
		v.Check(c.Burst == 0 || c.Burst >= 3, "custom_limits.burst", "must be 0 or at least 3 (the cost of a DELETE)")
		v.Check(c.Hourly == 0 || c.Hourly >= 3, "custom_limits.hourly", "must be 0 or at least 3 (the cost of a DELETE)")
	}
	if in.AccessPolicy != nil {
		in.AccessPolicy = normalizeAccessPolicy(&v, "access_policy", *in.AccessPolicy)
	}
	return v.Err()
}

// CreateOrganization creates a tenant, with its access policy when given.
// Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS (not an admin),
// SERVICE_CONFLICT (customer_id taken).
func (s *Store) CreateOrganization(ctx context.Context, p *Principal, in OrganizationInput) (*Organization, error) {
	if !p.IsAdmin() {
		return nil, Errorf(CodeInsufficientPermissions, "only provider administrators can create organizations")
	}
	if err := in.validate(true); err != nil {
		return nil, err
	}
	org := &Organization{ID: NewID(PrefixOrganization), Name: in.Name, Plan: in.Plan, CustomerID: in.CustomerID}
	if c := in.CustomLimits; c != nil {
		org.CustomHourly, org.CustomBurst, org.CustomConcurrent = c.Hourly, c.Burst, c.Concurrent
	}
	if !in.AccessPolicy.Empty() {
		org.AccessPolicy = in.AccessPolicy
	}
	if org.CustomerID == "" {
		org.CustomerID = NewID(PrefixCustomer)
	}
	if err := s.In(ctx, SystemScope()).Create(org).Error; err != nil {
		if isUniqueViolation(err) {
			return nil, Errorf(CodeAlreadyExists, "customer_id %s already belongs to another organization", in.CustomerID)
		}
		return nil, DBErr(err)
	}
	return org, nil
}

// GetOrganization returns one organization: admins see any, others their own.
// Errors: NOT_FOUND.
func (s *Store) GetOrganization(ctx context.Context, p *Principal, id string) (*Organization, error) {
	if !p.IsStaff() && id != p.OrganizationID {
		return nil, NotFound("organization")
	}
	var org Organization
	err := s.In(ctx, SystemScope()).Where("id = ?", id).Take(&org).Error
	return &org, NotFoundOr(err, "organization")
}

// ListOrganizations returns a page of organizations: staff see all, others their own.
func (s *Store) ListOrganizations(ctx context.Context, p *Principal, page PageRequest) ([]Organization, int64, error) {
	q := s.In(ctx, SystemScope()).Model(&Organization{})
	if !p.IsStaff() {
		q = q.Where("id = ?", p.OrganizationID)
	}
	var orgs []Organization
	total, err := Paginate(q, page, organizationSorts, &orgs)
	return orgs, total, err
}

var organizationSorts = SortFields{"created_at": "created_at", "name": "name", "plan": "plan"}

// UpdateOrganization changes name, plan, customer_id, custom limits or the
// access policy (replaced as a whole). A policy that would refuse the
// address or country of the request setting it on the caller's own
// organization is refused, so that administrators cannot lock themselves
// out. Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) UpdateOrganization(ctx context.Context, p *Principal, id string, in OrganizationInput) (*Organization, error) {
	if !p.IsAdmin() {
		return nil, Errorf(CodeInsufficientPermissions, "only provider administrators can change organizations")
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if id == p.OrganizationID {
		var v Validator
		checkLockout(&v, "access_policy", in.AccessPolicy, in.Origin)
		if err := v.Err(); err != nil {
			return nil, err
		}
	}
	org, err := s.GetOrganization(ctx, p, id)
	if err != nil {
		return nil, err
	}
	updates := map[string]any{}
	if in.Name != "" {
		updates["name"] = in.Name
	}
	if in.Plan != "" {
		updates["plan"] = in.Plan
	}
	if in.CustomerID != "" {
		updates["customer_id"] = in.CustomerID
	}
	if c := in.CustomLimits; c != nil {
		updates["custom_hourly"], updates["custom_burst"], updates["custom_concurrent"] = c.Hourly, c.Burst, c.Concurrent
	}
	if in.AccessPolicy != nil {
		updates["access_policy"] = storedPolicy(in.AccessPolicy)
	}
	if len(updates) > 0 {
		err := s.In(ctx, SystemScope()).Model(org).Updates(updates).Error
		if isUniqueViolation(err) {
			return nil, Errorf(CodeAlreadyExists, "customer_id %s already belongs to another organization", in.CustomerID)
		}
		if err != nil {
			return nil, DBErr(err)
		}
	}
	return s.GetOrganization(ctx, p, id)
}

// EnsureProviderOrganization returns the provider's own organization, creating it once.
func (s *Store) EnsureProviderOrganization(ctx context.Context) (*Organization, error) {
	db := s.In(ctx, SystemScope())
	var org Organization
	err := db.Where("provider = ?", true).Order("created_at").Take(&org).Error
	if err == nil {
		return &org, nil
	}
	if err != gorm.ErrRecordNotFound {
		return nil, DBErr(err)
	}
	org = Organization{ID: NewID(PrefixOrganization), Name: "Platform operator", Plan: PlanCustom, CustomerID: NewID(PrefixCustomer), Provider: true}
	return &org, DBErr(db.Create(&org).Error)
}

// IsUniqueViolation reports whether err is a unique-constraint violation,
// on SQLite or PostgreSQL.
func IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if err == gorm.ErrDuplicatedKey {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "duplicate key value") || strings.Contains(msg, "SQLSTATE 23505")
}
