package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/mocks"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/simulator"
	"github.com/telcoplatform/platform/workflows"
)

// scalingInWindow starts, through the API, a scaling of service svcID
// (1 gbps to 10 gbps, its window from now) and plays its workflow up to
// the maintenance: the window recorded, the service in maintenance. It
// returns the scaling's request id and its change.
func scalingInWindow(t *testing.T, h *harness, mc *mocks.Client, tn tenant, svcID string) (string, *services.ServiceUpdate) {
	t.Helper()
	ctx := context.Background()
	scope := models.TenantScope(tn.org.ID, models.EnvLive)
	var change workflows.ServiceChangeInput
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.ServiceChangeWorkflow, mock.Anything).
		Run(func(args mock.Arguments) { change = args.Get(3).(workflows.ServiceChangeInput) }).Return(mocks.NewWorkflowRun(t), nil).Once()
	var acc operationDoc
	h.do("PUT", "/v1/services/"+svcID+"/scaling", tn.liveKey, map[string]any{"scaling_action": "scale_up", "new_bandwidth": "10gbps"}).decode(202, &acc)
	id, u := acc.RequestID, &change.Update
	svcs, ops := services.NewStore(h.store), operations.NewStore(h.store)
	if _, err := ops.BeginOperation(ctx, scope, id, "run-scaling"); err != nil {
		t.Fatal(err)
	}
	if err := svcs.ScheduleMaintenance(ctx, scope, svcID, id, u); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		ops.StartStep(ctx, scope, id, services.StepWaitForWindow), ops.CompleteStep(ctx, scope, id, services.StepWaitForWindow),
		ops.StartStep(ctx, scope, id, services.StepStartMaintenance), svcs.EnterMaintenance(ctx, scope, svcID, id),
		ops.CompleteStep(ctx, scope, id, services.StepStartMaintenance),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return id, u
}

// TestCancelAppliedScaling: a scaling may be cancelled until its change is
// applied (or its apply step runs); from then on (the change made, the apply step completed, the
// window's end awaited) cancelling is 409 INVALID_STATE_TRANSITION naming
// the step reached, and the workflow is not asked to stop.
func TestCancelAppliedScaling(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	_, internet := provisionedFixture(t, h, a)
	id, u := scalingInWindow(t, h, mc, a, internet)
	svcs, ops := services.NewStore(h.store), operations.NewStore(h.store)

	// Not applied yet: the workflow is asked to stop (and undoes the maintenance).
	mc.On("CancelWorkflow", mock.Anything, id, "").Return(nil)
	h.do("POST", "/v1/operations/"+id+"/cancel", a.liveKey, nil).decode(202, nil)

	wantApplied := func(step string) {
		t.Helper()
		e := h.do("POST", "/v1/operations/"+id+"/cancel", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
		if e.Error.Details["step"] != step || e.Error.Details["applied"] != true || e.Error.Details["status"] != "in_progress" {
			t.Fatalf("details %v, want step %s", e.Error.Details, step)
		}
	}
	// The apply step runs: it is no longer cancelled, the change not made yet.
	if err := ops.StartStep(ctx, scope, id, services.StepApply); err != nil {
		t.Fatal(err)
	}
	e := h.do("POST", "/v1/operations/"+id+"/cancel", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	if e.Error.Details["step"] != services.StepApply || e.Error.Details["applied"] != false {
		t.Fatalf("details %v while applying", e.Error.Details)
	}
	// The change is made; the apply step has not recorded its end yet.
	if _, err := svcs.ApplyServiceUpdate(ctx, scope, internet, id, u, false); err != nil {
		t.Fatal(err)
	}
	wantApplied(services.StepApply)
	// Applied; the service stays in maintenance until the window's end.
	if err := ops.CompleteStep(ctx, scope, id, services.StepApply); err != nil {
		t.Fatal(err)
	}
	wantApplied(services.StepApply)
	if err := ops.StartStep(ctx, scope, id, services.StepEndMaintenance); err != nil {
		t.Fatal(err)
	}
	wantApplied(services.StepEndMaintenance)
	var doc operationDoc
	h.do("GET", "/v1/operations/"+id, a.liveKey, nil).decode(200, &doc)
	if doc.Status != "in_progress" {
		t.Fatalf("operation %s", doc.Status)
	}
	if err := svcs.LeaveMaintenance(ctx, scope, internet, id, true, nil); err != nil {
		t.Fatal(err)
	}
	e = h.do("POST", "/v1/operations/"+id+"/cancel", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	if e.Error.Details["status"] != "completed" {
		t.Fatalf("details %v", e.Error.Details)
	}
	mc.AssertNumberOfCalls(t, "CancelWorkflow", 1) // only before the change was applied
}

// unmeasuredAnswers are the parts of /status, /health and /metrics that say
// whether a service is measured.
type unmeasuredAnswers struct {
	status struct {
		Status             string            `json:"status"`
		UptimePercentage   *float64          `json:"uptime_percentage"`
		LastIncident       *string           `json:"last_incident"`
		PerformanceMetrics map[string]any    `json:"performance_metrics"`
		HealthChecks       map[string]string `json:"health_checks"`
	}
	health struct {
		Overall string `json:"overall"`
		Checks  []struct {
			Name     string         `json:"name"`
			Status   string         `json:"status"`
			Observed map[string]any `json:"observed"`
		} `json:"checks"`
		LastSampleAt *string        `json:"last_sample_at"`
		OpenIncident map[string]any `json:"open_incident"`
	}
	metrics struct {
		Metrics []struct {
			Samples   int      `json:"samples"`
			LatencyMs *float64 `json:"latency_ms"`
		} `json:"metrics"`
	}
}

func readMeasurements(h *harness, key, svcID string) *unmeasuredAnswers {
	h.t.Helper()
	var r unmeasuredAnswers
	h.do("GET", "/v1/services/"+svcID+"/status", key, nil).decode(200, &r.status)
	h.do("GET", "/v1/services/"+svcID+"/health", key, nil).decode(200, &r.health)
	h.do("GET", "/v1/services/"+svcID+"/metrics?period=1h", key, nil).decode(200, &r.metrics)
	return &r
}

// measured reports whether any of the three answers carries a measurement.
func (r *unmeasuredAnswers) measured() []string {
	var got []string
	if r.status.UptimePercentage != nil || r.status.LastIncident != nil || r.status.PerformanceMetrics != nil {
		got = append(got, "status values")
	}
	for name, v := range r.status.HealthChecks {
		if v != telemetry.HealthUnknown {
			got = append(got, "status check "+name+"="+v)
		}
	}
	if r.health.Overall != telemetry.HealthUnknown || r.health.LastSampleAt != nil || r.health.OpenIncident != nil {
		got = append(got, "health overall "+r.health.Overall)
	}
	for _, c := range r.health.Checks {
		if c.Status != telemetry.HealthUnknown || len(c.Observed) > 0 {
			got = append(got, "health check "+c.Name+"="+c.Status)
		}
	}
	for _, pt := range r.metrics.Metrics {
		if pt.Samples > 0 || pt.LatencyMs != nil {
			got = append(got, "metrics samples")
			break
		}
	}
	return got
}

// TestUndeliveredServicesAreNotMeasured: a service that is not delivered
// (decommissioning, decommissioned, failed) answers null values and
// unknown checks on /status, /health and /metrics alike, whatever samples
// it had before.
func TestUndeliveredServicesAreNotMeasured(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	svcs := services.NewStore(h.store)
	_, internet := provisionedFixture(t, h, a)
	svc, err := svcs.ServiceIn(ctx, scope, internet)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var samples []*telemetry.TelemetrySample
	for i := 1; i <= 5; i++ {
		samples = append(samples, simulator.SampleFor(svc, now.Add(-time.Duration(i)*5*time.Minute), 5*time.Minute))
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, samples...); err != nil {
		t.Fatal(err)
	}
	if got := readMeasurements(h, a.liveKey, internet); len(got.measured()) == 0 {
		t.Fatal("an operational service with samples is measured")
	}
	for _, to := range []services.ServiceStatus{services.ServiceDecommissioning, services.ServiceDecommissioned} {
		if _, err := svcs.TransitionService(ctx, scope, nil, internet, to); err != nil {
			t.Fatal(err)
		}
		r := readMeasurements(h, a.liveKey, internet)
		if r.status.Status != string(to) || len(r.health.Checks) != 4 {
			t.Fatalf("%s: status %q, %d checks", to, r.status.Status, len(r.health.Checks))
		}
		if got := r.measured(); len(got) > 0 {
			t.Fatalf("a %s service answers measurements: %v", to, got)
		}
	}

	// A service whose provisioning failed, with a sample taken before.
	o, _, err := svcs.PrepareTemplateOrder(ctx, tenantPrincipal(a), services.TemplateInput{
		ServiceTemplate: "internet-dedicated-1g", AccountID: a.account.ID, LocationID: "loc_austin_congress",
	})
	if err != nil {
		t.Fatal(err)
	}
	failedID := models.NewID(models.PrefixService)
	if _, err := svcs.EnsureService(ctx, scope, failedID, models.NewID(models.PrefixProvisioning), o); err != nil {
		t.Fatal(err)
	}
	if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, simulator.Sample(failedID, "premium", services.ServiceOperational, now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.TransitionService(ctx, scope, nil, failedID, services.ServiceFailed); err != nil {
		t.Fatal(err)
	}
	if got := readMeasurements(h, a.liveKey, failedID).measured(); len(got) > 0 {
		t.Fatalf("a failed service answers measurements: %v", got)
	}
}

// schemaViolations returns what makes body invalid against the 200 answer
// that /openapi-3.1.json documents for GET template.
func schemaViolations(t *testing.T, h *harness, template string, body []byte) []string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(h.do("GET", "/openapi-3.1.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{}
	for k, v := range doc {
		schema[k] = v
	}
	schema["$ref"] = "#/paths/" + pointerEscape(template) + "/get/responses/200/content/application~1json/schema"
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	violations, err := models.SchemaViolations("https://platform.example/openapi-3.1.json", schema, v)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vi := range violations {
		out = append(out, fmt.Sprintf("/%s: %v", strings.Join(vi.InstanceLocation, "/"), vi.ErrorKind))
	}
	return out
}

// TestAnalyticsWithoutSamples: figures of the analytics without a sample to
// compute them from are null, not zeros (call quality of a kind without
// calls included), and the answer is valid against its documented schema.
func TestAnalyticsWithoutSamples(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	_, internet := provisionedFixture(t, h, a)
	type usage struct {
		TotalDataTransferred string   `json:"total_data_transferred"`
		PeakBandwidthUsage   *string  `json:"peak_bandwidth_usage"`
		AverageLatency       *string  `json:"average_latency"`
		TotalCalls           int      `json:"total_calls"`
		CallQualityScore     *float64 `json:"call_quality_score"`
		UptimePercentage     *float64 `json:"uptime_percentage"`
	}
	var an struct {
		UsageMetrics usage `json:"usage_metrics"`
	}
	// With the fixture's turn-up sample: measured figures, but no calls on an internet link.
	h.do("GET", "/v1/services/"+internet+"/analytics", a.liveKey, nil).decode(200, &an)
	if u := an.UsageMetrics; u.PeakBandwidthUsage == nil || u.AverageLatency == nil || u.UptimePercentage == nil || u.CallQualityScore != nil {
		t.Fatalf("with a sample: %+v", u)
	}
	if err := h.store.In(ctx, scope).Where("service_id = ?", internet).Delete(&telemetry.TelemetrySample{}).Error; err != nil {
		t.Fatal(err)
	}
	res := h.do("GET", "/v1/services/"+internet+"/analytics", a.liveKey, nil).decode(200, nil)
	var raw struct {
		UsageMetrics map[string]any `json:"usage_metrics"`
	}
	if err := json.Unmarshal(res.body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"peak_bandwidth_usage", "average_latency", "call_quality_score", "uptime_percentage"} {
		if v, ok := raw.UsageMetrics[field]; !ok || v != nil {
			t.Errorf("without telemetry %s is %v, want null", field, v)
		}
	}
	if raw.UsageMetrics["total_data_transferred"] != "0.0 MB" || raw.UsageMetrics["total_calls"] != 0.0 {
		t.Errorf("totals without telemetry: %v", raw.UsageMetrics)
	}
	if v := schemaViolations(t, h, "/v1/services/{service_id}/analytics", res.body); len(v) > 0 {
		t.Fatalf("the answer does not match its schema: %v; answer %s", v, res.body)
	}
}

// TestBulkResumeInScalingWindow: resuming (bulk status, resume_service) a
// service in a scaling's maintenance window fails with SERVICE_MAINTENANCE,
// not SERVICE_CONFLICT, and leaves it in maintenance; suspending it is
// still SERVICE_CONFLICT (the scaling is changing it).
func TestBulkResumeInScalingWindow(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	_, internet := provisionedFixture(t, h, a)
	id, u := scalingInWindow(t, h, mc, a, internet)
	auto := automation.NewStore(h.store)

	_, err := auto.ServiceForChange(ctx, scope, automation.ChangeResume, internet)
	if e := models.AsError(err); models.ErrorCode(err) != models.CodeServiceMaintenance || e.Details["operation_id"] != id ||
		e.Details["maintenance_ends_at"] != models.Timestamp(*u.WindowEnd) || e.Details["retry_after"] == nil {
		t.Fatalf("resuming in a scaling's window: %v", err)
	}
	req := automation.ChangeRequest{Key: automation.ChangeKey("bulk_resume", 0), OperationID: "bulk_resume", ServiceID: internet, Kind: automation.ChangeResume}
	if _, err := auto.ApplyServiceChange(ctx, scope, req); models.ErrorCode(err) != models.CodeServiceMaintenance {
		t.Fatalf("applying a resume in a scaling's window: %v", err)
	}
	if _, err := auto.ServiceForChange(ctx, scope, automation.ChangeSuspend, internet); models.ErrorCode(err) != models.CodeServiceConflict {
		t.Fatalf("suspending a service a scaling is changing: %v", err)
	}
	svc, err := services.NewStore(h.store).ServiceIn(ctx, scope, internet)
	if err != nil || svc.Status != services.ServiceMaintenance || svc.PendingOperationID != id {
		t.Fatalf("service %+v %v", svc, err)
	}
}

// TestCancelDecommissionPastDeactivate: a decommission is cancelled until it
// starts taking the service out; from deactivate on, cancel is 409 (it
// answered 202 and the workflow went on).
func TestCancelDecommissionPastDeactivate(t *testing.T) {
	h := newHarness(t)
	mc := withTemporal(t, h)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	_, internet := provisionedFixture(t, h, a)
	mc.On("ExecuteWorkflow", mock.Anything, mock.Anything, workflows.DecommissionWorkflow, mock.Anything).Return(mocks.NewWorkflowRun(t), nil)
	var acc operationDoc
	h.do("DELETE", "/v1/services/"+internet, a.liveKey, nil).decode(202, &acc)
	mc.On("CancelWorkflow", mock.Anything, acc.RequestID, "").Return(nil)
	h.do("POST", "/v1/operations/"+acc.RequestID+"/cancel", a.liveKey, nil).decode(202, nil)
	if err := operations.NewStore(h.store).StartStep(ctx, scope, acc.RequestID, services.StepDeactivate); err != nil {
		t.Fatal(err)
	}
	e := h.do("POST", "/v1/operations/"+acc.RequestID+"/cancel", a.liveKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	if e.Error.Details["step"] != services.StepDeactivate {
		t.Fatalf("details %v", e.Error.Details)
	}
	mc.AssertNumberOfCalls(t, "CancelWorkflow", 1)
}
