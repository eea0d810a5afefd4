package ratelimit

import (
	"context"
	"net/http"
	"testing"
)

// TestChargeSpendsUnitsNotRequests: Charge spends more units from the
// hourly and burst buckets of a request Allow admitted, counts them in the
// hourly and monthly units but not as requests, caps a cost at a bucket's
// capacity, and refuses (spending nothing) what a bucket cannot cover.
func TestChargeSpendsUnitsNotRequests(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		l := s.limiter(t)
		ctx := context.Background()
		req := Request{Key: "ak_charge", OrgID: "org_charge", Cost: Cost(http.MethodPost), Hourly: 1000, Burst: 50, Group: GroupBilling}
		mustAllow(t, l, req)
		extra := req
		extra.Cost = 30
		r, err := l.Charge(ctx, extra)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Allowed || r.Remaining != 1000-32 || r.BurstRemaining != 50-32 {
			t.Fatalf("after 2 + 30 units: %+v", r)
		}
		if r.HourRequests != 1 || r.HourUnits != 32 {
			t.Fatalf("hour usage %d requests %d units, want 1 and 32", r.HourRequests, r.HourUnits)
		}
		if r.GroupBucket.Limit != 0 {
			t.Fatalf("a charge involves no group: %+v", r.GroupBucket)
		}
		reqs, units, err := l.MonthlyUsage(ctx, "org_charge", r.Now)
		if err != nil || reqs != 1 || units != 32 {
			t.Fatalf("monthly usage %d requests %d units (%v), want 1 and 32", reqs, units, err)
		}
		// 18 units are left in the burst bucket: 30 more is refused and spends nothing.
		r, err = l.Charge(ctx, extra)
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed || r.RejectedBy != BucketBurst || r.HourUnits != 32 {
			t.Fatalf("a charge above what is left: %+v", r)
		}
		// A cost above the capacity is the capacity.
		big := Request{Key: "ak_charge_big", Cost: 5000, Hourly: 1000, Burst: 40}
		if r, err = l.Charge(ctx, big); err != nil || !r.Allowed || r.BurstRemaining != 0 || r.HourUnits != 40 {
			t.Fatalf("a charge above the capacity: %+v (%v)", r, err)
		}
		if _, err := l.Charge(ctx, Request{Key: "ak_charge", Cost: MaxChargeCost + 1}); err == nil {
			t.Fatal("a charge above MaxChargeCost was accepted")
		}
	})
}
