package testenv

import (
	"bytes"
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/models/support"
)

// Store returns a models.Store on a fresh, migrated database private to t
// (an SQLite file, or a PostgreSQL database when TEST_DATABASE_URL is set; see
// DatabaseURL), closed when t finishes. It seals secrets with a fixed 32-byte
// test key.
//
// The database is a copy of a template that was migrated once and is shared
// by the tests of every package (see templateKey): a PostgreSQL database
// created WITH TEMPLATE, or a copy of an SQLite file kept under
// os.TempDir(). migrate.Run still runs on the copy, where it only confirms
// that every migration is recorded.
func Store(t testing.TB) *models.Store {
	t.Helper()
	return storeFromTemplate(t, templateKey())
}

// storeFromTemplate is Store on a copy of the template named by key.
func storeFromTemplate(t testing.TB, key string) *models.Store {
	t.Helper()
	ctx := context.Background()
	db, err := models.Open(ctx, migratedDatabaseURL(t, key), nil)
	if err != nil {
		t.Fatalf("testenv: open database: %v", err)
	}
	t.Cleanup(func() { _ = models.Close(db) })
	if err := migrate.Run(ctx, db); err != nil {
		t.Fatalf("testenv: migrate database: %v", err)
	}
	sealer, err := models.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatalf("testenv: sealer: %v", err)
	}
	return models.NewStore(db, sealer)
}

// SeededStore returns a Store after models.Store.Seed (catalog, provider and
// demo tenant) and the support seed (categories and SLA targets), and what
// models.Store.Seed returned.
func SeededStore(t testing.TB) (*models.Store, *seed.SeedResult) {
	t.Helper()
	store := Store(t)
	seeded, err := seed.NewStore(store).Seed(context.Background())
	if err != nil {
		t.Fatalf("testenv: seed database: %v", err)
	}
	if err := support.NewStore(store).Seed(context.Background()); err != nil {
		t.Fatalf("testenv: seed support categories: %v", err)
	}
	return store, seeded
}
