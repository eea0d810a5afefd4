package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220003_rate_limit_suspensions: credentials suspended for
// exceeding their rate limits.

// rateLimitSuspensionV0003 is the rate_limit_suspensions table as migration 0003 migrates it.
type rateLimitSuspensionV0003 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	CredentialID   string    `gorm:"size:40;not null;index"`
	ClientIP       string    `gorm:"size:64"`
	Path           string    `gorm:"size:2000"`
	SuspendedUntil time.Time `gorm:"not null"`
	CreatedAt      time.Time `gorm:"index"`
}

func (rateLimitSuspensionV0003) TableName() string { return "rate_limit_suspensions" }

// migrateRateLimitSuspensions creates the suspensions table.
func migrateRateLimitSuspensions(tx *gorm.DB) error {
	return tx.AutoMigrate(&rateLimitSuspensionV0003{})
}

// rollbackRateLimitSuspensions drops it.
func rollbackRateLimitSuspensions(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&rateLimitSuspensionV0003{})
}
