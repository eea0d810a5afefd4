package identity

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// KeyUsage counts API-key use in memory and writes the counts in batches, so
// usage_count and last_used are kept without a database write per request.
type KeyUsage struct {
	store   *Store
	mu      sync.Mutex
	pending map[string]keyUse
}

type keyUse struct {
	count int64
	last  time.Time
}

// NewKeyUsage returns a usage recorder writing through store.
func NewKeyUsage(store *Store) *KeyUsage {
	return &KeyUsage{store: store, pending: map[string]keyUse{}}
}

// Record notes one use of the key at t.
func (u *KeyUsage) Record(keyID string, t time.Time) {
	u.mu.Lock()
	use := u.pending[keyID]
	use.count++
	if t.After(use.last) {
		use.last = t
	}
	u.pending[keyID] = use
	u.mu.Unlock()
}

// Flush writes the pending counts; on failure they are kept for the next flush.
func (u *KeyUsage) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = map[string]keyUse{}
	u.mu.Unlock()
	for id, use := range batch {
		err := u.store.In(ctx, models.SystemScope()).Model(&APIKey{}).Where("id = ?", id).Updates(map[string]any{
			"usage_count":  gorm.Expr("usage_count + ?", use.count),
			"last_used_at": use.last,
		}).Error
		if err != nil {
			u.mu.Lock()
			for rid, ruse := range batch {
				cur := u.pending[rid]
				cur.count += ruse.count
				if ruse.last.After(cur.last) {
					cur.last = ruse.last
				}
				u.pending[rid] = cur
			}
			u.mu.Unlock()
			return models.DBErr(err)
		}
		delete(batch, id)
	}
	return nil
}

// Run flushes every interval until ctx ends, then flushes once more.
func (u *KeyUsage) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = u.Flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			_ = u.Flush(ctx)
		}
	}
}
