package models

import (
	"context"
	"sync"
	"time"
)

// Memo keeps values read from the database for a while, by key: reference
// data that no API operation writes (the catalog's offers, templates and
// locations), read once per TTL instead of once per use. A Store and its
// copies (Bound) share one Memo, so every domain store built on the same
// core, whether kept by a server or made for one call, reads it once.
// A nil Memo keeps nothing; make one with NewMemo. Code that runs in a
// transaction never writes the tables whose rows a Memo keeps: a load may
// run on the caller's transaction, and what it reads is kept for everyone.
type Memo struct {
	now func() time.Time // monotonic clock

	mu      sync.Mutex
	entries map[string]memoEntry
}

type memoEntry struct {
	value   any
	expires time.Time
}

// NewMemo returns an empty Memo on the clock now (nil: time.Now, whose
// readings are monotonic); tests pass a clock of their own.
func NewMemo(now func() time.Time) *Memo {
	if now == nil {
		now = time.Now
	}
	return &Memo{now: now, entries: map[string]memoEntry{}}
}

// Kept returns the value m keeps under key when it is younger than ttl;
// otherwise it calls load and keeps what it returns (an error is not
// kept). load runs without m's lock: it may wait for a database
// connection, which a caller waiting for the lock could be holding (in a
// transaction) that the loader then waits for; for the same reason
// callers do not wait for each other's load, so two callers that find the
// value expired at once both load, and the load that began later is kept.
func Kept[T any](ctx context.Context, m *Memo, key string, ttl time.Duration, load func(context.Context) (T, error)) (T, error) {
	if m == nil {
		return load(ctx)
	}
	m.mu.Lock()
	e, ok := m.entries[key]
	now := m.now()
	m.mu.Unlock()
	if ok && now.Before(e.expires) {
		if v, ok := e.value.(T); ok {
			return v, nil
		}
	}
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	if cur, ok := m.entries[key]; !ok || cur.expires.Before(now.Add(ttl)) {
		m.entries[key] = memoEntry{value: v, expires: now.Add(ttl)}
	}
	m.mu.Unlock()
	return v, nil
}
