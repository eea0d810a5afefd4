// Package integration runs the platform's processes together, in one test
// process: the API and the worker on a real database and a real Temporal dev
// server, driven over HTTP as a client would.
package integration

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/metrics"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/temporalclient"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/tracing"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/worker"
	"github.com/telcoplatform/platform/workflows"
)

// platform is an API server and a worker sharing a database and a Temporal server.
type platform struct {
	t        testing.TB
	base     string
	store    *models.Store
	temporal client.Client
	http     *http.Client
	cfg      config.Config
	queue    string             // the worker's task queue
	workers  []sdkworker.Worker // the workers started, the interactive one first
	admin    *models.Principal  // the provider's administrator, for the store's calls
	demo     *seed.SeedResult
	liveKey  string // demo tenant, live
	testKey  string // demo tenant, sandbox
	otherKey string // another tenant, live
}

// platformOptions are what the tests' platforms differ in. The zero value
// is the API, one worker with simulated network steps of 10 ms and the
// outbox dispatcher with short retries, and no API key.
type platformOptions struct {
	stepDelay      string        // SIMULATOR_STEP_DELAY; 10ms when empty
	settings       env           // added to the configuration
	queuePrefix    string        // of the random task queue; "provisioning" when empty
	webhookTimeout time.Duration // of the worker's webhook attempts; the client's default when zero
	background     bool          // also run the worker of the background task queue
	noDispatcher   bool          // the test runs the outbox dispatcher's rounds itself
	realRetries    bool          // deliveries retry on the real schedule, not testRetryDelays
	httpTimeout    time.Duration // of the test's HTTP client; 30 s when zero
	keys           keySet        // the API keys to issue
	stopTimeout    time.Duration // the workers' stop timeout (SHUTDOWN_TIMEOUT); zero when empty

	// metrics records the client's, the workers', the API's and the
	// store's metrics, as main wires them (nil: none).
	metrics *metrics.Metrics
	// tracing traces the client, the workers, the API, the store and the
	// webhook client, as main wires them (nil: off).
	tracing *tracing.Provider
	// rateLimits puts the API's rate limiter on a redis-server of its own
	// (off: no rate limiting).
	rateLimits bool
}

// keySet says which API keys startPlatform issues, each with every permission.
type keySet uint8

const (
	demoLiveKey  keySet = 1 << iota // platform.liveKey
	demoTestKey                     // platform.testKey
	otherLiveKey                    // platform.otherKey, of a tenant created for it
	allKeys      = demoLiveKey | demoTestKey | otherLiveKey
)

// startPlatform starts the API, a worker (and, with o.background, the
// background one) that may deliver webhooks to loopback receivers, and the
// outbox dispatcher, on a fresh database and Temporal dev server, as o says.
func startPlatform(t testing.TB, o platformOptions) *platform {
	t.Helper()
	ctx := context.Background()
	addr := testenv.TemporalAddress(t, workflows.DevServerArgs()...)
	tc, err := temporalclient.Dial(ctx, temporalclient.Options{Address: addr, Namespace: "default", Metrics: o.metrics.TemporalHandler(), Tracing: o.tracing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	t.Cleanup(func() { recordHistories(t, tc) }) // after the workers stop, before the client closes

	store, seeded := testenv.SeededStore(t)
	if o.metrics != nil {
		wireMetrics(t, o.metrics, store)
	}
	if err := o.tracing.InstrumentDB(store.DB); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	queue := cmp.Or(o.queuePrefix, "provisioning") + "-" + models.RandomString(8)
	settings := env{
		"PUBLIC_BASE_URL": base, "TEMPORAL_ADDRESS": addr, "TEMPORAL_TASK_QUEUE": queue, "SIMULATOR_STEP_DELAY": cmp.Or(o.stepDelay, "10ms"),
		"WEBHOOK_ALLOW_PRIVATE": "true",
	}
	maps.Copy(settings, o.settings)
	if settings["SAML_IDP_METADATA_URL"] != "" && settings["SAML_DOMAINS"] == "" {
		// The IdP is trusted for the demo tenant's domain, as `make run` configures it.
		settings["SAML_DOMAINS"] = "demo.example=" + seeded.Demo.ID
	}
	cfg, err := config.Load(settings.get)
	if err != nil {
		t.Fatal(err)
	}

	hookOpts := []webhooks.Option{webhooks.WithTransportWrapper(o.tracing.WrapTransport)}
	if o.webhookTimeout != 0 {
		hookOpts = append(hookOpts, webhooks.WithTimeout(o.webhookTimeout))
	}
	blobs := testenv.Blobs(t) // attachments (API) and report files (worker)
	deps := worker.Deps{Store: store, SimulatorStepDelay: cfg.SimulatorStepDelay, Webhooks: webhooks.NewClient(cfg.WebhookAllowPrivate, hookOpts...),
		PublicBaseURL: cfg.PublicBaseURL, StopTimeout: o.stopTimeout, Blobs: blobs, ReportLinkTTL: cfg.ReportLinkTTL, Metrics: o.metrics}
	workers := []sdkworker.Worker{worker.New(tc, queue, deps)}
	if o.background {
		workers = append(workers, worker.NewBackground(tc, cfg.TemporalBackgroundTaskQueue, deps))
	}
	for _, w := range workers {
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
	}
	if !o.noDispatcher {
		opts := events.Options{TaskQueue: queue}
		if !o.realRetries {
			opts.RetryDelays = testRetryDelays
		}
		startDispatcher(t, store, tc, opts)
	}

	apiDeps := api.Deps{Config: cfg, Store: store, Temporal: tc, Blobs: blobs, Metrics: o.metrics, Tracing: o.tracing}
	if o.rateLimits {
		rdb, _, closeRedis, err := redisconn.Open(context.Background(), testenv.RedisURL(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closeRedis() })
		apiDeps.Redis, apiDeps.Limiter = rdb, ratelimit.New(rdb)
	}
	srv := api.New(apiDeps)
	served := make(chan struct{})
	go func() { _ = srv.App.Listener(ln); close(served) }()
	t.Cleanup(func() {
		_ = srv.App.ShutdownWithTimeout(5 * time.Second)
		<-served
	})

	p := &platform{t: t, base: base, store: store, temporal: tc, http: &http.Client{Timeout: cmp.Or(o.httpTimeout, 30*time.Second)},
		cfg: cfg, queue: queue, workers: workers, demo: seeded,
		admin: &models.Principal{ID: "ak_bootstrap", OrganizationID: seeded.Provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}}
	if o.keys&demoLiveKey != 0 {
		p.liveKey = p.newKey(seeded.Demo.ID, models.EnvLive)
	}
	if o.keys&demoTestKey != 0 {
		p.testKey = p.newKey(seeded.Demo.ID, models.EnvTest)
	}
	if o.keys&otherLiveKey != 0 {
		other, err := identity.NewStore(store).CreateOrganization(ctx, p.admin, identity.OrganizationInput{Name: "Other", Plan: models.PlanBusiness})
		if err != nil {
			t.Fatal(err)
		}
		p.otherKey = p.newKey(other.ID, models.EnvLive)
	}
	return p
}

// newKey issues an API key of an organization, with every permission.
func (p *platform) newKey(org string, env models.Environment) string {
	p.t.Helper()
	issued, err := identity.NewStore(p.store).CreateAPIKey(context.Background(), p.admin,
		identity.APIKeyInput{Name: "integration", Permissions: []string{"*"}, OrganizationID: org, Environment: env})
	if err != nil {
		p.t.Fatal(err)
	}
	return issued.Secret
}

// env is a test environment for config.Load.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// do sends a request and decodes the JSON answer into out (when not nil).
func (p *platform) do(method, url, key string, body any, out any) int {
	p.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	if strings.HasPrefix(url, "/") {
		url = p.base + url
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := p.http.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			p.t.Fatalf("%s %s: status %d, body %s: %v", method, url, res.StatusCode, raw, err)
		}
	}
	return res.StatusCode
}

type accepted struct {
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
	StatusURL string `json:"status_url"`
	ServiceID string `json:"service_id"`
}

type operation struct {
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
	Progress  struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Percent   int `json:"percent"`
	} `json:"progress"`
	Steps []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"steps"`
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
	Workflow struct {
		ID     string         `json:"id"`
		RunID  string         `json:"run_id"`
		UIURL  string         `json:"ui_url"`
		Status string         `json:"status"`
		Live   map[string]any `json:"live"`
	} `json:"workflow"`
}

func terminal(status string) bool {
	switch status {
	case "completed", "partial", "failed", "rolled_back", "cancelled":
		return true
	}
	return false
}

// poll GETs the operation until until() holds, failing after a deadline.
func (p *platform) poll(url, key string, until func(*operation) bool) *operation {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var op operation
		if status := p.do("GET", url, key, nil, &op); status != http.StatusOK {
			p.t.Fatalf("GET %s: %d", url, status)
		}
		if until(&op) {
			return &op
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("operation %s still %s after the deadline: %+v", op.RequestID, op.Status, op)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stream follows the operation as Server-Sent Events until the stream ends.
func (p *platform) stream(ctx context.Context, url, key string) ([]operation, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(res.Body)
		return nil, errors.New("not an event stream: " + res.Status + " " + string(raw))
	}
	var events []operation
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "operation":
			var op operation
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &op); err != nil {
				return nil, err
			}
			events = append(events, op)
		case line == "":
			event = ""
		}
	}
	return events, sc.Err()
}

func TestProvisioningEndToEnd(t *testing.T) {
	p := startPlatform(t, platformOptions{keys: allKeys})
	ctx := context.Background()

	t.Run("internet service followed by polling and by SSE, then its status", func(t *testing.T) {
		body := map[string]any{
			"account_id": p.demo.Account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium", "billing_cycle": "monthly",
			"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"},
		}
		var acc accepted
		if status := p.do("POST", "/v1/services/connectivity/internet", p.liveKey, body, &acc); status != http.StatusAccepted {
			t.Fatalf("status %d: %+v", status, acc)
		}
		if acc.StatusURL != p.base+"/v1/operations/"+acc.RequestID {
			t.Fatalf("status_url %s", acc.StatusURL)
		}
		streamCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		type streamed struct {
			events []operation
			err    error
		}
		sse := make(chan streamed, 1)
		go func() {
			events, err := p.stream(streamCtx, acc.StatusURL, p.liveKey)
			sse <- streamed{events, err}
		}()

		op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
		if op.Status != "completed" || op.Progress.Percent != 100 || op.Result["service_id"] != acc.ServiceID || op.Workflow.ID != acc.RequestID ||
			op.Workflow.RunID == "" || op.Workflow.UIURL != "http://localhost:8233/namespaces/default/workflows/"+acc.RequestID {
			t.Fatalf("operation: %+v", op)
		}
		for _, st := range op.Steps {
			if st.Status != "completed" {
				t.Fatalf("step %s is %s", st.Name, st.Status)
			}
		}

		got := <-sse
		if got.err != nil {
			t.Fatal(got.err)
		}
		if len(got.events) == 0 || got.events[len(got.events)-1].Status != "completed" {
			t.Fatalf("SSE events: %+v", got.events)
		}
		for i := 1; i < len(got.events); i++ {
			if got.events[i].Progress.Completed < got.events[i-1].Progress.Completed {
				t.Fatalf("progress went backwards in the stream: %+v", got.events)
			}
		}

		var alias operation
		p.do("GET", "/api/v1/services/provision/"+acc.RequestID+"/status", p.liveKey, nil, &alias)
		if alias.Status != "completed" {
			t.Fatalf("alias: %+v", alias)
		}
		if status := p.do("GET", acc.StatusURL, p.otherKey, nil, nil); status != http.StatusNotFound {
			t.Fatalf("another tenant got %d", status)
		}

		var st struct {
			ServiceID          string             `json:"service_id"`
			Status             string             `json:"status"`
			UptimePercentage   *float64           `json:"uptime_percentage"`
			PerformanceMetrics map[string]float64 `json:"performance_metrics"`
			HealthChecks       map[string]string  `json:"health_checks"`
		}
		if status := p.do("GET", "/v1/services/"+acc.ServiceID+"/status", p.liveKey, nil, &st); status != http.StatusOK {
			t.Fatalf("status endpoint: %d", status)
		}
		if st.ServiceID != acc.ServiceID || st.Status != "operational" || st.UptimePercentage == nil || *st.UptimePercentage != 100 ||
			st.PerformanceMetrics["latency_ms"] <= 0 || st.HealthChecks["connectivity"] != "healthy" {
			t.Fatalf("service status: %+v", st)
		}
		var svc struct {
			Service struct {
				Status  string `json:"status"`
				Network struct {
					IPBlock   string `json:"ip_block"`
					VLANID    int    `json:"vlan_id"`
					CircuitID string `json:"circuit_id"`
				} `json:"network"`
			} `json:"service"`
		}
		p.do("GET", "/v1/services/"+acc.ServiceID, p.liveKey, nil, &svc)
		if svc.Service.Status != "operational" || svc.Service.Network.IPBlock == "" || svc.Service.Network.VLANID == 0 || svc.Service.Network.CircuitID == "" {
			t.Fatalf("service: %+v", svc)
		}

		// The operator sees the same workflow, under the same id, with the
		// search attributes. The operation's row ends before the workflow's
		// last task completes: wait for the workflow to close.
		var desc *workflowservice.DescribeWorkflowExecutionResponse
		var info *workflowpb.WorkflowExecutionInfo
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var err error
			if desc, err = p.temporal.DescribeWorkflowExecution(ctx, acc.RequestID, ""); err != nil {
				t.Fatal(err)
			}
			info = desc.GetWorkflowExecutionInfo()
			if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING || time.Now().After(deadline) {
				break
			}
		}
		if info.GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED || info.GetExecution().GetRunId() != op.Workflow.RunID {
			t.Fatalf("workflow: %v", info)
		}
		attrs := info.GetSearchAttributes().GetIndexedFields()
		for name, want := range map[string]string{"OrganizationId": p.demo.Demo.ID, "Environment": "live", "OperationType": "provisioning", "ResourceId": acc.ServiceID} {
			var got string
			if err := converter.GetDefaultDataConverter().FromPayload(attrs[name], &got); err != nil || got != want {
				t.Fatalf("search attribute %s = %q (%v), want %q", name, got, err, want)
			}
		}
		// What the Temporal UI shows: the one-line summary, the details with
		// the API link, and the current details the workflow published.
		var summary, details string
		md := desc.GetExecutionConfig().GetUserMetadata()
		if err := converter.GetDefaultDataConverter().FromPayload(md.GetSummary(), &summary); err != nil ||
			summary != "Provisioning "+acc.ServiceID+" for "+p.demo.Demo.ID+" (live)" {
			t.Fatalf("static summary %q (%v)", summary, err)
		}
		if err := converter.GetDefaultDataConverter().FromPayload(md.GetDetails(), &details); err != nil || !strings.Contains(details, acc.StatusURL) {
			t.Fatalf("static details %q (%v)", details, err)
		}
		qv, err := p.temporal.QueryWorkflow(ctx, acc.RequestID, "", "__temporal_workflow_metadata")
		if err != nil {
			t.Fatal(err)
		}
		var meta sdkpb.WorkflowMetadata
		if err := qv.Get(&meta); err != nil || !strings.Contains(meta.GetCurrentDetails(), "**Phase**: done") ||
			!strings.Contains(meta.GetCurrentDetails(), "record_service") {
			t.Fatalf("current details %q (%v)", meta.GetCurrentDetails(), err)
		}
		// Every activity says in the UI which step it runs on what.
		summaries := activitySummaries(ctx, t, p.temporal, acc.RequestID)
		for _, step := range []string{"begin", "validate", "reserve_capacity", "configure", "activate", "record_service"} {
			want := step + ": service " + acc.ServiceID + ", operation " + acc.RequestID + ", for " + p.demo.Demo.ID + " (live)"
			if !slices.Contains(summaries, want) {
				t.Fatalf("activity summaries %q lack %q", summaries, want)
			}
		}
		scope := models.TenantScope(p.demo.Demo.ID, models.EnvLive)
		// Every status move (pending → provisioning → operational), then service.provisioned.
		if evs, err := eventlog.NewStore(p.store).EventsFor(ctx, scope, acc.ServiceID); err != nil || len(evs) != 3 || evs[0].Type != "service.status_changed" ||
			evs[1].Type != "service.status_changed" || evs[1].Data["to"] != "operational" || evs[2].Type != "service.provisioned" {
			t.Fatalf("outbox: %+v %v", evs, err)
		}
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if status := p.do("POST", "/v1/operations/"+acc.RequestID+"/cancel", p.liveKey, nil, &e); status != http.StatusConflict || e.Error.Code != "INVALID_STATE_TRANSITION" {
			t.Fatalf("cancelling a completed operation: %d %+v", status, e)
		}
	})

	t.Run("a sandbox failure is compensated", func(t *testing.T) {
		body := map[string]any{"service_template": "sandbox-fail-activate", "location_id": "loc_sandbox_all"}
		var acc accepted
		if status := p.do("POST", "/v1/services/provision", p.testKey, body, &acc); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
		op := p.poll(acc.StatusURL, p.testKey, func(op *operation) bool { return terminal(op.Status) })
		if op.Status != "failed" || op.Error == nil || op.Error.Code != "PROVISIONING_FAILED" || op.Error.Details["step"] != "activate" || op.Error.Details["compensated"] != true {
			t.Fatalf("operation: %+v %+v", op, op.Error)
		}
		want := map[string]string{"validate": "completed", "reserve_capacity": "compensated", "configure": "compensated", "activate": "failed", "record_service": "skipped"}
		for _, st := range op.Steps {
			if want[st.Name] != st.Status {
				t.Fatalf("step %s is %s, want %s", st.Name, st.Status, want[st.Name])
			}
		}
		c, err := catalog.NewStore(p.store).Capacity(ctx, models.EnvTest, "loc_sandbox_all", "fiber_dedicated")
		if err != nil {
			t.Fatal(err)
		}
		if left, err := catalog.NewStore(p.store).AvailableMbps(ctx, models.TenantScope(p.demo.Demo.ID, models.EnvTest), "loc_sandbox_all", "fiber_dedicated"); err != nil || left != c.CapacityMbps {
			t.Fatalf("capacity not released: %d of %d left, %v", left, c.CapacityMbps, err)
		}
		var svc struct {
			Service struct{ Status string } `json:"service"`
		}
		p.do("GET", "/v1/services/"+acc.ServiceID, p.testKey, nil, &svc)
		if svc.Service.Status != "failed" {
			t.Fatalf("service %s", svc.Service.Status)
		}
	})

	t.Run("a scheduled provisioning is cancelled", func(t *testing.T) {
		when := time.Now().UTC().Add(2 * time.Hour).Format(time.RFC3339)
		body := map[string]any{"service_template": "internet-business-100m", "location_id": "loc_seattle_2nd",
			"deployment_schedule": map[string]any{"preferred_date": when, "flexibility": "1_day"}}
		var acc accepted
		if status := p.do("POST", "/v1/services/provision", p.liveKey, body, &acc); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
		waiting := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool {
			return len(op.Steps) > 0 && op.Steps[0].Name == "wait_for_schedule" && op.Steps[0].Status == "in_progress"
		})
		// While it runs, GET adds the workflow's run state and its progress query.
		if waiting.Workflow.Status != "running" || waiting.Workflow.Live["phase"] != "scheduled" || waiting.Workflow.Live["scheduled_for"] == nil {
			t.Fatalf("live detail: %+v", waiting.Workflow)
		}
		// The service_id of the answer names a service during the wait: pending.
		serviceStatus := func() (int, string) {
			var svc struct {
				Service struct {
					Status string `json:"status"`
				} `json:"service"`
			}
			code := p.do("GET", "/v1/services/"+acc.ServiceID, p.liveKey, nil, &svc)
			return code, svc.Service.Status
		}
		if code, st := serviceStatus(); code != http.StatusOK || st != "pending" {
			t.Fatalf("the scheduled order's service during the wait: %d %q", code, st)
		}
		var op operation
		if status := p.do("POST", "/v1/operations/"+acc.RequestID+"/cancel", p.liveKey, nil, &op); status != http.StatusAccepted {
			t.Fatalf("cancel: %d", status)
		}
		final := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
		if final.Status != "cancelled" || final.Steps[0].Status != "cancelled" || final.Steps[1].Status != "skipped" {
			t.Fatalf("operation: %+v", final)
		}
		if code, st := serviceStatus(); code != http.StatusOK || st != "failed" {
			t.Fatalf("the cancelled order's service: %d %q", code, st)
		}
		if status := p.do("POST", "/v1/operations/"+acc.RequestID+"/cancel", p.liveKey, nil, &op); status != http.StatusOK || op.Status != "cancelled" {
			t.Fatalf("cancelling again: %d %s", status, op.Status)
		}
		// The row ends before the workflow does (its last activity writes it): wait for the workflow.
		waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := p.temporal.GetWorkflow(waitCtx, acc.RequestID, "").Get(waitCtx, nil); !temporal.IsCanceledError(err) {
			t.Fatalf("the workflow ended with %v, want its cancellation", err)
		}
		desc, err := p.temporal.DescribeWorkflowExecution(ctx, acc.RequestID, "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_CANCELED {
			t.Fatalf("workflow: %v %v", desc.GetWorkflowExecutionInfo().GetStatus(), err)
		}
	})
}

// activitySummaries returns the summaries of the activities the workflow id
// scheduled, in order (what the Temporal UI shows for each).
func activitySummaries(ctx context.Context, t *testing.T, tc client.Client, id string) []string {
	t.Helper()
	var out []string
	it := tc.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() != enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			continue
		}
		var s string
		if err := converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &s); err != nil || s == "" {
			t.Fatalf("activity %s has no summary (%v)", ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(), err)
		}
		out = append(out, s)
	}
	return out
}
