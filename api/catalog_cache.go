package api

import (
	"context"
	"sync"
	"time"
)

// catalogCacheTTL is how long the built catalog answer is served from
// memory: the longest a change of the catalog tables (seeding, migrations:
// no API operation writes them) goes unseen by GET /v1/services/catalog.
const catalogCacheTTL = time.Second

// catalogCache keeps the answer of GET /v1/services/catalog (its
// categories and ETag), built from the database at most once per
// catalogCacheTTL. The answer it hands out is shared by every request:
// never modified (copy it before filling its metadata).
type catalogCache struct {
	ttl time.Duration
	now func() time.Time // monotonic clock

	mu      sync.Mutex
	answer  *CatalogOutput
	expires time.Time
}

func newCatalogCache(ttl time.Duration) *catalogCache {
	return &catalogCache{ttl: ttl, now: time.Now}
}

// get returns the cached answer, or builds it with build (one
// caller at a time; the others wait for its answer). An error is not kept.
func (c *catalogCache) get(ctx context.Context, build func(context.Context) (*CatalogOutput, error)) (*CatalogOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.answer != nil && now.Before(c.expires) {
		return c.answer, nil
	}
	answer, err := build(ctx)
	if err != nil {
		return nil, err
	}
	c.answer, c.expires = answer, now.Add(c.ttl)
	return answer, nil
}
