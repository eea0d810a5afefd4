package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// OrganizationItem is an organization as answered (DECISIONS 11).
type OrganizationItem struct {
	ID         string     `json:"id" example:"org_3fK9aZ"`
	Name       string     `json:"name"`
	Plan       string     `json:"plan" enum:"developer,business,enterprise,custom"`
	CustomerID string     `json:"customer_id" example:"cust_8Hq2"`
	Limits     PlanLimits `json:"limits"`
	CreatedAt  string     `json:"created_at"`
	UpdatedAt  string     `json:"updated_at"`
	// AccessPolicy is always present; empty lists and a null window restrict nothing.
	AccessPolicy AccessPolicyItem `json:"access_policy"`
}

// AccessPolicyBody is an organization's access policy as sent: every rule
// is optional, and the policy replaces the previous one as a whole
// (docs/authentication.md, "Access restrictions").
type AccessPolicyBody struct {
	IPAllowList      []string              `json:"ip_allowlist,omitempty" maxItems:"100" doc:"IP addresses or CIDR ranges every request must come from" example:"[\"203.0.113.0/24\"]"`
	AllowedCountries []string              `json:"allowed_countries,omitempty" maxItems:"300" doc:"ISO 3166-1 alpha-2 codes: requests only from these countries (an address of unknown country is refused)" example:"[\"US\",\"CA\"]"`
	DeniedCountries  []string              `json:"denied_countries,omitempty" maxItems:"300" doc:"ISO 3166-1 alpha-2 codes: never from these countries"`
	TimeRestrictions *TimeRestrictionsBody `json:"time_restrictions,omitempty" doc:"weekly window in which requests are allowed"`
}

// TimeRestrictionsBody is a weekly window: on days, from start (inclusive)
// to end (exclusive), wall-clock time in timezone; an end before start is
// an overnight window closing the next day.
type TimeRestrictionsBody struct {
	Timezone string   `json:"timezone,omitempty" maxLength:"64" example:"America/New_York" doc:"IANA time zone (default UTC)"`
	Days     []string `json:"days,omitempty" maxItems:"7" example:"[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"]" doc:"mon, tue, wed, thu, fri, sat, sun: the days a window opens (default every day)"`
	Start    string   `json:"start" maxLength:"5" example:"08:00" doc:"HH:MM, 00:00 to 23:59"`
	End      string   `json:"end" maxLength:"5" example:"18:00" doc:"HH:MM, 00:00 to 24:00; before start: overnight"`
}

// AccessPolicyItem is an organization's access policy as answered.
type AccessPolicyItem struct {
	IPAllowList      []string              `json:"ip_allowlist"`
	AllowedCountries []string              `json:"allowed_countries"`
	DeniedCountries  []string              `json:"denied_countries"`
	TimeRestrictions *TimeRestrictionsItem `json:"time_restrictions" doc:"null: any time"`
}

// TimeRestrictionsItem is a weekly window as answered.
type TimeRestrictionsItem struct {
	_        struct{} `nullable:"true"` // answered as null where there is none
	Timezone string   `json:"timezone" example:"America/New_York"`
	Days     []string `json:"days" doc:"the days a window opens; empty: every day"`
	Start    string   `json:"start" example:"08:00"`
	End      string   `json:"end" example:"18:00"`
}

func accessPolicyItem(p *models.AccessPolicy) AccessPolicyItem {
	out := AccessPolicyItem{IPAllowList: []string{}, AllowedCountries: []string{}, DeniedCountries: []string{}}
	if p == nil {
		return out
	}
	out.IPAllowList, out.AllowedCountries, out.DeniedCountries = nonNil(p.IPAllowList), nonNil(p.AllowedCountries), nonNil(p.DeniedCountries)
	if tr := p.TimeRestrictions; tr != nil {
		out.TimeRestrictions = &TimeRestrictionsItem{Timezone: tr.Timezone, Days: nonNil(tr.Days), Start: tr.Start, End: tr.End}
	}
	return out
}

func (b *AccessPolicyBody) policy() *models.AccessPolicy {
	if b == nil {
		return nil
	}
	p := &models.AccessPolicy{IPAllowList: b.IPAllowList, AllowedCountries: b.AllowedCountries, DeniedCountries: b.DeniedCountries}
	if tr := b.TimeRestrictions; tr != nil {
		p.TimeRestrictions = &models.TimeRestrictions{Timezone: tr.Timezone, Days: tr.Days, Start: tr.Start, End: tr.End}
	}
	return p
}

// PlanLimits are an organization's effective plan limits (0 = unlimited).
type PlanLimits struct {
	HourlyLimit     int          `json:"hourly_limit" doc:"Cost units per hour"`
	BurstLimit      int          `json:"burst_limit" doc:"Cost units per 60 seconds"`
	ConcurrentLimit int          `json:"concurrent_limit" doc:"Requests in flight at once"`
	MonthlyIncluded int64        `json:"monthly_included" doc:"Requests per month included in the plan"`
	OveragePer1000  models.Money `json:"overage_per_1000_requests" doc:"Price of 1,000 requests beyond the included volume" example:"0.80"`
	Currency        string       `json:"currency" example:"USD"`
}

// CustomLimits are the negotiated limits of a custom plan (0 = unlimited).
type CustomLimits struct {
	Hourly     int `json:"hourly" minimum:"0"`
	Burst      int `json:"burst" minimum:"0"`
	Concurrent int `json:"concurrent" minimum:"0"`
}

func organizationItem(o *models.Organization) OrganizationItem {
	l := o.Limits()
	return OrganizationItem{ID: o.ID, Name: o.Name, Plan: string(o.Plan), CustomerID: o.CustomerID,
		Limits: PlanLimits{HourlyLimit: l.HourlyLimit, BurstLimit: l.BurstLimit, ConcurrentLimit: l.Concurrent,
			MonthlyIncluded: l.MonthlyIncluded, OveragePer1000: models.Money(l.OverageMicros / 10), Currency: "USD"},
		CreatedAt: models.Timestamp(o.CreatedAt), UpdatedAt: models.Timestamp(o.UpdatedAt), AccessPolicy: accessPolicyItem(o.AccessPolicy)}
}

func (b OrganizationBody) input(origin models.RequestOrigin) identity.OrganizationInput {
	in := identity.OrganizationInput{Name: b.Name, Plan: models.Plan(b.Plan), CustomerID: b.CustomerID, AccessPolicy: b.AccessPolicy.policy(), Origin: origin}
	if c := b.CustomLimits; c != nil {
		in.CustomLimits = &models.RateLimits{Hourly: c.Hourly, Burst: c.Burst, Concurrent: c.Concurrent}
	}
	return in
}

// OrganizationCreateBody is the body of organization create: the update's
// fields, with name and plan required.
type OrganizationCreateBody struct {
	Name         string            `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Acme Corp" doc:"Required"`
	Plan         string            `json:"plan" required:"true" enum:"developer,business,enterprise,custom" doc:"Required"`
	CustomerID   string            `json:"customer_id,omitempty" maxLength:"40"`
	CustomLimits *CustomLimits     `json:"custom_limits,omitempty" doc:"Negotiated limits; only with plan custom"`
	AccessPolicy *AccessPolicyBody `json:"access_policy,omitempty" doc:"The access policy (IP allow-list, countries, time window) that binds every credential of the organization"`
}

// OrganizationBody is the body of organization update (any of the fields).
type OrganizationBody struct {
	Name         string            `json:"name,omitempty" maxLength:"200" example:"Acme Corp"`
	Plan         string            `json:"plan,omitempty" enum:"developer,business,enterprise,custom"`
	CustomerID   string            `json:"customer_id,omitempty" maxLength:"40"`
	CustomLimits *CustomLimits     `json:"custom_limits,omitempty" doc:"Negotiated limits; only with plan custom"`
	AccessPolicy *AccessPolicyBody `json:"access_policy,omitempty" doc:"Replaces the access policy (IP allow-list, countries, time window) that binds every credential of the organization; {} removes it, absent keeps it"`
}

// OrganizationOutput wraps one organization.
type OrganizationOutput struct {
	Status int
	Body   struct {
		Envelope
		Organization OrganizationItem `json:"organization"`
	}
}

// AccessPolicyOutput is the caller's organization's access policy.
type AccessPolicyOutput struct {
	Body struct {
		Envelope
		OrganizationID string           `json:"organization_id"`
		AccessPolicy   AccessPolicyItem `json:"access_policy"`
	}
}

// OrganizationsOutput is a page of organizations.
type OrganizationsOutput struct {
	Body struct {
		Envelope
		Organizations []OrganizationItem `json:"organizations"`
		Pagination    Pagination         `json:"pagination"`
	}
}

func organizationOutput(o *models.Organization, status int) *OrganizationOutput {
	out := &OrganizationOutput{Status: status}
	out.Body.Organization = organizationItem(o)
	return out
}

func (s *Server) registerOrganizations() {
	tags := []string{"Administration"}
	register(s, huma.Operation{OperationID: "create-organization", Method: http.MethodPost, Path: "/organizations", Summary: "Create an organization (tenant)", Tags: tags, DefaultStatus: http.StatusCreated},
		access{admin: true}, func(ctx context.Context, in *struct{ Body OrganizationCreateBody }) (*OrganizationOutput, error) {
			org, err := s.identity.CreateOrganization(ctx, principal(ctx), OrganizationBody(in.Body).input(s.requestOrigin(ctx)))
			if err != nil {
				return nil, err
			}
			return organizationOutput(org, http.StatusCreated), nil
		})
	register(s, huma.Operation{OperationID: "list-organizations", Method: http.MethodGet, Path: "/organizations", Summary: "List organizations", Tags: tags},
		access{admin: true}, func(ctx context.Context, in *struct{ ListParams }) (*OrganizationsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			orgs, total, err := s.identity.ListOrganizations(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &OrganizationsOutput{}
			out.Body.Organizations = mapSlice(orgs, organizationItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-organization", Method: http.MethodGet, Path: "/organizations/{organization_id}", Summary: "Get an organization", Tags: tags},
		access{admin: true}, func(ctx context.Context, in *struct {
			ID string `path:"organization_id" maxLength:"64"`
		}) (*OrganizationOutput, error) {
			org, err := s.identity.GetOrganization(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return organizationOutput(org, http.StatusOK), nil
		})
	register(s, huma.Operation{OperationID: "update-organization", Method: http.MethodPut, Path: "/organizations/{organization_id}", Summary: "Update an organization", Tags: tags},
		access{admin: true}, func(ctx context.Context, in *struct {
			ID   string `path:"organization_id" maxLength:"64"`
			Body OrganizationBody
		}) (*OrganizationOutput, error) {
			org, err := s.identity.UpdateOrganization(ctx, principal(ctx), in.ID, in.Body.input(s.requestOrigin(ctx)))
			if err != nil {
				return nil, err
			}
			return organizationOutput(org, http.StatusOK), nil
		})
	register(s, huma.Operation{OperationID: "get-access-policy", Method: http.MethodGet, Path: "/auth/access-policy",
		Summary:     "Get your organization's access policy",
		Description: "The IP allow-list, country rules and time window that bind every credential of the caller's organization. Provider administrators set them with PUT /organizations/{organization_id}.",
		Tags:        []string{"Authentication"}},
		access{permission: "auth:manage"}, func(ctx context.Context, _ *struct{}) (*AccessPolicyOutput, error) {
			p := principal(ctx)
			org, err := s.identity.GetOrganization(ctx, p, p.OrganizationID)
			if err != nil {
				return nil, err
			}
			out := &AccessPolicyOutput{}
			out.Body.OrganizationID, out.Body.AccessPolicy = org.ID, accessPolicyItem(org.AccessPolicy)
			return out, nil
		})
}
