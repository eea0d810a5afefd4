package integration

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/simulator"
)

// TestServicesAreaEndToEnd provisions a service of every category through
// its collection (and one from a quote), reads them back with their
// telemetry, scales one into its maintenance window, and decommissions one
// with a data migration, all against a real Temporal dev server; a real
// receiver subscribed to service.* gets the signed webhooks of it all.
func TestServicesAreaEndToEnd(t *testing.T) {
	p := startPlatform(t, platformOptions{stepDelay: "0s", keys: allKeys})
	ctx := context.Background()
	rcv := newHookReceiver(t, alwaysOK, hookSecret1)
	p.subscribe("/v1/services/webhooks", p.liveKey, map[string]any{"url": rcv.srv.URL, "events": []string{"service.*"}, "secret": hookSecret1})
	account := p.demo.Account.ID
	bodies := map[string]map[string]any{
		"/v1/services/connectivity/internet": {"account_id": account, "service_type": "fiber_dedicated", "bandwidth": "1gbps", "sla": "premium",
			"location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"}},
		"/v1/services/connectivity/networks": {"network_type": "mpls", "topology": "hub_and_spoke", "bandwidth": "100mbps",
			"locations": []any{map[string]any{"id": "loc_austin_congress", "role": "hub"}, map[string]any{"id": "loc_chicago_wacker", "role": "spoke"}}},
		"/api/v1/services/voice/systems": {"system_type": "cloud_pbx", "users": 20, "name": "Old PBX", "features": []string{"voicemail_to_email"},
			"phone_numbers": []any{map[string]any{"type": "local", "area_code": "512", "quantity": 3}}},
		"/v1/services/voice/contact-centers": {"center_type": "omnichannel", "channels": []string{"voice", "chat"}, "agent_count": 10},
		"/v1/services/cloud/infrastructure": {"deployment_type": "single_cloud", "providers": []string{"aws"}, "regions": []string{"us-east-1"},
			"resources": []any{map[string]any{"type": "virtual_machine", "quantity": 2, "specifications": map[string]any{"cpu": 2, "memory": "8GB", "storage": "100GB", "os": "ubuntu-22.04"}}}},
		"/v1/services/cloud/platforms":  {"runtime": "python312", "region": "us-east-1", "environments": []string{"production"}, "instance_size": "small"},
		"/v1/services/security/managed": {"service_type": "managed_soc", "coverage": "24x7x365", "services": []string{"threat_monitoring", "incident_response"}},
		"/v1/services/security/infrastructure": {"infrastructure_type": "next_gen_firewall", "throughput": "1gbps", "location_id": "loc_austin_congress",
			"protected_networks": []string{"10.10.0.0/16"}},
		"/v1/services/ai/platforms": {"platform_type": "inference", "capabilities": []string{"predictive_analytics"}, "compute_tier": "cpu_standard"},
	}
	type started struct {
		path string
		acc  accepted
	}
	var (
		mu   sync.Mutex
		runs []started
		wg   sync.WaitGroup
	)
	for path, body := range bodies {
		var acc accepted
		if status := p.do("POST", path, p.liveKey, body, &acc); status != http.StatusAccepted {
			t.Fatalf("POST %s: %d %+v", path, status, acc)
		}
		runs = append(runs, started{path, acc})
	}
	// one more, from a quote: a second phone system, the migration's destination
	var q struct {
		Quote struct {
			ID string `json:"id"`
		} `json:"quote"`
	}
	if status := p.do("POST", "/v1/services/quotes", p.liveKey, map[string]any{
		"services":            []any{map[string]any{"type": "phone_system", "system_type": "cloud_pbx", "users": 25}},
		"billing_preferences": map[string]any{"term": "12_months"},
	}, &q); status != http.StatusCreated {
		t.Fatalf("quote: %d", status)
	}
	var fromQuote accepted
	if status := p.do("POST", "/v1/services/provision", p.liveKey, map[string]any{"quote_id": q.Quote.ID, "name": "New PBX"}, &fromQuote); status != http.StatusAccepted {
		t.Fatalf("provision from quote: %d", status)
	}
	runs = append(runs, started{"quote", fromQuote})
	svcOf := map[string]string{}
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := p.poll(r.acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
			if op.Status != "completed" {
				t.Errorf("%s: operation %s ended %s: %+v", r.path, op.RequestID, op.Status, op.Error)
			}
			mu.Lock()
			svcOf[r.path] = r.acc.ServiceID
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	t.Run("service.provisioned webhooks, one per service, signed", func(t *testing.T) {
		ids := []string{}
		for _, id := range svcOf {
			ids = append(ids, id)
		}
		waitFor(t, "service.provisioned of every service", func() bool { return rcv.hasServiceEvents(t, "service.provisioned", ids) })
		rcv.checkValid(t)
		got := rcv.serviceDeliveries(t, "service.provisioned")
		for path, id := range svcOf {
			if len(got[id]) != 1 {
				t.Fatalf("%s: service %s received events %v", path, id, got[id])
			}
		}
		if len(got) != len(svcOf) {
			t.Fatalf("service.provisioned received for %d services, want %d: %v", len(got), len(svcOf), got)
		}
		for _, d := range rcv.received("service.provisioned") {
			if svc := d.Payload["data"].(map[string]any)["service"].(map[string]any); svc["status"] != "operational" {
				t.Fatalf("payload %v", d.Payload)
			}
		}
	})

	var list struct {
		Services []struct {
			ID, Type, Status string
		} `json:"services"`
		Pagination struct{ Total int } `json:"pagination"`
	}
	p.do("GET", "/v1/services?status=operational&limit=50", p.liveKey, nil, &list)
	kinds := map[string]int{}
	for _, s := range list.Services {
		kinds[s.Type]++
	}
	if list.Pagination.Total != 10 || len(kinds) != 9 || kinds["phone_system"] != 2 {
		t.Fatalf("services %+v", list)
	}
	var one struct {
		Service struct {
			Status    string         `json:"status"`
			Resources map[string]any `json:"resources"`
			Pricing   struct {
				TermMonths int     `json:"term_months"`
				Monthly    float64 `json:"monthly_charge"`
			} `json:"pricing"`
		} `json:"service"`
	}
	p.do("GET", "/v1/services/"+svcOf["quote"], p.liveKey, nil, &one)
	if one.Service.Pricing.TermMonths != 12 || one.Service.Pricing.Monthly <= 0 || one.Service.Resources["pbx"] == nil {
		t.Fatalf("service from the quote %+v", one.Service)
	}

	// telemetry from the network, then what is computed from it
	sim := simulator.New(p.store, simulator.Options{})
	for i := 3; i >= 0; i-- {
		if _, err := sim.RecordTelemetry(ctx, time.Now().UTC().Add(-time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	pbx := svcOf["/api/v1/services/voice/systems"]
	var metrics struct {
		Metrics []struct {
			Samples int `json:"samples"`
		} `json:"metrics"`
	}
	if status := p.do("GET", "/v1/services/"+pbx+"/metrics?period=1h", p.liveKey, nil, &metrics); status != http.StatusOK || len(metrics.Metrics) != 12 {
		t.Fatalf("metrics: %d %+v", status, metrics)
	}
	var health struct {
		Overall string `json:"overall"`
	}
	if status := p.do("GET", "/v1/services/"+svcOf["/v1/services/cloud/infrastructure"]+"/health", p.liveKey, nil, &health); status != http.StatusOK || health.Overall == "unknown" {
		t.Fatalf("health: %d %+v", status, health)
	}
	var analytics struct {
		UsageMetrics struct {
			TotalDataTransferred string `json:"total_data_transferred"`
		} `json:"usage_metrics"`
	}
	if status := p.do("GET", "/v1/services/"+svcOf["/v1/services/connectivity/networks"]+"/analytics", p.liveKey, nil, &analytics); status != http.StatusOK || analytics.UsageMetrics.TotalDataTransferred == "" {
		t.Fatalf("analytics: %d %+v", status, analytics)
	}
	var summary struct {
		Services struct{ Total int } `json:"services"`
	}
	if status := p.do("GET", "/v1/services/analytics/summary", p.liveKey, nil, &summary); status != http.StatusOK || summary.Services.Total != 10 {
		t.Fatalf("summary: %d %+v", status, summary)
	}

	t.Run("scaling enters its maintenance window", func(t *testing.T) {
		internet := svcOf["/v1/services/connectivity/internet"]
		var acc accepted
		if status := p.do("PUT", "/v1/services/"+internet+"/scaling", p.liveKey, map[string]any{"scaling_action": "scale_up", "new_bandwidth": "10gbps",
			"maintenance_window": map[string]any{"start": time.Now().UTC().Format(time.RFC3339), "duration": "1_hour"}}, &acc); status != http.StatusAccepted {
			t.Fatalf("scaling: %d", status)
		}
		p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool {
			return len(op.Steps) == 6 && op.Steps[5].Name == "end_maintenance" && op.Steps[5].Status == "in_progress"
		})
		var svc struct {
			Service struct{ Status, Bandwidth string } `json:"service"`
		}
		p.do("GET", "/v1/services/"+internet, p.liveKey, nil, &svc)
		if svc.Service.Status != "maintenance" || svc.Service.Bandwidth != "10gbps" {
			t.Fatalf("service %+v", svc.Service)
		}
		req, _ := http.NewRequest("PUT", p.base+"/v1/services/"+internet, strings.NewReader(`{"name":"HQ"}`))
		req.Header.Set("Authorization", "Bearer "+p.liveKey)
		req.Header.Set("Content-Type", "application/json")
		res, err := p.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if ra, _ := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusServiceUnavailable || ra < 3000 {
			t.Fatalf("a change in maintenance: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
		}
	})

	t.Run("decommission with a data migration", func(t *testing.T) {
		var acc accepted
		if status := p.do("POST", "/v1/services/"+pbx+"/decommission", p.liveKey, map[string]any{
			"data_migration": map[string]any{"required": true, "destination": svcOf["quote"], "verification": true}, "reason": "moved to the new PBX",
		}, &acc); status != http.StatusAccepted || !models.HasPrefix(acc.RequestID, "dec") {
			t.Fatalf("decommission: %d %+v", status, acc)
		}
		op := p.poll(acc.StatusURL, p.liveKey, func(op *operation) bool { return terminal(op.Status) })
		if op.Status != "completed" || op.Result["billing_ended_at"] == nil {
			t.Fatalf("operation %+v %+v", op, op.Error)
		}
		var svc struct {
			Service struct {
				Status           string         `json:"status"`
				DecommissionedAt *string        `json:"decommissioned_at"`
				Pricing          map[string]any `json:"pricing"`
			} `json:"service"`
		}
		p.do("GET", "/v1/services/"+pbx, p.liveKey, nil, &svc)
		if svc.Service.Status != "decommissioned" || svc.Service.DecommissionedAt == nil || svc.Service.Pricing["billing_ended_at"] == nil {
			t.Fatalf("service %+v", svc.Service)
		}
		scope := models.TenantScope(p.demo.Demo.ID, models.EnvLive)
		if allocs, _ := catalog.NewStore(p.store).ServiceAllocations(ctx, scope, pbx); len(allocs) != 0 {
			t.Fatalf("inventory still held: %+v", allocs)
		}
		evs, _ := eventlog.NewStore(p.store).EventsFor(ctx, scope, pbx)
		last := evs[len(evs)-1]
		if last.Type != "service.decommissioned" {
			t.Fatalf("events %+v", evs)
		}
		waitFor(t, "the service.decommissioned webhook", func() bool { return rcv.hasServiceEvents(t, "service.decommissioned", []string{pbx}) })
		rcv.checkValid(t)
		got := rcv.received("service.decommissioned")
		if len(got) != 1 || got[0].ID != last.ID {
			t.Fatalf("service.decommissioned deliveries %+v, want event %s", got, last.ID)
		}
		if data := got[0].Payload["data"].(map[string]any); data["request_id"] != acc.RequestID || data["billing_ended_at"] == nil ||
			data["service"].(map[string]any)["status"] != "decommissioned" {
			t.Fatalf("payload %v", got[0].Payload)
		}
		desc, err := p.temporal.DescribeWorkflowExecution(ctx, acc.RequestID, "")
		if err != nil {
			t.Fatal(err)
		}
		if attrs := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields(); attrs["OperationType"] == nil || attrs["ResourceId"] == nil {
			t.Fatalf("search attributes %v", attrs)
		}
		if status := p.do("DELETE", "/v1/services/"+pbx, p.liveKey, nil, nil); status != http.StatusConflict {
			t.Fatalf("decommissioning again: %d", status)
		}
	})
}
