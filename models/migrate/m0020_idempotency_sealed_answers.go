package migrate

import (
	"time"

	"github.com/telcoplatform/platform/models"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Migration 202611260020_idempotency_sealed_answers: stored idempotent
// answers are sealed (body_sealed replaces the clear body).

// idempotencyRecordV0020 is the idempotency_records table as migration 0020 migrates it.
type idempotencyRecordV0020 struct {
	ScopeKey    string `gorm:"primaryKey;size:64"`
	RequestHash string `gorm:"size:64;not null"`
	Done        bool   `gorm:"not null;default:false"`
	Status      int
	ContentType string `gorm:"size:100"`
	Location    string `gorm:"size:2000"`
	BodySealed  string `gorm:"type:text"`
	LockedUntil time.Time
	ExpiresAt   time.Time `gorm:"index"`
	CreatedAt   time.Time
}

func (idempotencyRecordV0020) TableName() string { return "idempotency_records" }

// migrateSealedIdempotency replaces the clear body of stored idempotent
// answers by a sealed one. Stored answers are dropped: their keys were
// scoped without the credential, and their bodies may hold secrets in clear.
func migrateSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Exec("DELETE FROM idempotency_records").Error; err != nil {
		return err
	}
	if err := tx.AutoMigrate(&idempotencyRecordV0020{}); err != nil {
		return err
	}
	if tx.Migrator().HasColumn(&idempotencyRecordV0020{}, "body") {
		return tx.Migrator().DropColumn(&idempotencyRecordV0020{}, "body")
	}
	return nil
}

// rollbackSealedIdempotency restores the clear body column (empty: stored
// answers are dropped again).
func rollbackSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Exec("DELETE FROM idempotency_records").Error; err != nil {
		return err
	}
	blob := "BYTEA"
	if models.IsSQLite(tx) {
		blob = "BLOB"
	}
	if err := tx.Exec("ALTER TABLE ? ADD COLUMN ? "+blob, clause.Table{Name: "idempotency_records"}, clause.Column{Name: "body"}).Error; err != nil {
		return err
	}
	return dropColumns(tx, &idempotencyRecordV0020{}, "BodySealed")
}
