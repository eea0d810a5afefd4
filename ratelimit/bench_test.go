package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/redisconn"
)

// benchServers runs fn against the embedded server and a real redis-server.
func benchServers(b *testing.B, fn func(b *testing.B, l *Limiter)) {
	for _, k := range serverKinds() {
		b.Run(k.name, func(b *testing.B) {
			client, _, closeFn, err := redisconn.Open(context.Background(), k.start(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = closeFn() })
			var calls atomic.Int64
			client.AddHook(roundTripCounter{&calls})
			fn(b, New(client))
			b.ReportMetric(float64(calls.Load())/float64(b.N), "redis-roundtrips/op")
		})
	}
}

// BenchmarkAllow measures one Allow round trip (suspension, hourly, burst and
// group buckets, usage counters) on one credential.
func BenchmarkAllow(b *testing.B) {
	benchServers(b, func(b *testing.B, l *Limiter) {
		ctx := context.Background()
		req := Request{Key: "ak_bench", OrgID: "org_bench", Cost: 1, Hourly: 100_000, Burst: 2000, Group: GroupBilling}
		for b.Loop() {
			if _, err := l.Allow(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAllowParallel measures Allow from parallel goroutines, each on a
// credential of its own.
func BenchmarkAllowParallel(b *testing.B) {
	benchServers(b, func(b *testing.B, l *Limiter) {
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			req := Request{Key: "ak_bench_" + strconv.FormatInt(n.Add(1), 10), OrgID: "org_bench", Cost: 2, Hourly: 100_000, Burst: 2000}
			for pb.Next() {
				if _, err := l.Allow(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkAcquireRelease measures taking and freeing a concurrency slot.
func BenchmarkAcquireRelease(b *testing.B) {
	benchServers(b, func(b *testing.B, l *Limiter) {
		ctx := context.Background()
		for b.Loop() {
			release, ok, err := l.Acquire(ctx, "ak_bench", 200, time.Minute)
			if err != nil || !ok {
				b.Fatalf("ok=%v err=%v", ok, err)
			}
			release()
		}
	})
}

// roundTripCounter counts the commands and pipelines a client sends.
type roundTripCounter struct{ n *atomic.Int64 }

func (c roundTripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c roundTripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c roundTripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// BenchmarkRequestLimitsParallel measures what the API does per request
// with the concurrency cap on, from parallel goroutines sharing one
// organization's slots: "separate" checks the buckets, then takes the slot
// with its own script and releases it (the shape before the slot moved into
// the check); "in-check" takes the slot in the check's round trip and
// releases it. Both go through the same pipelining of concurrent commands;
// compare their ns/op and redis-roundtrips/op within one run.
func BenchmarkRequestLimitsParallel(b *testing.B) {
	for _, shape := range []string{"separate", "in-check"} {
		b.Run(shape, func(b *testing.B) {
			benchServers(b, func(b *testing.B, l *Limiter) {
				var n, failed atomic.Int64
				b.SetParallelism(16) // 16 goroutines per CPU: many requests in flight, as under load
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					req := Request{Key: "ak_bench_" + strconv.FormatInt(n.Add(1), 10), OrgID: "org_bench", Cost: 1, Hourly: 1_000_000_000, Burst: 1_000_000_000}
					for pb.Next() {
						if shape == "separate" {
							if _, err := l.Allow(ctx, req); err != nil {
								failed.Add(1) // a timed-out round trip: the API fails open
							}
							slot, ok, err := l.AcquireSlot(ctx, "org_bench", 10_000, 0)
							if err != nil || !ok {
								failed.Add(1)
							}
							slot.Release()
							continue
						}
						req.Slot = SlotRequest{Key: "org_bench", Limit: 10_000}
						r, err := l.Allow(ctx, req)
						if err != nil || r.Slot == nil {
							failed.Add(1)
						}
						r.Slot.Release()
					}
				})
				b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/op")
			})
		})
	}
}
