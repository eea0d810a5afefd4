package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611261900_allocation_active_indexes: two partial indexes over
// the active inventory allocations (released_at IS NULL). Reserving capacity
// sums a pool's active allocations (kind, location, service type), and
// assigning an IP block, a VLAN or a number reads the resource indexes in
// use (of a kind, at a location); both scanned the whole
// table, released allocations included, so every reservation cost as much
// as the inventory's history: a bulk provisioning of 1,000 items made each
// item's reservation slower than the one before (docs/performance.md, Bulk
// provisioning). The indexes hold only active rows, lead with the columns
// the two queries filter on and hold every column they read (the tenant,
// the amount, the index), so a query reads the active allocations of its
// pool or kind from the index alone, never the table. On PostgreSQL the index is built
// with a plain CREATE INDEX (migrations run in a transaction): it locks
// the table against writes while it builds, which takes a moment on a
// large inventory; run the migration before the new version serves.

// inventoryAllocationV1900 holds the indexes migration 1900 adds.
type inventoryAllocationV1900 struct {
	Kind           string     `gorm:"size:20;not null;index:idx_allocation_active_pool,priority:1,where:released_at IS NULL;index:idx_allocation_active_index,priority:1,where:released_at IS NULL"`
	LocationID     string     `gorm:"size:60;index:idx_allocation_active_pool,priority:2,where:released_at IS NULL;index:idx_allocation_active_index,priority:4,where:released_at IS NULL"`
	ServiceType    string     `gorm:"size:40;index:idx_allocation_active_pool,priority:3,where:released_at IS NULL"`
	OrganizationID string     `gorm:"size:40;not null;index:idx_allocation_active_pool,priority:4,where:released_at IS NULL;index:idx_allocation_active_index,priority:3,where:released_at IS NULL"`
	Environment    string     `gorm:"size:8;not null;index:idx_allocation_active_pool,priority:5,where:released_at IS NULL;index:idx_allocation_active_index,priority:2,where:released_at IS NULL"`
	AmountMbps     int        `gorm:"not null;default:0;index:idx_allocation_active_pool,priority:6,where:released_at IS NULL"`
	ResourceIndex  int        `gorm:"not null;default:0;index:idx_allocation_active_index,priority:5,where:released_at IS NULL"`
	ReleasedAt     *time.Time `gorm:"index:idx_allocation_active_pool,priority:7,where:released_at IS NULL;index:idx_allocation_active_index,priority:6,where:released_at IS NULL"`
}

func (inventoryAllocationV1900) TableName() string { return "inventory_allocations" }

// allocationIndexesV1900 returns the indexes of inventoryAllocationV1900.
func allocationIndexesV1900() []string {
	return []string{"idx_allocation_active_pool", "idx_allocation_active_index"}
}

// migrateAllocationActiveIndexes creates the indexes.
func migrateAllocationActiveIndexes(tx *gorm.DB) error {
	for _, name := range allocationIndexesV1900() {
		if tx.Migrator().HasIndex(&inventoryAllocationV1900{}, name) {
			continue
		}
		if err := tx.Migrator().CreateIndex(&inventoryAllocationV1900{}, name); err != nil {
			return err
		}
	}
	return nil
}

// rollbackAllocationActiveIndexes drops the indexes.
func rollbackAllocationActiveIndexes(tx *gorm.DB) error {
	for _, name := range allocationIndexesV1900() {
		if !tx.Migrator().HasIndex(&inventoryAllocationV1900{}, name) {
			continue
		}
		if err := tx.Migrator().DropIndex(&inventoryAllocationV1900{}, name); err != nil {
			return err
		}
	}
	return nil
}
