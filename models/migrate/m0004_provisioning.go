package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220004_provisioning: serviceable locations and their
// capacity, provisioning templates, inventory allocations, services,
// operations, telemetry and the event outbox.

// serviceableLocationV0004 is the serviceable_locations table as migration 0004 migrates it.
type serviceableLocationV0004 struct {
	ID          string `gorm:"primaryKey;size:60"`
	Address     string `gorm:"size:200;not null"`
	City        string `gorm:"size:100;not null"`
	State       string `gorm:"size:2;not null"`
	Zip         string `gorm:"size:10;not null;index"`
	MatchKey    string `gorm:"size:400;not null;uniqueIndex"`
	SandboxOnly bool   `gorm:"not null;default:false"`
	FailAtStep  string `gorm:"size:40"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (serviceableLocationV0004) TableName() string { return "serviceable_locations" }

// locationCapacityV0004 is the location_capacities table as migration 0004 migrates it.
type locationCapacityV0004 struct {
	LocationID    string `gorm:"primaryKey;size:60"`
	ServiceType   string `gorm:"primaryKey;size:40"`
	Environment   string `gorm:"primaryKey;size:8"`
	CapacityMbps  int    `gorm:"not null"`
	AllocatedMbps int    `gorm:"not null;default:0"`
	UpdatedAt     time.Time
}

func (locationCapacityV0004) TableName() string { return "location_capacities" }

// provisioningTemplateV0004 is the provisioning_templates table as migration 0004 migrates it.
type provisioningTemplateV0004 struct {
	ID               string `gorm:"primaryKey;size:60"`
	Name             string `gorm:"size:200;not null"`
	Description      string `gorm:"size:2000"`
	CatalogServiceID string `gorm:"size:60;not null;index"`
	ServiceType      string `gorm:"size:40;not null"`
	DefaultBandwidth string `gorm:"size:20;not null"`
	DefaultSLA       string `gorm:"size:20;not null"`
	Redundancy       string `gorm:"size:20;not null"`
	Monitoring       string `gorm:"size:20;not null"`
	SandboxOnly      bool   `gorm:"not null;default:false"`
	FailAtStep       string `gorm:"size:40"`
	Position         int    `gorm:"not null"`
}

func (provisioningTemplateV0004) TableName() string { return "provisioning_templates" }

// inventoryAllocationV0004 is the inventory_allocations table as migration 0004 migrates it.
type inventoryAllocationV0004 struct {
	ID             uint64  `gorm:"primaryKey;autoIncrement"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	Environment    string  `gorm:"size:8;not null;index"`
	OperationID    string  `gorm:"size:64;not null;uniqueIndex:idx_allocation_op_kind"`
	Kind           string  `gorm:"size:20;not null;uniqueIndex:idx_allocation_op_kind"`
	ServiceID      string  `gorm:"size:40;not null;index"`
	LocationID     string  `gorm:"size:60"`
	ServiceType    string  `gorm:"size:40"`
	AmountMbps     int     `gorm:"not null;default:0"`
	ResourceKey    *string `gorm:"size:160;uniqueIndex:idx_allocation_active_resource,where:released_at IS NULL"`
	ResourceIndex  int     `gorm:"not null;default:0"`
	CIDR           string  `gorm:"size:43"`
	Gateway        string  `gorm:"size:39"`
	VLANID         int     `gorm:"not null;default:0"`
	ReleasedAt     *time.Time
	CreatedAt      time.Time
}

func (inventoryAllocationV0004) TableName() string { return "inventory_allocations" }

// serviceV0004 is the services table as migration 0004 migrates it.
type serviceV0004 struct {
	ID               string `gorm:"primaryKey;size:40"`
	OrganizationID   string `gorm:"size:40;not null;index"`
	Environment      string `gorm:"size:8;not null;index"`
	AccountID        string `gorm:"size:40;not null;index"`
	Name             string `gorm:"size:200;not null"`
	Kind             string `gorm:"size:40;not null"`
	ServiceType      string `gorm:"size:40;not null"`
	CatalogServiceID string `gorm:"size:60;not null"`
	TemplateID       string `gorm:"size:60"`
	Status           string `gorm:"size:20;not null;index"`
	Bandwidth        string `gorm:"size:20;not null"`
	BandwidthMbps    int    `gorm:"not null"`
	SLA              string `gorm:"size:20;not null"`
	BillingCycle     string `gorm:"size:20;not null"`
	LocationID       string `gorm:"size:60;not null;index"`
	Address          string `gorm:"size:200;not null"`
	City             string `gorm:"size:100;not null"`
	State            string `gorm:"size:2;not null"`
	Zip              string `gorm:"size:10;not null"`
	Redundancy       string `gorm:"size:20"`
	Monitoring       string `gorm:"size:20"`
	TechnicalContact string `gorm:"size:320"`
	BillingContact   string `gorm:"size:320"`
	IPBlock          string `gorm:"size:43"`
	Gateway          string `gorm:"size:39"`
	VLANID           int    `gorm:"not null;default:0"`
	CircuitID        string `gorm:"size:60"`
	OperationID      string `gorm:"size:64;not null;index"`
	ActivatedAt      *time.Time
	StatusChangedAt  time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

func (serviceV0004) TableName() string { return "services" }

// operationV0004 is the operations table as migration 0004 migrates it.
type operationV0004 struct {
	ID             string `gorm:"primaryKey;size:64"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	Type           string `gorm:"size:40;not null;index"`
	Status         string `gorm:"size:20;not null;index"`
	ResourceID     string `gorm:"size:64;index"`
	Steps          string `gorm:"type:text"`
	Items          string `gorm:"type:text"`
	Result         string `gorm:"type:text"`
	Error          string `gorm:"type:text"`
	Input          string `gorm:"type:text"`
	RunID          string `gorm:"size:64"`
	CreatedBy      string `gorm:"size:40"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     *time.Time
}

func (operationV0004) TableName() string { return "operations" }

// telemetrySampleV0004 is the telemetry_samples table as migration 0004 migrates it.
type telemetrySampleV0004 struct {
	ID             uint64    `gorm:"primaryKey;autoIncrement"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	ServiceID      string    `gorm:"size:40;not null;index:idx_telemetry_service_at,priority:1"`
	At             time.Time `gorm:"not null;index:idx_telemetry_service_at,priority:2"`
	Up             bool      `gorm:"not null"`
	LatencyMs      float64   `gorm:"not null"`
	JitterMs       float64   `gorm:"not null"`
	PacketLossPct  float64   `gorm:"not null"`
	UtilizationPct float64   `gorm:"not null"`
	SecurityAlerts int       `gorm:"not null;default:0"`
}

func (telemetrySampleV0004) TableName() string { return "telemetry_samples" }

// eventV0004 is the events table as migration 0004 migrates it.
type eventV0004 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Environment    string     `gorm:"size:8;not null;index"`
	Type           string     `gorm:"size:60;not null;index"`
	ResourceID     string     `gorm:"size:64;not null;index"`
	Data           string     `gorm:"type:text"`
	CreatedAt      time.Time  `gorm:"not null;index"`
	DispatchedAt   *time.Time `gorm:"index"`
}

func (eventV0004) TableName() string { return "events" }

// migrateProvisioning creates the provisioning tables.
func migrateProvisioning(tx *gorm.DB) error {
	return tx.AutoMigrate(&serviceableLocationV0004{}, &locationCapacityV0004{}, &provisioningTemplateV0004{}, &inventoryAllocationV0004{},
		&serviceV0004{}, &operationV0004{}, &telemetrySampleV0004{}, &eventV0004{})
}

// rollbackProvisioning drops them.
func rollbackProvisioning(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&eventV0004{}, &telemetrySampleV0004{}, &operationV0004{}, &serviceV0004{}, &inventoryAllocationV0004{},
		&provisioningTemplateV0004{}, &locationCapacityV0004{}, &serviceableLocationV0004{})
}
