package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// RoutingConditionsBody are a routing rule's conditions: all optional,
// all must hold.
type RoutingConditionsBody struct {
	Category     *string  `json:"category,omitempty" maxLength:"40" doc:"A category id" example:"network"`
	Priority     []string `json:"priority,omitempty" maxItems:"4" doc:"Any of these priorities" example:"[\"high\",\"critical\"]"`
	Keywords     []string `json:"keywords,omitempty" maxItems:"20" doc:"Any of these words in the title or the description, in any case" example:"[\"outage\",\"down\"]"`
	CustomerTier *string  `json:"customer_tier,omitempty" maxLength:"20" doc:"The plan of the customer's organization: developer, business, enterprise or custom" example:"enterprise"`
}

// RoutingActionsBody are a routing rule's actions.
type RoutingActionsBody struct {
	AssignTo            *string  `json:"assign_to,omitempty" maxLength:"64" doc:"A provider agent's user id (usr_)"`
	Notify              []string `json:"notify,omitempty" maxItems:"20" doc:"E-mail addresses (kept; notifications are not sent yet)"`
	EscalateAfter       *string  `json:"escalate_after,omitempty" maxLength:"20" doc:"A duration such as 30m or 2h (kept; escalation timers are not built yet)" example:"30m"`
	AutoUpdateFrequency *string  `json:"auto_update_frequency,omitempty" maxLength:"20" doc:"A duration such as 4h (kept; automatic updates are not built yet)" example:"4h"`
}

// RoutingRuleBody is the body of a routing rule creation or update (on
// an update, absent fields are unchanged; an empty list clears one).
type RoutingRuleBody struct {
	RuleName   *string                `json:"rule_name,omitempty" maxLength:"200" doc:"Required on creation" example:"Enterprise network outages"`
	Conditions *RoutingConditionsBody `json:"conditions,omitempty"`
	Actions    *RoutingActionsBody    `json:"actions,omitempty" doc:"At least one action"`
	Active     *bool                  `json:"active,omitempty" doc:"Default true"`
}

func (b *RoutingRuleBody) input() support.RuleInput {
	in := support.RuleInput{Name: b.RuleName, Active: b.Active}
	list := func(l []string) *[]string {
		if l == nil {
			return nil
		}
		return &l
	}
	if c := b.Conditions; c != nil {
		in.Category, in.Priorities, in.Keywords, in.CustomerTier = c.Category, list(c.Priority), list(c.Keywords), c.CustomerTier
	}
	if a := b.Actions; a != nil {
		in.AssignTo, in.Notify, in.EscalateAfter, in.AutoUpdateFrequency = a.AssignTo, list(a.Notify), a.EscalateAfter, a.AutoUpdateFrequency
	}
	return in
}

// RoutingConditionsItem are a rule's conditions as answered.
type RoutingConditionsItem struct {
	Category     string   `json:"category"`
	Priority     []string `json:"priority"`
	Keywords     []string `json:"keywords"`
	CustomerTier string   `json:"customer_tier"`
}

// RoutingActionsItem are a rule's actions as answered.
type RoutingActionsItem struct {
	AssignTo            string   `json:"assign_to"`
	Notify              []string `json:"notify"`
	EscalateAfter       string   `json:"escalate_after" doc:"\"\" when none"`
	AutoUpdateFrequency string   `json:"auto_update_frequency" doc:"\"\" when none"`
}

// RoutingRuleItem is a routing rule.
type RoutingRuleItem struct {
	ID         string                `json:"id" example:"rrule_3fK9aZ"`
	RuleName   string                `json:"rule_name"`
	Conditions RoutingConditionsItem `json:"conditions"`
	Actions    RoutingActionsItem    `json:"actions"`
	Active     bool                  `json:"active"`
	CreatedBy  string                `json:"created_by"`
	CreatedAt  string                `json:"created_at"`
	UpdatedAt  string                `json:"updated_at"`
}

func routingRuleItem(r *support.RoutingRule) RoutingRuleItem {
	nonNil := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	dur := func(m int) string {
		if m == 0 {
			return ""
		}
		return support.FormatMinutes(m)
	}
	return RoutingRuleItem{ID: r.ID, RuleName: r.Name,
		Conditions: RoutingConditionsItem{Category: r.Category, Priority: nonNil(r.Priorities), Keywords: nonNil(r.Keywords), CustomerTier: r.CustomerTier},
		Actions: RoutingActionsItem{AssignTo: r.AssignTo, Notify: nonNil(r.Notify), EscalateAfter: dur(r.EscalateAfterMinutes),
			AutoUpdateFrequency: dur(r.AutoUpdateMinutes)},
		Active: r.Active, CreatedBy: r.CreatedBy, CreatedAt: models.Timestamp(r.CreatedAt), UpdatedAt: models.Timestamp(r.UpdatedAt)}
}

// RoutingRuleOutput wraps one routing rule.
type RoutingRuleOutput struct {
	Status int
	Body   struct {
		Envelope
		RoutingRule RoutingRuleItem `json:"routing_rule"`
	}
}

// RoutingRulesOutput is a page of routing rules.
type RoutingRulesOutput struct {
	Body struct {
		Envelope
		RoutingRules []RoutingRuleItem `json:"routing_rules"`
		Pagination   Pagination        `json:"pagination"`
	}
}

// RoutingRulePath names a routing rule in the path.
type RoutingRulePath struct {
	ID string `path:"rule_id" maxLength:"64" example:"rrule_3fK9aZ"`
}

func ruleOutput(status int, r *support.RoutingRule) *RoutingRuleOutput {
	out := &RoutingRuleOutput{Status: status}
	out.Body.RoutingRule = routingRuleItem(r)
	return out
}

// registerSupportRouting registers the routing rules (provider staff with
// support:admin).
func (s *Server) registerSupportRouting(tags []string) {
	staffOnly := " Provider staff with support:admin only (403 for everyone else, before the body is read)."
	register(s, huma.Operation{OperationID: "create-support-routing-rule", Method: http.MethodPost, Path: "/support/routing-rules", Summary: "Create a routing rule",
		Description: "Stores a rule that assigns new tickets: conditions (category, priority list, keywords, customer_tier) and actions " +
			"(assign_to, notify, escalate_after, auto_update_frequency). At ticket creation the active rules are tried in order, rules with a " +
			"priority condition first, then the oldest first; the first that matches and assigns wins (docs/support.md)." + staffOnly,
		Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct{ Body RoutingRuleBody }) (*RoutingRuleOutput, error) {
			r, err := s.support.CreateRoutingRule(ctx, principal(ctx), in.Body.input())
			if err != nil {
				return nil, err
			}
			return ruleOutput(http.StatusCreated, r), nil
		})
	register(s, huma.Operation{OperationID: "list-support-routing-rules", Method: http.MethodGet, Path: "/support/routing-rules", Summary: "List routing rules",
		Description: "Every routing rule, newest first; sortable by created_at, updated_at, rule_name." + staffOnly, Tags: tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct{ ListParams }) (*RoutingRulesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.ListRoutingRules(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &RoutingRulesOutput{}
			out.Body.RoutingRules = mapSlice(rows, routingRuleItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-routing-rule", Method: http.MethodGet, Path: "/support/routing-rules/{rule_id}", Summary: "Get a routing rule",
		Description: "One routing rule." + staffOnly, Tags: tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *RoutingRulePath) (*RoutingRuleOutput, error) {
			r, err := s.support.GetRoutingRule(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return ruleOutput(http.StatusOK, r), nil
		})
	register(s, huma.Operation{OperationID: "update-support-routing-rule", Method: http.MethodPatch, Path: "/support/routing-rules/{rule_id}", Summary: "Update a routing rule",
		Description: "Applies the fields sent (an empty list clears one); the result is validated as a new rule." + staffOnly, Tags: tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct {
			RoutingRulePath
			Body RoutingRuleBody
		}) (*RoutingRuleOutput, error) {
			r, err := s.support.UpdateRoutingRule(ctx, principal(ctx), in.ID, in.Body.input())
			if err != nil {
				return nil, err
			}
			return ruleOutput(http.StatusOK, r), nil
		})
	register(s, huma.Operation{OperationID: "delete-support-routing-rule", Method: http.MethodDelete, Path: "/support/routing-rules/{rule_id}", Summary: "Delete a routing rule",
		Description: "Removes the rule; tickets it assigned keep their agent." + staffOnly, Tags: tags, DefaultStatus: http.StatusNoContent},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *RoutingRulePath) (*struct{}, error) {
			return nil, s.support.DeleteRoutingRule(ctx, principal(ctx), in.ID)
		})
}
