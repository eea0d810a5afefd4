package ratelimit

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultSlotTTL is the lifetime of a concurrency slot when Acquire is given
// none: a slot whose holder never releases it (a crashed instance) is free
// again after this long.
const DefaultSlotTTL = time.Minute

//go:embed acquire.lua
var acquireScriptSrc string

//go:embed renew.lua
var renewScriptSrc string

// Slot is a concurrency slot taken by AcquireSlot. Its methods are safe on a
// nil Slot (no slot was needed) and from several goroutines.
type Slot struct {
	l     *Limiter
	slots string
	token string
	once  sync.Once
}

// Release frees the slot with a context of its own, so it works after the
// acquiring context is done; if Redis cannot be reached then, the slot
// expires after its TTL. Calling it again does nothing.
func (s *Slot) Release() {
	if s == nil {
		return
	}
	// Sent with other requests' commands in one pipeline. An error leaves
	// the slot to expire after its TTL.
	s.once.Do(func() { s.l.releaseToken(s.slots, s.token) })
}

// ReleaseSoon frees the slot without waiting for Redis: the release goes
// in the limiter's next pipeline (another request's check), or on its own
// within a millisecond. Commands of this Limiter sent afterwards see the
// slot free; another process may count it for up to that long. If Redis
// cannot be reached then, the slot expires after its TTL. Calling it (or
// Release) again does nothing.
func (s *Slot) ReleaseSoon() {
	if s == nil {
		return
	}
	s.once.Do(func() { s.l.batch.doLater(releaseCmd(s.slots, s.token)) })
}

// Flush waits until the slot releases queued by ReleaseSoon have been sent
// to Redis (or ctx ends); a server calls it at shutdown, before it closes
// its Redis client.
func (l *Limiter) Flush(ctx context.Context) {
	l.batch.sync(ctx)
}

// Renew extends the slot's life to ttl from now (DefaultSlotTTL if ttl <= 0),
// for holders that keep it longer than one TTL (long-lived streams). held is
// false when the slot had already expired: it is no longer counted.
func (s *Slot) Renew(ctx context.Context, ttl time.Duration) (held bool, err error) {
	if s == nil {
		return true, nil
	}
	if ttl <= 0 {
		ttl = DefaultSlotTTL
	}
	runCtx, cancel := context.WithTimeout(ctx, s.l.timeout)
	defer cancel()
	n, err := s.l.renew.Run(runCtx, s.l.client, []string{s.slots}, s.token, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, classify(err)
	}
	return n == 1, nil
}

// Acquire takes one of limit concurrency slots of key for at most ttl; see
// AcquireSlot. release is never nil and is safe to call any number of times,
// also when ok is false or err is not nil (then it does nothing).
func (l *Limiter) Acquire(ctx context.Context, key string, limit int, ttl time.Duration) (release func(), ok bool, err error) {
	slot, ok, err := l.AcquireSlot(ctx, key, limit, ttl)
	return slot.Release, ok, err
}

// AcquireSlot takes one of limit concurrency slots of key for at most ttl
// (DefaultSlotTTL if ttl <= 0). Expired slots are dropped first, so slots of
// crashed instances free themselves after ttl. limit <= 0 means unlimited:
// ok is true, the slot is nil and Redis is not asked. On error (wrapping
// ErrUnavailable when Redis cannot be reached) ok is false: the caller
// decides whether to fail open.
func (l *Limiter) AcquireSlot(ctx context.Context, key string, limit int, ttl time.Duration) (slot *Slot, ok bool, err error) {
	if key == "" {
		return nil, false, errors.New("ratelimit: empty key")
	}
	if limit <= 0 {
		return nil, true, nil
	}
	if ttl <= 0 {
		ttl = DefaultSlotTTL
	}
	token, err := newToken()
	if err != nil {
		return nil, false, fmt.Errorf("ratelimit: slot token: %w", err)
	}
	slots := slotsKey(key)

	runCtx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	l.batch.sync(runCtx)
	res, err := l.acquire.Run(runCtx, l.client, []string{slots}, limit, token, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return nil, false, classify(err)
	}
	if len(res) != 2 {
		return nil, false, fmt.Errorf("ratelimit: acquire script returned %d values", len(res))
	}
	if res[0] != 1 {
		return nil, false, nil
	}
	return &Slot{l: l, slots: slots, token: token}, true, nil
}

// InFlight returns how many concurrency slots of key are taken and not
// expired. Expiry is judged by the Redis server's clock.
func (l *Limiter) InFlight(ctx context.Context, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	l.batch.sync(ctx)
	slots := slotsKey(key)
	t, err := l.client.Time(ctx).Result()
	if err != nil {
		return 0, classify(err)
	}
	n, err := l.client.ZCount(ctx, slots, fmt.Sprintf("(%d", t.UnixMilli()), "+inf").Result()
	if err != nil {
		return 0, classify(err)
	}
	return int(n), nil
}

func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
