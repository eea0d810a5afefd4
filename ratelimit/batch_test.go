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

// TestAbandonedCommandsAreNotSent checks that a check whose caller gave up
// before it was sent (its context ended while another pipeline was on its
// way) is never sent: it spends nothing and takes no slot.
func TestAbandonedCommandsAreNotSent(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := New(s.client(t))
		// Hold the queue: a flush is "in progress" until released.
		l.batch.mu.Lock()
		l.batch.flushing = true
		l.batch.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := l.Allow(ctx, Request{Key: "ak_abandon", Cost: 1, Hourly: 100, Slot: SlotRequest{Key: "org_abandon", Limit: 5}})
			done <- err
		}()
		for {
			l.batch.mu.Lock()
			n := len(l.batch.pending)
			l.batch.mu.Unlock()
			if n == 1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("an abandoned check answered")
		}
		// Let the queue go: the abandoned check is dropped.
		l.batch.flush()
		r, err := l.CurrentUsage(context.Background(), "ak_abandon", 100, 0)
		if err != nil || r.Hourly.Remaining != 100 {
			t.Fatalf("remaining %d (%v): the abandoned check was sent", r.Hourly.Remaining, err)
		}
		time.Sleep(100 * time.Millisecond) // the best-effort release of its token
		if n, _ := l.InFlight(context.Background(), "org_abandon"); n != 0 {
			t.Fatalf("%d slots held after an abandoned check", n)
		}
	})
}
