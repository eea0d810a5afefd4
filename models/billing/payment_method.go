package billing

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Payment method types accepted (spec 2.3 shows credit_card).
var paymentMethodTypes = []string{"credit_card", "debit_card"}

var (
	cardTokenPattern  = regexp.MustCompile(`^tok_[A-Za-z0-9_]{1,60}$`)
	cardNumberPattern = regexp.MustCompile(`^[0-9][0-9 -]{10,}[0-9]$`)
	countryPattern    = regexp.MustCompile(`^[A-Z]{2}$`)
)

// BillingAddress is a card's billing address (spec 2.3).
type BillingAddress struct {
	Street  string `json:"street"`
	City    string `json:"city"`
	State   string `json:"state,omitempty"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
}

// Card is what the payment gateway knows about a card token: never the
// card number, only its brand, last four digits and expiry.
type Card struct {
	Brand    string
	Last4    string
	ExpMonth int
	ExpYear  int
}

// PaymentMethod is a tokenised card (pm_). The gateway's token is stored,
// never a card number. Methods attached to an account are listed and
// reusable; a card token sent with one payment gets a detached method so
// that every payment names its method.
type PaymentMethod struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	AccountID      string         `gorm:"size:40;not null;index"`
	Type           string         `gorm:"size:20;not null"`
	Token          string         `gorm:"size:80;not null"`
	Brand          string         `gorm:"size:20"`
	Last4          string         `gorm:"size:4"`
	ExpMonth       int            `gorm:"not null;default:0"`
	ExpYear        int            `gorm:"not null;default:0"`
	BillingAddress BillingAddress `gorm:"serializer:json;type:text"`
	Attached       bool           `gorm:"not null"`
	RemovedAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// PaymentMethodInput is the body of POST .../payment-methods and the
// payment_method object of a payment (spec 2.3).
type PaymentMethodInput struct {
	Type           string
	CardToken      string
	BillingAddress *BillingAddress
}

// CheckCardToken validates a card token's form; a card number is refused so
// that it is never stored or logged. Errors: VALIDATION_ERROR.
func CheckCardToken(field, token string) error {
	t := strings.TrimSpace(token)
	switch {
	case t == "":
		return models.Invalid(models.FieldIssue{Field: field, Issue: "is required"})
	case cardNumberPattern.MatchString(t):
		return models.Invalid(models.FieldIssue{Field: field, Issue: "looks like a card number: send the token from the payment form (tok_...), never the number"})
	case !cardTokenPattern.MatchString(t):
		return models.Invalid(models.FieldIssue{Field: field, Issue: "must be a card token (tok_...)"})
	}
	return nil
}

// Validate checks the input; prefix names the fields (e.g. "payment_method.").
// Errors: VALIDATION_ERROR.
func (in *PaymentMethodInput) Validate(prefix string, addressRequired bool) error {
	var v models.Validator
	if in.Type == "" {
		in.Type = "credit_card"
	}
	v.Check(oneOf(in.Type, paymentMethodTypes), prefix+"type", "must be credit_card or debit_card")
	if err := CheckCardToken(prefix+"card_token", in.CardToken); err != nil {
		for _, fi := range models.AsError(err).Details["fields"].([]models.FieldIssue) {
			v.Add(fi.Field, fi.Issue)
		}
	}
	a := in.BillingAddress
	switch {
	case a == nil:
		v.Check(!addressRequired, prefix+"billing_address", "is required")
	default:
		a.Country = strings.ToUpper(strings.TrimSpace(a.Country))
		v.Check(strings.TrimSpace(a.Street) != "" && len(a.Street) <= 200, prefix+"billing_address.street", "is required, at most 200 characters")
		v.Check(strings.TrimSpace(a.City) != "" && len(a.City) <= 100, prefix+"billing_address.city", "is required, at most 100 characters")
		v.Check(len(a.State) <= 100, prefix+"billing_address.state", "must be at most 100 characters")
		v.Check(strings.TrimSpace(a.Zip) != "" && len(a.Zip) <= 20, prefix+"billing_address.zip", "is required, at most 20 characters")
		v.Check(countryPattern.MatchString(a.Country), prefix+"billing_address.country", "must be an ISO 3166-1 alpha-2 code, e.g. US")
	}
	return v.Err()
}

// NewPaymentMethod returns a payment method of account acct for a card the
// gateway described.
func NewPaymentMethod(acct *models.BillingAccount, in PaymentMethodInput, card Card, attached bool) *PaymentMethod {
	pm := &PaymentMethod{ID: models.NewID(models.PrefixPaymentMethod), AccountID: acct.ID, Type: in.Type, Token: strings.TrimSpace(in.CardToken),
		Brand: card.Brand, Last4: card.Last4, ExpMonth: card.ExpMonth, ExpYear: card.ExpYear, Attached: attached}
	pm.OrganizationID, pm.Environment = acct.OrganizationID, acct.Environment
	if in.BillingAddress != nil {
		pm.BillingAddress = *in.BillingAddress
	}
	return pm
}

// SavePaymentMethod stores pm in the tenant of its account.
func (s *Store) SavePaymentMethod(ctx context.Context, pm *PaymentMethod) error {
	return models.DBErr(s.In(ctx, models.TenantScope(pm.OrganizationID, pm.Environment)).Create(pm).Error)
}

// ListPaymentMethods returns the attached payment methods of an account
// visible to p, oldest first. Errors: NOT_FOUND (account).
func (s *Store) ListPaymentMethods(ctx context.Context, p *models.Principal, accountID string) ([]PaymentMethod, error) {
	acct, err := s.GetAccount(ctx, p, accountID)
	if err != nil {
		return nil, err
	}
	return s.attachedMethods(ctx, models.TenantScope(acct.OrganizationID, acct.Environment), acct.ID)
}

func (s *Store) attachedMethods(ctx context.Context, scope models.Scope, accountID string) ([]PaymentMethod, error) {
	out := []PaymentMethod{}
	err := s.In(ctx, scope).Where("account_id = ? AND attached = ? AND removed_at IS NULL", accountID, true).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// PaymentMethodIn returns a payment method of account accountID that has
// not been removed. Errors: NOT_FOUND.
func (s *Store) PaymentMethodIn(ctx context.Context, scope models.Scope, accountID, id string) (*PaymentMethod, error) {
	var pm PaymentMethod
	err := s.In(ctx, scope).Where("id = ? AND account_id = ? AND removed_at IS NULL", id, accountID).Take(&pm).Error
	return &pm, models.NotFoundOr(err, "payment method")
}

// RemovePaymentMethod detaches a payment method from an account visible to
// p. The row is kept (payments name it) but can no longer be used. A method
// that auto-pay or an active subscription relies on cannot be removed.
// Errors: NOT_FOUND, INVALID_STATE_TRANSITION (details.used_by).
func (s *Store) RemovePaymentMethod(ctx context.Context, p *models.Principal, accountID, id string) error {
	acct, err := s.GetAccount(ctx, p, accountID)
	if err != nil {
		return err
	}
	scope := models.TenantScope(acct.OrganizationID, acct.Environment)
	return AsErrorOrNil(s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		var pm PaymentMethod
		if err := tx.Where("id = ? AND account_id = ? AND attached = ? AND removed_at IS NULL", id, acct.ID, true).Take(&pm).Error; err != nil {
			return models.NotFoundOr(err, "payment method")
		}
		var used []string
		if acct.PaymentMethodID == id && acct.AutoPay {
			used = append(used, "billing account auto_pay")
		}
		var subs []Subscription
		if err := tx.Where("payment_method_id = ? AND status IN ?", id, []SubscriptionStatus{SubscriptionPending, SubscriptionActive}).Find(&subs).Error; err != nil {
			return models.DBErr(err)
		}
		for _, sub := range subs {
			used = append(used, "subscription "+sub.ID)
		}
		if len(used) > 0 {
			return models.Errorf(models.CodeInvalidStateTransition, "payment method %s is in use: %s; change that first", id, strings.Join(used, ", ")).WithDetail("used_by", used)
		}
		now := s.Now()
		if err := tx.Model(&PaymentMethod{}).Where("id = ?", id).Updates(map[string]any{"removed_at": now, "updated_at": now}).Error; err != nil {
			return models.DBErr(err)
		}
		if acct.PaymentMethodID == id {
			return models.DBErr(tx.Model(&models.BillingAccount{}).Where("id = ?", acct.ID).Update("payment_method_id", "").Error)
		}
		return nil
	}))
}

// AsErrorOrNil returns nil for nil and err as *Error otherwise.
func AsErrorOrNil(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// ResolvePaymentMethodID checks that id names a usable payment method of
// the account. Errors: VALIDATION_ERROR on field.
func (s *Store) ResolvePaymentMethodID(ctx context.Context, scope models.Scope, accountID, id, field string) (*PaymentMethod, error) {
	if !models.HasPrefix(id, models.PrefixPaymentMethod) {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: "must be a payment method id (pm_...)"})
	}
	pm, err := s.PaymentMethodIn(ctx, scope, accountID, id)
	if models.ErrorCode(err) == models.CodeNotFound || (err == nil && !pm.Attached) {
		return nil, models.Invalid(models.FieldIssue{Field: field, Issue: fmt.Sprintf("no payment method %s on account %s", id, accountID)})
	}
	return pm, err
}

// AnyPaymentMethodIn returns a payment method in scope, attached or not,
// removed or not (to finish a payment that already names it).
// Errors: NOT_FOUND.
func (s *Store) AnyPaymentMethodIn(ctx context.Context, scope models.Scope, id string) (*PaymentMethod, error) {
	var pm PaymentMethod
	err := s.In(ctx, scope).Where("id = ?", id).Take(&pm).Error
	return &pm, models.NotFoundOr(err, "payment method")
}
