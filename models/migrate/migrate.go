// Package migrate holds the history of the database schema: the ordered
// migrations, each with frozen copies of the tables as it created or changed
// them, and Run, which applies those a database has not recorded yet.
//
// No migration uses the domain types: a domain type describes the table as
// the code reads it today, a migration the table as it was at one point of
// the history. A database created by an old release is upgraded along the
// path its history describes, and reaches the same schema as a fresh one
// (docs/architecture.md, "Migrations follow history").
package migrate

import (
	"context"

	"github.com/go-gormigrate/gormigrate/v2"
	"github.com/telcoplatform/platform/models"
	"gorm.io/gorm"
)

// migrations is the ordered list of schema versions. Never edit a released
// migration: add a new one at the end. The order is the order of the list,
// not of the IDs (some IDs were given out of order; databases have them
// recorded, so they stay as they are).
func migrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{
		{ID: "202611220001_tenancy_and_keys", Migrate: migrateTenancyAndKeys, Rollback: rollbackTenancyAndKeys},
		{ID: "202611220002_catalog", Migrate: migrateCatalog, Rollback: rollbackCatalog},
		{ID: "202611220003_rate_limit_suspensions", Migrate: migrateRateLimitSuspensions, Rollback: rollbackRateLimitSuspensions},
		{ID: "202611220004_provisioning", Migrate: migrateProvisioning, Rollback: rollbackProvisioning},
		{ID: "202611220005_custom_plan_limits", Migrate: migrateCustomPlanLimits, Rollback: rollbackCustomPlanLimits},
		{ID: "202611220010_identity", Migrate: migrateIdentity, Rollback: rollbackIdentity},
		{ID: "202611220006_events_webhooks", Migrate: migrateEventsWebhooks, Rollback: rollbackEventsWebhooks},
		{ID: "202611220008_bulk_orchestration", Migrate: migrateBulkOrchestration, Rollback: rollbackBulkOrchestration},
		{ID: "202611220009_billing", Migrate: migrateBilling, Rollback: rollbackBilling},
		{ID: "202611220007_services_area", Migrate: migrateServicesArea, Rollback: rollbackServicesArea},
		{ID: "202611260011_client_management", Migrate: migrateClientManagement, Rollback: rollbackClientManagement},
		{ID: "202611260013_notifications_and_portal", Migrate: migrateNotificationsAndPortal, Rollback: rollbackNotificationsAndPortal},
		{ID: "202611260012_access_restrictions", Migrate: migrateAccessRestrictions, Rollback: rollbackAccessRestrictions},
		{ID: "202611260020_idempotency_sealed_answers", Migrate: migrateSealedIdempotency, Rollback: rollbackSealedIdempotency},
		{ID: "202611260030_sign_in_protection", Migrate: migrateSignInProtection, Rollback: rollbackSignInProtection},
		{ID: "202611260040_security_review", Migrate: migrateSecurityReview, Rollback: rollbackSecurityReview},
		{ID: "202611260070_support_tickets", Migrate: migrateSupportV1, Rollback: rollbackSupportV1},
		{ID: "202611260080_support_routing_rules", Migrate: migrateSupportRoutingV2, Rollback: rollbackSupportRoutingV2},
		{ID: "202611260090_support_knowledge_feedback", Migrate: migrateSupportKnowledgeV3, Rollback: rollbackSupportKnowledgeV3},
		{ID: "202611260100_support_ticket_notifications", Migrate: migrateSupportNotificationsV3, Rollback: rollbackSupportNotificationsV3},
		{ID: "202611260110_idempotency_expiry_index", Migrate: migrateIdempotencyExpiryIndex, Rollback: rollbackIdempotencyExpiryIndex},
		{ID: "202611260120_support_attachments_teams", Migrate: migrateSupportAttachmentsTeamsV4, Rollback: rollbackSupportAttachmentsTeamsV4},
		{ID: "202611260130_support_knowledge_fulltext", Migrate: migrateKnowledgeFullText, Rollback: rollbackKnowledgeFullText},
		{ID: "202611260140_support_sla_policies", Migrate: migrateSupportSLAPoliciesV0140, Rollback: rollbackSupportSLAPoliciesV0140},
		{ID: "202611260150_support_sla_clocks", Migrate: migrateSupportSLAClocksV5, Rollback: rollbackSupportSLAClocksV5},
		{ID: "202611260160_sla_credits", Migrate: migrateSLACreditsV0160, Rollback: rollbackSLACreditsV0160},
		{ID: "202611260170_support_chat_integrations", Migrate: migrateSupportChatIntegrationsV0170, Rollback: rollbackSupportChatIntegrationsV0170},
		{ID: "202611261400_support_tracker_integrations", Migrate: migrateSupportTrackerV1400, Rollback: rollbackSupportTrackerV1400},
		{ID: "202611261500_telemetry_at_index", Migrate: migrateTelemetryAtIndex, Rollback: rollbackTelemetryAtIndex},
		{ID: "202611261800_analytics_report_definitions", Migrate: migrateAnalyticsReportsV1800, Rollback: rollbackAnalyticsReportsV1800},
		{ID: "202611261900_allocation_active_indexes", Migrate: migrateAllocationActiveIndexes, Rollback: rollbackAllocationActiveIndexes},
		{ID: "202611272000_staff_outside_provider", Migrate: migrateStaffOutsideProvider, Rollback: rollbackStaffOutsideProvider},
		{ID: "202611272100_keys_minted_across_tenants", Migrate: migrateKeysMintedAcrossTenants, Rollback: rollbackKeysMintedAcrossTenants},
	}
}

// IDs returns the IDs of the migrations, in the order they run. A database
// Run has brought to the newest version has exactly these recorded.
func IDs() []string {
	ms := migrations()
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

// migrationLockID is the PostgreSQL advisory lock that serialises migrations.
const migrationLockID = 7_202_611_220

// Run brings the schema to the newest version. It is safe to run on every
// start and from several processes at once: on PostgreSQL an advisory lock
// lets one process migrate while the others wait (SQLite serialises writers
// itself), and versions already applied are skipped.
func Run(ctx context.Context, db *gorm.DB) error {
	return run(ctx, db, func(m *gormigrate.Gormigrate) error { return m.Migrate() })
}

// run runs apply on a gormigrate of the migrations, under the lock.
func run(ctx context.Context, db *gorm.DB, apply func(*gormigrate.Gormigrate) error) error {
	scoped := models.Scoped(ctx, db, models.SystemScope())
	if models.IsSQLite(db) {
		return apply(gormigrate.New(scoped, gormigrate.DefaultOptions, migrations()))
	}
	return scoped.Connection(func(pinned *gorm.DB) error {
		// A new session per call on the one pinned connection: gorm's
		// Connection hands over a handle whose statement would leak between calls.
		conn := pinned.Session(&gorm.Session{NewDB: true})
		if err := conn.Exec("SELECT pg_advisory_lock(?)", migrationLockID).Error; err != nil {
			return err
		}
		defer conn.Exec("SELECT pg_advisory_unlock(?)", migrationLockID)
		return apply(gormigrate.New(conn, gormigrate.DefaultOptions, migrations()))
	})
}
