package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220001_tenancy_and_keys: organizations, users, billing
// accounts, API keys and idempotency records, as the first release had them.

// organizationV0001 is the organizations table as migration 0001 migrates it.
type organizationV0001 struct {
	ID         string `gorm:"primaryKey;size:40"`
	Name       string `gorm:"size:200;not null"`
	Plan       string `gorm:"size:20;not null"`
	CustomerID string `gorm:"size:40;uniqueIndex;not null"`
	Provider   bool   `gorm:"not null;default:false"`
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (organizationV0001) TableName() string { return "organizations" }

// userV0001 is the users table as migration 0001 migrates it.
type userV0001 struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Email          string `gorm:"size:320;not null;uniqueIndex"`
	Name           string `gorm:"size:200;not null"`
	Role           string `gorm:"size:16;not null"`
	PasswordHash   string `gorm:"size:100"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (userV0001) TableName() string { return "users" }

// billingAccountV0001 is the billing_accounts table as migration 0001 migrates it.
type billingAccountV0001 struct {
	ID              string `gorm:"primaryKey;size:40"`
	OrganizationID  string `gorm:"size:40;not null;index"`
	Environment     string `gorm:"size:8;not null;index"`
	Name            string `gorm:"size:200;not null"`
	Currency        string `gorm:"size:3;not null"`
	BillingEmail    string `gorm:"size:320;not null"`
	BillingCycle    string `gorm:"size:20;not null"`
	AutoPay         bool   `gorm:"not null;default:false"`
	PaymentMethodID string `gorm:"size:40"`
	InvoiceDelivery string `gorm:"size:20;not null"`
	Balance         int64  `gorm:"not null;default:0"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (billingAccountV0001) TableName() string { return "billing_accounts" }

// apiKeyV0001 is the api_keys table as migration 0001 migrates it.
type apiKeyV0001 struct {
	ID                string `gorm:"primaryKey;size:40"`
	OrganizationID    string `gorm:"size:40;not null;index"`
	Environment       string `gorm:"size:8;not null;index"`
	Name              string `gorm:"size:200;not null"`
	Description       string `gorm:"size:10000"`
	DisplayPrefix     string `gorm:"size:20;not null"`
	Hash              string `gorm:"size:64;not null;uniqueIndex"`
	Role              string `gorm:"size:16;not null"`
	Permissions       string `gorm:"type:text;not null"`
	RequestsPerMinute int    `gorm:"not null;default:0"`
	BurstLimit        int    `gorm:"not null;default:0"`
	IPAllowList       string `gorm:"type:text"`
	SigningSecret     string `gorm:"size:200"`
	ExpiresAt         *time.Time
	RevokedAt         *time.Time
	LastUsedAt        *time.Time
	UsageCount        int64  `gorm:"not null;default:0"`
	CreatedBy         string `gorm:"size:40"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func (apiKeyV0001) TableName() string { return "api_keys" }

// idempotencyRecordV0001 is the idempotency_records table as migration 0001 migrates it.
type idempotencyRecordV0001 struct {
	ScopeKey    string `gorm:"primaryKey;size:64"`
	RequestHash string `gorm:"size:64;not null"`
	Done        bool   `gorm:"not null;default:false"`
	Status      int
	ContentType string `gorm:"size:100"`
	Location    string `gorm:"size:2000"`
	Body        []byte
	LockedUntil time.Time
	ExpiresAt   time.Time `gorm:"index"`
	CreatedAt   time.Time
}

func (idempotencyRecordV0001) TableName() string { return "idempotency_records" }

// migrateTenancyAndKeys creates the first tables.
func migrateTenancyAndKeys(tx *gorm.DB) error {
	return tx.AutoMigrate(&organizationV0001{}, &userV0001{}, &billingAccountV0001{}, &apiKeyV0001{}, &idempotencyRecordV0001{})
}

// rollbackTenancyAndKeys drops them.
func rollbackTenancyAndKeys(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&idempotencyRecordV0001{}, &apiKeyV0001{}, &billingAccountV0001{}, &userV0001{}, &organizationV0001{})
}
