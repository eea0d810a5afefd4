package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

type serviceList struct {
	Services []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"services"`
	Pagination struct {
		Page       int    `json:"page"`
		PerPage    int    `json:"per_page"`
		Total      int    `json:"total"`
		Pages      int    `json:"pages"`
		NextCursor string `json:"next_cursor"`
	} `json:"pagination"`
}

func (l serviceList) ids() []string {
	out := make([]string, len(l.Services))
	for i, s := range l.Services {
		out[i] = s.ID
	}
	return out
}

func TestServiceList(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	bodies := categoryBodies(a)
	_, internet := provisionedFixture(t, h, a)
	phone := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	net := serviceFixture(t, h, a, "/v1/services/connectivity/networks", bodies["/v1/services/connectivity/networks"])
	ai := serviceFixture(t, h, a, "/v1/services/ai/platforms", bodies["/v1/services/ai/platforms"])
	other := serviceFixture(t, h, b, "/v1/services/voice/systems", categoryBodies(b)["/v1/services/voice/systems"])
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	if _, err := telemetry.NewStore(h.store).RaiseIncident(ctx, scope, net.ID, telemetry.IncidentDown, "fiber cut", nil, time.Now()); err != nil {
		t.Fatal(err)
	}

	var all serviceList
	h.do("GET", "/v1/services", a.liveKey, nil).decode(200, &all)
	if all.Pagination.Total != 4 || strings.Contains(strings.Join(all.ids(), ","), other.ID) {
		t.Fatalf("list %+v", all)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"status=down", []string{net.ID}},
		{"status=operational,down&type=network,phone_system&sort=name:asc", []string{phone.ID, net.ID}}, // Cloud PBX, Managed MPLS
		{"type=fiber_dedicated", []string{internet}},
		{"location=loc_austin_congress", []string{internet, net.ID}},
		{"location=78701", []string{internet, net.ID}},
		{"location=austin&sort=created_at:asc", []string{internet, net.ID}},
		{"search=" + url.QueryEscape("CLOUD PBX"), []string{phone.ID}},
		{"search=" + phone.ID[4:12] + "&fields=id", []string{phone.ID}},
		{"search=congress&fields=address", []string{internet, net.ID}},
		{"search=100%25", nil}, // % is matched literally
		{"account_id=" + a.account.ID + "&type=ai_platform", []string{ai.ID}},
		{"date_from=2000-01-01&date_to=2100-01-01&type=ai_platform", []string{ai.ID}},
		{"date_to=2000-01-01", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			var l serviceList
			h.do("GET", "/v1/services?"+tc.query, a.liveKey, nil).decode(200, &l)
			got := l.ids()
			if !strings.Contains(tc.query, "sort=") {
				// default order is newest first; compare as sets
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for _, w := range tc.want {
					if !strings.Contains(strings.Join(got, ","), w) {
						t.Fatalf("got %v, want %v", got, tc.want)
					}
				}
				return
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("pagination", func(t *testing.T) {
		var p1, p2, p3 serviceList
		h.do("GET", "/v1/services?limit=2&sort=created_at:asc", a.liveKey, nil).decode(200, &p1)
		if len(p1.Services) != 2 || p1.Pagination.Pages != 2 || p1.Pagination.NextCursor == "" {
			t.Fatalf("page 1 %+v", p1)
		}
		h.do("GET", "/v1/services?limit=2&sort=created_at:asc&cursor="+p1.Pagination.NextCursor, a.liveKey, nil).decode(200, &p2)
		h.do("GET", "/api/v1/services?per_page=2&page=2&sort=created_at:asc", a.liveKey, nil).decode(200, &p3)
		if len(p2.Services) != 2 || p2.Pagination.NextCursor != "" || strings.Join(p2.ids(), ",") != strings.Join(p3.ids(), ",") || p2.Services[0].ID == p1.Services[0].ID {
			t.Fatalf("page 2 %+v / %+v", p2, p3)
		}
	})
	for _, bad := range []string{"status=running", "fields=colour&search=x", "fields=name", "sort=price:asc", "date_from=yesterday", "limit=0", "type=Not+A+Type"} {
		t.Run("bad "+bad, func(t *testing.T) {
			h.do("GET", "/v1/services?"+bad, a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		})
	}
	t.Run("the record", func(t *testing.T) {
		var got struct {
			Service struct {
				ID            string         `json:"id"`
				Type          string         `json:"type"`
				Quantity      int            `json:"quantity"`
				Features      []string       `json:"features"`
				Specification map[string]any `json:"specification"`
				Pricing       struct {
					MonthlyCharge  float64 `json:"monthly_charge"`
					Currency       string  `json:"currency"`
					BillingEndedAt *string `json:"billing_ended_at"`
				} `json:"pricing"`
				Contacts          map[string]string `json:"contacts"`
				MaintenanceWindow *map[string]any   `json:"maintenance_window"`
			} `json:"service"`
		}
		h.do("GET", "/v1/services/"+phone.ID, a.liveKey, nil).decode(200, &got)
		s := got.Service
		if s.Type != "phone_system" || s.Quantity != 50 || len(s.Features) != 3 || s.Specification["users"] != float64(50) ||
			s.Pricing.MonthlyCharge <= 0 || s.Pricing.Currency != "USD" || s.Pricing.BillingEndedAt != nil || s.MaintenanceWindow != nil {
			t.Fatalf("service %+v", s)
		}
	})
}

func TestServiceChanges(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	bodies := categoryBodies(a)
	_, internet := provisionedFixture(t, h, a)
	phone := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	soc := serviceFixture(t, h, a, "/v1/services/security/managed", bodies["/v1/services/security/managed"])
	var change workflows.ServiceChangeInput
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ServiceChangeWorkflow, mock.Anything).
		Run(func(args mock.Arguments) { change = args.Get(3).(workflows.ServiceChangeInput) }).Return(mocks.NewWorkflowRun(t), nil)
	end := func(svcID, opID string) {
		t.Helper()
		if err := services.NewStore(h.store).EndServiceOperation(ctx, scope, svcID, opID, operations.FinishInput{Status: operations.OpCancelled}); err != nil {
			t.Fatal(err)
		}
	}
	accept := func(method, path string, body any) operationDoc {
		t.Helper()
		var acc operationDoc
		res := h.do(method, path, a.liveKey, body)
		res.decode(202, &acc)
		if res.header.Get("Location") != acc.StatusURL {
			t.Fatalf("Location %q", res.header.Get("Location"))
		}
		return acc
	}

	t.Run("PUT /services/{id}", func(t *testing.T) {
		acc := accept("PUT", "/v1/services/"+phone.ID, map[string]any{"name": "Head office PBX", "sla": "premium", "contacts": map[string]any{"billing": "ap@example.com"}})
		u := change.Update
		if acc.Type != "modification" || *u.Name != "Head office PBX" || *u.SLA != "premium" || *u.BillingContact != "ap@example.com" || u.MonthlyCharge <= phone.MonthlyCharge {
			t.Fatalf("update %+v", u)
		}
		var svc struct {
			Service struct {
				PendingOperationID string `json:"pending_operation_id"`
			} `json:"service"`
		}
		h.do("GET", "/v1/services/"+phone.ID, a.liveKey, nil).decode(200, &svc)
		if svc.Service.PendingOperationID != acc.RequestID {
			t.Fatalf("pending %q", svc.Service.PendingOperationID)
		}
		e := h.do("PUT", "/v1/services/"+phone.ID+"/features", a.liveKey, map[string]any{"features": []string{"call_recording"}}).wantError(409, "SERVICE_CONFLICT")
		if e.Error.Details["operation_id"] != acc.RequestID {
			t.Fatalf("details %v", e.Error.Details)
		}
		end(phone.ID, acc.RequestID)
		h.do("PUT", "/v1/services/"+phone.ID, a.liveKey, map[string]any{"sla": "enterprise"}).wantError(400, "VALIDATION_ERROR") // the offer has standard, premium
		h.do("PUT", "/v1/services/"+phone.ID, a.liveKey, map[string]any{}).wantError(400, "VALIDATION_ERROR")
		h.do("PUT", "/v1/services/svc_unknown", a.liveKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")
	})
	t.Run("PUT /services/{id}/configuration", func(t *testing.T) {
		acc := accept("PUT", "/api/v1/services/"+internet+"/configuration", map[string]any{"dns_servers": []string{"1.1.1.1", "2606:4700::1111"}, "monitoring": "advanced", "routed_prefixes": []string{"203.0.113.0/24"}})
		u := change.Update
		if u.Configuration["monitoring"] != "advanced" || *u.Monitoring != "advanced" || len(u.Configuration["dns_servers"].([]string)) != 2 {
			t.Fatalf("update %+v", u)
		}
		end(internet, acc.RequestID)
		for name, body := range map[string]map[string]any{
			"unknown setting": {"colour": "blue"},
			"bad ip":          {"dns_servers": []string{"dns.example"}},
			"host bits":       {"routed_prefixes": []string{"203.0.113.1/24"}},
			"bad enum":        {"qos_profile": "platinum"},
			"empty":           {},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("PUT", "/v1/services/"+internet+"/configuration", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
			})
		}
		h.do("PUT", "/v1/services/"+soc.ID+"/configuration", a.liveKey, map[string]any{"response_time_critical": "2_hours", "response_time_high": "1_hour"}).wantError(400, "VALIDATION_ERROR")
		acc = accept("PUT", "/v1/services/"+soc.ID+"/configuration", map[string]any{"escalation_emails": []string{"soc@example.com"}, "response_time_critical": "30_minutes"})
		end(soc.ID, acc.RequestID)
	})
	t.Run("PUT /services/{id}/features", func(t *testing.T) {
		acc := accept("PUT", "/v1/services/"+phone.ID+"/features", map[string]any{"features": []string{"auto_attendant", "call_recording"}})
		if f := *change.Update.Features; len(f) != 2 || change.Update.MonthlyCharge == phone.MonthlyCharge {
			t.Fatalf("update %+v", change.Update)
		}
		end(phone.ID, acc.RequestID)
		h.do("PUT", "/v1/services/"+phone.ID+"/features", a.liveKey, map[string]any{"features": []string{"ddos_protection"}}).wantError(400, "VALIDATION_ERROR")
	})
	t.Run("PUT /services/{id}/scaling", func(t *testing.T) {
		var before struct {
			Service struct {
				Name      string `json:"name"`
				Bandwidth string `json:"bandwidth"`
			} `json:"service"`
		}
		h.do("GET", "/v1/services/"+internet, a.liveKey, nil).decode(200, &before)
		if !strings.HasSuffix(before.Service.Name, " "+before.Service.Bandwidth) {
			t.Fatalf("the fixture's name %q is not its default", before.Service.Name)
		}
		start := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
		acc := accept("PUT", "/v1/services/"+internet+"/scaling", map[string]any{"scaling_action": "scale_up", "new_bandwidth": "10gbps",
			"effective_date": start.Add(30 * time.Minute).Format(time.RFC3339), "maintenance_window": map[string]any{"start": start.Format(time.RFC3339), "duration": "2_hours"}})
		u := change.Update
		if acc.Type != "scaling" || !models.HasPrefix(acc.RequestID, "scl") || !u.Windowed() || !u.WindowStart.Equal(start) || !u.WindowEnd.Equal(start.Add(2*time.Hour)) ||
			!u.ApplyAt.Equal(start.Add(30*time.Minute)) || u.Bandwidth != "10gbps" || len(u.Capacity) != 1 {
			t.Fatalf("scaling %+v", u)
		}
		// The default name follows the size; a name of the customer's own stays (below).
		if want := strings.TrimSuffix(before.Service.Name, before.Service.Bandwidth) + "10gbps"; u.Name == nil || *u.Name != want {
			t.Fatalf("scaling renames %v, want %q", u.Name, want)
		}
		var doc operationDoc
		h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).decode(200, &doc)
		names := []string{}
		for _, st := range doc.Steps {
			names = append(names, st.Name)
		}
		if strings.Join(names, ",") != "wait_for_window,start_maintenance,validate,reserve_capacity,apply,end_maintenance" {
			t.Fatalf("steps %v", names)
		}
		end(internet, acc.RequestID)
		acc = accept("PUT", "/v1/services/"+phone.ID+"/scaling", map[string]any{"scaling_action": "scale_down", "new_quantity": 20})
		if change.Update.Quantity != 20 || change.Update.WindowEnd.Sub(*change.Update.WindowStart) != time.Hour || change.Update.Name == nil ||
			*change.Update.Name != strings.Replace(phone.Name, "(50 users)", "(20 users)", 1) {
			t.Fatalf("scaling %+v", change.Update)
		}
		end(phone.ID, acc.RequestID)
		if err := h.store.In(ctx, scope).Model(&services.Service{}).Where("id = ?", phone.ID).Update("name", "Head office PBX").Error; err != nil {
			t.Fatal(err)
		}
		acc = accept("PUT", "/v1/services/"+phone.ID+"/scaling", map[string]any{"scaling_action": "scale_down", "new_quantity": 20})
		if change.Update.Name != nil || change.Update.Changes["name"] != nil {
			t.Fatalf("a name of the customer's own changed: %+v", change.Update)
		}
		end(phone.ID, acc.RequestID)
		for name, body := range map[string]map[string]any{
			"no action":           {"new_bandwidth": "10gbps"},
			"scale up to less":    {"scaling_action": "scale_up", "new_bandwidth": "500mbps"},
			"not an option":       {"scaling_action": "scale_up", "new_bandwidth": "5gbps"},
			"quantity on a link":  {"scaling_action": "scale_up", "new_quantity": 4},
			"bad duration":        {"scaling_action": "scale_up", "new_bandwidth": "10gbps", "maintenance_window": map[string]any{"start": start.Format(time.RFC3339), "duration": "2 hours"}},
			"too long":            {"scaling_action": "scale_up", "new_bandwidth": "10gbps", "maintenance_window": map[string]any{"start": start.Format(time.RFC3339), "duration": "30_hours"}},
			"effective after end": {"scaling_action": "scale_up", "new_bandwidth": "10gbps", "effective_date": start.Add(5 * time.Hour).Format(time.RFC3339), "maintenance_window": map[string]any{"start": start.Format(time.RFC3339), "duration": "1_hour"}},
		} {
			t.Run(name, func(t *testing.T) {
				h.do("PUT", "/v1/services/"+internet+"/scaling", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
			})
		}
		h.do("PUT", "/v1/services/"+soc.ID+"/scaling", a.liveKey, map[string]any{"scaling_action": "scale_up", "new_quantity": 3}).wantError(400, "VALIDATION_ERROR")
		// not enough capacity for 10gbps at Boise: scale a Boise service
		boise := serviceFixture(t, h, a, "/v1/services/connectivity/internet", map[string]any{"account_id": a.account.ID, "service_type": "fiber_business",
			"bandwidth": "100mbps", "sla": "standard", "location": map[string]any{"address": "800 W Main St", "city": "Boise", "state": "ID", "zip": "83702"}})
		h.do("PUT", "/v1/services/"+boise.ID+"/scaling", a.liveKey, map[string]any{"scaling_action": "scale_up", "new_bandwidth": "1gbps"}).wantError(422, "INSUFFICIENT_BANDWIDTH")
	})
	t.Run("SERVICE_MAINTENANCE with Retry-After", func(t *testing.T) {
		ends := time.Now().UTC().Add(90 * time.Minute)
		u := &services.ServiceUpdate{Type: services.OpTypeScaling, WindowStart: new(time.Now().UTC()), WindowEnd: &ends, Changes: map[string]any{}}
		op := operations.NewOperation("scl_fixture", services.OpTypeScaling, phone.ID, "ak_x", services.UpdateSteps(u), nil)
		if err := services.NewStore(h.store).StartServiceOperation(ctx, scope, phone.ID, op); err != nil {
			t.Fatal(err)
		}
		if err := services.NewStore(h.store).ScheduleMaintenance(ctx, scope, phone.ID, op.ID, u); err != nil {
			t.Fatal(err)
		}
		if err := services.NewStore(h.store).EnterMaintenance(ctx, scope, phone.ID, op.ID); err != nil {
			t.Fatal(err)
		}
		for _, call := range []struct{ method, path string }{
			{"PUT", "/v1/services/" + phone.ID}, {"PUT", "/v1/services/" + phone.ID + "/configuration"}, {"PUT", "/v1/services/" + phone.ID + "/features"},
			{"PUT", "/v1/services/" + phone.ID + "/scaling"}, {"POST", "/v1/services/" + phone.ID + "/decommission"}, {"DELETE", "/v1/services/" + phone.ID},
		} {
			body := map[string]any{"name": "x", "features": []string{}, "timezone": "America/Chicago", "scaling_action": "scale_up", "new_quantity": 60}
			switch {
			case strings.HasSuffix(call.path, "/configuration"):
				body = map[string]any{"timezone": "America/Chicago"}
			case strings.HasSuffix(call.path, "/features"):
				body = map[string]any{"features": []string{}}
			case strings.HasSuffix(call.path, "/scaling"):
				body = map[string]any{"scaling_action": "scale_up", "new_quantity": 60}
			case call.method == "POST":
				body = map[string]any{"reason": "moving"}
			case call.method == "DELETE":
				body = nil
			default:
				body = map[string]any{"name": "x"}
			}
			res := h.do(call.method, call.path, a.liveKey, body)
			e := res.wantError(503, "SERVICE_MAINTENANCE")
			ra, _ := strconv.Atoi(res.header.Get("Retry-After"))
			if ra < 5300 || ra > 5400 || e.Error.Details["maintenance_ends_at"] != models.Timestamp(ends) {
				t.Fatalf("%s %s: Retry-After %q, details %v", call.method, call.path, res.header.Get("Retry-After"), e.Error.Details)
			}
		}
		var svc struct {
			Service struct {
				Status            string            `json:"status"`
				MaintenanceWindow map[string]string `json:"maintenance_window"`
			} `json:"service"`
		}
		h.do("GET", "/v1/services/"+phone.ID, a.liveKey, nil).decode(200, &svc)
		if svc.Service.Status != "maintenance" || svc.Service.MaintenanceWindow["end"] != models.Timestamp(ends) {
			t.Fatalf("service %+v", svc.Service)
		}
		if err := services.NewStore(h.store).LeaveMaintenance(ctx, scope, phone.ID, op.ID, false, nil); err != nil {
			t.Fatal(err)
		}
		end(phone.ID, op.ID)
		evs, _ := eventlog.NewStore(h.store).EventsFor(ctx, scope, phone.ID)
		types := []string{}
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		if strings.Join(types, ",") != "service.status_changed,service.provisioned,service.maintenance_scheduled,service.status_changed,service.status_changed" {
			t.Fatalf("events %v", types)
		}
	})
}

func TestDecommissionRequests(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a, b := h.tenants[0], h.tenants[1]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	bodies := categoryBodies(a)
	phone := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	phone2 := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	cloud := serviceFixture(t, h, a, "/v1/services/cloud/platforms", bodies["/v1/services/cloud/platforms"])
	others := serviceFixture(t, h, b, "/v1/services/voice/systems", categoryBodies(b)["/v1/services/voice/systems"])
	var decom workflows.DecommissionInput
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.DecommissionWorkflow, mock.Anything).
		Run(func(args mock.Arguments) { decom = args.Get(3).(workflows.DecommissionInput) }).Return(mocks.NewWorkflowRun(t), nil)

	when := time.Now().UTC().Add(7 * 24 * time.Hour).Truncate(time.Second)
	var acc operationDoc
	h.do("POST", "/v1/services/"+phone.ID+"/decommission", a.liveKey, map[string]any{"decommission_date": when.Format(time.RFC3339),
		"data_migration": map[string]any{"required": true, "destination": phone2.ID, "verification": true}, "reason": "consolidation"}).decode(202, &acc)
	if !models.HasPrefix(acc.RequestID, "dec") || acc.Type != "decommission" || !decom.Scheduled || !decom.Plan.Date.Equal(when) || !decom.Plan.Migrate ||
		decom.Plan.Destination != phone2.ID || !decom.Plan.Verify || decom.Plan.Reason != "consolidation" {
		t.Fatalf("decommission %+v", decom)
	}
	var doc operationDoc
	h.do("GET", "/v1/operations/"+acc.RequestID, a.liveKey, nil).decode(200, &doc)
	names := []string{}
	for _, st := range doc.Steps {
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "wait_for_date,validate,migrate_data,verify_migration,deactivate,release_inventory,stop_billing,record_decommission" {
		t.Fatalf("steps %v", names)
	}
	h.do("DELETE", "/v1/services/"+phone.ID, a.liveKey, nil).wantError(409, "SERVICE_CONFLICT")
	// a service being decommissioned cannot receive another one's data
	e := h.do("POST", "/v1/services/"+phone2.ID+"/decommission", a.liveKey, map[string]any{"data_migration": map[string]any{"required": true, "destination": phone.ID}}).wantError(400, "VALIDATION_ERROR")
	if !strings.Contains(string(mustMarshal(e.Error.Details)), "data_migration.destination") {
		t.Fatalf("details %v", e.Error.Details)
	}
	if err := services.NewStore(h.store).EndServiceOperation(ctx, scope, phone.ID, acc.RequestID, operations.FinishInput{Status: operations.OpCancelled}); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]map[string]any{
		"destination missing":       {"data_migration": map[string]any{"required": true}},
		"destination of other kind": {"data_migration": map[string]any{"required": true, "destination": cloud.ID}},
		"destination itself":        {"data_migration": map[string]any{"required": true, "destination": phone.ID}},
		"another tenant's":          {"data_migration": map[string]any{"required": true, "destination": others.ID}},
		"verification alone":        {"data_migration": map[string]any{"verification": true}},
		"destination not required":  {"data_migration": map[string]any{"destination": phone2.ID}},
		"past date":                 {"decommission_date": "2020-01-01T00:00:00Z"},
		"reason too long":           {"reason": strings.Repeat("x", 501)},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("POST", "/v1/services/"+phone.ID+"/decommission", a.liveKey, body).wantError(400, "VALIDATION_ERROR")
		})
	}
	h.do("POST", "/v1/services/"+others.ID+"/decommission", a.liveKey, map[string]any{}).wantError(404, "NOT_FOUND")
	h.do("DELETE", "/api/v1/services/"+phone.ID, a.liveKey, nil).decode(202, &acc)
	if decom.Scheduled || decom.Plan.Migrate || decom.Plan.Reason != "deleted" {
		t.Fatalf("delete %+v", decom)
	}
	// a decommissioned service cannot be changed
	if _, err := services.NewStore(h.store).BeginDecommissioning(ctx, scope, phone.ID, acc.RequestID, "deleted"); err != nil {
		t.Fatal(err)
	}
	if _, err := services.NewStore(h.store).CompleteDecommission(ctx, scope, acc.RequestID, &decom.Plan); err != nil {
		t.Fatal(err)
	}
	h.do("PUT", "/v1/services/"+phone.ID, a.liveKey, map[string]any{"name": "again"}).wantError(409, "INVALID_STATE_TRANSITION")
	h.do("DELETE", "/v1/services/"+phone.ID, a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	t.Run("fixed paths keep their methods", func(t *testing.T) {
		for _, path := range []string{"/v1/services/catalog", "/api/v1/services/availability", "/v1/services/quotes"} {
			for _, method := range []string{"PUT", "DELETE"} {
				res := h.do(method, path, a.liveKey, map[string]any{})
				res.wantError(405, "METHOD_NOT_ALLOWED")
				if res.header.Get("Allow") == "" || strings.Contains(res.header.Get("Allow"), method) {
					t.Fatalf("%s %s: Allow %q", method, path, res.header.Get("Allow"))
				}
			}
		}
	})
	t.Run("a fixed path without GET is not a service id", func(t *testing.T) {
		for _, path := range []string{"/v1/services/quotes", "/api/v1/services/provision/", "/v1/Services/Quotes", "/v1/services/webhooks"} {
			res := h.do("GET", path, a.liveKey, nil)
			res.wantError(405, "METHOD_NOT_ALLOWED")
			if res.header.Get("Allow") != "POST" {
				t.Fatalf("GET %s: Allow %q", path, res.header.Get("Allow"))
			}
		}
		h.do("GET", "/v1/services/svc_doesNotExist", a.liveKey, nil).wantError(404, "NOT_FOUND")
		// Every documented field is present, null when it has no value.
		var raw struct {
			Service map[string]any `json:"service"`
		}
		h.do("GET", "/v1/services/"+phone.ID, a.liveKey, nil).decode(200, &raw)
		for _, k := range []string{"pending_operation_id", "decommissioned_at", "decommission_reason"} {
			if _, ok := raw.Service[k]; !ok {
				t.Fatalf("%s is missing: %v", k, raw.Service)
			}
		}
		if raw.Service["pending_operation_id"] != nil || raw.Service["decommission_reason"] != "deleted" {
			t.Fatalf("pending %v, reason %v", raw.Service["pending_operation_id"], raw.Service["decommission_reason"])
		}
		h.do("GET", "/v1/services/"+phone.ID, a.liveKey, nil).decode(200, nil)
	})
}

func mustMarshal(v any) []byte {
	raw, _ := json.Marshal(v)
	return raw
}

func TestMetricsHealthAnalytics(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	bodies := categoryBodies(a)
	_, internetID := provisionedFixture(t, h, a)
	phone := serviceFixture(t, h, a, "/v1/services/voice/systems", bodies["/v1/services/voice/systems"])
	p := tenantPrincipal(a)
	internet, _ := services.NewStore(h.store).GetService(ctx, p, internetID)
	now := time.Now().UTC()
	// 24 hours of samples every 10 minutes for both services; one hour down for the internet service
	var samples, linkSamples []*telemetry.TelemetrySample
	sumData := 0.0
	calls := 0
	for i := 1; i <= 144; i++ {
		at := now.Add(-time.Duration(i) * 10 * time.Minute)
		st := *internet
		if i >= 60 && i < 66 {
			st.Status = services.ServiceDown
		}
		smp := simulator.SampleFor(&st, at, 10*time.Minute)
		samples, linkSamples = append(samples, smp), append(linkSamples, smp)
		sumData += smp.DataMB
		ph := simulator.SampleFor(phone, at, 10*time.Minute)
		calls += ph.Calls
		samples = append(samples, ph)
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, samples...); err != nil {
		t.Fatal(err)
	}
	if calls == 0 || sumData == 0 {
		t.Fatal("the samples carry no traffic")
	}

	t.Run("metrics", func(t *testing.T) {
		var m struct {
			ServiceID string `json:"service_id"`
			Period    string `json:"period"`
			Interval  string `json:"interval"`
			From      string `json:"from"`
			Metrics   []struct {
				Timestamp         string   `json:"timestamp"`
				Samples           int      `json:"samples"`
				UptimePercentage  *float64 `json:"uptime_percentage"`
				LatencyMs         *float64 `json:"latency_ms"`
				DataTransferredMB float64  `json:"data_transferred_mb"`
				Calls             int      `json:"calls"`
			} `json:"metrics"`
		}
		h.do("GET", "/v1/services/"+internetID+"/metrics?period=24h", a.liveKey, nil).decode(200, &m)
		if m.Period != "24h" || m.Interval != "1h0m0s" || len(m.Metrics) != 24 {
			t.Fatalf("series %+v", m)
		}
		total, n, down := 0.0, 0, 0
		for _, pt := range m.Metrics {
			total += pt.DataTransferredMB
			n += pt.Samples
			if pt.UptimePercentage != nil && *pt.UptimePercentage < 100 {
				down++
			}
		}
		// the window starts on the hour: the oldest samples may fall before it
		from, _ := time.Parse(time.RFC3339, m.From)
		wantN, wantData := 0, 0.0
		for _, smp := range linkSamples {
			if !smp.At.Before(from) {
				wantN++
				wantData += smp.DataMB
			}
		}
		// plus the fixture's turn-up sample
		if n != wantN+1 || wantN < 138 || down == 0 || math.Abs(total-wantData) > 0.01*float64(len(m.Metrics)) {
			t.Fatalf("%d samples of %d, %.2f MB of %.2f, %d buckets with downtime", n, wantN, total, wantData, down)
		}
		h.do("GET", "/api/v1/services/"+internetID+"/metrics?period=last_hour", a.liveKey, nil).decode(200, &m)
		if len(m.Metrics) != 12 {
			t.Fatalf("1h buckets: %d", len(m.Metrics))
		}
		h.do("GET", "/v1/services/"+phone.ID+"/metrics?period=7d", a.liveKey, nil).decode(200, &m)
		c := 0
		for _, pt := range m.Metrics {
			c += pt.Calls
		}
		if len(m.Metrics) != 28 || c != calls {
			t.Fatalf("7d: %d buckets, %d calls of %d", len(m.Metrics), c, calls)
		}
		h.do("GET", "/v1/services/"+internetID+"/metrics?period=1y", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
		h.do("GET", "/v1/services/"+internetID+"/metrics", h.tenants[1].liveKey, nil).wantError(404, "NOT_FOUND")
	})
	t.Run("health", func(t *testing.T) {
		var hl struct {
			Overall string `json:"overall"`
			Checks  []struct {
				Name     string         `json:"name"`
				Status   string         `json:"status"`
				Observed map[string]any `json:"observed"`
			} `json:"checks"`
			LastSampleAt *string `json:"last_sample_at"`
		}
		h.do("GET", "/v1/services/"+phone.ID+"/health", a.liveKey, nil).decode(200, &hl)
		names := []string{}
		for _, c := range hl.Checks {
			names = append(names, c.Name+"="+c.Status)
		}
		if hl.LastSampleAt == nil || len(hl.Checks) != 5 || !strings.Contains(strings.Join(names, ","), "call_quality=healthy") {
			t.Fatalf("health %+v", hl)
		}
		h.do("GET", "/v1/services/"+internetID+"/health", a.liveKey, nil).decode(200, &hl)
		// an hour down in a day is below the premium SLA's 99.9 %
		if hl.Overall != "degraded" || hl.Checks[3].Name != "availability" || hl.Checks[3].Status != "degraded" {
			t.Fatalf("health %+v", hl)
		}
	})
	t.Run("analytics", func(t *testing.T) {
		var an struct {
			Period       string `json:"period"`
			UsageMetrics struct {
				TotalDataTransferred string  `json:"total_data_transferred"`
				PeakBandwidthUsage   string  `json:"peak_bandwidth_usage"`
				AverageLatency       string  `json:"average_latency"`
				TotalCalls           int     `json:"total_calls"`
				CallQualityScore     float64 `json:"call_quality_score"`
			} `json:"usage_metrics"`
			CostAnalysis struct {
				TotalCost             float64 `json:"total_cost"`
				CostPerGB             float64 `json:"cost_per_gb"`
				OptimizationPotential float64 `json:"optimization_potential"`
				Currency              string  `json:"currency"`
			} `json:"cost_analysis"`
			Trends struct {
				UsageGrowth            float64 `json:"usage_growth"`
				PerformanceImprovement float64 `json:"performance_improvement"`
			} `json:"trends"`
		}
		h.do("GET", "/v1/services/"+phone.ID+"/analytics", a.liveKey, nil).decode(200, &an)
		if an.Period != "last_30_days" || an.UsageMetrics.TotalCalls != calls || an.UsageMetrics.CallQualityScore < 4 || an.CostAnalysis.Currency != "USD" {
			t.Fatalf("analytics %+v", an)
		}
		h.do("GET", "/v1/services/"+internetID+"/analytics?period=last_24_hours", a.liveKey, nil).decode(200, &an)
		if !strings.HasSuffix(an.UsageMetrics.TotalDataTransferred, "B") || !strings.HasSuffix(an.UsageMetrics.PeakBandwidthUsage, "bps") ||
			!strings.HasSuffix(an.UsageMetrics.AverageLatency, " ms") || an.UsageMetrics.TotalCalls != 0 {
			t.Fatalf("analytics %+v", an)
		}
		// activated moments ago: almost nothing billed yet; its peak needs the 1gbps it has
		if an.CostAnalysis.TotalCost < 0 || an.CostAnalysis.TotalCost > 1 || an.CostAnalysis.OptimizationPotential != 0 {
			t.Fatalf("cost %+v", an.CostAnalysis)
		}
	})
	t.Run("summary", func(t *testing.T) {
		if _, err := telemetry.NewStore(h.store).RaiseIncident(ctx, scope, phone.ID, telemetry.IncidentDegraded, "jitter", nil, now); err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Services struct {
				Total    int            `json:"total"`
				ByStatus map[string]int `json:"by_status"`
				ByType   map[string]int `json:"by_type"`
			} `json:"services"`
			Availability struct {
				UptimePercentage *float64 `json:"uptime_percentage"`
			} `json:"availability"`
			Usage struct {
				TotalCalls int `json:"total_calls"`
			} `json:"usage"`
			Incidents struct{ InPeriod, Open int } `json:"incidents"`
			Cost      struct {
				MonthlyRecurring float64 `json:"monthly_recurring"`
			} `json:"cost"`
		}
		h.do("GET", "/v1/services/analytics/summary", a.liveKey, nil).decode(200, &sum)
		want := (internet.MonthlyCharge + phone.MonthlyCharge).Float()
		if sum.Services.Total != 2 || sum.Services.ByStatus["degraded"] != 1 || sum.Services.ByType["phone_system"] != 1 || sum.Usage.TotalCalls != calls ||
			sum.Incidents.Open != 1 || sum.Availability.UptimePercentage == nil || math.Abs(sum.Cost.MonthlyRecurring-want) > 0.001 {
			t.Fatalf("summary %+v (want %.2f)", sum, want)
		}
		h.do("GET", "/api/v1/services/analytics/summary?period=7d", h.tenants[1].liveKey, nil).decode(200, &sum)
		if sum.Services.Total != 0 {
			t.Fatalf("another tenant's summary %+v", sum)
		}
		h.do("GET", "/v1/services/analytics/summary?period=forever", a.liveKey, nil).wantError(400, "VALIDATION_ERROR")
	})
	t.Run("status of every kind", func(t *testing.T) {
		var st struct {
			Status string `json:"status"`
		}
		h.do("GET", "/v1/services/"+phone.ID+"/status", a.liveKey, nil).decode(200, &st)
		if st.Status != "degraded" {
			t.Fatalf("status %+v", st)
		}
		evs, _ := eventlog.NewStore(h.store).EventsFor(ctx, scope, phone.ID)
		last := evs[len(evs)-1]
		if last.Type != "service.performance_alert" || fmt.Sprint(last.Data["incident"].(map[string]any)["kind"]) != "degraded" {
			t.Fatalf("events %+v", evs)
		}
	})
}
