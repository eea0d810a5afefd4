package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// BudgetItem is a budget with its consumption in the current period.
type BudgetItem struct {
	ID                string       `json:"id" example:"bud_3fK9aZ"`
	AccountID         string       `json:"account_id"`
	Amount            models.Money `json:"amount" example:"1000.00"`
	Currency          string       `json:"currency" example:"USD"`
	Period            string       `json:"period" enum:"monthly,quarterly,annual"`
	Thresholds        []int        `json:"thresholds" example:"[50,80,100]"`
	PeriodStart       string       `json:"period_start" doc:"The current period"`
	PeriodEnd         string       `json:"period_end"`
	Spent             models.Money `json:"spent" doc:"The account's invoices issued in the current period, not cancelled"`
	PercentUsed       float64      `json:"percent_used"`
	ThresholdsCrossed []int        `json:"thresholds_crossed" doc:"Thresholds that alerted (usage.threshold) in the current period"`
	CreatedAt         string       `json:"created_at"`
}

func budgetItem(b *billing.BudgetStatus) BudgetItem {
	return BudgetItem{ID: b.Budget.ID, AccountID: b.Budget.AccountID, Amount: b.Budget.Amount, Currency: b.Budget.Currency, Period: b.Budget.Period,
		Thresholds: b.Budget.Thresholds, PeriodStart: models.Timestamp(b.PeriodStart), PeriodEnd: models.Timestamp(b.PeriodEnd), Spent: b.Spent,
		PercentUsed: b.PercentUsed, ThresholdsCrossed: b.Crossed, CreatedAt: models.Timestamp(b.Budget.CreatedAt)}
}

// BudgetOutput wraps one budget.
type BudgetOutput struct {
	Status int
	Body   struct {
		Envelope
		Budget BudgetItem `json:"budget"`
	}
}

// BudgetsOutput is a page of budgets.
type BudgetsOutput struct {
	Body struct {
		Envelope
		Budgets    []BudgetItem `json:"budgets"`
		Pagination Pagination   `json:"pagination"`
	}
}

func (s *Server) registerBudgets() {
	tags := []string{"Billing: budgets"}
	register(s, huma.Operation{OperationID: "create-budget", Method: http.MethodPost, Path: "/billing/budgets", Summary: "Set a budget alert", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "A spending limit of an account per calendar period (monthly, quarterly or annual). Each time the account's invoices of the period " +
			"reach a threshold (percent of amount; default 50, 80, 100) a usage.threshold event is sent, once per threshold and period. See docs/billing.md."},
		access{permission: "billing:write"}, func(ctx context.Context, in *struct {
			Body struct {
				AccountID  string       `json:"account_id" required:"true" minLength:"1" maxLength:"64" example:"acct_3fK9aZ" doc:"Required"`
				Amount     models.Money `json:"amount" required:"true" exclusiveMinimum:"0" maximum:"100000000" example:"1000.00" doc:"Required: more than 0, at most 100000000.00"`
				Period     string       `json:"period,omitempty" enum:"monthly,quarterly,annual" doc:"Default monthly"`
				Thresholds []int        `json:"thresholds,omitempty" minItems:"1" maxItems:"10" uniqueItems:"true" minimum:"1" maximum:"1000" example:"[50,80,100]" doc:"Percentages of amount, each from 1 to 1000, no repeats; default [50, 80, 100]"`
			}
		}) (*BudgetOutput, error) {
			b, err := s.billing.CreateBudget(ctx, principal(ctx), billing.BudgetInput{AccountID: in.Body.AccountID, Amount: in.Body.Amount, Period: in.Body.Period, Thresholds: in.Body.Thresholds})
			if err != nil {
				return nil, err
			}
			st, err := s.billing.BudgetStatusOf(ctx, b, s.now())
			if err != nil {
				return nil, err
			}
			out := &BudgetOutput{Status: http.StatusCreated}
			out.Body.Budget = budgetItem(st)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-budgets", Method: http.MethodGet, Path: "/billing/budgets", Summary: "List budgets", Tags: tags},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ListParams
			AccountID string `query:"account_id" maxLength:"64"`
		}) (*BudgetsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			all, err := s.billing.ListBudgets(ctx, principal(ctx), in.AccountID, s.now())
			if err != nil {
				return nil, err
			}
			page, pg := pageOf(all, pr)
			out := &BudgetsOutput{}
			out.Body.Budgets = mapSlice(page, budgetItem)
			out.Body.Pagination = pg
			return out, nil
		})
}
