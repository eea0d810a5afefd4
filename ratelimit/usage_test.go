package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

func TestHourlyHistory(t *testing.T) {
	start := time.Date(2026, 3, 10, 9, 59, 0, 0, time.UTC)
	clock, l := newClockServer(t, start)
	ctx := context.Background()
	req := Request{Key: "ak_hist", OrgID: "org_hist", Hourly: 1000, Burst: 100}
	// 09:59: GET, GET, DELETE. 10:00-10:59: nothing. 11:30: POST.
	for _, m := range []string{"GET", "GET", "DELETE"} {
		req.Cost = Cost(m)
		mustAllow(t, l, req)
	}
	clock.set(time.Date(2026, 3, 10, 11, 30, 0, 0, time.UTC))
	req.Cost = Cost("POST")
	mustAllow(t, l, req)

	got, err := l.HourlyHistory(ctx, "ak_hist", clock.now, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []HourUsage{
		{time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC), 0, 0},
		{time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), 3, 5},
		{time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC), 0, 0},
		{time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC), 1, 2},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history\n got %v\nwant %v", got, want)
	}

	// The 09:00 counters are kept for HourlyUsageTTL after their last
	// increment (09:59), then expire.
	clock.set(start.Add(HourlyUsageTTL - time.Second))
	got, err = l.HourlyHistory(ctx, "ak_hist", start, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Requests != 3 {
		t.Fatalf("09:00 history gone before its TTL: %v", got)
	}
	clock.set(start.Add(HourlyUsageTTL))
	got, err = l.HourlyHistory(ctx, "ak_hist", start, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Requests != 0 {
		t.Fatalf("09:00 history kept past its TTL: %v", got)
	}

	for _, hours := range []int{0, -1, MaxHistoryHours + 1} {
		if _, err := l.HourlyHistory(ctx, "ak_hist", clock.now, hours); err == nil {
			t.Errorf("HourlyHistory(hours=%d) succeeded", hours)
		}
	}
}

// The script computes the month from Redis server time with its own calendar
// arithmetic; it must agree with Go's at month, year and leap-day edges.
func TestMonthlyUsageCalendar(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 1, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 28, 23, 59, 59, 0, time.UTC),
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC),
		time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2100, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2047, 7, 15, 6, 0, 0, 0, time.UTC),
	}
	clock, l := newClockServer(t, times[0])
	ctx := context.Background()
	for i, ts := range times {
		t.Run(ts.Format(time.RFC3339), func(t *testing.T) {
			clock.set(ts)
			org := "org_" + strconv.Itoa(i)
			mustAllow(t, l, Request{Key: "ak_" + org, OrgID: org, Cost: 3})
			mustAllow(t, l, Request{Key: "ak_" + org, OrgID: org, Cost: 1})
			reqs, units, err := l.MonthlyUsage(ctx, org, ts)
			if err != nil {
				t.Fatal(err)
			}
			if reqs != 2 || units != 4 {
				t.Fatalf("month of %v: %d requests %d units, want 2 and 4", ts, reqs, units)
			}
			for _, other := range []time.Time{ts.AddDate(0, 0, -ts.Day()), ts.AddDate(0, 1, 1-ts.Day())} {
				if reqs, _, _ := l.MonthlyUsage(ctx, org, other); reqs != 0 {
					t.Fatalf("usage of %v counted in %v", ts, other)
				}
			}
		})
	}
}

func TestUsageCountersTTL(t *testing.T) {
	eachServer(t, func(t *testing.T, s server) {
		c := s.client(t)
		l := New(c)
		ctx := context.Background()
		r := mustAllow(t, l, Request{Key: "ak_ttl", OrgID: "org_ttl", Cost: 2, Hourly: 1000, Burst: 100})
		hourKey := credentialPrefix("ak_ttl") + "use:" + strconv.FormatInt(r.Now.Unix()/3600, 10)
		m := r.Now.UTC()
		monthKey := orgPrefix("org_ttl") + strconv.Itoa(m.Year()*100+int(m.Month()))
		for key, want := range map[string]time.Duration{hourKey: HourlyUsageTTL, monthKey: MonthlyUsageTTL} {
			ttl, err := c.TTL(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ttl <= want-time.Minute || ttl > want {
				t.Errorf("TTL of %s = %v, want about %v", key, ttl, want)
			}
		}
		hist, err := l.HourlyHistory(ctx, "ak_ttl", r.Now, 24)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 24 || hist[23].Requests != 1 || hist[23].Units != 2 || hist[0].Requests != 0 {
			t.Fatalf("history %v", hist)
		}
		if hist[23].Hour != r.Now.UTC().Truncate(time.Hour) {
			t.Fatalf("last hour %v, want %v", hist[23].Hour, r.Now.UTC().Truncate(time.Hour))
		}
		reqs, units, err := l.MonthlyUsage(ctx, "org_ttl", r.Now)
		if err != nil || reqs != 1 || units != 2 {
			t.Fatalf("MonthlyUsage = %d, %d, %v", reqs, units, err)
		}
		// The bucket keys expire once the bucket is full again.
		ttl, err := c.PTTL(ctx, credentialPrefix("ak_ttl")+"hour").Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > 7200*time.Millisecond {
			t.Fatalf("hourly bucket TTL %v, want at most 2 units * 3.6 s", ttl)
		}
	})
}
