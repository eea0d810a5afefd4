package migrate

import (
	"time"

	"gorm.io/gorm"
)

// slaCreditV0160 is the sla_credits table as migration 202611260160 creates
// it: a service credit earned by a breached support SLA target (slacr_), a
// percentage of the service's monthly price, pending until invoices of the
// service have taken it (applied_amount), then applied with the invoice
// that took its last part. source_key is unique: issuing is idempotent.
type slaCreditV0160 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	ServiceID      string    `gorm:"size:40;not null;index"`
	TicketID       string    `gorm:"size:40;not null;index"`
	SourceKey      string    `gorm:"size:200;not null;uniqueIndex"`
	PercentBP      int       `gorm:"not null"`
	Amount         int64     `gorm:"not null"`
	AppliedAmount  int64     `gorm:"not null;default:0"`
	Currency       string    `gorm:"size:3;not null"`
	Reason         string    `gorm:"type:text;not null"`
	Status         string    `gorm:"size:16;not null;index"`
	InvoiceID      string    `gorm:"size:40;index"`
	CreatedAt      time.Time `gorm:"not null"`
	AppliedAt      *time.Time
}

func (slaCreditV0160) TableName() string { return "sla_credits" }

// migrateSLACreditsV0160 creates the sla_credits table.
func migrateSLACreditsV0160(tx *gorm.DB) error {
	return tx.AutoMigrate(&slaCreditV0160{})
}

// rollbackSLACreditsV0160 drops the sla_credits table.
func rollbackSLACreditsV0160(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&slaCreditV0160{})
}
