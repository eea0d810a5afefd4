package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
)

// reportFixture is a completed CSV ticket export of tenant a's live
// tickets, made through the store as its workflow makes it.
func reportFixture(t *testing.T, h *harness, a tenant) string {
	t.Helper()
	ctx := context.Background()
	owner := &models.Principal{ID: "ak_owner", OrganizationID: a.org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	spec, err := support.ValidateReport(owner, support.ReportRequest{ReportType: support.ReportTicketExport, Format: "csv", Metrics: []string{"escalation_rate"}}, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	id := models.NewID(models.PrefixReport)
	if err := operations.NewStore(h.store).CreateOperation(ctx, owner.OwnScope(), support.NewReportOperation(id, spec)); err != nil {
		t.Fatal(err)
	}
	s := support.NewStore(h.store, support.WithBlobs(h.blobs))
	res, err := s.GenerateReport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteReport(ctx, id, res, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// reportAnswer is a report as the API answers it.
type reportAnswer struct {
	Report struct {
		ID          string  `json:"id"`
		Status      string  `json:"status"`
		DownloadURL *string `json:"download_url"`
		ExpiresAt   *string `json:"download_url_expires_at"`
		RowCount    *int64  `json:"row_count"`
		Columns     []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		Parameters map[string]any `json:"parameters"`
		Delivery   struct {
			Method string `json:"method"`
		} `json:"delivery"`
	} `json:"report"`
}

func TestSupportReportRequests(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	bad := []struct {
		name  string
		body  string
		field string
	}{
		{"unknown report type", `{"report_type":"everything"}`, "report_type"},
		{"unknown metric", `{"parameters":{"metrics":["happiness"]}}`, "metrics"},
		{"unknown grouping", `{"parameters":{"grouping":["planet"]}}`, "grouping"},
		{"format", `{"parameters":{"format":"xlsx"}}`, "format"},
		{"start without end", `{"parameters":{"date_range":{"start":"2026-01-01"}}}`, "parameters.date_range.end"},
		{"a range over a year", `{"parameters":{"date_range":{"start":"2024-01-01","end":"2026-01-01"}}}`, "parameters.date_range.end"},
		{"time zone", `{"parameters":{"timezone":"Mars/Olympus"}}`, "parameters.timezone"},
		{"grouped export", `{"report_type":"ticket_export","parameters":{"grouping":["week"]}}`, "parameters.grouping"},
		{"e-mail without address", `{"delivery":{"method":"email"}}`, "delivery.notification_email"},
		{"priority", `{"parameters":{"filters":{"priorities":["urgent"]}}}`, "priorities"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			e := h.do("POST", "/v1/support/reports/generate", key, tt.body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
			if !strings.Contains(string(h.do("POST", "/v1/support/reports/generate", key, tt.body).body), tt.field) {
				t.Fatalf("error %+v does not name %s", e, tt.field)
			}
		})
	}
	// A valid request needs the workflow engine, which this server has not.
	h.do("POST", "/v1/support/reports/generate", key, `{"parameters":{"grouping":["category"]}}`).wantError(http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE")
	var list struct {
		Reports    []any          `json:"reports"`
		Pagination map[string]any `json:"pagination"`
	}
	h.do("GET", "/v1/support/reports", key, nil).decode(http.StatusOK, &list)
	if len(list.Reports) != 0 || list.Pagination["total"] != 0.0 {
		t.Fatalf("a report that did not start is listed: %+v", list)
	}
	h.do("GET", "/v1/support/reports?status=lost", key, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("GET", "/v1/support/reports/rpt_nothing", key, nil).wantError(http.StatusNotFound, "NOT_FOUND")
}

// TestSupportReportDownload completes a report through the store (as its
// workflow does) and follows it through the API: the report and its
// signed link, the file without a credential, a tampered or expired link,
// another organization, and a credential without support:read.
func TestSupportReportDownload(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	key := h.tenants[0].liveKey
	for _, title := range []string{"Fiber link down", "Slow DNS"} {
		h.do("POST", "/v1/support/tickets", key, map[string]any{"title": title, "description": "seen", "category": "network", "priority": "high"}).decode(http.StatusCreated, nil)
	}
	id := reportFixture(t, h, h.tenants[0])
	s := support.NewStore(h.store, support.WithBlobs(h.blobs))

	var rep reportAnswer
	h.do("GET", "/v1/support/reports/"+id, key, nil).decode(http.StatusOK, &rep)
	r := rep.Report
	if r.Status != "completed" || r.DownloadURL == nil || r.ExpiresAt == nil || *r.RowCount != 2 || len(r.Columns) != 11 || r.Delivery.Method != "download" {
		t.Fatalf("report %+v", r)
	}
	path := strings.TrimPrefix(*r.DownloadURL, "http://localhost:8080")
	got := h.do("GET", path, "", nil)
	if got.status != http.StatusOK || !strings.HasPrefix(got.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(got.header.Get("Content-Disposition"), id+".csv") || strings.Count(string(got.body), "\n") != 3 ||
		!strings.HasPrefix(string(got.body), "ticket_id,number,customer_id,category,priority,status,agent,created_at,resolved_at,escalated,escalation_level\n") {
		t.Fatalf("download: %d %v %s", got.status, got.header, got.body)
	}
	h.do("GET", strings.Replace(path, "signature=", "signature=ab", 1), "", nil).wantError(http.StatusUnauthorized, "INVALID_SIGNATURE")
	h.do("GET", "/v1/support/reports/"+id+"/download", "", nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	past, err := s.ReportLink(ctx, "", id, time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	h.do("GET", past, "", nil).wantError(http.StatusUnauthorized, "TOKEN_EXPIRED")

	h.do("GET", "/v1/support/reports/"+id, h.tenants[1].liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("GET", "/v1/support/reports/"+id, h.tenants[0].testKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/support/reports/"+id+"/cancel", key, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	var limited struct {
		APIKey struct{ Key string } `json:"api_key"`
	}
	h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "services only", "permissions": []string{"services:read"},
		"organization_id": h.tenants[0].org.ID, "environment": "live"}).decode(http.StatusCreated, &limited)
	h.do("GET", "/v1/support/reports/"+id, limited.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/support/reports/generate", limited.APIKey.Key, `{}`).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	var op struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	h.do("GET", "/v1/operations/"+id, key, nil).decode(http.StatusOK, &op)
	if op.Type != "support_report" || op.Status != "completed" {
		t.Fatalf("operation %+v", op)
	}
	h.do("GET", "/v1/operations/"+id, limited.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
}
