package migrate

import (
	"gorm.io/gorm"
)

// Migration 202611220002_catalog: the service catalog.

// catalogCategoryV0002 is the catalog_categories table as migration 0002 migrates it.
type catalogCategoryV0002 struct {
	Name        string `gorm:"primaryKey;size:40"`
	Title       string `gorm:"size:200;not null"`
	Description string `gorm:"size:2000"`
	Position    int    `gorm:"not null"`
}

func (catalogCategoryV0002) TableName() string { return "catalog_categories" }

// catalogServiceV0002 is the catalog_services table as migration 0002 migrates it.
type catalogServiceV0002 struct {
	ID               string `gorm:"primaryKey;size:60"`
	Category         string `gorm:"size:40;not null;index"`
	Kind             string `gorm:"size:40;not null"`
	Name             string `gorm:"size:200;not null"`
	Description      string `gorm:"size:2000"`
	BandwidthOptions string `gorm:"type:text"`
	SLAOptions       string `gorm:"type:text"`
	StartingPrice    int64  `gorm:"not null"`
	Unit             string `gorm:"size:40;not null"`
	Currency         string `gorm:"size:3;not null"`
	Position         int    `gorm:"not null"`
}

func (catalogServiceV0002) TableName() string { return "catalog_services" }

// migrateCatalog creates the catalog tables.
func migrateCatalog(tx *gorm.DB) error {
	return tx.AutoMigrate(&catalogCategoryV0002{}, &catalogServiceV0002{})
}

// rollbackCatalog drops them.
func rollbackCatalog(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&catalogServiceV0002{}, &catalogCategoryV0002{})
}
