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

// SubcategoryBody is a subcategory as sent.
type SubcategoryBody struct {
	ID           string              `json:"id" required:"true" minLength:"1" maxLength:"40" doc:"Required: lowercase letters, digits, underscores" example:"lorawan"`
	Name         string              `json:"name" required:"true" minLength:"1" maxLength:"200" doc:"Required" example:"LoRaWAN"`
	RoutingRules *SubcategoryRouting `json:"routing_rules,omitempty" doc:"Hints shown in the category answer (auto_assign at most 100, escalation_threshold at most 20 characters)"`
}

// SLATargetBody is the SLA target of one priority as sent.
type SLATargetBody struct {
	Priority       string `json:"priority" required:"true" enum:"low,medium,high,critical" doc:"Required: low, medium, high or critical" example:"critical"`
	ResponseTime   string `json:"response_time" required:"true" minLength:"2" maxLength:"20" doc:"Required: whole minutes, 1m to 720h" example:"30m"`
	ResolutionTime string `json:"resolution_time" required:"true" minLength:"2" maxLength:"20" doc:"Required: whole minutes, 1m to 720h; not shorter than response_time" example:"6h"`
}

// SupportCategoryBody is the body of a category creation or update (on an
// update, absent fields are unchanged).
type SupportCategoryBody struct {
	ID              string             `json:"id,omitempty" maxLength:"40" doc:"Creation only, required: lowercase letters, digits, underscores" example:"iot"`
	Name            *string            `json:"name,omitempty" maxLength:"200" doc:"Required on creation" example:"IoT"`
	Description     *string            `json:"description,omitempty" maxLength:"1000"`
	DefaultPriority *string            `json:"default_priority,omitempty" maxLength:"16" doc:"Required on creation: low, medium, high or critical"`
	Position        *int               `json:"position,omitempty" doc:"Order in the list (0 first); default: last"`
	Subcategories   *[]SubcategoryBody `json:"subcategories,omitempty" maxItems:"50" doc:"Replaces the list when sent"`
	SLATargets      []SLATargetBody    `json:"sla_targets,omitempty" maxItems:"4" doc:"Replaces the targets of the priorities named; on creation the others take the defaults"`
}

func (b *SupportCategoryBody) input() support.CategoryInput {
	in := support.CategoryInput{ID: b.ID, Name: b.Name, Description: b.Description, DefaultPriority: b.DefaultPriority, Position: b.Position}
	if b.Subcategories != nil {
		subs := make([]support.SubcategoryInput, len(*b.Subcategories))
		for i, sc := range *b.Subcategories {
			subs[i] = support.SubcategoryInput{ID: sc.ID, Name: sc.Name}
			if sc.RoutingRules != nil {
				subs[i].AutoAssign, subs[i].EscalationThreshold = sc.RoutingRules.AutoAssign, sc.RoutingRules.EscalationThreshold
			}
		}
		in.Subcategories = &subs
	}
	for _, t := range b.SLATargets {
		in.SLATargets = append(in.SLATargets, support.SLATargetInput{Priority: t.Priority, ResponseTime: t.ResponseTime, ResolutionTime: t.ResolutionTime})
	}
	return in
}

// SupportCategoryOutput wraps one category.
type SupportCategoryOutput struct {
	Status int
	Body   struct {
		Envelope
		Category SupportCategoryItem `json:"category"`
	}
}

func categoryOutput(status int, c *support.Category) *SupportCategoryOutput {
	out := &SupportCategoryOutput{Status: status}
	out.Body.Category = supportCategoryItem(c)
	return out
}

// registerSupportCategoryAdmin registers the creation and editing of
// categories.
func (s *Server) registerSupportCategoryAdmin(tags []string) {
	staffOnly := " Provider staff with support:admin only (403 for everyone else)."
	register(s, huma.Operation{OperationID: "create-support-category", Method: http.MethodPost, Path: "/support/categories", Summary: "Create a support category",
		Description: "Adds a category with its subcategories and SLA targets per priority (those not sent take the defaults), and its team " +
			"(team_<id>) for the least-loaded assignment. 409 ALREADY_EXISTS for an id in use." + staffOnly,
		Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct{ Body SupportCategoryBody }) (*SupportCategoryOutput, error) {
			c, err := s.support.CreateCategory(ctx, principal(ctx), in.Body.input())
			if err != nil {
				return nil, err
			}
			return categoryOutput(http.StatusCreated, c), nil
		})
	register(s, huma.Operation{OperationID: "update-support-category", Method: http.MethodPatch, Path: "/support/categories/{category_id}", Summary: "Edit a support category",
		Description: "Changes the fields sent: name, description, default_priority, position, the subcategories (the list is replaced) and the SLA " +
			"targets of the priorities sent. Open tickets keep the targets they were opened with." + staffOnly, Tags: tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct {
			ID   string `path:"category_id" maxLength:"40" doc:"The category (network, voice, ...)"`
			Body SupportCategoryBody
		}) (*SupportCategoryOutput, error) {
			if in.Body.ID != "" && in.Body.ID != in.ID {
				return nil, models.Invalid(models.FieldIssue{Field: "id", Issue: "cannot be changed"})
			}
			c, err := s.support.UpdateCategory(ctx, principal(ctx), in.ID, in.Body.input())
			if err != nil {
				return nil, err
			}
			return categoryOutput(http.StatusOK, c), nil
		})
}
