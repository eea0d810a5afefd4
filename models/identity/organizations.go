package identity

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// OrganizationInput is the body of create and update.
type OrganizationInput struct {
	Name         string
	Plan         models.Plan
	CustomerID   string
	CustomLimits *models.RateLimits // custom plan only
	// AccessPolicy replaces the organization's access policy when not nil
	// (an empty policy removes every restriction); nil leaves it as it is.
	AccessPolicy *models.AccessPolicy
	// Origin is where the request making the change comes from: a policy
	// that would refuse it on the caller's own organization is refused.
	Origin models.RequestOrigin
}

func (in *OrganizationInput) validate(creating bool) error {
	var v models.Validator
	in.Name = strings.TrimSpace(in.Name)
	if creating || in.Name != "" {
		v.Check(in.Name != "", "name", "is required")
		v.Check(len(in.Name) <= 200, "name", "must be at most 200 characters")
	}
	if creating || in.Plan != "" {
		v.Check(in.Plan.Valid(), "plan", "must be one of developer, business, enterprise, custom")
	}
	if in.CustomerID != "" {
		v.Check(models.HasPrefix(in.CustomerID, models.PrefixCustomer), "customer_id", "must look like cust_...")
	}
	if c := in.CustomLimits; c != nil {
		v.Check(in.Plan == models.PlanCustom, "custom_limits", "apply only to the custom plan (send plan: custom)")
		v.Check(c.Hourly >= 0 && c.Burst >= 0 && c.Concurrent >= 0, "custom_limits", "must not be negative (0 = unlimited)")
		v.Check(c.Burst == 0 || c.Burst >= 3, "custom_limits.burst", "must be 0 or at least 3 (the cost of a DELETE)")
		v.Check(c.Hourly == 0 || c.Hourly >= 3, "custom_limits.hourly", "must be 0 or at least 3 (the cost of a DELETE)")
	}
	if in.AccessPolicy != nil {
		in.AccessPolicy = models.NormalizeAccessPolicy(&v, "access_policy", *in.AccessPolicy)
	}
	return v.Err()
}

// CreateOrganization creates a tenant, with its access policy when given.
// Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS (not an admin),
// SERVICE_CONFLICT (customer_id taken).
func (s *Store) CreateOrganization(ctx context.Context, p *models.Principal, in OrganizationInput) (*models.Organization, error) {
	if !p.IsAdmin() {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can create organizations")
	}
	if err := in.validate(true); err != nil {
		return nil, err
	}
	org := &models.Organization{ID: models.NewID(models.PrefixOrganization), Name: in.Name, Plan: in.Plan, CustomerID: in.CustomerID}
	if c := in.CustomLimits; c != nil {
		org.CustomHourly, org.CustomBurst, org.CustomConcurrent = c.Hourly, c.Burst, c.Concurrent
	}
	if !in.AccessPolicy.Empty() {
		org.AccessPolicy = in.AccessPolicy
	}
	if org.CustomerID == "" {
		org.CustomerID = models.NewID(models.PrefixCustomer)
	}
	if err := s.In(ctx, models.SystemScope()).Create(org).Error; err != nil {
		if models.IsUniqueViolation(err) {
			return nil, models.Errorf(models.CodeAlreadyExists, "customer_id %s already belongs to another organization", in.CustomerID)
		}
		return nil, models.DBErr(err)
	}
	return org, nil
}

// GetOrganization returns one organization: admins see any, others their own.
// Errors: NOT_FOUND.
func (s *Store) GetOrganization(ctx context.Context, p *models.Principal, id string) (*models.Organization, error) {
	if !p.IsStaff() && id != p.OrganizationID {
		return nil, models.NotFound("organization")
	}
	var org models.Organization
	err := s.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&org).Error
	return &org, models.NotFoundOr(err, "organization")
}

// ListOrganizations returns a page of organizations: staff see all, others their own.
func (s *Store) ListOrganizations(ctx context.Context, p *models.Principal, page models.PageRequest) ([]models.Organization, int64, error) {
	q := s.In(ctx, models.SystemScope()).Model(&models.Organization{})
	if !p.IsStaff() {
		q = q.Where("id = ?", p.OrganizationID)
	}
	var orgs []models.Organization
	total, err := models.Paginate(q, page, organizationSorts, &orgs)
	return orgs, total, err
}

var organizationSorts = models.SortFields{"created_at": "created_at", "name": "name", "plan": "plan"}

// UpdateOrganization changes name, plan, customer_id, custom limits or the
// access policy (replaced as a whole). A policy that would refuse the
// address or country of the request setting it on the caller's own
// organization is refused, so that administrators cannot lock themselves
// out. Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS, NOT_FOUND.
func (s *Store) UpdateOrganization(ctx context.Context, p *models.Principal, id string, in OrganizationInput) (*models.Organization, error) {
	if !p.IsAdmin() {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can change organizations")
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if id == p.OrganizationID {
		var v models.Validator
		models.CheckLockout(&v, "access_policy", in.AccessPolicy, in.Origin)
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
		updates["access_policy"] = models.StoredPolicy(in.AccessPolicy)
	}
	if len(updates) > 0 {
		err := s.In(ctx, models.SystemScope()).Model(org).Updates(updates).Error
		if models.IsUniqueViolation(err) {
			return nil, models.Errorf(models.CodeAlreadyExists, "customer_id %s already belongs to another organization", in.CustomerID)
		}
		if err != nil {
			return nil, models.DBErr(err)
		}
	}
	return s.GetOrganization(ctx, p, id)
}

// EnsureProviderOrganization returns the provider's own organization, creating it once.
func (s *Store) EnsureProviderOrganization(ctx context.Context) (*models.Organization, error) {
	db := s.In(ctx, models.SystemScope())
	var org models.Organization
	err := db.Where("provider = ?", true).Order("created_at").Take(&org).Error
	if err == nil {
		return &org, nil
	}
	if err != gorm.ErrRecordNotFound {
		return nil, models.DBErr(err)
	}
	org = models.Organization{ID: models.NewID(models.PrefixOrganization), Name: "Platform operator", Plan: models.PlanCustom, CustomerID: models.NewID(models.PrefixCustomer), Provider: true}
	return &org, models.DBErr(db.Create(&org).Error)
}
