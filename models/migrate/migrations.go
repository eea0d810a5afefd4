// Package migrate holds the ordered database migrations of every domain;
// it sits above the domain packages because it knows every table.
package migrate

import (
	"context"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
)

// migrations is the ordered list of schema versions. Never edit a released
// migration: add a new one.
func migrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{
		{
			ID: "202611220001_tenancy_and_keys",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.Organization{}, &models.User{}, &models.BillingAccount{}, &models.APIKey{}, &models.IdempotencyRecord{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.IdempotencyRecord{}, &models.APIKey{}, &models.BillingAccount{}, &models.User{}, &models.Organization{})
			},
		},
		{
			ID: "202611220002_catalog",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.CatalogCategory{}, &models.CatalogService{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.CatalogService{}, &models.CatalogCategory{})
			},
		},
		{
			ID: "202611220003_rate_limit_suspensions",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.RateLimitSuspension{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.RateLimitSuspension{})
			},
		},
		{
			ID: "202611220004_provisioning",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.ServiceableLocation{}, &models.LocationCapacity{}, &models.ProvisioningTemplate{}, &models.InventoryAllocation{},
					&models.Service{}, &models.Operation{}, &models.TelemetrySample{}, &models.Event{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.Event{}, &models.TelemetrySample{}, &models.Operation{}, &models.Service{}, &models.InventoryAllocation{},
					&models.ProvisioningTemplate{}, &models.LocationCapacity{}, &models.ServiceableLocation{})
			},
		},
		{
			ID: "202611220005_custom_plan_limits",
			Migrate: func(tx *gorm.DB) error {
				for _, col := range []string{"CustomHourly", "CustomBurst", "CustomConcurrent"} {
					if !tx.Migrator().HasColumn(&models.Organization{}, col) {
						if err := tx.Migrator().AddColumn(&models.Organization{}, col); err != nil {
							return err
						}
					}
				}
				return nil
			},
			Rollback: func(tx *gorm.DB) error {
				for _, col := range []string{"CustomHourly", "CustomBurst", "CustomConcurrent"} {
					if err := tx.Migrator().DropColumn(&models.Organization{}, col); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			ID: "202611220010_identity",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.SigningKey{}, &models.RevokedToken{}, &models.ServerSecret{}, &models.OAuthClient{}, &models.OAuthToken{}, &models.DeviceGrant{}, &models.MFAEnrollment{}, &models.MFABackupCode{}, &models.MFAChallenge{}, &models.ClientCertificate{}, &models.SAMLRequest{}, &models.AuditEvent{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.AuditEvent{}, &models.SAMLRequest{}, &models.ClientCertificate{}, &models.MFAChallenge{}, &models.MFABackupCode{}, &models.MFAEnrollment{}, &models.DeviceGrant{}, &models.OAuthToken{}, &models.OAuthClient{}, &models.ServerSecret{}, &models.RevokedToken{}, &models.SigningKey{})
			},
		},
		{
			ID: "202611220006_events_webhooks",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&models.WebhookSubscription{}, &models.WebhookDelivery{}, &models.WebhookAttempt{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.WebhookAttempt{}, &models.WebhookDelivery{}, &models.WebhookSubscription{})
			},
		},
		{
			ID: "202611220008_bulk_orchestration",
			Migrate: func(tx *gorm.DB) error {
				return tx.AutoMigrate(&automation.BulkItem{}, &automation.ServiceChange{}, &automation.OrchestrationDefinition{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&automation.OrchestrationDefinition{}, &automation.ServiceChange{}, &automation.BulkItem{})
			},
		},
		{
			ID: "202611220009_billing",
			Migrate: func(tx *gorm.DB) error {
				for _, col := range []string{"ContactName", "TaxRateBP"} {
					if !tx.Migrator().HasColumn(&models.BillingAccount{}, col) {
						if err := tx.Migrator().AddColumn(&models.BillingAccount{}, col); err != nil {
							return err
						}
					}
				}
				return tx.AutoMigrate(&models.PaymentMethod{}, &models.BillingSequence{}, &models.Invoice{}, &models.InvoiceLine{}, &models.Payment{},
					&models.Subscription{}, &models.UsageRecord{}, &models.Budget{}, &models.BudgetAlert{})
			},
			Rollback: func(tx *gorm.DB) error {
				if err := tx.Migrator().DropTable(&models.BudgetAlert{}, &models.Budget{}, &models.UsageRecord{}, &models.Subscription{}, &models.Payment{},
					&models.InvoiceLine{}, &models.Invoice{}, &models.BillingSequence{}, &models.PaymentMethod{}); err != nil {
					return err
				}
				for _, col := range []string{"ContactName", "TaxRateBP"} {
					if err := tx.Migrator().DropColumn(&models.BillingAccount{}, col); err != nil {
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
				if err := tx.AutoMigrate(&models.Service{}, &models.InventoryAllocation{}, &models.TelemetrySample{}, &models.NumberBlock{}, &models.Quote{},
					&models.ContactNotification{}, &models.DataMigration{}, &models.ServiceIncident{}); err != nil {
					return err
				}
				if tx.Migrator().HasIndex(&models.InventoryAllocation{}, "idx_allocation_op_kind") {
					return tx.Migrator().DropIndex(&models.InventoryAllocation{}, "idx_allocation_op_kind")
				}
				return nil
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.ServiceIncident{}, &models.DataMigration{}, &models.ContactNotification{}, &models.Quote{}, &models.NumberBlock{})
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
				return tx.AutoMigrate(&models.ContactNotification{}, &models.MFAChallenge{}, &models.SAMLRequest{}, &models.MFAPhone{}, &models.PortalSession{})
			},
			Rollback: func(tx *gorm.DB) error {
				return tx.Migrator().DropTable(&models.PortalSession{}, &models.MFAPhone{})
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
				}{{&models.User{}, "Permissions"}, {&models.MFAPhone{}, "PendingNumber"}, {&automation.OrchestrationDefinition{}, "CreatorPermissions"}} {
					if !tx.Migrator().HasColumn(c.model, c.field) {
						if err := tx.Migrator().AddColumn(c.model, c.field); err != nil {
							return err
						}
					}
				}
				return tx.AutoMigrate(&models.InvoiceDispute{})
			},
			Rollback: func(tx *gorm.DB) error {
				if err := tx.Migrator().DropTable(&models.InvoiceDispute{}); err != nil {
					return err
				}
				if err := tx.Migrator().DropColumn(&automation.OrchestrationDefinition{}, "CreatorPermissions"); err != nil {
					return err
				}
				if err := tx.Migrator().DropColumn(&models.MFAPhone{}, "PendingNumber"); err != nil {
					return err
				}
				return tx.Migrator().DropColumn(&models.User{}, "Permissions")
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
	}
}

// migrateSealedIdempotency replaces the clear body of stored idempotent
// answers by a sealed one. Stored answers are dropped: their keys were
// scoped without the credential, and their bodies may hold secrets in clear.
func migrateSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Where("1 = 1").Delete(&models.IdempotencyRecord{}).Error; err != nil {
		return err
	}
	if err := tx.AutoMigrate(&models.IdempotencyRecord{}); err != nil {
		return err
	}
	if tx.Migrator().HasColumn(&models.IdempotencyRecord{}, "body") {
		return tx.Migrator().DropColumn(&models.IdempotencyRecord{}, "body")
	}
	return nil
}

// rollbackSealedIdempotency restores the clear body column (empty: stored
// answers are dropped again).
func rollbackSealedIdempotency(tx *gorm.DB) error {
	if err := tx.Where("1 = 1").Delete(&models.IdempotencyRecord{}).Error; err != nil {
		return err
	}
	blob := "BYTEA"
	if models.IsSQLite(tx) {
		blob = "BLOB"
	}
	if err := tx.Exec("ALTER TABLE ? ADD COLUMN ? "+blob, clause.Table{Name: "idempotency_records"}, clause.Column{Name: "body"}).Error; err != nil {
		return err
	}
	return tx.Migrator().DropColumn(&models.IdempotencyRecord{}, "body_sealed")
}

// migrationLockID is the PostgreSQL advisory lock that serialises migrations.
const migrationLockID = 7_202_611_220

// Run brings the schema to the newest version. It is safe to run on
// every start and from several processes at once: on PostgreSQL an advisory
// lock lets one process migrate while the others wait (SQLite serialises
// writers itself), and versions already applied are skipped.
func Run(ctx context.Context, db *gorm.DB) error {
	scoped := models.Scoped(ctx, db, models.SystemScope())
	if models.IsSQLite(db) {
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

// migrateClientManagement brings the identity tables to client management
// (migration 202611260011): clients get updated_at and secret_rotated_at;
// certificates get revoked_at, and their fingerprint is unique only among
// unrevoked registrations (a revoked certificate can be registered again).
// It adds only these columns and index, whatever else the models gain later.
func migrateClientManagement(tx *gorm.DB) error {
	m := tx.Migrator()
	for _, add := range []struct {
		model any
		field string
	}{{&models.OAuthClient{}, "UpdatedAt"}, {&models.OAuthClient{}, "SecretRotatedAt"}, {&models.ClientCertificate{}, "RevokedAt"}} {
		if !m.HasColumn(add.model, add.field) {
			if err := m.AddColumn(add.model, add.field); err != nil {
				return err
			}
		}
	}
	const oldIndex, newIndex = "idx_client_certificates_fingerprint_sha256", "idx_client_certificates_active_fingerprint"
	if m.HasIndex(&models.ClientCertificate{}, oldIndex) {
		if err := m.DropIndex(&models.ClientCertificate{}, oldIndex); err != nil {
			return err
		}
	}
	if !m.HasIndex(&models.ClientCertificate{}, newIndex) {
		if err := m.CreateIndex(&models.ClientCertificate{}, newIndex); err != nil {
			return err
		}
	}
	return tx.Model(&models.OAuthClient{}).Where("updated_at IS NULL").Update("updated_at", gorm.Expr("created_at")).Error
}

// rollbackClientManagement undoes migrateClientManagement; revoked
// certificate registrations are deleted (the old unique index allows one
// row per fingerprint).
func rollbackClientManagement(tx *gorm.DB) error {
	m := tx.Migrator()
	if m.HasIndex(&models.ClientCertificate{}, "idx_client_certificates_active_fingerprint") {
		if err := m.DropIndex(&models.ClientCertificate{}, "idx_client_certificates_active_fingerprint"); err != nil {
			return err
		}
	}
	if err := tx.Where("revoked_at IS NOT NULL").Delete(&models.ClientCertificate{}).Error; err != nil {
		return err
	}
	for _, drop := range []struct {
		model any
		col   string
	}{{&models.ClientCertificate{}, "revoked_at"}, {&models.OAuthClient{}, "updated_at"}, {&models.OAuthClient{}, "secret_rotated_at"}} {
		if m.HasColumn(drop.model, drop.col) {
			if err := m.DropColumn(drop.model, drop.col); err != nil {
				return err
			}
		}
	}
	return tx.Exec("CREATE UNIQUE INDEX IF NOT EXISTS idx_client_certificates_fingerprint_sha256 ON client_certificates (fingerprint_sha256)").Error
}

// migrateSignInProtection adds the columns of signInProtectionColumns
// (migration 202611260030), only these, whatever else the models gain later.
func migrateSignInProtection(tx *gorm.DB) error {
	m := tx.Migrator()
	for _, c := range signInProtectionColumns() {
		if !m.HasColumn(c.Model, c.Field) {
			if err := m.AddColumn(c.Model, c.Field); err != nil {
				return err
			}
		}
	}
	return nil
}

// rollbackSignInProtection drops the columns migrateSignInProtection added.
func rollbackSignInProtection(tx *gorm.DB) error {
	m := tx.Migrator()
	for _, c := range signInProtectionColumns() {
		if m.HasColumn(c.Model, c.Column) {
			if err := m.DropColumn(c.Model, c.Column); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrateAccessRestrictions adds the organizations' access policy and the
// IP allow-lists of users and OAuth clients (migration 202611260012). Tables
// created by earlier migrations from today's models already have them.
func migrateAccessRestrictions(tx *gorm.DB) error {
	for _, c := range accessRestrictionColumns {
		if !tx.Migrator().HasColumn(c.Model, c.Field) {
			if err := tx.Migrator().AddColumn(c.Model, c.Field); err != nil {
				return err
			}
		}
	}
	return nil
}

// rollbackAccessRestrictions drops the columns of migrateAccessRestrictions.
func rollbackAccessRestrictions(tx *gorm.DB) error {
	for _, c := range accessRestrictionColumns {
		if tx.Migrator().HasColumn(c.Model, c.Field) {
			if err := tx.Migrator().DropColumn(c.Model, c.Field); err != nil {
				return err
			}
		}
	}
	return nil
}

// addedColumn is a column a migration adds: the model, its field and its name.
type addedColumn struct {
	Model         any
	Field, Column string
}

// signInProtectionColumns returns the columns of migration 202611260030:
// the users' password lockout and the SAML requests' browser binding.
func signInProtectionColumns() []addedColumn {
	return []addedColumn{{&models.User{}, "FailedLogins", "failed_logins"}, {&models.User{}, "LockedUntil", "locked_until"}, {&models.SAMLRequest{}, "BrowserHash", "browser_hash"}}
}

// accessRestrictionColumns are the columns of migration 202611260012.
var accessRestrictionColumns = []struct {
	Model any
	Field string
}{{&models.Organization{}, "AccessPolicy"}, {&models.User{}, "IPAllowList"}, {&models.OAuthClient{}, "IPAllowList"}}
