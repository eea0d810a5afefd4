package models_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// countReads counts the statements that read table on s's database until
// the test ends.
func countReads(t *testing.T, s *models.Store, tables ...string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	name := "test:count_reads_" + t.Name() + "_" + strings.Join(tables, "_")
	if err := s.DB.Callback().Query().After("gorm:query").Register(name, func(db *gorm.DB) {
		for _, table := range tables {
			if db.Statement.Table == table {
				n.Add(1)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DB.Callback().Query().Remove(name) })
	return &n
}

// TestReferenceDataKept: the catalog's offers, templates and locations are
// read once per catalog.ReferenceTTL, not per lookup; what a lookup hands
// out is a copy; a change of the tables shows within the TTL; what
// changes with orders (capacity) is read on every check.
func TestReferenceDataKept(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	// The Memo's clock stands still until the test moves it.
	var elapsed atomic.Int64
	start := time.Now()
	s.Memo = models.NewMemo(func() time.Time { return start.Add(time.Duration(elapsed.Load())) })
	cs := catalog.NewStore(s)
	reference := countReads(t, s, "catalog_services", "provisioning_templates", "serviceable_locations")
	capacity := countReads(t, s, "location_capacities")

	lookups := func() {
		t.Helper()
		if _, err := cs.Template(ctx, models.EnvLive, "internet-dedicated-1g"); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.LocationByID(ctx, models.EnvLive, "location_id", "loc_austin_congress"); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CheckAvailability(ctx, models.TenantScope("", models.EnvLive), catalog.AvailabilityQuery{LocationID: "loc_austin_congress"}); err != nil {
			t.Fatal(err)
		}
	}
	lookups()
	first := reference.Load()
	if first != 3 {
		t.Fatalf("the first lookups read the reference tables in %d statements, want 3 (one per table)", first)
	}
	for range 5 {
		lookups()
	}
	if n := reference.Load(); n != first {
		t.Fatalf("later lookups read the reference tables again (%d statements, want %d)", n, first)
	}
	// Another catalog store on the same core, and one on a copy of it bound
	// to a transaction, read what the first kept.
	if _, err := catalog.NewStore(s).Template(ctx, models.EnvLive, "internet-dedicated-1g"); err != nil {
		t.Fatal(err)
	}
	if err := s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		_, err := catalog.NewStore(s.Bound(tx)).CatalogServiceByID(ctx, "internet-fiber-dedicated")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := reference.Load(); n != first {
		t.Fatalf("other stores on the same core read the reference tables again (%d statements, want %d)", n, first)
	}
	if n := capacity.Load(); n != 6 {
		t.Fatalf("6 availability checks read capacity %d times, want 6", n)
	}

	// Unknown and sandbox-only entries answer as before.
	if _, err := cs.Template(ctx, models.EnvLive, "no-such-template"); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("unknown template: %v", err)
	}
	if _, err := cs.LocationByID(ctx, models.EnvLive, "location_id", "loc_sandbox_all"); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("a sandbox location from live: %v", err)
	}
	if _, err := cs.LocationByID(ctx, models.EnvTest, "location_id", "loc_sandbox_all"); err != nil {
		t.Fatalf("a sandbox location from the sandbox: %v", err)
	}
	if _, err := cs.CatalogServiceByID(ctx, "no-such-offer"); models.ErrorCode(err) != models.CodeNotFound {
		t.Fatalf("unknown offer: %v", err)
	}

	// A caller that changes what it was handed changes nothing kept.
	offer, err := cs.CatalogServiceByID(ctx, "internet-fiber-dedicated")
	if err != nil || len(offer.BandwidthOptions) == 0 {
		t.Fatalf("offer %+v, %v", offer, err)
	}
	want := offer.BandwidthOptions[0]
	offer.BandwidthOptions[0], offer.Name = "changed", "changed"
	again, _ := cs.CatalogServiceByID(ctx, "internet-fiber-dedicated")
	if again.BandwidthOptions[0] != want || again.Name == "changed" {
		t.Fatalf("a change of a handed-out offer reached the kept one: %+v", again)
	}

	// A change of the tables shows once what was kept is ReferenceTTL old.
	if err := s.In(ctx, models.SystemScope()).Model(&catalog.ProvisioningTemplate{}).Where("id = ?", "internet-dedicated-1g").
		Update("name", "Renamed template").Error; err != nil {
		t.Fatal(err)
	}
	tpl, err := cs.Template(ctx, models.EnvLive, "internet-dedicated-1g")
	if err != nil || tpl.Name == "Renamed template" {
		t.Fatalf("within the TTL: %+v, %v; want the kept template", tpl, err)
	}
	elapsed.Add(int64(catalog.ReferenceTTL))
	if tpl, err = cs.Template(ctx, models.EnvLive, "internet-dedicated-1g"); err != nil || tpl.Name != "Renamed template" {
		t.Fatalf("after the TTL: %+v, %v; want the renamed template", tpl, err)
	}
	if n := reference.Load(); n != 2*first {
		t.Fatalf("%d statements, want %d: one more read of the reference tables", n, 2*first)
	}
}

// TestMemo: a kept value is handed out until its TTL ends, then read
// again; an error is not kept; a nil Memo keeps nothing.
func TestMemo(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	m := models.NewMemo(func() time.Time { return time.Unix(0, now.Load()) })
	var loads int
	load := func(context.Context) (int, error) { loads++; return loads, nil }
	for range 3 {
		if v, err := models.Kept(ctx, m, "k", time.Hour, load); err != nil || v != 1 {
			t.Fatalf("kept value %d, %v; want 1", v, err)
		}
	}
	if v, _ := models.Kept(ctx, m, "other", time.Hour, load); v != 2 {
		t.Fatalf("another key's value %d, want a load of its own (2)", v)
	}
	if v, _ := models.Kept(ctx, m, "gone", 0, load); v != 3 {
		t.Fatalf("value %d, want 3", v)
	}
	if v, _ := models.Kept(ctx, m, "gone", 0, load); v != 4 {
		t.Fatalf("an expired value was handed out (%d), want a new load (4)", v)
	}
	failing := func(context.Context) (int, error) { return 0, errors.New("down") }
	if _, err := models.Kept(ctx, m, "bad", time.Hour, failing); err == nil {
		t.Fatal("the load's error was not returned")
	}
	if v, err := models.Kept(ctx, m, "bad", time.Hour, load); err != nil || v != 5 {
		t.Fatalf("after an error: %d, %v; want a new load (5)", v, err)
	}
	// Of two loads under way at once, the one that began later is kept.
	now.Add(int64(time.Hour))
	outer := func(ctx context.Context) (string, error) {
		now.Add(int64(time.Minute))
		inner, err := models.Kept(ctx, m, "race", time.Hour, func(context.Context) (string, error) { return "later", nil })
		if err != nil || inner != "later" {
			t.Fatalf("inner load: %q, %v", inner, err)
		}
		return "earlier", nil
	}
	if v, _ := models.Kept(ctx, m, "race", time.Hour, outer); v != "earlier" {
		t.Fatalf("the outer load returned %q, want its own value", v)
	}
	if v, _ := models.Kept(ctx, m, "race", time.Hour, func(context.Context) (string, error) { return "reloaded", nil }); v != "later" {
		t.Fatalf("kept %q, want the load that began later", v)
	}
	var none *models.Memo
	if v, _ := models.Kept(ctx, none, "k", time.Hour, load); v != 6 {
		t.Fatalf("a nil Memo handed out %d, want a load (6)", v)
	}
	if v, _ := models.Kept(ctx, none, "k", time.Hour, load); v != 7 {
		t.Fatalf("a nil Memo kept a value (%d), want a load (7)", v)
	}
}
