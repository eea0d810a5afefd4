package migrate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/testenv"
	"gorm.io/gorm"
)

// freshSchema returns the schema of a database migrated in one go.
func freshSchema(t *testing.T) []string {
	t.Helper()
	db := openDB(t)
	if err := migrate.Run(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return schemaOf(t, db)
}

// recordedIDs returns the migration IDs db has recorded, sorted.
func recordedIDs(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	var ids []string
	if err := db.Raw("SELECT id FROM migrations").Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// sorted returns a sorted copy of ids.
func sorted(ids []string) []string {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

// TestUpgradeFromTheFirstMigration builds a database as the first release
// left it (migrated up to the first migration only), stores an
// organization, a user, a billing account, an API key and an idempotent
// answer in it, upgrades it to the newest version and checks that its
// schema is the schema of a database migrated in one go, that the rows are
// still there with the defaults of the columns added since, and that the
// stored answer is gone (migration 202611260020 drops answers stored in
// clear).
func TestUpgradeFromTheFirstMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ids := migrate.IDs()
	fresh := freshSchema(t)
	for _, table := range []string{"organizations", "services", "invoices", "support_tickets", "support_ticket_notifications"} {
		if !slices.Contains(fresh, "table "+table) {
			t.Fatalf("a fresh database has no table %s", table)
		}
	}

	db := openDB(t)
	if err := migrate.RunTo(ctx, db, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := recordedIDs(t, db); !slices.Equal(got, ids[:1]) {
		t.Fatalf("recorded after the first migration: %v", got)
	}
	now := time.Now().UTC().Truncate(time.Second)
	sys := models.Scoped(ctx, db, models.SystemScope())
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO organizations (id, name, plan, customer_id, provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			[]any{"org_old", "Old Org", "business", "CUST-1", false, now, now}},
		{"INSERT INTO users (id, organization_id, email, name, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"usr_old", "org_old", "old@example.com", "Old User", "customer", "hash", now, now}},
		// Staff of a customer organization (migration 2000 demotes them) and of the provider (kept).
		{"INSERT INTO users (id, organization_id, email, name, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"usr_old_admin", "org_old", "old-admin@example.com", "Old Admin", "admin", "hash", now, now}},
		{"INSERT INTO organizations (id, name, plan, customer_id, provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			[]any{"org_prov", "Provider", "enterprise", "CUST-P", true, now, now}},
		{"INSERT INTO users (id, organization_id, email, name, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"usr_prov_agent", "org_prov", "agent@provider.example", "Agent", "agent", "hash", now, now}},
		{"INSERT INTO billing_accounts (id, organization_id, environment, name, currency, billing_email, billing_cycle, auto_pay, payment_method_id, invoice_delivery, balance, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"acct_old", "org_old", "live", "Old Account", "USD", "billing@example.com", "monthly", true, "", "email", 1234, now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_old", "org_old", "live", "Old Key", "sk_live_ab", "h-old", "customer", `["*"]`, 0, 0, 7, now, now}},
		// Keys a customer organization's (escalated) user minted in another
		// tenant, and a key minted by such a key: migration 2100 revokes
		// them; the key the same user minted in its own organization stays.
		{"INSERT INTO organizations (id, name, plan, customer_id, provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			[]any{"org_victim", "Victim", "business", "CUST-V", false, now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_cross", "org_victim", "live", "Minted across", "sk_live_cd", "h-cross", "customer", `["*"]`, 0, 0, 0, "usr_old_admin", now, now}},
		// One the victim already revoked, and a key it had minted before.
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, revoked_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_cross_revoked", "org_victim", "live", "Revoked", "sk_live_kl", "h-cross-revoked", "customer", `["*"]`, 0, 0, 0, "usr_old_admin", now, now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_chain_of_revoked", "org_victim", "live", "Minted by the revoked", "sk_live_mn", "h-chain-revoked", "customer", `["*"]`, 0, 0, 0, "ak_cross_revoked", now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_chain", "org_victim", "live", "Minted by it", "sk_live_ef", "h-chain", "customer", `["*"]`, 0, 0, 0, "ak_cross", now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_own", "org_old", "live", "Own", "sk_live_gh", "h-own", "customer", `["*"]`, 0, 0, 0, "usr_old_admin", now, now}},
		{"INSERT INTO api_keys (id, organization_id, environment, name, display_prefix, hash, role, permissions, requests_per_minute, burst_limit, usage_count, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"ak_staff", "org_victim", "live", "By staff", "sk_live_ij", "h-staff", "customer", `["*"]`, 0, 0, 0, "usr_prov_agent", now, now}},
		{"INSERT INTO idempotency_records (scope_key, request_hash, done, status, body, locked_until, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{"old-scope", "h", true, 201, []byte("sk_live_secret"), now, now.Add(time.Hour), now}},
	} {
		if err := sys.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if missing, extra := schemaDiff(fresh, schemaOf(t, db)); len(missing) == 0 || !slices.Equal(extra, []string{
		"column idempotency_records.body type=" + blobType(db) + " null=true pk=false default=(none)"}) {
		t.Fatalf("after the first migration: %d lines missing, extra %q (want many missing, only the clear body extra)", len(missing), extra)
	}

	if err := migrate.Run(ctx, db); err != nil {
		t.Fatal(err)
	}
	requireSameSchema(t, fresh, schemaOf(t, db))
	if got := recordedIDs(t, db); !slices.Equal(got, sorted(ids)) {
		t.Fatalf("recorded after the upgrade: %v", got)
	}

	var org struct {
		Name, CustomerID string
		CustomHourly     int
		AccessPolicy     *string
	}
	if err := sys.Raw("SELECT name, customer_id, custom_hourly, access_policy FROM organizations WHERE id = ?", "org_old").Scan(&org).Error; err != nil ||
		org.Name != "Old Org" || org.CustomerID != "CUST-1" || org.CustomHourly != 0 || org.AccessPolicy != nil {
		t.Fatalf("organization after the upgrade: %+v %v", org, err)
	}
	var user struct {
		Email        string
		FailedLogins int
		Permissions  *string
	}
	if err := sys.Raw("SELECT email, failed_logins, permissions FROM users WHERE id = ?", "usr_old").Scan(&user).Error; err != nil ||
		user.Email != "old@example.com" || user.FailedLogins != 0 || user.Permissions != nil {
		t.Fatalf("user after the upgrade: %+v %v", user, err)
	}
	for id, want := range map[string]string{"usr_old_admin": "customer", "usr_prov_agent": "agent", "usr_old": "customer"} {
		var role string
		if err := sys.Raw("SELECT role FROM users WHERE id = ?", id).Scan(&role).Error; err != nil || role != want {
			t.Fatalf("%s after the upgrade: role %q %v, want %q", id, role, err, want)
		}
	}
	var account struct {
		Balance   int64
		TaxRateBP int
		AutoPay   bool
	}
	if err := sys.Raw("SELECT balance, tax_rate_bp, auto_pay FROM billing_accounts WHERE id = ?", "acct_old").Scan(&account).Error; err != nil ||
		account.Balance != 1234 || account.TaxRateBP != 0 || !account.AutoPay {
		t.Fatalf("billing account after the upgrade: %+v %v", account, err)
	}
	var key struct {
		Hash       string
		UsageCount int64
	}
	if err := sys.Raw("SELECT hash, usage_count FROM api_keys WHERE id = ?", "ak_old").Scan(&key).Error; err != nil ||
		key.Hash != "h-old" || key.UsageCount != 7 {
		t.Fatalf("API key after the upgrade: %+v %v", key, err)
	}
	for id, revoked := range map[string]bool{"ak_cross": true, "ak_chain": true, "ak_cross_revoked": true, "ak_chain_of_revoked": true,
		"ak_own": false, "ak_staff": false, "ak_old": false} {
		var n int64
		if err := sys.Raw("SELECT COUNT(*) FROM api_keys WHERE id = ? AND revoked_at IS NOT NULL", id).Scan(&n).Error; err != nil || (n == 1) != revoked {
			t.Fatalf("%s after the upgrade: revoked %v %v, want %v", id, n == 1, err, revoked)
		}
	}
	var answers int64
	if err := sys.Raw("SELECT COUNT(*) FROM idempotency_records").Scan(&answers).Error; err != nil || answers != 0 {
		t.Fatalf("stored answers after the upgrade: %d %v", answers, err)
	}
}

// blobType is the type of a []byte column in db.
func blobType(db *gorm.DB) string {
	if models.IsSQLite(db) {
		return "blob"
	}
	return "bytea"
}

// TestEveryStopUpgradesToTheSameSchema stops a database after each
// migration (on PostgreSQL after a sample of them: the first, one in the
// middle and the last but one), then migrates it to the newest version: its
// schema must be the schema of a database migrated in one go.
func TestEveryStopUpgradesToTheSameSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ids := migrate.IDs()
	fresh := freshSchema(t)
	stops := ids[:len(ids)-1]
	if testenv.IsPostgres() {
		stops = []string{ids[0], ids[len(ids)/2], ids[len(ids)-2]}
	}
	for _, stop := range stops {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			db := openDB(t)
			if err := migrate.RunTo(ctx, db, stop); err != nil {
				t.Fatal(err)
			}
			want := sorted(ids[:slices.Index(ids, stop)+1])
			if got := recordedIDs(t, db); !slices.Equal(got, want) {
				t.Fatalf("recorded after stopping: %v, want %v", got, want)
			}
			if err := migrate.Run(ctx, db); err != nil {
				t.Fatal(err)
			}
			requireSameSchema(t, fresh, schemaOf(t, db))
		})
	}
}

// TestRollbackToTheFirstMigration rolls a migrated database back to the
// first migration: its schema must be the schema of a database migrated
// only to the first migration; migrated again, the schema of a database
// migrated in one go (a rollback that loses an index fails here).
func TestRollbackToTheFirstMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ids := migrate.IDs()
	fresh := freshSchema(t)
	first := openDB(t)
	if err := migrate.RunTo(ctx, first, ids[0]); err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if err := migrate.Run(ctx, db); err != nil {
		t.Fatal(err)
	}
	if err := migrate.RollbackTo(ctx, db, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := recordedIDs(t, db); !slices.Equal(got, ids[:1]) {
		t.Fatalf("recorded after the rollback: %v", got)
	}
	requireSameSchema(t, schemaOf(t, first), schemaOf(t, db))
	if err := migrate.Run(ctx, db); err != nil {
		t.Fatal(err)
	}
	requireSameSchema(t, fresh, schemaOf(t, db))
}
