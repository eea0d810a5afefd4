package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/workflows"
)

// AnalyticsSortBody is one sort key of a report query.
type AnalyticsSortBody struct {
	Field     string `json:"field" required:"true" maxLength:"64" doc:"One of the query's metrics or dimensions" example:"sum_total"`
	Direction string `json:"direction,omitempty" enum:"asc,desc" default:"asc"`
}

// AnalyticsQueryBody is a report builder query: the dataset, what to sum
// and how to cut it. Each dataset's allowed names are in its OpenAPI
// component AnalyticsReportDataset_<dataset> and at GET /v1/analytics/datasets.
type AnalyticsQueryBody struct {
	Dataset    string              `json:"dataset" required:"true" enum:"services,telemetry,usage,invoices,payments,operations,tickets,sla" doc:"What the report reads" example:"invoices"`
	Metrics    []string            `json:"metrics" required:"true" minItems:"1" maxItems:"20" doc:"Aggregates from the dataset's metric allow-list (component AnalyticsReportDataset_<dataset>)" example:"[\"count\",\"sum_total\"]"`
	Dimensions []string            `json:"dimensions,omitempty" maxItems:"8" doc:"Group by these, from the dataset's dimension allow-list; hour, day, week and month cut the dataset's time field in timezone; none: one row of totals" example:"[\"month\",\"status\"]"`
	Filter     string              `json:"filter,omitempty" maxLength:"2000" doc:"A filter expression over the dataset's filter fields (docs/filtering.md)" example:"status in (paid, overdue) and total >= 100"`
	Sort       []AnalyticsSortBody `json:"sort,omitempty" maxItems:"5" doc:"Default: the dimensions in order"`
	Limit      int                 `json:"limit,omitempty" minimum:"1" maximum:"100000" doc:"Rows at most; default 10000" example:"1000"`
	Period     string              `json:"period,omitempty" enum:"last_24_hours,last_7_days,last_30_days,current_month,last_month,current_year" doc:"The period read, as of each run; default last_30_days. Not with from/to" example:"last_month"`
	From       string              `json:"from,omitempty" maxLength:"40" doc:"Instead of period, with to: RFC 3339 or a date (midnight in timezone); inclusive" example:"2026-10-01"`
	To         string              `json:"to,omitempty" maxLength:"40" doc:"Exclusive" example:"2026-11-01"`
	Timezone   string              `json:"timezone,omitempty" maxLength:"64" doc:"IANA time zone of dates and time dimensions; default UTC" example:"America/Chicago"`
}

// query converts the body.
func (b *AnalyticsQueryBody) query() builder.Definition {
	q := builder.Definition{Dataset: b.Dataset, Metrics: b.Metrics, Dimensions: b.Dimensions, Filter: b.Filter, Limit: b.Limit,
		Period: b.Period, From: b.From, To: b.To, Timezone: b.Timezone}
	for _, s := range b.Sort {
		q.Sort = append(q.Sort, builder.Sort{Field: s.Field, Direction: s.Direction})
	}
	return q
}

// AnalyticsDeliveryBody says how a finished report is delivered.
type AnalyticsDeliveryBody struct {
	Method            string `json:"method,omitempty" enum:"download,email,webhook" default:"download" doc:"download: download_url only; email: the link is also mailed to notification_email; webhook: the link is also in analytics_report.completed"`
	NotificationEmail string `json:"notification_email,omitempty" maxLength:"254" format:"email" doc:"Required with email"`
}

// AnalyticsReportBody is the body of POST /v1/analytics/reports.
type AnalyticsReportBody struct {
	AnalyticsQueryBody
	Format         string                `json:"format,omitempty" enum:"json,csv" default:"json"`
	Delivery       AnalyticsDeliveryBody `json:"delivery,omitempty"`
	OrganizationID string                `json:"organization_id,omitempty" maxLength:"40" doc:"Provider staff only: read this organization (default every organization)"`
}

// request converts the body.
func (b *AnalyticsReportBody) request() reports.Request {
	return reports.Request{Query: b.query(), Format: b.Format, DeliveryMethod: b.Delivery.Method, NotificationEmail: b.Delivery.NotificationEmail,
		OrganizationID: b.OrganizationID}
}

// AnalyticsQueryItem is a run's query with every default filled in.
type AnalyticsQueryItem struct {
	Dataset    string              `json:"dataset" example:"invoices"`
	Metrics    []string            `json:"metrics"`
	Dimensions []string            `json:"dimensions"`
	Filter     string              `json:"filter"`
	Sort       []AnalyticsSortBody `json:"sort"`
	Limit      int                 `json:"limit" example:"10000"`
	Period     string              `json:"period,omitempty" doc:"The named period, when the query has one"`
	Timezone   string              `json:"timezone" example:"UTC"`
}

// analyticsQueryItem renders a query.
func analyticsQueryItem(q builder.Definition) AnalyticsQueryItem {
	it := AnalyticsQueryItem{Dataset: q.Dataset, Metrics: q.Metrics, Dimensions: q.Dimensions, Filter: q.Filter, Limit: q.Limit,
		Period: q.Period, Timezone: q.Timezone, Sort: []AnalyticsSortBody{}}
	if it.Metrics == nil {
		it.Metrics = []string{}
	}
	if it.Dimensions == nil {
		it.Dimensions = []string{}
	}
	for _, s := range q.Sort {
		it.Sort = append(it.Sort, AnalyticsSortBody{Field: s.Field, Direction: s.Direction})
	}
	return it
}

// AnalyticsReportItem is an analytics report run (its id is the operation's request_id).
type AnalyticsReportItem struct {
	ID                  string                `json:"id" example:"rpt_3fK9aZ"`
	RequestID           string                `json:"request_id" doc:"The operation (and Temporal workflow) id: the same as id"`
	Status              string                `json:"status" enum:"generating,completed,failed,cancelled"`
	StatusURL           string                `json:"status_url" doc:"The run's operation document (steps query and deliver); polling it does not count in the exports rate-limit group"`
	DefinitionID        *string               `json:"definition_id" doc:"The saved definition run, if any"`
	Scheduled           bool                  `json:"scheduled" doc:"Started by the definition's schedule"`
	Query               AnalyticsQueryItem    `json:"query"`
	PeriodFrom          string                `json:"period_from" doc:"The period read, resolved when the run was asked for (inclusive)"`
	PeriodTo            string                `json:"period_to" doc:"Exclusive"`
	Format              string                `json:"format" enum:"json,csv"`
	Delivery            AnalyticsDeliveryBody `json:"delivery"`
	OrganizationID      *string               `json:"organization_id" doc:"The organization read; null: every organization (provider staff)"`
	EstimatedCompletion *string               `json:"estimated_completion" doc:"While generating"`
	DownloadURL         *string               `json:"download_url" doc:"Once completed: a signed link that works without a credential until download_url_expires_at; GET the report again for a fresh one"`
	DownloadExpiresAt   *string               `json:"download_url_expires_at"`
	RowCount            *int64                `json:"row_count"`
	Columns             []AnalyticsColumnItem `json:"columns" doc:"Once completed: the file's columns, in order (the dimensions, then the metrics)"`
	SizeBytes           *int64                `json:"size_bytes"`
	DataFreshness       *string               `json:"data_freshness" doc:"The newest time-field value read (null when no row)"`
	Error               *OperationErrorItem   `json:"error"`
	CreatedAt           string                `json:"created_at"`
	CompletedAt         *string               `json:"completed_at"`
}

// AnalyticsReportOutput wraps one run.
type AnalyticsReportOutput struct {
	Status   int
	Location string `header:"Location" doc:"The run's operation, on 202"`
	Body     struct {
		Envelope
		Report AnalyticsReportItem `json:"report"`
	}
}

// AnalyticsReportsOutput lists runs.
type AnalyticsReportsOutput struct {
	Body struct {
		Envelope
		Reports    []AnalyticsReportItem `json:"reports"`
		Pagination Pagination            `json:"pagination"`
	}
}

// analyticsReportItem renders a run; a completed one gets a fresh link from link.
func (s *Server) analyticsReportItem(op *operations.Operation, link func(id string, expires time.Time) string) (AnalyticsReportItem, error) {
	spec, err := reports.SpecOf(op)
	if err != nil {
		return AnalyticsReportItem{}, err
	}
	it := AnalyticsReportItem{ID: op.ID, RequestID: op.ID, Status: reports.Status(op), StatusURL: s.statusURL(op.ID), Scheduled: spec.Scheduled,
		Query: analyticsQueryItem(spec.Query), PeriodFrom: models.Timestamp(spec.From), PeriodTo: models.Timestamp(spec.To), Format: spec.Format,
		Delivery: AnalyticsDeliveryBody{Method: spec.DeliveryMethod, NotificationEmail: spec.NotificationEmail}, Error: operationError(op.Error),
		CreatedAt: models.Timestamp(op.CreatedAt), Columns: []AnalyticsColumnItem{}}
	if spec.DefinitionID != "" {
		it.DefinitionID = &spec.DefinitionID
	}
	if spec.ReadOrganizationID != "" {
		it.OrganizationID = &spec.ReadOrganizationID
	}
	if it.Status == reports.StatusGenerating {
		est := models.Timestamp(op.CreatedAt.Add(5 * time.Second))
		it.EstimatedCompletion = &est
	}
	if res := reports.ResultOf(op); res != nil && op.Status == operations.OpCompleted {
		expires := s.now().Add(s.reportLinkTTL()).Truncate(time.Second)
		url, exp := link(op.ID, expires), models.Timestamp(expires)
		it.DownloadURL, it.DownloadExpiresAt, it.RowCount, it.SizeBytes = &url, &exp, &res.RowCount, &res.SizeBytes
		for _, c := range res.Columns {
			it.Columns = append(it.Columns, AnalyticsColumnItem{Name: c.Name, Type: c.Type})
		}
		it.DataFreshness = optTimestamp(res.DataFreshness)
		it.CompletedAt = optTimestamp(op.FinishedAt)
	}
	return it, nil
}

// analyticsReportOutput answers one run.
func (s *Server) analyticsReportOutput(ctx context.Context, op *operations.Operation, status int) (*AnalyticsReportOutput, error) {
	link, err := s.analyticsReports.Links(ctx, s.cfg.PublicBaseURL)
	if err != nil {
		return nil, err
	}
	it, err := s.analyticsReportItem(op, link)
	if err != nil {
		return nil, err
	}
	out := &AnalyticsReportOutput{Status: status}
	if status == http.StatusAccepted {
		out.Location = it.StatusURL
	}
	out.Body.Report = it
	return out, nil
}

// startAnalyticsReport stores run op and starts its workflow on the
// background queue; a run of a definition is recorded as its last.
func (s *Server) startAnalyticsReport(ctx context.Context, op *operations.Operation) (*AnalyticsReportOutput, error) {
	scope := principal(ctx).OwnScope()
	ops := operations.NewStore(s.store)
	if _, err := s.startOperation(ctx, operationStart{scope: scope, op: op, workflow: workflows.AnalyticsReportWorkflow,
		input: workflows.ReportInput{ReportID: op.ID}, serviceID: op.ResourceID, priority: workflows.Background,
		store:   func(ctx context.Context) error { return ops.CreateOperation(ctx, scope, op) },
		abandon: func(ctx context.Context) error { return ops.DeleteOperation(ctx, scope, op.ID) }}); err != nil {
		return nil, err
	}
	// A run of a definition has the definition as its resource (reports.NewRunOperation).
	if defID := op.ResourceID; defID != op.ID {
		if err := s.analyticsReports.MarkRun(ctx, scope, defID, op.ID, op.CreatedAt); err != nil {
			s.log.WarnContext(ctx, "recording a definition's last run failed", "definition_id", defID, "error", err)
		}
	}
	return s.analyticsReportOutput(ctx, op, http.StatusAccepted)
}

// AnalyticsColumnItem is a column of a report file, or a metric,
// dimension or filter field of a dataset.
type AnalyticsColumnItem struct {
	Name        string `json:"name" example:"sum_total"`
	Type        string `json:"type" enum:"string,integer,number,money,timestamp,boolean" doc:"money: a decimal string in the major unit"`
	Description string `json:"description,omitempty"`
}

// DatasetItem describes one dataset of the report builder.
type DatasetItem struct {
	Name        string                `json:"name" example:"invoices"`
	Description string                `json:"description"`
	TimeField   string                `json:"time_field" doc:"The field the period and the time dimensions apply to" example:"issued_at"`
	Permission  string                `json:"permission" doc:"The permission reading it needs, on top of analytics:read" example:"billing:read"`
	Metrics     []AnalyticsColumnItem `json:"metrics"`
	Dimensions  []AnalyticsColumnItem `json:"dimensions"`
	Filters     []AnalyticsColumnItem `json:"filters" doc:"The fields filter expressions may name"`
	Schema      string                `json:"schema" doc:"The OpenAPI component of its queries" example:"AnalyticsReportDataset_invoices"`
}

// DatasetsOutput lists the datasets.
type DatasetsOutput struct {
	Body struct {
		Envelope
		Datasets []DatasetItem `json:"datasets"`
	}
}

// datasetSchemaName is the OpenAPI component of a dataset's queries.
func datasetSchemaName(name string) string { return "AnalyticsReportDataset_" + name }

// publishDatasetSchemas adds every dataset's query schema to the OpenAPI
// components: its metrics, dimensions and sort fields as enums, its filter
// fields listed.
func (s *Server) publishDatasetSchemas() {
	names := func(cols []builder.Column) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = c.Name
		}
		return out
	}
	for _, ds := range builder.Datasets() {
		metrics, dims := names(ds.Metrics), names(ds.Dimensions)
		filterDoc := "A filter expression (docs/filtering.md) over: "
		for i, f := range ds.Filters {
			if i > 0 {
				filterDoc += ", "
			}
			filterDoc += f.Name + " (" + f.Type + ")"
		}
		s.publishSchema(datasetSchemaName(ds.Name), map[string]any{
			"type": "object", "description": ds.Description + " Time field: " + ds.TimeField + ". Needs " + reports.DatasetPermission(ds.Name) + ".",
			"required": []any{"dataset", "metrics"},
			"properties": map[string]any{
				"dataset":    map[string]any{"type": "string", "enum": []any{ds.Name}},
				"metrics":    map[string]any{"type": "array", "minItems": 1, "maxItems": 20, "items": map[string]any{"type": "string", "enum": toAny(metrics)}},
				"dimensions": map[string]any{"type": "array", "maxItems": 8, "items": map[string]any{"type": "string", "enum": toAny(dims)}},
				"filter":     map[string]any{"type": "string", "maxLength": 2000, "description": filterDoc},
				"sort": map[string]any{"type": "array", "maxItems": 5, "items": map[string]any{"type": "object", "required": []any{"field"},
					"properties": map[string]any{"field": map[string]any{"type": "string", "enum": toAny(slices.Concat(dims, metrics))},
						"direction": map[string]any{"type": "string", "enum": []any{"asc", "desc"}}}}},
			},
		})
	}
}

// toAny converts a string slice for a JSON Schema enum.
func toAny(in []string) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

// registerAnalyticsReports registers the report builder's runs and datasets (docs/analytics.md).
func (s *Server) registerAnalyticsReports() {
	tags := []string{"Analytics reports"}
	read := access{permission: reports.PermissionRead}
	s.publishDatasetSchemas()
	register(s, huma.Operation{OperationID: "list-analytics-datasets", Method: http.MethodGet, Path: "/analytics/datasets", Summary: "List report builder datasets",
		Description: "Every dataset a report may read, with its allowed metrics, dimensions and filter fields and the permission it needs.", Tags: tags},
		read, func(ctx context.Context, _ *struct{}) (*DatasetsOutput, error) {
			cols := func(in []builder.Column) []AnalyticsColumnItem {
				return mapSlice(in, func(c *builder.Column) AnalyticsColumnItem {
					return AnalyticsColumnItem{Name: c.Name, Type: c.Type, Description: c.Description}
				})
			}
			out := &DatasetsOutput{}
			out.Body.Datasets = mapSlice(builder.Datasets(), func(d *builder.Dataset) DatasetItem {
				return DatasetItem{Name: d.Name, Description: d.Description, TimeField: d.TimeField, Permission: reports.DatasetPermission(d.Name),
					Metrics: cols(d.Metrics), Dimensions: cols(d.Dimensions), Filters: cols(d.Filters), Schema: datasetSchemaName(d.Name)}
			})
			return out, nil
		})
	register(s, huma.Operation{OperationID: "run-analytics-report", Method: http.MethodPost, Path: "/analytics/reports", Summary: "Run an analytics report",
		Description: "Runs a report builder query (an operation `rpt_...`, type analytics_report, on the background task queue): the dataset's " +
			"records of the caller's organization (provider staff: every organization, or organization_id's) and environment in the period, " +
			"filtered, grouped by the dimensions, aggregated into the metrics, sorted and limited. Answers 202 with the report (status generating); " +
			"when completed, download_url is a signed link to the JSON or CSV file and analytics_report.completed is emitted. Each dataset needs its " +
			"own permission too (GET /v1/analytics/datasets). To keep the query, save it as a definition (POST /v1/analytics/report-definitions). See docs/analytics.md.",
		Tags: tags, DefaultStatus: http.StatusAccepted},
		read, func(ctx context.Context, in *struct{ Body AnalyticsReportBody }) (*AnalyticsReportOutput, error) {
			op, err := s.analyticsReports.NewRun(ctx, principal(ctx), in.Body.request())
			if err != nil {
				return nil, err
			}
			return s.startAnalyticsReport(ctx, op)
		})
	register(s, huma.Operation{OperationID: "list-analytics-reports", Method: http.MethodGet, Path: "/analytics/reports", Summary: "List analytics reports",
		Description: "The report runs of the caller's organization and environment, newest first; sort by created_at or completed_at " +
			"(the completed runs by their completed_at, the others after them in either direction), ties by id. Another sort field is 400 VALIDATION_ERROR.", Tags: tags},
		read, func(ctx context.Context, in *struct {
			ListParams
			Status       string `query:"status" enum:"generating,completed,failed,cancelled" doc:"Only runs in this status"`
			DefinitionID string `query:"definition_id" maxLength:"40" doc:"Only runs of this saved definition"`
		}) (*AnalyticsReportsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			ops, total, err := s.analyticsReports.ListRuns(ctx, principal(ctx), in.Status, in.DefinitionID, pr)
			if err != nil {
				return nil, err
			}
			link, err := s.analyticsReports.Links(ctx, s.cfg.PublicBaseURL)
			if err != nil {
				return nil, err
			}
			out := &AnalyticsReportsOutput{}
			out.Body.Reports = make([]AnalyticsReportItem, 0, len(ops))
			for i := range ops {
				it, err := s.analyticsReportItem(&ops[i], link)
				if err != nil {
					return nil, err
				}
				out.Body.Reports = append(out.Body.Reports, it)
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-analytics-report", Method: http.MethodGet, Path: "/analytics/reports/{report_id}", Summary: "Get an analytics report",
		Description: "The run; once completed, with a fresh signed download_url. Another organization's run is 404.", Tags: tags},
		read, func(ctx context.Context, in *reportPath) (*AnalyticsReportOutput, error) {
			op, err := s.analyticsReports.GetRun(ctx, principal(ctx), in.ReportID)
			if err != nil {
				return nil, err
			}
			return s.analyticsReportOutput(ctx, op, http.StatusOK)
		})
	register(s, huma.Operation{OperationID: "cancel-analytics-report", Method: http.MethodPost, Path: "/analytics/reports/{report_id}/cancel", Summary: "Cancel an analytics report",
		Description: "Stops a generating run: it ends cancelled and no file is offered. 202 with the run; 200 when it is already cancelled; " +
			"409 INVALID_STATE_TRANSITION when it has already completed or failed.", Tags: tags, DefaultStatus: http.StatusAccepted,
		Responses: alreadyCancelled("AnalyticsReportOutputBody", "The run was already cancelled: nothing changed")},
		read, func(ctx context.Context, in *reportPath) (*AnalyticsReportOutput, error) {
			p := principal(ctx)
			op, err := s.analyticsReports.GetRun(ctx, p, in.ReportID)
			if err != nil {
				return nil, err
			}
			if err := operations.CheckCancellable(p, op); err != nil {
				return nil, err
			}
			if op.Status == operations.OpCancelled {
				return s.analyticsReportOutput(ctx, op, http.StatusOK)
			}
			if err := s.cancelWorkflow(ctx, op.ID); err != nil {
				return nil, err
			}
			return s.analyticsReportOutput(ctx, op, http.StatusAccepted)
		})
	register(s, huma.Operation{OperationID: "download-analytics-report", Method: http.MethodGet, Path: "/analytics/reports/{report_id}/download", Summary: "Download an analytics report",
		Description: "The run's file (application/json or text/csv), streamed. Needs no credential: the link's expires and signature, as given in " +
			"download_url, are the authorisation. A link the platform did not issue is 401 INVALID_SIGNATURE; an expired one 401 TOKEN_EXPIRED.",
		Tags: tags, Responses: map[string]*huma.Response{"200": {Description: "The file", Content: map[string]*huma.MediaType{"application/json": {}, "text/csv": {}}}}},
		access{public: true}, func(ctx context.Context, in *struct {
			ReportID  string `path:"report_id" maxLength:"64" doc:"The report (rpt_...)"`
			Expires   string `query:"expires" required:"true" maxLength:"20" doc:"Unix seconds, from download_url"`
			Signature string `query:"signature" required:"true" maxLength:"128" doc:"From download_url"`
		}) (*ReportDownloadOutput, error) {
			op, spec, r, err := s.analyticsReports.OpenDownload(ctx, in.ReportID, in.Expires, in.Signature, s.now())
			if err != nil {
				return nil, err
			}
			var size int64 = -1
			if res := reports.ResultOf(op); res != nil {
				size = res.SizeBytes
			}
			return s.reportDownload(ctx, op.ID+"."+spec.Extension(), spec.ContentType(), size, r), nil
		})
	s.registerAnalyticsReportDefinitions(tags)
}
