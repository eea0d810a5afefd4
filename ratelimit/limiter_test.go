package ratelimit

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// Hourly refill of these limits is 3.6 s per unit and burst refill 0.6 s per
// unit (developer plan) or slower: the tests below finish their counting
// well within one refill step of their first request, so counts are exact.

func TestAllowCosts(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		tests := []struct {
			method string
			units  int
		}{
			{http.MethodGet, 1},
			{http.MethodPost, 2},
			{http.MethodPut, 2},
			{http.MethodDelete, 3},
		}
		for _, tt := range tests {
			t.Run(tt.method, func(t *testing.T) {
				key := "ak_cost_" + tt.method
				r := mustAllow(t, l, Request{Key: key, OrgID: "org_cost", Cost: Cost(tt.method), Hourly: 1000, Burst: 100})
				if !r.Allowed {
					t.Fatalf("rejected: %+v", r)
				}
				if r.Limit != 1000 || r.Remaining != 1000-tt.units {
					t.Errorf("hourly %d/%d, want %d/1000", r.Remaining, r.Limit, 1000-tt.units)
				}
				if r.Burst != 100 || r.BurstRemaining != 100-tt.units {
					t.Errorf("burst %d/%d, want %d/100", r.BurstRemaining, r.Burst, 100-tt.units)
				}
				if r.HourRequests != 1 || r.HourUnits != int64(tt.units) {
					t.Errorf("hour usage %d requests %d units, want 1 and %d", r.HourRequests, r.HourUnits, tt.units)
				}
				if r.RetryAfter != 0 || r.RejectedBy != "" || r.LimitBucket != BucketHourly {
					t.Errorf("allowed result has RetryAfter %v RejectedBy %q LimitBucket %q", r.RetryAfter, r.RejectedBy, r.LimitBucket)
				}
				// The hourly bucket is full again after units * 3.6 s.
				wantReset := r.Now.Add(time.Duration(tt.units) * 3600 * time.Millisecond)
				if d := time.Unix(r.Reset, 0).Sub(wantReset); d < 0 || d > time.Second {
					t.Errorf("reset %v, want %v rounded up to the second", time.Unix(r.Reset, 0), wantReset)
				}
			})
		}
	})
}

func TestAllowBurstRejectionSpendsNothing(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		req := Request{Key: "ak_allornone", OrgID: "org_1", Hourly: 1000, Burst: 10}
		// DELETE, DELETE, DELETE, GET: 10 units, the burst bucket is empty.
		for _, m := range []string{"DELETE", "DELETE", "DELETE", "GET"} {
			req.Cost = Cost(m)
			if r := mustAllow(t, l, req); !r.Allowed {
				t.Fatalf("%s rejected: %+v", m, r)
			}
		}
		req.Cost = Cost("DELETE")
		r := mustAllow(t, l, req)
		if r.Allowed || r.RejectedBy != BucketBurst {
			t.Fatalf("11th..13th unit: Allowed=%v RejectedBy=%q, want a burst rejection", r.Allowed, r.RejectedBy)
		}
		if r.Remaining != 990 || r.Hourly.Remaining != 990 {
			t.Fatalf("hourly remaining %d after a burst rejection, want 990 (nothing spent)", r.Remaining)
		}
		if r.HourRequests != 4 || r.HourUnits != 10 {
			t.Fatalf("hour usage %d/%d after a burst rejection, want 4 requests, 10 units", r.HourRequests, r.HourUnits)
		}
		// 3 units at 100 units/min... here 10/min: 6 s per unit, 18 s for 3.
		if r.RetryAfter <= 12*time.Second || r.RetryAfter > 18*time.Second || r.BurstRemaining != 0 {
			t.Fatalf("RetryAfter %v BurstRemaining %d, want (12 s, 18 s] and 0", r.RetryAfter, r.BurstRemaining)
		}
		if r.RetryAfterSeconds() < 13 || r.RetryAfterSeconds() > 18 {
			t.Fatalf("RetryAfterSeconds %d", r.RetryAfterSeconds())
		}
		usage, err := l.CurrentUsage(context.Background(), req.Key, 1000, 10)
		if err != nil {
			t.Fatal(err)
		}
		if usage.Remaining != 990 || usage.HourRequests != 4 || usage.BurstUsed() != 10 {
			t.Fatalf("CurrentUsage %+v", usage)
		}
		reqs, units, err := l.MonthlyUsage(context.Background(), "org_1", r.Now)
		if err != nil {
			t.Fatal(err)
		}
		if reqs != 4 || units != 10 {
			t.Fatalf("monthly usage %d requests %d units, want 4 and 10", reqs, units)
		}
	})
}

func TestAllowGroupRejectionSpendsNothing(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		req := Request{Key: "ak_grp", Cost: 1, Hourly: 1000, Burst: 100, Group: GroupExports}
		for i := range 10 {
			if r := mustAllow(t, l, req); !r.Allowed {
				t.Fatalf("export %d rejected: %+v", i+1, r)
			}
		}
		r := mustAllow(t, l, req)
		if r.Allowed || r.RejectedBy != BucketGroup {
			t.Fatalf("11th export: Allowed=%v RejectedBy=%q, want a group rejection", r.Allowed, r.RejectedBy)
		}
		if r.Hourly.Remaining != 990 || r.BurstRemaining != 90 {
			t.Fatalf("group rejection spent units: hourly %d burst %d", r.Hourly.Remaining, r.BurstRemaining)
		}
		if r.LimitBucket != BucketGroup || r.Limit != 10 || r.Remaining != 0 {
			t.Fatalf("headers report %q %d/%d, want the group 0/10", r.LimitBucket, r.Remaining, r.Limit)
		}
		// 1 request per 6 minutes.
		if r.RetryAfter <= 5*time.Minute || r.RetryAfter > 6*time.Minute {
			t.Fatalf("RetryAfter %v", r.RetryAfter)
		}
		// Other groups and ungrouped requests are not affected.
		for _, g := range []Group{GroupNone, GroupBilling} {
			req.Group = g
			if r := mustAllow(t, l, req); !r.Allowed {
				t.Fatalf("group %q rejected after exports ran out: %+v", g, r)
			}
		}
	})
}

func TestGroupLimitsCountRequestsNotCost(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		tests := []struct {
			group  Group
			method string
		}{
			{GroupBilling, http.MethodGet},
			{GroupProvisioning, http.MethodPost},
			{GroupExports, http.MethodDelete},
			{GroupAccount, http.MethodPut},
		}
		for _, tt := range tests {
			t.Run(string(tt.group), func(t *testing.T) {
				n := tt.group.HourlyLimit()
				cost := Cost(tt.method)
				// Plan buckets roomy enough that only the group can reject.
				req := Request{Key: "ak_" + string(tt.group), Cost: cost, Hourly: 1000, Burst: 500, Group: tt.group}
				var last Result
				for i := range n {
					last = mustAllow(t, l, req)
					if !last.Allowed {
						t.Fatalf("request %d of %d rejected: %+v", i+1, n, last)
					}
				}
				if last.GroupBucket.Limit != n || last.GroupBucket.Remaining != 0 {
					t.Fatalf("group bucket %+v after %d requests", last.GroupBucket, n)
				}
				if want := 1000 - n*cost; last.Hourly.Remaining != want {
					t.Fatalf("hourly remaining %d, want %d (%d requests of cost %d)", last.Hourly.Remaining, want, n, cost)
				}
				if last.HourUnits != int64(n*cost) || last.HourRequests != int64(n) {
					t.Fatalf("hour usage %d/%d", last.HourRequests, last.HourUnits)
				}
				if r := mustAllow(t, l, req); r.Allowed || r.RejectedBy != BucketGroup {
					t.Fatalf("request %d: Allowed=%v RejectedBy=%q", n+1, r.Allowed, r.RejectedBy)
				}
			})
		}
	})
}

func TestSuspension(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		req := Request{Key: "ak_abuser", Cost: 3, Hourly: 1000, Burst: 3}
		if r := mustAllow(t, l, req); !r.Allowed {
			t.Fatalf("first request rejected: %+v", r)
		}
		for i := 1; i <= BurstRejectionsTolerated; i++ {
			r := mustAllow(t, l, req)
			if r.Allowed || r.RejectedBy != BucketBurst || r.NewSuspension || !r.SuspendedUntil.IsZero() {
				t.Fatalf("burst rejection %d: %+v", i, r)
			}
		}
		r := mustAllow(t, l, req)
		if r.Allowed || r.RejectedBy != BucketSuspended || !r.NewSuspension {
			t.Fatalf("4th burst rejection: Allowed=%v RejectedBy=%q NewSuspension=%v", r.Allowed, r.RejectedBy, r.NewSuspension)
		}
		if want := r.Now.Add(SuspensionDuration); !r.SuspendedUntil.Equal(want) {
			t.Fatalf("SuspendedUntil %v, want %v", r.SuspendedUntil, want)
		}
		if r.RetryAfter != SuspensionDuration || r.RetryAfterSeconds() != 300 {
			t.Fatalf("RetryAfter %v", r.RetryAfter)
		}
		until := r.SuspendedUntil

		// Suspended: even a request the buckets would admit is rejected,
		// and it is not a new suspension.
		other := Request{Key: "ak_abuser", Cost: 1, Hourly: 1000, Burst: 100}
		r2 := mustAllow(t, l, other)
		if r2.Allowed || r2.RejectedBy != BucketSuspended || r2.NewSuspension || !r2.SuspendedUntil.Equal(until) {
			t.Fatalf("request during the suspension: %+v", r2)
		}
		if r2.RetryAfter <= 0 || r2.RetryAfter > SuspensionDuration {
			t.Fatalf("RetryAfter during the suspension: %v", r2.RetryAfter)
		}
		// Nothing was spent or counted while rejected.
		if r2.Hourly.Remaining != 997 || r2.HourRequests != 1 {
			t.Fatalf("hourly %d, hour requests %d: rejections spent units", r2.Hourly.Remaining, r2.HourRequests)
		}
		u, err := l.CurrentUsage(context.Background(), "ak_abuser", 1000, 3)
		if err != nil {
			t.Fatal(err)
		}
		if u.Allowed || u.RejectedBy != BucketSuspended || !u.SuspendedUntil.Equal(until) {
			t.Fatalf("CurrentUsage during the suspension: %+v", u)
		}
		// Another credential is not affected.
		if r := mustAllow(t, l, Request{Key: "ak_other", Cost: 3, Hourly: 1000, Burst: 3}); !r.Allowed {
			t.Fatalf("other credential rejected: %+v", r)
		}
	})
}

// Time-dependent behaviour, on a server whose clock the test moves.
func TestSuspensionWindowAndExpiry(t *testing.T) {
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		gap           time.Duration // between the 3rd and the 4th burst rejection
		wantSuspended bool
	}{
		{"4th within a minute", 30 * time.Second, true},
		{"4th after a minute", 61 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock, l := newClockServer(t, start)
			req := Request{Key: "ak_w", Cost: 3, Hourly: 1000, Burst: 3}
			mustAllow(t, l, req)
			for range 3 {
				if r := mustAllow(t, l, req); r.RejectedBy != BucketBurst {
					t.Fatalf("want a burst rejection, got %+v", r)
				}
			}
			clock.advance(tt.gap)
			// Drain the burst bucket again if it refilled.
			if r := mustAllow(t, l, req); r.Allowed {
				if r := mustAllow(t, l, req); r.Allowed {
					t.Fatal("burst bucket admitted twice")
				}
			}
			u, err := l.CurrentUsage(context.Background(), "ak_w", 1000, 3)
			if err != nil {
				t.Fatal(err)
			}
			if got := u.RejectedBy == BucketSuspended; got != tt.wantSuspended {
				t.Fatalf("suspended = %v, want %v (%+v)", got, tt.wantSuspended, u)
			}
			if !tt.wantSuspended {
				return
			}
			clock.advance(SuspensionDuration - time.Second)
			if r := mustAllow(t, l, req); r.RejectedBy != BucketSuspended || r.NewSuspension {
				t.Fatalf("1 s before the end: %+v", r)
			}
			clock.advance(time.Second)
			if r := mustAllow(t, l, req); !r.Allowed || !r.SuspendedUntil.IsZero() {
				t.Fatalf("after the suspension: %+v", r)
			}
		})
	}
}

func TestRefill(t *testing.T) {
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	clock, l := newClockServer(t, start)
	req := Request{Key: "ak_refill", Cost: 1, Hourly: 1000, Burst: 100}
	for i := range 100 {
		if r := mustAllow(t, l, req); !r.Allowed {
			t.Fatalf("request %d rejected", i+1)
		}
	}
	r := mustAllow(t, l, req)
	if r.Allowed || r.RejectedBy != BucketBurst || r.RetryAfter != 600*time.Millisecond {
		t.Fatalf("101st: %+v, want a burst rejection with RetryAfter 600ms", r)
	}
	// The hourly bucket is full again 100 * 3.6 s after the first request.
	if want := start.Add(360 * time.Second).Unix(); r.Reset != want {
		t.Fatalf("Reset %d, want %d", r.Reset, want)
	}
	clock.advance(599 * time.Millisecond)
	if r := mustAllow(t, l, req); r.Allowed {
		t.Fatal("admitted 1 ms too early")
	}
	clock.advance(time.Millisecond)
	if r := mustAllow(t, l, req); !r.Allowed || r.BurstRemaining != 0 {
		t.Fatalf("after 600 ms: %+v", r)
	}
	// A minute refills the whole burst bucket, an hour the hourly one.
	clock.advance(time.Hour)
	r = mustAllow(t, l, req)
	if !r.Allowed || r.BurstRemaining != 99 || r.Remaining != 999 {
		t.Fatalf("after an hour: %+v", r)
	}
}

func TestHourlyLimitRejects(t *testing.T) {
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	clock, l := newClockServer(t, start)
	req := Request{Key: "ak_hour", Cost: 3, Hourly: 30}
	for range 10 {
		mustAllow(t, l, req)
	}
	r := mustAllow(t, l, req)
	if r.Allowed || r.RejectedBy != BucketHourly || r.Remaining != 0 || r.Burst != 0 {
		t.Fatalf("%+v", r)
	}
	// 30 units per hour: 2 minutes per unit, 6 for a DELETE.
	if r.RetryAfter != 6*time.Minute {
		t.Fatalf("RetryAfter %v", r.RetryAfter)
	}
	// An hourly rejection is not a burst rejection: no suspension.
	for range 5 {
		if r := mustAllow(t, l, req); r.RejectedBy != BucketHourly {
			t.Fatalf("%+v", r)
		}
	}
	clock.advance(6 * time.Minute)
	if r := mustAllow(t, l, req); !r.Allowed {
		t.Fatalf("after 6 minutes: %+v", r)
	}
}

func TestLimitsBelowMaxCostAreRaised(t *testing.T) {
	_, l := newClockServer(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	r := mustAllow(t, l, Request{Key: "ak_tiny", Cost: 3, Hourly: 1, Burst: 2})
	if !r.Allowed || r.Limit != MaxCost || r.Burst != MaxCost {
		t.Fatalf("%+v", r)
	}
}

func TestUnlimited(t *testing.T) {
	_, l := newClockServer(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	for range 50 {
		r := mustAllow(t, l, Request{Key: "ak_custom", Cost: 3})
		if !r.Allowed || r.Limit != 0 || r.Burst != 0 || r.LimitBucket != "" {
			t.Fatalf("%+v", r)
		}
	}
	r := mustAllow(t, l, Request{Key: "ak_custom", Cost: 3, Group: GroupExports})
	if !r.Allowed || r.LimitBucket != BucketGroup || r.Limit != 10 || r.Remaining != 9 || r.HourRequests != 51 {
		t.Fatalf("%+v", r)
	}
}

func TestCurrentUsageDoesNotSpend(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		ctx := context.Background()
		for range 3 {
			mustAllow(t, l, Request{Key: "ak_cu", Cost: 2, Hourly: 1000, Burst: 100})
		}
		for range 3 {
			u, err := l.CurrentUsage(ctx, "ak_cu", 1000, 100)
			if err != nil {
				t.Fatal(err)
			}
			if !u.Allowed || u.HourRequests != 3 || u.HourUnits != 6 || u.Remaining != 994 ||
				u.BurstUsed() != 6 || u.Burst != 100 || u.NewSuspension {
				t.Fatalf("CurrentUsage %+v", u)
			}
		}
		u, err := l.CurrentUsage(ctx, "ak_unused", 1000, 100)
		if err != nil {
			t.Fatal(err)
		}
		if u.HourRequests != 0 || u.Remaining != 1000 || u.BurstUsed() != 0 {
			t.Fatalf("unused credential %+v", u)
		}
	})
}

func TestRequestValidation(t *testing.T) {
	_, l := newClockServer(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	tests := []struct {
		name string
		req  Request
	}{
		{"empty key", Request{Cost: 1}},
		{"cost above MaxCost", Request{Key: "k", Cost: 4}},
		{"negative cost", Request{Key: "k", Cost: -1}},
		{"negative limit", Request{Key: "k", Hourly: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Allow(context.Background(), tt.req)
			if err == nil || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want a validation error", err)
			}
		})
	}
	// Cost 0 means 1.
	r := mustAllow(t, l, Request{Key: "k", Hourly: 10})
	if r.HourUnits != 1 || r.Remaining != 9 {
		t.Fatalf("%+v", r)
	}
}

func TestTightest(t *testing.T) {
	h := BucketState{Limit: 1000, Remaining: 500}
	g := BucketState{Limit: 100, Remaining: 50}
	gFull := BucketState{Limit: 100, Remaining: 100}
	tests := []struct {
		name       string
		hourly, gr BucketState
		rejectedBy Bucket
		want       Bucket
	}{
		{"neither", BucketState{}, BucketState{}, "", ""},
		{"hourly only", h, BucketState{}, "", BucketHourly},
		{"group only", BucketState{}, g, "", BucketGroup},
		{"group has less left", h, g, "", BucketGroup},
		{"hourly has less left", BucketState{Limit: 1000, Remaining: 10}, gFull, "", BucketHourly},
		{"hourly rejected", BucketState{Limit: 1000, Remaining: 2}, BucketState{Limit: 100, Remaining: 1}, BucketHourly, BucketHourly},
		{"group rejected", h, BucketState{Limit: 100}, BucketGroup, BucketGroup},
		{"burst rejected", h, g, BucketBurst, BucketGroup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := tightest(tt.hourly, tt.gr, tt.rejectedBy); got != tt.want {
				t.Fatalf("tightest = %q, want %q", got, tt.want)
			}
		})
	}
}
