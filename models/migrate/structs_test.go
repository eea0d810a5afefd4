package migrate_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/quotes"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
)

// domainTypes lists every domain type stored in a table of its own. It is
// the one place these tests name the domain types: when a type moves to
// another package, only this list changes; when a migration creates a
// table, its type joins the list.
func domainTypes() []any {
	return []any{
		&models.Organization{}, &identity.User{}, &models.BillingAccount{}, &identity.APIKey{}, &models.IdempotencyRecord{},
		&catalog.CatalogCategory{}, &catalog.CatalogService{}, &models.RateLimitSuspension{},
		&catalog.ServiceableLocation{}, &catalog.LocationCapacity{}, &catalog.ProvisioningTemplate{}, &catalog.InventoryAllocation{},
		&services.Service{}, &operations.Operation{}, &telemetry.TelemetrySample{}, &eventlog.Event{},
		&eventlog.WebhookSubscription{}, &eventlog.WebhookDelivery{}, &eventlog.WebhookAttempt{},
		&identity.SigningKey{}, &identity.RevokedToken{}, &identity.ServerSecret{}, &identity.OAuthClient{}, &identity.OAuthToken{},
		&identity.DeviceGrant{}, &identity.MFAEnrollment{}, &identity.MFABackupCode{}, &identity.MFAChallenge{}, &identity.MFAPhone{},
		&identity.ClientCertificate{}, &identity.SAMLRequest{}, &identity.PortalSession{}, &identity.AuditEvent{},
		&automation.BulkItem{}, &automation.ServiceChange{}, &automation.OrchestrationDefinition{},
		&billing.PaymentMethod{}, &billing.BillingSequence{}, &billing.Invoice{}, &billing.InvoiceLine{}, &billing.InvoiceDispute{},
		&billing.Payment{}, &billing.Subscription{}, &billing.UsageRecord{}, &billing.Budget{}, &billing.BudgetAlert{}, &billing.SLACredit{},
		&catalog.NumberBlock{}, &quotes.Quote{}, &eventlog.ContactNotification{}, &services.DataMigration{}, &telemetry.ServiceIncident{},
		&support.Category{}, &support.Subcategory{}, &support.SLATarget{}, &support.Ticket{}, &support.HistoryEntry{},
		&support.Comment{}, &support.RoutingRule{}, &support.Article{}, &support.Feedback{}, &support.TicketNotification{},
		&support.Attachment{}, &support.Team{}, &support.TeamMember{}, &support.Clock{}, &support.Segment{}, &support.Escalation{},
		&support.Calendar{}, &support.Holiday{}, &support.SLAPolicy{}, &support.SLAPolicyTarget{},
		&support.ChatIntegration{}, &support.TrackerIntegration{}, &support.TrackerLink{}, &support.TrackerComment{},
		&reports.Definition{},
	}
}

// tablesWithoutDomainType returns the tables no exported domain type
// describes: gormigrate's record of applied migrations, the support ticket
// number counter (an unexported type of its package) and, on SQLite, the
// knowledge base's FTS5 index with its shadow tables (kept by triggers).
func tablesWithoutDomainType() []string {
	return []string{"migrations", "support_counters", "support_articles_fts", "support_articles_fts_data", "support_articles_fts_idx",
		"support_articles_fts_content", "support_articles_fts_docsize", "support_articles_fts_config"}
}

// maintainedByDatabase reports whether a line of schemaOf describes a
// column or an index the database computes itself, which no field of a
// domain type mirrors: the knowledge base's full-text tsvector (a stored
// generated column) and its GIN index, on PostgreSQL.
func maintainedByDatabase(line string) bool {
	return strings.HasPrefix(line, "column support_articles.search ") || strings.HasPrefix(line, "index support_articles.idx_support_articles_search ")
}

// parsed returns the GORM schema of each domain type, by table.
func parsed(t *testing.T, db *gorm.DB) map[string]*schema.Schema {
	t.Helper()
	cache := &sync.Map{}
	byTable := map[string]*schema.Schema{}
	for _, model := range domainTypes() {
		s, err := schema.Parse(model, cache, db.NamingStrategy)
		if err != nil {
			t.Fatalf("%T: %v", model, err)
		}
		if _, dup := byTable[s.Table]; dup {
			t.Fatalf("two domain types in the list are stored in %s", s.Table)
		}
		byTable[s.Table] = s
	}
	return byTable
}

// TestDomainTypesHaveTheirColumns migrates a database and checks, for every
// domain type, that its table has a column for each of its fields, NOT NULL
// where the field says so and in the primary key where the field is; and
// that every table the migrations create is described by a domain type of
// the list. A field added to a type without a migration fails here.
func TestDomainTypesHaveTheirColumns(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	if err := migrate.Run(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	m := db.Migrator()
	types := parsed(t, db)
	for table, s := range types {
		if !m.HasTable(table) {
			t.Errorf("%s: no table %s", s.Name, table)
			continue
		}
		columns, err := m.ColumnTypes(table)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]gorm.ColumnType{}
		for _, c := range columns {
			byName[c.Name()] = c
		}
		for _, f := range s.Fields {
			if f.DBName == "" {
				continue
			}
			c, ok := byName[f.DBName]
			if !ok {
				t.Errorf("%s.%s: no column %s.%s", s.Name, f.Name, table, f.DBName)
				continue
			}
			if nullable, ok := c.Nullable(); ok && f.NotNull && nullable {
				t.Errorf("%s.%s: column %s.%s accepts NULL", s.Name, f.Name, table, f.DBName)
			}
			if pk, ok := c.PrimaryKey(); ok && pk != f.PrimaryKey {
				t.Errorf("%s.%s: column %s.%s primary key %v, field %v", s.Name, f.Name, table, f.DBName, pk, f.PrimaryKey)
			}
		}
	}
	tables, err := m.GetTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if _, ok := types[table]; !ok && !strings.HasPrefix(table, "sqlite_") && !slices.Contains(tablesWithoutDomainType(), table) {
			t.Errorf("table %s has no domain type in domainTypes()", table)
		}
	}
}

// TestDomainTypesMatchTheMigrations compares the tables the migrations
// create with the tables GORM would create from today's domain types
// (AutoMigrate on an empty database): same columns with the same types,
// nullability and defaults, same indexes. A change of a field's tag (size,
// index, default...) without a migration fails here, and so does a
// migration that leaves a table different from its type.
func TestDomainTypesMatchTheMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	migrated := openDB(t)
	if err := migrate.Run(ctx, migrated); err != nil {
		t.Fatal(err)
	}
	fromTypes := openDB(t)
	if err := models.Scoped(ctx, fromTypes, models.SystemScope()).AutoMigrate(domainTypes()...); err != nil {
		t.Fatal(err)
	}
	types := parsed(t, fromTypes)
	var got []string
	for _, line := range schemaOf(t, migrated) {
		if _, ok := types[tableOf(line)]; ok && !maintainedByDatabase(line) {
			got = append(got, line)
		}
	}
	requireSameSchema(t, schemaOf(t, fromTypes), got)
}

// tableOf returns the table a line of schemaOf describes.
func tableOf(line string) string {
	_, rest, _ := strings.Cut(line, " ")
	name, _, _ := strings.Cut(rest, " ")
	table, _, _ := strings.Cut(name, ".")
	return table
}
