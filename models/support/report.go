package support

import (
	"context"
	"encoding/json"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// Report types (POST /v1/support/reports/generate).
const (
	// ReportDetailedAnalytics answers the requested metrics per group (the
	// grouping's dimensions), or one row of totals without grouping.
	ReportDetailedAnalytics = "detailed_analytics"
	// ReportTicketExport answers one row per ticket with the requested
	// metrics' per-ticket columns.
	ReportTicketExport = "ticket_export"
)

// Report metrics.
const (
	MetricResolutionTime         = "resolution_time"
	MetricSLACompliance          = "sla_compliance"
	MetricCustomerSatisfaction   = "customer_satisfaction"
	MetricEscalationRate         = "escalation_rate"
	MetricFirstContactResolution = "first_contact_resolution"
)

// Report groupings (dimensions).
const (
	GroupCategory = "category"
	GroupWeek     = "week"
	GroupPriority = "priority"
	GroupAgent    = "agent"
	GroupCustomer = "customer"
)

// Report formats and delivery methods.
const (
	ReportFormatJSON = "json"
	ReportFormatCSV  = "csv"

	DeliveryDownload = "download"
	DeliveryEmail    = "email"
)

// Report statuses (the report's view of its operation's status).
const (
	ReportGenerating = "generating"
	ReportCompleted  = "completed"
	ReportFailed     = "failed"
	ReportCancelled  = "cancelled"
)

// Bounds of a report request.
const (
	MaxReportDays    = 366 // the longest date range
	DefaultReportDay = 30  // the date range when none is given: the last 30 days
	maxReportFilter  = 100 // values per filter
)

// Steps of a report run, in order.
const (
	ReportStepQuery   = "query"
	ReportStepDeliver = "deliver"
)

// ReportTypes, ReportMetrics, ReportGroupings, ReportFormats and
// ReportDeliveries return the accepted values (new slices on every call).
func ReportTypes() []string { return []string{ReportDetailedAnalytics, ReportTicketExport} }

// ReportMetrics returns the metrics a report may ask for, in column order.
func ReportMetrics() []string {
	return []string{MetricResolutionTime, MetricSLACompliance, MetricCustomerSatisfaction, MetricEscalationRate, MetricFirstContactResolution}
}

// ReportGroupings returns the dimensions a detailed_analytics report may be grouped by.
func ReportGroupings() []string {
	return []string{GroupCategory, GroupWeek, GroupPriority, GroupAgent, GroupCustomer}
}

// ReportRequest is the body of POST /v1/support/reports/generate.
type ReportRequest struct {
	ReportType        string
	Start, End        string // RFC 3339 or YYYY-MM-DD (midnight in Timezone); End exclusive
	Timezone          string // IANA name, default UTC: dates and ISO weeks are taken in it
	CustomerIDs       []string
	Categories        []string
	Priorities        []string
	Metrics           []string // default: all
	Grouping          []string
	Format            string // json (default) or csv
	DeliveryMethod    string // download (default) or email
	NotificationEmail string
}

// ReportSpec is a validated report request with the scope it reads: what
// the operation stores as its input and what the report run computes.
type ReportSpec struct {
	ReportType        string    `json:"report_type"`
	Start             time.Time `json:"start"`
	End               time.Time `json:"end"`
	Timezone          string    `json:"timezone"`
	CustomerIDs       []string  `json:"customer_ids"`
	Categories        []string  `json:"categories"`
	Priorities        []string  `json:"priorities"`
	Metrics           []string  `json:"metrics"`
	Grouping          []string  `json:"grouping"`
	Format            string    `json:"format"`
	DeliveryMethod    string    `json:"delivery_method"`
	NotificationEmail string    `json:"notification_email,omitempty"`
	// The tickets the report reads: the requester's organization, or every
	// organization for provider staff; the requester's environment.
	OrganizationID   string             `json:"organization_id"`
	Environment      models.Environment `json:"environment"`
	AllOrganizations bool               `json:"all_organizations"`
	RequestedBy      string             `json:"requested_by"`
}

// Scope is the scope of the tickets the report reads.
func (s *ReportSpec) Scope() models.Scope {
	return models.Scope{OrganizationID: s.OrganizationID, Environment: s.Environment, AllOrganizations: s.AllOrganizations}
}

// Location is the report's time zone.
func (s *ReportSpec) Location() *time.Location {
	if loc, err := time.LoadLocation(s.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

// Extension is the file extension of the report's format.
func (s *ReportSpec) Extension() string { return s.Format }

// ContentType is the media type of the report's file.
func (s *ReportSpec) ContentType() string {
	if s.Format == ReportFormatCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/json"
}

// normalizeList trims, lower-cases (when lower) and de-duplicates values,
// checking each against allowed (nil: any value up to MaxShort characters).
func normalizeList(v *models.Validator, field string, in []string, allowed []string, lower bool) []string {
	out := []string{}
	if len(in) > maxReportFilter {
		v.Add(field, "must have at most "+itoa(maxReportFilter)+" values")
		return out
	}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if lower {
			s = strings.ToLower(s)
		}
		switch {
		case s == "":
			v.Add(field, "must not contain empty values")
			continue
		case allowed != nil && !slices.Contains(allowed, s):
			v.Add(field, "unknown value "+quote(s)+": one of "+strings.Join(allowed, ", "))
			continue
		case len(s) > MaxShort:
			v.Add(field, "values must be at most "+itoa(MaxShort)+" characters")
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func quote(s string) string { return "\"" + models.Truncate(s, 40) + "\"" }

// checkReportTime adds to v the problem of a date_range bound s that did
// not parse (ok false): missing (required, the other bound being given),
// or not a time.
func checkReportTime(v *models.Validator, field, s string, ok bool, required, note string) {
	switch {
	case ok:
	case s == "":
		v.Add(field, required+": an RFC 3339 timestamp or a date (YYYY-MM-DD"+note+")")
	default:
		v.Add(field, "must be an RFC 3339 timestamp or a date (YYYY-MM-DD"+note+"), not "+quote(s))
	}
}

// ValidateReport checks a report request of p at now and returns its
// spec (see docs/support.md, Report runs). Errors: VALIDATION_ERROR with
// every problem found.
func ValidateReport(p *models.Principal, in ReportRequest, now time.Time) (*ReportSpec, error) {
	var v models.Validator
	spec := &ReportSpec{
		ReportType: strings.TrimSpace(in.ReportType), Timezone: strings.TrimSpace(in.Timezone),
		Format: strings.ToLower(strings.TrimSpace(in.Format)), DeliveryMethod: strings.ToLower(strings.TrimSpace(in.DeliveryMethod)),
		NotificationEmail: strings.TrimSpace(in.NotificationEmail),
		OrganizationID:    p.OrganizationID, Environment: p.Environment, AllOrganizations: p.IsStaff(), RequestedBy: p.ID,
	}
	if spec.ReportType == "" {
		spec.ReportType = ReportDetailedAnalytics
	}
	v.Check(slices.Contains(ReportTypes(), spec.ReportType), "report_type", "must be one of "+strings.Join(ReportTypes(), ", "))
	if spec.Timezone == "" {
		spec.Timezone = "UTC"
	}
	loc := time.UTC
	if ValidTimezone(spec.Timezone) {
		loc, _ = time.LoadLocation(spec.Timezone)
	} else {
		v.Add("parameters.timezone", "must be an IANA time zone name, such as Europe/London or UTC")
	}
	start, end := strings.TrimSpace(in.Start), strings.TrimSpace(in.End)
	switch {
	case start == "" && end == "":
		spec.End = now.UTC()
		spec.Start = now.In(loc).AddDate(0, 0, -DefaultReportDay).UTC()
	default:
		var okStart, okEnd bool
		spec.Start, okStart = parseDashboardTime(start, loc)
		spec.End, okEnd = parseDashboardTime(end, loc)
		checkReportTime(&v, "parameters.date_range.start", start, okStart, "is required with end", "")
		checkReportTime(&v, "parameters.date_range.end", end, okEnd, "is required with start", ", exclusive")
		if okStart && okEnd {
			v.Check(spec.End.After(spec.Start), "parameters.date_range.end", "must be after start")
			v.Check(!spec.End.After(spec.Start.In(loc).AddDate(0, 0, MaxReportDays)), "parameters.date_range.end", "must be at most "+itoa(MaxReportDays)+" days after start")
		}
		spec.Start, spec.End = spec.Start.UTC(), spec.End.UTC()
	}
	spec.CustomerIDs = normalizeList(&v, "parameters.filters.customer_ids", in.CustomerIDs, nil, false)
	spec.Categories = normalizeList(&v, "parameters.filters.categories", in.Categories, nil, true)
	spec.Priorities = normalizeList(&v, "parameters.filters.priorities", in.Priorities, Priorities(), true)
	spec.Metrics = normalizeList(&v, "parameters.metrics", in.Metrics, ReportMetrics(), true)
	if len(in.Metrics) == 0 {
		spec.Metrics = ReportMetrics()
	}
	spec.Grouping = normalizeList(&v, "parameters.grouping", in.Grouping, ReportGroupings(), true)
	if spec.ReportType == ReportTicketExport {
		v.Check(len(spec.Grouping) == 0, "parameters.grouping", "is not used by ticket_export (one row per ticket): leave it out")
	}
	if spec.Format == "" {
		spec.Format = ReportFormatJSON
	}
	v.Check(spec.Format == ReportFormatJSON || spec.Format == ReportFormatCSV, "parameters.format", "must be json or csv")
	if spec.DeliveryMethod == "" {
		spec.DeliveryMethod = DeliveryDownload
	}
	v.Check(spec.DeliveryMethod == DeliveryDownload || spec.DeliveryMethod == DeliveryEmail, "delivery.method", "must be download or email")
	if spec.NotificationEmail != "" {
		addr, err := mail.ParseAddress(spec.NotificationEmail)
		ok := err == nil && addr.Address == spec.NotificationEmail && len(spec.NotificationEmail) <= MaxEmail
		v.Check(ok, "delivery.notification_email", "must be an e-mail address such as noc@example.com")
	} else {
		v.Check(spec.DeliveryMethod != DeliveryEmail, "delivery.notification_email", "is required with method email")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return spec, nil
}

// SpecOf reads the spec a report operation stores. Errors: INTERNAL_ERROR
// (not a report's input).
func SpecOf(op *operations.Operation) (*ReportSpec, error) {
	raw, err := json.Marshal(op.Input)
	if err != nil {
		return nil, models.Internal(err)
	}
	var spec ReportSpec
	if err := json.Unmarshal(raw, &spec); err != nil || spec.ReportType == "" {
		return nil, models.Internal(err).WithDetail("reason", "the operation is not a report run")
	}
	return &spec, nil
}

// NewReportOperation returns the pending operation of a report run with
// the id id (rpt_..., also its workflow id), to be created with
// operations.Store.CreateOperation in the requester's own scope.
func NewReportOperation(id string, spec *ReportSpec) *operations.Operation {
	return operations.NewOperation(id, operations.OpTypeSupportReport, id, spec.RequestedBy,
		[]string{ReportStepQuery, ReportStepDeliver}, models.AsMap(spec))
}

// ReportStatus is a report's status from its operation's.
func ReportStatus(op *operations.Operation) string {
	switch op.Status {
	case operations.OpCompleted:
		return ReportCompleted
	case operations.OpFailed, operations.OpRolledBack, operations.OpPartial:
		return ReportFailed
	case operations.OpCancelled:
		return ReportCancelled
	}
	return ReportGenerating
}

// ReportResult is what a completed report run records as its operation's
// result.
type ReportResult struct {
	BlobKey       string         `json:"blob_key"`
	RowCount      int64          `json:"row_count"`
	Columns       []ReportColumn `json:"columns"`
	SizeBytes     int64          `json:"size_bytes"`
	DataFreshness *time.Time     `json:"data_freshness"`
	GeneratedAt   time.Time      `json:"generated_at"`
	Tickets       int64          `json:"tickets"`
}

// ResultMap is the result as an operation's result.
func (r *ReportResult) ResultMap() map[string]any { return models.AsMap(r) }

// ResultOf reads a completed report's result; nil when it has none.
func ResultOf(op *operations.Operation) *ReportResult {
	if op.Result == nil {
		return nil
	}
	raw, err := json.Marshal(op.Result)
	if err != nil {
		return nil
	}
	var r ReportResult
	if json.Unmarshal(raw, &r) != nil || r.BlobKey == "" {
		return nil
	}
	return &r
}

// GetReport returns the report run id of p's own organization and
// environment. Errors: NOT_FOUND (no such report, another organization's,
// or an operation of another type).
func (s *Store) GetReport(ctx context.Context, p *models.Principal, id string) (*operations.Operation, error) {
	var op operations.Operation
	err := s.core.In(ctx, p.OwnScope()).Where("id = ? AND type = ?", id, operations.OpTypeSupportReport).Take(&op).Error
	if err != nil {
		return nil, models.NotFoundOr(err, "report")
	}
	return &op, nil
}

// ReportByID returns a report run by id whatever its tenant (the signed
// download link names it). Errors: NOT_FOUND.
func (s *Store) ReportByID(ctx context.Context, id string) (*operations.Operation, error) {
	var op operations.Operation
	err := s.core.In(ctx, models.SystemScope()).Where("id = ? AND type = ?", id, operations.OpTypeSupportReport).Take(&op).Error
	if err != nil {
		return nil, models.NotFoundOr(err, "report")
	}
	return &op, nil
}

// reportSorts are the fields a list of report runs sorts by: created_at, and
// completed_at, the completed runs by the time they completed, then the
// others (which have no completed_at) whatever the direction.
var reportSorts = models.SortFields{"created_at": "created_at", "completed_at": operations.CompletedAtOrder}

// ListReports returns a page of the report runs of p's own organization
// and environment in page's order (reportSorts; default newest first),
// ties by id; status filters by report status. Errors: VALIDATION_ERROR
// (status, sort).
func (s *Store) ListReports(ctx context.Context, p *models.Principal, status string, page models.PageRequest) ([]operations.Operation, int64, error) {
	q := s.core.In(ctx, p.OwnScope()).Model(&operations.Operation{}).Where("type = ?", operations.OpTypeSupportReport)
	switch status {
	case "":
	case ReportGenerating:
		q = q.Where("status IN ?", []string{string(operations.OpPending), string(operations.OpInProgress)})
	case ReportCompleted:
		q = q.Where("status = ?", operations.OpCompleted)
	case ReportFailed:
		q = q.Where("status IN ?", []string{string(operations.OpFailed), string(operations.OpRolledBack), string(operations.OpPartial)})
	case ReportCancelled:
		q = q.Where("status = ?", operations.OpCancelled)
	default:
		return nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be generating, completed, failed or cancelled"})
	}
	var out []operations.Operation
	total, err := models.Paginate(q, page, reportSorts, &out)
	return out, total, err
}

// EstimateReport is how long spec's report should take: a few seconds,
// plus one second per 20,000 tickets it reads (a COUNT on the indexed
// creation time). Errors: INTERNAL_ERROR.
func (s *Store) EstimateReport(ctx context.Context, spec *ReportSpec) (time.Duration, error) {
	var n int64
	q := &reportQuery{s: s, ctx: ctx, spec: spec}
	if err := q.filtered(s.core.In(ctx, spec.Scope()).Model(&Ticket{})).Count(&n).Error; err != nil {
		return 0, dbErr(err)
	}
	return 3*time.Second + time.Duration(n)*time.Second/20_000, nil
}
