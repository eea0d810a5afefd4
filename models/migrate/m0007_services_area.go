package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220007_services_area: services gain their specification,
// charges, pending changes, maintenance and decommissioning; allocations are
// keyed by operation, kind and slot (one per site, number...); telemetry
// gains throughput, data and call metrics; number blocks, quotes, the
// contact notification outbox, data migrations and service incidents.

// serviceV0007 is the services table as migration 0007 migrates it.
type serviceV0007 struct {
	ID                  string `gorm:"primaryKey;size:40"`
	OrganizationID      string `gorm:"size:40;not null;index"`
	Environment         string `gorm:"size:8;not null;index"`
	AccountID           string `gorm:"size:40;not null;index"`
	Name                string `gorm:"size:200;not null"`
	Kind                string `gorm:"size:40;not null"`
	ServiceType         string `gorm:"size:40;not null"`
	CatalogServiceID    string `gorm:"size:60;not null"`
	TemplateID          string `gorm:"size:60"`
	Status              string `gorm:"size:20;not null;index"`
	Bandwidth           string `gorm:"size:20;not null"`
	BandwidthMbps       int    `gorm:"not null"`
	SLA                 string `gorm:"size:20;not null"`
	BillingCycle        string `gorm:"size:20;not null"`
	LocationID          string `gorm:"size:60;not null;index"`
	Address             string `gorm:"size:200;not null"`
	City                string `gorm:"size:100;not null"`
	State               string `gorm:"size:2;not null"`
	Zip                 string `gorm:"size:10;not null"`
	Redundancy          string `gorm:"size:20"`
	Monitoring          string `gorm:"size:20"`
	TechnicalContact    string `gorm:"size:320"`
	BillingContact      string `gorm:"size:320"`
	IPBlock             string `gorm:"size:43"`
	Gateway             string `gorm:"size:39"`
	VLANID              int    `gorm:"not null;default:0"`
	CircuitID           string `gorm:"size:60"`
	OperationID         string `gorm:"size:64;not null;index"`
	ActivatedAt         *time.Time
	StatusChangedAt     time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
	Spec                string `gorm:"type:text"`
	Features            string `gorm:"type:text"`
	Configuration       string `gorm:"type:text"`
	Resources           string `gorm:"type:text"`
	Quantity            int    `gorm:"not null;default:1"`
	MonthlyCharge       int64  `gorm:"not null;default:0"`
	OneTimeCharge       int64  `gorm:"not null;default:0"`
	Currency            string `gorm:"size:3"`
	TermMonths          int    `gorm:"not null;default:1"`
	QuoteID             string `gorm:"size:40"`
	PendingOperationID  string `gorm:"size:64;index"`
	LastChangeID        string `gorm:"size:64"`
	MaintenanceStartsAt *time.Time
	MaintenanceEndsAt   *time.Time
	DecommissionedAt    *time.Time
	DecommissionReason  string `gorm:"size:500"`
	BillingEndedAt      *time.Time
}

func (serviceV0007) TableName() string { return "services" }

// inventoryAllocationV0007 is the inventory_allocations table as migration 0007 migrates it.
type inventoryAllocationV0007 struct {
	ID             uint64  `gorm:"primaryKey;autoIncrement"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	Environment    string  `gorm:"size:8;not null;index"`
	OperationID    string  `gorm:"size:64;not null;uniqueIndex:idx_allocation_op_kind_slot"`
	Kind           string  `gorm:"size:20;not null;uniqueIndex:idx_allocation_op_kind_slot"`
	Slot           int     `gorm:"not null;default:0;uniqueIndex:idx_allocation_op_kind_slot"`
	Reference      string  `gorm:"size:60"`
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

func (inventoryAllocationV0007) TableName() string { return "inventory_allocations" }

// telemetrySampleV0007 is the telemetry_samples table as migration 0007 migrates it.
type telemetrySampleV0007 struct {
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
	ThroughputMbps float64   `gorm:"not null;default:0"`
	DataMB         float64   `gorm:"not null;default:0"`
	Calls          int       `gorm:"not null;default:0"`
	CallQuality    float64   `gorm:"not null;default:0"`
}

func (telemetrySampleV0007) TableName() string { return "telemetry_samples" }

// numberBlockV0007 is the number_blocks table as migration 0007 migrates it.
type numberBlockV0007 struct {
	ID          string `gorm:"primaryKey;size:40"`
	Type        string `gorm:"size:10;not null;index"`
	AreaCode    string `gorm:"size:3;not null;index"`
	Prefix      string `gorm:"size:12;not null"`
	Size        int    `gorm:"not null"`
	SandboxOnly bool   `gorm:"not null;default:false"`
	Position    int    `gorm:"not null"`
}

func (numberBlockV0007) TableName() string { return "number_blocks" }

// quoteV0007 is the quotes table as migration 0007 migrates it.
type quoteV0007 struct {
	ID              string    `gorm:"primaryKey;size:40"`
	OrganizationID  string    `gorm:"size:40;not null;index"`
	Environment     string    `gorm:"size:8;not null;index"`
	AccountID       string    `gorm:"size:40;not null;index"`
	Status          string    `gorm:"size:20;not null"`
	BillingCycle    string    `gorm:"size:20;not null"`
	TermMonths      int       `gorm:"not null"`
	DiscountPercent int       `gorm:"not null"`
	Currency        string    `gorm:"size:3;not null"`
	Items           string    `gorm:"type:text"`
	MonthlySubtotal int64     `gorm:"not null"`
	MonthlyDiscount int64     `gorm:"not null"`
	MonthlyTotal    int64     `gorm:"not null"`
	OneTimeTotal    int64     `gorm:"not null"`
	CycleTotal      int64     `gorm:"not null"`
	TermTotal       int64     `gorm:"not null"`
	CreatedBy       string    `gorm:"size:40"`
	ExpiresAt       time.Time `gorm:"not null"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (quoteV0007) TableName() string { return "quotes" }

// contactNotificationV0007 is the contact_notifications table as migration 0007 migrates it.
type contactNotificationV0007 struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	ServiceID      string `gorm:"size:40;not null;index"`
	OperationID    string `gorm:"size:64;index"`
	Channel        string `gorm:"size:10;not null"`
	Role           string `gorm:"size:20;not null"`
	Recipient      string `gorm:"size:320;not null"`
	Template       string `gorm:"size:60;not null"`
	Subject        string `gorm:"size:300;not null"`
	Data           string `gorm:"type:text"`
	CreatedAt      time.Time
	SentAt         *time.Time
}

func (contactNotificationV0007) TableName() string { return "contact_notifications" }

// dataMigrationV0007 is the data_migrations table as migration 0007 migrates it.
type dataMigrationV0007 struct {
	OperationID          string `gorm:"primaryKey;size:64"`
	OrganizationID       string `gorm:"size:40;not null;index"`
	Environment          string `gorm:"size:8;not null;index"`
	SourceServiceID      string `gorm:"size:40;not null;index"`
	DestinationServiceID string `gorm:"size:40;not null;index"`
	Items                int    `gorm:"not null"`
	Bytes                int64  `gorm:"not null"`
	SourceChecksum       string `gorm:"size:64;not null"`
	DestinationChecksum  string `gorm:"size:64;not null"`
	Status               string `gorm:"size:20;not null"`
	CreatedAt            time.Time
	VerifiedAt           *time.Time
	RolledBackAt         *time.Time
}

func (dataMigrationV0007) TableName() string { return "data_migrations" }

// serviceIncidentV0007 is the service_incidents table as migration 0007 migrates it.
type serviceIncidentV0007 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Environment    string     `gorm:"size:8;not null;index"`
	ServiceID      string     `gorm:"size:40;not null;index"`
	Kind           string     `gorm:"size:20;not null"`
	Cause          string     `gorm:"size:200;not null"`
	Metrics        string     `gorm:"type:text"`
	StartedAt      time.Time  `gorm:"not null;index"`
	ResolvedAt     *time.Time `gorm:"index"`
}

func (serviceIncidentV0007) TableName() string { return "service_incidents" }

// migrateServicesArea brings services, allocations and telemetry to the
// services area and creates its new tables.
func migrateServicesArea(tx *gorm.DB) error {
	if err := tx.AutoMigrate(&serviceV0007{}, &inventoryAllocationV0007{}, &telemetrySampleV0007{}, &numberBlockV0007{}, &quoteV0007{},
		&contactNotificationV0007{}, &dataMigrationV0007{}, &serviceIncidentV0007{}); err != nil {
		return err
	}
	if tx.Migrator().HasIndex(&inventoryAllocationV0007{}, "idx_allocation_op_kind") {
		return tx.Migrator().DropIndex(&inventoryAllocationV0007{}, "idx_allocation_op_kind")
	}
	return nil
}

// rollbackServicesArea drops the new tables (the added columns stay).
func rollbackServicesArea(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&serviceIncidentV0007{}, &dataMigrationV0007{}, &contactNotificationV0007{}, &quoteV0007{}, &numberBlockV0007{})
}
