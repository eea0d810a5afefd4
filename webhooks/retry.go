package webhooks

import (
	"hash/fnv"
	"time"
)

// MaxAttempts is how many times one delivery is attempted in all: the
// first attempt and one retry per RetrySchedule entry.
const MaxAttempts = 15

// retryCap is the longest base delay between two attempts.
const retryCap = 3 * time.Hour

// RetrySchedule returns the base delays between attempts (a new slice on
// every call): exponential growth capped at 3 hours, spanning at least 24
// hours. Entry i is the wait after attempt i+1 failed, before attempt i+2.
// Without jitter the attempts happen at:
//
//	attempt  delay before it  time since the first attempt
//	1        -                0
//	2        5s               5s
//	3        30s              35s
//	4        2m               2m35s
//	5        10m              12m35s
//	6        30m              42m35s
//	7        1h               1h42m35s
//	8..15    3h each          4h42m35s .. 25h42m35s
//
// After attempt 15 (MaxAttempts) fails, the delivery is given up.
func RetrySchedule() []time.Duration {
	s := []time.Duration{
		5 * time.Second, 30 * time.Second, 2 * time.Minute,
		10 * time.Minute, 30 * time.Minute, time.Hour,
	}
	for len(s) < MaxAttempts-1 {
		s = append(s, retryCap)
	}
	return s
}

// RetryDelay returns how long to wait after attempt number attempt
// (1-based) failed: the RetrySchedule entry plus a jitter in [0, 10%) of it
// derived only from jitterSeed and attempt, so it is deterministic (safe
// in a Temporal workflow: no clock, no global random source) and never
// shortens the schedule below 24 hours. Different deliveries should pass
// different seeds (see JitterSeed) so their retries spread out.
//
// It returns 0 when there is no further attempt: attempt < 1 or
// attempt >= MaxAttempts.
func RetryDelay(attempt int, jitterSeed int64) time.Duration {
	if attempt < 1 || attempt >= MaxAttempts {
		return 0
	}
	base := RetrySchedule()[attempt-1]
	span := uint64(base / 10)
	if span == 0 {
		return base
	}
	r := splitmix64(uint64(jitterSeed) + uint64(attempt)*0x9e3779b97f4a7c15)
	return base + time.Duration(r%span)
}

// JitterSeed returns a seed for RetryDelay derived from a stable string
// such as the delivery or workflow id (64-bit FNV-1a).
func JitterSeed(s string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return int64(h.Sum64())
}

// splitmix64 is the SplitMix64 finaliser: a fast, well-mixed bijection.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
