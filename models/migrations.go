package models

import (
	"context"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// migrations is the ordered list of schema versions. Never edit a released
// migration: add a new one.
func migrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{
		{
			ID: "202611220001_tenancy_and_keys",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&Organization{}, &User{}, &BillingAccount{}, &APIKey{}, &IdempotencyRecord{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&IdempotencyRecord{}, &APIKey{}, &BillingAccount{}, &User{}, &Organization{})
			},
		},
		{
			ID: "202611220002_catalog",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&CatalogCategory{}, &CatalogService{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&CatalogService{}, &CatalogCategory{})
			},
		},
		{
			ID: "202611220003_rate_limit_suspensions",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&RateLimitSuspension{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&RateLimitSuspension{})
			},
		},
		{
			ID: "202611220004_provisioning",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&ServiceableLocation{}, &LocationCapacity{}, &ProvisioningTemplate{}, &InventoryAllocation{},
					&Service{}, &Operation{}, &TelemetrySample{}, &Event{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&Event{}, &TelemetrySample{}, &Operation{}, &Service{}, &InventoryAllocation{},
					&ProvisioningTemplate{}, &LocationCapacity{}, &ServiceableLocation{})
			},
		},
		{
			ID: "202611220005_custom_plan_limits",
			Migrate: func(tx *gorm.DB) error {
				for _, col := range []string{"CustomHourly", "CustomBurst", "CustomConcurrent"} {
					if !tx.Migrator().HasColumn(&Organization{}, col) {
						if err := tx.Migrator().AddColumn(&Organization{}, col); err != nil {
							return err
						}
					}
				}
				return nil
			},
			Rollback: func(tx *gorm.DB) error {
				for _, col := range []string{"CustomHourly", "CustomBurst", "CustomConcurrent"} {
					if err := tx.Migrator().DropColumn(&Organization{}, col); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "202611220010_identity",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&SigningKey{}, &RevokedToken{}, &ServerSecret{}, &OAuthClient{}, &OAuthToken{}, &DeviceGrant{}, &MFAEnrollment{}, &MFABackupCode{}, &MFAChallenge{}, &ClientCertificate{}, &SAMLRequest{}, &AuditEvent{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&AuditEvent{}, &SAMLRequest{}, &ClientCertificate{}, &MFAChallenge{}, &MFABackupCode{}, &MFAEnrollment{}, &DeviceGrant{}, &OAuthToken{}, &OAuthClient{}, &ServerSecret{}, &RevokedToken{}, &SigningKey{})
			},
		},
		{
			ID: "202611220006_events_webhooks",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&WebhookSubscription{}, &WebhookDelivery{}, &WebhookAttempt{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&WebhookAttempt{}, &WebhookDelivery{}, &WebhookSubscription{})
			},
		},
		{
			ID: "202611220008_bulk_orchestration",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&BulkItem{}, &ServiceChange{}, &OrchestrationDefinition{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&OrchestrationDefinition{}, &ServiceChange{}, &BulkItem{})
			},
		},
		{
			ID: "202611220009_billing",
			Migrate: func(tx *gorm.DB) error {
				for _, col := range []string{"ContactName", "TaxRateBP"} {
					if !tx.Migrator().HasColumn(&BillingAccount{}, col) {
						if err := tx.Migrator().AddColumn(&BillingAccount{}, col); err != nil {
							return err
						}
					}
				}
				return tx.AutoMigrate(&PaymentMethod{}, &BillingSequence{}, &Invoice{}, &InvoiceLine{}, &Payment{},
					&Subscription{}, &UsageRecord{}, &Budget{}, &BudgetAlert{})
			},
			Rollback: func(tx *gorm.DB) error {
				if err := tx.Migrator().DropTable(&BudgetAlert{}, &Budget{}, &UsageRecord{}, &Subscription{}, &Payment{},
					&InvoiceLine{}, &Invoice{}, &BillingSequence{}, &PaymentMethod{}); err != nil {
					return err
				}
				for _, col := range []string{"ContactName", "TaxRateBP"} {
					if err := tx.Migrator().DropColumn(&BillingAccount{}, col); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "202611220007_services_area",
			Migrate: func(tx *gorm.DB) error {
				// allocations are keyed by operation, kind and slot (one per site, number...)
				if err := tx.AutoMigrate(&Service{}, &InventoryAllocation{}, &TelemetrySample{}, &NumberBlock{}, &Quote{},
					&ContactNotification{}, &DataMigration{}, &ServiceIncident{}); err != nil {
					return err
				}
				if tx.Migrator().HasIndex(&InventoryAllocation{}, "idx_allocation_op_kind") {
					return tx.Migrator().DropIndex(&InventoryAllocation{}, "idx_allocation_op_kind")
				}
				return nil
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&ServiceIncident{}, &DataMigration{}, &ContactNotification{}, &Quote{}, &NumberBlock{})
			},
		},
		{
			ID:       "202611260011_client_management",
			Migrate:  migrateClientManagement,
			Rollback: rollbackClientManagement,
		},
		{
			ID: "202611260013_notifications_and_portal",
			Migrate: func(tx *gorm.DB) error {
				// new columns of the outbox, challenges and SAML requests; new tables
				return tx.AutoMigrate(&ContactNotification{}, &MFAChallenge{}, &SAMLRequest{}, &MFAPhone{}, &PortalSession{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&PortalSession{}, &MFAPhone{})
			},
		},
		{
			ID:       "202611260012_access_restrictions",
			Migrate:  migrateAccessRestrictions,
			Rollback: rollbackAccessRestrictions,
		},
		{
			ID:       "202611260020_idempotency_sealed_answers",
			Migrate:  migrateSealedIdempotency,
			Rollback: rollbackSealedIdempotency,
		},
		{
			ID:       "202611260030_sign_in_protection",
			Migrate:  migrateSignInProtection,
			Rollback: rollbackSignInProtection,
		},
		{
			ID: "202611260040_security_review",
			Migrate: func(tx *gorm.DB) error {
				// users.permissions: what a user's sessions may carry below its
				// role; mfa_phones.pending_number: a number awaiting confirmation
				for _, c := range []struct {
					model any
					field string
				}{{&User{}, "Permissions"}, {&MFAPhone{}, "PendingNumber"}, {&OrchestrationDefinition{}, "CreatorPermissions"}} {
					if !tx.Migrator().HasColumn(c.model, c.field) {
						if err := tx.Migrator().AddColumn(c.model, c.field); err != nil {
							return err
						}
					}
				}
				return tx.AutoMigrate(&InvoiceDispute{})
			},
			Rollback: func(tx *gorm.DB) error {
				if err := tx.Migrator().DropTable(&InvoiceDispute{}); err != nil {
					return err
				}
				if err := tx.Migrator().DropColumn(&OrchestrationDefinition{}, "CreatorPermissions"); err != nil {
					return err
				}
				if err := tx.Migrator().DropColumn(&MFAPhone{}, "PendingNumber"); err != nil {
					return err
				}
				return tx.Migrator().DropColumn(&User{}, "Permissions")
			},
		},
		{
			ID:       "202611260070_support_tickets",
			Migrate:  migrateSupportV1,
			Rollback: rollbackSupportV1,
		},
		{
			ID:       "202611260080_support_routing_rules",
			Migrate:  migrateSupportRoutingV2,
			Rollback: rollbackSupportRoutingV2,
		},
		{
			ID:       "202611260090_support_knowledge_feedback",
			Migrate:  migrateSupportKnowledgeV3,
			Rollback: rollbackSupportKnowledgeV3,
		},
		{
			ID:       "202611260100_support_ticket_notifications",
			Migrate:  migrateSupportNotificationsV3,
			Rollback: rollbackSupportNotificationsV3,
		},
		{
			ID:       "202611260110_support_attachments_teams",
			Migrate:  migrateSupportAttachmentsTeamsV4,
			Rollback: rollbackSupportAttachmentsTeamsV4,
		},
	}
}

// migrateSealedIdempotency replaces the clear body of stored idempotent
// answers by a sealed one. Stored answers are dropped: their keys were
// scoped without the credential, and their bodies may hold secrets in clear.
func migrateSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Where("1 = 1").Delete(&IdempotencyRecord{}).Error; err != nil {
		return err
	}
	if err := tx.AutoMigrate(&IdempotencyRecord{}); err != nil {
		return err
	}
	if tx.Migrator().HasColumn(&IdempotencyRecord{}, "body") {
		return tx.Migrator().DropColumn(&IdempotencyRecord{}, "body")
	}
	return nil
}

// rollbackSealedIdempotency restores the clear body column (empty: stored
// answers are dropped again).
func rollbackSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Where("1 = 1").Delete(&IdempotencyRecord{}).Error; err != nil {
		return err
	}
	blob := "BYTEA"
	if IsSQLite(tx) {
		blob = "BLOB"
	}
	if err := tx.Exec("ALTER TABLE ? ADD COLUMN ? "+blob, clause.Table{Name: "idempotency_records"}, clause.Column{Name: "body"}).Error; err != nil {
		return err
	}
	return tx.Migrator().DropColumn(&IdempotencyRecord{}, "body_sealed")
}

// migrationLockID is the PostgreSQL advisory lock that serialises migrations.
const migrationLockID = 7_202_611_220

// Migrate brings the schema to the newest version. It is safe to run on
// every start and from several processes at once: on PostgreSQL an advisory
// lock lets one process migrate while the others wait (SQLite serialises
// writers itself), and versions already applied are skipped.
func Migrate(ctx context.Context, db *gorm.DB) error {
	scoped := Scoped(ctx, db, SystemScope())
	if IsSQLite(db) {
		return gormigrate.New(scoped, gormigrate.DefaultOptions, migrations()).Migrate()
	}
	return scoped.Connection(func(pinned *gorm.DB) error {
		// A new session per call on the one pinned connection: gorm's
		// Connection hands over a handle whose statement would leak between calls.
		conn := pinned.Session(&gorm.Session{NewDB: true})
		if err := conn.Exec("SELECT pg_advisory_lock(?)", migrationLockID).Error; err != nil {
			return err
		}
		defer conn.Exec("SELECT pg_advisory_unlock(?)", migrationLockID)
		return gormigrate.New(conn, gormigrate.DefaultOptions, migrations()).Migrate()
	})
}
