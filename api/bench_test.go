package api_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/telcoplatform/platform/redisconn"
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
