package billing

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/models/services"
)

// Billing event names written by the billing models (DECISIONS 9).
const (
	EventInvoiceCreated        = "invoice.created"
	EventInvoicePaid           = "invoice.paid"
	EventInvoiceOverdue        = "invoice.overdue"
	EventPaymentSuccessful     = "payment.successful"
	EventPaymentFailed         = "payment.failed"
	EventSubscriptionCreated   = "subscription.created"
	EventSubscriptionCancelled = "subscription.cancelled"
	EventUsageThreshold        = "usage.threshold"
)

// InvoiceStatus is an invoice's state (spec 3): pending, paid, overdue, cancelled.
type InvoiceStatus string

// Invoice states. pending → paid | overdue | cancelled; overdue → paid |
// cancelled; paid and cancelled are final.
const (
	InvoicePending   InvoiceStatus = "pending"
	InvoicePaid      InvoiceStatus = "paid"
	InvoiceOverdue   InvoiceStatus = "overdue"
	InvoiceCancelled InvoiceStatus = "cancelled"
)

// invoiceTransitions returns the one table of legal invoice moves.
func invoiceTransitions() map[InvoiceStatus][]InvoiceStatus {
	return map[InvoiceStatus][]InvoiceStatus{
		InvoicePending:   {InvoicePaid, InvoiceOverdue, InvoiceCancelled},
		InvoiceOverdue:   {InvoicePaid, InvoiceCancelled},
		InvoicePaid:      {},
		InvoiceCancelled: {},
	}
}

// Valid reports whether s is a known invoice status.
func (s InvoiceStatus) Valid() bool { _, ok := invoiceTransitions()[s]; return ok }

// Open reports whether an invoice in status s still expects payment.
func (s InvoiceStatus) Open() bool { return s == InvoicePending || s == InvoiceOverdue }

// CheckInvoiceTransition returns nil when an invoice may move from one
// status to the other. Errors: INVALID_STATE_TRANSITION (details: from, to, allowed).
func CheckInvoiceTransition(from, to InvoiceStatus) error {
	if slices.Contains(invoiceTransitions()[from], to) {
		return nil
	}
	return models.Errorf(models.CodeInvalidStateTransition, "an invoice cannot move from %s to %s", from, to).
		WithDetail("from", string(from)).WithDetail("to", string(to)).WithDetail("allowed", invoiceMoves(from))
}

// invoiceMoves returns the statuses an invoice in status from may move to
// (details.allowed of INVALID_STATE_TRANSITION), leaving out those in
// except: a move the table allows that the invoice's state refuses.
func invoiceMoves(from InvoiceStatus, except ...InvoiceStatus) []string {
	allowed := []string{}
	for _, n := range invoiceTransitions()[from] {
		if !slices.Contains(except, n) {
			allowed = append(allowed, string(n))
		}
	}
	return allowed
}

// Invoice sources.
const (
	InvoiceSourceManual       = "manual"
	InvoiceSourceSubscription = "subscription"
)

// Payment terms: an invoice without auto-pay is due this many days after it
// is issued (sandbox cycles count seconds instead of days, docs/billing.md).
const PaymentTermDays = 30

// Invoice is a bill sent to a billing account (inv_). Amounts are in the
// account's currency; Total = Subtotal + Tax; AmountPaid counts successful
// payments. Lines are loaded separately (LoadInvoiceLines).
type Invoice struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	AccountID      string        `gorm:"size:40;not null;index"`
	Number         string        `gorm:"size:20;not null"`
	Status         InvoiceStatus `gorm:"size:20;not null;index"`
	Source         string        `gorm:"size:20;not null"`
	SubscriptionID string        `gorm:"size:40;uniqueIndex:idx_invoice_subscription_period,priority:1"`
	PeriodStart    *time.Time    `gorm:"uniqueIndex:idx_invoice_subscription_period,priority:2"`
	PeriodEnd      *time.Time
	Currency       string       `gorm:"size:3;not null"`
	Subtotal       models.Money `gorm:"not null"`
	Tax            models.Money `gorm:"not null;default:0"`
	TaxRateBP      int          `gorm:"not null;default:0"`
	Total          models.Money `gorm:"not null"`
	AmountPaid     models.Money `gorm:"not null;default:0"`
	IssuedAt       time.Time    `gorm:"not null;index"`
	DueDate        time.Time    `gorm:"not null"`
	PaidAt         *time.Time
	OverdueAt      *time.Time
	CancelledAt    *time.Time
	Notes          string        `gorm:"size:2000"`
	Lines          []InvoiceLine `gorm:"-"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// AmountDue returns what is left to pay.
func (inv *Invoice) AmountDue() models.Money {
	if inv.Status == InvoiceCancelled {
		return 0
	}
	if d := inv.Total - inv.AmountPaid; d > 0 {
		return d
	}
	return 0
}

// Invoice line kinds.
const (
	LineService   = "service"   // a line of a manual invoice
	LineRecurring = "recurring" // a subscription's charge for (part of) a period
	LineUsage     = "usage"     // metered usage beyond what the price includes
	LineOverage   = "overage"   // API requests beyond the plan's monthly volume
	// LineCredit (sla_credit, in sla_credit.go) applies an SLA credit.
)

// Categories of charges in cost analysis: the catalog's categories, plus
// platform (API overage) and other.
const (
	CategoryPlatform = "platform"
	CategoryOther    = "other"
)

// InvoiceLine is one charge of an invoice. Amount is Quantity × UnitPrice
// for manual lines; for recurring lines it is prorated over the time the
// quantity applied (docs/billing.md), so it may be less.
type InvoiceLine struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	models.Tenant
	InvoiceID   string       `gorm:"size:40;not null;index"`
	Position    int          `gorm:"not null"`
	Kind        string       `gorm:"size:20;not null"`
	ServiceID   string       `gorm:"size:40;index"`
	Category    string       `gorm:"size:40;not null"`
	Description string       `gorm:"size:500;not null"`
	Quantity    int64        `gorm:"not null"`
	UnitPrice   models.Money `gorm:"not null"`
	Amount      models.Money `gorm:"not null"`
	PeriodStart *time.Time
	PeriodEnd   *time.Time
}

// BillingSequence is a per-tenant counter (invoice numbers).
type BillingSequence struct {
	ID string `gorm:"primaryKey;size:120"` // organization:environment:name
	models.Tenant
	Value int64 `gorm:"not null;default:0"`
}

// nextSequence returns the next value of the tenant's counter name, inside
// tx (the counter row stays locked until tx ends, so numbers never repeat).
func nextSequence(tx *gorm.DB, org string, env models.Environment, name string) (int64, error) {
	id := org + ":" + string(env) + ":" + name
	row := BillingSequence{ID: id, Tenant: models.Tenant{OrganizationID: org, Environment: env}}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return 0, models.DBErr(err)
	}
	if err := tx.Model(&BillingSequence{}).Where("id = ?", id).UpdateColumn("value", gorm.Expr("value + 1")).Error; err != nil {
		return 0, models.DBErr(err)
	}
	var got BillingSequence
	if err := tx.Where("id = ?", id).Take(&got).Error; err != nil {
		return 0, models.DBErr(err)
	}
	return got.Value, nil
}

// mulDiv returns m × num / den rounded half away from zero, without overflow.
func mulDiv(m models.Money, num, den int64) models.Money {
	if den == 0 {
		return 0
	}
	x := new(big.Int).Mul(big.NewInt(int64(m)), big.NewInt(num))
	d := big.NewInt(den)
	q, r := new(big.Int).QuoRem(x, d, new(big.Int))
	r2 := new(big.Int).Abs(new(big.Int).Mul(r, big.NewInt(2)))
	if r2.Cmp(new(big.Int).Abs(d)) >= 0 {
		if x.Sign()*d.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return models.Money(q.Int64())
}

// TaxOn returns the tax on subtotal at rate basis points (825 = 8.25%),
// rounded to the nearest cent.
func TaxOn(subtotal models.Money, rateBP int) models.Money {
	return mulDiv(subtotal, int64(rateBP), 10_000)
}

// Bounds of invoice bodies.
const (
	maxInvoiceLines = 100
	maxLineQuantity = 1_000_000
	maxUnitPrice    = models.Money(100_000_000_00) // 100 million
	// maxInvoiceSubtotal bounds an invoice before tax (1 billion): the
	// totals summed over an account's or every tenant's invoices stay far
	// within 64-bit minor units. Each line is within it by the bounds above
	// (quantity × unit price ≤ 10^16 minor units), so the sum cannot
	// overflow before it is checked.
	maxInvoiceSubtotal = models.Money(1_000_000_000_00)
	maxInvoiceDueAhead = 5 * 365 * 24 * time.Hour
)

// InvoiceLineInput is one item of the invoice create body (spec 2.3).
type InvoiceLineInput struct {
	ServiceID string
	Quantity  int64
	UnitPrice models.Money
}

// InvoiceInput is the invoice create body (spec 2.3).
type InvoiceInput struct {
	ID        string // chosen by the caller (the API), or generated
	AccountID string
	Lines     []InvoiceLineInput
	DueDate   *time.Time
	Notes     string
}

// accountFor returns the billing account id visible to p and the tenant
// scope it belongs to (staff act in the account's organization). A missing
// account is a VALIDATION_ERROR on field (it is a reference in a body).
func (s *Store) accountFor(ctx context.Context, p *models.Principal, id, field string) (*models.BillingAccount, models.Scope, error) {
	if id == "" {
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: field, Issue: "is required"})
	}
	if !models.HasPrefix(id, models.PrefixAccount) {
		return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a billing account id (acct_...)"})
	}
	var a models.BillingAccount
	if err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&a).Error; err != nil {
		if models.ErrorCode(models.NotFoundOr(err, "")) == models.CodeNotFound {
			return nil, models.Scope{}, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("no billing account %s in this organization", id)})
		}
		return nil, models.Scope{}, models.DBErr(err)
	}
	return &a, models.TenantScope(a.OrganizationID, a.Environment), nil
}

// ValidateInvoice checks an invoice create body for p and returns the
// account and the tenant scope the invoice will belong to, without writing.
// Errors: VALIDATION_ERROR.
func (s *Store) ValidateInvoice(ctx context.Context, p *models.Principal, in InvoiceInput) (*models.BillingAccount, models.Scope, error) {
	var v models.Validator
	v.Check(len(in.Lines) >= 1 && len(in.Lines) <= maxInvoiceLines, "services", fmt.Sprintf("must list 1 to %d services", maxInvoiceLines))
	for i, l := range in.Lines {
		f := fmt.Sprintf("services[%d]", i)
		v.Check(models.HasPrefix(l.ServiceID, models.PrefixService), f+".service_id", "must be a service id (svc_...)")
		v.Check(l.Quantity >= 1 && l.Quantity <= maxLineQuantity, f+".quantity", fmt.Sprintf("must be between 1 and %d", maxLineQuantity))
		v.Check(l.UnitPrice >= 0 && l.UnitPrice <= maxUnitPrice, f+".unit_price", "must be between 0 and 100000000.00")
	}
	if v.Err() == nil {
		var subtotal models.Money
		for _, l := range in.Lines {
			subtotal += l.UnitPrice * models.Money(l.Quantity)
		}
		v.Check(subtotal <= maxInvoiceSubtotal, "services", "the invoice's amount before tax (the sum of quantity × unit_price) must be at most 1000000000.00")
	}
	v.Check(len(in.Notes) <= 2000, "notes", "must be at most 2000 characters")
	now := s.Now()
	if in.DueDate != nil {
		v.Check(!in.DueDate.Before(now.Add(-time.Minute)), "due_date", "must not be in the past")
		v.Check(in.DueDate.Before(now.Add(maxInvoiceDueAhead)), "due_date", "must be within 5 years")
	}
	acct, scope, aerr := s.accountFor(ctx, p, in.AccountID, "account_id")
	if aerr != nil {
		if e := models.AsError(aerr); e.Code == models.CodeValidation {
			for _, fi := range e.Details["fields"].([]models.FieldIssue) {
				v.Add(fi.Field, fi.Issue)
			}
		} else {
			return nil, models.Scope{}, aerr
		}
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	for i, l := range in.Lines {
		svc, err := s.services.ServiceIn(ctx, scope, l.ServiceID)
		if models.ErrorCode(err) == models.CodeNotFound {
			v.Add(fmt.Sprintf("services[%d].service_id", i), fmt.Sprintf("no service %s in this organization", l.ServiceID))
			continue
		}
		if err != nil {
			return nil, models.Scope{}, err
		}
		v.Check(svc.AccountID == acct.ID, fmt.Sprintf("services[%d].service_id", i), fmt.Sprintf("service %s is billed to another account", l.ServiceID))
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	return acct, scope, nil
}

// CreateInvoice validates and creates a manual invoice (spec 2.3): one line
// per service, tax at the account's rate, due on due_date (default: 30 days
// after issue). In the same transaction it writes invoice.created (and
// evaluates the account's budgets). An invoice whose total is zero is paid
// at once. Errors: VALIDATION_ERROR.
func (s *Store) CreateInvoice(ctx context.Context, p *models.Principal, in InvoiceInput) (*Invoice, error) {
	acct, scope, err := s.ValidateInvoice(ctx, p, in)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	due := now.Add(PaymentTermDays * 24 * time.Hour)
	if in.DueDate != nil {
		due = in.DueDate.UTC()
	}
	id := in.ID
	if id == "" {
		id = models.NewID(models.PrefixInvoice)
	}
	inv := &Invoice{ID: id, AccountID: acct.ID, Source: InvoiceSourceManual, Currency: acct.Currency, TaxRateBP: acct.TaxRateBP,
		IssuedAt: now, DueDate: due, Notes: strings.TrimSpace(in.Notes)}
	err = s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		for i, l := range in.Lines {
			svc, err := s.services.ServiceIn(ctx, scope, l.ServiceID)
			if err != nil {
				return err
			}
			desc, category := s.serviceDescription(ctx, svc)
			inv.Lines = append(inv.Lines, InvoiceLine{Position: i + 1, Kind: LineService, ServiceID: svc.ID, Category: category,
				Description: desc, Quantity: l.Quantity, UnitPrice: l.UnitPrice, Amount: l.UnitPrice * models.Money(l.Quantity)})
		}
		return s.insertInvoice(tx, scope, inv, now)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return inv, nil
}

// insertInvoice numbers inv, applies the pending SLA credits of its
// services (applySLACredits), totals its lines, stores it with its lines,
// writes invoice.created (and invoice.paid for a zero total) and evaluates
// the account's budgets, inside tx.
func (s *Store) insertInvoice(tx *gorm.DB, scope models.Scope, inv *Invoice, now time.Time) error {
	n, err := nextSequence(tx, scope.OrganizationID, scope.Environment, "invoice")
	if err != nil {
		return err
	}
	if err := applySLACredits(tx, inv, now); err != nil {
		return err
	}
	inv.Number = fmt.Sprintf("INV-%06d", n)
	inv.Subtotal = 0
	for _, l := range inv.Lines {
		inv.Subtotal += l.Amount
	}
	if inv.Subtotal < 0 {
		inv.Subtotal = 0
	}
	inv.Tax = TaxOn(inv.Subtotal, inv.TaxRateBP)
	inv.Total = inv.Subtotal + inv.Tax
	inv.Status = InvoicePending
	if inv.Total == 0 {
		inv.Status, inv.PaidAt = InvoicePaid, &now
	}
	lines := inv.Lines
	if err := tx.Create(inv).Error; err != nil {
		return models.DBErr(err)
	}
	inv.Lines = lines
	for i := range inv.Lines {
		inv.Lines[i].InvoiceID = inv.ID
		inv.Lines[i].OrganizationID, inv.Lines[i].Environment = inv.OrganizationID, inv.Environment
	}
	if len(inv.Lines) > 0 {
		if err := tx.Create(&inv.Lines).Error; err != nil {
			return models.DBErr(err)
		}
	}
	if err := eventlog.RecordEvent(tx, eventlog.NewEvent(EventInvoiceCreated, inv.ID, InvoiceEventData(inv))); err != nil {
		return err
	}
	return s.evaluateBudgets(tx, inv.AccountID, now)
}

// serviceDescription returns a line description for svc and its catalog category.
func (s *Store) serviceDescription(ctx context.Context, svc *services.Service) (string, string) {
	desc, category := svc.Name, CategoryOther
	var cs catalog.CatalogService
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", svc.CatalogServiceID).Take(&cs).Error; err == nil {
		category = cs.Category
		if desc == "" {
			desc = cs.Name
		}
	}
	if desc == "" {
		desc = svc.Kind
	}
	if svc.Bandwidth != "" && !strings.Contains(desc, svc.Bandwidth) {
		desc += " " + svc.Bandwidth
	}
	return fmt.Sprintf("%s (%s)", desc, svc.ID), category
}

// InvoiceEventData is the data of the invoice.* events.
func InvoiceEventData(inv *Invoice) map[string]any {
	d := map[string]any{
		"invoice": map[string]any{
			"id": inv.ID, "number": inv.Number, "status": string(inv.Status), "account_id": inv.AccountID,
			"amount": inv.Total, "amount_paid": inv.AmountPaid, "amount_due": inv.AmountDue(),
			"currency": inv.Currency, "due_date": models.Timestamp(inv.DueDate), "subscription_id": nil,
		},
	}
	if inv.SubscriptionID != "" {
		d["invoice"].(map[string]any)["subscription_id"] = inv.SubscriptionID
	}
	if inv.PaidAt != nil {
		d["invoice"].(map[string]any)["paid_date"] = models.Timestamp(*inv.PaidAt)
	}
	return d
}

// LoadInvoiceLines fills the lines of invs (one query).
func (s *Store) LoadInvoiceLines(ctx context.Context, scope models.Scope, invs ...*Invoice) error {
	if len(invs) == 0 {
		return nil
	}
	ids := make([]string, len(invs))
	byID := map[string]*Invoice{}
	for i, inv := range invs {
		ids[i], byID[inv.ID] = inv.ID, inv
		inv.Lines = []InvoiceLine{}
	}
	var lines []InvoiceLine
	if err := s.In(ctx, scope).Where("invoice_id IN ?", ids).Order("invoice_id, position").Find(&lines).Error; err != nil {
		return models.DBErr(err)
	}
	for _, l := range lines {
		byID[l.InvoiceID].Lines = append(byID[l.InvoiceID].Lines, l)
	}
	return nil
}

// GetInvoice returns one invoice visible to p, with its lines. Errors: NOT_FOUND.
func (s *Store) GetInvoice(ctx context.Context, p *models.Principal, id string) (*Invoice, error) {
	inv, err := s.GetInvoiceRow(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return inv, s.LoadInvoiceLines(ctx, p.Scope(), inv)
}

// GetInvoiceRow returns one invoice visible to p as stored, without its
// lines: for readers that show only the invoice's own columns.
// Errors: NOT_FOUND.
func (s *Store) GetInvoiceRow(ctx context.Context, p *models.Principal, id string) (*Invoice, error) {
	var inv Invoice
	if err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&inv).Error; err != nil {
		return nil, models.NotFoundOr(err, "invoice")
	}
	return &inv, nil
}

// InvoiceIn returns one invoice in scope, with its lines. Errors: NOT_FOUND.
func (s *Store) InvoiceIn(ctx context.Context, scope models.Scope, id string) (*Invoice, error) {
	var inv Invoice
	if err := s.In(ctx, scope).Where("id = ?", id).Take(&inv).Error; err != nil {
		return nil, models.NotFoundOr(err, "invoice")
	}
	return &inv, s.LoadInvoiceLines(ctx, scope, &inv)
}

// InvoiceFilter narrows an invoice list (spec 4.2).
type InvoiceFilter struct {
	Status    string
	AccountID string
	From      *time.Time // issued at or after
	To        *time.Time // issued before
	Limit     int
	Offset    int
	// Sort orders the list (invoiceSorts' names); empty: newest issued first.
	Sort []models.SortField
	// Expr is a filter expression over InvoiceFilterSchema's fields
	// (docs/filtering.md); empty: no such filter.
	Expr string
}

// invoiceSorts are the fields an invoice list sorts by.
var invoiceSorts = models.SortFields{"issued_at": "issued_at", "due_date": "due_date", "created_at": "created_at", "amount": "total",
	"amount_paid": "amount_paid", "status": "status", "number": "number"}

// ListInvoices returns a window of the invoices visible to p, newest first,
// with the total count. Errors: VALIDATION_ERROR.
func (s *Store) ListInvoices(ctx context.Context, p *models.Principal, f InvoiceFilter) ([]Invoice, int64, error) {
	var v models.Validator
	if f.Status != "" {
		v.Check(InvoiceStatus(f.Status).Valid(), "status", "must be pending, paid, overdue or cancelled")
	}
	if f.From != nil && f.To != nil {
		v.Check(!f.To.Before(*f.From), "date_to", "must not be before date_from")
	}
	if f.Limit == 0 {
		f.Limit = models.DefaultPageLimit
	}
	v.Check(f.Limit >= 1 && f.Limit <= models.MaxPageLimit, "limit", fmt.Sprintf("must be between 1 and %d", models.MaxPageLimit))
	v.Check(f.Offset >= 0, "offset", "must not be negative")
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	q := s.In(ctx, p.Scope()).Model(&Invoice{})
	if strings.TrimSpace(f.Expr) != "" {
		expr, err := filter.Compile(InvoiceFilterSchema(), f.Expr)
		if err != nil {
			return nil, 0, err
		}
		q = q.Where(expr.SQL, expr.Args...)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if f.From != nil {
		q = q.Where("issued_at >= ?", f.From.UTC())
	}
	if f.To != nil {
		q = q.Where("issued_at < ?", f.To.UTC())
	}
	sorts := f.Sort
	if len(sorts) == 0 {
		sorts = []models.SortField{{Field: "issued_at", Desc: true}}
	}
	var out []Invoice
	total, err := models.Paginate(q, models.PageRequest{Limit: f.Limit, Offset: f.Offset, Sort: sorts}, invoiceSorts, &out)
	if err != nil {
		return nil, 0, err
	}
	ptrs := make([]*Invoice, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, total, s.LoadInvoiceLines(ctx, p.Scope(), ptrs...)
}

// lockInvoice reads an invoice inside tx, locking its row on PostgreSQL
// (SQLite serialises writers). Errors: NOT_FOUND.
func lockInvoice(tx *gorm.DB, id string) (*Invoice, error) {
	var inv Invoice
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&inv).Error; err != nil {
		return nil, models.NotFoundOr(err, "invoice")
	}
	return &inv, nil
}

// CancelInvoice cancels (voids) an open invoice that has received no
// payment. Voiding is a provider-staff operation (CanAdministerBilling): a
// customer disputes instead (DisputeInvoice). The invoice's open dispute is
// resolved with reason, and invoice.cancelled is written in the same
// transaction. Errors: INSUFFICIENT_PERMISSIONS, NOT_FOUND,
// INVALID_STATE_TRANSITION (paid, cancelled, or partly paid: details from,
// to, allowed, and amount_paid for a partly paid one).
func (s *Store) CancelInvoice(ctx context.Context, p *models.Principal, id, reason string) (*Invoice, error) {
	if !CanAdministerBilling(p) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "cancelling an invoice is for provider staff with %s: dispute it instead (POST /v1/billing/invoices/%s/disputes)", models.PermissionBillingAdmin, id).
			WithDetail("required_permission", models.PermissionBillingAdmin)
	}
	inv, err := s.GetInvoice(ctx, p, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(inv.OrganizationID, inv.Environment)
	err = s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		cur, err := lockInvoice(tx, id)
		if err != nil {
			return err
		}
		if err := CheckInvoiceTransition(cur.Status, InvoiceCancelled); err != nil {
			return err
		}
		var processing int64
		if err := tx.Model(&Payment{}).Where("invoice_id = ? AND status = ?", id, PaymentProcessing).Count(&processing).Error; err != nil {
			return models.DBErr(err)
		}
		if cur.AmountPaid > 0 || processing > 0 {
			return models.Errorf(models.CodeInvalidStateTransition, "invoice %s has payments and cannot be cancelled", id).
				WithDetail("from", string(cur.Status)).WithDetail("to", string(InvoiceCancelled)).WithDetail("amount_paid", cur.AmountPaid).
				WithDetail("allowed", invoiceMoves(cur.Status, InvoiceCancelled))
		}
		now := s.Now()
		if err := tx.Model(&Invoice{}).Where("id = ?", id).Updates(map[string]any{"status": InvoiceCancelled, "cancelled_at": now, "updated_at": now}).Error; err != nil {
			return models.DBErr(err)
		}
		resolution := "invoice cancelled"
		if reason != "" {
			resolution += ": " + reason
		}
		if err := tx.Model(&InvoiceDispute{}).Where("invoice_id = ? AND status = ?", id, DisputeOpen).
			Updates(map[string]any{"status": DisputeResolved, "resolution": resolution, "resolved_at": now, "updated_at": now}).Error; err != nil {
			return models.DBErr(err)
		}
		cur.Status, cur.CancelledAt = InvoiceCancelled, &now
		data := InvoiceEventData(cur)
		data["reason"] = reason
		data["cancelled_by"] = p.ID
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventInvoiceCancelled, id, data))
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.InvoiceIn(ctx, scope, id)
}

// MarkInvoiceOverdue moves an invoice that is still pending to overdue and
// writes invoice.overdue, in one transaction. It returns the invoice; one
// that is paid, cancelled or already overdue is returned unchanged (so a
// retried activity, or a payment that arrived first, is harmless).
// Errors: NOT_FOUND.
func (s *Store) MarkInvoiceOverdue(ctx context.Context, scope models.Scope, id string) (*Invoice, error) {
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		inv, err := lockInvoice(tx, id)
		if err != nil {
			return err
		}
		if inv.Status != InvoicePending {
			return nil
		}
		now := s.Now()
		if err := tx.Model(&Invoice{}).Where("id = ?", id).Updates(map[string]any{"status": InvoiceOverdue, "overdue_at": now, "updated_at": now}).Error; err != nil {
			return models.DBErr(err)
		}
		inv.Status, inv.OverdueAt = InvoiceOverdue, &now
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventInvoiceOverdue, inv.ID, InvoiceEventData(inv)))
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.InvoiceIn(ctx, scope, id)
}
