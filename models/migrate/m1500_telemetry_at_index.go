package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611261500_telemetry_at_index: an index on telemetry_samples(at).
// The analytics usage and performance answers (and the fleet's telemetry
// summary) read the samples of a period of one organization, or of all of
// them, without naming services; their only index was (service_id, at), so
// a period of 30 days read the organization's whole history: with a year
// of hourly samples for 1,000 services the last 30 days cost as much as the
// whole year (docs/performance.md, Analytics usage over a year). With the
// index the cost follows the period's samples.

// telemetrySampleV1500 holds the index migration 1500 adds.
type telemetrySampleV1500 struct {
	At time.Time `gorm:"not null;index:idx_telemetry_at"`
}

func (telemetrySampleV1500) TableName() string { return "telemetry_samples" }

// telemetryAtIndex is the index of telemetrySampleV1500.
const telemetryAtIndex = "idx_telemetry_at"

// migrateTelemetryAtIndex creates the index.
func migrateTelemetryAtIndex(tx *gorm.DB) error {
	if tx.Migrator().HasIndex(&telemetrySampleV1500{}, telemetryAtIndex) {
		return nil
	}
	return tx.Migrator().CreateIndex(&telemetrySampleV1500{}, telemetryAtIndex)
}

// rollbackTelemetryAtIndex drops the index.
func rollbackTelemetryAtIndex(tx *gorm.DB) error {
	if !tx.Migrator().HasIndex(&telemetrySampleV1500{}, telemetryAtIndex) {
		return nil
	}
	return tx.Migrator().DropIndex(&telemetrySampleV1500{}, telemetryAtIndex)
}
