package models_test

import (
	"context"
	"testing"

	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/testenv"
)

// TestIdempotencyMigrationDropsClearAnswers: a database from before
// 202611260020 (answers in a clear body column) loses those answers and
// that column; answers stored afterwards are sealed and scoped to the
// credential.
func TestIdempotencyMigrationDropsClearAnswers(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	db := models.Scoped(ctx, store.DB, models.SystemScope())
	blob := "BYTEA"
	if models.IsSQLite(db) {
		blob = "BLOB"
	}
	// The schema and a row as the previous release left them.
	if err := db.Exec("ALTER TABLE ? ADD COLUMN ? "+blob, clause.Table{Name: "idempotency_records"}, clause.Column{Name: "body"}).Error; err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO idempotency_records (scope_key, request_hash, done, status, body, body_sealed) VALUES ('old', 'h', true, 201, 'sk_live_secret', '')",
		"DELETE FROM migrations WHERE id = '202611260020_idempotency_sealed_answers'",
	} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := migrate.Run(ctx, store.DB); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Model(&models.IdempotencyRecord{}).Count(&n).Error; err != nil || n != 0 {
		t.Fatalf("old answers kept: %d %v", n, err)
	}
	if db.Migrator().HasColumn(&models.IdempotencyRecord{}, "body") {
		t.Fatal("the clear body column is still there")
	}

	key := models.IdempotencyScope{PrincipalKind: models.PrincipalAPIKey, PrincipalID: "ak_1", OrganizationID: "org_1",
		Environment: models.EnvLive, Method: "POST", Path: "/v1/auth/api-keys", Key: "k"}
	if got, err := store.BeginIdempotent(ctx, key, "h"); err != nil || got != nil {
		t.Fatalf("begin: %v %v", got, err)
	}
	if err := store.CompleteIdempotent(ctx, key, models.IdempotentAnswer{Status: 201, ContentType: "application/json", Body: []byte(`{"key":"sk_live_secret"}`)}); err != nil {
		t.Fatal(err)
	}
	var rec models.IdempotencyRecord
	if err := db.Take(&rec).Error; err != nil || rec.BodySealed == "" || rec.Status != 201 {
		t.Fatalf("stored %+v %v", rec, err)
	}
	got, err := store.BeginIdempotent(ctx, key, "h")
	if err != nil || got == nil || string(got.Body) != `{"key":"sk_live_secret"}` {
		t.Fatalf("replay %+v %v", got, err)
	}
	other := key
	other.PrincipalID = "ak_2"
	if got, err := store.BeginIdempotent(ctx, other, "h"); err != nil || got != nil {
		t.Fatalf("another credential found the answer: %+v %v", got, err)
	}
}
