package billing

import (
	"context"
	"regexp"
	"strings"

	"github.com/telcoplatform/platform/models"
)

// Billing cycles and invoice delivery methods accepted in preferences.
var (
	invoiceDelivery = []string{"email", "portal", "postal"}
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// AccountInput is the body of account creation.
type AccountInput struct {
	OrganizationID string
	Name           string
	Currency       string
	BillingEmail   string
	ContactName    string
	TaxRate        *models.Money // percent with two decimals (8.25), stored as basis points
}

// maxTaxRate is the highest tax rate accepted, in percent × 100.
const maxTaxRate = models.Money(10_000)

// PreferencesInput is the body of PUT /billing/accounts/{id}/preferences; nil fields stay as they are.
type PreferencesInput struct {
	BillingCycle    *string
	AutoPay         *bool
	PaymentMethodID *string
	InvoiceDelivery *string
	Currency        *string
	TaxRate         *models.Money
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// checkTaxRateSetter refuses a tax rate from anyone but provider billing
// staff: the provider applies tax, customers do not choose it.
// Errors: INSUFFICIENT_PERMISSIONS.
func checkTaxRateSetter(p *models.Principal, rate *models.Money) error {
	if rate == nil || CanAdministerBilling(p) {
		return nil
	}
	return models.Errorf(models.CodeInsufficientPermissions, "tax_rate is set by the provider's billing staff (permission %s); leave it out", models.PermissionBillingAdmin).
		WithDetail("field", "tax_rate").WithDetail("required_permission", models.PermissionBillingAdmin)
}

// CreateAccount creates a billing account in the caller's organization (or,
// for staff, in organization_id). Errors: VALIDATION_ERROR (among them an
// organization_id the caller may not see).
func (s *Store) CreateAccount(ctx context.Context, p *models.Principal, in AccountInput) (*models.BillingAccount, error) {
	// Who may set a tax rate comes before what rate: a customer is told the
	// field is not theirs, whatever its value.
	if err := checkTaxRateSetter(p, in.TaxRate); err != nil {
		return nil, err
	}
	var v models.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	in.Currency = strings.ToUpper(strings.TrimSpace(in.Currency))
	v.Check(currencyPattern.MatchString(in.Currency) && models.SupportedCurrency(in.Currency), "currency", models.CurrencyIssue)
	v.Check(models.ValidEmail(in.BillingEmail), "billing_email", "must be a valid e-mail address")
	in.ContactName = strings.TrimSpace(in.ContactName)
	v.Check(len(in.ContactName) <= 200, "billing_contact_name", "must be at most 200 characters")
	if in.TaxRate != nil {
		v.Check(*in.TaxRate >= 0 && *in.TaxRate <= maxTaxRate, "tax_rate", "must be a percentage between 0 and 100")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	scope := p.OwnScope()
	if in.OrganizationID != "" && in.OrganizationID != p.OrganizationID {
		// A body's reference to an organization the caller may not see
		// (another tenant's, or none) is a bad field, not a missing resource.
		unseen := models.Invalid(models.FieldIssue{Field: "organization_id", Issue: "names no organization this credential may see"})
		if !p.IsStaff() {
			return nil, unseen
		}
		if _, err := s.identity.GetOrganization(ctx, p, in.OrganizationID); models.ErrorCode(err) == models.CodeNotFound {
			return nil, unseen
		} else if err != nil {
			return nil, err
		}
		scope = models.TenantScope(in.OrganizationID, p.Environment)
	}
	acct := &models.BillingAccount{
		ID: models.NewID(models.PrefixAccount), Name: in.Name, Currency: in.Currency, BillingEmail: in.BillingEmail,
		BillingCycle: "monthly", InvoiceDelivery: "email", ContactName: in.ContactName,
	}
	if in.TaxRate != nil {
		acct.TaxRateBP = int(*in.TaxRate)
	}
	if err := s.In(ctx, scope).Create(acct).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return acct, nil
}

// GetAccount returns one billing account visible to p, its balance filled
// in. Errors: NOT_FOUND.
func (s *Store) GetAccount(ctx context.Context, p *models.Principal, id string) (*models.BillingAccount, error) {
	var a models.BillingAccount
	if err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, models.NotFoundOr(err, "billing account")
	}
	return &a, s.fillBalances(ctx, p.Scope(), &a)
}

// ListAccounts returns a page of the billing accounts visible to p, their
// balances filled in.
func (s *Store) ListAccounts(ctx context.Context, p *models.Principal, page models.PageRequest) ([]models.BillingAccount, int64, error) {
	var out []models.BillingAccount
	total, err := models.Paginate(s.In(ctx, p.Scope()).Model(&models.BillingAccount{}), page, accountSorts, &out)
	if err != nil {
		return nil, 0, err
	}
	ptrs := make([]*models.BillingAccount, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	return out, total, s.fillBalances(ctx, p.Scope(), ptrs...)
}

// fillBalances sets each account's Balance to what its open (pending or
// overdue) invoices still ask for: their totals less what was paid.
func (s *Store) fillBalances(ctx context.Context, scope models.Scope, accts ...*models.BillingAccount) error {
	if len(accts) == 0 {
		return nil
	}
	ids := make([]string, len(accts))
	for i, a := range accts {
		ids[i] = a.ID
		a.Balance = 0
	}
	var rows []struct {
		AccountID string
		Due       int64
	}
	err := s.In(ctx, scope).Model(&Invoice{}).Select("account_id, SUM(total - amount_paid) AS due").
		Where("account_id IN ? AND status IN ?", ids, []InvoiceStatus{InvoicePending, InvoiceOverdue}).Group("account_id").Scan(&rows).Error
	if err != nil {
		return models.DBErr(err)
	}
	for _, r := range rows {
		for _, a := range accts {
			if a.ID == r.AccountID {
				a.Balance = models.Money(r.Due)
			}
		}
	}
	return nil
}

// AccountDetail is a billing account with what GET /billing/accounts/{id}
// shows beside it: its attached payment methods, its organization's plan
// and the amount of its overdue invoices.
type AccountDetail struct {
	Account        *models.BillingAccount
	PaymentMethods []PaymentMethod
	Plan           models.Plan
	PlanLimits     models.PlanLimits
	OverdueAmount  models.Money
	OpenInvoices   int64
}

// GetAccountDetail returns one billing account visible to p with its
// payment methods, plan and dues. Errors: NOT_FOUND.
func (s *Store) GetAccountDetail(ctx context.Context, p *models.Principal, id string) (*AccountDetail, error) {
	a, err := s.GetAccount(ctx, p, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(a.OrganizationID, a.Environment)
	d := &AccountDetail{Account: a}
	if d.PaymentMethods, err = s.attachedMethods(ctx, scope, a.ID); err != nil {
		return nil, err
	}
	var org models.Organization
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", a.OrganizationID).Take(&org).Error; err != nil {
		return nil, models.NotFoundOr(err, "organization")
	}
	d.Plan, d.PlanLimits = org.Plan, org.Limits()
	var row struct {
		Overdue int64
		Open    int64
	}
	err = s.In(ctx, scope).Model(&Invoice{}).
		Select("COALESCE(SUM(CASE WHEN status = ? THEN total - amount_paid ELSE 0 END), 0) AS overdue, COUNT(*) AS open", InvoiceOverdue).
		Where("account_id = ? AND status IN ?", a.ID, []InvoiceStatus{InvoicePending, InvoiceOverdue}).Scan(&row).Error
	if err != nil {
		return nil, models.DBErr(err)
	}
	d.OverdueAmount, d.OpenInvoices = models.Money(row.Overdue), row.Open
	return d, nil
}

var accountSorts = models.SortFields{"created_at": "created_at", "name": "name"}

// UpdatePreferences changes an account's billing preferences. The payment
// method must be one of the account's; auto_pay needs one; the currency can
// change only while the account has no invoices and no subscriptions.
// Errors: VALIDATION_ERROR, NOT_FOUND.
func (s *Store) UpdatePreferences(ctx context.Context, p *models.Principal, id string, in PreferencesInput) (*models.BillingAccount, error) {
	if err := checkTaxRateSetter(p, in.TaxRate); err != nil {
		return nil, err
	}
	var v models.Validator
	updates := map[string]any{}
	if in.BillingCycle != nil {
		v.Check(oneOf(*in.BillingCycle, models.BillingCycles), "billing_cycle", "must be monthly, quarterly or annual")
		updates["billing_cycle"] = *in.BillingCycle
	}
	if in.AutoPay != nil {
		updates["auto_pay"] = *in.AutoPay
	}
	if in.InvoiceDelivery != nil {
		v.Check(oneOf(*in.InvoiceDelivery, invoiceDelivery), "invoice_delivery", "must be email, portal or postal")
		updates["invoice_delivery"] = *in.InvoiceDelivery
	}
	if in.Currency != nil {
		c := strings.ToUpper(*in.Currency)
		v.Check(models.SupportedCurrency(c), "currency", models.CurrencyIssue)
		updates["currency"] = c
	}
	if in.PaymentMethodID != nil {
		v.Check(*in.PaymentMethodID == "" || models.HasPrefix(*in.PaymentMethodID, models.PrefixPaymentMethod), "payment_method_id", "must look like pm_...")
		updates["payment_method_id"] = *in.PaymentMethodID
	}
	if in.TaxRate != nil {
		v.Check(*in.TaxRate >= 0 && *in.TaxRate <= maxTaxRate, "tax_rate", "must be a percentage between 0 and 100")
		updates["tax_rate_bp"] = int(*in.TaxRate)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	acct, err := s.GetAccount(ctx, p, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(acct.OrganizationID, acct.Environment)
	if pm, _ := updates["payment_method_id"].(string); pm != "" {
		if _, err := s.ResolvePaymentMethodID(ctx, scope, acct.ID, pm, "payment_method_id"); err != nil {
			return nil, err
		}
	}
	if c, ok := updates["currency"].(string); ok && c != acct.Currency {
		var n, m int64
		if err := s.In(ctx, scope).Model(&Invoice{}).Where("account_id = ?", acct.ID).Count(&n).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if err := s.In(ctx, scope).Model(&Subscription{}).Where("account_id = ?", acct.ID).Count(&m).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if n+m > 0 {
			return nil, models.Invalid(models.FieldIssue{Field: "currency", Issue: "cannot change once the account has invoices or subscriptions"})
		}
	}
	auto, pm := acct.AutoPay, acct.PaymentMethodID
	if v, ok := updates["auto_pay"].(bool); ok {
		auto = v
	}
	if v, ok := updates["payment_method_id"].(string); ok {
		pm = v
	}
	if auto && pm == "" {
		return nil, models.Invalid(models.FieldIssue{Field: "auto_pay", Issue: "needs a payment_method_id"})
	}
	if len(updates) > 0 {
		if err := s.In(ctx, scope).Model(&models.BillingAccount{}).Where("id = ?", acct.ID).Updates(updates).Error; err != nil {
			return nil, models.DBErr(err)
		}
	}
	return s.GetAccount(ctx, p, id)
}
