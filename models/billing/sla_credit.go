package billing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/services"
)

// PrefixSLACredit starts SLA credit ids.
const PrefixSLACredit = "slacr"

// EventSLACreditIssued is written when an SLA credit is issued.
const EventSLACreditIssued = "sla.credit_issued"

// LineCredit is the kind of an invoice line that applies an SLA credit: a
// negative amount (quantity 1, negative unit price).
const LineCredit = "sla_credit"

// SLA credit statuses: a credit is pending until invoices have taken all of
// it (applied); void credits are never applied.
const (
	SLACreditPending = "pending"
	SLACreditApplied = "applied"
	SLACreditVoid    = "void"
)

// SLACreditStatuses are the statuses of an SLA credit.
func SLACreditStatuses() []string {
	return []string{SLACreditPending, SLACreditApplied, SLACreditVoid}
}

// Bounds of SLA credits.
const (
	maxSLACreditBP     = 10_000 // 100 %
	maxSLASourceKeyLen = 200
	maxSLAReasonLen    = 1000
)

// SLACredit is a service credit (slacr_) earned by a breached support SLA
// target on a ticket tied to a service: PercentBP of the service's monthly
// price, fixed in Amount when it is issued. Pending credits become negative
// lines (LineCredit) of the service's next invoices; AppliedAmount counts
// what invoices have taken so far (an invoice takes at most its subtotal),
// and the credit is applied, with InvoiceID the invoice that took its last
// part, once AppliedAmount reaches Amount. SourceKey makes issuing
// idempotent.
type SLACredit struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	ServiceID     string       `gorm:"size:40;not null;index"`
	TicketID      string       `gorm:"size:40;not null;index"`
	SourceKey     string       `gorm:"size:200;not null;uniqueIndex"`
	PercentBP     int          `gorm:"not null"`
	Amount        models.Money `gorm:"not null"`
	AppliedAmount models.Money `gorm:"not null;default:0"`
	Currency      string       `gorm:"size:3;not null"`
	Reason        string       `gorm:"type:text;not null"`
	Status        string       `gorm:"size:16;not null;index"`
	InvoiceID     string       `gorm:"size:40;index"`
	CreatedAt     time.Time    `gorm:"not null"`
	AppliedAt     *time.Time
}

// Remaining returns the part of the credit that no invoice has taken yet.
func (c *SLACredit) Remaining() models.Money {
	if c.Status != SLACreditPending || c.AppliedAmount >= c.Amount {
		return 0
	}
	return c.Amount - c.AppliedAmount
}

// SLACreditInput is what the support SLA clock sends when a resolution
// target of a ticket tied to a service is breached.
type SLACreditInput struct {
	ServiceID string
	TicketID  string
	SourceKey string // e.g. "ticket:<id>:cycle:<n>:resolution"; one credit per key
	PercentBP int    // basis points of the monthly price, 1 to 10000
	Reason    string
	At        time.Time // when the breach happened; zero: now
}

// SLACreditEventData is the data of sla.credit_issued.
func SLACreditEventData(c *SLACredit) map[string]any {
	return map[string]any{
		"sla_credit": map[string]any{
			"id": c.ID, "service_id": c.ServiceID, "ticket_id": c.TicketID, "source_key": c.SourceKey,
			"percent": models.Money(c.PercentBP), "amount": c.Amount, "currency": c.Currency, "reason": c.Reason,
			"status": c.Status, "created_at": models.Timestamp(c.CreatedAt),
		},
	}
}

// serviceMonthlyPrice returns what svc costs per month and in which
// currency: the monthly run rate of its open subscription (what its
// recurring lines charge for a month), else of its latest subscription,
// else the service's own monthly charge (its order's price).
func serviceMonthlyPrice(tx *gorm.DB, svc *services.Service) (models.Money, string, error) {
	var sub Subscription
	err := tx.Where("service_id = ?", svc.ID).
		Order(clauseOpenFirst).Order("created_at DESC").Order("id DESC").Take(&sub).Error
	switch {
	case err == nil:
		return sub.MonthlyRunRate(), sub.Currency, nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return 0, "", models.DBErr(err)
	}
	currency := svc.Currency
	if currency == "" {
		var acct models.BillingAccount
		if err := tx.Where("id = ?", svc.AccountID).Take(&acct).Error; err == nil {
			currency = acct.Currency
		}
	}
	return svc.MonthlyCharge, currency, nil
}

// clauseOpenFirst orders a service's subscriptions with the open one first.
const clauseOpenFirst = "CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END"

// IssueSLACredit issues the credit of a breached SLA target in scope: in.PercentBP
// of the service's monthly price (the run rate of its subscription, see
// serviceMonthlyPrice), rounded to the cent, stored pending with
// sla.credit_issued in one transaction. It returns the credit and whether
// this call created it: a second call with the same SourceKey returns the
// first credit, created false, and writes nothing. A service whose monthly
// price is zero earns no credit: that is refused (VALIDATION_ERROR on
// service_id, detail reason "no_monthly_price") and nothing is stored.
// Errors: VALIDATION_ERROR, NOT_FOUND (the service is not in scope).
func (s *Store) IssueSLACredit(ctx context.Context, scope models.Scope, in SLACreditInput) (*SLACredit, bool, error) {
	in.Reason = strings.TrimSpace(in.Reason)
	var v models.Validator
	v.Check(models.HasPrefix(in.ServiceID, models.PrefixService), "service_id", "must be a service id (svc_...)")
	v.Check(in.TicketID != "" && len(in.TicketID) <= 40, "ticket_id", "is required (at most 40 characters)")
	v.Check(in.SourceKey != "" && len(in.SourceKey) <= maxSLASourceKeyLen, "source_key", fmt.Sprintf("is required (at most %d characters)", maxSLASourceKeyLen))
	v.Check(in.PercentBP >= 1 && in.PercentBP <= maxSLACreditBP, "percent_bp", "must be between 1 and 10000 basis points")
	v.Check(len(in.Reason) <= maxSLAReasonLen, "reason", fmt.Sprintf("must be at most %d characters", maxSLAReasonLen))
	if err := v.Err(); err != nil {
		return nil, false, err
	}
	svc, err := s.services.ServiceIn(ctx, scope, in.ServiceID)
	if err != nil {
		return nil, false, err
	}
	tenant := models.TenantScope(svc.OrganizationID, svc.Environment)
	at := in.At.UTC()
	if in.At.IsZero() {
		at = s.Now()
	}
	var out *SLACredit
	created := false
	err = s.Tx(ctx, tenant, func(tx *gorm.DB) error {
		if c, err := slaCreditBySource(tx, in.SourceKey); err != nil || c != nil {
			out = c
			return err
		}
		monthly, currency, err := serviceMonthlyPrice(tx, svc)
		if err != nil {
			return err
		}
		amount := mulDiv(monthly, int64(in.PercentBP), 10_000)
		if amount <= 0 {
			return models.Invalid(models.FieldIssue{Field: "service_id", Issue: fmt.Sprintf("service %s has no monthly price: there is nothing to credit", svc.ID)}).
				WithDetail("reason", "no_monthly_price")
		}
		out = &SLACredit{ID: models.NewID(PrefixSLACredit), ServiceID: svc.ID, TicketID: in.TicketID, SourceKey: in.SourceKey,
			PercentBP: in.PercentBP, Amount: amount, Currency: currency, Reason: in.Reason, Status: SLACreditPending, CreatedAt: at}
		if err := tx.Create(out).Error; err != nil {
			return err // a unique violation is resolved below
		}
		created = true
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventSLACreditIssued, out.ID, SLACreditEventData(out)))
	})
	if err != nil && models.IsUniqueViolation(err) {
		// A concurrent call with the same key won: answer its credit.
		c, lerr := slaCreditBySource(s.In(ctx, tenant), in.SourceKey)
		if lerr != nil {
			return nil, false, lerr
		}
		if c == nil {
			return nil, false, models.Errorf(models.CodeAlreadyExists, "source_key %s is already used", in.SourceKey)
		}
		return c, false, nil
	}
	if err != nil {
		return nil, false, models.AsError(err)
	}
	return out, created, nil
}

// slaCreditBySource returns the credit with key in tx's scope, or nil.
func slaCreditBySource(tx *gorm.DB, key string) (*SLACredit, error) {
	var c SLACredit
	err := tx.Where("source_key = ?", key).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	return &c, nil
}

// SLACreditFilter narrows a list of SLA credits.
type SLACreditFilter struct {
	ServiceID string
	Status    string
}

var slaCreditSorts = models.SortFields{"created_at": "created_at", "status": "status", "amount": "amount", "applied_at": "applied_at"}

// ListSLACredits returns a page of the SLA credits visible to p (its
// organization and environment), newest first, with the total count.
// Errors: VALIDATION_ERROR (status, sort).
func (s *Store) ListSLACredits(ctx context.Context, p *models.Principal, f SLACreditFilter, page models.PageRequest) ([]SLACredit, int64, error) {
	if f.Status != "" && !slices.Contains(SLACreditStatuses(), f.Status) {
		return nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be one of " + strings.Join(SLACreditStatuses(), ", ")})
	}
	q := s.In(ctx, p.Scope()).Model(&SLACredit{})
	if f.ServiceID != "" {
		q = q.Where("service_id = ?", f.ServiceID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	out := []SLACredit{}
	total, err := models.Paginate(q, page, slaCreditSorts, &out)
	return out, total, err
}

// applySLACredits adds to inv one LineCredit line per pending SLA credit of
// a service that inv charges (same tenant and currency, oldest first), inside
// tx before inv is totalled. The credits together take at most the
// subtotal of inv's other lines, so the invoice never goes negative; what a
// credit could not take stays pending for the service's next invoice. A
// credit fully taken becomes applied with inv's id. Each credit is updated
// only if no other transaction took it meanwhile.
func applySLACredits(tx *gorm.DB, inv *Invoice, now time.Time) error {
	var room models.Money
	category := map[string]string{}
	var serviceIDs []string
	for _, l := range inv.Lines {
		room += l.Amount
		if l.ServiceID != "" && l.Kind != LineCredit {
			if _, ok := category[l.ServiceID]; !ok {
				category[l.ServiceID] = l.Category
				serviceIDs = append(serviceIDs, l.ServiceID)
			}
		}
	}
	if room <= 0 || len(serviceIDs) == 0 {
		return nil
	}
	var pending []SLACredit
	if err := tx.Where("service_id IN ? AND status = ? AND currency = ?", serviceIDs, SLACreditPending, inv.Currency).
		Order("created_at, id").Find(&pending).Error; err != nil {
		return models.DBErr(err)
	}
	for i := range pending {
		c := &pending[i]
		take := min(c.Remaining(), room)
		if take <= 0 {
			continue
		}
		updates := map[string]any{"applied_amount": c.AppliedAmount + take}
		if c.AppliedAmount+take == c.Amount {
			updates["status"], updates["invoice_id"], updates["applied_at"] = SLACreditApplied, inv.ID, now
		}
		res := tx.Model(&SLACredit{}).Where("id = ? AND status = ? AND applied_amount = ?", c.ID, SLACreditPending, c.AppliedAmount).Updates(updates)
		if res.Error != nil {
			return models.DBErr(res.Error)
		}
		if res.RowsAffected != 1 {
			continue // taken by a concurrent invoice
		}
		desc := fmt.Sprintf("SLA credit %s: %s%% of the monthly price of %s, ticket %s", c.ID, models.Money(c.PercentBP), c.ServiceID, c.TicketID)
		if take != c.Amount {
			desc += fmt.Sprintf(" (%s of %s %s)", take, c.Amount, c.Currency)
		}
		inv.Lines = append(inv.Lines, InvoiceLine{Position: len(inv.Lines) + 1, Kind: LineCredit, ServiceID: c.ServiceID,
			Category: category[c.ServiceID], Description: models.Truncate(desc, 500), Quantity: 1, UnitPrice: -take, Amount: -take})
		room -= take
		if room == 0 {
			break
		}
	}
	return nil
}
