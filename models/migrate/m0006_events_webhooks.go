package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220006_events_webhooks: webhook subscriptions, deliveries
// and delivery attempts.

// webhookSubscriptionV0006 is the webhook_subscriptions table as migration 0006 migrates it.
type webhookSubscriptionV0006 struct {
	ID               string `gorm:"primaryKey;size:40"`
	OrganizationID   string `gorm:"size:40;not null;index"`
	Environment      string `gorm:"size:8;not null;index"`
	Area             string `gorm:"size:20;not null"`
	URL              string `gorm:"size:2000;not null"`
	Description      string `gorm:"size:500"`
	Events           string `gorm:"type:text;not null"`
	CustomerIDs      string `gorm:"type:text"`
	Priorities       string `gorm:"type:text"`
	Active           bool   `gorm:"not null;index"`
	AllOrganizations bool   `gorm:"not null"`
	Secret           string `gorm:"size:400;not null"`
	PreviousSecret   string `gorm:"size:400"`
	SecretRotatedAt  *time.Time
	CreatedBy        string    `gorm:"size:40"`
	CreatedAt        time.Time `gorm:"not null;index"`
	UpdatedAt        time.Time
}

func (webhookSubscriptionV0006) TableName() string { return "webhook_subscriptions" }

// webhookDeliveryV0006 is the webhook_deliveries table as migration 0006 migrates it.
type webhookDeliveryV0006 struct {
	ID                string    `gorm:"primaryKey;size:40"`
	OrganizationID    string    `gorm:"size:40;not null;index"`
	Environment       string    `gorm:"size:8;not null;index"`
	EventID           string    `gorm:"size:40;not null;uniqueIndex:idx_webhook_delivery_pair,priority:1"`
	SubscriptionID    string    `gorm:"size:40;not null;uniqueIndex:idx_webhook_delivery_pair,priority:2;index:idx_webhook_delivery_order,priority:1"`
	Generation        int       `gorm:"not null;uniqueIndex:idx_webhook_delivery_pair,priority:3"`
	Reason            string    `gorm:"size:12;not null"`
	EventType         string    `gorm:"size:60;not null"`
	ResourceID        string    `gorm:"size:64;not null;index:idx_webhook_delivery_order,priority:2"`
	EventCreatedAt    time.Time `gorm:"not null"`
	Status            string    `gorm:"size:12;not null;index"`
	StatusReason      string    `gorm:"size:200"`
	Attempts          int       `gorm:"not null"`
	LastStatusCode    int       `gorm:"not null"`
	LastError         string    `gorm:"size:500"`
	NextAttemptAt     *time.Time
	WorkflowStartedAt *time.Time
	CompletedAt       *time.Time
	CreatedAt         time.Time `gorm:"not null;index"`
	UpdatedAt         time.Time
}

func (webhookDeliveryV0006) TableName() string { return "webhook_deliveries" }

// webhookAttemptV0006 is the webhook_attempts table as migration 0006 migrates it.
type webhookAttemptV0006 struct {
	DeliveryID     string    `gorm:"primaryKey;size:40;autoIncrement:false"`
	Number         int       `gorm:"primaryKey;autoIncrement:false"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	AttemptedAt    time.Time `gorm:"not null"`
	StatusCode     int       `gorm:"not null"`
	LatencyMs      int64     `gorm:"not null"`
	Success        bool      `gorm:"not null"`
	Error          string    `gorm:"size:500"`
	ResponseBody   string    `gorm:"type:text"`
}

func (webhookAttemptV0006) TableName() string { return "webhook_attempts" }

// migrateEventsWebhooks creates the webhook tables.
func migrateEventsWebhooks(tx *gorm.DB) error {
	return tx.AutoMigrate(&webhookSubscriptionV0006{}, &webhookDeliveryV0006{}, &webhookAttemptV0006{})
}

// rollbackEventsWebhooks drops them.
func rollbackEventsWebhooks(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&webhookAttemptV0006{}, &webhookDeliveryV0006{}, &webhookSubscriptionV0006{})
}
