package models_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/testenv"
)

// TestOnWrites: every committed change of a watched table's rows is told
// once committed, whatever made it (GORM's update, upsert and delete, a
// raw statement), a transaction's at its commit only and never after a
// rollback (a nested transaction's savepoint included); reads, plain
// inserts (new rows) and writes of other tables are not told.
func TestOnWrites(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	scope := models.TenantScope("org_writes", models.EnvLive)
	var (
		mu   sync.Mutex
		told [][]string
	)
	take := func() [][]string {
		mu.Lock()
		defer mu.Unlock()
		out := told
		told = nil
		return out
	}
	if err := models.OnWrites(store.DB, []string{"services", "operations"}, func(_ context.Context, tables []string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, slices.Clone(tables))
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = models.OnWrites(store.DB, nil, nil) })
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: "acct_writes", Name: "Fiber", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational,
		OperationID: models.NewID(models.PrefixProvisioning), StatusChangedAt: time.Now().UTC()}
	want := func(step string, expected ...[]string) {
		t.Helper()
		if got := take(); !slices.EqualFunc(got, expected, slices.Equal) {
			t.Fatalf("%s: told %v, want %v", step, got, expected)
		}
	}
	services1 := []string{"services"}

	if err := store.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	want("a plain insert (a new row)")
	var read services.Service
	if err := store.In(ctx, scope).Where("id = ?", svc.ID).Take(&read).Error; err != nil {
		t.Fatal(err)
	}
	want("a read")
	if err := store.In(ctx, scope).Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "Fiber 2").Error; err != nil {
		t.Fatal(err)
	}
	want("GORM update", services1)
	svc.Name = "Upserted"
	if err := store.In(ctx, scope).Clauses(clause.OnConflict{UpdateAll: true}).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	want("an upsert", services1)
	if err := store.DB.Exec("UPDATE operations SET status = status WHERE id = ?", "op_none").Error; err != nil {
		t.Fatal(err)
	}
	want("a raw statement", []string{"operations"})
	if err := store.DB.Exec("UPDATE organizations SET name = name WHERE id = ?", "org_none").Error; err != nil {
		t.Fatal(err)
	}
	want("another table")

	// A transaction: told once, at its commit, with every table it wrote.
	err := store.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "Fiber 3").Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE operations SET status = status WHERE id = ?", "op_none").Error; err != nil {
			return err
		}
		// A nested transaction (a savepoint) rolled back inside the outer one.
		_ = tx.Transaction(func(inner *gorm.DB) error {
			if err := inner.Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "Nested").Error; err != nil {
				return err
			}
			return errors.New("rolled back to the savepoint")
		})
		want("before the commit")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want("the commit", []string{"services", "operations"})
	if err := store.In(ctx, scope).Where("id = ?", svc.ID).Take(&read).Error; err != nil || read.Name != "Fiber 3" {
		t.Fatalf("after the commit: %q, %v (the savepoint's write must be undone)", read.Name, err)
	}
	want("a read")

	// A rollback: nothing is told.
	rollback := errors.New("rollback")
	err = store.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "Never").Error; err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	want("a rollback")

	if err := store.In(ctx, scope).Delete(&services.Service{}, "id = ?", svc.ID).Error; err != nil {
		t.Fatal(err)
	}
	want("GORM delete", services1)
}

// TestRowReaderTrustsVersions: a snapshot read under a known table
// version is returned without reading the row while the version is
// unchanged, it is younger than models.RowSnapshotMaxAge and the row is
// in the caller's scope; a new version, an unknown one, or another scope
// reads the row.
func TestRowReaderTrustsVersions(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	scope := models.TenantScope("org_versions", models.EnvLive)
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: "acct_versions", Name: "Fiber", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational,
		OperationID: models.NewID(models.PrefixProvisioning), StatusChangedAt: time.Now().UTC()}
	if err := store.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	reader := models.NewRowReader[services.Service](store)
	v1, v2 := models.RowVersion{Value: 1, Known: true}, models.RowVersion{Value: 2, Known: true}
	read := func(scope models.Scope, prev *models.RowSnapshot[services.Service], ver models.RowVersion) (*models.RowSnapshot[services.Service], error) {
		return reader.Read(ctx, scope, svc.ID, prev, ver)
	}
	first, err := read(scope, nil, v1)
	if err != nil {
		t.Fatal(err)
	}
	read1 := time.Now()
	// A change that no version tells.
	if err := store.DB.Exec("UPDATE services SET name = ? WHERE id = ?", "Untold", svc.ID).Error; err != nil {
		t.Fatal(err)
	}
	if got, err := read(scope, first, v1); err != nil || (got != first && time.Since(read1) < models.RowSnapshotMaxAge) {
		t.Fatalf("same version: %v, %v; want the kept snapshot, not read", got.Row.Name, err)
	}
	// Out of scope: read, and not found, whatever is kept.
	for _, other := range []models.Scope{models.TenantScope("org_other", models.EnvLive), models.TenantScope("org_versions", models.EnvTest)} {
		if _, err := read(other, first, v1); !errors.Is(err, gorm.ErrRecordNotFound) {
			t.Fatalf("read in %+v: %v, want not found", other, err)
		}
	}
	for name, ver := range map[string]models.RowVersion{"a new version": v2, "an unknown version": {}} {
		got, err := read(scope, first, ver)
		if err != nil || got.Row.Name != "Untold" {
			t.Fatalf("%s: %v, %v; want the row read again", name, got, err)
		}
	}
	// Older than the bound: read again, even under the same version.
	second, err := read(scope, nil, v1)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.DB.Exec("UPDATE services SET name = ? WHERE id = ?", "Later", svc.ID).Error; err != nil {
		t.Fatal(err)
	}
	time.Sleep(models.RowSnapshotMaxAge)
	if got, err := read(scope, second, v1); err != nil || got.Row.Name != "Later" {
		t.Fatalf("after %v: %v, %v; want the row read again", models.RowSnapshotMaxAge, got, err)
	}
}
