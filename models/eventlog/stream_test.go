package eventlog_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/testenv"
)

// near reports whether a and b are within tolerance of each other.
func near(a, b time.Time, tolerance time.Duration) bool {
	d := a.Sub(b)
	return d < tolerance && d > -tolerance
}

// TestStreamHorizonMaxLag: with no writer open the horizon is settle
// before now. On PostgreSQL a transaction that has written holds it at
// settle before its start, until the transaction is older than the
// maximum lag: then the horizon is the maximum lag before now, and Capped
// says so (with no maximum lag, the transaction holds it still).
func TestStreamHorizonMaxLag(t *testing.T) {
	store := testenv.Store(t)
	events := eventlog.NewStore(store)
	ctx := context.Background()
	const settle, maxLag, tolerance = 50 * time.Millisecond, time.Second, 300 * time.Millisecond

	hz, err := events.StreamHorizon(ctx, settle, maxLag)
	if err != nil || hz.Capped || !hz.Oldest.IsZero() || !near(hz.Until, store.Now().Add(-settle), tolerance) {
		t.Fatalf("no open writer: %+v %v", hz, err)
	}
	if store.DB.Dialector.Name() != "postgres" {
		return // SQLite: one writer at a time, nothing to wait for
	}
	tx := store.DB.Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	defer tx.Rollback()
	if err := tx.Exec("SELECT txid_current()").Error; err != nil { // a transaction id, as a write gets
		t.Fatal(err)
	}
	started := store.Now()
	hz, err = events.StreamHorizon(ctx, settle, maxLag)
	if err != nil || hz.Capped || !near(hz.Oldest, started, tolerance) || !hz.Until.Equal(hz.Oldest.Add(-settle)) {
		t.Fatalf("a young open writer: %+v %v (began about %s)", hz, err, started)
	}
	time.Sleep(maxLag + 200*time.Millisecond)
	hz, err = events.StreamHorizon(ctx, settle, maxLag)
	now := store.Now()
	if err != nil || !hz.Capped || !near(hz.Oldest, started, tolerance) || !hz.Until.After(hz.Oldest) || !near(hz.Until, now.Add(-maxLag), tolerance) {
		t.Fatalf("a writer open longer than the maximum lag: %+v %v (now %s)", hz, err, now)
	}
	hz, err = events.StreamHorizon(ctx, settle, 0)
	if err != nil || hz.Capped || !hz.Until.Equal(hz.Oldest.Add(-settle)) {
		t.Fatalf("no maximum lag: %+v %v", hz, err)
	}
}
