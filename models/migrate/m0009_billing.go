package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220009_billing: the billing accounts' contact name and tax
// rate; payment methods, invoice numbering, invoices and their lines,
// payments, subscriptions, usage records, budgets and budget alerts.

// billingAccountV0009 holds the columns migration 0009 adds to
// billing_accounts.
type billingAccountV0009 struct {
	ContactName string `gorm:"size:200"`
	TaxRateBP   int    `gorm:"not null;default:0"`
}

func (billingAccountV0009) TableName() string { return "billing_accounts" }

// paymentMethodV0009 is the payment_methods table as migration 0009 migrates it.
type paymentMethodV0009 struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	AccountID      string `gorm:"size:40;not null;index"`
	Type           string `gorm:"size:20;not null"`
	Token          string `gorm:"size:80;not null"`
	Brand          string `gorm:"size:20"`
	Last4          string `gorm:"size:4"`
	ExpMonth       int    `gorm:"not null;default:0"`
	ExpYear        int    `gorm:"not null;default:0"`
	BillingAddress string `gorm:"type:text"`
	Attached       bool   `gorm:"not null"`
	RemovedAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (paymentMethodV0009) TableName() string { return "payment_methods" }

// billingSequenceV0009 is the billing_sequences table as migration 0009 migrates it.
type billingSequenceV0009 struct {
	ID             string `gorm:"primaryKey;size:120"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	Value          int64  `gorm:"not null;default:0"`
}

func (billingSequenceV0009) TableName() string { return "billing_sequences" }

// invoiceV0009 is the invoices table as migration 0009 migrates it.
type invoiceV0009 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Environment    string     `gorm:"size:8;not null;index"`
	AccountID      string     `gorm:"size:40;not null;index"`
	Number         string     `gorm:"size:20;not null"`
	Status         string     `gorm:"size:20;not null;index"`
	Source         string     `gorm:"size:20;not null"`
	SubscriptionID string     `gorm:"size:40;uniqueIndex:idx_invoice_subscription_period,priority:1"`
	PeriodStart    *time.Time `gorm:"uniqueIndex:idx_invoice_subscription_period,priority:2"`
	PeriodEnd      *time.Time
	Currency       string    `gorm:"size:3;not null"`
	Subtotal       int64     `gorm:"not null"`
	Tax            int64     `gorm:"not null;default:0"`
	TaxRateBP      int       `gorm:"not null;default:0"`
	Total          int64     `gorm:"not null"`
	AmountPaid     int64     `gorm:"not null;default:0"`
	IssuedAt       time.Time `gorm:"not null;index"`
	DueDate        time.Time `gorm:"not null"`
	PaidAt         *time.Time
	OverdueAt      *time.Time
	CancelledAt    *time.Time
	Notes          string `gorm:"size:2000"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (invoiceV0009) TableName() string { return "invoices" }

// invoiceLineV0009 is the invoice_lines table as migration 0009 migrates it.
type invoiceLineV0009 struct {
	ID             uint64 `gorm:"primaryKey;autoIncrement"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	InvoiceID      string `gorm:"size:40;not null;index"`
	Position       int    `gorm:"not null"`
	Kind           string `gorm:"size:20;not null"`
	ServiceID      string `gorm:"size:40;index"`
	Category       string `gorm:"size:40;not null"`
	Description    string `gorm:"size:500;not null"`
	Quantity       int64  `gorm:"not null"`
	UnitPrice      int64  `gorm:"not null"`
	Amount         int64  `gorm:"not null"`
	PeriodStart    *time.Time
	PeriodEnd      *time.Time
}

func (invoiceLineV0009) TableName() string { return "invoice_lines" }

// paymentV0009 is the payments table as migration 0009 migrates it.
type paymentV0009 struct {
	ID              string `gorm:"primaryKey;size:40"`
	OrganizationID  string `gorm:"size:40;not null;index"`
	Environment     string `gorm:"size:8;not null;index"`
	InvoiceID       string `gorm:"size:40;not null;index"`
	AccountID       string `gorm:"size:40;not null;index"`
	Amount          int64  `gorm:"not null"`
	Currency        string `gorm:"size:3;not null"`
	Status          string `gorm:"size:20;not null;index"`
	Source          string `gorm:"size:20;not null"`
	PaymentMethodID string `gorm:"size:40;not null"`
	MethodType      string `gorm:"size:20;not null"`
	CardBrand       string `gorm:"size:20"`
	CardLast4       string `gorm:"size:4"`
	TransactionID   string `gorm:"size:80"`
	FailureCode     string `gorm:"size:40"`
	FailureMessage  string `gorm:"size:300"`
	Details         string `gorm:"type:text"`
	ProcessedAt     *time.Time
	CreatedAt       time.Time `gorm:"index"`
	UpdatedAt       time.Time
}

func (paymentV0009) TableName() string { return "payments" }

// subscriptionV0009 is the subscriptions table as migration 0009 migrates it.
type subscriptionV0009 struct {
	ID                 string    `gorm:"primaryKey;size:40"`
	OrganizationID     string    `gorm:"size:40;not null;index"`
	Environment        string    `gorm:"size:8;not null;index"`
	AccountID          string    `gorm:"size:40;not null;index"`
	ServiceID          string    `gorm:"size:40;not null;index;uniqueIndex:idx_subscription_open_service,where:status <> 'cancelled'"`
	Status             string    `gorm:"size:20;not null;index"`
	BillingCycle       string    `gorm:"size:20;not null"`
	PendingCycle       string    `gorm:"size:20"`
	AutoRenew          bool      `gorm:"not null"`
	Quantity           int       `gorm:"not null"`
	UnitPrice          int64     `gorm:"not null"`
	Currency           string    `gorm:"size:3;not null"`
	Description        string    `gorm:"size:300;not null"`
	Category           string    `gorm:"size:40;not null"`
	PaymentMethodID    string    `gorm:"size:40"`
	AnchorDay          int       `gorm:"not null"`
	StartDate          time.Time `gorm:"not null"`
	CurrentPeriodStart time.Time `gorm:"not null"`
	CurrentPeriodEnd   time.Time `gorm:"not null"`
	Segments           string    `gorm:"type:text"`
	CancelAt           *time.Time
	CancelledAt        *time.Time
	EndedReason        string `gorm:"size:40"`
	PeriodsBilled      int    `gorm:"not null;default:0"`
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

func (subscriptionV0009) TableName() string { return "subscriptions" }

// usageRecordV0009 is the usage_records table as migration 0009 migrates it.
type usageRecordV0009 struct {
	ID             uint64    `gorm:"primaryKey;autoIncrement"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	RecordKey      string    `gorm:"size:200;not null;uniqueIndex"`
	AccountID      string    `gorm:"size:40;index"`
	ServiceID      string    `gorm:"size:40;index"`
	SubscriptionID string    `gorm:"size:40"`
	ServiceType    string    `gorm:"size:40;not null"`
	Category       string    `gorm:"size:40;not null"`
	Metric         string    `gorm:"size:30;not null"`
	Quantity       float64   `gorm:"not null"`
	Unit           string    `gorm:"size:20;not null"`
	PeriodStart    time.Time `gorm:"not null;index"`
	PeriodEnd      time.Time `gorm:"not null"`
	Cost           int64     `gorm:"not null;default:0"`
	Currency       string    `gorm:"size:3;not null"`
	InvoiceID      string    `gorm:"size:40;not null;default:'';index"`
	CreatedAt      time.Time
}

func (usageRecordV0009) TableName() string { return "usage_records" }

// budgetV0009 is the budgets table as migration 0009 migrates it.
type budgetV0009 struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	AccountID      string `gorm:"size:40;not null;index"`
	Amount         int64  `gorm:"not null"`
	Currency       string `gorm:"size:3;not null"`
	Period         string `gorm:"size:20;not null"`
	Thresholds     string `gorm:"type:text"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (budgetV0009) TableName() string { return "budgets" }

// budgetAlertV0009 is the budget_alerts table as migration 0009 migrates it.
type budgetAlertV0009 struct {
	ID             uint64    `gorm:"primaryKey;autoIncrement"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	AlertKey       string    `gorm:"size:120;not null;uniqueIndex"`
	BudgetID       string    `gorm:"size:40;not null;index"`
	PeriodStart    time.Time `gorm:"not null"`
	Threshold      int       `gorm:"not null"`
	Spent          int64     `gorm:"not null"`
	EventID        string    `gorm:"size:40;not null"`
	CreatedAt      time.Time
}

func (budgetAlertV0009) TableName() string { return "budget_alerts" }

// billingTablesV0009 lists the tables migration 0009 creates, parents first.
func billingTablesV0009() []any {
	return []any{&paymentMethodV0009{}, &billingSequenceV0009{}, &invoiceV0009{}, &invoiceLineV0009{}, &paymentV0009{},
		&subscriptionV0009{}, &usageRecordV0009{}, &budgetV0009{}, &budgetAlertV0009{}}
}

// migrateBilling adds the billing accounts' columns and creates the billing
// tables.
func migrateBilling(tx *gorm.DB) error {
	if err := addColumns(tx, &billingAccountV0009{}, "ContactName", "TaxRateBP"); err != nil {
		return err
	}
	return tx.AutoMigrate(billingTablesV0009()...)
}

// rollbackBilling drops the billing tables and the added columns.
func rollbackBilling(tx *gorm.DB) error {
	if err := dropTables(tx, billingTablesV0009()); err != nil {
		return err
	}
	return dropColumns(tx, &billingAccountV0009{}, "ContactName", "TaxRateBP")
}
