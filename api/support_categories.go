package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// CategorySLA is an SLA target: first response and resolution times.
type CategorySLA struct {
	ResponseTime   string `json:"response_time" example:"1h"`
	ResolutionTime string `json:"resolution_time" example:"8h"`
}

// PrioritySLA is the SLA target of one priority.
type PrioritySLA struct {
	Priority string `json:"priority" enum:"low,medium,high,critical"`
	CategorySLA
}

// SubcategoryRouting are a subcategory's routing hints.
type SubcategoryRouting struct {
	AutoAssign          string `json:"auto_assign,omitempty"`
	EscalationThreshold string `json:"escalation_threshold,omitempty"`
}

// SubcategoryItem is a subcategory of a support category.
type SubcategoryItem struct {
	ID           string              `json:"id" example:"connectivity"`
	Name         string              `json:"name" example:"Connectivity"`
	RoutingRules *SubcategoryRouting `json:"routing_rules,omitempty"`
}

// SupportCategoryItem is a support category.
type SupportCategoryItem struct {
	ID              string            `json:"id" example:"network"`
	Name            string            `json:"name" example:"Network"`
	Description     string            `json:"description"`
	DefaultPriority string            `json:"default_priority" enum:"low,medium,high,critical"`
	SLA             CategorySLA       `json:"sla" doc:"The targets of the category's default priority"`
	SLATargets      []PrioritySLA     `json:"sla_targets" doc:"The targets of every priority, highest first"`
	Subcategories   []SubcategoryItem `json:"subcategories"`
}

func supportCategoryItem(c *support.Category) SupportCategoryItem {
	it := SupportCategoryItem{ID: c.ID, Name: c.Name, Description: c.Description, DefaultPriority: c.DefaultPriority,
		SLATargets: []PrioritySLA{}, Subcategories: []SubcategoryItem{}}
	if t, ok := c.Target(c.DefaultPriority); ok {
		it.SLA = CategorySLA{ResponseTime: t.ResponseTime(), ResolutionTime: t.ResolutionTime()}
	}
	for _, t := range c.Targets {
		it.SLATargets = append(it.SLATargets, PrioritySLA{Priority: t.Priority, CategorySLA: CategorySLA{ResponseTime: t.ResponseTime(), ResolutionTime: t.ResolutionTime()}})
	}
	for _, sc := range c.Subcategories {
		item := SubcategoryItem{ID: sc.ID, Name: sc.Name}
		if sc.AutoAssign != "" || sc.EscalationThreshold != "" {
			item.RoutingRules = &SubcategoryRouting{AutoAssign: sc.AutoAssign, EscalationThreshold: sc.EscalationThreshold}
		}
		it.Subcategories = append(it.Subcategories, item)
	}
	return it
}

// SupportCategoriesOutput lists the support categories.
type SupportCategoriesOutput struct {
	Body struct {
		Envelope
		Categories []SupportCategoryItem `json:"categories"`
		Pagination Pagination            `json:"pagination"`
	}
}

// registerSupportCategories registers the support categories.
func (s *Server) registerSupportCategories(tags []string) {
	register(s, huma.Operation{OperationID: "list-support-categories", Method: http.MethodGet, Path: "/support/categories", Summary: "List support categories",
		Description: "The categories a ticket may have, in their order, with their subcategories and SLA targets (sla: the category's default priority; " +
			"sla_targets: every priority). The same for every tenant.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct{ ListParams }) (*SupportCategoriesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			if len(pr.Sort) > 0 {
				return nil, models.Invalid(models.FieldIssue{Field: "sort", Issue: "categories keep their own order and cannot be sorted"})
			}
			cats, err := s.support.ListCategories(ctx)
			if err != nil {
				return nil, err
			}
			total := int64(len(cats))
			lo, hi := min(pr.Offset, len(cats)), min(pr.Offset+pr.Limit, len(cats))
			page := cats[lo:hi]
			out := &SupportCategoriesOutput{}
			out.Body.Categories = mapSlice(page, supportCategoryItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}
