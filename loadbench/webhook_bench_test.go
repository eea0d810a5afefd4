package loadbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// webhookBenchCommand is how BenchmarkWebhookFanout runs (make bench-webhooks).
const webhookBenchCommand = "LOAD_BENCH=1 go test -run '^$' -bench BenchmarkWebhookFanout -benchtime 1x -timeout 60m ./loadbench/"

// benchEventType is the event the benchmark emits and subscribes to: one
// nothing else in the stack writes while it runs (the worker's simulator
// writes service.down, service.restored and service.performance_alert).
const benchEventType = "service.maintenance_scheduled"

// BenchmarkWebhookFanout measures webhook fan-out: LOAD_BENCH_EVENTS events
// (default 1,000) of the demo tenant's sandbox, each matched by
// LOAD_BENCH_SUBSCRIPTIONS subscriptions (default 10, created through the
// API) whose URLs are one loopback receiver in the benchmark's process.
// The events are written by the benchmark's process straight into the
// outbox (one transaction each, eventlog.RecordEvent, as the store's state
// changes write them; the database is shared), one after another as fast
// as they commit, or at LOAD_BENCH_EVENT_RATE events per second; each
// event is about a resource of its own (deliveries of one resource wait for
// each other, see workflows.WebhookDelivery). `platform worker` (worker
// and outbox dispatcher) delivers them, with WEBHOOK_ALLOW_PRIVATE=true
// (as the integration tests) so that loopback URLs are accepted. It reports
// deliveries per second (first event's created_at to the last receipt)
// and the latency of each delivery from its event's created_at (kept by the
// benchmark at the database's microsecond precision: the body's timestamp
// has whole seconds) to its receipt, split at the delivery row's creation
// (the dispatcher's round) and its workflow's start. A warm-up event goes
// first, alone, and is reported on its own. It runs only when LOAD_BENCH is
// set (see webhookBenchCommand).
func BenchmarkWebhookFanout(b *testing.B) {
	if os.Getenv("LOAD_BENCH") == "" {
		b.Skip("LOAD_BENCH is not set; run: " + webhookBenchCommand + " (or make bench-webhooks)")
	}
	nEvents := envInt(b, "LOAD_BENCH_EVENTS", 1000)
	nSubs := envInt(b, "LOAD_BENCH_SUBSCRIPTIONS", 10)
	rate := envInt(b, "LOAD_BENCH_EVENT_RATE", 0)
	timeout := 30 * time.Minute
	if nEvents < 1 || nSubs < 1 || nSubs > eventlog.MaxWebhooksPerTenant {
		b.Fatalf("LOAD_BENCH_EVENTS and LOAD_BENCH_SUBSCRIPTIONS (at most %d) must be positive", eventlog.MaxWebhooksPerTenant)
	}
	ctx := context.Background()
	st := startStack(b, true, "WEBHOOK_ALLOW_PRIVATE=true")
	scope := models.TenantScope(st.demoOrg, models.EnvTest)

	rcv := newReceiver()
	srv := httptest.NewServer(rcv) // 127.0.0.1
	defer srv.Close()
	subs := make([]string, nSubs)
	for i := range subs {
		body, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("%s/hook/%d", srv.URL, i), "events": []string{benchEventType},
			"description": "load benchmark receiver " + strconv.Itoa(i)})
		code, answer := post(st.base+"/v1/webhooks", st.fx.key, body)
		if code != http.StatusCreated {
			b.Fatalf("POST /v1/webhooks: %d %.500s", code, answer)
		}
		var out struct {
			Webhook struct{ ID string } `json:"webhook"`
		}
		if err := json.Unmarshal(answer, &out); err != nil || out.Webhook.ID == "" {
			b.Fatalf("POST /v1/webhooks: %s %v", answer, err)
		}
		subs[i] = out.Webhook.ID
	}

	emit := func(i int) *eventlog.Event {
		ev := eventlog.NewEvent(benchEventType, fmt.Sprintf("svc_loadbench%06d", i), map[string]any{
			"service_id": fmt.Sprintf("svc_loadbench%06d", i), "sequence": i,
			"maintenance": map[string]any{"window_start": "2026-12-01T02:00:00Z", "window_end": "2026-12-01T04:00:00Z", "impact": "none"},
		})
		if err := st.store.Tx(ctx, scope, func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
			b.Fatalf("record event %d: %v", i, err)
		}
		if ev.CreatedAt.IsZero() {
			b.Fatal("the recorded event has no created_at")
		}
		rcv.expect(ev.ID, ev.CreatedAt)
		return ev
	}

	// Warm-up: one event alone (the dispatcher idles between rounds).
	warm := emit(-1)
	if !rcv.wait(nSubs, 2*time.Minute) {
		b.Fatalf("the warm-up event reached %d of %d subscriptions within 2 minutes", rcv.count(), nSubs)
	}
	warmLat := rcv.latencies()
	rcv.reset()

	// The load.
	var pace *time.Ticker
	if rate > 0 {
		pace = time.NewTicker(time.Second / time.Duration(rate))
		defer pace.Stop()
	}
	first := time.Now()
	ids := make([]string, 0, nEvents)
	for i := range nEvents {
		if pace != nil {
			<-pace.C
		}
		ids = append(ids, emit(i).ID)
	}
	emitted := time.Since(first)
	want := nEvents * nSubs
	progress := time.NewTicker(30 * time.Second)
	defer progress.Stop()
	deadline := time.Now().Add(timeout)
	for !rcv.wait(want, time.Second) {
		select {
		case <-progress.C:
			fmt.Printf("  ... %d of %d deliveries received after %s%s\n", rcv.count(), want, time.Since(first).Round(time.Second), loadAverage())
		default:
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deliveries received within %s", rcv.count(), want, timeout)
		}
	}
	lat := rcv.latencies()
	firstCreated, lastReceipt := rcv.span()
	total := lastReceipt.Sub(firstCreated)

	// The split of each delivery: event created_at -> delivery row created
	// (dispatcher round) -> workflow started -> received.
	var dels []eventlog.WebhookDelivery
	for chunk := range slices.Chunk(ids, 500) {
		var part []eventlog.WebhookDelivery
		if err := st.store.In(ctx, models.SystemScope()).Where("event_id IN ?", chunk).Find(&part).Error; err != nil {
			b.Fatal(err)
		}
		dels = append(dels, part...)
	}
	var toRow, toStart, toReceipt []time.Duration
	var attempts, extra int
	for _, d := range dels {
		got, ok := rcv.receipt(d.EventID, d.SubscriptionID, subs)
		if !ok || d.WorkflowStartedAt == nil {
			continue
		}
		toRow = append(toRow, d.CreatedAt.Sub(d.EventCreatedAt))
		toStart = append(toStart, d.WorkflowStartedAt.Sub(d.CreatedAt))
		toReceipt = append(toReceipt, got.Sub(*d.WorkflowStartedAt))
		attempts += d.Attempts
		if d.Attempts > 1 {
			extra++
		}
	}
	for _, s := range [][]time.Duration{toRow, toStart, toReceipt} {
		slices.Sort(s)
	}

	fmt.Printf("\nWebhook fan-out: %s, Temporal dev server (in-memory), `platform worker` + `platform serve`, %d CPUs (GOMAXPROCS %d), %s/%s%s\n",
		st.dbName, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadAverage())
	pacing := "as fast as they commit"
	if rate > 0 {
		pacing = fmt.Sprintf("at %d/s", rate)
	}
	fmt.Printf("%d events x %d subscriptions = %d deliveries to one loopback receiver; events written %s (%s, %.0f events/s)\n",
		nEvents, nSubs, want, pacing, emitted.Round(time.Millisecond), float64(nEvents)/emitted.Seconds())
	fmt.Printf("warm-up event alone (%s): %d deliveries, latency p50 %s, max %s\n", warm.ID, len(warmLat), msf(quantile(warmLat, 0.5)), msf(quantile(warmLat, 1)))
	fmt.Printf("\nthroughput: %d deliveries in %s from the first event's created_at to the last receipt: %.1f deliveries/s (%d duplicates received)\n",
		want, total.Round(time.Millisecond), float64(want)/total.Seconds(), rcv.duplicates())
	fmt.Printf("latency created_at -> receipt: p50 %s, p99 %s, max %s\n", msf(quantile(lat, 0.5)), msf(quantile(lat, 0.99)), msf(quantile(lat, 1)))
	fmt.Printf("  of which created_at -> delivery row (dispatcher): p50 %s, p99 %s\n", msf(quantile(toRow, 0.5)), msf(quantile(toRow, 0.99)))
	fmt.Printf("           delivery row -> workflow started:         p50 %s, p99 %s\n", msf(quantile(toStart, 0.5)), msf(quantile(toStart, 0.99)))
	fmt.Printf("           workflow started -> receipt:              p50 %s, p99 %s\n", msf(quantile(toReceipt, 0.5)), msf(quantile(toReceipt, 0.99)))
	fmt.Printf("  (%d delivery rows read; %d attempts in all, %d deliveries needed more than one)\n\nfinished%s\n\n", len(dels), attempts, extra, loadAverage())

	b.ReportMetric(float64(want)/total.Seconds(), "deliveries/s")
	b.ReportMetric(float64(quantile(lat, 0.5))/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(quantile(lat, 0.99))/float64(time.Millisecond), "p99-ms")
}

// receiver is the loopback webhook receiver: it answers 200 to every
// request and keeps the first receipt time of each (event, subscription);
// the subscription is the path's last element (/hook/N).
type receiver struct {
	mu      sync.Mutex
	created map[string]time.Time    // event id -> created_at
	got     map[[2]string]time.Time // (event id, hook index) -> first receipt
	dups    int
	first   time.Time
}

func newReceiver() *receiver {
	return &receiver{created: map[string]time.Time{}, got: map[[2]string]time.Time{}}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	raw, _ := io.ReadAll(req.Body)
	var body struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &body)
	hook := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	r.mu.Lock()
	k := [2]string{body.ID, hook}
	if _, seen := r.got[k]; seen {
		r.dups++
	} else if _, ours := r.created[body.ID]; ours {
		r.got[k] = now
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// expect records an event's created_at (the clock of this process: the
// receipts are timed on it too).
func (r *receiver) expect(id string, created time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.created) == 0 {
		r.first = created
	}
	r.created[id] = created
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *receiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dups
}

// wait polls until n receipts are in or d passes, and says which.
func (r *receiver) wait(n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if r.count() >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// latencies returns every receipt's delay after its event's created_at, sorted.
func (r *receiver) latencies() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Duration, 0, len(r.got))
	for k, at := range r.got {
		out = append(out, at.Sub(r.created[k[0]]))
	}
	slices.Sort(out)
	return out
}

// span returns the first expected event's created_at and the last receipt.
func (r *receiver) span() (time.Time, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last time.Time
	for _, at := range r.got {
		if at.After(last) {
			last = at
		}
	}
	return r.first, last
}

// receipt returns when the delivery of event to subscription subID (one of
// subs, by index) was received.
func (r *receiver) receipt(event, subID string, subs []string) (time.Time, bool) {
	i := slices.Index(subs, subID)
	if i < 0 {
		return time.Time{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.got[[2]string{event, strconv.Itoa(i)}]
	return at, ok
}

// reset forgets every event and receipt.
func (r *receiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created, r.got, r.dups, r.first = map[string]time.Time{}, map[[2]string]time.Time{}, 0, time.Time{}
}
