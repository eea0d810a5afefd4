package api_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
)

// analyticsRunFixture runs a report of tenant a's live tickets through the
// store, as its workflow does, and returns its id.
func analyticsRunFixture(t *testing.T, h *harness, a tenant, body reports.Request) string {
	t.Helper()
	ctx := context.Background()
	owner := &models.Principal{ID: "ak_owner", OrganizationID: a.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	s := reports.NewStore(h.store, h.blobs)
	op, err := s.NewRun(ctx, owner, body)
	if err != nil {
		t.Fatal(err)
	}
	if err := operations.NewStore(h.store).CreateOperation(ctx, owner.OwnScope(), op); err != nil {
		t.Fatal(err)
	}
	res, err := s.GenerateRun(ctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteRun(ctx, op.ID, res, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return op.ID
}

func TestAnalyticsReportRequests(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	valid := `{"dataset":"tickets","metrics":["count"],"dimensions":["priority"]}`
	bad := []struct {
		name   string
		body   string
		fields []string
	}{
		{"a metric outside the allow-list", `{"dataset":"tickets","metrics":["count","password_hash"]}`, []string{"metrics[1]"}},
		{"a dimension outside the allow-list", `{"dataset":"invoices","metrics":["count"],"dimensions":["customer_secret"]}`, []string{"dimensions[0]"}},
		{"a sort field not chosen", `{"dataset":"tickets","metrics":["count"],"sort":[{"field":"status"}]}`, []string{"sort[0].field"}},
		{"a filter on an unknown field", `{"dataset":"tickets","metrics":["count"],"filter":"1=1 or secret = 'x'"}`, []string{"filter"}},
		{"period with from", `{"dataset":"tickets","metrics":["count"],"period":"last_month","from":"2026-01-01","to":"2026-02-01"}`, []string{"period"}},
		{"e-mail without address", `{"dataset":"tickets","metrics":["count"],"delivery":{"method":"email"}}`, []string{"delivery.notification_email"}},
		{"a customer's organization", `{"dataset":"tickets","metrics":["count"],"organization_id":"org_x"}`, []string{"organization_id"}},
		{"several at once", `{"dataset":"tickets","metrics":["nope"],"dimensions":["nada"],"timezone":"Mars/Olympus"}`, []string{"metrics[0]", "dimensions[0]", "timezone"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			wantFields(t, h.do("POST", "/v1/analytics/reports", key, tt.body), tt.fields...)
		})
	}
	// Schema rules answer before the domain: an unknown dataset, no metric, a limit out of range.
	for _, body := range []string{`{"dataset":"secrets","metrics":["count"]}`, `{"dataset":"tickets","metrics":[]}`, `{"dataset":"tickets","metrics":["count"],"limit":100001}`} {
		h.do("POST", "/v1/analytics/reports", key, body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	}
	// A valid request needs the workflow engine, which this server has not; nothing is left behind.
	h.do("POST", "/v1/analytics/reports", key, valid).wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	var list struct {
		Reports    []any          `json:"reports"`
		Pagination map[string]any `json:"pagination"`
	}
	h.do("GET", "/v1/analytics/reports", key, nil).decode(http.StatusOK, &list)
	if len(list.Reports) != 0 || list.Pagination["total"] != 0.0 {
		t.Fatalf("a report that did not start is listed: %+v", list)
	}
	h.do("GET", "/v1/analytics/reports/rpt_nothing", key, nil).wantError(http.StatusNotFound, "NOT_FOUND")

	// Each dataset needs its domain's permission on top of analytics:read.
	var limited struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "analytics and services", "permissions": []string{"analytics:read", "services:read"},
		"organization_id": h.tenants[0].org.ID, "environment": "live"}).decode(http.StatusCreated, &limited)
	e := h.do("POST", "/v1/analytics/reports", limited.APIKey.Key, `{"dataset":"invoices","metrics":["sum_total"]}`).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if e.Error.Details["required_permission"] != "billing:read" {
		t.Fatalf("error %+v", e)
	}
	h.do("POST", "/v1/analytics/reports", limited.APIKey.Key, `{"dataset":"operations","metrics":["count"]}`).wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	h.do("POST", "/v1/analytics/report-definitions", limited.APIKey.Key, `{"name":"x","dataset":"operations","metrics":["count"]}`).
		wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")

	// Staff may read one organization, which must exist.
	h.do("POST", "/v1/analytics/reports", h.adminKey, `{"dataset":"tickets","metrics":["count"],"organization_id":"org_missing"}`).wantError(http.StatusNotFound, "NOT_FOUND")
}

func TestAnalyticsDatasetsPublished(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Datasets []struct {
			Name       string `json:"name"`
			Permission string `json:"permission"`
			Schema     string `json:"schema"`
			Metrics    []struct {
				Name string `json:"name"`
			} `json:"metrics"`
		} `json:"datasets"`
	}
	h.do("GET", "/v1/analytics/datasets", h.tenants[0].liveKey, nil).decode(http.StatusOK, &out)
	var names []string
	for _, d := range out.Datasets {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"services", "telemetry", "usage", "invoices", "payments", "operations", "tickets", "sla"}) {
		t.Fatalf("datasets %v", names)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Items struct {
						Enum []string `json:"enum"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	h.do("GET", "/openapi.json", "", nil).decode(http.StatusOK, &doc)
	for _, d := range out.Datasets {
		s, ok := doc.Components.Schemas[d.Schema]
		if !ok || len(d.Metrics) == 0 {
			t.Fatalf("no component %s", d.Schema)
		}
		if enum := s.Properties["metrics"].Items.Enum; len(enum) != len(d.Metrics) || enum[0] != d.Metrics[0].Name {
			t.Fatalf("%s metrics enum %v", d.Schema, enum)
		}
	}
	if out.Datasets[3].Permission != "billing:read" || out.Datasets[6].Permission != "support:read" || out.Datasets[0].Permission != "services:read" {
		t.Fatalf("permissions %+v", out.Datasets)
	}
}

// TestAnalyticsReportDownload completes a run through the store (as its
// workflow does) and follows it through the API: the run and its signed
// link, the CSV checked row by row without a credential, a tampered link,
// another organization and the sandbox.
func TestAnalyticsReportDownload(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	for _, p := range []string{"critical", "high", "high"} {
		h.do("POST", "/v1/support/tickets", key, map[string]any{"title": "t " + p, "description": "seen", "category": "network", "priority": p}).decode(http.StatusCreated, nil)
	}
	h.do("POST", "/v1/support/tickets", h.tenants[1].liveKey, map[string]any{"title": "other", "description": "d", "category": "network", "priority": "low"}).decode(http.StatusCreated, nil)
	id := analyticsRunFixture(t, h, h.tenants[0], reports.Request{Format: "csv", Query: buildQuery("tickets", []string{"count", "open"}, []string{"priority"})})

	var rep struct {
		Report struct {
			Status      string  `json:"status"`
			DownloadURL *string `json:"download_url"`
			RowCount    *int64  `json:"row_count"`
			Columns     []struct {
				Name, Type string
			} `json:"columns"`
			Query struct {
				Period string `json:"period"`
				Limit  int    `json:"limit"`
			} `json:"query"`
		} `json:"report"`
	}
	h.do("GET", "/v1/analytics/reports/"+id, key, nil).decode(http.StatusOK, &rep)
	r := rep.Report
	if r.Status != "completed" || r.DownloadURL == nil || *r.RowCount != 2 || len(r.Columns) != 3 || r.Columns[0].Name != "priority" ||
		r.Query.Period != "last_30_days" || r.Query.Limit != 10000 {
		t.Fatalf("report %+v", r)
	}
	path := strings.TrimPrefix(*r.DownloadURL, "http://localhost:8080")
	got := h.do("GET", path, "", nil)
	recs, err := csv.NewReader(strings.NewReader(string(got.body))).ReadAll()
	if err != nil || got.status != http.StatusOK || !strings.HasPrefix(got.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("download: %d %v %s", got.status, err, got.body)
	}
	want := [][]string{{"priority", "count", "open"}, {"critical", "1", "1"}, {"high", "2", "2"}}
	if !slices.EqualFunc(recs, want, slices.Equal[[]string]) {
		t.Fatalf("csv %v, want %v", recs, want)
	}
	h.do("GET", strings.Replace(path, "signature=", "signature=ab", 1), "", nil).wantError(http.StatusUnauthorized, "INVALID_SIGNATURE")
	// A support report's link does not open an analytics run (nor the reverse): each collection checks its own kind.
	h.do("GET", strings.Replace(path, "/v1/analytics/reports/", "/v1/support/reports/", 1), "", nil).wantError(http.StatusNotFound, "NOT_FOUND")

	h.do("GET", "/v1/analytics/reports/"+id, h.tenants[1].liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/reports/"+id, h.tenants[0].testKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/analytics/reports/"+id+"/cancel", key, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	var op struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	h.do("GET", "/v1/operations/"+id, key, nil).decode(http.StatusOK, &op)
	if op.Type != "analytics_report" || op.Status != "completed" {
		t.Fatalf("operation %+v", op)
	}
	var events struct {
		Events []struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		} `json:"events"`
	}
	h.do("GET", "/v1/events?type=analytics_report.completed", key, nil).decode(http.StatusOK, &events)
	if len(events.Events) != 1 {
		t.Fatalf("events %+v", events)
	}
	if rep := events.Events[0].Data["report"].(map[string]any); rep["id"] != id || rep["row_count"] != 2.0 || rep["download_url"] != nil {
		t.Fatalf("event %+v", rep)
	}
}

// buildQuery is a report query of dataset.
func buildQuery(dataset string, metrics, dims []string) builder.Definition {
	return builder.Definition{Dataset: dataset, Metrics: metrics, Dimensions: dims}
}

// TestAnalyticsReportDefinitions saves, lists, replaces and deletes
// definitions without a schedule (which needs no workflow engine), and
// refuses a scheduled one while the engine is away, keeping nothing.
func TestAnalyticsReportDefinitions(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	var created struct {
		Definition struct {
			ID       string         `json:"id"`
			Name     string         `json:"name"`
			Schedule map[string]any `json:"schedule"`
			Query    struct {
				Period     string   `json:"period"`
				Dimensions []string `json:"dimensions"`
			} `json:"query"`
			From   *string `json:"from"`
			Format string  `json:"format"`
		} `json:"definition"`
	}
	h.do("POST", "/v1/analytics/report-definitions", key, map[string]any{"name": "Tickets by priority", "dataset": "tickets", "metrics": []string{"count"},
		"dimensions": []string{"priority"}, "period": "last_7_days", "format": "csv"}).decode(http.StatusCreated, &created)
	d := created.Definition
	if !strings.HasPrefix(d.ID, "rdef_") || d.Schedule != nil || d.Query.Period != "last_7_days" || d.From != nil || d.Format != "csv" {
		t.Fatalf("definition %+v", d)
	}
	wantFields(t, h.do("POST", "/v1/analytics/report-definitions", key, map[string]any{"name": " ", "dataset": "tickets", "metrics": []string{"count", "salary"},
		"schedule": map[string]any{"frequency": "daily", "timezone": "Nowhere/Land"}}), "name", "metrics[1]", "schedule.timezone")
	wantFields(t, h.do("POST", "/v1/analytics/report-definitions", key, map[string]any{"name": "w", "dataset": "tickets", "metrics": []string{"count"},
		"schedule": map[string]any{"frequency": "daily", "day_of_month": 3}}), "schedule.day_of_month")
	// A schedule needs the workflow engine: 503, and the definition is not kept.
	h.do("POST", "/v1/analytics/report-definitions", key, map[string]any{"name": "Daily", "dataset": "tickets", "metrics": []string{"count"},
		"schedule": map[string]any{"frequency": "weekly", "weekday": "friday", "hour": 7}}).wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	var list struct {
		Definitions []struct {
			ID string `json:"id"`
		} `json:"definitions"`
	}
	h.do("GET", "/v1/analytics/report-definitions", key, nil).decode(http.StatusOK, &list)
	if len(list.Definitions) != 1 || list.Definitions[0].ID != d.ID {
		t.Fatalf("list %+v", list)
	}
	h.do("GET", "/v1/analytics/report-definitions/"+d.ID, h.tenants[1].liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/analytics/report-definitions/"+d.ID, h.tenants[0].testKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")

	created.Definition = d
	created.Definition.Query.Period = ""
	h.do("PUT", "/v1/analytics/report-definitions/"+d.ID, key, map[string]any{"name": "Tickets by status", "dataset": "tickets", "metrics": []string{"count"},
		"dimensions": []string{"status"}, "from": "2026-01-01", "to": "2026-02-01"}).decode(http.StatusOK, &created)
	if c := created.Definition; c.ID != d.ID || c.Name != "Tickets by status" || c.Query.Dimensions[0] != "status" || c.From == nil || *c.From != "2026-01-01" || c.Query.Period != "" || c.Format != "json" {
		t.Fatalf("replaced %+v", c)
	}
	h.do("PUT", "/v1/analytics/report-definitions/"+d.ID, h.tenants[1].liveKey, map[string]any{"name": "x", "dataset": "tickets", "metrics": []string{"count"}}).
		wantError(http.StatusNotFound, "NOT_FOUND")
	// Running it needs the engine too; nothing is recorded as its last run.
	h.do("POST", "/v1/analytics/report-definitions/"+d.ID+"/run", key, nil).wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	h.do("GET", "/v1/analytics/report-definitions/"+d.ID, key, nil).decode(http.StatusOK, nil)
	// analytics:read alone may read definitions, not change them.
	var reader struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "reader", "permissions": []string{"analytics:read", "support:read"},
		"organization_id": h.tenants[0].org.ID, "environment": "live"}).decode(http.StatusCreated, &reader)
	h.do("GET", "/v1/analytics/report-definitions/"+d.ID, reader.APIKey.Key, nil).decode(http.StatusOK, nil)
	h.do("DELETE", "/v1/analytics/report-definitions/"+d.ID, reader.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if res := h.do("DELETE", "/v1/analytics/report-definitions/"+d.ID, key, nil); res.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.status, res.body)
	}
	h.do("GET", "/v1/analytics/report-definitions/"+d.ID, key, nil).wantError(http.StatusNotFound, "NOT_FOUND")
}

// TestAnalyticsReportIsolation runs the same report as three callers over
// tenant A's live tickets: tenant A counts them, tenant B (even filtering
// on what only A's tickets carry) and A's sandbox count none of them.
func TestAnalyticsReportIsolation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for range 3 {
		newTicket(t, h, h.tenants[0].liveKey, map[string]any{"title": "isolation probe of tenant A"})
	}
	query := buildQuery("tickets", []string{"count"}, nil)
	query.Filter = `title ~ "isolation probe of tenant A"`
	count := func(org string, env models.Environment) any {
		t.Helper()
		p := &models.Principal{ID: "ak_probe", OrganizationID: org, Environment: env, Role: models.RoleCustomer, Permissions: []string{"*"}}
		spec, err := reports.Validate(p, reports.Request{Query: query}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		plan, err := spec.Plan()
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := builder.NewStore(h.store).Rows(ctx, plan, spec.BuilderScope())
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %v %v", rows, err)
		}
		return rows[0][0]
	}
	if n := count(h.tenants[0].org.ID, models.EnvLive); n != int64(3) {
		t.Fatalf("tenant A counts %v (%T)", n, n)
	}
	if n := count(h.tenants[1].org.ID, models.EnvLive); n != int64(0) {
		t.Fatalf("tenant B counts %v of A's tickets", n)
	}
	if n := count(h.tenants[0].org.ID, models.EnvTest); n != int64(0) {
		t.Fatalf("A's sandbox counts %v live tickets", n)
	}
}
