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

// Acquire takes one of limit concurrency slots of key for at most ttl
// (DefaultSlotTTL if ttl <= 0). Expired slots are dropped first, so slots of
// crashed instances free themselves after ttl. limit <= 0 means unlimited:
// ok is true and Redis is not asked.
//
// release is never nil and is safe to call any number of times, also when
// ok is false or err is not nil (then it does nothing). It frees the slot
// with a context of its own, so it works after ctx is done; if Redis cannot
// be reached then, the slot expires after ttl. On error (wrapping
// ErrUnavailable when Redis cannot be reached) ok is false: the caller
// decides whether to fail open.
func (l *Limiter) Acquire(ctx context.Context, key string, limit int, ttl time.Duration) (release func(), ok bool, err error) {
	noop := func() {}
	if key == "" {
		return noop, false, errors.New("ratelimit: empty key")
	}
	if limit <= 0 {
		return noop, true, nil
	}
	if ttl <= 0 {
		ttl = DefaultSlotTTL
	}
	token, err := newToken()
	if err != nil {
		return noop, false, fmt.Errorf("ratelimit: slot token: %w", err)
	}
	slots := credentialPrefix(key) + "conc"

	runCtx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := l.acquire.Run(runCtx, l.client, []string{slots}, limit, token, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return noop, false, classify(err)
	}
	if len(res) != 2 {
		return noop, false, fmt.Errorf("ratelimit: acquire script returned %d values", len(res))
	}
	if res[0] != 1 {
		return noop, false, nil
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
			defer cancel()
			// An error leaves the slot to expire after ttl.
			_ = l.client.ZRem(rctx, slots, token).Err()
		})
	}
	return release, true, nil
}

// InFlight returns how many concurrency slots of key are taken and not
// expired. Expiry is judged by the Redis server's clock.
func (l *Limiter) InFlight(ctx context.Context, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	slots := credentialPrefix(key) + "conc"
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
