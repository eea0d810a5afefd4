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

// catalogCache keeps the categories of GET /v1/services/catalog, built
// from the database at most once per catalogCacheTTL. The slice it hands
// out is shared by every request: never modified.
type catalogCache struct {
	ttl time.Duration
	now func() time.Time // monotonic clock

	mu         sync.Mutex
	categories []CatalogCategoryItem
	expires    time.Time
}

func newCatalogCache(ttl time.Duration) *catalogCache {
	return &catalogCache{ttl: ttl, now: time.Now}
}

// get returns the cached categories, or builds them with build (one
// caller at a time; the others wait for its answer). An error is not kept.
func (c *catalogCache) get(ctx context.Context, build func(context.Context) ([]CatalogCategoryItem, error)) ([]CatalogCategoryItem, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.categories != nil && now.Before(c.expires) {
		return c.categories, nil
	}
	cats, err := build(ctx)
	if err != nil {
		return nil, err
	}
	c.categories, c.expires = cats, now.Add(c.ttl)
	return cats, nil
}
