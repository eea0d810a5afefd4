//go:build faults

package faults

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Sizes of TestWorkerKilledRepeatedly.
const (
	killOperations = 200
	killBulkItems  = 500
	killEvery      = 8 * time.Second
	killTimes      = 6
)

// TestWorkerKilledRepeatedly runs 200 provisioning operations and a
// 500-item bulk job on two workers while SIGKILLing one of them every killEvery
// (and starting it again), killTimes times: every operation ends once, completed;
// no inventory is allocated twice and none leaks; no service exists twice;
// every event exists once and each delivery of it to the subscription is
// recorded once and reached the receiver.
func TestWorkerKilledRepeatedly(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{workers: 2, postgresOnly: "two worker processes on one database"})
	hooks := newReceiver(t)
	subscribed := time.Now()
	sub := s.subscribe(hooks, "service.*")
	var servicesBefore int64
	if err := s.db().Table("services").Count(&servicesBefore).Error; err != nil {
		t.Fatal(err)
	}

	// The killer: SIGKILL a worker, start it again, alternately, until
	// stopKiller (deferred too, so that it never outlives the test).
	stop, killsDone := make(chan struct{}), make(chan int, 1)
	go func() {
		kills := 0
		defer func() { killsDone <- kills }()
		for kills < killTimes {
			select {
			case <-stop:
				return
			case <-time.After(killEvery):
			}
			w := s.workers[kills%2]
			w.Kill()
			kills++
			w.Start()
			w.WaitReady(time.Minute)
		}
	}()
	stopKiller := sync.OnceValue(func() int { close(stop); return <-killsDone })
	defer stopKiller()
	began := time.Now()

	// The bulk job and the operations, started while the kills go on.
	items := make([]any, killBulkItems)
	for i := range items {
		items[i] = map[string]any{"template": "internet-dedicated-1g", "location": "loc_sandbox_all"}
	}
	var bulk accepted
	s.do("POST", "/v1/services/bulk/provision", map[string]any{"services": items, "orchestration": map[string]any{"parallel": true, "max_concurrency": 50}},
		nil, http.StatusAccepted, &bulk)
	keys := s.keyPool(killOperations/40 + 1)
	ops := make([]string, killOperations)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	startRetries := 0
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < killOperations; i += 8 {
				a, retries, problem := s.retryCall(keys[i/40], s.bases[0], "POST", "/v1/services/provision", sandboxOrder, fmt.Sprintf("kill-%d", i))
				var acc accepted
				if problem == "" && (a.status != http.StatusAccepted || jsonDecode(a.body, &acc) != nil) {
					problem = fmt.Sprintf("start %d: %d %s", i, a.status, a.body)
				}
				mu.Lock()
				startRetries += retries
				if problem != "" {
					failures = append(failures, problem)
				}
				mu.Unlock()
				if problem != "" {
					continue
				}
				ops[i] = acc.RequestID
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("starts refused:\n%v", failures)
	}
	statuses := s.waitTerminal(append(append([]string{}, ops...), bulk.RequestID), 10*time.Minute)
	kills := stopKiller()
	took := time.Since(began)
	for id, st := range statuses {
		if st != "completed" {
			t.Errorf("operation %s ended %s", id, st)
		}
	}
	if t.Failed() {
		return
	}
	c := s.consistency(servicesBefore, killOperations+killBulkItems, subscribed)
	deliveries := s.waitDelivered(sub, 3*time.Minute)
	if deliveries["succeeded"] != c.events || len(deliveries) != 1 {
		t.Fatalf("deliveries by status %v for %d events", deliveries, c.events)
	}
	// The webhook-id is the event's id (the same on every attempt, for
	// receivers to deduplicate).
	got := map[string]int{}
	for _, d := range hooks.deliveries() {
		got[d.id]++
	}
	var eventIDs []string
	if err := s.db().Table("webhook_deliveries").Where("subscription_id = ?", sub).Pluck("event_id", &eventIDs).Error; err != nil {
		t.Fatal(err)
	}
	again := 0
	for _, id := range eventIDs {
		if got[id] == 0 {
			t.Fatalf("event %s recorded as delivered never reached the receiver", id)
		}
		again += got[id] - 1
	}
	t.Logf("%d operations and a %d-item bulk job in %s with %d worker SIGKILLs: every operation completed once, %d services, %d service events, "+
		"%d deliveries succeeded (one per event), %d requests repeated with the same webhook-id by a worker killed before it recorded the delivery; %d starts retried after a 503",
		killOperations, killBulkItems, took.Round(time.Second), kills, c.services, c.events, deliveries["succeeded"], again, startRetries)
	s.figure("kill_operations", killOperations+1)
	s.figure("kill_bulk_items", killBulkItems)
	s.figure("kill_worker_sigkills", kills)
	s.figure("kill_services", c.services)
	s.figure("kill_events", c.events)
	s.figure("kill_deliveries", deliveries["succeeded"])
	s.figure("kill_same_id_redeliveries", again)
	s.figure("kill_losses", 0)
}
