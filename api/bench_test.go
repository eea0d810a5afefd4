package api_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/testenv"
)

// BenchmarkGetCatalog measures one authenticated, rate-limited GET through
// the whole middleware chain (request id, version, key lookup, limiter on the
// embedded Redis, ETag) and the huma operation.
func BenchmarkGetCatalog(b *testing.B) {
	h := newHarness(b)
	rdb, _, closeFn, err := redisconn.Open(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer closeFn()
	h.withLimiter(rdb)
	key := h.adminKey
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest("GET", "/v1/services/catalog", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := h.srv.App.Test(req, -1)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("status %v %v", res, err)
		}
		res.Body.Close()
	}
}

// BenchmarkGetServiceVsCatalog measures GET /v1/services/{id} and GET
// /v1/operations/{id} against GET /v1/services/catalog (served from
// memory: the middleware chain, a real redis-server, the limiter and the writing of a kept
// answer, without a database read) in the same loop, and reports each as
// a ratio of the catalog's time per request (1 would be a row read that
// costs nothing).
func BenchmarkGetServiceVsCatalog(b *testing.B) {
	h := newHarness(b)
	opts, err := redis.ParseURL(testenv.RedisURL(b)) // a real redis-server: the embedded one's scripts would dominate
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	h.withLimiter(rdb)
	tn := h.tenants[0]
	requestID, serviceID := provisionedFixture(b, h, tn)
	paths := []string{"/v1/services/catalog", "/v1/services/" + serviceID, "/v1/operations/" + requestID}
	spent := make([]time.Duration, len(paths))
	get := func(i int) {
		req := httptest.NewRequest("GET", paths[i], nil)
		req.Header.Set("Authorization", "Bearer "+h.adminKey) // staff: reads the tenant's rows, without a plan's limits
		start := time.Now()
		res, err := h.srv.App.Test(req, -1)
		spent[i] += time.Since(start)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("GET %s: %v %v", paths[i], res, err)
		}
		res.Body.Close()
	}
	for i := range paths {
		get(i) // warm: the catalog and the answers kept
	}
	clear(spent)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range paths {
			get(i)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "service/catalog")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "operation/catalog")
}
