package billing

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// PrefixBudget is the prefix of budget ids (bud_).
const PrefixBudget = "bud"

// Budget periods.
var budgetPeriods = []string{CycleMonthly, CycleQuarterly, CycleAnnual}

// DefaultBudgetThresholds are the alert thresholds (percent of the budget)
// of a budget created without any.
func DefaultBudgetThresholds() []int { return []int{50, 80, 100} }

// Budget is a spending limit of a billing account per calendar period
// (bud_). When the account's spending in a period reaches a threshold (a
// percentage of Amount) a usage.threshold event is written, once per
// threshold and period. Spending is the total of the account's invoices
// issued in the period that are not cancelled.
type Budget struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	AccountID  string       `gorm:"size:40;not null;index"`
	Amount     models.Money `gorm:"not null"`
	Currency   string       `gorm:"size:3;not null"`
	Period     string       `gorm:"size:20;not null"`
	Thresholds []int        `gorm:"serializer:json;type:text"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// BudgetAlert records that a budget's threshold was crossed in a period.
type BudgetAlert struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	models.Tenant
	AlertKey    string       `gorm:"size:120;not null;uniqueIndex"` // budget:period start:threshold
	BudgetID    string       `gorm:"size:40;not null;index"`
	PeriodStart time.Time    `gorm:"not null"`
	Threshold   int          `gorm:"not null"`
	Spent       models.Money `gorm:"not null"`
	EventID     string       `gorm:"size:40;not null"`
	CreatedAt   time.Time
}

// BudgetPeriod returns the calendar period [start, end) of kind period
// (monthly, quarterly, annual) that holds t.
func BudgetPeriod(period string, t time.Time) (time.Time, time.Time) {
	t = t.UTC()
	switch period {
	case CycleQuarterly:
		q := (int(t.Month()) - 1) / 3 * 3
		start := time.Date(t.Year(), time.Month(q+1), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 3, 0)
	case CycleAnnual:
		start := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(1, 0, 0)
	}
	start := MonthStart(t)
	return start, start.AddDate(0, 1, 0)
}

// BudgetInput is the body of POST /billing/budgets.
type BudgetInput struct {
	AccountID  string
	Amount     models.Money
	Period     string
	Thresholds []int
}

// CreateBudget creates a budget on an account visible to p and checks it
// at once against the current period's spending (a threshold already
// crossed alerts now). Errors: VALIDATION_ERROR.
func (s *Store) CreateBudget(ctx context.Context, p *models.Principal, in BudgetInput) (*Budget, error) {
	var v models.Validator
	v.Check(in.Amount > 0 && in.Amount <= maxUnitPrice, "amount", "must be more than 0 and at most 100000000.00")
	if in.Period == "" {
		in.Period = CycleMonthly
	}
	v.Check(oneOf(in.Period, budgetPeriods), "period", "must be monthly, quarterly or annual")
	if in.Thresholds == nil {
		in.Thresholds = DefaultBudgetThresholds()
	}
	v.Check(len(in.Thresholds) >= 1 && len(in.Thresholds) <= 10, "thresholds", "must list 1 to 10 percentages")
	seen := map[int]bool{}
	for i, t := range in.Thresholds {
		v.Check(t >= 1 && t <= 1000, fmt.Sprintf("thresholds[%d]", i), "must be a percentage between 1 and 1000")
		v.Check(!seen[t], fmt.Sprintf("thresholds[%d]", i), "is listed twice")
		seen[t] = true
	}
	acct, scope, aerr := s.accountFor(ctx, p, in.AccountID, "account_id")
	if aerr != nil {
		if e := models.AsError(aerr); e.Code == models.CodeValidation {
			for _, fi := range e.Details["fields"].([]models.FieldIssue) {
				v.Add(fi.Field, fi.Issue)
			}
		} else {
			return nil, aerr
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	th := slices.Clone(in.Thresholds)
	slices.Sort(th)
	b := &Budget{ID: models.NewID(PrefixBudget), AccountID: acct.ID, Amount: in.Amount, Currency: acct.Currency, Period: in.Period, Thresholds: th}
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(b).Error; err != nil {
			return models.DBErr(err)
		}
		return s.evaluateBudgets(tx, acct.ID, s.Now())
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return b, nil
}

// BudgetStatus is a budget with its consumption in the current period.
type BudgetStatus struct {
	Budget      Budget
	PeriodStart time.Time
	PeriodEnd   time.Time
	Spent       models.Money
	PercentUsed float64
	Crossed     []int // thresholds crossed in the period
}

// spendOf returns an account's spending in [from, to), inside db.
func spendOf(db *gorm.DB, accountID string, from, to time.Time) (models.Money, error) {
	var row struct{ Sum int64 }
	err := db.Model(&Invoice{}).Select("COALESCE(SUM(total), 0) AS sum").
		Where("account_id = ? AND status <> ? AND issued_at >= ? AND issued_at < ?", accountID, InvoiceCancelled, from, to).Scan(&row).Error
	return models.Money(row.Sum), models.DBErr(err)
}

func percentOf(spent, amount models.Money) float64 {
	if amount <= 0 {
		return 0
	}
	return float64(int64(spent)*10000/int64(amount)) / 100
}

// evaluateBudgets writes a usage.threshold event, inside tx, for every
// threshold of the account's budgets that its spending in the current
// period has reached and that has not alerted in this period yet.
func (s *Store) evaluateBudgets(tx *gorm.DB, accountID string, now time.Time) error {
	var budgets []Budget
	if err := tx.Where("account_id = ?", accountID).Find(&budgets).Error; err != nil {
		return models.DBErr(err)
	}
	for _, b := range budgets {
		from, to := BudgetPeriod(b.Period, now)
		spent, err := spendOf(tx, accountID, from, to)
		if err != nil {
			return err
		}
		for _, t := range b.Thresholds {
			if int64(spent)*100 < int64(b.Amount)*int64(t) {
				continue
			}
			ev := eventlog.NewEvent(EventUsageThreshold, b.ID, map[string]any{
				"budget":    map[string]any{"id": b.ID, "account_id": b.AccountID, "amount": b.Amount, "currency": b.Currency, "period": b.Period},
				"threshold": t, "spent": spent, "percent_used": percentOf(spent, b.Amount),
				"period_start": models.Timestamp(from), "period_end": models.Timestamp(to),
			})
			alert := &BudgetAlert{AlertKey: fmt.Sprintf("%s:%s:%d", b.ID, from.Format("2006-01-02"), t), BudgetID: b.ID,
				PeriodStart: from, Threshold: t, Spent: spent, EventID: ev.ID}
			alert.OrganizationID, alert.Environment = b.OrganizationID, b.Environment
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(alert)
			if res.Error != nil {
				return models.DBErr(res.Error)
			}
			if res.RowsAffected == 1 {
				if err := eventlog.RecordEvent(tx, ev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// budgetStatuses returns every budget in scope (in currency) with its
// consumption in the period that holds now.
func (s *Store) budgetStatuses(ctx context.Context, scope models.Scope, currency string, now time.Time) ([]BudgetStatus, error) {
	db := s.In(ctx, scope)
	var budgets []Budget
	q := db.Order("created_at, id")
	if currency != "" {
		q = q.Where("currency = ?", currency)
	}
	if err := q.Find(&budgets).Error; err != nil {
		return nil, models.DBErr(err)
	}
	out := make([]BudgetStatus, 0, len(budgets))
	for _, b := range budgets {
		from, to := BudgetPeriod(b.Period, now)
		spent, err := spendOf(db, b.AccountID, from, to)
		if err != nil {
			return nil, err
		}
		st := BudgetStatus{Budget: b, PeriodStart: from, PeriodEnd: to, Spent: spent, PercentUsed: percentOf(spent, b.Amount), Crossed: []int{}}
		var alerts []BudgetAlert
		if err := db.Where("budget_id = ? AND period_start = ?", b.ID, from).Order("threshold").Find(&alerts).Error; err != nil {
			return nil, models.DBErr(err)
		}
		for _, a := range alerts {
			st.Crossed = append(st.Crossed, a.Threshold)
		}
		out = append(out, st)
	}
	return out, nil
}

// ListBudgets returns the budgets visible to p with their consumption at
// now, optionally of one account.
func (s *Store) ListBudgets(ctx context.Context, p *models.Principal, accountID string, now time.Time) ([]BudgetStatus, error) {
	all, err := s.budgetStatuses(ctx, p.Scope(), "", now)
	if err != nil || accountID == "" {
		return all, err
	}
	out := []BudgetStatus{}
	for _, b := range all {
		if b.Budget.AccountID == accountID {
			out = append(out, b)
		}
	}
	return out, nil
}

// BudgetStatusOf returns one budget's consumption at now (after creation).
func (s *Store) BudgetStatusOf(ctx context.Context, b *Budget, now time.Time) (*BudgetStatus, error) {
	all, err := s.budgetStatuses(ctx, models.TenantScope(b.OrganizationID, b.Environment), b.Currency, now)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Budget.ID == b.ID {
			return &all[i], nil
		}
	}
	return nil, models.NotFound("budget")
}
