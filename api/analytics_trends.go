package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models/analytics"
)

// TrendsParams are the parameters of GET /analytics/trends: the query
// model, the forecast horizon and the currency of net spend.
type TrendsParams struct {
	AnalyticsParams
	Horizon  int    `query:"horizon" minimum:"1" maximum:"24" default:"3" doc:"How many buckets (of granularity) to forecast after the last whole bucket that ended" example:"3"`
	Currency string `query:"currency" maxLength:"3" pattern:"^[A-Za-z]{3}$" doc:"ISO 4217 code of the amounts counted in net_spend, one billing accounts may hold (USD, EUR, GBP, CAD, AUD); default the currency of the oldest billing account in view, else USD" example:"USD"`
}

// TrendBucketItem is one bucket of a series.
type TrendBucketItem struct {
	Start     string   `json:"start" doc:"Inclusive, RFC 3339 in timezone (the period's start for the first bucket)" example:"2026-11-25T00:00:00Z"`
	End       string   `json:"end" doc:"Exclusive, RFC 3339 in timezone (the period's end for the last bucket)" example:"2026-11-26T00:00:00Z"`
	Value     float64  `json:"value" doc:"The series' figure in the bucket, in its unit" example:"152.375"`
	ChangePct *float64 `json:"change_pct" nullable:"true" doc:"(value - previous bucket's value) / |previous bucket's value| × 100, two decimals; null for the first bucket, after a zero bucket, and for buckets that have not started" example:"12.5"`
}

// TrendForecastPointItem is one forecast bucket.
type TrendForecastPointItem struct {
	Start string  `json:"start" doc:"Inclusive, RFC 3339 in timezone" example:"2026-11-26T00:00:00Z"`
	End   string  `json:"end" doc:"Exclusive, RFC 3339 in timezone" example:"2026-11-27T00:00:00Z"`
	Value float64 `json:"value" doc:"Point forecast: the fitted line at this bucket" example:"160.2"`
	Lower float64 `json:"lower" doc:"Lower bound of the 95 % prediction interval (never below zero, but for net_spend)" example:"141.9"`
	Upper float64 `json:"upper" doc:"Upper bound of the 95 % prediction interval" example:"178.5"`
}

// TrendFitItem is the line a forecast is read from.
type TrendFitItem struct {
	Buckets          int     `json:"buckets" doc:"Whole buckets fitted (n, at least 3)" example:"28"`
	Slope            float64 `json:"slope" doc:"Change per bucket, in the series' unit, four decimals" example:"0.8125"`
	Intercept        float64 `json:"intercept" doc:"The line at the first bucket fitted (x = 0), four decimals" example:"137.6"`
	ResidualStdError float64 `json:"residual_std_error" doc:"s = sqrt(sum of squared residuals / (n - 2)), four decimals" example:"4.2051"`
	TValue           float64 `json:"t_value" doc:"The 97.5 % quantile of Student's t with n - 2 degrees of freedom, four decimals" example:"2.0555"`
}

// TrendForecastItem is a series' forecast.
type TrendForecastItem struct {
	_             struct{}                 `nullable:"true"` // answered as null where there is none
	Method        string                   `json:"method" enum:"ols_linear" doc:"ols_linear: ordinary least squares over the bucket index; see docs/analytics.md" example:"ols_linear"`
	ConfidencePct int                      `json:"confidence_pct" enum:"95" doc:"Confidence of the prediction intervals" example:"95"`
	FittedFrom    string                   `json:"fitted_from" doc:"Start of the first bucket fitted, RFC 3339 in timezone" example:"2026-10-28T00:00:00Z"`
	FittedTo      string                   `json:"fitted_to" doc:"End of the last bucket fitted (where the forecast starts), RFC 3339 in timezone" example:"2026-11-26T00:00:00Z"`
	Fit           TrendFitItem             `json:"fit"`
	Points        []TrendForecastPointItem `json:"points" doc:"horizon buckets after fitted_to, in order"`
}

// TrendSeriesItem is one metric's series.
type TrendSeriesItem struct {
	Metric         string             `json:"metric" enum:"data_gb,voice_calls,net_spend,incidents,tickets_opened" example:"data_gb"`
	Unit           string             `json:"unit" doc:"GB, calls, incidents, tickets, or the currency code for net_spend" example:"GB"`
	CurrentTotal   float64            `json:"current_total" doc:"The sum of the buckets" example:"4520.125"`
	PreviousTotal  float64            `json:"previous_total" doc:"The same figure over the previous period (previous_period)" example:"4012.5"`
	GrowthRatePct  *float64           `json:"growth_rate_pct" nullable:"true" doc:"(current_total - previous_total) / |previous_total| × 100, two decimals; null when previous_total is 0" example:"12.65"`
	Buckets        []TrendBucketItem  `json:"buckets" doc:"Every bucket of the period, oldest first, zeros included"`
	Forecast       *TrendForecastItem `json:"forecast" doc:"The forecast; null when forecast_reason says why"`
	ForecastReason string             `json:"forecast_reason,omitempty" enum:"insufficient_data" doc:"Why forecast is null: insufficient_data, fewer than 3 whole buckets that ended" example:"insufficient_data"`
}

// TrendOmittedItem is a series left out for a missing permission.
type TrendOmittedItem struct {
	Metric             string `json:"metric" enum:"net_spend,tickets_opened" example:"net_spend"`
	RequiredPermission string `json:"required_permission" enum:"billing:read,support:read" example:"billing:read"`
}

// TrendPeriodItem is a span of time compared.
type TrendPeriodItem struct {
	From string `json:"from" doc:"Inclusive, RFC 3339 in timezone" example:"2026-10-27T00:00:00Z"`
	To   string `json:"to" doc:"Exclusive, RFC 3339 in timezone" example:"2026-11-26T00:00:00Z"`
}

// TrendsAnalytics is the trends answer.
type TrendsAnalytics struct {
	Query          AnalyticsQuery     `json:"query"`
	Horizon        int                `json:"horizon" doc:"Buckets forecast per series" example:"3"`
	Currency       string             `json:"currency,omitempty" doc:"Currency of net_spend (absent when net_spend is omitted)" example:"USD"`
	ComparedPeriod TrendPeriodItem    `json:"compared_period" doc:"The part of the period compared: from its start to its end or now, whichever is earlier"`
	PreviousPeriod TrendPeriodItem    `json:"previous_period" doc:"The span of the same length just before the period"`
	Series         []TrendSeriesItem  `json:"series" doc:"data_gb, voice_calls, net_spend, incidents, tickets_opened, in that order, less the omitted ones"`
	Omitted        []TrendOmittedItem `json:"omitted" doc:"Series left out because the credential lacks the permission that reads them"`
}

// TrendsAnalyticsOutput wraps the trends answer.
type TrendsAnalyticsOutput struct {
	Body struct {
		Envelope
		Trends TrendsAnalytics `json:"trends"`
	}
}

// registerAnalyticsTrends registers GET /analytics/trends on store.
func (s *Server) registerAnalyticsTrends(store *analytics.Store, tags []string) {
	register(s, huma.Operation{OperationID: "get-analytics-trends", Method: http.MethodGet, Path: "/analytics/trends", Summary: "Trend analytics", Tags: tags,
		Description: "Per-bucket series of data transferred, calls, net spend, down incidents and support tickets opened; each series' growth against the " +
			"previous period of the same length; and an ordinary least-squares linear forecast of horizon buckets with 95 % prediction intervals. " +
			"net_spend needs billing:read and tickets_opened support:read too, else they are listed in omitted. Counts in the large data exports " +
			"rate-limit group. See docs/analytics.md."},
		access{permission: "services:read"}, func(ctx context.Context, in *TrendsParams) (*TrendsAnalyticsOutput, error) {
			p, now := principal(ctx), s.now()
			q, err := analytics.ParseQuery(in.input(), p.IsStaff(), now)
			if err != nil {
				return nil, err
			}
			tr, err := store.Trends(ctx, p, q, in.Horizon, in.Currency, now)
			if err != nil {
				return nil, err
			}
			out := &TrendsAnalyticsOutput{}
			out.Body.Trends = trendsAnalytics(tr)
			return out, nil
		})
}

// trendsAnalytics converts a trends answer.
func trendsAnalytics(tr *analytics.Trends) TrendsAnalytics {
	out := TrendsAnalytics{Query: analyticsQuery(tr.Query), Horizon: tr.Horizon, Currency: tr.Currency,
		ComparedPeriod: TrendPeriodItem{From: analytics.Label(tr.ComparedFrom), To: analytics.Label(tr.ComparedTo)},
		PreviousPeriod: TrendPeriodItem{From: analytics.Label(tr.PreviousFrom), To: analytics.Label(tr.PreviousTo)}}
	out.Series = mapSlice(tr.Series, func(s *analytics.TrendSeries) TrendSeriesItem {
		item := TrendSeriesItem{Metric: s.Metric, Unit: s.Unit, CurrentTotal: s.CurrentTotal, PreviousTotal: s.PreviousTotal, GrowthRatePct: s.GrowthRatePct,
			ForecastReason: s.ForecastReason}
		item.Buckets = mapSlice(s.Buckets, func(b *analytics.TrendPoint) TrendBucketItem {
			return TrendBucketItem{Start: analytics.Label(b.Start), End: analytics.Label(b.End), Value: b.Value, ChangePct: b.ChangePct}
		})
		if f := s.Forecast; f != nil {
			item.Forecast = &TrendForecastItem{Method: f.Method, ConfidencePct: f.Confidence, FittedFrom: analytics.Label(f.FittedFrom),
				FittedTo: analytics.Label(f.FittedTo), Fit: TrendFitItem{Buckets: f.Fit.N, Slope: f.Fit.Slope, Intercept: f.Fit.Intercept,
					ResidualStdError: f.Fit.StdError, TValue: f.Fit.T}}
			item.Forecast.Points = mapSlice(f.Points, func(p *analytics.ForecastPoint) TrendForecastPointItem {
				return TrendForecastPointItem{Start: analytics.Label(p.Start), End: analytics.Label(p.End), Value: p.Value, Lower: p.Lower, Upper: p.Upper}
			})
		}
		return item
	})
	out.Omitted = mapSlice(tr.Omitted, func(o *analytics.OmittedSeries) TrendOmittedItem {
		return TrendOmittedItem{Metric: o.Metric, RequiredPermission: o.RequiredPermission}
	})
	return out
}
