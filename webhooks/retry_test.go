package webhooks

import (
	"slices"
	"testing"
	"time"
)

func TestRetrySchedule(t *testing.T) {
	s := RetrySchedule()
	if len(s)+1 != MaxAttempts {
		t.Fatalf("%d delays, want MaxAttempts-1 = %d", len(s), MaxAttempts-1)
	}
	wantStart := []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	if !slices.Equal(s[:len(wantStart)], wantStart) {
		t.Fatalf("schedule starts %v, want %v", s[:len(wantStart)], wantStart)
	}
	var total time.Duration
	for i, d := range s {
		if d > 3*time.Hour {
			t.Fatalf("delay %d = %v exceeds the 3h cap", i, d)
		}
		if i > 0 && d < s[i-1] {
			t.Fatalf("delay %d = %v shorter than the one before", i, d)
		}
		total += d
	}
	if total < 24*time.Hour {
		t.Fatalf("schedule spans %v, want >= 24h", total)
	}
	if total-s[len(s)-1] >= 24*time.Hour {
		t.Fatalf("schedule spans %v even without its last retry: longer than needed", total)
	}
	s[0] = 0
	if RetrySchedule()[0] != 5*time.Second {
		t.Fatal("RetrySchedule shares its slice")
	}
}

func TestRetryDelay(t *testing.T) {
	schedule := RetrySchedule()
	seeds := []int64{0, 1, -1, 42, JitterSeed("whd_01HZX/evt_01HZY"), 1 << 62}
	for _, seed := range seeds {
		var total time.Duration
		for attempt := 1; attempt < MaxAttempts; attempt++ {
			d := RetryDelay(attempt, seed)
			if again := RetryDelay(attempt, seed); again != d {
				t.Fatalf("seed %d attempt %d: %v then %v", seed, attempt, d, again)
			}
			base := schedule[attempt-1]
			if d < base || d >= base+base/10 {
				t.Fatalf("seed %d attempt %d: %v outside [%v, %v)", seed, attempt, d, base, base+base/10)
			}
			total += d
		}
		if total < 24*time.Hour {
			t.Fatalf("seed %d: retries span %v, want >= 24h", seed, total)
		}
	}

	tests := []struct {
		name    string
		attempt int
		want    time.Duration
	}{
		{"before the first attempt", 0, 0},
		{"negative", -3, 0},
		{"after the last attempt", MaxAttempts, 0},
		{"far beyond", 1000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryDelay(tt.attempt, 7); got != tt.want {
				t.Fatalf("RetryDelay(%d) = %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}

	// The jitter depends on the seed: over many seeds, delays differ.
	distinct := map[time.Duration]bool{}
	for seed := int64(0); seed < 50; seed++ {
		distinct[RetryDelay(7, seed)] = true
	}
	if len(distinct) < 40 {
		t.Fatalf("only %d distinct delays over 50 seeds", len(distinct))
	}
	if a, again := JitterSeed("a"), JitterSeed("a"); a == JitterSeed("b") || a != again {
		t.Fatal("JitterSeed is not a stable hash")
	}
}
