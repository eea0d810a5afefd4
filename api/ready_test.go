package api_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

type readiness struct {
	Status     string            `json:"status"`
	Components map[string]string `json:"components"`
	Metrics    map[string]int64  `json:"metrics"`
}

// TestReadinessWithRealDependencies checks /readyz against a real Temporal dev
// server and a real redis-server: ready when all answer, degraded (still 200)
// without Redis, unready (503) without Temporal.
func TestReadinessWithRealDependencies(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	addr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	tc, err := temporalclient.Dial(ctx, temporalclient.Options{Address: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if err := temporalclient.EnsureSearchAttributes(ctx, tc, "default"); err != nil {
		t.Fatalf("search attributes: %v", err)
	}
	opts, err := redis.ParseURL(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	cfg, _ := config.Load(func(string) string { return "" })

	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Temporal: tc, Redis: rdb})
	var r readiness
	h.do("GET", "/readyz", "", nil).decode(200, &r)
	if r.Status != "ready" || r.Components["temporal"] != "ok" || r.Components["redis"] != "ok" || r.Components["database"] != "ok" {
		t.Fatalf("want ready: %+v", r)
	}

	broken := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer broken.Close()
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Temporal: tc, Redis: broken})
	h.do("GET", "/readyz", "", nil).decode(200, &r)
	if r.Status != "degraded" || r.Components["redis"] != "degraded" || r.Metrics == nil {
		t.Fatalf("want degraded: %+v", r)
	}

	lazy, err := temporalclient.NewLazy(temporalclient.Options{Address: "127.0.0.1:1", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store, Temporal: lazy, Redis: rdb})
	h.do("GET", "/readyz", "", nil).decode(503, &r)
	if r.Status != "unready" || r.Components["temporal"] != "unavailable" {
		t.Fatalf("want unready: %+v", r)
	}
	h.do("GET", "/healthz", "", nil).decode(200, nil)
}
