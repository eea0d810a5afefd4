package support_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

// rowCollector keeps a report's rows.
type rowCollector struct{ rows [][]any }

func (c *rowCollector) WriteRow(v []any) error {
	c.rows = append(c.rows, append([]any(nil), v...))
	return nil
}

func mustSpec(t *testing.T, p *models.Principal, in support.ReportRequest, now time.Time) *support.ReportSpec {
	t.Helper()
	spec, err := support.ValidateReport(p, in, now)
	if err != nil {
		t.Fatalf("ValidateReport: %v", err)
	}
	return spec
}

// TestReportRows checks the rows of reports over the dashboard's tickets
// (see dashboardFixture): A network/high 6h met rated 5, B network/critical
// 30h breached rated 2, C voice/low and D general/medium open.
func TestReportRows(t *testing.T) {
	f := reportFixture(t)
	all := []string{"resolution_time", "sla_compliance", "customer_satisfaction", "escalation_rate", "first_contact_resolution"}
	period := support.ReportRequest{Start: "2026-11-20", End: "2026-11-24", Metrics: all}
	tests := []struct {
		name string
		p    *models.Principal
		in   func(r support.ReportRequest) support.ReportRequest
		rows [][]any
	}{
		{
			name: "by category", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest { r.Grouping = []string{"category"}; return r },
			rows: [][]any{
				{"general", int64(1), int64(0), nil, int64(0), nil, int64(0), nil, int64(0), 0.0, int64(0), nil},
				{"network", int64(2), int64(2), 18.0, int64(2), 50.0, int64(2), 3.5, int64(0), 0.0, int64(1), 50.0},
				{"voice", int64(1), int64(0), nil, int64(0), nil, int64(0), nil, int64(1), 100.0, int64(0), nil},
			},
		},
		{
			name: "totals without grouping", p: f.customer,
			in:   func(r support.ReportRequest) support.ReportRequest { return r },
			rows: [][]any{{int64(4), int64(2), 18.0, int64(2), 50.0, int64(2), 3.5, int64(1), 25.0, int64(1), 50.0}},
		},
		{
			name: "by week in UTC: A, B and C (Sunday) in W47, D in W48", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.Grouping, r.Metrics = []string{"week"}, []string{"resolution_time"}
				return r
			},
			rows: [][]any{{"2026-W47", int64(3), int64(2), 18.0}, {"2026-W48", int64(1), int64(0), nil}},
		},
		{
			name: "by week in Tokyo: C's Sunday 23:30 UTC is Monday there", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.Grouping, r.Metrics, r.Timezone = []string{"week"}, []string{"resolution_time"}, "Asia/Tokyo"
				return r
			},
			rows: [][]any{{"2026-W47", int64(2), int64(2), 18.0}, {"2026-W48", int64(2), int64(0), nil}},
		},
		{
			name: "by priority and agent, filtered to network", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.Grouping, r.Metrics, r.Categories = []string{"priority", "agent"}, []string{"customer_satisfaction"}, []string{"network"}
				return r
			},
			rows: [][]any{{"critical", "unassigned", int64(1), int64(1), 2.0}, {"high", "unassigned", int64(1), int64(1), 5.0}},
		},
		{
			name: "staff see every organization; sandbox tickets never", p: f.staff,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.Grouping, r.Metrics = []string{"category"}, []string{"escalation_rate"}
				return r
			},
			rows: [][]any{{"general", int64(1), int64(0), 0.0}, {"network", int64(3), int64(0), 0.0}, {"voice", int64(1), int64(1), 100.0}},
		},
		{
			name: "an empty period answers one row of zeros", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.Start, r.End, r.Metrics = "2025-01-01", "2025-01-02", []string{"sla_compliance"}
				return r
			},
			rows: [][]any{{int64(0), int64(0), nil}},
		},
		{
			name: "ticket export: one row per ticket, oldest first", p: f.customer,
			in: func(r support.ReportRequest) support.ReportRequest {
				r.ReportType, r.Metrics = support.ReportTicketExport, []string{"resolution_time", "sla_compliance", "first_contact_resolution"}
				return r
			},
			rows: nil, // checked below
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := mustSpec(t, tt.p, tt.in(period), f.clock)
			var c rowCollector
			st, err := f.s.RunReport(f.ctx, spec, &c)
			if err != nil {
				t.Fatal(err)
			}
			if st.Rows != int64(len(c.rows)) {
				t.Fatalf("stats rows = %d, wrote %d", st.Rows, len(c.rows))
			}
			if tt.rows == nil {
				if len(c.rows) != 4 {
					t.Fatalf("export rows = %d, want 4: %v", len(c.rows), c.rows)
				}
				cols := support.ReportColumns(spec)
				if len(cols) != len(c.rows[0]) {
					t.Fatalf("%d columns, %d values", len(cols), len(c.rows[0]))
				}
				// A: 6h met, one reply: first contact; B: 30h breached, two
				// replies; C (escalated) and D running.
				want := [][]any{
					{"network", "high", "resolved", 6.0, "met", int64(1), true},
					{"network", "critical", "resolved", 30.0, "breached", int64(2), false},
					{"voice", "low", "escalated", nil, "running", int64(0), false},
					{"general", "medium", "open", nil, "running", int64(0), false},
				}
				for i, r := range c.rows {
					got := []any{r[3], r[4], r[5], r[9], r[10], r[11], r[12]}
					if !reflect.DeepEqual(got, want[i]) {
						t.Errorf("row %d = %v, want %v", i, got, want[i])
					}
				}
				if st.Tickets != 4 || st.Newest == nil {
					t.Fatalf("stats = %+v", st)
				}
				return
			}
			if !reflect.DeepEqual(c.rows, tt.rows) {
				t.Fatalf("rows:\n got %v\nwant %v", c.rows, tt.rows)
			}
		})
	}
}

// reportFixture is dashboardFixture with replies and an escalation: A
// has one customer-visible agent reply (and an internal note), B two
// replies; C is escalated to level 2.
func reportFixture(t *testing.T) *slaFixture {
	f := dashboardFixture(t)
	var tickets []support.Ticket
	if err := f.core.In(f.ctx, f.customer.OwnScope()).Order("created_at").Find(&tickets).Error; err != nil {
		t.Fatal(err)
	}
	a, b, c := tickets[0], tickets[1], tickets[2]
	comment := func(id, visibility string) {
		t.Helper()
		if _, err := f.s.AddComment(f.ctx, f.staff, id, support.CommentInput{Content: "we are on it", Visibility: visibility}); err != nil {
			t.Fatal(err)
		}
	}
	comment(a.ID, "customer")
	comment(a.ID, "internal")
	comment(b.ID, "customer")
	comment(b.ID, "customer")
	if _, err := f.s.EscalateTicket(f.ctx, f.staff, c.ID, support.EscalateInput{Level: 2, Reason: "customer impact"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID, b.ID} {
		tk, err := f.s.GetTicket(f.ctx, f.staff, id)
		if err != nil || tk.Status != support.StatusResolved {
			t.Fatalf("ticket %s: %+v %v", id, tk, err)
		}
	}
	return f
}

func TestValidateReport(t *testing.T) {
	p := &models.Principal{ID: "ak_1", OrganizationID: "org_1", Environment: models.EnvLive, Role: models.RoleCustomer}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	bad := []struct {
		name  string
		in    support.ReportRequest
		field string
	}{
		{"unknown type", support.ReportRequest{ReportType: "everything"}, "report_type"},
		{"unknown metric", support.ReportRequest{Metrics: []string{"happiness"}}, "parameters.metrics"},
		{"unknown grouping", support.ReportRequest{Grouping: []string{"planet"}}, "parameters.grouping"},
		{"grouped export", support.ReportRequest{ReportType: support.ReportTicketExport, Grouping: []string{"week"}}, "parameters.grouping"},
		{"format", support.ReportRequest{Format: "xlsx"}, "parameters.format"},
		{"start only", support.ReportRequest{Start: "2026-01-01"}, "parameters.date_range.end"},
		{"end before start", support.ReportRequest{Start: "2026-02-01", End: "2026-01-01"}, "parameters.date_range.end"},
		{"over a year", support.ReportRequest{Start: "2024-01-01", End: "2026-01-01"}, "parameters.date_range.end"},
		{"zone", support.ReportRequest{Timezone: "Mars/Olympus"}, "parameters.timezone"},
		{"priority", support.ReportRequest{Priorities: []string{"urgent"}}, "parameters.filters.priorities"},
		{"email without address", support.ReportRequest{DeliveryMethod: "email"}, "delivery.notification_email"},
		{"bad address", support.ReportRequest{DeliveryMethod: "email", NotificationEmail: "not an address"}, "delivery.notification_email"},
		{"delivery", support.ReportRequest{DeliveryMethod: "fax"}, "delivery.method"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := support.ValidateReport(p, tt.in, now)
			e := models.AsError(err)
			if e.Code != models.CodeValidation || !strings.Contains(strings.Join(fieldsOf(e), ","), tt.field) {
				t.Fatalf("err = %v (%v), want a validation error on %s", err, e.Details, tt.field)
			}
		})
	}
	spec, err := support.ValidateReport(p, support.ReportRequest{Metrics: []string{"SLA_compliance", "sla_compliance"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if spec.ReportType != support.ReportDetailedAnalytics || spec.Format != "json" || spec.DeliveryMethod != "download" ||
		!reflect.DeepEqual(spec.Metrics, []string{"sla_compliance"}) || !spec.End.Equal(now) || !spec.Start.Equal(now.AddDate(0, 0, -30)) ||
		spec.OrganizationID != "org_1" || spec.AllOrganizations {
		t.Fatalf("defaults = %+v", spec)
	}
}

// fieldsOf lists the fields of a validation error.
func fieldsOf(e *models.Error) []string {
	var out []string
	raw, _ := json.Marshal(e.Details)
	var d struct {
		Fields []struct{ Field string } `json:"fields"`
	}
	_ = json.Unmarshal(raw, &d)
	for _, f := range d.Fields {
		out = append(out, f.Field)
	}
	if len(out) == 0 {
		out = append(out, string(raw))
	}
	return out
}

// TestReportFiles checks the CSV and JSON files row by row, the result
// recorded, the download link (signature and expiry) and report.completed.
func TestReportFiles(t *testing.T) {
	f := dashboardFixture(t)
	blobs := testenv.Blobs(t)
	s := support.NewStore(f.core, support.WithBlobs(blobs))
	ops := operations.NewStore(f.core)
	for _, format := range []string{"csv", "json"} {
		t.Run(format, func(t *testing.T) {
			spec := mustSpec(t, f.customer, support.ReportRequest{Start: "2026-11-20", End: "2026-11-24", Grouping: []string{"category"},
				Metrics: []string{"resolution_time", "customer_satisfaction"}, Format: format}, f.clock)
			id := models.NewID(models.PrefixReport)
			if err := ops.CreateOperation(f.ctx, f.customer.OwnScope(), support.NewReportOperation(id, spec)); err != nil {
				t.Fatal(err)
			}
			first, err := s.GenerateReport(f.ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			// A retry writes the same file again.
			res, err := s.GenerateReport(f.ctx, id)
			if err != nil || res.SizeBytes != first.SizeBytes || res.BlobKey != first.BlobKey {
				t.Fatalf("retry: %+v, %v (first %+v)", res, err, first)
			}
			if res.RowCount != 3 || res.Tickets != 4 || res.DataFreshness == nil || res.SizeBytes == 0 {
				t.Fatalf("result = %+v", res)
			}
			expires := f.clock.Add(time.Hour)
			link, err := s.ReportLink(f.ctx, "http://api.test", id, expires)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CompleteReport(f.ctx, id, res, link, expires); err != nil {
				t.Fatal(err)
			}
			if err := s.CompleteReport(f.ctx, id, res, link, expires); err != nil {
				t.Fatalf("completing again: %v", err)
			}
			q := linkQuery(t, link)
			_, _, r, err := s.OpenReportDownload(f.ctx, id, q["expires"], q["signature"], f.clock)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(r)
			_ = r.Close()
			if int64(buf.Len()) != res.SizeBytes {
				t.Fatalf("file is %d bytes, result says %d", buf.Len(), res.SizeBytes)
			}
			if format == "csv" {
				recs, err := csv.NewReader(&buf).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				want := [][]string{
					{"category", "tickets", "resolved", "avg_resolution_hours", "ratings", "avg_satisfaction"},
					{"general", "1", "0", "", "0", ""},
					{"network", "2", "2", "18", "2", "3.5"},
					{"voice", "1", "0", "", "0", ""},
				}
				if !reflect.DeepEqual(recs, want) {
					t.Fatalf("csv:\n got %v\nwant %v", recs, want)
				}
			} else {
				var doc struct {
					ReportID      string           `json:"report_id"`
					Columns       []map[string]any `json:"columns"`
					Rows          []map[string]any `json:"rows"`
					RowCount      int              `json:"row_count"`
					DataFreshness string           `json:"data_freshness"`
				}
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatalf("json: %v\n%s", err, buf.String())
				}
				want := []map[string]any{
					{"category": "general", "tickets": 1.0, "resolved": 0.0, "avg_resolution_hours": nil, "ratings": 0.0, "avg_satisfaction": nil},
					{"category": "network", "tickets": 2.0, "resolved": 2.0, "avg_resolution_hours": 18.0, "ratings": 2.0, "avg_satisfaction": 3.5},
					{"category": "voice", "tickets": 1.0, "resolved": 0.0, "avg_resolution_hours": nil, "ratings": 0.0, "avg_satisfaction": nil},
				}
				if doc.ReportID != id || doc.RowCount != 3 || len(doc.Columns) != 6 || !reflect.DeepEqual(doc.Rows, want) || doc.DataFreshness == "" {
					t.Fatalf("json = %+v", doc)
				}
			}
			// The link is bound to its report and expiry, and expires.
			if _, _, _, err := s.OpenReportDownload(f.ctx, id, q["expires"], q["signature"], expires.Add(time.Second)); models.ErrorCode(err) != models.CodeTokenExpired {
				t.Fatalf("expired link: %v", err)
			}
			later := strconv.FormatInt(expires.Unix()+3600, 10)
			if _, _, _, err := s.OpenReportDownload(f.ctx, id, later, q["signature"], f.clock); models.ErrorCode(err) != models.CodeInvalidSignature {
				t.Fatalf("extended link: %v", err)
			}
			if _, _, _, err := s.OpenReportDownload(f.ctx, "rpt_other", q["expires"], q["signature"], f.clock); models.ErrorCode(err) != models.CodeInvalidSignature {
				t.Fatalf("link of another report: %v", err)
			}
			op, err := s.GetReport(f.ctx, f.customer, id)
			if err != nil || support.ReportStatus(op) != support.ReportCompleted {
				t.Fatalf("report = %+v, %v", op, err)
			}
			if _, err := s.GetReport(f.ctx, f.staff, id); models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("another organization's report: %v", err)
			}
			var events int64
			f.core.DB.Table("events").Where("type = ? AND resource_id = ?", support.EventReportCompleted, id).Count(&events)
			if events != 1 {
				t.Fatalf("%d report.completed events, want 1", events)
			}
		})
	}
}

// linkQuery returns a link's query parameters.
func linkQuery(t *testing.T, link string) map[string]string {
	t.Helper()
	i := strings.Index(link, "?")
	if i < 0 {
		t.Fatalf("link without query: %s", link)
	}
	out := map[string]string{}
	for _, kv := range strings.Split(link[i+1:], "&") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}
