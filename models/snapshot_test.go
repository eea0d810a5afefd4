package models_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/testenv"
)

// TestRowReaderSnapshots: a read of an unchanged row returns the earlier
// snapshot itself; any change of the row (a GORM update, a raw statement
// that leaves updated_at alone, a JSON column, a NULL column set) gives a
// new snapshot decoded from the new values, as GORM's own read decodes
// it; the read is scoped like every other (another tenant, the other
// environment: not found; staff and system scopes see the row); a read
// inside a transaction carried by the context sees the transaction's
// writes.
func TestRowReaderSnapshots(t *testing.T) {
	ctx := context.Background()
	store := testenv.Store(t)
	scope := models.TenantScope("org_snapshot", models.EnvLive)
	now := time.Now().UTC()
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: "acct_snapshot", Name: "Fiber", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), StatusChangedAt: now,
		Configuration: map[string]any{"qos_profile": "standard"}, Features: []string{"ddos"}}
	if err := store.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	reader := models.NewRowReader[services.Service](store)
	read := func(scope models.Scope, prev *models.RowSnapshot[services.Service]) *models.RowSnapshot[services.Service] {
		t.Helper()
		snap, err := reader.Read(ctx, scope, svc.ID, prev, models.RowVersion{})
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	// decodedAsGORM checks that the snapshot's row is what GORM's Take reads.
	decodedAsGORM := func(snap *models.RowSnapshot[services.Service]) {
		t.Helper()
		var want services.Service
		if err := store.In(ctx, scope).Where("id = ?", svc.ID).Take(&want).Error; err != nil {
			t.Fatal(err)
		}
		got := *snap.Row
		if got.Name != want.Name || got.Status != want.Status || got.Configuration["qos_profile"] != want.Configuration["qos_profile"] ||
			len(got.Features) != len(want.Features) || !got.UpdatedAt.Equal(want.UpdatedAt) || (got.ActivatedAt == nil) != (want.ActivatedAt == nil) ||
			got.OrganizationID != want.OrganizationID || got.Environment != want.Environment || got.VLANID != want.VLANID {
			t.Fatalf("snapshot row %+v\nGORM reads %+v", got, want)
		}
	}

	first := read(scope, nil)
	decodedAsGORM(first)
	if again := read(scope, first); again.Row != first.Row {
		t.Fatal("an unchanged row gave a new snapshot")
	}

	changes := []struct {
		name   string
		change func() error
		check  func(*services.Service) bool
	}{
		{"a GORM update", func() error {
			return store.In(ctx, scope).Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "Fiber 2").Error
		}, func(s *services.Service) bool { return s.Name == "Fiber 2" }},
		{"a raw statement leaving updated_at alone", func() error {
			return store.DB.Exec("UPDATE services SET status = ? WHERE id = ?", "degraded", svc.ID).Error
		}, func(s *services.Service) bool { return s.Status == services.ServiceDegraded }},
		{"a JSON column", func() error {
			return store.DB.Exec("UPDATE services SET configuration = ? WHERE id = ?", `{"qos_profile":"premium"}`, svc.ID).Error
		}, func(s *services.Service) bool { return s.Configuration["qos_profile"] == "premium" }},
		{"a NULL column set", func() error {
			return store.DB.Exec("UPDATE services SET activated_at = updated_at WHERE id = ?", svc.ID).Error
		}, func(s *services.Service) bool { return s.ActivatedAt != nil }},
		{"an integer column", func() error {
			return store.DB.Exec("UPDATE services SET vlan_id = 42 WHERE id = ?", svc.ID).Error
		}, func(s *services.Service) bool { return s.VLANID == 42 }},
	}
	prev := first
	for _, c := range changes {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		snap := read(scope, prev)
		if snap.Row == prev.Row || !c.check(snap.Row) {
			t.Fatalf("%s: not seen by the next read (%+v)", c.name, *snap.Row)
		}
		decodedAsGORM(snap)
		if again := read(scope, snap); again.Row != snap.Row {
			t.Fatalf("%s: a second read of the unchanged row gave a new snapshot", c.name)
		}
		prev = snap
	}

	// Scoping: as every read of the store.
	for _, other := range []models.Scope{models.TenantScope("org_other", models.EnvLive), models.TenantScope("org_snapshot", models.EnvTest)} {
		if _, err := reader.Read(ctx, other, svc.ID, prev, models.RowVersion{}); !errors.Is(err, gorm.ErrRecordNotFound) {
			t.Fatalf("read in %+v: %v, want not found", other, err)
		}
	}
	staff := models.Scope{OrganizationID: "org_provider", Environment: models.EnvLive, AllOrganizations: true}
	if got := read(staff, prev); got.Row != prev.Row {
		t.Fatal("a staff read of the unchanged row gave a new snapshot")
	}
	if got := read(models.SystemScope(), nil); got.Row.ID != svc.ID {
		t.Fatalf("system read: %+v", got.Row)
	}

	// Inside a transaction carried by the context: its own writes, then
	// the committed row again after a rollback.
	rollback := errors.New("rollback")
	err := store.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Model(&services.Service{}).Where("id = ?", svc.ID).Update("name", "In a transaction").Error; err != nil {
			return err
		}
		snap, err := reader.Read(models.WithTx(ctx, tx), scope, svc.ID, prev, models.RowVersion{})
		if err != nil {
			return err
		}
		if snap.Row == prev.Row || snap.Row.Name != "In a transaction" {
			t.Errorf("a read in the transaction does not see its write: %q", snap.Row.Name)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if got := read(scope, prev); got.Row != prev.Row {
		t.Fatalf("after the rollback: %q, want the committed row", got.Row.Name)
	}
}
