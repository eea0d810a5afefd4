package analytics

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
)

// ForecastMethod names how the current month's spend is forecast: the net
// spend so far divided by the elapsed fraction of the month (at least one
// day of it), a linear run-rate.
const ForecastMethod = "linear_run_rate"

// CostFigures are amounts of one bucket, category or the whole period, in
// the answer's currency (minor units). Net = Charges + UnbilledUsage −
// Credits.
type CostFigures struct {
	Charges       models.Money // lines of the invoices issued (not cancelled), before tax, without SLA credit lines
	UnbilledUsage models.Money // rated usage records not invoiced yet
	Credits       models.Money // SLA credits issued (not void)
	Net           models.Money
}

// add adds o to f.
func (f *CostFigures) add(o CostFigures) {
	f.Charges += o.Charges
	f.UnbilledUsage += o.UnbilledUsage
	f.Credits += o.Credits
	f.Net = f.Charges + f.UnbilledUsage - f.Credits
}

// CostBucket is the costs of one bucket.
type CostBucket struct {
	Bucket
	CostFigures
}

// CategoryCost is the costs of one category.
type CategoryCost struct {
	Category string
	CostFigures
}

// Credit is one SLA credit of the period.
type Credit struct {
	ID        string
	ServiceID string
	TicketID  string
	Category  string
	Amount    models.Money
	Status    string
	Reason    string
	IssuedAt  time.Time
}

// BudgetBurn is one budget's spending in the period of it that holds now
// (as the budgets endpoint counts it: invoice totals, tax included).
type BudgetBurn struct {
	BudgetID    string
	AccountID   string
	Period      string
	PeriodStart time.Time
	PeriodEnd   time.Time
	Limit       models.Money
	Spent       models.Money
	Remaining   models.Money // never negative
	PercentUsed float64
	Currency    string
}

// Forecast is the forecast of the current month's net spend.
type Forecast struct {
	Method          string
	PeriodStart     time.Time // the current calendar month in the query's zone
	PeriodEnd       time.Time
	SpentToDate     models.Money // net spend from PeriodStart to now
	ElapsedFraction float64      // of the month, rounded to four decimals (at least one day's worth)
	Forecast        models.Money // SpentToDate / ElapsedFraction (as rounded), to the minor unit
}

// Costs is the answer of GET /analytics/costs.
type Costs struct {
	Query      *Query
	Currency   string
	Totals     CostFigures
	Buckets    []CostBucket   // every bucket, zero-filled
	Categories []CategoryCost // every cost category, zero-filled
	Credits    []Credit       // the period's SLA credits, oldest first
	Budgets    []BudgetBurn
	Forecast   Forecast
}

// Costs answers the costs of what p sees over q at now, in currency (an ISO
// 4217 code; default: the currency of the oldest billing account in view,
// else USD); amounts in other currencies are not counted. See
// docs/analytics.md. Errors: VALIDATION_ERROR (currency), NOT_FOUND (a
// filter naming what p cannot see).
func (s *Store) Costs(ctx context.Context, p *models.Principal, q *Query, currency string, now time.Time) (*Costs, error) {
	currency = strings.ToUpper(strings.TrimSpace(currency))
	if currency != "" && !models.SupportedCurrency(currency) {
		return nil, models.Invalid(models.FieldIssue{Field: "currency", Issue: models.CurrencyIssue})
	}
	t, err := s.resolve(ctx, p, q)
	if err != nil {
		return nil, err
	}
	if currency == "" {
		if currency, err = s.defaultCurrency(ctx, t, q.Filters); err != nil {
			return nil, err
		}
	}
	c := &Costs{Query: q, Currency: currency, Buckets: make([]CostBucket, len(q.Buckets))}
	for i, b := range q.Buckets {
		c.Buckets[i].Bucket = b
	}
	cq := &costQuery{s: s, ctx: ctx, t: t, f: q.Filters, currency: currency}
	cats := map[string]*CostFigures{}
	for _, k := range billing.CostCategories() {
		cats[k] = &CostFigures{}
	}
	category := func(k string) *CostFigures {
		if cats[k] == nil {
			k = billing.CategoryOther
		}
		return cats[k]
	}
	rows, err := cq.amounts(q.From.UTC(), q.To.UTC())
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		f := r.figures()
		c.Buckets[q.bucketIndex(r.Bucket)].add(f)
		category(r.Category).add(f)
	}
	if c.Credits, err = cq.credits(q.From.UTC(), q.To.UTC()); err != nil {
		return nil, err
	}
	for _, cr := range c.Credits {
		f := CostFigures{Credits: cr.Amount}
		c.Buckets[q.bucketIndex(cr.IssuedAt.Unix()/bucketSeconds)].add(f)
		category(cr.Category).add(f)
	}
	for i := range c.Buckets {
		c.Buckets[i].add(CostFigures{}) // fills Net
		c.Totals.add(c.Buckets[i].CostFigures)
	}
	for _, k := range billing.CostCategories() {
		cats[k].add(CostFigures{})
		c.Categories = append(c.Categories, CategoryCost{Category: k, CostFigures: *cats[k]})
	}
	if c.Budgets, err = s.budgets(ctx, p, q.Filters, now); err != nil {
		return nil, err
	}
	if c.Forecast, err = cq.forecast(now.In(q.Location)); err != nil {
		return nil, err
	}
	return c, nil
}

// defaultCurrency is the currency of the oldest billing account in view
// (of f's account when given), else USD.
func (s *Store) defaultCurrency(ctx context.Context, t *target, f Filters) (string, error) {
	var a models.BillingAccount
	db := s.In(ctx, t.scope).Order("created_at, id").Limit(1)
	if f.AccountID != "" {
		db = db.Where("id = ?", f.AccountID)
	}
	if err := db.Find(&a).Error; err != nil {
		return "", models.DBErr(err)
	}
	if a.ID == "" {
		return "USD", nil
	}
	return a.Currency, nil
}

// costQuery runs the cost aggregates of a target in a currency.
type costQuery struct {
	s        *Store
	ctx      context.Context
	t        *target
	f        Filters
	currency string
}

// amountRow is one aggregate of charges or unbilled usage: a 15-minute
// bucket and a category.
type amountRow struct {
	Bucket   int64
	Category string
	Kind     string // "charges" or "usage"
	Amount   int64
}

// figures returns the row as cost figures.
func (r amountRow) figures() CostFigures {
	if r.Kind == "usage" {
		return CostFigures{UnbilledUsage: models.Money(r.Amount)}
	}
	return CostFigures{Charges: models.Money(r.Amount)}
}

// amounts returns the charges (invoice lines by the invoice's issue time)
// and the unbilled rated usage (records by the start of their period) of
// [from, to), per 15-minute bucket and category.
func (cq *costQuery) amounts(from, to time.Time) ([]amountRow, error) {
	t := cq.t
	var out []amountRow
	b := t.bucket("invoices.issued_at")
	db := cq.s.In(cq.ctx, t.scope).Model(&billing.InvoiceLine{}).Joins("JOIN invoices ON invoices.id = invoice_lines.invoice_id").
		Where("invoices.status <> ? AND invoices.currency = ? AND invoices.issued_at >= ? AND invoices.issued_at < ? AND invoice_lines.kind <> ?",
			billing.InvoiceCancelled, cq.currency, from, to, billing.LineCredit)
	if cq.f.AccountID != "" {
		db = db.Where("invoices.account_id = ?", cq.f.AccountID)
	}
	if cq.f.serviceFilter() {
		db = t.onServices(db, "invoice_lines.service_id")
	}
	if err := db.Select(b + " AS bucket, invoice_lines.category AS category, 'charges' AS kind, COALESCE(SUM(invoice_lines.amount), 0) AS amount").
		Group(b + ", invoice_lines.category").Scan(&out).Error; err != nil {
		return nil, models.DBErr(err)
	}
	var usage []amountRow
	b = t.bucket("period_start")
	db = cq.s.In(cq.ctx, t.scope).Model(&billing.UsageRecord{}).
		Where("invoice_id = ? AND cost > 0 AND currency = ? AND period_start >= ? AND period_start < ?", "", cq.currency, from, to)
	if cq.f.AccountID != "" {
		db = db.Where("account_id = ?", cq.f.AccountID)
	}
	if cq.f.serviceFilter() {
		db = t.onServices(db, "service_id")
	}
	if err := db.Select(b + " AS bucket, category, 'usage' AS kind, COALESCE(SUM(cost), 0) AS amount").Group(b + ", category").Scan(&usage).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return append(out, usage...), nil
}

// credits returns the SLA credits (not void) issued in [from, to), oldest
// first.
func (cq *costQuery) credits(from, to time.Time) ([]Credit, error) {
	var rows []billing.SLACredit
	db := cq.t.onServices(cq.s.In(cq.ctx, cq.t.scope).Model(&billing.SLACredit{}), "service_id").
		Where("status <> ? AND currency = ? AND created_at >= ? AND created_at < ?", billing.SLACreditVoid, cq.currency, from, to)
	if err := db.Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, models.DBErr(err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ServiceID
	}
	kinds, err := cq.s.serviceKinds(cq.ctx, cq.t, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Credit, len(rows))
	for i, r := range rows {
		out[i] = Credit{ID: r.ID, ServiceID: r.ServiceID, TicketID: r.TicketID, Category: categoryOf(kinds[r.ServiceID]), Amount: r.Amount,
			Status: r.Status, Reason: r.Reason, IssuedAt: r.CreatedAt}
	}
	return out, nil
}

// forecast projects the net spend of now's calendar month (in now's zone)
// from what was spent so far (ForecastMethod).
func (cq *costQuery) forecast(now time.Time) (Forecast, error) {
	loc := now.Location()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	end := start.AddDate(0, 1, 0)
	fc := Forecast{Method: ForecastMethod, PeriodStart: start, PeriodEnd: end}
	var spent CostFigures
	rows, err := cq.amounts(start.UTC(), now.UTC())
	if err != nil {
		return fc, err
	}
	for _, r := range rows {
		spent.add(r.figures())
	}
	credits, err := cq.credits(start.UTC(), now.UTC())
	if err != nil {
		return fc, err
	}
	for _, cr := range credits {
		spent.add(CostFigures{Credits: cr.Amount})
	}
	spent.add(CostFigures{})
	month := int64(end.Sub(start) / time.Second)
	elapsed := max(int64(now.Sub(start)/time.Second), 24*3600)
	fc.SpentToDate = spent.Net
	// The fraction in ten-thousandths, rounded half away from zero: the
	// forecast divides by the fraction published, so that spent_to_date /
	// elapsed_fraction gives it exactly (docs/analytics.md).
	frac := int64(mulDiv(10000, elapsed, month))
	fc.ElapsedFraction = float64(frac) / 10000
	fc.Forecast = mulDiv(spent.Net, 10000, frac)
	return fc, nil
}

// budgets returns the burn of the budgets in view (of the organization and
// account filtered, when given) in their period that holds now.
func (s *Store) budgets(ctx context.Context, p *models.Principal, f Filters, now time.Time) ([]BudgetBurn, error) {
	all, err := billing.NewStore(s.Store).ListBudgets(ctx, p, f.AccountID, now)
	if err != nil {
		return nil, err
	}
	out := []BudgetBurn{}
	for _, b := range all {
		if f.OrganizationID != "" && b.Budget.OrganizationID != f.OrganizationID {
			continue
		}
		out = append(out, BudgetBurn{BudgetID: b.Budget.ID, AccountID: b.Budget.AccountID, Period: b.Budget.Period, PeriodStart: b.PeriodStart,
			PeriodEnd: b.PeriodEnd, Limit: b.Budget.Amount, Spent: b.Spent, Remaining: max(b.Budget.Amount-b.Spent, 0),
			PercentUsed: b.PercentUsed, Currency: b.Budget.Currency})
	}
	slices.SortStableFunc(out, func(a, b BudgetBurn) int { return strings.Compare(a.AccountID, b.AccountID) })
	return out, nil
}

// mulDiv returns m × num / den rounded half away from zero, without
// overflow.
func mulDiv(m models.Money, num, den int64) models.Money {
	if den == 0 {
		return 0
	}
	x := new(big.Int).Mul(big.NewInt(int64(m)), big.NewInt(num))
	d := big.NewInt(den)
	q, r := new(big.Int).QuoRem(x, d, new(big.Int))
	if new(big.Int).Abs(new(big.Int).Mul(r, big.NewInt(2))).Cmp(d) >= 0 {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return models.Money(q.Int64())
}
