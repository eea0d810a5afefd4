package testenv

import (
	"bytes"
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/migrate"
	"github.com/telcoplatform/platform/models/support"
)

// Store returns a models.Store on a fresh, migrated database private to t
// (see DatabaseURL: an SQLite file, or a PostgreSQL database when
// TEST_DATABASE_URL is set), closed when t finishes. It seals secrets with a
// fixed 32-byte test key.
func Store(t testing.TB) *models.Store {
	t.Helper()
	ctx := context.Background()
	db, err := models.Open(ctx, DatabaseURL(t), nil)
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
func SeededStore(t testing.TB) (*models.Store, *models.SeedResult) {
	t.Helper()
	store := Store(t)
	seeded, err := store.Seed(context.Background())
	if err != nil {
		t.Fatalf("testenv: seed database: %v", err)
	}
	if err := support.NewStore(store).Seed(context.Background()); err != nil {
		t.Fatalf("testenv: seed support categories: %v", err)
	}
	return store, seeded
}
