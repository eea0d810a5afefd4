package analytics

import (
	"context"
	"math"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
)

// Trend series: the metrics GET /analytics/trends answers, in the order
// it lists them.
const (
	MetricDataGB        = "data_gb"        // data transferred, GB, from the telemetry samples
	MetricVoiceCalls    = "voice_calls"    // calls handled, from the telemetry samples
	MetricNetSpend      = "net_spend"      // net spend, as the costs endpoint counts it
	MetricIncidents     = "incidents"      // down incidents started
	MetricTicketsOpened = "tickets_opened" // support tickets created
)

// TrendMetrics returns the trend series' metrics, in answer order.
func TrendMetrics() []string {
	return []string{MetricDataGB, MetricVoiceCalls, MetricNetSpend, MetricIncidents, MetricTicketsOpened}
}

// Forecast horizons: how many buckets after the fitted ones are forecast.
const (
	DefaultHorizon = 3
	MaxHorizon     = 24
)

// ForecastReasonInsufficientData says why a series has no forecast: the
// period holds fewer than MinFitPoints whole buckets that have ended.
const ForecastReasonInsufficientData = "insufficient_data"

// The permissions the cost and ticket series need on top of the
// endpoint's services:read.
const (
	permBillingRead = "billing:read"
	permSupportRead = support.PermissionRead
)

// TrendPoint is one bucket of a series.
type TrendPoint struct {
	Bucket
	Value     float64
	ChangePct *float64 // against the previous bucket (GrowthRate); nil for the first bucket and buckets not started
}

// ForecastPoint is one forecast bucket: the point forecast and its 95 %
// prediction interval.
type ForecastPoint struct {
	Bucket
	Value float64
	Lower float64
	Upper float64
}

// SeriesForecast is a series' forecast (TrendMethod): the line fitted on
// the whole buckets that ended, and Horizon buckets after them.
type SeriesForecast struct {
	Method     string
	Confidence int       // percent
	FittedFrom time.Time // start of the first bucket fitted
	FittedTo   time.Time // end of the last bucket fitted, where the points start
	Fit        LinearFit // rounded to four decimals
	Points     []ForecastPoint
}

// TrendSeries is one metric's series over the period, its growth against
// the previous period and its forecast.
type TrendSeries struct {
	Metric         string
	Unit           string   // GB, calls, incidents, tickets, or the currency of net_spend
	CurrentTotal   float64  // the sum of the buckets
	PreviousTotal  float64  // the same figure over the previous period
	GrowthRatePct  *float64 // GrowthRate(CurrentTotal, PreviousTotal)
	Buckets        []TrendPoint
	Forecast       *SeriesForecast // nil when ForecastReason says why
	ForecastReason string
}

// OmittedSeries is a series left out of an answer because the caller
// lacks the permission that reads it.
type OmittedSeries struct {
	Metric             string
	RequiredPermission string
}

// Trends is the answer of GET /analytics/trends.
type Trends struct {
	Query        *Query
	Currency     string // of net_spend
	Horizon      int
	ComparedFrom time.Time // the part of the period compared: from its start
	ComparedTo   time.Time // to its end or now, whichever comes first
	PreviousFrom time.Time // the previous period: as long, just before
	PreviousTo   time.Time
	Series       []TrendSeries
	Omitted      []OmittedSeries
}

// Trends answers the trends of what p sees (see docs/analytics.md) over q
// at now: every series per bucket, its growth against the previous period
// of the same length, and an ordinary least-squares forecast of horizon
// buckets (0: DefaultHorizon). Net spend is counted in currency (as Costs
// does) and answered only when p holds billing:read; tickets only when p
// holds support:read. Errors: VALIDATION_ERROR (horizon, currency),
// NOT_FOUND (a filter naming what p cannot see).
func (s *Store) Trends(ctx context.Context, p *models.Principal, q *Query, horizon int, currency string, now time.Time) (*Trends, error) {
	var v models.Validator
	if horizon == 0 {
		horizon = DefaultHorizon
	}
	v.Check(horizon >= 1 && horizon <= MaxHorizon, "horizon", "must be between 1 and 24")
	currency = strings.ToUpper(strings.TrimSpace(currency))
	v.Check(currency == "" || models.SupportedCurrency(currency), "currency", models.CurrencyIssue)
	if err := v.Err(); err != nil {
		return nil, err
	}
	t, err := s.resolve(ctx, p, q)
	if err != nil {
		return nil, err
	}
	tr := &Trends{Query: q, Horizon: horizon, Omitted: []OmittedSeries{}}
	want := map[string]bool{}
	for _, m := range TrendMetrics() {
		switch {
		case m == MetricNetSpend && !p.Can(permBillingRead):
			tr.Omitted = append(tr.Omitted, OmittedSeries{Metric: m, RequiredPermission: permBillingRead})
		case m == MetricTicketsOpened && !p.Can(permSupportRead):
			tr.Omitted = append(tr.Omitted, OmittedSeries{Metric: m, RequiredPermission: permSupportRead})
		default:
			want[m] = true
		}
	}
	if want[MetricNetSpend] {
		if currency == "" {
			if currency, err = s.defaultCurrency(ctx, t, q.Filters); err != nil {
				return nil, err
			}
		}
		tr.Currency = currency
	}
	tq := &trendQuery{s: s, ctx: ctx, t: t, want: want, cq: &costQuery{s: s, ctx: ctx, t: t, f: q.Filters, currency: currency}}

	// The current period, per bucket.
	values := map[string][]float64{}
	for m := range want {
		values[m] = make([]float64, len(q.Buckets))
	}
	if err := tq.collect(q.From.UTC(), q.To.UTC(), func(m string, slot int64, v float64) {
		if vs, ok := values[m]; ok {
			vs[q.bucketIndex(slot)] += v
		}
	}); err != nil {
		return nil, err
	}
	// The previous period: as long as the part of the period up to now.
	tr.ComparedFrom, tr.ComparedTo = q.From, q.To
	if now.Before(q.To) {
		tr.ComparedTo = now.In(q.Location)
	}
	previous := map[string]float64{}
	if tr.ComparedTo.After(q.From) {
		tr.PreviousFrom, tr.PreviousTo = q.From.Add(-tr.ComparedTo.Sub(q.From)), q.From
		if err := tq.collect(tr.PreviousFrom.UTC(), tr.PreviousTo.UTC(), func(m string, _ int64, v float64) { previous[m] += v }); err != nil {
			return nil, err
		}
	} else {
		tr.ComparedTo, tr.PreviousFrom, tr.PreviousTo = q.From, q.From, q.From
	}

	fitFrom, fitTo := wholeEnded(q, now)
	for _, m := range TrendMetrics() {
		if !want[m] {
			continue
		}
		tr.Series = append(tr.Series, trendSeries(q, m, unitOf(m, currency), values[m], previous[m], fitFrom, fitTo, horizon, now))
	}
	return tr, nil
}

// trendSeries builds the series of metric m from its bucket values (in
// the metric's raw unit: MB for data, minor units for money) and previous
// total, with a forecast fitted on the buckets [fitFrom, fitTo).
func trendSeries(q *Query, m, unit string, raw []float64, prevRaw float64, fitFrom, fitTo, horizon int, now time.Time) TrendSeries {
	scale, round := metricScale(m)
	ser := TrendSeries{Metric: m, Unit: unit, Buckets: make([]TrendPoint, len(q.Buckets))}
	vals := make([]float64, len(raw))
	var total float64
	for i, r := range raw {
		total += r
		vals[i] = round(r / scale)
		ser.Buckets[i] = TrendPoint{Bucket: q.Buckets[i], Value: vals[i]}
		if i > 0 && !q.Buckets[i].Start.After(now) {
			ser.Buckets[i].ChangePct = GrowthRate(vals[i], vals[i-1])
		}
	}
	ser.CurrentTotal, ser.PreviousTotal = round(total/scale), round(prevRaw/scale)
	ser.GrowthRatePct = GrowthRate(ser.CurrentTotal, ser.PreviousTotal)

	fit, ok := FitLinear(vals[fitFrom:fitTo])
	if !ok {
		ser.ForecastReason = ForecastReasonInsufficientData
		return ser
	}
	fc := &SeriesForecast{Method: TrendMethod, Confidence: IntervalConfidence, FittedFrom: q.Buckets[fitFrom].Start, FittedTo: q.Buckets[fitTo-1].End,
		Points: make([]ForecastPoint, horizon)}
	nonNegative := m != MetricNetSpend
	start := fc.FittedTo
	for k := range horizon {
		end := nextUnit(start, q.Granularity)
		value, half := fit.Interval(float64(fit.N + k))
		pt := ForecastPoint{Bucket: Bucket{Start: start, End: end}, Value: round(value), Lower: round(value - half), Upper: round(value + half)}
		if nonNegative {
			pt.Value, pt.Lower, pt.Upper = max(pt.Value, 0), max(pt.Lower, 0), max(pt.Upper, 0)
		}
		fc.Points[k] = pt
		start = end
	}
	r4 := func(v float64) float64 { return math.Round(v*10000) / 10000 }
	fc.Fit = LinearFit{N: fit.N, Slope: r4(fit.Slope), Intercept: r4(fit.Intercept), StdError: r4(fit.StdError), MeanX: r4(fit.MeanX), Sxx: r4(fit.Sxx), T: r4(fit.T)}
	ser.Forecast = fc
	return ser
}

// wholeEnded returns the run [from, to) of q's buckets a forecast is
// fitted on: the buckets that span a whole hour, day, week or month (not
// clamped by the period) and ended by now. Only the first and the last
// bucket can be clamped and only the last ones can be unfinished, so
// they form one run; it is empty when none qualifies.
func wholeEnded(q *Query, now time.Time) (from, to int) {
	whole := func(b Bucket) bool {
		return b.Start.Equal(unitStart(b.Start, q.Granularity)) && b.End.Equal(nextUnit(b.Start, q.Granularity)) && !b.End.After(now)
	}
	to = len(q.Buckets)
	for to > 0 && !whole(q.Buckets[to-1]) {
		to--
	}
	from = to
	for from > 0 && whole(q.Buckets[from-1]) {
		from--
	}
	return from, to
}

// metricScale returns what divides a metric's raw sum into its unit (MB
// to GB, minor units to money) and how its values are rounded.
func metricScale(m string) (float64, func(float64) float64) {
	switch m {
	case MetricDataGB:
		return 1000, round3
	case MetricNetSpend:
		return 100, round2
	}
	return 1, round2
}

// unitOf returns the unit of a metric's values.
func unitOf(m, currency string) string {
	switch m {
	case MetricDataGB:
		return "GB"
	case MetricVoiceCalls:
		return "calls"
	case MetricNetSpend:
		return currency
	case MetricIncidents:
		return "incidents"
	}
	return "tickets"
}

// trendQuery runs the aggregates of the trend series of a target.
type trendQuery struct {
	s    *Store
	ctx  context.Context
	t    *target
	want map[string]bool
	cq   *costQuery
}

// slotRow is one aggregate row: a 15-minute slot and sums.
type slotRow struct {
	Bucket int64
	DataMB float64
	Calls  int64
	N      int64
}

// collect folds the raw values of the wanted series over [from, to) per
// 15-minute slot: data in MB and calls from the telemetry samples (as
// Usage counts them), net spend in minor units (charges and unbilled usage
// less SLA credits, as Costs counts them), down incidents by their start
// (as Performance counts them) and support tickets by their creation.
func (tq *trendQuery) collect(from, to time.Time, fold func(metric string, slot int64, v float64)) error {
	s, ctx, t := tq.s, tq.ctx, tq.t
	scan := func(db *gorm.DB, sel, group string) ([]slotRow, error) {
		var rows []slotRow
		if err := db.Select(sel).Group(group).Scan(&rows).Error; err != nil {
			return nil, models.DBErr(err)
		}
		return rows, nil
	}
	if tq.want[MetricDataGB] || tq.want[MetricVoiceCalls] {
		b := t.bucket("at")
		rows, err := scan(t.onServices(s.In(ctx, t.scope).Model(&telemetry.TelemetrySample{}), "service_id").Where("at >= ? AND at < ?", from, to),
			b+" AS bucket, COALESCE(SUM(data_mb), 0) AS data_mb, COALESCE(SUM(calls), 0) AS calls", b)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fold(MetricDataGB, r.Bucket, r.DataMB)
			fold(MetricVoiceCalls, r.Bucket, float64(r.Calls))
		}
	}
	if tq.want[MetricNetSpend] {
		amounts, err := tq.cq.amounts(from, to)
		if err != nil {
			return err
		}
		for _, r := range amounts {
			fold(MetricNetSpend, r.Bucket, float64(r.Amount))
		}
		credits, err := tq.cq.credits(from, to)
		if err != nil {
			return err
		}
		for _, cr := range credits {
			fold(MetricNetSpend, cr.IssuedAt.Unix()/bucketSeconds, -float64(cr.Amount))
		}
	}
	if tq.want[MetricIncidents] {
		b := t.bucket("started_at")
		rows, err := scan(t.onServices(s.In(ctx, t.scope).Model(&telemetry.ServiceIncident{}), "service_id").
			Where("kind = ? AND started_at >= ? AND started_at < ?", telemetry.IncidentDown, from, to), b+" AS bucket, COUNT(*) AS n", b)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fold(MetricIncidents, r.Bucket, float64(r.N))
		}
	}
	if tq.want[MetricTicketsOpened] {
		// With a service or account filter, only the tickets naming one
		// of the selected services as the service affected.
		b := t.bucket("created_at")
		rows, err := scan(t.onServices(s.In(ctx, t.scope).Model(&support.Ticket{}), "service_affected").
			Where("created_at >= ? AND created_at < ?", from, to), b+" AS bucket, COUNT(*) AS n", b)
		if err != nil {
			return err
		}
		for _, r := range rows {
			fold(MetricTicketsOpened, r.Bucket, float64(r.N))
		}
	}
	return nil
}
