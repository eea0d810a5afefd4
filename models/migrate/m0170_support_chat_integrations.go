package migrate

import (
	"time"

	"gorm.io/gorm"
)

// supportChatIntegrationV0170 is the support_chat_integrations table as
// migration 202611260170 creates it: a chat application's incoming webhook
// (chat_) that receives a rendered message for each matching support event
// of its organization and environment.
type supportChatIntegrationV0170 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	WebhookURL     string    `gorm:"size:2000;not null"`
	Channel        string    `gorm:"size:80;not null"`
	Events         string    `gorm:"type:text;not null"`
	CustomerIDs    string    `gorm:"type:text"`
	Priorities     string    `gorm:"type:text"`
	Template       string    `gorm:"type:text;not null"`
	Active         bool      `gorm:"not null;index"`
	CreatedBy      string    `gorm:"size:40"`
	CreatedAt      time.Time `gorm:"not null;index"`
	UpdatedAt      time.Time
}

func (supportChatIntegrationV0170) TableName() string { return "support_chat_integrations" }

// webhookDeliveryKindV0170 is the column migration 202611260170 adds to
// webhook_deliveries: what a delivery is sent to (webhook, or chat for a
// support chat integration; existing rows are webhook deliveries).
type webhookDeliveryKindV0170 struct {
	Kind string `gorm:"size:12;not null;default:webhook"`
}

func (webhookDeliveryKindV0170) TableName() string { return "webhook_deliveries" }

// migrateSupportChatIntegrationsV0170 creates support_chat_integrations
// and adds webhook_deliveries.kind.
func migrateSupportChatIntegrationsV0170(tx *gorm.DB) error {
	if err := tx.AutoMigrate(&supportChatIntegrationV0170{}); err != nil {
		return err
	}
	return addColumns(tx, &webhookDeliveryKindV0170{}, "Kind")
}

// rollbackSupportChatIntegrationsV0170 drops webhook_deliveries.kind and
// the support_chat_integrations table.
func rollbackSupportChatIntegrationsV0170(tx *gorm.DB) error {
	if err := dropColumns(tx, &webhookDeliveryKindV0170{}, "Kind"); err != nil {
		return err
	}
	return tx.Migrator().DropTable(&supportChatIntegrationV0170{})
}
