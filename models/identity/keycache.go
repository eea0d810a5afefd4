package identity

import (
	"sync"
	"time"
)

// DefaultKeyCacheTTL is how long a KeyCache keeps a key it read: the
// longest a change made elsewhere (another API instance, the worker, the
// database directly) to a key, its organization's plan limits or access
// policy can go unseen by an instance that did not make it.
const DefaultKeyCacheTTL = time.Second

// keyCacheMax bounds the entries of a KeyCache: when it is full, it is
// emptied (each key then costs one read again).
const keyCacheMax = 10000

// KeyCache keeps, for a short time, what authenticating an API key reads
// from the database (the key, its organization's plan limits and access
// policy), by the SHA-256 of the secret. Entries live ttl; Invalidate
// drops them all at once (the API calls it after each request that may
// write to credentials, permissions, plans or policies). A read that started before an Invalidate is not kept, so a
// change is never hidden by a read that raced with it. The zero value is
// not usable; a nil *KeyCache caches nothing. Safe for concurrent use.
type KeyCache struct {
	ttl time.Duration
	now func() time.Time // monotonic clock

	mu      sync.RWMutex
	gen     uint64 // incremented by Invalidate
	entries map[string]keyCacheEntry
}

type keyCacheEntry struct {
	rec     *keyRecord
	expires time.Time
}

// NewKeyCache returns a cache keeping each key ttl (DefaultKeyCacheTTL
// when ttl <= 0).
func NewKeyCache(ttl time.Duration) *KeyCache {
	if ttl <= 0 {
		ttl = DefaultKeyCacheTTL
	}
	return &KeyCache{ttl: ttl, now: time.Now, entries: map[string]keyCacheEntry{}}
}

// Invalidate drops every entry, and every read in progress.
func (c *KeyCache) Invalidate() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// keyCacheTicket is what get hands to put on a miss: the generation and
// the instant before the database read.
type keyCacheTicket struct {
	gen uint64
	at  time.Time
}

// get returns the live entry for hash, or (nil, the ticket to pass to
// put, false).
func (c *KeyCache) get(hash string) (*keyRecord, keyCacheTicket, bool) {
	if c == nil {
		return nil, keyCacheTicket{}, false
	}
	now := c.now()
	c.mu.RLock()
	e, ok := c.entries[hash]
	gen := c.gen
	c.mu.RUnlock()
	if ok && now.Before(e.expires) {
		return e.rec, keyCacheTicket{}, true
	}
	return nil, keyCacheTicket{gen: gen, at: now}, false
}

// put keeps rec for hash, until ttl after the read began, unless the cache
// was invalidated since get issued t (the read may predate the change).
func (c *KeyCache) put(hash string, rec *keyRecord, t keyCacheTicket) {
	if c == nil {
		return
	}
	expires := t.at.Add(c.ttl)
	gen := t.gen
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if len(c.entries) >= keyCacheMax {
		clear(c.entries)
	}
	c.entries[hash] = keyCacheEntry{rec: rec, expires: expires}
}
