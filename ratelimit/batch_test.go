package ratelimit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestBatchedChecks checks that checks sent together in pipelines each get
// their own answer: N concurrent requests on one limiter against a bucket
// of N/2 units admit exactly N/2, and every slot taken is released.
func TestBatchedChecks(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := context.Background()
		// A budget for a loaded machine: the embedded server runs the
		// scripts one after another, slowly; this test is about the answers.
		l := New(s.client(t), WithTimeout(30*time.Second))
		const n = 200
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			admitted int
			slots    []*Slot
		)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := l.Allow(ctx, Request{Key: "ak_batch", Cost: 1, Hourly: n / 2, Slot: SlotRequest{Key: "org_batch", Limit: n}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if r.Allowed {
					admitted++
					slots = append(slots, r.Slot)
				}
			}()
		}
		wg.Wait()
		if admitted != n/2 {
			t.Fatalf("admitted %d of %d, want %d", admitted, n, n/2)
		}
		if got, _ := l.InFlight(ctx, "org_batch"); got != n/2 {
			t.Fatalf("in flight %d, want %d", got, n/2)
		}
		for _, sl := range slots {
			wg.Add(1)
			go func() { defer wg.Done(); sl.Release() }()
		}
		wg.Wait()
		if got, _ := l.InFlight(ctx, "org_batch"); got != 0 {
			t.Fatalf("in flight after the releases %d, want 0", got)
		}
	})
}

// TestCheckAfterScriptFlush checks that a Redis that lost its scripts (a
// restart, SCRIPT FLUSH) gets the script again on the next check.
func TestCheckAfterScriptFlush(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := context.Background()
		client := s.client(t)
		l := New(client)
		req := Request{Key: "ak_flush", Cost: 1, Hourly: 100}
		if r, err := l.Allow(ctx, req); err != nil || !r.Allowed {
			t.Fatalf("first check: %+v %v", r, err)
		}
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		r, err := l.Allow(ctx, req)
		if err != nil || !r.Allowed || r.Hourly.Remaining != 98 {
			t.Fatalf("check after SCRIPT FLUSH: allowed %v remaining %d err %v", r.Allowed, r.Hourly.Remaining, err)
		}
	})
}
