package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611260040_security_review: users.permissions (what a user's
// sessions may carry below its role), mfa_phones.pending_number (a number
// awaiting confirmation), orchestration_definitions.creator_permissions
// (what its creator held); invoice disputes.

// userV0040 holds the column migration 0040 adds to users.
type userV0040 struct {
	Permissions string `gorm:"type:text"`
}

func (userV0040) TableName() string { return "users" }

// mfaPhoneV0040 holds the column migration 0040 adds to mfa_phones.
type mfaPhoneV0040 struct {
	PendingNumber string `gorm:"size:20"`
}

func (mfaPhoneV0040) TableName() string { return "mfa_phones" }

// orchestrationDefinitionV0040 holds the column migration 0040 adds to
// orchestration_definitions.
type orchestrationDefinitionV0040 struct {
	CreatorPermissions string `gorm:"type:text"`
}

func (orchestrationDefinitionV0040) TableName() string { return "orchestration_definitions" }

// invoiceDisputeV0040 is the invoice_disputes table as migration 0040 migrates it.
type invoiceDisputeV0040 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	InvoiceID      string    `gorm:"size:40;not null;index"`
	Reason         string    `gorm:"size:40;not null"`
	Description    string    `gorm:"size:4000"`
	Status         string    `gorm:"size:16;not null;index"`
	Resolution     string    `gorm:"size:1000"`
	CreatedBy      string    `gorm:"size:40;not null"`
	CreatedAt      time.Time `gorm:"not null"`
	UpdatedAt      time.Time `gorm:"not null"`
	ResolvedAt     *time.Time
}

func (invoiceDisputeV0040) TableName() string { return "invoice_disputes" }

// migrateSecurityReview adds the columns and creates the disputes table.
func migrateSecurityReview(tx *gorm.DB) error {
	if err := addColumns(tx, &userV0040{}, "Permissions"); err != nil {
		return err
	}
	if err := addColumns(tx, &mfaPhoneV0040{}, "PendingNumber"); err != nil {
		return err
	}
	if err := addColumns(tx, &orchestrationDefinitionV0040{}, "CreatorPermissions"); err != nil {
		return err
	}
	return tx.AutoMigrate(&invoiceDisputeV0040{})
}

// rollbackSecurityReview drops the disputes table and the columns.
func rollbackSecurityReview(tx *gorm.DB) error {
	if err := tx.Migrator().DropTable(&invoiceDisputeV0040{}); err != nil {
		return err
	}
	if err := dropColumns(tx, &orchestrationDefinitionV0040{}, "CreatorPermissions"); err != nil {
		return err
	}
	if err := dropColumns(tx, &mfaPhoneV0040{}, "PendingNumber"); err != nil {
		return err
	}
	return dropColumns(tx, &userV0040{}, "Permissions")
}
