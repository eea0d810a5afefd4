package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
)

// fieldIssue is the issue a VALIDATION_ERROR names for field ("" when none).
func fieldIssue(e errorBody, field string) string {
	fields, _ := e.Error.Details["fields"].([]any)
	for _, f := range fields {
		if m, _ := f.(map[string]any); m["field"] == field {
			s, _ := m["issue"].(string)
			return s
		}
	}
	return ""
}

// reportRunsFixture stores three runs of tenant a (analytics report runs,
// or support report runs with support true) created an hour apart and
// returns their ids, oldest first: the middle one cancelled (at +5h), the
// others completed, the oldest last (at +6h, the newest at +3h).
func reportRunsFixture(t *testing.T, h *harness, a tenant, support bool) []string {
	t.Helper()
	ctx := context.Background()
	owner := &models.Principal{ID: "ak_owner", OrganizationID: a.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	t0 := time.Now().UTC().Add(-time.Hour * 10).Truncate(time.Second)
	var ids []string
	for i := range 3 {
		op := newRunOperation(t, h, owner, support)
		if err := operations.NewStore(h.store).CreateOperation(ctx, owner.OwnScope(), op); err != nil {
			t.Fatal(err)
		}
		set := map[string]any{"created_at": t0.Add(time.Duration(i) * time.Hour)}
		switch i {
		case 0:
			set["status"], set["finished_at"] = operations.OpCompleted, t0.Add(6*time.Hour)
		case 1:
			set["status"], set["finished_at"] = operations.OpCancelled, t0.Add(5*time.Hour)
		case 2:
			set["status"], set["finished_at"] = operations.OpCompleted, t0.Add(3*time.Hour)
		}
		if err := h.store.In(ctx, owner.OwnScope()).Model(&operations.Operation{}).Where("id = ?", op.ID).Updates(set).Error; err != nil {
			t.Fatal(err)
		}
		ids = append(ids, op.ID)
	}
	return ids
}

// newRunOperation is a pending report run of owner (not stored).
func newRunOperation(t *testing.T, h *harness, owner *models.Principal, isSupport bool) *operations.Operation {
	t.Helper()
	if isSupport {
		spec, err := support.ValidateReport(owner, support.ReportRequest{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return support.NewReportOperation(models.NewID(models.PrefixReport), spec)
	}
	op, err := reports.NewStore(h.store, h.blobs).NewRun(context.Background(), owner, reports.Request{Query: buildQuery("tickets", []string{"count"}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// listedIDs lists path with key and returns the ids under the list's key.
func listedIDs(t *testing.T, h *harness, key, path, listKey string) []string {
	t.Helper()
	var body map[string]json.RawMessage
	h.do("GET", path, key, nil).decode(http.StatusOK, &body)
	var items []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body[listKey], &items); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	ids := []string{}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// TestReportListsApplySort: the lists of analytics report runs, analytics
// report definitions and support report runs honour sort (DECISIONS 2):
// created_at ascending gives the oldest first, the default stays newest
// first, their other fields sort too, and an unknown field is 400
// VALIDATION_ERROR on sort naming the sortable ones.
func TestReportListsApplySort(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	runs := reportRunsFixture(t, h, a, false)
	supportRuns := reportRunsFixture(t, h, a, true)
	var defs []string
	t0 := time.Now().UTC().Add(-10 * time.Hour).Truncate(time.Second)
	for i, name := range []string{"Bravo", "Charlie", "Alpha"} {
		var created struct {
			Definition struct{ ID string } `json:"definition"`
		}
		h.do("POST", "/v1/analytics/report-definitions", a.liveKey, map[string]any{"name": name, "dataset": "tickets", "metrics": []string{"count"}}).
			decode(http.StatusCreated, &created)
		if err := h.store.In(ctx, models.TenantScope(a.org.ID, models.EnvLive)).Model(&reports.Definition{}).Where("id = ?", created.Definition.ID).
			Update("created_at", t0.Add(time.Duration(i)*time.Hour)).Error; err != nil {
			t.Fatal(err)
		}
		defs = append(defs, created.Definition.ID)
	}
	rev := func(in []string) []string { out := slices.Clone(in); slices.Reverse(out); return out }

	tests := []struct {
		name, path, listKey string
		want                []string
	}{
		{"runs by default", "/v1/analytics/reports", "reports", rev(runs)},
		{"runs created_at:asc", "/v1/analytics/reports?sort=created_at:asc", "reports", runs},
		{"runs created_at:desc", "/v1/analytics/reports?sort=created_at:desc", "reports", rev(runs)},
		{"runs completed_at:asc (not completed last)", "/v1/analytics/reports?sort=completed_at:asc", "reports", []string{runs[2], runs[0], runs[1]}},
		{"runs completed_at:desc (not completed last)", "/v1/analytics/reports?sort=completed_at:desc", "reports", []string{runs[0], runs[2], runs[1]}},
		{"runs filtered and sorted", "/v1/analytics/reports?status=completed&sort=created_at:asc", "reports", []string{runs[0], runs[2]}},
		{"runs created_at:asc, paged", "/v1/analytics/reports?sort=created_at:asc&limit=2&page=2", "reports", runs[2:]},
		{"definitions by default", "/v1/analytics/report-definitions", "definitions", rev(defs)},
		{"definitions created_at:asc", "/v1/analytics/report-definitions?sort=created_at:asc", "definitions", defs},
		{"definitions name:asc", "/v1/analytics/report-definitions?sort=name:asc", "definitions", []string{defs[2], defs[0], defs[1]}},
		{"definitions name:desc", "/v1/analytics/report-definitions?sort=name:desc", "definitions", []string{defs[1], defs[0], defs[2]}},
		{"support reports by default", "/v1/support/reports", "reports", rev(supportRuns)},
		{"support reports created_at:asc", "/v1/support/reports?sort=created_at:asc", "reports", supportRuns},
		{"support reports created_at:asc, paged", "/v1/support/reports?sort=created_at:asc&limit=1&offset=1", "reports", supportRuns[1:2]},
		{"support reports completed_at:asc", "/v1/support/reports?sort=completed_at:asc", "reports", []string{supportRuns[2], supportRuns[0], supportRuns[1]}},
		{"support reports completed_at:desc", "/v1/support/reports?sort=completed_at:desc", "reports", []string{supportRuns[0], supportRuns[2], supportRuns[1]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := listedIDs(t, h, a.liveKey, tc.path, tc.listKey); !slices.Equal(got, tc.want) {
				t.Fatalf("GET %s: %v, want %v", tc.path, got, tc.want)
			}
		})
	}

	bad := []struct{ path, sortable string }{
		{"/v1/analytics/reports?sort=bogus:asc", "completed_at, created_at"},
		{"/v1/analytics/report-definitions?sort=bogus:asc", "created_at, last_run_at, name, updated_at"},
		{"/v1/support/reports?sort=bogus:asc", "completed_at, created_at"},
		{"/v1/support/reports?sort=created_at:asc,password:desc", "completed_at, created_at"},
	}
	for _, tc := range bad {
		t.Run(tc.path, func(t *testing.T) {
			e := h.do("GET", tc.path, a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			if issue := fieldIssue(e, "sort"); !strings.HasPrefix(issue, "cannot sort by") || !strings.HasSuffix(issue, "sortable fields: "+tc.sortable) {
				t.Fatalf("sort issue %q: %+v", issue, e.Error)
			}
		})
	}
}

// TestReportCancelDocumentsAlreadyCancelled: cancelling a run that is
// already cancelled answers 200 with the run, and /openapi.json declares
// that 200 (with the run's body) beside the 202.
func TestReportCancelDocumentsAlreadyCancelled(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var doc map[string]any
	if err := json.Unmarshal(h.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, schema string
		runs               []string
	}{
		{"analytics", "/v1/analytics/reports/{report_id}/cancel", "AnalyticsReportOutputBody", reportRunsFixture(t, h, a, false)},
		{"support", "/v1/support/reports/{report_id}/cancel", "ReportOutputBody", reportRunsFixture(t, h, a, true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			responses, _ := dig(doc, "paths", tc.path, "post", "responses").(map[string]any)
			for _, code := range []string{"200", "202"} {
				ref, _ := dig(responses, code, "content", "application/json", "schema", "$ref").(string)
				if ref != "#/components/schemas/"+tc.schema {
					t.Errorf("POST %s: the %s answer's schema is %q, want %s (responses %v)", tc.path, code, ref, tc.schema, keys(responses))
				}
			}
			if dig(doc, "components", "schemas", tc.schema) == nil {
				t.Errorf("schema %s is not published", tc.schema)
			}
			var got struct {
				Report struct {
					ID     string `json:"id"`
					Status string `json:"status"`
				} `json:"report"`
			}
			path := strings.Replace(tc.path, "{report_id}", tc.runs[1], 1)
			h.do("POST", path, a.liveKey, nil).decode(http.StatusOK, &got)
			if got.Report.ID != tc.runs[1] || got.Report.Status != "cancelled" {
				t.Fatalf("cancel again: %+v", got)
			}
		})
	}
}

// TestSupportReportDateRangeIssues: a date_range bound that is given but
// is no time says so (as the dashboard does), not that it is required; a
// missing one is still "required with" the other.
func TestSupportReportDateRangeIssues(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	tests := []struct {
		name, body, field, issue string
	}{
		{"start garbage", `{"parameters":{"date_range":{"start":"garbage","end":"2026-11-01"}}}`, "parameters.date_range.start",
			`must be an RFC 3339 timestamp or a date (YYYY-MM-DD), not "garbage"`},
		{"end garbage", `{"parameters":{"date_range":{"start":"2026-10-01","end":"31/10/2026"}}}`, "parameters.date_range.end",
			`must be an RFC 3339 timestamp or a date (YYYY-MM-DD, exclusive), not "31/10/2026"`},
		{"start missing", `{"parameters":{"date_range":{"end":"2026-11-01"}}}`, "parameters.date_range.start",
			"is required with end: an RFC 3339 timestamp or a date (YYYY-MM-DD)"},
		{"end missing", `{"parameters":{"date_range":{"start":"2026-10-01"}}}`, "parameters.date_range.end",
			"is required with start: an RFC 3339 timestamp or a date (YYYY-MM-DD, exclusive)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do("POST", "/v1/support/reports/generate", key, tc.body)
			wantFields(t, res, tc.field)
			var e errorBody
			_ = json.Unmarshal(res.body, &e)
			if got := fieldIssue(e, tc.field); got != tc.issue {
				t.Fatalf("%s: %q, want %q", tc.field, got, tc.issue)
			}
		})
	}
}

// TestServiceAnalyticsTrendsNullWithoutComparison: the trends of
// GET /v1/services/{id}/analytics are null, not 0 ("no change"), when the
// period's first half has nothing to compare with, and computed when both
// halves have data.
func TestServiceAnalyticsTrendsNullWithoutComparison(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	now := time.Now().UTC()
	activated := now.Add(-48 * time.Hour)
	svc := &services.Service{ID: models.NewID(models.PrefixService), AccountID: a.account.ID, Name: "Fiber", Kind: "internet",
		ServiceType: "fiber_dedicated", CatalogServiceID: "internet-fiber-dedicated", Status: services.ServiceOperational, Bandwidth: "1gbps",
		BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly", LocationID: "loc_austin_congress", Address: "100 Congress Ave",
		City: "Austin", State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning), ActivatedAt: &activated, StatusChangedAt: activated}
	if err := h.store.In(ctx, scope).Create(svc).Error; err != nil {
		t.Fatal(err)
	}
	record := func(at time.Time, dataMB, latency float64) {
		t.Helper()
		s := &telemetry.TelemetrySample{ServiceID: svc.ID, At: at, Up: true, LatencyMs: latency, DataMB: dataMB, ThroughputMbps: 100}
		if err := telemetry.NewStore(h.store).RecordTelemetry(ctx, scope, s); err != nil {
			t.Fatal(err)
		}
	}
	trends := func() map[string]any {
		t.Helper()
		var body struct {
			Trends map[string]any `json:"trends"`
		}
		h.do("GET", "/v1/services/"+svc.ID+"/analytics?period=24h", a.liveKey, nil).decode(http.StatusOK, &body)
		return body.Trends
	}
	steps := []struct {
		name string
		add  func()
		want map[string]any
	}{
		{"no telemetry at all", func() {}, map[string]any{"usage_growth": nil, "performance_improvement": nil}},
		{"the second half only", func() { record(now.Add(-time.Hour), 500, 10) }, map[string]any{"usage_growth": nil, "performance_improvement": nil}},
		// (500 - 250) / 250 = +100 %; latency 20 → 10 ms = 50 % better.
		{"both halves", func() { record(now.Add(-18*time.Hour), 250, 20) }, map[string]any{"usage_growth": 100.0, "performance_improvement": 50.0}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.add()
			got := trends()
			for k, want := range st.want {
				v, ok := got[k]
				if !ok || v != want {
					t.Errorf("trends.%s = %v (present %v), want %v", k, v, ok, want)
				}
			}
		})
	}
}
