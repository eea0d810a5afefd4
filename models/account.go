package models

import (
	"context"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// BillingAccount is a tenant's billing account (acct_): where invoices go and
// how they are paid.
type BillingAccount struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	Name            string `gorm:"size:200;not null"`
	Currency        string `gorm:"size:3;not null"`
	BillingEmail    string `gorm:"size:320;not null"`
	BillingCycle    string `gorm:"size:20;not null"`
	AutoPay         bool   `gorm:"not null;default:false"`
	PaymentMethodID string `gorm:"size:40"`
	InvoiceDelivery string `gorm:"size:20;not null"`
	Balance         Money  `gorm:"not null;default:0"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Billing cycles and invoice delivery methods accepted in preferences.
var (
	billingCycles     = []string{"monthly", "quarterly", "annual"}
	invoiceDelivery   = []string{"email", "portal", "postal"}
	currencyPattern   = regexp.MustCompile(`^[A-Z]{3}$`)
	supportedCurrency = map[string]bool{"USD": true, "EUR": true, "GBP": true, "CAD": true, "AUD": true, "JPY": true}
)

// AccountInput is the body of account creation.
type AccountInput struct {
	OrganizationID string
	Name           string
	Currency       string
	BillingEmail   string
}

// PreferencesInput is the body of PUT /billing/accounts/{id}/preferences; nil fields stay as they are.
type PreferencesInput struct {
	BillingCycle    *string
	AutoPay         *bool
	PaymentMethodID *string
	InvoiceDelivery *string
	Currency        *string
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 320
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// CreateAccount creates a billing account in the caller's organization (or,
// for staff, in organization_id). Errors: VALIDATION_ERROR, NOT_FOUND (organization).
func (s *Store) CreateAccount(ctx context.Context, p *Principal, in AccountInput) (*BillingAccount, error) {
	var v Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	in.Currency = strings.ToUpper(strings.TrimSpace(in.Currency))
	v.Check(currencyPattern.MatchString(in.Currency) && supportedCurrency[in.Currency], "currency", "must be a supported ISO 4217 code (USD, EUR, GBP, CAD, AUD, JPY)")
	v.Check(validEmail(in.BillingEmail), "billing_email", "must be a valid e-mail address")
	if err := v.Err(); err != nil {
		return nil, err
	}
	scope := p.OwnScope()
	if in.OrganizationID != "" && in.OrganizationID != p.OrganizationID {
		if !p.IsStaff() {
			return nil, NotFound("organization")
		}
		if _, err := s.GetOrganization(ctx, p, in.OrganizationID); err != nil {
			return nil, err
		}
		scope = TenantScope(in.OrganizationID, p.Environment)
	}
	acct := &BillingAccount{
		ID: NewID(PrefixAccount), Name: in.Name, Currency: in.Currency, BillingEmail: in.BillingEmail,
		BillingCycle: "monthly", InvoiceDelivery: "email",
	}
	if err := s.In(ctx, scope).Create(acct).Error; err != nil {
		return nil, dbErr(err)
	}
	return acct, nil
}

// GetAccount returns one billing account visible to p. Errors: NOT_FOUND.
func (s *Store) GetAccount(ctx context.Context, p *Principal, id string) (*BillingAccount, error) {
	var a BillingAccount
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&a).Error
	return &a, notFoundOr(err, "billing account")
}

// ListAccounts returns a page of the billing accounts visible to p.
func (s *Store) ListAccounts(ctx context.Context, p *Principal, page PageRequest) ([]BillingAccount, int64, error) {
	var out []BillingAccount
	total, err := Paginate(s.In(ctx, p.Scope()).Model(&BillingAccount{}), page, accountSorts, &out)
	return out, total, err
}

var accountSorts = SortFields{"created_at": "created_at", "name": "name"}

// UpdatePreferences changes an account's billing preferences.
// Errors: VALIDATION_ERROR, NOT_FOUND.
func (s *Store) UpdatePreferences(ctx context.Context, p *Principal, id string, in PreferencesInput) (*BillingAccount, error) {
	var v Validator
	updates := map[string]any{}
	if in.BillingCycle != nil {
		v.Check(oneOf(*in.BillingCycle, billingCycles), "billing_cycle", "must be monthly, quarterly or annual")
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
		v.Check(supportedCurrency[c], "currency", "must be a supported ISO 4217 code (USD, EUR, GBP, CAD, AUD, JPY)")
		updates["currency"] = c
	}
	if in.PaymentMethodID != nil {
		v.Check(*in.PaymentMethodID == "" || HasPrefix(*in.PaymentMethodID, PrefixPaymentMethod), "payment_method_id", "must look like pm_...")
		updates["payment_method_id"] = *in.PaymentMethodID
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	acct, err := s.GetAccount(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if auto, ok := updates["auto_pay"].(bool); ok && auto {
		pm, _ := updates["payment_method_id"].(string)
		if pm == "" && acct.PaymentMethodID == "" {
			return nil, Invalid(FieldIssue{Field: "auto_pay", Issue: "needs a payment_method_id"})
		}
	}
	if len(updates) > 0 {
		if err := s.In(ctx, p.Scope()).Model(acct).Updates(updates).Error; err != nil {
			return nil, dbErr(err)
		}
	}
	return s.GetAccount(ctx, p, id)
}
