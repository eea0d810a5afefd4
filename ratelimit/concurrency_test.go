package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	hammerWorkers = 8
	hammerClients = 3
)

// hammer runs fn from hammerWorkers goroutines spread over hammerClients
// separate go-redis clients (separate connection pools, as separate API
// instances would have), each with a Limiter of its own.
func hammer(t *testing.T, s server, fn func(worker int, l *Limiter)) {
	t.Helper()
	limiters := make([]*Limiter, hammerClients)
	for i := range limiters {
		limiters[i] = s.limiter(t)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range hammerWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(w, limiters[w%hammerClients])
		}()
	}
	close(start)
	wg.Wait()
}

func TestConcurrentAllowNeverExceedsLimit(t *testing.T) {
	tests := []struct {
		name          string
		hourly, burst int
		cost          int
		wantAdmitted  int64
	}{
		// 100 units an hour: refills one unit per 36 s.
		{"hourly GET", 100, 0, 1, 100},
		{"hourly DELETE", 99, 0, 3, 33},
		// 60 units a minute admits 30 POSTs; refill (1 unit per second)
		// would need the test to run for a second.
		{"burst POST", 1000, 60, 2, 30},
	}
	eachServer(t, func(t *testing.T, s server) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var admitted, rejected atomic.Int64
				key := "ak_hammer_" + tt.name
				hammer(t, s, func(_ int, l *Limiter) {
					for range 40 {
						r, err := l.Allow(context.Background(), Request{Key: key, Cost: tt.cost, Hourly: tt.hourly, Burst: tt.burst})
						if err != nil {
							t.Error(err)
							return
						}
						if r.Allowed {
							admitted.Add(1)
						} else {
							rejected.Add(1)
						}
					}
				})
				if got := admitted.Load(); got != tt.wantAdmitted {
					t.Fatalf("admitted %d of %d, want exactly %d", got, admitted.Load()+rejected.Load(), tt.wantAdmitted)
				}
				u, err := New(s.client(t)).CurrentUsage(context.Background(), key, tt.hourly, tt.burst)
				if err != nil {
					t.Fatal(err)
				}
				if u.HourRequests != tt.wantAdmitted || u.HourUnits != tt.wantAdmitted*int64(tt.cost) {
					t.Fatalf("hour usage %d requests %d units, want %d admitted", u.HourRequests, u.HourUnits, tt.wantAdmitted)
				}
			})
		}
	})
}

func TestConcurrentAcquireNeverExceedsLimit(t *testing.T) {
	const limit = 5
	eachServer(t, func(t *testing.T, s server) {
		t.Run("held", func(t *testing.T) {
			// Nobody releases: exactly limit acquisitions succeed in total.
			var admitted atomic.Int64
			hammer(t, s, func(_ int, l *Limiter) {
				for range 10 {
					_, ok, err := l.Acquire(context.Background(), "ak_held", limit, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						admitted.Add(1)
					}
				}
			})
			if got := admitted.Load(); got != limit {
				t.Fatalf("admitted %d, want %d", got, limit)
			}
		})
		t.Run("released", func(t *testing.T) {
			// Acquire, hold briefly, release: never more than limit in flight.
			var inFlight, maxInFlight, admitted atomic.Int64
			hammer(t, s, func(_ int, l *Limiter) {
				for range 25 {
					release, ok, err := l.Acquire(context.Background(), "ak_cycle", limit, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						release() // a no-op, and safe
						continue
					}
					admitted.Add(1)
					n := inFlight.Add(1)
					for {
						m := maxInFlight.Load()
						if n <= m || maxInFlight.CompareAndSwap(m, n) {
							break
						}
					}
					time.Sleep(time.Millisecond)
					inFlight.Add(-1)
					release()
					release()
				}
			})
			if m := maxInFlight.Load(); m > limit {
				t.Fatalf("%d requests in flight at once, limit %d", m, limit)
			}
			if admitted.Load() <= limit {
				t.Fatalf("only %d acquisitions: released slots were not reused", admitted.Load())
			}
			n, err := s.limiter(t).InFlight(context.Background(), "ak_cycle")
			if err != nil || n != 0 {
				t.Fatalf("InFlight after every release = %d, %v", n, err)
			}
		})
	})
}

func TestAcquireRelease(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		ctx := context.Background()
		relA, ok, err := l.Acquire(ctx, "ak_c", 2, time.Minute)
		if err != nil || !ok {
			t.Fatalf("a: ok=%v err=%v", ok, err)
		}
		_, ok, err = l.Acquire(ctx, "ak_c", 2, time.Minute)
		if err != nil || !ok {
			t.Fatalf("b: ok=%v err=%v", ok, err)
		}
		relC, ok, err := l.Acquire(ctx, "ak_c", 2, time.Minute)
		if err != nil || ok || relC == nil {
			t.Fatalf("c: ok=%v err=%v release=%v, want a refusal with a release func", ok, err, relC != nil)
		}
		relC() // releasing after a refusal does nothing
		relC()
		if n, _ := l.InFlight(ctx, "ak_c"); n != 2 {
			t.Fatalf("InFlight = %d, want 2", n)
		}

		// Release with a context that is already done: it has its own.
		cctx, cancel := context.WithCancel(ctx)
		relD, ok, err := l.Acquire(cctx, "ak_d", 1, time.Minute)
		if err != nil || !ok {
			t.Fatalf("d: ok=%v err=%v", ok, err)
		}
		cancel()
		relD()
		if n, _ := l.InFlight(ctx, "ak_d"); n != 0 {
			t.Fatalf("slot of a cancelled request not released: InFlight = %d", n)
		}

		relA()
		relA() // a second release must not free another request's slot
		if n, _ := l.InFlight(ctx, "ak_c"); n != 1 {
			t.Fatalf("InFlight after releasing a twice = %d, want 1", n)
		}
		if _, ok, _ := l.Acquire(ctx, "ak_c", 2, time.Minute); !ok {
			t.Fatal("released slot not reusable")
		}
		if _, ok, _ := l.Acquire(ctx, "ak_c", 2, time.Minute); ok {
			t.Fatal("third slot admitted")
		}

		// Zero limit: unlimited, nothing stored.
		for range 3 {
			rel, ok, err := l.Acquire(ctx, "ak_unlimited", 0, time.Minute)
			if err != nil || !ok {
				t.Fatalf("unlimited: ok=%v err=%v", ok, err)
			}
			rel()
		}
		if n, _ := l.InFlight(ctx, "ak_unlimited"); n != 0 {
			t.Fatalf("unlimited Acquire stored %d slots", n)
		}
	})
}

// A slot whose holder never releases it (a crashed instance) frees itself.
func TestAcquireSlotOfCrashedHolderExpires(t *testing.T) {
	clock, l := newClockServer(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	if _, ok, err := l.Acquire(ctx, "ak_crash", 1, 30*time.Second); err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	clock.advance(29 * time.Second)
	if _, ok, _ := l.Acquire(ctx, "ak_crash", 1, 30*time.Second); ok {
		t.Fatal("slot free before its TTL")
	}
	clock.advance(time.Second)
	rel, ok, err := l.Acquire(ctx, "ak_crash", 1, 30*time.Second)
	if err != nil || !ok {
		t.Fatalf("slot not freed after its TTL: ok=%v err=%v", ok, err)
	}
	rel()
	// The set itself expires with its last slot.
	if _, ok, _ := l.Acquire(ctx, "ak_crash2", 1, 0); !ok {
		t.Fatal("default TTL slot refused")
	}
	clock.advance(DefaultSlotTTL)
	if clock.m.Exists(credentialPrefix("ak_crash2") + "conc") {
		t.Fatal("slot set outlived its last slot")
	}
}

// TestSlotRenew: a renewed slot outlives its first TTL; a slot that expired
// is not renewed (it no longer counts).
func TestSlotRenew(t *testing.T) {
	clock, l := newClockServer(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	slot, ok, err := l.AcquireSlot(ctx, "ak_stream", 1, 30*time.Second)
	if err != nil || !ok || slot == nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	clock.advance(20 * time.Second)
	if held, err := slot.Renew(ctx, 30*time.Second); err != nil || !held {
		t.Fatalf("renew: held=%v err=%v", held, err)
	}
	clock.advance(20 * time.Second) // 40 s after acquiring: past the first TTL
	if _, ok, _ := l.Acquire(ctx, "ak_stream", 1, 0); ok {
		t.Fatal("a renewed slot was freed at its first TTL")
	}
	clock.advance(11 * time.Second)
	if held, err := slot.Renew(ctx, 30*time.Second); err != nil || held {
		t.Fatalf("an expired slot was renewed: held=%v err=%v", held, err)
	}
	slot.Release()
	var none *Slot
	none.Release()
	if held, err := none.Renew(ctx, 0); !held || err != nil {
		t.Fatal("a nil slot must be a no-op")
	}
}

// TestAllowTakesSlot checks the concurrency slot taken in Allow's round
// trip: taken when admitted, refused (nothing spent or counted) when the cap is full,
// not taken when the request is rejected or on a dry run, freed by Release,
// and never more than the cap under concurrent callers.
func TestAllowTakesSlot(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := context.Background()
		l := s.limiter(t)
		slot := SlotRequest{Key: "org_slot_test", Limit: 2}
		req := Request{Key: "ak_slot_test", Cost: 1, Hourly: 1000, Burst: 100, Slot: slot}

		a, err := l.Allow(ctx, req)
		if err != nil || !a.Allowed || a.Slot == nil || a.SlotRefused || a.SlotsInUse != 1 {
			t.Fatalf("first: allowed %v slot %v refused %v in use %d err %v", a.Allowed, a.Slot != nil, a.SlotRefused, a.SlotsInUse, err)
		}
		b, err := l.Allow(ctx, req)
		if err != nil || b.Slot == nil || b.SlotsInUse != 2 {
			t.Fatalf("second: slot %v in use %d err %v", b.Slot != nil, b.SlotsInUse, err)
		}
		c, err := l.Allow(ctx, req)
		if err != nil || !c.Allowed || c.Slot != nil || !c.SlotRefused || c.SlotsInUse != 2 {
			t.Fatalf("third: allowed %v slot %v refused %v in use %d err %v", c.Allowed, c.Slot != nil, c.SlotRefused, c.SlotsInUse, err)
		}
		if c.Hourly.Remaining != 998 || c.BurstBucket.Remaining != 98 || c.HourRequests != 2 {
			t.Fatalf("a request refused a slot spent or counted: remaining %d (want 998), burst %d (want 98), requests %d (want 2)",
				c.Hourly.Remaining, c.BurstBucket.Remaining, c.HourRequests)
		}
		if n, err := l.InFlight(ctx, slot.Key); err != nil || n != 2 {
			t.Fatalf("in flight %d (%v), want 2", n, err)
		}
		a.Slot.Release()
		a.Slot.Release() // a second release does nothing
		if n, _ := l.InFlight(ctx, slot.Key); n != 1 {
			t.Fatalf("in flight after release %d, want 1", n)
		}
		d, err := l.Allow(ctx, req)
		if err != nil || d.Slot == nil {
			t.Fatalf("after a release a slot is free again: %+v %v", d, err)
		}
		b.Slot.Release()
		d.Slot.Release()

		// Rejected by a bucket: no slot.
		tight := Request{Key: "ak_slot_tight", Cost: MaxCost, Hourly: MaxCost, Slot: slot}
		if r, err := l.Allow(ctx, tight); err != nil || !r.Allowed || r.Slot == nil {
			t.Fatalf("tight first: %+v %v", r, err)
		} else {
			r.Slot.Release()
		}
		if r, err := l.Allow(ctx, tight); err != nil || r.Allowed || r.Slot != nil || r.SlotRefused || r.SlotsInUse != 0 {
			t.Fatalf("rejected request: allowed %v slot %v refused %v", r.Allowed, r.Slot != nil, r.SlotRefused)
		}
		// A dry run takes none.
		if r, err := l.CurrentUsage(ctx, "ak_slot_test", 1000, 100); err != nil || r.Slot != nil {
			t.Fatalf("dry run: slot %v err %v", r.Slot != nil, err)
		}
		if n, _ := l.InFlight(ctx, slot.Key); n != 0 {
			t.Fatalf("in flight at the end %d, want 0", n)
		}

		// Concurrent callers on separate clients never hold more than the cap.
		const limit = 3
		var held, peak atomic.Int64
		hammer(t, s, func(w int, l *Limiter) {
			for range 20 {
				r, err := l.Allow(ctx, Request{Key: "ak_slot_hammer", Cost: 1, Hourly: 100000, Slot: SlotRequest{Key: "org_slot_hammer", Limit: limit}})
				if err != nil {
					t.Error(err)
					return
				}
				if r.Slot == nil {
					continue
				}
				n := held.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				held.Add(-1)
				r.Slot.Release()
			}
		})
		if p := peak.Load(); p > limit {
			t.Fatalf("peak %d slots held, cap %d", p, limit)
		}
	})
}

// TestReleaseSoon: a slot freed with ReleaseSoon is free for the next check
// of the same limiter (the release goes first in its pipeline), for
// InFlight and AcquireSlot (which send it first), and, with nothing else
// sent, for another process's limiter shortly after (on its own).
func TestReleaseSoon(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := context.Background()
		l := New(s.client(t))
		req := Request{Key: "ak_soon", Cost: 1, Hourly: 1000, Slot: SlotRequest{Key: "org_soon", Limit: 1}}
		take := func(l *Limiter) *Slot {
			t.Helper()
			r, err := l.Allow(ctx, req)
			if err != nil || r.Slot == nil || r.SlotRefused {
				t.Fatalf("the one slot is not free: %+v %v", r, err)
			}
			return r.Slot
		}
		// The same limiter: each check after a ReleaseSoon finds the slot free.
		for range 20 {
			take(l).ReleaseSoon()
		}
		sl := take(l)
		sl.ReleaseSoon()
		sl.ReleaseSoon() // a second release does nothing
		if n, err := l.InFlight(ctx, "org_soon"); err != nil || n != 0 {
			t.Fatalf("in flight after ReleaseSoon: %d %v", n, err)
		}
		take(l).ReleaseSoon()
		if slot, ok, err := l.AcquireSlot(ctx, "org_soon", 1, 0); err != nil || !ok {
			t.Fatalf("AcquireSlot after ReleaseSoon: %v %v", ok, err)
		} else {
			slot.Release()
		}
		// Another process: the release is sent on its own.
		other := New(s.client(t))
		take(l).ReleaseSoon()
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, err := other.InFlight(ctx, "org_soon")
			if err == nil && n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the slot freed with ReleaseSoon is still held for another process: %d %v", n, err)
			}
			time.Sleep(time.Millisecond)
		}
		var none *Slot
		none.ReleaseSoon()
	})
}

// TestReleaseSoonNotPutOff: releases queued one after another, faster
// than the batcher's delay and with nothing else sent, still go out while
// they keep coming (the first waits at most the delay, it is not put off
// by the next); Flush sends what is left at once.
func TestReleaseSoonNotPutOff(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		ctx := context.Background()
		l, other := New(s.client(t)), New(s.client(t))
		const n = 1000 // releases for about 200 ms
		req := Request{Key: "ak_burst", Cost: 1, Hourly: 100000, Burst: 100000, Slot: SlotRequest{Key: "org_burst", Limit: n}}
		slots := make([]*Slot, n)
		for i := range slots {
			r, err := l.Allow(ctx, req)
			if err != nil || r.Slot == nil {
				t.Fatalf("slot %d: %+v %v", i, r, err)
			}
			slots[i] = r.Slot
		}
		seen := false
		for i, sl := range slots[:n-1] {
			sl.ReleaseSoon()
			for t0 := time.Now(); time.Since(t0) < laterDelay/5; { // the next release comes well within the delay
			}
			if i%20 == 19 {
				if m, err := other.InFlight(ctx, "org_burst"); err == nil && m < n-1 {
					seen = true
				}
			}
		}
		if !seen {
			t.Fatal("no release reached Redis while releases kept coming")
		}
		slots[n-1].ReleaseSoon()
		l.Flush(ctx)
		if m, err := other.InFlight(ctx, "org_burst"); err != nil || m != 0 {
			t.Fatalf("after Flush another process counts %d slots (%v), want 0", m, err)
		}
	})
}

// TestCancelledCheckIsNotSent: a command whose caller is already gone when
// it would lead the pipeline is not sent.
func TestCancelledCheckIsNotSent(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		client := s.client(t)
		l := New(client)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.batch.do(ctx, func(c context.Context, p redis.Pipeliner) redis.Cmder { return p.Incr(c, "gone") }); err == nil {
			t.Fatal("a cancelled command answered")
		}
		l.Flush(context.Background())
		if n, err := client.Exists(context.Background(), "gone").Result(); err != nil || n != 0 {
			t.Fatalf("the cancelled command was sent: %d %v", n, err)
		}
	})
}
