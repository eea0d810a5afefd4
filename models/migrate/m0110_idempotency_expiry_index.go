package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611260110_idempotency_expiry_index: on SQLite, migration
// 202611260020 dropped the clear body column by rebuilding the table, and
// the rebuilt table lost its index on expires_at (the expiry sweep's
// index). This migration gives it back wherever it is missing; on
// PostgreSQL and on databases created after 202611260020 it does nothing.

// idempotencyRecordV0110 holds the index migration 0110 restores.
type idempotencyRecordV0110 struct {
	ExpiresAt time.Time `gorm:"index"`
}

func (idempotencyRecordV0110) TableName() string { return "idempotency_records" }

// idempotencyExpiryIndex is the index of idempotencyRecordV0110.
const idempotencyExpiryIndex = "idx_idempotency_records_expires_at"

// migrateIdempotencyExpiryIndex creates the index if it is missing.
func migrateIdempotencyExpiryIndex(tx *gorm.DB) error {
	if tx.Migrator().HasIndex(&idempotencyRecordV0110{}, idempotencyExpiryIndex) {
		return nil
	}
	return tx.Migrator().CreateIndex(&idempotencyRecordV0110{}, idempotencyExpiryIndex)
}

// rollbackIdempotencyExpiryIndex does nothing: the index belongs to the
// table since migration 202611220001.
func rollbackIdempotencyExpiryIndex(*gorm.DB) error { return nil }
