package migrate

import (
	"time"

	"gorm.io/gorm"
)

// analyticsReportDefinitionV1800 is the analytics_report_definitions table
// as migration 202611261800 creates it: a saved report builder definition
// (rdef_) of an organization and environment, its builder query and
// schedule kept as JSON.
type analyticsReportDefinitionV1800 struct {
	ID                 string `gorm:"primaryKey;size:40"`
	OrganizationID     string `gorm:"size:40;not null;index"`
	Environment        string `gorm:"size:8;not null;index"`
	Name               string `gorm:"size:200;not null"`
	Description        string `gorm:"size:2000;not null;default:''"`
	Query              string `gorm:"type:text;not null"`
	Format             string `gorm:"size:8;not null"`
	DeliveryMethod     string `gorm:"size:16;not null"`
	NotificationEmail  string `gorm:"size:254;not null;default:''"`
	ReadOrganizationID string `gorm:"size:40;not null;default:''"`
	AllOrganizations   bool   `gorm:"not null;default:false"`
	Schedule           string `gorm:"type:text"`
	ScheduleID         string `gorm:"size:120;not null;default:''"`
	LastRunID          string `gorm:"size:40;not null;default:''"`
	LastRunAt          *time.Time
	CreatedBy          string    `gorm:"size:40;not null;default:''"`
	CreatedAt          time.Time `gorm:"not null;index"`
	UpdatedAt          time.Time
}

func (analyticsReportDefinitionV1800) TableName() string { return "analytics_report_definitions" }

// migrateAnalyticsReportsV1800 creates the saved report definitions table.
func migrateAnalyticsReportsV1800(tx *gorm.DB) error {
	return tx.AutoMigrate(&analyticsReportDefinitionV1800{})
}

// rollbackAnalyticsReportsV1800 drops it.
func rollbackAnalyticsReportsV1800(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&analyticsReportDefinitionV1800{})
}
