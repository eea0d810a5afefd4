package integration

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// startWebhookPlatform starts the platform with a short webhook attempt
// timeout and, when runDispatcher, the outbox dispatcher; the demo tenant
// has a live key and another tenant too.
func startWebhookPlatform(t *testing.T, runDispatcher bool) *platform {
	t.Helper()
	return startPlatform(t, platformOptions{queuePrefix: "webhooks", webhookTimeout: testAttemptTimeout, noDispatcher: !runDispatcher,
		keys: demoLiveKey | otherLiveKey})
}

// waitFor polls cond until it holds, failing after 90 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 90*time.Second, what, cond)
}

// waitForWithin polls cond until it holds, failing after limit (for the
// few waits whose work grows with a large batch, on a shared 2-core machine).
func waitForWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type hookAttempt struct {
	Number     int    `json:"number"`
	StatusCode *int   `json:"status_code"`
	Success    bool   `json:"success"`
	Error      string `json:"error"`
	LatencyMs  int64  `json:"latency_ms"`
}

type hookDelivery struct {
	ID         string        `json:"id"`
	WebhookID  string        `json:"webhook_id"`
	EventID    string        `json:"event_id"`
	EventType  string        `json:"event_type"`
	Reason     string        `json:"reason"`
	Generation int           `json:"generation"`
	Status     string        `json:"status"`
	Attempts   []hookAttempt `json:"attempts"`
}

// deliveries lists a subscription's deliveries of one event.
func (p *platform) deliveries(webhookID, eventID string) []hookDelivery {
	p.t.Helper()
	var out struct {
		Deliveries []hookDelivery `json:"deliveries"`
	}
	if status := p.do("GET", "/v1/webhooks/"+webhookID+"/deliveries?sort=created_at:asc&event_id="+eventID, p.liveKey, nil, &out); status != http.StatusOK {
		p.t.Fatalf("deliveries: %d", status)
	}
	return out.Deliveries
}

// provision orders an internet service and waits for the operation to complete.
func (p *platform) provision() string {
	p.t.Helper()
	body := map[string]any{
		"account_id": p.demo.Account.ID, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium",
		"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"},
	}
	var acc accepted
	if status := p.do("POST", "/v1/services/connectivity/internet", p.liveKey, body, &acc); status != http.StatusAccepted {
		p.t.Fatalf("provision: %d", status)
	}
	if op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) }); op.Status != "completed" {
		p.t.Fatalf("provisioning ended %s", op.Status)
	}
	return acc.ServiceID
}

// provisionedEvent returns the service.provisioned event of a service.
func (p *platform) provisionedEvent(serviceID string) (id string, dispatched bool) {
	p.t.Helper()
	var out struct {
		Events []struct {
			ID           string  `json:"id"`
			DispatchedAt *string `json:"dispatched_at"`
		} `json:"events"`
	}
	if status := p.do("GET", "/v1/events?type=service.provisioned&resource_id="+serviceID, p.liveKey, nil, &out); status != http.StatusOK || len(out.Events) != 1 {
		p.t.Fatalf("events: %d %+v", status, out)
	}
	return out.Events[0].ID, out.Events[0].DispatchedAt != nil
}

const (
	hookSecret1 = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hookSecret2 = "whsec_c2FuZGJveC1zZWNyZXQtZm9yLXRoZS13ZWJob29rLXRlc3RzIQ=="
)

func TestWebhooksEndToEnd(t *testing.T) {
	p := startWebhookPlatform(t, true)
	good := newHookReceiver(t, alwaysOK, hookSecret1)
	// The flaky receiver fails service.provisioned twice: a 503, then no
	// answer within the attempt timeout; the third attempt succeeds.
	flaky := newHookReceiver(t, func(event string, n int) int {
		if event != "service.provisioned" {
			return http.StatusNoContent
		}
		switch n {
		case 1:
			return http.StatusServiceUnavailable
		case 2:
			return 0
		}
		return http.StatusOK
	}, hookSecret2)
	stranger := newHookReceiver(t, alwaysOK)

	sub1 := p.subscribe("/api/v1/services/webhooks", p.liveKey, map[string]any{"url": good.srv.URL + "/hooks", "events": []string{"service.provisioned"}, "secret": hookSecret1})
	sub2 := p.subscribe("/v1/webhooks", p.liveKey, map[string]any{"url": flaky.srv.URL, "events": []string{"service.*"}, "secret": hookSecret2, "active": true})
	p.subscribe("/v1/webhooks", p.otherKey, map[string]any{"url": stranger.srv.URL, "events": []string{"*"}})

	serviceID := p.provision()
	evID, _ := p.provisionedEvent(serviceID)

	t.Run("service.provisioned arrives once, signed", func(t *testing.T) {
		waitFor(t, "the delivery to succeed", func() bool {
			ds := p.deliveries(sub1, evID)
			return len(ds) == 1 && ds[0].Status == "succeeded"
		})
		got := good.received("service.provisioned")
		good.checkValid(t)
		if len(got) != 1 || got[0].ID != evID || got[0].Payload["id"] != evID {
			t.Fatalf("received %+v", got)
		}
		data := got[0].Payload["data"].(map[string]any)
		if data["service"].(map[string]any)["id"] != serviceID || data["service"].(map[string]any)["status"] != "operational" {
			t.Fatalf("payload %v", got[0].Payload)
		}
		ds := p.deliveries(sub1, evID)
		if len(ds[0].Attempts) != 1 || *ds[0].Attempts[0].StatusCode != 200 || ds[0].Generation != 1 || ds[0].Reason != "event" {
			t.Fatalf("delivery %+v", ds[0])
		}
	})

	t.Run("a failing receiver gets it on a later retry", func(t *testing.T) {
		var d hookDelivery
		waitFor(t, "the retried delivery to succeed", func() bool {
			ds := p.deliveries(sub2, evID)
			if len(ds) == 1 {
				d = ds[0]
			}
			return d.Status == "succeeded"
		})
		flaky.checkValid(t)
		if len(d.Attempts) != 3 {
			t.Fatalf("attempts %+v", d.Attempts)
		}
		a1, a2, a3 := d.Attempts[0], d.Attempts[1], d.Attempts[2]
		if a1.Success || a1.StatusCode == nil || *a1.StatusCode != 503 || a1.Error != "non-2xx response: HTTP 503" {
			t.Fatalf("attempt 1: %+v", a1)
		}
		if a2.Success || a2.StatusCode != nil || !strings.Contains(a2.Error, "timeout") {
			t.Fatalf("attempt 2: %+v", a2)
		}
		if !a3.Success || *a3.StatusCode != 200 || a3.Number != 3 {
			t.Fatalf("attempt 3: %+v", a3)
		}
		if got := flaky.received("service.provisioned"); len(got) != 1 || got[0].ID != evID {
			t.Fatalf("the flaky receiver accepted %+v", got)
		}
	})

	t.Run("redeliver sends it again with a new attempt log", func(t *testing.T) {
		var re struct {
			Deliveries []hookDelivery `json:"deliveries"`
		}
		if status := p.do("POST", "/v1/events/"+evID+"/redeliver", p.liveKey, map[string]any{"subscription_id": sub1}, &re); status != http.StatusAccepted ||
			len(re.Deliveries) != 1 || re.Deliveries[0].Generation != 2 {
			t.Fatalf("redeliver: %d %+v", status, re)
		}
		waitFor(t, "the redelivery", func() bool { return len(good.received("service.provisioned")) == 2 })
		good.checkValid(t)
		if got := good.received("service.provisioned"); got[1].ID != evID {
			t.Fatalf("a redelivery keeps the webhook-id: %+v", got[1])
		}
		waitFor(t, "the redelivery to be recorded", func() bool {
			ds := p.deliveries(sub1, evID)
			return len(ds) == 2 && ds[1].Status == "succeeded"
		})
		ds := p.deliveries(sub1, evID)
		if ds[1].ID != re.Deliveries[0].ID || ds[1].Reason != "redelivery" || len(ds[1].Attempts) != 1 || ds[0].ID == ds[1].ID {
			t.Fatalf("deliveries %+v", ds)
		}
	})

	t.Run("test ping, and both secrets during a rotation", func(t *testing.T) {
		if status := p.do("POST", "/v1/webhooks/"+sub1+"/test", p.liveKey, nil, nil); status != http.StatusAccepted {
			t.Fatalf("test: %d", status)
		}
		waitFor(t, "the ping", func() bool { return len(good.received("webhook.test")) == 1 })
		var rotated struct {
			Webhook struct{ Secret string } `json:"webhook"`
		}
		if status := p.do("POST", "/v1/webhooks/"+sub1+"/rotate-secret", p.liveKey, nil, &rotated); status != http.StatusOK {
			t.Fatalf("rotate: %d", status)
		}
		good.setSecrets(hookSecret1, rotated.Webhook.Secret) // every request must verify with each
		if status := p.do("POST", "/v1/webhooks/"+sub1+"/test", p.liveKey, nil, nil); status != http.StatusAccepted {
			t.Fatalf("test: %d", status)
		}
		waitFor(t, "the second ping", func() bool { return len(good.received("webhook.test")) == 2 })
		good.checkValid(t)
		pings := good.received("webhook.test")
		if pings[0].Sigs != 1 || pings[1].Sigs != 2 || pings[1].Payload["data"].(map[string]any)["webhook_id"] != sub1 {
			t.Fatalf("pings %+v", pings)
		}
	})

	t.Run("the event log", func(t *testing.T) {
		var got struct {
			Event struct {
				ID           string  `json:"id"`
				Type         string  `json:"type"`
				DispatchedAt *string `json:"dispatched_at"`
			} `json:"event"`
			Deliveries []hookDelivery `json:"deliveries"`
		}
		if status := p.do("GET", "/v1/events/"+evID, p.liveKey, nil, &got); status != http.StatusOK || got.Event.Type != "service.provisioned" || got.Event.DispatchedAt == nil {
			t.Fatalf("%d %+v", status, got)
		}
		if len(got.Deliveries) != 3 {
			t.Fatalf("two subscriptions and one redelivery: %+v", got.Deliveries)
		}
		if status := p.do("GET", "/v1/events/"+evID, p.otherKey, nil, nil); status != http.StatusNotFound {
			t.Fatalf("another tenant reads the event: %d", status)
		}
	})

	t.Run("another tenant's subscription received nothing", func(t *testing.T) {
		// Every delivery of this tenant's events has ended by now.
		if n := stranger.total(); n != 0 {
			t.Fatalf("the other tenant's receiver got %d requests", n)
		}
	})
}

// crashingTemporal stands for a dispatcher process that dies around the
// start of a workflow: before it (the start never happens) or after it
// (the start happens, but the dispatcher never learns it).
type crashingTemporal struct {
	client.Client
	afterStart bool
}

var errCrashed = errors.New("the dispatcher process died")

func (c crashingTemporal) ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if c.afterStart {
		if _, err := c.Client.ExecuteWorkflow(ctx, opts, wf, args...); err != nil {
			return nil, err
		}
	}
	return nil, errCrashed
}

func TestDispatchSurvivesACrashBetweenCommitAndDelivery(t *testing.T) {
	p := startWebhookPlatform(t, false)
	ctx := context.Background()
	rcv := newHookReceiver(t, alwaysOK, hookSecret1)
	sub := p.subscribe("/api/v1/services/webhooks", p.liveKey, map[string]any{"url": rcv.srv.URL, "events": []string{"service.provisioned"}, "secret": hookSecret1})

	// The state change commits with its event; no dispatcher is running.
	serviceID := p.provision()
	evID, dispatched := p.provisionedEvent(serviceID)
	if dispatched || rcv.total() != 0 || len(p.deliveries(sub, evID)) != 0 {
		t.Fatal("nothing may be dispatched without a dispatcher")
	}
	opts := events.Options{TaskQueue: p.queue, RetryDelays: testRetryDelays, StartGrace: time.Hour}

	// Crash 1: the delivery row is written, the process dies before starting the workflow.
	if _, err := events.NewDispatcher(p.store, crashingTemporal{Client: p.temporal}, opts).DispatchOnce(ctx); err == nil {
		t.Fatal("the crashed round reported success")
	}
	ds := p.deliveries(sub, evID)
	if len(ds) != 1 || ds[0].Status != "pending" {
		t.Fatalf("deliveries after crash 1: %+v", ds)
	}
	var nf *serviceerror.NotFound
	if _, err := p.temporal.DescribeWorkflowExecution(ctx, ds[0].ID, ""); !errors.As(err, &nf) {
		t.Fatalf("no workflow may exist yet: %v", err)
	}

	// Crash 2: the workflow starts, the process dies before marking the event dispatched.
	if _, err := events.NewDispatcher(p.store, crashingTemporal{Client: p.temporal, afterStart: true}, opts).DispatchOnce(ctx); err == nil {
		t.Fatal("the crashed round reported success")
	}
	if _, dispatched := p.provisionedEvent(serviceID); dispatched {
		t.Fatal("the event was marked dispatched by a crashed round")
	}

	// Restart: a fresh dispatcher finds the event, the same delivery row and the running workflow.
	restarted := events.NewDispatcher(p.store, p.temporal, opts)
	st, err := restarted.DispatchOnce(ctx)
	if err != nil || st.Events != 1 || st.Deliveries != 1 || st.Started > 1 {
		t.Fatalf("restart: %+v %v", st, err)
	}
	// The workflow crash 2 started runs on the test's worker meanwhile: the
	// restart starts it again ("already started" is success) unless it has
	// already delivered, in which case there is nothing to start.
	if st.Started == 0 {
		if ds := p.deliveries(sub, evID); len(ds) != 1 || ds[0].Status != "succeeded" {
			t.Fatalf("restart started nothing, yet the delivery is %+v", ds)
		}
	}
	waitFor(t, "the delivery", func() bool {
		ds := p.deliveries(sub, evID)
		return len(ds) == 1 && ds[0].Status == "succeeded"
	})
	// The workflow has ended, so no further attempt can come.
	if err := p.temporal.GetWorkflow(ctx, ds[0].ID, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := restarted.DispatchOnce(ctx); err != nil || st != (events.Stats{}) {
		t.Fatalf("a second restart has nothing to do: %+v %v", st, err)
	}
	rcv.checkValid(t)
	got := rcv.received("service.provisioned")
	if len(got) != 1 || got[0].ID != evID || rcv.total() != 1 {
		t.Fatalf("received %d deliveries (%+v), want exactly one", rcv.total(), got)
	}
	ds = p.deliveries(sub, evID)
	if len(ds) != 1 || len(ds[0].Attempts) != 1 {
		t.Fatalf("deliveries %+v", ds)
	}
	if _, dispatched := p.provisionedEvent(serviceID); !dispatched {
		t.Fatal("the event was not marked dispatched")
	}
}

// TestWebhookOrderOfABurstAboutOneResource writes a burst of events about
// one resource straight into the outbox (as state changes do, one
// transaction each) with the dispatcher running: the subscription receives
// each exactly once, in the order the events happened.
func TestWebhookOrderOfABurstAboutOneResource(t *testing.T) {
	p := startWebhookPlatform(t, true)
	ctx := context.Background()
	rcv := newHookReceiver(t, alwaysOK, hookSecret1)
	p.subscribe("/api/v1/services/webhooks", p.liveKey, map[string]any{"url": rcv.srv.URL, "events": []string{"service.maintenance_scheduled"}, "secret": hookSecret1})
	scope := models.TenantScope(p.demo.Demo.ID, models.EnvLive)
	const n = 15
	ids := make([]string, 0, n)
	for i := range n {
		ev := eventlog.NewEvent("service.maintenance_scheduled", "svc_orderburst", map[string]any{"service_id": "svc_orderburst", "sequence": i,
			"maintenance": map[string]any{"window_start": "2026-12-01T02:00:00Z", "window_end": "2026-12-01T04:00:00Z", "impact": "none"}})
		if err := p.store.Tx(ctx, scope, func(tx *gorm.DB) error { return eventlog.RecordEvent(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	// The order the events happened: created_at, then id (as the dispatcher
	// and the ordering rule read them).
	var evs []eventlog.Event
	if err := p.store.In(ctx, models.SystemScope()).Where("id IN ?", ids).Order("created_at, id").Find(&evs).Error; err != nil || len(evs) != n {
		t.Fatalf("%d events: %v", len(evs), err)
	}
	waitForWithin(t, 3*time.Minute, "the burst's deliveries", func() bool { return len(rcv.received("service.maintenance_scheduled")) >= n })
	rcv.checkValid(t)
	got := rcv.received("service.maintenance_scheduled")
	if len(got) != n {
		t.Fatalf("received %d deliveries, want %d", len(got), n)
	}
	for i := range got {
		if got[i].ID != evs[i].ID {
			t.Fatalf("delivery %d is event %s, want %s (received in another order than the events happened)", i, got[i].ID, evs[i].ID)
		}
	}
}
