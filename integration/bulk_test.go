package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/workflows"
)

// bulkStack is the API, both workers (interactive and background task
// queues; they may deliver webhooks to loopback receivers) and the outbox
// dispatcher on a fresh database and Temporal dev server, with a sandbox
// tenant that has a billing account.
type bulkStack struct {
	*platform
	orgID string
	key   string // the tenant's sandbox key
}

// startBulkStack starts the platform with each simulated network step
// taking stepDelay.
func startBulkStack(t testing.TB, stepDelay string) *bulkStack {
	t.Helper()
	s := &bulkStack{platform: startPlatform(t, platformOptions{stepDelay: stepDelay, queuePrefix: "bulk", background: true, httpTimeout: time.Minute})}
	s.orgID, s.key = s.newTenant("Bulk customer")
	return s
}

// newTenant creates an organization with a sandbox key and a sandbox
// billing account, and returns the organization id and the key.
func (s *bulkStack) newTenant(name string) (string, string) {
	s.t.Helper()
	ctx := context.Background()
	org, err := identity.NewStore(s.store).CreateOrganization(ctx, s.admin, identity.OrganizationInput{Name: name, Plan: models.PlanEnterprise})
	if err != nil {
		s.t.Fatal(err)
	}
	issued, err := identity.NewStore(s.store).CreateAPIKey(ctx, s.admin, identity.APIKeyInput{Name: "bulk", Permissions: []string{"*"}, OrganizationID: org.ID, Environment: models.EnvTest})
	if err != nil {
		s.t.Fatal(err)
	}
	s.call("POST", "/v1/billing/accounts", issued.Secret, map[string]any{"name": "Sandbox", "currency": "USD", "billing_email": "b@example.com"}, http.StatusCreated, nil)
	return org.ID, issued.Secret
}

// subscribe has rcv receive the service.* events of the tenant of key,
// signed with hookSecret1.
func (s *bulkStack) subscribe(key string, rcv *hookReceiver) {
	s.t.Helper()
	s.call("POST", "/v1/services/webhooks", key, map[string]any{"url": rcv.srv.URL, "events": []string{"service.*"}, "secret": hookSecret1}, http.StatusCreated, nil)
}

// call sends a request, checks the status and decodes the answer into out.
func (s *bulkStack) call(method, path, key string, body any, want int, out any) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.http.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
}

type bulkOperation struct {
	RequestID string `json:"request_id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Progress  struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
		Percent   int `json:"percent"`
	} `json:"progress"`
	Steps []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"steps"`
	Items []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Error  *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	} `json:"items"`
	Result   map[string]any `json:"result"`
	Error    map[string]any `json:"error"`
	Workflow struct {
		ID    string `json:"id"`
		RunID string `json:"run_id"`
		UIURL string `json:"ui_url"`
	} `json:"workflow"`
}

// follow polls the operation until it ends (within timeout) and returns
// every document seen, the last one ended.
func (s *bulkStack) follow(id, key string, timeout time.Duration) []bulkOperation {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	var seen []bulkOperation
	for {
		var op bulkOperation
		s.call("GET", "/v1/operations/"+id, key, nil, http.StatusOK, &op)
		seen = append(seen, op)
		if terminal(op.Status) {
			return seen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("operation %s still %s (%+v) after %s", id, op.Status, op.Progress, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *bulkStack) bulkProvision(key string, n int, location string, opts map[string]any, templateOf func(i int) string) string {
	s.t.Helper()
	services := make([]any, n)
	for i := range services {
		services[i] = map[string]any{"template": templateOf(i), "location": location}
	}
	var acc struct {
		RequestID string `json:"request_id"`
		Total     int    `json:"total"`
	}
	s.call("POST", "/v1/services/bulk/provision", key, map[string]any{"services": services, "orchestration": opts}, http.StatusAccepted, &acc)
	if acc.Total != n {
		s.t.Fatalf("accepted %d items of %d", acc.Total, n)
	}
	return acc.RequestID
}

func sameTemplate(t string) func(int) string { return func(int) string { return t } }

func TestBulkProvisioningEndToEnd(t *testing.T) {
	t.Parallel() // the longest test: the waiting ones run beside it
	s := startBulkStack(t, "10ms")
	ctx := context.Background()
	rcv := newHookReceiver(t, alwaysOK, hookSecret1)
	s.subscribe(s.key, rcv) // before anything is provisioned

	t.Run("200 items in parallel, progress rising to completion", func(t *testing.T) {
		id := s.bulkProvision(s.key, 200, "loc_sandbox_all", map[string]any{"parallel": true, "max_concurrency": 20}, sameTemplate("internet-dedicated-1g"))
		seen := s.follow(id, s.key, 5*time.Minute)
		final := seen[len(seen)-1]
		if final.Status != "completed" || final.Progress.Completed != 200 || final.Progress.Percent != 100 || len(final.Items) != 200 ||
			final.Result["completed"] != float64(200) {
			t.Fatalf("final %+v %v", final.Progress, final.Result)
		}
		distinct, runs := map[int]bool{}, map[string]bool{}
		for i, op := range seen {
			distinct[op.Progress.Completed] = true
			if op.Workflow.RunID != "" {
				runs[op.Workflow.RunID] = true
			}
			if i > 0 && op.Progress.Completed < seen[i-1].Progress.Completed {
				t.Fatalf("progress went back from %d to %d", seen[i-1].Progress.Completed, op.Progress.Completed)
			}
		}
		if len(distinct) < 3 {
			t.Fatalf("progress was seen at %v only: it must rise while the job runs", distinct)
		}
		t.Logf("progress seen at %d distinct values over %d polls; %d workflow runs", len(distinct), len(seen), len(runs))
		ids := []string{}
		for _, it := range final.Items {
			if it.Status != "completed" || !models.HasPrefix(it.ID, "svc") {
				t.Fatalf("item %+v", it)
			}
			ids = append(ids, it.ID)
		}
		// One signed service.provisioned webhook per item, about its service.
		// About 1,000 deliveries (every item's status changes too): more time than other waits.
		waitForWithin(t, 4*time.Minute, "service.provisioned of the 200 items", func() bool { return rcv.hasServiceEvents(t, "service.provisioned", ids) })
		rcv.checkValid(t)
		got := rcv.serviceDeliveries(t, "service.provisioned")
		for _, id := range ids {
			if len(got[id]) != 1 {
				t.Fatalf("service %s received events %v", id, got[id])
			}
		}
		if len(got) != 200 {
			t.Fatalf("service.provisioned received for %d services, want 200", len(got))
		}
		var svc struct {
			Service struct {
				Status                string `json:"status"`
				ProvisioningRequestID string `json:"provisioning_request_id"`
			} `json:"service"`
		}
		s.call("GET", "/v1/services/"+final.Items[117].ID, s.key, nil, http.StatusOK, &svc)
		if svc.Service.Status != "operational" {
			t.Fatalf("service %+v", svc)
		}
		var child bulkOperation
		s.call("GET", "/v1/operations/"+svc.Service.ProvisioningRequestID, s.key, nil, http.StatusOK, &child)
		if child.Status != "completed" || child.Type != "provisioning" {
			t.Fatalf("the item's provisioning %+v", child)
		}
		// It ran in the bulk job's workflow: that is the workflow it names.
		if child.Workflow.ID != id || !strings.HasSuffix(child.Workflow.UIURL, "/workflows/"+id) {
			t.Fatalf("the item's workflow %+v, want the bulk job's %s", child.Workflow, id)
		}
		// One parent workflow on the background queue, which continued as new
		// (pages of 100 items), with each run's history small.
		desc, err := s.temporal.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		info := desc.GetWorkflowExecutionInfo()
		if info.GetTaskQueue() != s.cfg.TemporalBackgroundTaskQueue || info.GetFirstRunId() == info.GetExecution().GetRunId() {
			t.Fatalf("workflow on %s, first run %s, last run %s", info.GetTaskQueue(), info.GetFirstRunId(), info.GetExecution().GetRunId())
		}
		if n := info.GetHistoryLength(); n > 2000 {
			t.Fatalf("the last run's history has %d events", n)
		}
	})

	t.Run("partial failure, then a retry of the failed items", func(t *testing.T) {
		tpl := func(i int) string {
			if i%4 == 1 {
				return "sandbox-fail-activate"
			}
			return "internet-business-100m"
		}
		id := s.bulkProvision(s.key, 12, "loc_sandbox_all", map[string]any{"parallel": true, "max_concurrency": 4}, tpl)
		seen := s.follow(id, s.key, 2*time.Minute)
		final := seen[len(seen)-1]
		if final.Status != "partial" || final.Progress.Failed != 3 || final.Progress.Completed != 9 || final.Error["code"] != "PROVISIONING_FAILED" {
			t.Fatalf("final %+v %v", final.Progress, final.Error)
		}
		var completed, failed []string
		for i, it := range final.Items {
			if i%4 == 1 && (it.Status != "failed" || it.Error == nil || it.Error.Code != "PROVISIONING_FAILED" || it.Error.Details["step"] != "activate") {
				t.Fatalf("item %d: %+v", i, it)
			}
			if it.Status == "completed" {
				completed = append(completed, it.ID)
			} else {
				failed = append(failed, it.ID)
			}
		}
		// service.provisioned for the completed items only.
		waitFor(t, "service.provisioned of the completed items", func() bool { return rcv.hasServiceEvents(t, "service.provisioned", completed) })
		got := rcv.serviceDeliveries(t, "service.provisioned")
		for _, id := range completed {
			if len(got[id]) != 1 {
				t.Fatalf("service %s received events %v", id, got[id])
			}
		}
		for _, id := range failed {
			if len(got[id]) != 0 {
				t.Fatalf("failed item %s received service.provisioned", id)
			}
		}
		var acc struct {
			RequestID string `json:"request_id"`
			Total     int    `json:"total"`
			RetryOf   string `json:"retry_of"`
		}
		s.call("POST", "/v1/operations/"+id+"/retry", s.key, map[string]any{}, http.StatusAccepted, &acc)
		if acc.Total != 3 || acc.RetryOf != id {
			t.Fatalf("retry %+v", acc)
		}
		again := s.follow(acc.RequestID, s.key, 2*time.Minute)
		if last := again[len(again)-1]; last.Status != "failed" || last.Progress.Failed != 3 || last.Result["retry_of"] != id {
			t.Fatalf("retry ended %+v", last)
		}
	})

	t.Run("rollback on failure undoes the completed items", func(t *testing.T) {
		// loc_sandbox_low_capacity holds 100 Mbps of fiber_business: item 0 takes it, so item 1 fails.
		id := s.bulkProvision(s.key, 6, "loc_sandbox_low_capacity", map[string]any{"rollback_on_failure": true}, sameTemplate("internet-business-100m"))
		final := s.follow(id, s.key, 2*time.Minute)
		last := final[len(final)-1]
		want := []string{"rolled_back", "failed", "skipped", "skipped", "skipped", "skipped"}
		got := []string{}
		for _, it := range last.Items {
			got = append(got, it.Status)
		}
		if last.Status != "rolled_back" || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("status %s, items %v", last.Status, got)
		}
		var svc struct {
			Service struct {
				Status  string
				Pricing struct {
					BillingEndedAt *string `json:"billing_ended_at"`
				} `json:"pricing"`
			} `json:"service"`
		}
		rolledBack := last.Items[0].ID
		s.call("GET", "/v1/services/"+rolledBack, s.key, nil, http.StatusOK, &svc)
		if svc.Service.Status != "decommissioned" || svc.Service.Pricing.BillingEndedAt == nil {
			t.Fatalf("rolled-back service is %+v", svc.Service)
		}
		// Its service.provisioned, then its service.decommissioned (reason rollback).
		waitFor(t, "service.decommissioned of the rolled-back item", func() bool {
			return rcv.hasServiceEvents(t, "service.decommissioned", []string{rolledBack})
		})
		rcv.checkValid(t)
		if got := rcv.serviceDeliveries(t, "service.provisioned"); len(got[rolledBack]) != 1 || len(got[last.Items[1].ID]) != 0 {
			t.Fatalf("service.provisioned of the rolled-back item %v, of the failed one %v", got[rolledBack], got[last.Items[1].ID])
		}
		for _, d := range rcv.received("service.decommissioned") {
			data := d.Payload["data"].(map[string]any)
			if data["service"].(map[string]any)["id"] != rolledBack {
				continue
			}
			if data["reason"] != "rollback" || data["request_id"] != id || data["billing_ended_at"] != *svc.Service.Pricing.BillingEndedAt {
				t.Fatalf("service.decommissioned payload %v", d.Payload)
			}
		}
		left, err := catalog.NewStore(s.store).AvailableMbps(ctx, models.TenantScope(s.orgID, models.EnvTest), "loc_sandbox_low_capacity", "fiber_business")
		if err != nil || left != 100 {
			t.Fatalf("capacity not released: %d left, %v", left, err)
		}
	})

	t.Run("bulk status: suspend, read, resume", func(t *testing.T) {
		id := s.bulkProvision(s.key, 3, "loc_sandbox_all", map[string]any{"parallel": true}, sameTemplate("internet-business-100m"))
		done := s.follow(id, s.key, time.Minute)
		ids := []string{}
		for _, it := range done[len(done)-1].Items {
			ids = append(ids, it.ID)
		}
		for _, action := range []string{"suspend", "resume"} {
			var acc struct {
				RequestID string `json:"request_id"`
			}
			s.call("POST", "/v1/services/bulk/status", s.key, map[string]any{"service_ids": ids, "action": action, "orchestration": map[string]any{"parallel": true}}, http.StatusAccepted, &acc)
			if ops := s.follow(acc.RequestID, s.key, time.Minute); ops[len(ops)-1].Status != "completed" {
				t.Fatalf("%s: %+v", action, ops[len(ops)-1])
			}
			var read struct {
				Services []struct {
					Status string `json:"status"`
				} `json:"services"`
			}
			s.call("POST", "/v1/services/bulk/status", s.key, map[string]any{"service_ids": ids}, http.StatusOK, &read)
			want := map[string]string{"suspend": "maintenance", "resume": "operational"}[action]
			for _, r := range read.Services {
				if r.Status != want {
					t.Fatalf("after %s: %+v", action, read.Services)
				}
			}
		}
		var acc struct {
			RequestID string `json:"request_id"`
		}
		s.call("POST", "/v1/services/bulk/modify", s.key, map[string]any{"services": []any{map[string]any{"service_id": ids[0]}}, "changes": map[string]any{"sla": "premium", "monitoring": "advanced"}}, http.StatusAccepted, &acc)
		if ops := s.follow(acc.RequestID, s.key, time.Minute); ops[len(ops)-1].Status != "completed" {
			t.Fatalf("modify: %+v", ops[len(ops)-1])
		}
		var svc struct {
			Service struct {
				SLA        string `json:"sla"`
				Monitoring string `json:"monitoring"`
			} `json:"service"`
		}
		s.call("GET", "/v1/services/"+ids[0], s.key, nil, http.StatusOK, &svc)
		if svc.Service.SLA != "premium" || svc.Service.Monitoring != "advanced" {
			t.Fatalf("the modification was not applied: %+v", svc.Service)
		}
	})
}

func TestOrchestrationEndToEnd(t *testing.T) {
	s := startBulkStack(t, "10ms")
	ctx := context.Background()

	t.Run("a manual DAG", func(t *testing.T) {
		var acc struct {
			RequestID string `json:"request_id"`
		}
		s.call("POST", "/v1/services/orchestration/workflows", s.key, map[string]any{
			"name": "Branch",
			"steps": []any{
				map[string]any{"order": 1, "action": "run_availability_check", "parameters": map[string]any{"location": "1 Sandbox Way, Testville, CA 94000", "service_types": []string{"fiber_dedicated"}, "bandwidth": "1gbps"}},
				map[string]any{"order": 2, "action": "provision_service", "parameters": map[string]any{"template": "internet-dedicated-1g", "location": "${steps.1.location_id}"}, "depends_on": []int{1}},
				map[string]any{"order": 3, "action": "provision_service", "parameters": map[string]any{"template": "sandbox-fail-validate", "location": "loc_sandbox_all"}, "depends_on": []int{1}},
				map[string]any{"order": 4, "action": "notify", "parameters": map[string]any{"event": "service.maintenance_scheduled", "message": "welcome", "service_id": "${steps.2.service_id}"}, "depends_on": []int{2}},
				map[string]any{"order": 5, "action": "suspend_service", "parameters": map[string]any{"service_id": "${steps.2.service_id}"}, "depends_on": []int{2, 3}},
				map[string]any{"order": 6, "action": "wait", "parameters": map[string]any{"duration": "1s"}},
			},
		}, http.StatusAccepted, &acc)
		ops := s.follow(acc.RequestID, s.key, 2*time.Minute)
		last := ops[len(ops)-1]
		want := map[string]string{"1:run_availability_check": "completed", "2:provision_service": "completed", "3:provision_service": "failed",
			"4:notify": "completed", "5:suspend_service": "skipped", "6:wait": "completed"}
		for _, st := range last.Steps {
			if want[st.Name] != st.Status {
				t.Fatalf("step %s is %s, want %s (all %+v)", st.Name, st.Status, want[st.Name], last.Steps)
			}
		}
		if last.Status != "failed" || last.Error["code"] != "PROVISIONING_FAILED" {
			t.Fatalf("run %s %v", last.Status, last.Error)
		}
		outputs, _ := last.Result["outputs"].(map[string]any)
		svcID, _ := outputs["2"].(map[string]any)["service_id"].(string)
		var alias struct {
			Status        string `json:"status"`
			Orchestration struct {
				Name string `json:"name"`
			} `json:"orchestration"`
		}
		s.call("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, s.key, nil, http.StatusOK, &alias)
		if alias.Status != "failed" || alias.Orchestration.Name != "Branch" || !models.HasPrefix(svcID, "svc") {
			t.Fatalf("alias %+v, service %q", alias, svcID)
		}
		evs, err := eventlog.NewStore(s.store).EventsFor(ctx, models.TenantScope(s.orgID, models.EnvTest), svcID)
		// the provisioning's status moves, service.provisioned, then the notify step's event
		if err != nil || len(evs) != 4 || evs[3].Type != "service.maintenance_scheduled" || evs[3].Data["message"] != "welcome" {
			t.Fatalf("outbox %+v %v", evs, err)
		}
	})

	t.Run("an event trigger runs once per event, fed by the events dispatcher", func(t *testing.T) {
		// The earlier events (the manual DAG's service.provisioned) are
		// handed over before the trigger listens.
		bulkWaitFor(t, func() bool {
			und, err := eventlog.NewStore(s.store).UndispatchedEvents(ctx, 1)
			return err == nil && len(und) == 0
		})
		var acc struct {
			RequestID string `json:"request_id"`
		}
		s.call("POST", "/v1/services/orchestration/workflows", s.key, map[string]any{
			"name": "Tune new services", "trigger": "event:service.provisioned",
			"steps": []any{map[string]any{"order": 1, "action": "modify_service", "parameters": map[string]any{"service_id": "${event.data.service.id}", "changes": map[string]any{"monitoring": "advanced"}}}},
		}, http.StatusAccepted, &acc)
		bulkWaitFor(t, func() bool {
			var op bulkOperation
			s.call("GET", "/v1/operations/"+acc.RequestID, s.key, nil, http.StatusOK, &op)
			return op.Status == "in_progress"
		})
		// A service is provisioned; nothing else happens: the dispatcher loop
		// (startBulkStack runs it as the worker process does) hands its
		// service.provisioned to the trigger.
		var prov struct {
			RequestID string `json:"request_id"`
			ServiceID string `json:"service_id"`
		}
		s.call("POST", "/v1/services/provision", s.key, map[string]any{"service_template": "internet-business-100m", "location_id": "loc_sandbox_all"}, http.StatusAccepted, &prov)
		if done := s.follow(prov.RequestID, s.key, time.Minute); done[len(done)-1].Status != "completed" {
			t.Fatalf("provisioning %+v", done[len(done)-1])
		}
		scope := models.TenantScope(s.orgID, models.EnvTest)
		evs, err := eventlog.NewStore(s.store).EventsFor(ctx, scope, prov.ServiceID)
		if err != nil || len(evs) != 3 || evs[2].Type != "service.provisioned" {
			t.Fatalf("%+v %v", evs, err)
		}
		runID := automation.TriggeredRunID(acc.RequestID, evs[2].ID)
		bulkWaitFor(t, func() bool {
			_, err := operations.NewStore(s.store).OperationIn(ctx, scope, runID)
			return err == nil
		})
		ops := s.follow(runID, s.key, time.Minute)
		if last := ops[len(ops)-1]; last.Status != "completed" || last.Type != "orchestration" {
			t.Fatalf("triggered run %+v", last)
		}
		var svc struct {
			Service struct{ Monitoring string } `json:"service"`
		}
		s.call("GET", "/v1/services/"+prov.ServiceID, s.key, nil, http.StatusOK, &svc)
		if svc.Service.Monitoring != "advanced" {
			t.Fatalf("the run did not change the service: %+v", svc)
		}
		var trig bulkOperation
		bulkWaitFor(t, func() bool {
			s.call("GET", "/v1/operations/"+acc.RequestID, s.key, nil, http.StatusOK, &trig)
			return len(trig.Items) == 1 && trig.Items[0].ID == runID && trig.Items[0].Status == "completed"
		})

		// A dispatcher that died after handing the event over, before marking
		// it dispatched: the loop hands it over again, and nothing new runs.
		handled := func() float64 {
			t.Helper()
			v, err := s.temporal.QueryWorkflow(ctx, acc.RequestID, "", workflows.QueryProgress)
			if err != nil {
				t.Fatal(err)
			}
			var progress map[string]any
			if err := v.Get(&progress); err != nil {
				t.Fatal(err)
			}
			n, _ := progress["events_handled"].(float64)
			return n
		}
		if n := handled(); n != 1 {
			t.Fatalf("the trigger handled %v events, want 1", n)
		}
		if err := s.store.In(ctx, models.SystemScope()).Model(&eventlog.Event{}).Where("id = ?", evs[2].ID).Update("dispatched_at", nil).Error; err != nil {
			t.Fatal(err)
		}
		bulkWaitFor(t, func() bool { return handled() == 2 })
		bulkWaitFor(t, func() bool {
			und, err := eventlog.NewStore(s.store).UndispatchedEvents(ctx, 1000)
			for _, ev := range und {
				if ev.ID == evs[2].ID {
					return false
				}
			}
			return err == nil
		})
		var alias struct {
			Status        string `json:"status"`
			Items         []struct{ ID, Status string }
			Orchestration struct {
				Runs   int  `json:"runs"`
				Active bool `json:"active"`
			} `json:"orchestration"`
		}
		s.call("GET", "/v1/services/orchestration/workflows/"+acc.RequestID, s.key, nil, http.StatusOK, &alias)
		if alias.Status != "in_progress" || alias.Orchestration.Runs != 1 || !alias.Orchestration.Active || len(alias.Items) != 1 || alias.Items[0].ID != runID {
			t.Fatalf("after the event was handed over twice: %+v", alias)
		}
		if again := s.follow(runID, s.key, time.Minute); again[len(again)-1].Status != "completed" {
			t.Fatalf("the run %+v", again[len(again)-1])
		}

		s.call("POST", "/v1/operations/"+acc.RequestID+"/cancel", s.key, nil, http.StatusAccepted, nil)
		ended := s.follow(acc.RequestID, s.key, time.Minute)
		if ended[len(ended)-1].Status != "cancelled" {
			t.Fatalf("trigger %+v", ended[len(ended)-1])
		}
		if defs, _ := automation.NewStore(s.store).OrchestrationsTriggeredBy(ctx, scope, "service.provisioned"); len(defs) != 0 {
			t.Fatal("a cancelled trigger still listens")
		}
	})
}

// bulkWaitFor polls cond until it holds, failing after a minute.
func bulkWaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
