package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
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
		CreatedAt: models.Timestamp(o.CreatedAt), UpdatedAt: models.Timestamp(o.UpdatedAt)}
}

func (b OrganizationBody) input() models.OrganizationInput {
	in := models.OrganizationInput{Name: b.Name, Plan: models.Plan(b.Plan), CustomerID: b.CustomerID}
	if c := b.CustomLimits; c != nil {
		in.CustomLimits = &models.RateLimits{Hourly: c.Hourly, Burst: c.Burst, Concurrent: c.Concurrent}
	}
	return in
}

// OrganizationBody is the body of organization create and update.
type OrganizationBody struct {
	Name         string        `json:"name,omitempty" maxLength:"200" example:"Acme Corp"`
	Plan         string        `json:"plan,omitempty" enum:"developer,business,enterprise,custom"`
	CustomerID   string        `json:"customer_id,omitempty" maxLength:"40"`
	CustomLimits *CustomLimits `json:"custom_limits,omitempty" doc:"Negotiated limits; only with plan custom"`
}

// OrganizationOutput wraps one organization.
type OrganizationOutput struct {
	Status int
	Body   struct {
		Envelope
		Organization OrganizationItem `json:"organization"`
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
		access{admin: true}, func(ctx context.Context, in *struct{ Body OrganizationBody }) (*OrganizationOutput, error) {
			org, err := s.store.CreateOrganization(ctx, principal(ctx), in.Body.input())
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
			orgs, total, err := s.store.ListOrganizations(ctx, principal(ctx), pr)
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
			org, err := s.store.GetOrganization(ctx, principal(ctx), in.ID)
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
			org, err := s.store.UpdateOrganization(ctx, principal(ctx), in.ID, in.Body.input())
			if err != nil {
				return nil, err
			}
			return organizationOutput(org, http.StatusOK), nil
		})
}
