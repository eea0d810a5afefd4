package integration

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// clusterSecretsKey is the SECRETS_KEY of every process of the cluster.
var clusterSecretsKey = strings.Repeat("6b", 32)

// clusterStepDelay is SIMULATOR_STEP_DELAY: long enough for a step to be
// caught in flight, short enough for a provisioning to take seconds.
const clusterStepDelay = 700 * time.Millisecond

// sandboxOrder is a provisioning order any number of which the sandbox
// accepts at the same location.
var sandboxOrder = map[string]any{
	"service_template": "internet-dedicated-1g", "location_id": "loc_sandbox_all",
	"customizations": map[string]any{"bandwidth": "100mbps"},
}

// cluster is two `platform serve` and two `platform worker` processes of
// the binary built from this tree, on one PostgreSQL database, one
// redis-server and one Temporal dev server, with the test's own store and
// Temporal client on the same ones.
type cluster struct {
	t        *testing.T
	store    *models.Store
	temporal client.Client
	apis     [2]*testenv.Process
	bases    [2]string // the APIs' base URLs
	workers  [2]*testenv.Process
	http     *http.Client
	demoOrg  string
	opsKey   string // sandbox key of the demo tenant: provisioning and webhooks
	loadKey  string // sandbox key of the demo tenant: the rolling restart's load
	hooks    *hookReceiver
}

// TestTwoOfEverything runs the platform as it is deployed, two of each
// process: operations started on either API complete once, rate limits
// hold across both APIs, webhooks are delivered once although two workers
// dispatch the outbox, a worker killed (SIGKILL) in the middle of a step
// has the step finished by the other, and a rolling restart of every
// process under a steady load loses no acknowledged request and answers no
// 5xx but the documented 503 of a draining API.
func TestTwoOfEverything(t *testing.T) {
	if !testenv.IsPostgres() {
		t.Skip("TestTwoOfEverything runs four platform processes on one shared database: PostgreSQL only (bash scripts/with-postgres.sh go test ./integration -run TestTwoOfEverything)")
	}
	c := startCluster(t)
	var beforeKill, afterKill map[string]int // deliveries per webhook-id
	if !t.Run("operations started on either API complete once", func(t *testing.T) { beforeKill = c.operationsCompleteOnce(t) }) {
		return
	}
	if !t.Run("rate limits hold across both APIs", c.rateLimitsHold) {
		return
	}
	if !t.Run("a worker killed mid-step has the step finished by the other", func(t *testing.T) { afterKill = c.killedWorkerHandsOver(t) }) {
		return
	}
	t.Run("a rolling restart under load loses no acknowledged request", c.rollingRestart)
	t.Run("webhooks are delivered once", func(t *testing.T) { c.webhooksDeliveredOnce(t, beforeKill, afterKill) })
}

// startCluster builds the binary, migrates and seeds a fresh database with
// it, and starts the four processes, each ready.
func startCluster(t *testing.T) *cluster {
	ctx := context.Background()
	dir := t.TempDir()
	temporalAddr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	redisURL := testenv.RedisURL(t)
	dbURL := testenv.DatabaseURL(t)
	exe := testenv.BuildPlatform(t, dir)
	queue := "twoofall-" + models.RandomString(6)
	common := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir,
		"DATABASE_URL=" + dbURL, "REDIS_URL=" + redisURL, "SECRETS_KEY=" + clusterSecretsKey,
		"BLOB_URL=file:" + filepath.Join(dir, "blobs"), "TEMPORAL_ADDRESS=" + temporalAddr, "TEMPORAL_TASK_QUEUE=" + queue,
		"SIMULATOR_STEP_DELAY=" + clusterStepDelay.String(), "SHUTDOWN_TIMEOUT=10s", "SHUTDOWN_DRAIN_DELAY=1s",
		"WEBHOOK_ALLOW_PRIVATE=true", "LOG_LEVEL=info",
	}
	seedCmd := testenv.NewProcess(t, "seed", exe, "seed", dir, "", common) // migrates, then seeds
	seedCmd.Start()
	if code := seedCmd.Wait(2 * time.Minute); code != 0 {
		t.Fatalf("platform seed exited with status %d", code)
	}

	c := &cluster{t: t, http: &http.Client{Timeout: 30 * time.Second}}
	c.store = openClusterStore(t, dbURL)
	c.setUpTenant(ctx)
	tc, err := temporalclient.Dial(ctx, temporalclient.Options{Address: temporalAddr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	c.temporal = tc

	for i, name := range []string{"worker-1", "worker-2"} {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		c.workers[i] = testenv.NewProcess(t, name, exe, "worker", dir, "http://"+addr+"/readyz", append(common, "WORKER_HTTP_ADDR="+addr))
	}
	for i, name := range []string{"api-a", "api-b"} {
		addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
		c.bases[i] = "http://" + addr
		c.apis[i] = testenv.NewProcess(t, name, exe, "serve", dir, c.bases[i]+"/readyz", append(common, "HTTP_ADDR="+addr, "PUBLIC_BASE_URL="+c.bases[i]))
	}
	for _, p := range append(c.workers[:], c.apis[:]...) {
		p.Start()
	}
	for _, p := range append(c.workers[:], c.apis[:]...) {
		p.WaitReady(time.Minute)
	}

	c.hooks = newHookReceiver(t, alwaysOK, hookSecret1)
	var out struct {
		Webhook struct{ ID string } `json:"webhook"`
	}
	if st, raw := c.do(c.bases[0], "POST", "/v1/services/webhooks", c.opsKey, map[string]any{"url": c.hooks.srv.URL, "events": []string{"service.*"}, "secret": hookSecret1}, nil, &out); st != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", st, raw)
	}
	return c
}

// openClusterStore opens the test's own store on the cluster's database.
func openClusterStore(t *testing.T, dbURL string) *models.Store {
	db, err := models.Open(context.Background(), dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = models.Close(db) })
	key, _ := hex.DecodeString(clusterSecretsKey)
	sealer, err := models.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return models.NewStore(db, sealer)
}

// setUpTenant puts the demo tenant on a Custom plan whose limits the test
// does not reach (each key's own limits still apply) and issues its keys.
func (c *cluster) setUpTenant(ctx context.Context) {
	t := c.t
	demo, err := seed.NewStore(c.store).DemoOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.demoOrg = demo.ID
	if err := c.store.DB.Model(&models.Organization{}).Where("id = ?", demo.ID).Updates(map[string]any{
		"plan": models.PlanCustom, "custom_hourly": 1_000_000, "custom_burst": 100_000, "custom_concurrent": 200,
	}).Error; err != nil {
		t.Fatal(err)
	}
	c.opsKey = c.newKey(ctx, identity.APIKeyInput{Name: "operations"})
	c.loadKey = c.newKey(ctx, identity.APIKeyInput{Name: "load"})
}

// tenantDB is the test's database handle, scoped to the demo tenant's sandbox.
func (c *cluster) tenantDB() *gorm.DB {
	return models.Scoped(context.Background(), c.store.DB, models.TenantScope(c.demoOrg, models.EnvTest))
}

// newKey issues a sandbox key of the demo tenant with every permission.
func (c *cluster) newKey(ctx context.Context, in identity.APIKeyInput) string {
	provider, err := identity.NewStore(c.store).EnsureProviderOrganization(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	admin := &models.Principal{ID: "ak_bootstrap", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	in.Permissions, in.OrganizationID, in.Environment = []string{"*"}, c.demoOrg, models.EnvTest
	issued, err := identity.NewStore(c.store).CreateAPIKey(ctx, admin, in)
	if err != nil {
		c.t.Fatal(err)
	}
	return issued.Secret
}

// do sends one request to an API (no retry) and decodes a JSON answer
// into out when out is not nil; it fails the test on a transport error.
func (c *cluster) do(base, method, path, key string, body any, headers map[string]string, out any) (int, []byte) {
	c.t.Helper()
	st, raw, _, err := c.send(base, method, path, key, body, headers)
	if err != nil {
		c.t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s%s: %d %s: %v", method, base, path, st, raw, err)
		}
	}
	return st, raw
}

// send sends one request and returns the status, body and headers.
func (c *cluster) send(base, method, path, key string, body any, headers map[string]string) (int, []byte, http.Header, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, res.Header, err
}

// provision orders a sandbox service through API i and returns the answer.
func (c *cluster) provision(i int, key, idem string) accepted {
	c.t.Helper()
	var acc accepted
	if st, raw := c.do(c.bases[i%2], "POST", "/v1/services/provision", key, sandboxOrder, map[string]string{"Idempotency-Key": idem}, &acc); st != http.StatusAccepted {
		c.t.Fatalf("provision through API %d: %d %s", i%2, st, raw)
	}
	return acc
}

// waitOperation polls an operation through API i until it is terminal.
func (c *cluster) waitOperation(t *testing.T, i int, key, id string, timeout time.Duration) *operation {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var op operation
		if st, raw := c.do(c.bases[i%2], "GET", "/v1/operations/"+id, key, nil, nil, &op); st != http.StatusOK {
			t.Fatalf("GET operation %s: %d %s", id, st, raw)
		}
		if terminal(op.Status) {
			return &op
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s still %s after %s: %+v", id, op.Status, timeout, op)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkCompletedOnce checks that a provisioning completed, every step once,
// with one service and one service.provisioned event.
func (c *cluster) checkCompletedOnce(t *testing.T, op *operation, serviceID string) {
	t.Helper()
	if op.Status != "completed" || op.Result["service_id"] != serviceID {
		t.Fatalf("operation %s (its 202 named service %q): %+v", op.RequestID, serviceID, op)
	}
	seen := map[string]bool{}
	for _, s := range op.Steps {
		if seen[s.Name] || s.Status != "completed" {
			t.Fatalf("operation %s: step %s %s (twice: %v): %+v", op.RequestID, s.Name, s.Status, seen[s.Name], op.Steps)
		}
		seen[s.Name] = true
	}
	var services, events int64
	if err := c.tenantDB().Table("services").Where("id = ?", serviceID).Count(&services).Error; err != nil {
		t.Fatal(err)
	}
	if err := c.tenantDB().Model(&eventlog.Event{}).Where("type = ? AND resource_id = ?", "service.provisioned", serviceID).Count(&events).Error; err != nil {
		t.Fatal(err)
	}
	if services != 1 || events != 1 {
		t.Fatalf("operation %s: %d service rows, %d service.provisioned events; want one of each", op.RequestID, services, events)
	}
}

// operationsCompleteOnce starts operations alternately on both APIs,
// follows each through the other API, and checks that each completed once
// and that its event reached the webhook receiver once. It returns the
// deliveries per webhook-id seen by then.
func (c *cluster) operationsCompleteOnce(t *testing.T) map[string]int {
	const n = 6
	existing := c.countServices(t)
	accs := make([]accepted, n)
	for i := range accs {
		accs[i] = c.provision(i, c.opsKey, "two-"+models.RandomString(10))
		if !strings.HasPrefix(accs[i].StatusURL, c.bases[i%2]+"/") {
			t.Fatalf("status_url %s of an operation started on %s", accs[i].StatusURL, c.bases[i%2])
		}
	}
	for i, acc := range accs {
		op := c.waitOperation(t, i+1, c.opsKey, acc.RequestID, 2*time.Minute)
		c.checkCompletedOnce(t, op, acc.ServiceID)
	}
	if created := c.countServices(t) - existing; created != n {
		t.Fatalf("%d services created for %d operations", created, n)
	}
	services := make([]string, n)
	for i, acc := range accs {
		services[i] = acc.ServiceID
	}
	return c.waitDelivered(t, services)
}

// countServices counts the demo tenant's sandbox services.
func (c *cluster) countServices(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := c.tenantDB().Table("services").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// waitDelivered waits until the service.provisioned event of each service
// was delivered, and returns the deliveries per webhook-id received so far.
func (c *cluster) waitDelivered(t *testing.T, services []string) map[string]int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := c.hooks.serviceDeliveries(t, "service.provisioned")
		missing := 0
		for _, s := range services {
			if len(got[s]) == 0 {
				missing++
			}
		}
		if missing == 0 {
			c.hooks.checkValid(t)
			return c.deliveryCounts()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d service.provisioned events not delivered within a minute", missing, len(services))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deliveryCounts counts the accepted deliveries per webhook-id.
func (c *cluster) deliveryCounts() map[string]int {
	c.hooks.mu.Lock()
	defer c.hooks.mu.Unlock()
	out := map[string]int{}
	for _, d := range c.hooks.got {
		out[d.ID]++
	}
	return out
}

// rateLimitsHold spends a key's burst through both APIs in turn: together
// they admit the burst (plus what refills meanwhile), no more, and refuse
// the rest with the documented 429.
func (c *cluster) rateLimitsHold(t *testing.T) {
	const burst = 10 // units per 60 s; a GET costs one unit
	key := c.newKey(context.Background(), identity.APIKeyInput{Name: "limited", RequestsPerMinute: 1, BurstLimit: burst})
	began := time.Now()
	admitted, refused := 0, 0
	for i := range 3 * burst {
		st, raw, h, err := c.send(c.bases[i%2], "GET", "/v1/services/catalog", key, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch st {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
			refused++
			var e errorBody
			if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code != "RATE_LIMIT_EXCEEDED" || h.Get("Retry-After") == "" ||
				h.Get("X-RateLimit-Limit") == "" || e.Error.Details["retry_after"] == nil {
				t.Fatalf("429 through API %d: %v %s", i%2, h, raw)
			}
		default:
			t.Fatalf("GET through API %d: %d %s", i%2, st, raw)
		}
	}
	// The burst bucket gives back one unit every 60 s / burst.
	refill := int(time.Since(began)/(time.Minute/burst)) + 1
	if admitted < burst || admitted > burst+refill || refused != 3*burst-admitted {
		t.Fatalf("admitted %d, refused %d of %d requests across two APIs; the key's burst is %d (+%d refilled)", admitted, refused, 3*burst, burst, refill)
	}
	t.Logf("admitted %d, refused %d in %s", admitted, refused, time.Since(began).Round(time.Millisecond))
}

// errorBody is the platform's error answer.
type errorBody struct {
	Error struct {
		Code    string         `json:"code"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// killedWorkerHandsOver starts operations, finds a step in flight on one
// worker, kills that worker (SIGKILL) and checks that the other worker
// runs the step again and the operations complete; then starts the killed
// worker again. It returns the deliveries per webhook-id seen by then.
func (c *cluster) killedWorkerHandsOver(t *testing.T) map[string]int {
	ctx := context.Background()
	accs := make([]accepted, 4)
	for i := range accs {
		accs[i] = c.provision(i, c.opsKey, "kill-"+models.RandomString(10))
	}
	var victim *testenv.Process
	var wfID, activityID string
	deadline := time.Now().Add(time.Minute)
	for victim == nil {
		if time.Now().After(deadline) {
			t.Fatal("no step seen in flight on a worker within a minute")
		}
		for _, acc := range accs {
			desc, err := c.temporal.DescribeWorkflowExecution(ctx, acc.RequestID, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, pa := range desc.GetPendingActivities() {
				// A network step (it takes clusterStepDelay) far enough from
				// its end that it is still running when the kill lands.
				age := time.Since(pa.GetLastStartedTime().AsTime())
				if pa.GetState() != enums.PENDING_ACTIVITY_STATE_STARTED || age < 100*time.Millisecond || age > clusterStepDelay-300*time.Millisecond {
					continue
				}
				for _, w := range c.workers {
					if strings.HasPrefix(pa.GetLastWorkerIdentity(), strconv.Itoa(w.PID())+"@") {
						victim, wfID, activityID = w, acc.RequestID, pa.GetActivityId()
						break
					}
				}
				if victim != nil {
					break
				}
			}
			if victim != nil {
				break
			}
		}
		if victim == nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	killedIdentity := strconv.Itoa(victim.PID()) + "@"
	victim.Kill()
	killed := time.Now()
	t.Logf("killed %s (pid %s) running activity %s of %s", victim.Name(), strings.TrimSuffix(killedIdentity, "@"), activityID, wfID)

	for i, acc := range accs {
		op := c.waitOperation(t, i+1, c.opsKey, acc.RequestID, workflows.StepHeartbeatTimeout+90*time.Second)
		c.checkCompletedOnce(t, op, acc.ServiceID)
	}
	took := time.Since(killed)
	attempt, by := activityRun(t, c.temporal, wfID, activityID)
	if attempt < 2 || by == "" || strings.HasPrefix(by, killedIdentity) {
		t.Fatalf("activity %s of %s: last attempt %d completed by %q; want a retry completed by the other worker", activityID, wfID, attempt, by)
	}
	t.Logf("the other worker (%s) completed the step on attempt %d; operations done %s after the kill", by, attempt, took.Round(time.Millisecond))

	victim.Start()
	victim.WaitReady(time.Minute)
	services := make([]string, len(accs))
	for i, acc := range accs {
		services[i] = acc.ServiceID
	}
	return c.waitDelivered(t, services)
}

// activityRun returns the attempt of the last start of an activity of a
// workflow and the identity of the worker that completed it.
func activityRun(t *testing.T, tc client.Client, wfID, activityID string) (int, string) {
	t.Helper()
	iter := tc.GetWorkflowHistory(context.Background(), wfID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var scheduled int64
	attempt, by := 0, ""
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityId() == activityID {
			scheduled = ev.GetEventId()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled != 0 && a.GetScheduledEventId() == scheduled {
			attempt = int(a.GetAttempt())
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled != 0 && a.GetScheduledEventId() == scheduled {
			by = a.GetIdentity()
		}
	}
	return attempt, by
}

// webhooksDeliveredOnce checks, at the end, that every service.provisioned
// event of the tenant was delivered, and that every event was delivered
// once, but those first received while a worker was killed and replaced:
// the killed worker may have sent them without recording it (delivery is
// at least once).
func (c *cluster) webhooksDeliveredOnce(t *testing.T, beforeKill, afterKill map[string]int) {
	var ids []string
	if err := c.tenantDB().Model(&eventlog.Event{}).Where("type = ?", "service.provisioned").Pluck("resource_id", &ids).Error; err != nil {
		t.Fatal(err)
	}
	counts := c.waitDelivered(t, ids)
	exempt := 0
	for id, n := range counts {
		_, early := beforeKill[id]
		_, duringKill := afterKill[id]
		if duringKill && !early {
			exempt++
			continue
		}
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	for id := range beforeKill {
		if counts[id] != 1 {
			t.Errorf("event %s delivered %d times", id, counts[id])
		}
	}
	t.Logf("%d events delivered, %d of them while a worker was killed and replaced", len(counts), exempt)
}

// loadResult is what the load of the rolling restart saw.
type loadResult struct {
	mu        sync.Mutex
	tickets   []string // created, acknowledged 201
	ops       []accepted
	bad       []string // answers outside the contract
	requests  atomic.Int64
	retried   atomic.Int64 // connection errors and drain 503s retried on the other API
	drain503s atomic.Int64
}

func (r *loadResult) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) < 20 {
		r.bad = append(r.bad, fmt.Sprintf(format, args...))
	}
}

// call sends a request as a client behind a load balancer would: on a
// connection error or the documented 503 of a draining API it retries on
// the other API (POSTs carry an Idempotency-Key, so a retry never creates
// twice). Any other 5xx is recorded as a failure. It returns the last
// status and body (0 when every attempt failed).
func (c *cluster) call(r *loadResult, start int, method, path string, body any, headers map[string]string) (int, []byte) {
	deadline := time.Now().Add(30 * time.Second)
	var lastErr error
	for i := start; time.Now().Before(deadline); i++ {
		r.requests.Add(1)
		st, raw, h, err := c.send(c.bases[i%2], method, path, c.loadKey, body, headers)
		switch {
		case err != nil:
			lastErr = err
		case st == http.StatusServiceUnavailable:
			var e errorBody
			if json.Unmarshal(raw, &e) != nil || e.Error.Code != "DEPENDENCY_UNAVAILABLE" || e.Error.Details["reason"] != "shutting_down" || h.Get("Retry-After") == "" {
				r.fail("%s %s through API %d: undocumented 503 %v %s", method, path, i%2, h, raw)
				return st, raw
			}
			r.drain503s.Add(1)
			lastErr = errors.New("503 while draining")
		case st >= 500:
			r.fail("%s %s through API %d: %d %s", method, path, i%2, st, raw)
			return st, raw
		default:
			return st, raw
		}
		r.retried.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
	r.fail("%s %s: no answer within 30 s: %v", method, path, lastErr)
	return 0, nil
}

// runLoad is one client of the load: it opens a ticket, reads it back and,
// every few rounds, orders a service, alternating between the APIs, until
// stop is closed.
func (c *cluster) runLoad(r *loadResult, client int, stop <-chan struct{}) {
	for round := 0; ; round++ {
		select {
		case <-stop:
			return
		default:
		}
		api := client + round
		idem := fmt.Sprintf("load-%d-%d-%s", client, round, models.RandomString(6))
		var tk struct {
			Ticket struct{ ID string } `json:"ticket"`
		}
		st, raw := c.call(r, api, "POST", "/v1/support/tickets", map[string]any{"title": "Load " + idem, "description": "rolling restart",
			"category": "network", "priority": "low"}, map[string]string{"Idempotency-Key": idem})
		if st == http.StatusCreated {
			if json.Unmarshal(raw, &tk) != nil || tk.Ticket.ID == "" {
				r.fail("ticket answer %s", raw)
			} else {
				r.mu.Lock()
				r.tickets = append(r.tickets, tk.Ticket.ID)
				r.mu.Unlock()
				if st, raw := c.call(r, api+1, "GET", "/v1/support/tickets/"+tk.Ticket.ID, nil, nil); st != http.StatusOK {
					r.fail("GET ticket %s just created: %d %s", tk.Ticket.ID, st, raw)
				}
			}
		} else if st != 0 {
			r.fail("POST ticket: %d %s", st, raw)
		}
		if round%8 == 0 {
			var acc accepted
			st, raw := c.call(r, api, "POST", "/v1/services/provision", sandboxOrder, map[string]string{"Idempotency-Key": "op-" + idem})
			if st == http.StatusAccepted && json.Unmarshal(raw, &acc) == nil && acc.RequestID != "" {
				r.mu.Lock()
				r.ops = append(r.ops, acc)
				r.mu.Unlock()
			} else if st != 0 {
				r.fail("POST provision: %d %s", st, raw)
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// waitDraining checks that an API sent SIGTERM drains: its /readyz
// answers 503 (server: draining) before its listener closes.
func (c *cluster) waitDraining(t *testing.T, p *testenv.Process) {
	t.Helper()
	for {
		st, raw, _, err := c.send(strings.TrimSuffix(p.Ready(), "/readyz"), "GET", "/readyz", "", nil, nil)
		if err != nil {
			t.Fatalf("%s closed its listener before /readyz answered 503: %v", p.Name(), err)
		}
		var ready struct{ Components map[string]string }
		if st == http.StatusServiceUnavailable && json.Unmarshal(raw, &ready) == nil && ready.Components["server"] == "draining" {
			return
		}
		if st != http.StatusOK {
			t.Fatalf("%s /readyz after SIGTERM: %d %s", p.Name(), st, raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rollingRestart restarts every process in turn (SIGTERM, the APIs'
// drain, exit, start, ready) under a steady load, then checks that the
// load saw no 5xx but the drain's 503 and that everything acknowledged
// exists: each ticket can be read, each operation completes, once.
func (c *cluster) rollingRestart(t *testing.T) {
	existing := c.countServices(t)
	r := &loadResult{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); c.runLoad(r, i, stop) }()
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()
	time.Sleep(time.Second) // the load runs before the first restart
	for _, p := range []*testenv.Process{c.apis[0], c.apis[1], c.workers[0], c.workers[1]} {
		began := time.Now()
		p.Terminate()
		if p.Command() == "serve" {
			c.waitDraining(t, p)
		}
		if code := p.Wait(30 * time.Second); code != 0 {
			t.Fatalf("%s exited with status %d after SIGTERM", p.Name(), code)
		}
		took := time.Since(began)
		p.Start()
		p.WaitReady(time.Minute)
		t.Logf("restarted %s (stopped in %s)", p.Name(), took.Round(time.Millisecond))
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stopLoad()

	r.mu.Lock()
	defer r.mu.Unlock()
	t.Logf("load: %d requests, %d retried on the other API (%d drain 503s), %d tickets and %d operations acknowledged",
		r.requests.Load(), r.retried.Load(), r.drain503s.Load(), len(r.tickets), len(r.ops))
	if len(r.bad) > 0 {
		t.Fatalf("answers outside the contract:\n%s", strings.Join(r.bad, "\n"))
	}
	if len(r.tickets) < 10 || len(r.ops) == 0 {
		t.Fatalf("the load made too little: %d tickets, %d operations", len(r.tickets), len(r.ops))
	}
	for i, id := range r.tickets {
		if st, raw := c.do(c.bases[i%2], "GET", "/v1/support/tickets/"+id, c.loadKey, nil, nil, nil); st != http.StatusOK {
			t.Fatalf("acknowledged ticket %s: %d %s", id, st, raw)
		}
	}
	for i, acc := range r.ops {
		op := c.waitOperation(t, i, c.loadKey, acc.RequestID, 2*time.Minute)
		c.checkCompletedOnce(t, op, acc.ServiceID)
	}
	// A POST retried on the other API (same Idempotency-Key) created nothing twice.
	if created := c.countServices(t) - existing; created != int64(len(r.ops)) {
		t.Fatalf("%d services created for %d operations acknowledged", created, len(r.ops))
	}
}
