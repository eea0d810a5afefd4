package integration

import (
	"os"
	"testing"
	"time"
)

// BenchmarkBulkProvision1000 measures a 1,000-item bulk provisioning (in
// parallel, 50 items at a time) from the POST to the operation's end, on a
// real Temporal dev server with the simulator's step delay at zero: what the
// platform itself costs per item (workflows, activities, database). It
// measures and asserts nothing about the time; each iteration uses a new
// tenant so that the sandbox inventory starts empty.
func BenchmarkBulkProvision1000(b *testing.B) {
	if _, err := os.Stat("../bin/temporal"); err != nil {
		b.Skip("bin/temporal is absent: run scripts/install-temporal.sh")
	}
	s := startBulkStack(b, "0s")
	const items = 1000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, key := s.newTenant("Bench")
		b.StartTimer()
		start := time.Now()
		id := s.bulkProvision(key, items, "loc_sandbox_all", map[string]any{"parallel": true, "max_concurrency": 50}, sameTemplate("internet-dedicated-1g"))
		seen := s.follow(id, key, 30*time.Minute)
		elapsed := time.Since(start)
		if last := seen[len(seen)-1]; last.Status != "completed" || last.Progress.Completed != items {
			b.Fatalf("bulk ended %s with %d of %d items completed", last.Status, last.Progress.Completed, items)
		}
		b.ReportMetric(float64(items)/elapsed.Seconds(), "items/s")
		b.ReportMetric(elapsed.Seconds(), "s/job")
	}
}
