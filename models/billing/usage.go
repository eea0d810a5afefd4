package billing

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// Usage metrics (spec 2.3 total_usage).
const (
	MetricVoiceMinutes   = "voice_minutes"
	MetricDataGB         = "data_gb"
	MetricCloudStorageGB = "cloud_storage_gb"
	MetricAPICalls       = "api_calls"
)

// ServiceTypeAPI is the service_type of the platform's own API usage.
const ServiceTypeAPI = "api"

// metricUnits are the units usage is reported in.
var metricUnits = map[string]string{
	MetricVoiceMinutes: "minutes", MetricDataGB: "GB", MetricCloudStorageGB: "GB", MetricAPICalls: "requests",
}

// IdleUtilizationPct is the average utilisation over the last 30 days
// below which a subscribed service counts as idle in cost analysis.
const IdleUtilizationPct = 5.0

// UsageRecord is a metered quantity of one metric over a period: a
// service's usage measured from its telemetry when its subscription closes
// a period, or an organization's API requests of a calendar month. Cost is
// what the usage adds to the price (zero when the price includes it); it is
// charged on the invoice that claims the record (InvoiceID).
type UsageRecord struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	models.Tenant
	RecordKey      string       `gorm:"size:200;not null;uniqueIndex"`
	AccountID      string       `gorm:"size:40;index"`
	ServiceID      string       `gorm:"size:40;index"`
	SubscriptionID string       `gorm:"size:40"`
	ServiceType    string       `gorm:"size:40;not null"`
	Category       string       `gorm:"size:40;not null"`
	Metric         string       `gorm:"size:30;not null"`
	Quantity       float64      `gorm:"not null"`
	Unit           string       `gorm:"size:20;not null"`
	PeriodStart    time.Time    `gorm:"not null;index"`
	PeriodEnd      time.Time    `gorm:"not null"`
	Cost           models.Money `gorm:"not null;default:0"`
	Currency       string       `gorm:"size:3;not null"`
	InvoiceID      string       `gorm:"size:40;not null;default:'';index"`
	CreatedAt      time.Time
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// dataGB returns the data a service of mbps transferred over [from, to)
// at an average utilisation of pct percent, in GB (10^9 bytes).
func dataGB(pct float64, mbps int, from, to time.Time) float64 {
	return round3(pct / 100 * float64(mbps) * to.Sub(from).Seconds() / 8 / 1000)
}

// measureData returns the data a service transferred over [from, to),
// from its telemetry: the average utilisation of the samples in the window
// in which it was up (or of the latest earlier sample, when none falls in
// it) times its bandwidth and the window's length. ok is false without any
// sample.
func measureData(db *gorm.DB, svc *services.Service, from, to time.Time) (gb float64, ok bool, err error) {
	if svc.BandwidthMbps <= 0 || !to.After(from) {
		return 0, false, nil
	}
	var agg struct {
		Avg *float64
		N   int64
	}
	if err := db.Model(&telemetry.TelemetrySample{}).Select("AVG(CASE WHEN up THEN utilization_pct ELSE 0 END) AS avg, COUNT(*) AS n").
		Where("service_id = ? AND at >= ? AND at < ?", svc.ID, from, to).Scan(&agg).Error; err != nil {
		return 0, false, models.DBErr(err)
	}
	if agg.N > 0 && agg.Avg != nil {
		return dataGB(*agg.Avg, svc.BandwidthMbps, from, to), true, nil
	}
	var last telemetry.TelemetrySample
	if err := db.Where("service_id = ? AND at < ?", svc.ID, to).Order("at DESC").Limit(1).Find(&last).Error; err != nil {
		return 0, false, models.DBErr(err)
	}
	if last.ID == 0 {
		return 0, false, nil
	}
	pct := 0.0
	if last.Up {
		pct = last.UtilizationPct
	}
	return dataGB(pct, svc.BandwidthMbps, from, to), true, nil
}

// meterService records the usage of a subscription's service over the
// closed period [from, to) (once: keyed by subscription and period).
func (s *Store) meterService(ctx context.Context, tx *gorm.DB, sub *Subscription, from, to time.Time) error {
	var svc services.Service
	if err := tx.Where("id = ?", sub.ServiceID).Take(&svc).Error; err != nil {
		return models.NotFoundOr(err, "service")
	}
	gb, ok, err := measureData(tx, &svc, from, to)
	if err != nil || !ok {
		return err
	}
	rec := &UsageRecord{RecordKey: fmt.Sprintf("%s:%s:%s:%s", sub.OrganizationID, sub.ID, MetricDataGB, from.UTC().Format(time.RFC3339)),
		AccountID: sub.AccountID, ServiceID: svc.ID, SubscriptionID: sub.ID, ServiceType: svc.Kind, Category: sub.Category,
		Metric: MetricDataGB, Quantity: gb, Unit: metricUnits[MetricDataGB], PeriodStart: from, PeriodEnd: to, Currency: sub.Currency}
	return models.DBErr(tx.Clauses(clause.OnConflict{DoNothing: true}).Create(rec).Error)
}

// MonthKey returns the calendar month (UTC) of t as "2006-01".
func MonthKey(t time.Time) string { return t.UTC().Format("2006-01") }

// MonthStart returns the first instant of t's calendar month (UTC).
func MonthStart(t time.Time) time.Time {
	y, m, _ := t.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}

// OverageMonths returns the calendar months whose API overage a period
// closing at closeAt may bill: the two months before closeAt's month.
func OverageMonths(closeAt time.Time) []time.Time {
	m := MonthStart(closeAt)
	return []time.Time{m.AddDate(0, -2, 0), m.AddDate(0, -1, 0)}
}

// OverageCents converts an overage charge in micro-USD to cents, rounding half up.
func OverageCents(micros int64) models.Money { return models.Money((micros + 5_000) / 10_000) }

// unbilledUsageLines returns the invoice lines of a subscription's priced
// usage not yet invoiced (up to end), and of the organization's API
// overage of the months in apiRequests (live accounts in USD only: the
// plan's overage is priced in USD), with the usage records they claim.
func (s *Store) unbilledUsageLines(ctx context.Context, tx *gorm.DB, sub *Subscription, acct *models.BillingAccount, end time.Time, apiRequests map[string]int64) ([]InvoiceLine, []uint64, error) {
	var lines []InvoiceLine
	var claimed []uint64
	var recs []UsageRecord
	if err := tx.Where("service_id = ? AND invoice_id = ? AND cost > 0 AND period_end <= ?", sub.ServiceID, "", end).Order("period_start").Find(&recs).Error; err != nil {
		return nil, nil, models.DBErr(err)
	}
	for _, r := range recs {
		ps, pe := r.PeriodStart, r.PeriodEnd
		lines = append(lines, InvoiceLine{Kind: LineUsage, ServiceID: r.ServiceID, Category: r.Category, Quantity: 1, UnitPrice: r.Cost, Amount: r.Cost,
			Description: fmt.Sprintf("%s usage: %.3f %s, %s to %s", r.Metric, r.Quantity, r.Unit, models.Timestamp(ps), models.Timestamp(pe)), PeriodStart: &ps, PeriodEnd: &pe})
		claimed = append(claimed, r.ID)
	}
	if sub.Environment != models.EnvLive || acct.Currency != "USD" || len(apiRequests) == 0 {
		return lines, claimed, nil
	}
	var org models.Organization
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", sub.OrganizationID).Take(&org).Error; err != nil {
		return nil, nil, models.NotFoundOr(err, "organization")
	}
	limits := org.Limits()
	months := make([]string, 0, len(apiRequests))
	for k := range apiRequests {
		months = append(months, k)
	}
	sort.Strings(months)
	for _, key := range months {
		start, err := time.Parse("2006-01", key)
		if err != nil || !start.AddDate(0, 1, 0).Before(end.Add(time.Nanosecond)) {
			continue // not a month that has ended
		}
		requests := apiRequests[key]
		rec := &UsageRecord{RecordKey: fmt.Sprintf("%s:%s:%s:%s", sub.OrganizationID, sub.Environment, MetricAPICalls, key),
			ServiceType: ServiceTypeAPI, Category: CategoryPlatform, Metric: MetricAPICalls, Quantity: float64(requests),
			Unit: metricUnits[MetricAPICalls], PeriodStart: start, PeriodEnd: start.AddDate(0, 1, 0),
			Cost: OverageCents(limits.OverageCharge(requests)), Currency: "USD"}
		rec.OrganizationID, rec.Environment = sub.OrganizationID, sub.Environment
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(rec).Error; err != nil {
			return nil, nil, models.DBErr(err)
		}
		var stored UsageRecord
		if err := tx.Where("record_key = ?", rec.RecordKey).Take(&stored).Error; err != nil {
			return nil, nil, models.DBErr(err)
		}
		if stored.InvoiceID != "" || stored.Cost <= 0 {
			continue
		}
		ps, pe := stored.PeriodStart, stored.PeriodEnd
		over := int64(stored.Quantity) - limits.MonthlyIncluded
		lines = append(lines, InvoiceLine{Kind: LineOverage, Category: CategoryPlatform, Quantity: 1, UnitPrice: stored.Cost, Amount: stored.Cost,
			Description: fmt.Sprintf("API requests in %s beyond the %d included in the %s plan: %d at %s USD each", key, limits.MonthlyIncluded, org.Plan, over, microsString(limits.OverageMicros)),
			PeriodStart: &ps, PeriodEnd: &pe})
		claimed = append(claimed, stored.ID)
	}
	return lines, claimed, nil
}

// microsString formats micro-USD as a decimal amount (1000 → "0.001").
func microsString(micros int64) string {
	s := fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// Usage periods of GET /billing/usage.
const (
	PeriodCurrentMonth = "current_month"
	PeriodLastMonth    = "last_month"
	PeriodCurrentYear  = "current_year"
)

// UsageWindow returns the window [from, to) of a usage period at now.
// Errors: VALIDATION_ERROR.
func UsageWindow(period string, now time.Time) (from, to time.Time, err error) {
	m := MonthStart(now)
	switch period {
	case "", PeriodCurrentMonth:
		return m, m.AddDate(0, 1, 0), nil
	case PeriodLastMonth:
		return m.AddDate(0, -1, 0), m, nil
	case PeriodCurrentYear:
		y := time.Date(now.UTC().Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		return y, y.AddDate(1, 0, 0), nil
	}
	return time.Time{}, time.Time{}, models.Invalid(models.FieldIssue{Field: "period", Issue: "must be current_month, last_month or current_year"})
}

// UsageQuery is a request for a usage report.
type UsageQuery struct {
	Period      string
	ServiceType string // a catalog category, a service kind, or "api"; "" is every service
	Detailed    bool
	Currency    string
	Now         time.Time
	// APIRequests are the organization's API requests per calendar month
	// ("2006-01") as the rate limiter counts them; months absent fall back
	// to the usage records.
	APIRequests map[string]int64
}

// ServiceUsage is one service's usage and cost in a report.
type ServiceUsage struct {
	ServiceID   string
	ServiceType string
	Category    string
	Usage       float64
	Unit        string
	Cost        models.Money
	Metrics     map[string]float64
	Charges     []InvoiceLine
	Accrued     models.Money // recurring charge of the open period so far, not invoiced yet
}

// UsageReport is the usage response of spec 2.3.
type UsageReport struct {
	Period               string
	From, To             time.Time
	Currency             string
	TotalUsage           map[string]int64
	Services             []ServiceUsage
	EstimatedMonthlyCost models.Money
	Estimate             CostEstimate
}

// CostEstimate explains estimated_monthly_cost: the monthly run-rate of the
// active subscriptions, plus this month's metered usage and API overage
// projected from the days elapsed, plus the manual invoices issued this
// month (OneTimeCharges: their subtotals, after the SLA credits they
// applied, before tax).
type CostEstimate struct {
	RecurringRunRate    models.Money
	ProjectedUsage      models.Money
	ProjectedAPIOverage models.Money
	OneTimeCharges      models.Money
	DaysElapsed         float64
	DaysInMonth         int
}

// billingCurrency returns the currency reports use for p: the requested
// one, else that of the oldest billing account, else USD.
// Errors: VALIDATION_ERROR.
func (s *Store) billingCurrency(ctx context.Context, p *models.Principal, requested string) (string, error) {
	if requested != "" {
		c := strings.ToUpper(requested)
		if !models.SupportedCurrency(c) {
			return "", models.Invalid(models.FieldIssue{Field: "currency", Issue: models.CurrencyIssue})
		}
		return c, nil
	}
	var a models.BillingAccount
	err := s.In(ctx, p.OwnScope()).Order("created_at, id").Limit(1).Find(&a).Error
	if err != nil {
		return "", models.DBErr(err)
	}
	if a.ID == "" {
		return "USD", nil
	}
	return a.Currency, nil
}

// serviceTypeMatches reports whether a service of kind and category is
// selected by filter.
func serviceTypeMatches(filter, kind, category string) bool {
	return filter == "" || filter == kind || filter == category
}

// KnownServiceTypes returns the values service_type filters accept: the
// catalog's categories and kinds, and "api".
func (s *Store) KnownServiceTypes(ctx context.Context) ([]string, error) {
	var cs []catalog.CatalogService
	if err := s.In(ctx, models.SystemScope()).Find(&cs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	seen := map[string]bool{ServiceTypeAPI: true}
	for _, c := range cs {
		seen[c.Category], seen[c.Kind] = true, true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// chargeRow is an invoice line with its invoice's issue date.
type chargeRow struct {
	InvoiceID   string
	ServiceID   string
	Category    string
	Kind        string
	Description string
	Quantity    int64
	UnitPrice   int64
	Amount      int64
	IssuedAt    time.Time
}

// charges returns the lines of the invoices in currency, not cancelled,
// issued in [from, to), visible in scope.
func (s *Store) charges(ctx context.Context, scope models.Scope, currency string, from, to time.Time) ([]chargeRow, error) {
	var rows []chargeRow
	err := s.In(ctx, scope).Model(&InvoiceLine{}).
		Select("invoice_lines.invoice_id, invoice_lines.service_id, invoice_lines.category, invoice_lines.kind, invoice_lines.description, "+
			"invoice_lines.quantity, invoice_lines.unit_price, invoice_lines.amount, invoices.issued_at").
		Joins("JOIN invoices ON invoices.id = invoice_lines.invoice_id").
		Where("invoices.status <> ? AND invoices.currency = ? AND invoices.issued_at >= ? AND invoices.issued_at < ?", InvoiceCancelled, currency, from, to).
		Order("invoices.issued_at, invoice_lines.invoice_id, invoice_lines.position").Scan(&rows).Error
	return rows, models.DBErr(err)
}

// Usage returns the usage report of spec 2.3 for p: usage from the usage
// records of the period plus, for subscriptions whose current period is
// open, what the telemetry has measured so far; API calls from the rate
// limiter's monthly counts (else the records); each service's cost from the
// invoices issued in the period plus the recurring charge accrued in its
// open period; and the estimated cost of the current month.
// Errors: VALIDATION_ERROR.
func (s *Store) Usage(ctx context.Context, p *models.Principal, q UsageQuery) (*UsageReport, error) {
	from, to, err := UsageWindow(q.Period, q.Now)
	if err != nil {
		return nil, err
	}
	if q.ServiceType != "" {
		known, err := s.KnownServiceTypes(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(known, q.ServiceType) {
			return nil, models.Invalid(models.FieldIssue{Field: "service_type", Issue: "must be one of " + strings.Join(known, ", ")})
		}
	}
	currency, err := s.billingCurrency(ctx, p, q.Currency)
	if err != nil {
		return nil, err
	}
	period := q.Period
	if period == "" {
		period = PeriodCurrentMonth
	}
	now := q.Now.UTC()
	scope := p.Scope()
	db := s.In(ctx, scope)
	r := &UsageReport{Period: period, From: from, To: to, Currency: currency,
		TotalUsage: map[string]int64{MetricVoiceMinutes: 0, MetricDataGB: 0, MetricCloudStorageGB: 0, MetricAPICalls: 0}}
	totals := map[string]float64{}
	byService := map[string]*ServiceUsage{}
	svcUsage := func(id, kind, category string) *ServiceUsage {
		u, ok := byService[id]
		if !ok {
			u = &ServiceUsage{ServiceID: id, ServiceType: kind, Category: category, Metrics: map[string]float64{}, Charges: []InvoiceLine{}}
			byService[id] = u
		}
		return u
	}

	var recs []UsageRecord
	if err := db.Where("period_start >= ? AND period_start < ?", from, to).Order("period_start, id").Find(&recs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	apiFromRecords := map[string]int64{}
	for _, rec := range recs {
		if rec.Metric == MetricAPICalls {
			apiFromRecords[MonthKey(rec.PeriodStart)] += int64(rec.Quantity)
			continue
		}
		if !serviceTypeMatches(q.ServiceType, rec.ServiceType, rec.Category) {
			continue
		}
		totals[rec.Metric] += rec.Quantity
		svcUsage(rec.ServiceID, rec.ServiceType, rec.Category).Metrics[rec.Metric] += rec.Quantity
	}

	// Open periods: measured so far, and the recurring charge accrued.
	var subs []Subscription
	if err := db.Where("status = ? AND currency = ?", SubscriptionActive, currency).Find(&subs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for i := range subs {
		sub := &subs[i]
		if !serviceTypeMatches(q.ServiceType, "", sub.Category) {
			var svc services.Service
			if err := db.Where("id = ?", sub.ServiceID).Take(&svc).Error; err != nil || !serviceTypeMatches(q.ServiceType, svc.Kind, sub.Category) {
				continue
			}
		}
		wf, wt := sub.CurrentPeriodStart, now
		if wf.Before(from) {
			wf = from
		}
		if wt.After(to) {
			wt = to
		}
		if sub.CancelAt != nil && sub.CancelAt.Before(wt) {
			wt = *sub.CancelAt
		}
		if !wt.After(wf) {
			continue
		}
		var svc services.Service
		if err := db.Where("id = ?", sub.ServiceID).Take(&svc).Error; err != nil {
			continue
		}
		u := svcUsage(svc.ID, svc.Kind, sub.Category)
		if gb, ok, err := measureData(db, &svc, wf, wt); err != nil {
			return nil, err
		} else if ok {
			totals[MetricDataGB] += gb
			u.Metrics[MetricDataGB] += gb
		}
		for _, l := range recurringLines(sub, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, wt) {
			if l.PeriodEnd.After(wf) {
				// Only the part of the accrued charge inside the window.
				lf := *l.PeriodStart
				if lf.Before(wf) {
					lf = wf
				}
				u.Accrued += mulDiv(l.Amount, int64(l.PeriodEnd.Sub(lf)), int64(l.PeriodEnd.Sub(*l.PeriodStart)))
			}
		}
	}

	rows, err := s.charges(ctx, scope, currency, from, to)
	if err != nil {
		return nil, err
	}
	kinds := map[string]string{}
	for _, row := range rows {
		if row.ServiceID == "" {
			if q.ServiceType != "" && q.ServiceType != ServiceTypeAPI && q.ServiceType != row.Category {
				continue
			}
			u := svcUsage("", ServiceTypeAPI, row.Category)
			u.Cost += models.Money(row.Amount)
			u.Charges = append(u.Charges, InvoiceLine{InvoiceID: row.InvoiceID, Kind: row.Kind, Category: row.Category, Description: row.Description, Quantity: row.Quantity, UnitPrice: models.Money(row.UnitPrice), Amount: models.Money(row.Amount)})
			continue
		}
		kind, ok := kinds[row.ServiceID]
		if !ok {
			var svc services.Service
			if err := db.Where("id = ?", row.ServiceID).Take(&svc).Error; err == nil {
				kind = svc.Kind
			}
			kinds[row.ServiceID] = kind
		}
		if !serviceTypeMatches(q.ServiceType, kind, row.Category) {
			continue
		}
		u := svcUsage(row.ServiceID, kind, row.Category)
		u.Cost += models.Money(row.Amount)
		u.Charges = append(u.Charges, InvoiceLine{InvoiceID: row.InvoiceID, ServiceID: row.ServiceID, Kind: row.Kind, Category: row.Category, Description: row.Description, Quantity: row.Quantity, UnitPrice: models.Money(row.UnitPrice), Amount: models.Money(row.Amount)})
	}

	// API calls: the limiter's monthly counts, else the records.
	if q.ServiceType == "" || q.ServiceType == ServiceTypeAPI {
		for m := from; m.Before(to) && !m.After(now); m = m.AddDate(0, 1, 0) {
			key := MonthKey(m)
			if n, ok := q.APIRequests[key]; ok {
				totals[MetricAPICalls] += float64(n)
			} else {
				totals[MetricAPICalls] += float64(apiFromRecords[key])
			}
		}
		if totals[MetricAPICalls] > 0 {
			svcUsage("", ServiceTypeAPI, CategoryPlatform).Metrics[MetricAPICalls] = totals[MetricAPICalls]
		}
	}

	for metric, v := range totals {
		r.TotalUsage[metric] = int64(math.Round(v))
	}
	ids := make([]string, 0, len(byService))
	for id := range byService {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := byService[id]
		u.Cost += u.Accrued
		u.Unit, u.Usage = primaryUsage(u)
		r.Services = append(r.Services, *u)
	}
	if r.Estimate, err = s.estimateMonth(ctx, p, currency, now, q.APIRequests); err != nil {
		return nil, err
	}
	e := r.Estimate
	r.EstimatedMonthlyCost = e.RecurringRunRate + e.ProjectedUsage + e.ProjectedAPIOverage + e.OneTimeCharges
	return r, nil
}

// primaryUsage returns the unit and quantity a service's usage is summed in.
func primaryUsage(u *ServiceUsage) (string, float64) {
	for _, m := range []string{MetricDataGB, MetricVoiceMinutes, MetricCloudStorageGB, MetricAPICalls} {
		if v, ok := u.Metrics[m]; ok {
			return metricUnits[m], round3(v)
		}
	}
	return metricUnits[MetricDataGB], 0
}

// estimateMonth projects the cost of now's calendar month (see CostEstimate).
func (s *Store) estimateMonth(ctx context.Context, p *models.Principal, currency string, now time.Time, apiRequests map[string]int64) (CostEstimate, error) {
	m := MonthStart(now)
	next := m.AddDate(0, 1, 0)
	e := CostEstimate{DaysInMonth: int(next.Sub(m).Hours() / 24)}
	elapsed := now.Sub(m)
	if elapsed < 24*time.Hour {
		elapsed = 24 * time.Hour // project from at least one day
	}
	e.DaysElapsed = math.Round(elapsed.Hours()/24*100) / 100
	db := s.In(ctx, p.Scope())
	var subs []Subscription
	if err := db.Where("status = ? AND currency = ?", SubscriptionActive, currency).Find(&subs).Error; err != nil {
		return e, models.DBErr(err)
	}
	for i := range subs {
		e.RecurringRunRate += subs[i].MonthlyRunRate()
	}
	rows, err := s.charges(ctx, p.Scope(), currency, m, next)
	if err != nil {
		return e, err
	}
	var usage models.Money
	for _, r := range rows {
		if r.Kind == LineUsage {
			usage += models.Money(r.Amount)
		}
	}
	// One-time charges: the manual invoices of the month as they were
	// issued, after the SLA credits they applied (their subtotals, before
	// tax like every other part of the estimate and the cost analysis).
	var oneTime struct{ Sum int64 }
	if err := db.Model(&Invoice{}).Select("COALESCE(SUM(subtotal), 0) AS sum").
		Where("source = ? AND status <> ? AND currency = ? AND issued_at >= ? AND issued_at < ?", InvoiceSourceManual, InvoiceCancelled, currency, m, next).
		Scan(&oneTime).Error; err != nil {
		return e, models.DBErr(err)
	}
	e.OneTimeCharges = models.Money(oneTime.Sum)
	var pendingUsage struct{ Sum int64 }
	if err := db.Model(&UsageRecord{}).Select("COALESCE(SUM(cost), 0) AS sum").
		Where("invoice_id = ? AND metric <> ? AND currency = ? AND period_start >= ?", "", MetricAPICalls, currency, m).Scan(&pendingUsage).Error; err != nil {
		return e, models.DBErr(err)
	}
	usage += models.Money(pendingUsage.Sum)
	month := int64(next.Sub(m) / time.Second)
	sofar := int64(elapsed / time.Second)
	e.ProjectedUsage = mulDiv(usage, month, sofar)
	if n, ok := apiRequests[MonthKey(m)]; ok && currency == "USD" && !p.IsStaff() && p.Environment == models.EnvLive {
		var org models.Organization
		if err := s.In(ctx, models.SystemScope()).Where("id = ?", p.OrganizationID).Take(&org).Error; err == nil {
			projected := int64(math.Round(float64(n) * float64(month) / float64(sofar)))
			e.ProjectedAPIOverage = OverageCents(org.Limits().OverageCharge(projected))
		}
	}
	return e, nil
}

// CostAnalysis is the cost analysis response of spec 2.3, computed from the
// lines of the invoices issued (not cancelled), before tax.
type CostAnalysis struct {
	Currency            string
	CurrentMonth        models.Money
	Breakdown           map[string]models.Money
	LastMonth           models.Money
	YearToDate          models.Money
	MonthlyGrowth       *float64 // percent change from last month; nil without last month's charges
	OptimizationSavings models.Money
	IdleSubscriptions   []string
	Months              []MonthCost // the last 12 calendar months, oldest first
}

// MonthCost is what one calendar month cost.
type MonthCost struct {
	Month string
	Total models.Money
}

// CostCategories are the keys of the cost breakdown.
func CostCategories() []string {
	return []string{"connectivity", "voice", "cloud", "security", "ai", CategoryPlatform, CategoryOther}
}

// Costs returns the cost analysis for p at now in currency (default: the
// oldest account's): this month's charges by category, last month's, the
// year to date, the growth from last month, and the monthly run-rate of
// subscriptions whose service was idle (average utilisation below
// IdleUtilizationPct over the last 30 days) as possible savings.
// Errors: VALIDATION_ERROR.
func (s *Store) Costs(ctx context.Context, p *models.Principal, currency string, now time.Time) (*CostAnalysis, error) {
	currency, err := s.billingCurrency(ctx, p, currency)
	if err != nil {
		return nil, err
	}
	now = now.UTC()
	m := MonthStart(now)
	from := m.AddDate(0, -11, 0)
	year := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	if year.Before(from) {
		from = year
	}
	rows, err := s.charges(ctx, p.Scope(), currency, from, m.AddDate(0, 1, 0))
	if err != nil {
		return nil, err
	}
	c := &CostAnalysis{Currency: currency, Breakdown: map[string]models.Money{}}
	for _, k := range CostCategories() {
		c.Breakdown[k] = 0
	}
	perMonth := map[string]models.Money{}
	for _, r := range rows {
		at := r.IssuedAt.UTC()
		perMonth[MonthKey(at)] += models.Money(r.Amount)
		if !at.Before(year) {
			c.YearToDate += models.Money(r.Amount)
		}
		if !at.Before(m) {
			cat := r.Category
			if _, ok := c.Breakdown[cat]; !ok {
				cat = CategoryOther
			}
			c.Breakdown[cat] += models.Money(r.Amount)
			c.CurrentMonth += models.Money(r.Amount)
		}
	}
	c.LastMonth = perMonth[MonthKey(m.AddDate(0, -1, 0))]
	if c.LastMonth > 0 {
		g := math.Round(float64(c.CurrentMonth-c.LastMonth)*10000/float64(c.LastMonth)) / 100
		c.MonthlyGrowth = &g
	}
	for i := 11; i >= 0; i-- {
		k := MonthKey(m.AddDate(0, -i, 0))
		c.Months = append(c.Months, MonthCost{Month: k, Total: perMonth[k]})
	}
	db := s.In(ctx, p.Scope())
	var subs []Subscription
	if err := db.Where("status = ? AND currency = ?", SubscriptionActive, currency).Find(&subs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	c.IdleSubscriptions = []string{}
	if len(subs) > 0 {
		ids := make([]string, len(subs))
		for i := range subs {
			ids[i] = subs[i].ServiceID
		}
		var util []struct {
			ServiceID string
			Avg       float64
		}
		if err := db.Model(&telemetry.TelemetrySample{}).Select("service_id, AVG(CASE WHEN up THEN utilization_pct ELSE 0 END) AS avg").
			Where("service_id IN ? AND at > ?", ids, now.Add(-telemetry.UptimeWindow)).Group("service_id").Scan(&util).Error; err != nil {
			return nil, models.DBErr(err)
		}
		for _, u := range util {
			if u.Avg >= IdleUtilizationPct {
				continue
			}
			for i := range subs {
				if subs[i].ServiceID == u.ServiceID {
					c.OptimizationSavings += subs[i].MonthlyRunRate()
					c.IdleSubscriptions = append(c.IdleSubscriptions, subs[i].ID)
				}
			}
		}
	}
	return c, nil
}

// BillingAnalytics is the overview of GET /billing/analytics.
type BillingAnalytics struct {
	Costs            *CostAnalysis
	InvoiceCounts    map[string]int64
	Outstanding      models.Money
	Overdue          models.Money
	PaymentsOK       int64
	PaymentsFailed   int64
	Collected        models.Money // successful payments this month
	ActiveSubs       int64
	MonthlyRecurring models.Money
	Budgets          []BudgetStatus
}

// Analytics returns the billing overview for p at now in currency: the
// cost analysis, invoices by status with what is outstanding and overdue,
// this month's payments, the active subscriptions' monthly run-rate and
// the budgets' consumption. Errors: VALIDATION_ERROR.
func (s *Store) Analytics(ctx context.Context, p *models.Principal, currency string, now time.Time) (*BillingAnalytics, error) {
	costs, err := s.Costs(ctx, p, currency, now)
	if err != nil {
		return nil, err
	}
	currency = costs.Currency
	a := &BillingAnalytics{Costs: costs, InvoiceCounts: map[string]int64{}}
	for _, st := range []InvoiceStatus{InvoicePending, InvoicePaid, InvoiceOverdue, InvoiceCancelled} {
		a.InvoiceCounts[string(st)] = 0
	}
	db := s.In(ctx, p.Scope())
	var byStatus []struct {
		Status string
		N      int64
		Due    int64
	}
	if err := db.Model(&Invoice{}).Select("status, COUNT(*) AS n, COALESCE(SUM(total - amount_paid), 0) AS due").
		Where("currency = ?", currency).Group("status").Scan(&byStatus).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range byStatus {
		a.InvoiceCounts[r.Status] = r.N
		switch InvoiceStatus(r.Status) {
		case InvoicePending:
			a.Outstanding += models.Money(r.Due)
		case InvoiceOverdue:
			a.Outstanding += models.Money(r.Due)
			a.Overdue += models.Money(r.Due)
		}
	}
	m := MonthStart(now)
	var pays []struct {
		Status string
		N      int64
		Sum    int64
	}
	if err := db.Model(&Payment{}).Select("status, COUNT(*) AS n, COALESCE(SUM(amount), 0) AS sum").
		Where("currency = ? AND created_at >= ?", currency, m).Group("status").Scan(&pays).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, r := range pays {
		switch PaymentStatus(r.Status) {
		case PaymentSuccessful:
			a.PaymentsOK, a.Collected = r.N, models.Money(r.Sum)
		case PaymentFailed:
			a.PaymentsFailed = r.N
		}
	}
	var subs []Subscription
	if err := db.Where("status = ? AND currency = ?", SubscriptionActive, currency).Find(&subs).Error; err != nil {
		return nil, models.DBErr(err)
	}
	a.ActiveSubs = int64(len(subs))
	for i := range subs {
		a.MonthlyRecurring += subs[i].MonthlyRunRate()
	}
	if a.Budgets, err = s.budgetStatuses(ctx, p.Scope(), currency, now); err != nil {
		return nil, err
	}
	return a, nil
}
