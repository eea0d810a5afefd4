package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
)

// AnalyticsParams is the query model every analytics endpoint shares.
type AnalyticsParams struct {
	From           string `query:"from" maxLength:"40" doc:"Start of the period (inclusive), with to: an RFC 3339 timestamp, or a date (YYYY-MM-DD) meaning its midnight in timezone. Not with period" example:"2026-11-01"`
	To             string `query:"to" maxLength:"40" doc:"End of the period (exclusive), with from: an RFC 3339 timestamp, or a date (YYYY-MM-DD) meaning its midnight in timezone; after from" example:"2026-12-01"`
	Period         string `query:"period" enum:"last_24_hours,last_7_days,last_30_days,current_month,last_month,current_year" doc:"A named period instead of from and to: the last 24 hours, 7 or 30 days end now; the months and the year are calendar periods of timezone. Default last_30_days" example:"last_30_days"`
	Granularity    string `query:"granularity" enum:"hour,day,week,month" doc:"The buckets: local hours, days, ISO weeks (from Monday) or calendar months of timezone. Default: hour for last_24_hours (or a span of at most 48 hours), month for current_year (or a span over 92 days), day otherwise. At most 1000 buckets" example:"day"`
	Timezone       string `query:"timezone" maxLength:"64" doc:"The IANA time zone the buckets (and dates in from and to) are taken in; default UTC" example:"Europe/London"`
	ServiceID      string `query:"service_id" maxLength:"64" doc:"Only this service (svc_); another tenant's answers 404" example:"svc_3fK9aZ"`
	ServiceType    string `query:"service_type" maxLength:"40" doc:"Only services of this kind (internet, phone_system, ...), catalog category (connectivity, voice, cloud, security, ai) or service type" example:"connectivity"`
	Location       string `query:"location" maxLength:"100" doc:"Only services at this place: a location id (loc_), a ZIP code, a two-letter state code, or a city" example:"loc_austin_congress"`
	AccountID      string `query:"account_id" maxLength:"64" doc:"Only this billing account's services (and, for costs, invoices and budgets); another tenant's answers 404" example:"acct_8Hs2kQ"`
	OrganizationID string `query:"organization_id" maxLength:"64" doc:"Provider staff only: one organization (staff otherwise see every organization of their environment). A customer sending it gets 400 VALIDATION_ERROR" example:"org_4Tq8mN"`
}

// input converts the parameters into the domain's query input.
func (in *AnalyticsParams) input() analytics.QueryInput {
	return analytics.QueryInput{From: in.From, To: in.To, Period: in.Period, Granularity: in.Granularity, Timezone: in.Timezone,
		ServiceID: in.ServiceID, ServiceType: in.ServiceType, Location: in.Location, AccountID: in.AccountID, OrganizationID: in.OrganizationID}
}

// AnalyticsFilters echoes the filters of a query (empty ones omitted).
type AnalyticsFilters struct {
	ServiceID      string `json:"service_id,omitempty"`
	ServiceType    string `json:"service_type,omitempty"`
	Location       string `json:"location,omitempty"`
	AccountID      string `json:"account_id,omitempty"`
	OrganizationID string `json:"organization_id,omitempty"`
}

// AnalyticsQuery echoes the query an answer covers, defaults applied.
type AnalyticsQuery struct {
	From        string           `json:"from" doc:"Inclusive, RFC 3339 in timezone" example:"2026-10-27T00:00:00Z"`
	To          string           `json:"to" doc:"Exclusive, RFC 3339 in timezone" example:"2026-11-26T00:00:00Z"`
	Period      string           `json:"period,omitempty" doc:"The named period, when the request used one" example:"last_30_days"`
	Timezone    string           `json:"timezone" example:"UTC"`
	Granularity string           `json:"granularity" enum:"hour,day,week,month" example:"day"`
	Filters     AnalyticsFilters `json:"filters"`
}

// analyticsQuery echoes q.
func analyticsQuery(q *analytics.Query) AnalyticsQuery {
	f := q.Filters
	return AnalyticsQuery{From: analytics.Label(q.From), To: analytics.Label(q.To), Period: q.Period, Timezone: q.Location.String(), Granularity: q.Granularity,
		Filters: AnalyticsFilters{ServiceID: f.ServiceID, ServiceType: f.ServiceType, Location: f.Location, AccountID: f.AccountID, OrganizationID: f.OrganizationID}}
}

// UsageFiguresItem is the usage of a bucket, service, group or period.
type UsageFiguresItem struct {
	DataGB       float64 `json:"data_gb" doc:"Data transferred, GB (10^9 bytes), three decimals: the telemetry samples' data" example:"152.375"`
	VoiceCalls   int64   `json:"voice_calls" doc:"Calls handled, from the telemetry samples" example:"1240"`
	VoiceMinutes float64 `json:"voice_minutes" doc:"Minutes of the voice_minutes usage records whose period starts in the bucket" example:"0"`
	StorageGB    float64 `json:"storage_gb" doc:"GB of the cloud_storage_gb usage records whose period starts in the bucket" example:"0"`
	Samples      int64   `json:"samples" doc:"Telemetry samples counted" example:"2880"`
}

// usageFigures converts figures.
func usageFigures(f analytics.UsageFigures) UsageFiguresItem {
	return UsageFiguresItem{DataGB: f.DataGB, VoiceCalls: f.VoiceCalls, VoiceMinutes: f.VoiceMinutes, StorageGB: f.StorageGB, Samples: f.Samples}
}

// UsageBucketItem is one bucket's usage.
type UsageBucketItem struct {
	Start string `json:"start" doc:"Inclusive, RFC 3339 in timezone (the period's start for the first bucket)" example:"2026-11-25T00:00:00Z"`
	End   string `json:"end" doc:"Exclusive, RFC 3339 in timezone (the period's end for the last bucket)" example:"2026-11-26T00:00:00Z"`
	UsageFiguresItem
}

// ServiceUsageFigures is one service's usage over the period.
type ServiceUsageFigures struct {
	ServiceID   string `json:"service_id" example:"svc_3fK9aZ"`
	Name        string `json:"name" example:"HQ internet"`
	ServiceType string `json:"service_type" doc:"The service's kind" example:"internet"`
	Category    string `json:"category" example:"connectivity"`
	UsageFiguresItem
}

// CategoryUsageItem is one category's usage.
type CategoryUsageItem struct {
	Category string `json:"category" example:"connectivity"`
	UsageFiguresItem
}

// ServiceTypeUsageItem is one service kind's usage.
type ServiceTypeUsageItem struct {
	ServiceType string `json:"service_type" example:"internet"`
	UsageFiguresItem
}

// UsageAnalytics is the usage answer.
type UsageAnalytics struct {
	Query        AnalyticsQuery         `json:"query"`
	Totals       UsageFiguresItem       `json:"totals"`
	Buckets      []UsageBucketItem      `json:"buckets" doc:"Every bucket of the period, oldest first, zero included"`
	Services     []ServiceUsageFigures  `json:"services" doc:"The services with usage in the period, by id"`
	Categories   []CategoryUsageItem    `json:"categories" doc:"Every catalog category, by name, zero included"`
	ServiceTypes []ServiceTypeUsageItem `json:"service_types" doc:"The service kinds with usage in the period, by name"`
}

// UsageAnalyticsOutput wraps the usage answer.
type UsageAnalyticsOutput struct {
	Body struct {
		Envelope
		Usage UsageAnalytics `json:"usage"`
	}
}

// CostFiguresItem is the costs of a bucket, category or period.
type CostFiguresItem struct {
	Charges       models.Money `json:"charges" doc:"Lines of the invoices issued (not cancelled) in the bucket, before tax, without SLA credit lines" example:"1299.00"`
	UnbilledUsage models.Money `json:"unbilled_usage" doc:"Rated usage records not invoiced yet, whose period starts in the bucket" example:"12.40"`
	Credits       models.Money `json:"credits" doc:"SLA credits issued in the bucket (not void)" example:"50.00"`
	Net           models.Money `json:"net" doc:"charges + unbilled_usage - credits" example:"1261.40"`
}

// costFigures converts figures.
func costFigures(f analytics.CostFigures) CostFiguresItem {
	return CostFiguresItem{Charges: f.Charges, UnbilledUsage: f.UnbilledUsage, Credits: f.Credits, Net: f.Net}
}

// CostBucketItem is one bucket's costs.
type CostBucketItem struct {
	Start string `json:"start" doc:"Inclusive, RFC 3339 in timezone" example:"2026-11-01T00:00:00Z"`
	End   string `json:"end" doc:"Exclusive, RFC 3339 in timezone" example:"2026-11-02T00:00:00Z"`
	CostFiguresItem
}

// CategoryCostItem is one category's costs.
type CategoryCostItem struct {
	Category string `json:"category" enum:"connectivity,voice,cloud,security,ai,platform,other" example:"connectivity"`
	CostFiguresItem
}

// CreditItem is one SLA credit of the period.
type CreditItem struct {
	ID        string       `json:"id" example:"slacr_9Jd2Lq"`
	ServiceID string       `json:"service_id" example:"svc_3fK9aZ"`
	TicketID  string       `json:"ticket_id" example:"TKT-12345"`
	Category  string       `json:"category" example:"connectivity"`
	Amount    models.Money `json:"amount" example:"50.00"`
	Status    string       `json:"status" enum:"pending,applied" example:"pending"`
	Reason    string       `json:"reason"`
	IssuedAt  string       `json:"issued_at" doc:"RFC 3339 in timezone"`
}

// BudgetBurnItem is one budget's consumption in its current period.
type BudgetBurnItem struct {
	BudgetID    string       `json:"budget_id" example:"bud_2Xw9Pa"`
	AccountID   string       `json:"account_id" example:"acct_8Hs2kQ"`
	Period      string       `json:"period" enum:"monthly,quarterly,annual" example:"monthly"`
	PeriodStart string       `json:"period_start" doc:"The budget's calendar period holding now (UTC)"`
	PeriodEnd   string       `json:"period_end"`
	Currency    string       `json:"currency" example:"USD"`
	Limit       models.Money `json:"limit" example:"5000.00"`
	Spent       models.Money `json:"spent" doc:"Totals (tax included) of the account's invoices issued in the budget's period, not cancelled" example:"1410.75"`
	Remaining   models.Money `json:"remaining" doc:"limit - spent, never below zero" example:"3589.25"`
	PercentUsed float64      `json:"percent_used" example:"28.21"`
}

// ForecastItem is the current month's forecast.
type ForecastItem struct {
	Method          string       `json:"method" enum:"linear_run_rate" doc:"linear_run_rate: spent_to_date / elapsed_fraction" example:"linear_run_rate"`
	PeriodStart     string       `json:"period_start" doc:"The current calendar month in timezone, whatever the query's period" example:"2026-11-01T00:00:00Z"`
	PeriodEnd       string       `json:"period_end" example:"2026-12-01T00:00:00Z"`
	SpentToDate     models.Money `json:"spent_to_date" doc:"Net spend (as net) from period_start to now, same filters" example:"1261.40"`
	ElapsedFraction float64      `json:"elapsed_fraction" doc:"Elapsed share of the month, four decimals; at least one day's worth" example:"0.8333"`
	Forecast        models.Money `json:"forecast" doc:"spent_to_date / elapsed_fraction, rounded to the minor unit" example:"1513.68"`
}

// CostsAnalytics is the costs answer.
type CostsAnalytics struct {
	Query      AnalyticsQuery     `json:"query"`
	Currency   string             `json:"currency" example:"USD"`
	Totals     CostFiguresItem    `json:"totals"`
	Buckets    []CostBucketItem   `json:"buckets" doc:"Every bucket of the period, oldest first, zero included"`
	Categories []CategoryCostItem `json:"categories" doc:"Every cost category, zero included"`
	Credits    []CreditItem       `json:"credits" doc:"The SLA credits issued in the period, oldest first"`
	Budgets    []BudgetBurnItem   `json:"budgets" doc:"The budgets in view (of account_id and organization_id when given), whatever their currency"`
	Forecast   ForecastItem       `json:"forecast"`
}

// CostsAnalyticsOutput wraps the costs answer.
type CostsAnalyticsOutput struct {
	Body struct {
		Envelope
		Costs CostsAnalytics `json:"costs"`
	}
}

// PerformanceFiguresItem is the performance of a bucket, service or period.
type PerformanceFiguresItem struct {
	Samples         int64    `json:"samples" doc:"Telemetry samples taken" example:"2880"`
	UpSamples       int64    `json:"up_samples" doc:"Samples in which the service was up" example:"2877"`
	AvailabilityPct *float64 `json:"availability_pct" doc:"up_samples / samples × 100, three decimals; null without samples" example:"99.896"`
	LatencyP50Ms    *float64 `json:"latency_p50_ms" doc:"Median latency of the up samples, ms (nearest rank over 1 ms bins, see docs/analytics.md); null without up samples" example:"12.4"`
	LatencyP95Ms    *float64 `json:"latency_p95_ms" doc:"95th percentile latency, ms, likewise" example:"18.9"`
	LatencyP99Ms    *float64 `json:"latency_p99_ms" doc:"99th percentile latency, ms, likewise" example:"24.7"`
	JitterMs        *float64 `json:"jitter_ms" doc:"Mean jitter of the up samples, ms; null without up samples" example:"1.8"`
	PacketLossPct   *float64 `json:"packet_loss_pct" doc:"Mean packet loss of the up samples, percent" example:"0.05"`
	UtilizationPct  *float64 `json:"utilization_pct" doc:"Mean bandwidth utilisation of the up samples, percent" example:"41.2"`
	Incidents       int64    `json:"incidents" doc:"Down incidents that started in the bucket" example:"1"`
	Restored        int64    `json:"restored" doc:"Down incidents resolved in the bucket" example:"1"`
	MTTRMinutes     *float64 `json:"mttr_minutes" doc:"Mean minutes from down to restored of the incidents restored in the bucket; null when none" example:"42.5"`
}

// performanceFigures converts figures.
func performanceFigures(f analytics.PerformanceFigures) PerformanceFiguresItem {
	return PerformanceFiguresItem{Samples: f.Samples, UpSamples: f.UpSamples, AvailabilityPct: f.AvailabilityPct, LatencyP50Ms: f.LatencyP50Ms,
		LatencyP95Ms: f.LatencyP95Ms, LatencyP99Ms: f.LatencyP99Ms, JitterMs: f.JitterMs, PacketLossPct: f.PacketLossPct, UtilizationPct: f.UtilizationPct,
		Incidents: f.Incidents, Restored: f.Restored, MTTRMinutes: f.MTTRMinutes}
}

// PerformanceBucketItem is one bucket's performance.
type PerformanceBucketItem struct {
	Start string `json:"start" doc:"Inclusive, RFC 3339 in timezone (the period's start for the first bucket)" example:"2026-11-25T00:00:00Z"`
	End   string `json:"end" doc:"Exclusive, RFC 3339 in timezone (the period's end for the last bucket)" example:"2026-11-26T00:00:00Z"`
	PerformanceFiguresItem
}

// ServicePerformanceItem is one service's performance over the period.
type ServicePerformanceItem struct {
	ServiceID   string  `json:"service_id" example:"svc_3fK9aZ"`
	Name        string  `json:"name" example:"HQ internet"`
	ServiceType string  `json:"service_type" doc:"The service's kind" example:"internet"`
	Category    string  `json:"category" example:"connectivity"`
	SLA         string  `json:"sla" enum:"standard,premium,enterprise" example:"premium"`
	TargetPct   float64 `json:"availability_target_pct" doc:"The SLA tier's availability target: 99.5 standard, 99.9 premium, 99.99 enterprise" example:"99.9"`
	MetSLA      *bool   `json:"met_sla" doc:"availability_pct (unrounded) >= availability_target_pct; null without samples" example:"true"`
	PerformanceFiguresItem
}

// SLAAttainmentItem is the share of services that met their SLA tier's target.
type SLAAttainmentItem struct {
	Measured      int64    `json:"services_measured" doc:"Services with samples in the period" example:"4"`
	Met           int64    `json:"services_met" doc:"Of which met their tier's availability target" example:"3"`
	AttainmentPct *float64 `json:"attainment_pct" doc:"services_met / services_measured × 100, two decimals; null when none measured" example:"75"`
}

// PerformanceAnalytics is the performance answer.
type PerformanceAnalytics struct {
	Query            AnalyticsQuery           `json:"query"`
	PercentileMethod string                   `json:"percentile_method" enum:"nearest_rank_1ms_histogram" doc:"How latency percentiles are computed (docs/analytics.md)" example:"nearest_rank_1ms_histogram"`
	Totals           PerformanceFiguresItem   `json:"totals"`
	Buckets          []PerformanceBucketItem  `json:"buckets" doc:"Every bucket of the period, oldest first, empty ones included (zeros and nulls)"`
	Services         []ServicePerformanceItem `json:"services" doc:"The services with samples or down incidents in the period, by id"`
	SLA              SLAAttainmentItem        `json:"sla_attainment"`
}

// PerformanceAnalyticsOutput wraps the performance answer.
type PerformanceAnalyticsOutput struct {
	Body struct {
		Envelope
		Performance PerformanceAnalytics `json:"performance"`
	}
}

// registerAnalytics registers the analytics endpoints (docs/analytics.md).
func (s *Server) registerAnalytics() {
	store := analytics.NewStore(s.store)
	tags := []string{"Analytics"}
	s.registerAnalyticsTrends(store, tags)
	register(s, huma.Operation{OperationID: "get-analytics-usage", Method: http.MethodGet, Path: "/analytics/usage", Summary: "Usage analytics", Tags: tags,
		Description: "Usage per bucket, per service, per category and per service kind over a period: data transferred and calls from the services' " +
			"telemetry samples, voice minutes and storage from the metered usage records. Counts in the large data exports rate-limit group. " +
			"Customers see their organization, provider staff every organization (or organization_id's); the credential's environment only. See docs/analytics.md."},
		access{permission: "services:read"}, func(ctx context.Context, in *AnalyticsParams) (*UsageAnalyticsOutput, error) {
			p := principal(ctx)
			q, err := analytics.ParseQuery(in.input(), p.IsStaff(), s.now())
			if err != nil {
				return nil, err
			}
			u, err := store.Usage(ctx, p, q)
			if err != nil {
				return nil, err
			}
			out := &UsageAnalyticsOutput{}
			out.Body.Usage = usageAnalytics(u)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-analytics-costs", Method: http.MethodGet, Path: "/analytics/costs", Summary: "Cost analytics", Tags: tags,
		Description: "Spend per bucket and per category over a period: invoice lines (issued, not cancelled, before tax), rated usage not invoiced yet, " +
			"SLA credits listed and subtracted; the budgets' burn in their current period; and a forecast of the current month (linear run-rate). " +
			"Counts in the large data exports rate-limit group. See docs/analytics.md."},
		access{permission: "billing:read"}, func(ctx context.Context, in *struct {
			AnalyticsParams
			Currency string `query:"currency" maxLength:"3" pattern:"^[A-Za-z]{3}$" doc:"ISO 4217 code of the amounts counted, one billing accounts may hold (USD, EUR, GBP, CAD, AUD); default the currency of the oldest billing account in view, else USD" example:"USD"`
		}) (*CostsAnalyticsOutput, error) {
			p, now := principal(ctx), s.now()
			q, err := analytics.ParseQuery(in.input(), p.IsStaff(), now)
			if err != nil {
				return nil, err
			}
			c, err := store.Costs(ctx, p, q, in.Currency, now)
			if err != nil {
				return nil, err
			}
			out := &CostsAnalyticsOutput{}
			out.Body.Costs = costsAnalytics(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-analytics-performance", Method: http.MethodGet, Path: "/analytics/performance", Summary: "Performance analytics", Tags: tags,
		Description: "Performance per bucket, per service and over the period, from the services' telemetry samples and down incidents: availability " +
			"(share of samples up), latency p50/p95/p99, mean jitter, packet loss and utilisation (of the up samples), incidents and MTTR; and the share of " +
			"services that met their SLA tier's availability target. Counts in the large data exports rate-limit group. See docs/analytics.md."},
		access{permission: "services:read"}, func(ctx context.Context, in *AnalyticsParams) (*PerformanceAnalyticsOutput, error) {
			p := principal(ctx)
			q, err := analytics.ParseQuery(in.input(), p.IsStaff(), s.now())
			if err != nil {
				return nil, err
			}
			perf, err := store.Performance(ctx, p, q)
			if err != nil {
				return nil, err
			}
			out := &PerformanceAnalyticsOutput{}
			out.Body.Performance = performanceAnalytics(perf)
			return out, nil
		})
}

// usageAnalytics converts a usage answer.
func usageAnalytics(u *analytics.Usage) UsageAnalytics {
	out := UsageAnalytics{Query: analyticsQuery(u.Query), Totals: usageFigures(u.Totals)}
	out.Buckets = mapSlice(u.Buckets, func(b *analytics.UsageBucket) UsageBucketItem {
		return UsageBucketItem{Start: analytics.Label(b.Start), End: analytics.Label(b.End), UsageFiguresItem: usageFigures(b.UsageFigures)}
	})
	out.Services = mapSlice(u.Services, func(v *analytics.ServiceUsage) ServiceUsageFigures {
		return ServiceUsageFigures{ServiceID: v.ServiceID, Name: v.Name, ServiceType: v.Kind, Category: v.Category, UsageFiguresItem: usageFigures(v.UsageFigures)}
	})
	out.Categories = mapSlice(u.Categories, func(g *analytics.GroupUsage) CategoryUsageItem {
		return CategoryUsageItem{Category: g.Key, UsageFiguresItem: usageFigures(g.UsageFigures)}
	})
	out.ServiceTypes = mapSlice(u.ServiceTypes, func(g *analytics.GroupUsage) ServiceTypeUsageItem {
		return ServiceTypeUsageItem{ServiceType: g.Key, UsageFiguresItem: usageFigures(g.UsageFigures)}
	})
	return out
}

// costsAnalytics converts a costs answer.
func costsAnalytics(c *analytics.Costs) CostsAnalytics {
	loc := c.Query.Location
	out := CostsAnalytics{Query: analyticsQuery(c.Query), Currency: c.Currency, Totals: costFigures(c.Totals)}
	out.Buckets = mapSlice(c.Buckets, func(b *analytics.CostBucket) CostBucketItem {
		return CostBucketItem{Start: analytics.Label(b.Start), End: analytics.Label(b.End), CostFiguresItem: costFigures(b.CostFigures)}
	})
	out.Categories = mapSlice(c.Categories, func(k *analytics.CategoryCost) CategoryCostItem {
		return CategoryCostItem{Category: k.Category, CostFiguresItem: costFigures(k.CostFigures)}
	})
	out.Credits = mapSlice(c.Credits, func(cr *analytics.Credit) CreditItem {
		return CreditItem{ID: cr.ID, ServiceID: cr.ServiceID, TicketID: cr.TicketID, Category: cr.Category, Amount: cr.Amount, Status: cr.Status,
			Reason: cr.Reason, IssuedAt: analytics.Label(cr.IssuedAt.In(loc))}
	})
	out.Budgets = mapSlice(c.Budgets, func(b *analytics.BudgetBurn) BudgetBurnItem {
		return BudgetBurnItem{BudgetID: b.BudgetID, AccountID: b.AccountID, Period: b.Period, PeriodStart: models.Timestamp(b.PeriodStart),
			PeriodEnd: models.Timestamp(b.PeriodEnd), Currency: b.Currency, Limit: b.Limit, Spent: b.Spent, Remaining: b.Remaining, PercentUsed: b.PercentUsed}
	})
	f := c.Forecast
	out.Forecast = ForecastItem{Method: f.Method, PeriodStart: analytics.Label(f.PeriodStart), PeriodEnd: analytics.Label(f.PeriodEnd),
		SpentToDate: f.SpentToDate, ElapsedFraction: f.ElapsedFraction, Forecast: f.Forecast}
	return out
}

// performanceAnalytics converts a performance answer.
func performanceAnalytics(a *analytics.Performance) PerformanceAnalytics {
	out := PerformanceAnalytics{Query: analyticsQuery(a.Query), PercentileMethod: analytics.PercentileMethod, Totals: performanceFigures(a.Totals),
		SLA: SLAAttainmentItem{Measured: a.SLA.Measured, Met: a.SLA.Met, AttainmentPct: a.SLA.AttainmentPct}}
	out.Buckets = mapSlice(a.Buckets, func(b *analytics.PerformanceBucket) PerformanceBucketItem {
		return PerformanceBucketItem{Start: analytics.Label(b.Start), End: analytics.Label(b.End), PerformanceFiguresItem: performanceFigures(b.PerformanceFigures)}
	})
	out.Services = mapSlice(a.Services, func(v *analytics.ServicePerformance) ServicePerformanceItem {
		return ServicePerformanceItem{ServiceID: v.ServiceID, Name: v.Name, ServiceType: v.Kind, Category: v.Category, SLA: v.SLA, TargetPct: v.TargetPct,
			MetSLA: v.MetSLA, PerformanceFiguresItem: performanceFigures(v.PerformanceFigures)}
	})
	return out
}
