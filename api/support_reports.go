package api

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/workflows"
)

// ReportDateRange is a report's period.
type ReportDateRange struct {
	Start string `json:"start,omitempty" maxLength:"40" example:"2026-10-01" doc:"RFC 3339 timestamp, or a date (midnight in timezone); with end. Both absent: the last 30 days"`
	End   string `json:"end,omitempty" maxLength:"40" example:"2026-11-01" doc:"Exclusive; at most 366 days after start"`
}

// ReportFilters select a report's tickets.
type ReportFilters struct {
	CustomerIDs []string `json:"customer_ids,omitempty" maxItems:"100" doc:"Only tickets of these customers"`
	Categories  []string `json:"categories,omitempty" maxItems:"100" example:"[\"network\"]" doc:"Only tickets of these categories"`
	Priorities  []string `json:"priorities,omitempty" maxItems:"4" example:"[\"high\",\"critical\"]" doc:"Only tickets of these priorities (low, medium, high, critical)"`
}

// ReportParametersBody are a report's parameters.
type ReportParametersBody struct {
	DateRange *ReportDateRange `json:"date_range,omitempty"`
	Timezone  string           `json:"timezone,omitempty" maxLength:"64" example:"Europe/London" doc:"IANA zone the dates and ISO weeks are taken in (default UTC)"`
	Filters   *ReportFilters   `json:"filters,omitempty"`
	Metrics   []string         `json:"metrics,omitempty" maxItems:"5" uniqueItems:"true" example:"[\"resolution_time\",\"sla_compliance\"]" doc:"Of resolution_time, sla_compliance, customer_satisfaction, escalation_rate, first_contact_resolution (default all)"`
	Grouping  []string         `json:"grouping,omitempty" maxItems:"5" uniqueItems:"true" example:"[\"category\",\"week\"]" doc:"detailed_analytics only: of category, week, priority, agent, customer (none: one row of totals)"`
	Format    string           `json:"format,omitempty" enum:"json,csv" default:"json"`
}

// ReportDeliveryBody says how a report is handed over.
type ReportDeliveryBody struct {
	Method            string `json:"method,omitempty" enum:"download,email" default:"download" doc:"download: follow the report until download_url is set; email: the link is also mailed to notification_email"`
	NotificationEmail string `json:"notification_email,omitempty" maxLength:"320" example:"noc@acme.example" doc:"Required with method email: a bare e-mail address"`
}

// ReportRequestBody is the body of POST /v1/support/reports/generate.
type ReportRequestBody struct {
	ReportType string                `json:"report_type,omitempty" enum:"detailed_analytics,ticket_export" default:"detailed_analytics" doc:"detailed_analytics: the metrics per group; ticket_export: one row per ticket"`
	Parameters *ReportParametersBody `json:"parameters,omitempty"`
	Delivery   *ReportDeliveryBody   `json:"delivery,omitempty"`
}

func (b *ReportRequestBody) request() support.ReportRequest {
	r := support.ReportRequest{ReportType: b.ReportType}
	if p := b.Parameters; p != nil {
		r.Timezone, r.Metrics, r.Grouping, r.Format = p.Timezone, p.Metrics, p.Grouping, p.Format
		if p.DateRange != nil {
			r.Start, r.End = p.DateRange.Start, p.DateRange.End
		}
		if p.Filters != nil {
			r.CustomerIDs, r.Categories, r.Priorities = p.Filters.CustomerIDs, p.Filters.Categories, p.Filters.Priorities
		}
	}
	if b.Delivery != nil {
		r.DeliveryMethod, r.NotificationEmail = b.Delivery.Method, b.Delivery.NotificationEmail
	}
	return r
}

// ReportColumnItem is one column of a report's file.
type ReportColumnItem struct {
	Name string `json:"name" example:"avg_resolution_hours"`
	Type string `json:"type" enum:"string,integer,number,boolean,timestamp"`
}

// ReportDeliveryItem is how a report is handed over.
type ReportDeliveryItem struct {
	Method            string `json:"method" enum:"download,email"`
	NotificationEmail string `json:"notification_email,omitempty"`
}

// ReportItem is a support report run (its id is the operation's request_id).
type ReportItem struct {
	ID                  string              `json:"id" example:"rpt_3fK9aZ"`
	RequestID           string              `json:"request_id" example:"rpt_3fK9aZ" doc:"The operation (and Temporal workflow) id: the same as id"`
	Status              string              `json:"status" enum:"generating,completed,failed,cancelled"`
	StatusURL           string              `json:"status_url" doc:"The operation document of the run (steps query and deliver)"`
	ReportType          string              `json:"report_type" enum:"detailed_analytics,ticket_export"`
	Format              string              `json:"format" enum:"json,csv"`
	Delivery            ReportDeliveryItem  `json:"delivery"`
	Parameters          map[string]any      `json:"parameters" doc:"The parameters with every default filled in"`
	EstimatedCompletion *string             `json:"estimated_completion" doc:"While generating: when it should be done"`
	DownloadURL         *string             `json:"download_url" doc:"Once completed: a signed link that works without a credential until download_url_expires_at; GET the report again for a fresh one"`
	DownloadExpiresAt   *string             `json:"download_url_expires_at"`
	RowCount            *int64              `json:"row_count"`
	Columns             []ReportColumnItem  `json:"columns" doc:"Once completed: the file's columns, in order"`
	SizeBytes           *int64              `json:"size_bytes"`
	DataFreshness       *string             `json:"data_freshness" doc:"The last change of the newest ticket included (null when none)"`
	Error               *OperationErrorItem `json:"error"`
	CreatedAt           string              `json:"created_at"`
	CompletedAt         *string             `json:"completed_at"`
}

// ReportOutput wraps one report.
type ReportOutput struct {
	Status   int
	Location string `header:"Location" doc:"The report's operation (status_url), on 202"`
	Body     struct {
		Envelope
		Report ReportItem `json:"report"`
	}
}

// ReportsOutput lists reports.
type ReportsOutput struct {
	Body struct {
		Envelope
		Reports    []ReportItem `json:"reports"`
		Pagination Pagination   `json:"pagination"`
	}
}

// reportPath names one report.
type reportPath struct {
	ReportID string `path:"report_id" maxLength:"64" doc:"The report (rpt_...)"`
}

// reportItem renders a report run; a completed one gets a fresh signed
// link valid for REPORT_LINK_TTL, made by link (support.Store.ReportLinks).
func (s *Server) reportItem(op *operations.Operation, estimate time.Duration, link func(id string, expires time.Time) string) (ReportItem, error) {
	spec, err := support.SpecOf(op)
	if err != nil {
		return ReportItem{}, err
	}
	it := ReportItem{ID: op.ID, RequestID: op.ID, Status: support.ReportStatus(op), StatusURL: s.statusURL(op.ID), ReportType: spec.ReportType,
		Format: spec.Format, Delivery: ReportDeliveryItem{Method: spec.DeliveryMethod, NotificationEmail: spec.NotificationEmail},
		Parameters: support.ReportParameters(spec), Error: operationError(op.Error), CreatedAt: models.Timestamp(op.CreatedAt),
		Columns: []ReportColumnItem{}}
	if it.Status == support.ReportGenerating {
		if estimate == 0 {
			estimate = 5 * time.Second
		}
		est := models.Timestamp(op.CreatedAt.Add(estimate))
		it.EstimatedCompletion = &est
	}
	if res := support.ResultOf(op); res != nil && op.Status == operations.OpCompleted {
		expires := s.now().Add(s.reportLinkTTL()).Truncate(time.Second)
		url, exp := link(op.ID, expires), models.Timestamp(expires)
		it.DownloadURL, it.DownloadExpiresAt, it.RowCount, it.SizeBytes = &url, &exp, &res.RowCount, &res.SizeBytes
		for _, c := range res.Columns {
			it.Columns = append(it.Columns, ReportColumnItem{Name: c.Name, Type: c.Type})
		}
		it.DataFreshness = optTimestamp(res.DataFreshness)
		it.CompletedAt = optTimestamp(op.FinishedAt)
	}
	return it, nil
}

// reportLinkTTL is REPORT_LINK_TTL (default support.DefaultReportLinkTTL).
func (s *Server) reportLinkTTL() time.Duration {
	if s.cfg.ReportLinkTTL > 0 {
		return s.cfg.ReportLinkTTL
	}
	return support.DefaultReportLinkTTL
}

func (s *Server) reportOutput(ctx context.Context, op *operations.Operation, status int, estimate time.Duration) (*ReportOutput, error) {
	link, err := s.support.ReportLinks(ctx, s.cfg.PublicBaseURL)
	if err != nil {
		return nil, err
	}
	it, err := s.reportItem(op, estimate, link)
	if err != nil {
		return nil, err
	}
	out := &ReportOutput{Status: status}
	if status == http.StatusAccepted {
		out.Location = it.StatusURL
	}
	out.Body.Report = it
	return out, nil
}

// ReportDownloadOutput is a report's file, streamed.
type ReportDownloadOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	CacheControl       string `header:"Cache-Control"`
	NoSniff            string `header:"X-Content-Type-Options"`
	Body               func(ctx huma.Context)
}

// reportDownload streams a report's file r (size bytes, -1 unknown) as
// filename; the answer closes r.
func (s *Server) reportDownload(ctx context.Context, filename, contentType string, size int64, r io.ReadCloser) *ReportDownloadOutput {
	return &ReportDownloadOutput{ContentType: contentType, CacheControl: "private, no-store", NoSniff: "nosniff",
		ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": filename}),
		Body: func(hctx huma.Context) {
			defer func() { _ = r.Close() }()
			if size >= 0 {
				hctx.SetHeader("Content-Length", strconv.FormatInt(size, 10))
			}
			if _, err := io.Copy(hctx.BodyWriter(), r); err != nil {
				s.log.WarnContext(ctx, "report download interrupted", "file", filename, "error", err)
			}
		}}
}

// registerSupportReports registers report runs (docs/support.md, Report runs).
func (s *Server) registerSupportReports(tags []string) {
	read := access{permission: support.PermissionRead}
	register(s, huma.Operation{OperationID: "generate-support-report", Method: http.MethodPost, Path: "/support/reports/generate", Summary: "Generate a support report",
		Description: "Starts a report run (an operation `rpt_...` on the background task queue) over the tickets the caller sees: their organization, " +
			"or every organization for provider staff, created in the date range. Answers 202 with the report (status generating, " +
			"estimated_completion, download_url null); follow it at GET /v1/support/reports/{report_id} or its operation. When completed, download_url " +
			"is a signed link to the JSON or CSV file; report.completed (or report.failed) is emitted; with delivery.method email the link is mailed. See docs/support.md.",
		Tags: tags, DefaultStatus: http.StatusAccepted},
		read, func(ctx context.Context, in *struct{ Body ReportRequestBody }) (*ReportOutput, error) {
			p := principal(ctx)
			spec, err := support.ValidateReport(p, in.Body.request(), s.now())
			if err != nil {
				return nil, err
			}
			estimate, err := s.support.EstimateReport(ctx, spec)
			if err != nil {
				return nil, err
			}
			id := models.NewID(models.PrefixReport)
			op := support.NewReportOperation(id, spec)
			ops := operations.NewStore(s.store)
			scope := p.OwnScope()
			if _, err := s.startOperation(ctx, operationStart{scope: scope, op: op, workflow: workflows.SupportReportWorkflow,
				input: workflows.ReportInput{ReportID: id}, serviceID: id, priority: workflows.Background,
				store:   func(ctx context.Context) error { return ops.CreateOperation(ctx, scope, op) },
				abandon: func(ctx context.Context) error { return ops.DeleteOperation(ctx, scope, id) }}); err != nil {
				return nil, err
			}
			return s.reportOutput(ctx, op, http.StatusAccepted, estimate)
		})
	register(s, huma.Operation{OperationID: "list-support-reports", Method: http.MethodGet, Path: "/support/reports", Summary: "List support reports",
		Description: "The report runs of the caller's organization and environment, newest first; sort by created_at or completed_at " +
			"(the completed runs by their completed_at, the others after them in either direction), ties by id. Another sort field is 400 VALIDATION_ERROR.", Tags: tags},
		read, func(ctx context.Context, in *struct {
			ListParams
			Status string `query:"status" enum:"generating,completed,failed,cancelled" doc:"Only reports in this status"`
		}) (*ReportsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			ops, total, err := s.support.ListReports(ctx, principal(ctx), in.Status, pr)
			if err != nil {
				return nil, err
			}
			link, err := s.support.ReportLinks(ctx, s.cfg.PublicBaseURL)
			if err != nil {
				return nil, err
			}
			out := &ReportsOutput{}
			out.Body.Reports = make([]ReportItem, 0, len(ops))
			for i := range ops {
				it, err := s.reportItem(&ops[i], 0, link)
				if err != nil {
					return nil, err
				}
				out.Body.Reports = append(out.Body.Reports, it)
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-report", Method: http.MethodGet, Path: "/support/reports/{report_id}", Summary: "Get a support report",
		Description: "The report run; once completed, with a fresh signed download_url. Another organization's report is 404.", Tags: tags},
		read, func(ctx context.Context, in *reportPath) (*ReportOutput, error) {
			op, err := s.support.GetReport(ctx, principal(ctx), in.ReportID)
			if err != nil {
				return nil, err
			}
			return s.reportOutput(ctx, op, http.StatusOK, 0)
		})
	register(s, huma.Operation{OperationID: "cancel-support-report", Method: http.MethodPost, Path: "/support/reports/{report_id}/cancel", Summary: "Cancel a support report",
		Description: "Stops a generating report: it ends cancelled and no file is offered. 202 with the report (follow it); 200 when it is already cancelled; " +
			"409 INVALID_STATE_TRANSITION when it has already completed or failed.", Tags: tags, DefaultStatus: http.StatusAccepted,
		Responses: alreadyCancelled("ReportOutputBody", "The report was already cancelled: nothing changed")},
		read, func(ctx context.Context, in *reportPath) (*ReportOutput, error) {
			p := principal(ctx)
			op, err := s.support.GetReport(ctx, p, in.ReportID)
			if err != nil {
				return nil, err
			}
			if err := operations.CheckCancellable(p, op); err != nil {
				return nil, err
			}
			if op.Status == operations.OpCancelled {
				return s.reportOutput(ctx, op, http.StatusOK, 0)
			}
			if err := s.cancelWorkflow(ctx, op.ID); err != nil {
				return nil, err
			}
			return s.reportOutput(ctx, op, http.StatusAccepted, 0)
		})
	register(s, huma.Operation{OperationID: "download-support-report", Method: http.MethodGet, Path: "/support/reports/{report_id}/download", Summary: "Download a support report",
		Description: "The report's file (application/json or text/csv), streamed. Needs no credential: the link's expires and signature, " +
			"as given in download_url, are the authorisation. A link that was not issued by the platform is 401 INVALID_SIGNATURE; an expired one " +
			"401 TOKEN_EXPIRED (GET the report for a fresh link).",
		Tags: tags, Responses: map[string]*huma.Response{"200": {Description: "The file", Content: map[string]*huma.MediaType{"application/json": {}, "text/csv": {}}}}},
		access{public: true}, func(ctx context.Context, in *struct {
			ReportID  string `path:"report_id" maxLength:"64" doc:"The report (rpt_...)"`
			Expires   string `query:"expires" required:"true" maxLength:"20" doc:"Unix seconds, from download_url"`
			Signature string `query:"signature" required:"true" maxLength:"128" doc:"From download_url"`
		}) (*ReportDownloadOutput, error) {
			op, spec, r, err := s.support.OpenReportDownload(ctx, in.ReportID, in.Expires, in.Signature, s.now())
			if err != nil {
				return nil, err
			}
			var size int64 = -1
			if res := support.ResultOf(op); res != nil {
				size = res.SizeBytes
			}
			return s.reportDownload(ctx, op.ID+"."+spec.Extension(), spec.ContentType(), size, r), nil
		})
}

// alreadyCancelled documents the 200 of a cancel operation whose default
// answer is 202: the run was already cancelled and is answered as it is,
// with the same body (schema, the component named so).
func alreadyCancelled(schema, description string) map[string]*huma.Response {
	return map[string]*huma.Response{"200": {Description: description,
		Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/" + schema}}}}}
}
