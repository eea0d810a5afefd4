package api

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/ratelimit"
)

// TotalUsage is the usage response's total_usage.
type TotalUsage struct {
	VoiceMinutes   int64 `json:"voice_minutes"`
	DataGB         int64 `json:"data_gb"`
	CloudStorageGB int64 `json:"cloud_storage_gb"`
	APICalls       int64 `json:"api_calls"`
}

func totalUsage(m map[string]int64) TotalUsage {
	return TotalUsage{VoiceMinutes: m[billing.MetricVoiceMinutes], DataGB: m[billing.MetricDataGB], CloudStorageGB: m[billing.MetricCloudStorageGB], APICalls: m[billing.MetricAPICalls]}
}

// UsageCharge is one invoiced charge of a service (detailed reports).
type UsageCharge struct {
	InvoiceID   string       `json:"invoice_id"`
	Description string       `json:"description"`
	Kind        string       `json:"kind"`
	Amount      models.Money `json:"amount"`
}

// ServiceUsageItem is one service of the usage response; the
// platform's own API requests appear as service_id "api".
type ServiceUsageItem struct {
	ServiceID   string             `json:"service_id" example:"svc_3fK9aZ"`
	ServiceType string             `json:"service_type,omitempty" example:"internet"`
	Category    string             `json:"category" example:"connectivity"`
	Usage       float64            `json:"usage" example:"1532.25"`
	Unit        string             `json:"unit" example:"GB"`
	Cost        models.Money       `json:"cost" example:"299.00" doc:"Invoiced in the period plus the recurring charge accrued in the open period"`
	Metrics     map[string]float64 `json:"metrics,omitempty" doc:"detailed=true: every metric"`
	Charges     []UsageCharge      `json:"charges,omitempty" doc:"detailed=true: the invoiced charges"`
	Accrued     *models.Money      `json:"accrued,omitempty" doc:"detailed=true: recurring charge of the open period so far, not invoiced yet"`
}

// CostEstimateItem explains estimated_monthly_cost.
type CostEstimateItem struct {
	RecurringRunRate    models.Money `json:"recurring_run_rate" doc:"Monthly price of the active subscriptions"`
	ProjectedUsage      models.Money `json:"projected_usage" doc:"This month's metered usage charges, projected from the days elapsed"`
	ProjectedAPIOverage models.Money `json:"projected_api_overage" doc:"This month's API requests beyond the plan, projected from the days elapsed (USD)"`
	OneTimeCharges      models.Money `json:"one_time_charges" doc:"Manual invoices issued this month, after the SLA credits they applied, before tax (as in cost-analysis)"`
	DaysElapsed         float64      `json:"days_elapsed"`
	DaysInMonth         int          `json:"days_in_month"`
}

// UsageOutput is the usage response.
type UsageOutput struct {
	Body struct {
		Envelope
		Period               string             `json:"period" enum:"current_month,last_month,current_year"`
		PeriodStart          string             `json:"period_start"`
		PeriodEnd            string             `json:"period_end"`
		Currency             string             `json:"currency" example:"USD"`
		TotalUsage           TotalUsage         `json:"total_usage"`
		Services             []ServiceUsageItem `json:"services"`
		EstimatedMonthlyCost models.Money       `json:"estimated_monthly_cost"`
		Estimate             CostEstimateItem   `json:"estimate"`
	}
}

// CostBreakdown is the cost analysis breakdown by category (spec 2.3 plus
// ai, platform for API overage, and other).
type CostBreakdown struct {
	Connectivity models.Money `json:"connectivity"`
	Voice        models.Money `json:"voice"`
	Cloud        models.Money `json:"cloud"`
	Security     models.Money `json:"security"`
	AI           models.Money `json:"ai"`
	Platform     models.Money `json:"platform"`
	Other        models.Money `json:"other"`
}

func costBreakdown(m map[string]models.Money) CostBreakdown {
	return CostBreakdown{Connectivity: m["connectivity"], Voice: m["voice"], Cloud: m["cloud"], Security: m["security"], AI: m["ai"],
		Platform: m[billing.CategoryPlatform], Other: m[billing.CategoryOther]}
}

// MonthCostItem is one month's total.
type MonthCostItem struct {
	Month string       `json:"month" example:"2026-11"`
	Total models.Money `json:"total"`
}

// CostTrends are the cost analysis trends.
type CostTrends struct {
	MonthlyGrowth           *float64     `json:"monthly_growth" doc:"Percent change from last month; null when last month had no charges"`
	CostOptimizationSavings models.Money `json:"cost_optimization_savings" doc:"Monthly price of subscriptions whose service was idle (under 5% average utilisation) over the last 30 days"`
}

// CurrentMonthCost is the cost analysis current_month.
type CurrentMonthCost struct {
	Total     models.Money  `json:"total"`
	Breakdown CostBreakdown `json:"breakdown"`
}

// CostAnalysisOutput is the cost analysis response.
type CostAnalysisOutput struct {
	Body struct {
		Envelope
		Currency          string           `json:"currency" example:"USD"`
		CurrentMonth      CurrentMonthCost `json:"current_month"`
		LastMonth         models.Money     `json:"last_month"`
		YearToDate        models.Money     `json:"year_to_date"`
		Trends            CostTrends       `json:"trends"`
		Months            []MonthCostItem  `json:"months" doc:"The last 12 calendar months, oldest first"`
		IdleSubscriptions []string         `json:"idle_subscriptions"`
	}
}

// InvoiceSummary counts invoices by status.
type InvoiceSummary struct {
	Pending     int64        `json:"pending"`
	Paid        int64        `json:"paid"`
	Overdue     int64        `json:"overdue"`
	Cancelled   int64        `json:"cancelled"`
	Outstanding models.Money `json:"outstanding_amount"`
	OverdueDue  models.Money `json:"overdue_amount"`
}

// PaymentSummary counts this month's payments.
type PaymentSummary struct {
	Successful  int64        `json:"successful"`
	Failed      int64        `json:"failed"`
	SuccessRate *float64     `json:"success_rate" doc:"Percent; null without payments"`
	Collected   models.Money `json:"collected_amount"`
}

// SubscriptionSummary counts the active subscriptions.
type SubscriptionSummary struct {
	Active                  int64        `json:"active"`
	MonthlyRecurringCharges models.Money `json:"monthly_recurring_charges"`
}

// BillingAnalyticsOutput is the billing overview (GET /billing/analytics).
type BillingAnalyticsOutput struct {
	Body struct {
		Envelope
		Currency      string              `json:"currency" example:"USD"`
		Period        string              `json:"period" example:"current_month"`
		Spending      SpendingSummary     `json:"spending"`
		Invoices      InvoiceSummary      `json:"invoices"`
		Payments      PaymentSummary      `json:"payments"`
		Subscriptions SubscriptionSummary `json:"subscriptions"`
		Budgets       []BudgetItem        `json:"budgets"`
	}
}

// SpendingSummary is what was invoiced.
type SpendingSummary struct {
	CurrentMonth  models.Money  `json:"current_month"`
	LastMonth     models.Money  `json:"last_month"`
	YearToDate    models.Money  `json:"year_to_date"`
	MonthlyGrowth *float64      `json:"monthly_growth"`
	Breakdown     CostBreakdown `json:"breakdown"`
}

// apiRequests reads the caller's organization's API requests per month in
// [from, min(to, now)], in the caller's environment (a sandbox key never
// counts live requests), from the rate limiter (when there is one; a month it
// cannot read falls back to the usage records).
func (s *Server) apiRequests(ctx context.Context, p *models.Principal, from, to time.Time) map[string]int64 {
	out := map[string]int64{}
	if s.limiter == nil || p.IsStaff() {
		return out
	}
	now := s.now()
	for m := from; m.Before(to) && !m.After(now); m = m.AddDate(0, 1, 0) {
		n, _, err := s.limiter.MonthlyUsage(ctx, ratelimit.MonthlySubject(p.OrganizationID, string(p.Environment)), m)
		if err != nil {
			loggerFrom(ctx).WarnContext(ctx, "monthly API usage unavailable", "organization_id", p.OrganizationID, "error", err)
			continue
		}
		out[billing.MonthKey(m)] = n
	}
	return out
}

func (s *Server) registerUsage() {
	tags := []string{"Billing: usage and costs"}
	register(s, huma.Operation{OperationID: "get-usage", Method: http.MethodGet, Path: "/billing/usage", Summary: "Usage", Tags: tags,
		Description: "Usage of the period from the usage records (metered from the services' telemetry when a subscription closes a period, " +
			"and measured so far for open periods) and the platform's API request counts; each service's cost; and the current month's " +
			"estimated cost (monthly price of the active subscriptions, plus usage and API overage projected from the days elapsed). " +
			"service_type is a catalog category (connectivity, voice, cloud, security, ai), a service kind (internet, ...) or api. See docs/billing.md."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			ServiceType string `query:"service_type" maxLength:"40" example:"connectivity"`
			Period      string `query:"period" enum:"current_month,last_month,current_year" default:"current_month"`
			Detailed    bool   `query:"detailed" doc:"Add every metric and the invoiced charges of each service"`
			Currency    string `query:"currency" maxLength:"3" doc:"Default: the currency of the oldest billing account"`
		}) (*UsageOutput, error) {
			p, now := principal(ctx), s.now()
			from, to, err := billing.UsageWindow(in.Period, now)
			if err != nil {
				return nil, err
			}
			r, err := s.billing.Usage(ctx, p, billing.UsageQuery{Period: in.Period, ServiceType: in.ServiceType, Detailed: in.Detailed, Currency: in.Currency,
				Now: now, APIRequests: s.apiRequests(ctx, p, from, to)})
			if err != nil {
				return nil, err
			}
			out := &UsageOutput{}
			b := &out.Body
			b.Period, b.PeriodStart, b.PeriodEnd, b.Currency = r.Period, models.Timestamp(r.From), models.Timestamp(r.To), r.Currency
			b.TotalUsage, b.EstimatedMonthlyCost = totalUsage(r.TotalUsage), r.EstimatedMonthlyCost
			e := r.Estimate
			b.Estimate = CostEstimateItem{RecurringRunRate: e.RecurringRunRate, ProjectedUsage: e.ProjectedUsage, ProjectedAPIOverage: e.ProjectedAPIOverage,
				OneTimeCharges: e.OneTimeCharges, DaysElapsed: e.DaysElapsed, DaysInMonth: e.DaysInMonth}
			b.Services = mapSlice(r.Services, func(u *billing.ServiceUsage) ServiceUsageItem {
				it := ServiceUsageItem{ServiceID: u.ServiceID, ServiceType: u.ServiceType, Category: u.Category, Usage: u.Usage, Unit: u.Unit, Cost: u.Cost}
				if it.ServiceID == "" {
					it.ServiceID = billing.ServiceTypeAPI
				}
				if in.Detailed {
					it.Metrics = u.Metrics
					accrued := u.Accrued
					it.Accrued = &accrued
					it.Charges = mapSlice(u.Charges, func(l *billing.InvoiceLine) UsageCharge {
						return UsageCharge{InvoiceID: l.InvoiceID, Description: l.Description, Kind: l.Kind, Amount: l.Amount}
					})
				}
				return it
			})
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-cost-analysis", Method: http.MethodGet, Path: "/billing/cost-analysis", Summary: "Cost analysis", Tags: tags,
		Description: "Charges of the invoices issued (not cancelled), before tax, by month and by category. See docs/billing.md."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			Currency string `query:"currency" maxLength:"3" doc:"Default: the currency of the oldest billing account"`
		}) (*CostAnalysisOutput, error) {
			c, err := s.billing.Costs(ctx, principal(ctx), in.Currency, s.now())
			if err != nil {
				return nil, err
			}
			out := &CostAnalysisOutput{}
			b := &out.Body
			b.Currency, b.LastMonth, b.YearToDate = c.Currency, c.LastMonth, c.YearToDate
			b.CurrentMonth = CurrentMonthCost{Total: c.CurrentMonth, Breakdown: costBreakdown(c.Breakdown)}
			b.Trends = CostTrends{MonthlyGrowth: c.MonthlyGrowth, CostOptimizationSavings: c.OptimizationSavings}
			b.Months = mapSlice(c.Months, func(m *billing.MonthCost) MonthCostItem { return MonthCostItem{Month: m.Month, Total: m.Total} })
			b.IdleSubscriptions = c.IdleSubscriptions
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-billing-analytics", Method: http.MethodGet, Path: "/billing/analytics", Summary: "Billing overview", Tags: tags,
		Description: "Spending (as in cost analysis), invoices by status with what is outstanding and overdue, this month's payments, the active " +
			"subscriptions' monthly charges and the budgets' consumption."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			Currency string `query:"currency" maxLength:"3" doc:"Default: the currency of the oldest billing account"`
		}) (*BillingAnalyticsOutput, error) {
			now := s.now()
			a, err := s.billing.Analytics(ctx, principal(ctx), in.Currency, now)
			if err != nil {
				return nil, err
			}
			out := &BillingAnalyticsOutput{}
			b := &out.Body
			c := a.Costs
			b.Currency, b.Period = c.Currency, billing.PeriodCurrentMonth
			b.Spending = SpendingSummary{CurrentMonth: c.CurrentMonth, LastMonth: c.LastMonth, YearToDate: c.YearToDate, MonthlyGrowth: c.MonthlyGrowth, Breakdown: costBreakdown(c.Breakdown)}
			b.Invoices = InvoiceSummary{Pending: a.InvoiceCounts["pending"], Paid: a.InvoiceCounts["paid"], Overdue: a.InvoiceCounts["overdue"],
				Cancelled: a.InvoiceCounts["cancelled"], Outstanding: a.Outstanding, OverdueDue: a.Overdue}
			b.Payments = PaymentSummary{Successful: a.PaymentsOK, Failed: a.PaymentsFailed, Collected: a.Collected}
			if n := a.PaymentsOK + a.PaymentsFailed; n > 0 {
				rate := math.Round(float64(a.PaymentsOK)*10000/float64(n)) / 100
				b.Payments.SuccessRate = &rate
			}
			b.Subscriptions = SubscriptionSummary{Active: a.ActiveSubs, MonthlyRecurringCharges: a.MonthlyRecurring}
			b.Budgets = mapSlice(a.Budgets, budgetItem)
			return out, nil
		})
}
