package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220008_bulk_orchestration: bulk operation items, service
// changes and orchestration definitions.

// bulkItemV0008 is the bulk_items table as migration 0008 migrates it.
type bulkItemV0008 struct {
	OperationID    string `gorm:"primaryKey;size:64"`
	Position       int    `gorm:"primaryKey;autoIncrement:false"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	ServiceID      string `gorm:"size:40;not null;index"`
	ChildID        string `gorm:"size:64"`
	Spec           string `gorm:"type:text"`
	Order          string `gorm:"type:text"`
	Changes        string `gorm:"type:text"`
	Action         string `gorm:"size:20"`
	SourcePosition *int
	CreatedAt      time.Time
}

func (bulkItemV0008) TableName() string { return "bulk_items" }

// serviceChangeV0008 is the service_changes table as migration 0008 migrates it.
type serviceChangeV0008 struct {
	Key            string `gorm:"primaryKey;column:change_key;size:100"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	ServiceID      string `gorm:"size:40;not null;index"`
	OperationID    string `gorm:"size:64;not null;index"`
	Kind           string `gorm:"size:20;not null"`
	Before         string `gorm:"type:text"`
	After          string `gorm:"type:text"`
	AppliedAt      time.Time
	RevertedAt     *time.Time
}

func (serviceChangeV0008) TableName() string { return "service_changes" }

// orchestrationDefinitionV0008 is the orchestration_definitions table as migration 0008 migrates it.
type orchestrationDefinitionV0008 struct {
	ID             string `gorm:"primaryKey;size:64"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	Name           string `gorm:"size:200;not null"`
	Trigger        string `gorm:"size:80;not null"`
	EventType      string `gorm:"size:60;index"`
	Steps          string `gorm:"type:text"`
	Active         bool   `gorm:"not null;default:false;index"`
	Runs           int    `gorm:"not null;default:0"`
	CreatedBy      string `gorm:"size:40"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (orchestrationDefinitionV0008) TableName() string { return "orchestration_definitions" }

// migrateBulkOrchestration creates the bulk and orchestration tables.
func migrateBulkOrchestration(tx *gorm.DB) error {
	return tx.AutoMigrate(&bulkItemV0008{}, &serviceChangeV0008{}, &orchestrationDefinitionV0008{})
}

// rollbackBulkOrchestration drops them.
func rollbackBulkOrchestration(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&orchestrationDefinitionV0008{}, &serviceChangeV0008{}, &bulkItemV0008{})
}
