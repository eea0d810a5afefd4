package ratelimit

import (
	"context"
	"net/http"
	"testing"
)

// TestChargeSpendsUnitsNotRequests: Charge spends more units from the
// hourly and burst buckets of a request Allow admitted, counts them in the
// hourly and monthly units but not as requests, caps a cost at a bucket's
// capacity, takes one request from the group's bucket, and refuses
// (spending nothing) what a bucket cannot cover.
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
		if !r.Allowed || r.Hourly.Remaining != 1000-32 || r.BurstRemaining != 50-32 {
			t.Fatalf("after 2 + 30 units: %+v", r)
		}
		if r.HourRequests != 1 || r.HourUnits != 32 {
			t.Fatalf("hour usage %d requests %d units, want 1 and 32", r.HourRequests, r.HourUnits)
		}
		if r.GroupBucket.Limit != GroupBilling.HourlyLimit() || r.GroupBucket.Remaining != GroupBilling.HourlyLimit()-2 {
			t.Fatalf("the group's bucket: %+v, want two requests spent", r.GroupBucket)
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
		// Cost 0 with a group: one request of the group, no units.
		group := Request{Key: "ak_charge_group", Hourly: 1000, Burst: 50, Group: GroupExports}
		for i := 1; i <= GroupExports.HourlyLimit()+1; i++ {
			r, err := l.Charge(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			if want := i <= GroupExports.HourlyLimit(); r.Allowed != want || r.HourUnits != 0 || r.BurstRemaining != 50 {
				t.Fatalf("group charge %d: %+v, want allowed %v and no units", i, r, want)
			}
			if i > GroupExports.HourlyLimit() && r.RejectedBy != BucketGroup {
				t.Fatalf("group charge %d rejected by %q", i, r.RejectedBy)
			}
		}
		if _, err := l.Charge(ctx, Request{Key: "ak_charge", Cost: MaxChargeCost + 1}); err == nil {
			t.Fatal("a charge above MaxChargeCost was accepted")
		}
	})
}
