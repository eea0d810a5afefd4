package models

import (
	"net/mail"
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
	// Balance is not maintained in the row: the store fills it with what
	// the account's open invoices still ask for (AccountBalances).
	Balance     Money  `gorm:"not null;default:0"`
	ContactName string `gorm:"size:200"`
	TaxRateBP   int    `gorm:"not null;default:0"` // tax on invoices, in basis points (825 = 8.25%)
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// BillingCycles are the billing cycles accepted in preferences and quotes.
var BillingCycles = []string{"monthly", "quarterly", "annual"}

// ValidEmail reports whether s is a plain e-mail address (no display name)
// of at most 320 characters.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 320
}
