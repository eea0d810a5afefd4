//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// temporalOutage is how long the Temporal server stays down.
const temporalOutage = 30 * time.Second

// TestTemporalDown stops the Temporal dev server for temporalOutage while
// operations are in flight: reads keep working, operation starts answer
// 503 DEPENDENCY_UNAVAILABLE with Retry-After (never 500); the server
// started again on the same port and state, the operations in flight and
// new ones complete, without restarting the platform.
func TestTemporalDown(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{stepDelay: 500 * time.Millisecond, restartable: true,
		postgresOnly: "the outage is the Temporal server's, the database takes no part in it: run once, on PostgreSQL, to keep make test-faults short"})
	var inFlight []string
	for i := range 5 {
		var acc accepted
		s.do("POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": fmt.Sprintf("before-%d", i)}, http.StatusAccepted, &acc)
		inFlight = append(inFlight, acc.RequestID)
	}
	time.Sleep(time.Second) // the operations are in their steps

	s.temporal.stop(30 * time.Second)
	down := time.Now()
	reads, refused := 0, 0
	for time.Since(down) < temporalOutage {
		// Reads: the catalog, an operation, the services.
		for _, path := range []string{"/v1/services/catalog", "/v1/operations/" + inFlight[reads%len(inFlight)], "/v1/services"} {
			a, err := s.send(s.bases[0], "GET", path, nil, nil)
			if err != nil || a.status != http.StatusOK {
				t.Fatalf("GET %s with Temporal down: %d %s %v", path, a.status, a.body, err)
			}
			reads++
		}
		// A start is refused with the documented 503.
		a, err := s.send(s.bases[0], "POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": fmt.Sprintf("during-%d", refused)})
		if err != nil {
			t.Fatal(err)
		}
		if a.status != http.StatusServiceUnavailable || a.errorCode() != "DEPENDENCY_UNAVAILABLE" || a.header.Get("Retry-After") == "" {
			t.Fatalf("operation start with Temporal down (%s): %d %v %s", time.Since(down).Round(time.Millisecond), a.status, a.header, a.body)
		}
		refused++
		time.Sleep(500 * time.Millisecond)
	}
	s.temporal.start()
	up := time.Now()

	// New starts are accepted again, and everything completes.
	var after []string
	for i := 0; len(after) < 3; i++ {
		a, err := s.send(s.bases[0], "POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": fmt.Sprintf("after-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case a.status == http.StatusAccepted:
			var acc accepted
			if err := json.Unmarshal(a.body, &acc); err != nil {
				t.Fatal(err)
			}
			after = append(after, acc.RequestID)
		case a.status == http.StatusServiceUnavailable && a.errorCode() == "DEPENDENCY_UNAVAILABLE" && time.Since(up) < 30*time.Second:
			time.Sleep(500 * time.Millisecond)
		default:
			t.Fatalf("operation start after Temporal's restart: %d %s", a.status, a.body)
		}
	}
	statuses := s.waitTerminal(append(append([]string{}, inFlight...), after...), 3*time.Minute)
	for id, st := range statuses {
		if st != "completed" {
			t.Fatalf("operation %s ended %s", id, st)
		}
	}
	var services int64
	if err := s.db().Table("services").Where("operation_id IN ?", append(inFlight, after...)).Count(&services).Error; err != nil {
		t.Fatal(err)
	}
	if services != int64(len(inFlight)+len(after)) {
		t.Fatalf("%d services for %d operations", services, len(inFlight)+len(after))
	}
	t.Logf("Temporal down %s: %d reads answered 200, %d starts answered 503 with Retry-After; %d operations in flight and %d started after completed %s after its restart",
		up.Sub(down).Round(time.Millisecond), reads, refused, len(inFlight), len(after), time.Since(up).Round(time.Millisecond))
	s.figure("temporal_outage_reads_ok", reads)
	s.figure("temporal_outage_starts_503", refused)
	s.figure("temporal_outage_operations_completed", len(inFlight)+len(after))
}
