// Package reports is the analytics report builder's lifecycle: report
// requests validated against the datasets of the builder engine
// (models/analytics/builder), saved report definitions with their
// schedules, and report runs. A run is an operation (rpt_..., type
// analytics_report) that a workflow computes into a CSV or JSON file in
// the blob store, offered through a signed, expiring download link and
// announced by analytics_report.completed or analytics_report.failed; the
// same machinery as the support area's report runs (models/reportrun).
package reports

import (
	"net/mail"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// Permissions of the report builder: reading runs and definitions and
// running reports; saving, changing and scheduling definitions.
const (
	PermissionRead  = "analytics:read"
	PermissionWrite = "analytics:write"
)

// Formats and delivery methods.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"

	// DeliveryDownload offers the file through the run's download_url only.
	DeliveryDownload = "download"
	// DeliveryEmail also mails the link to notification_email.
	DeliveryEmail = "email"
	// DeliveryWebhook also puts the link in analytics_report.completed,
	// which webhook subscriptions receive.
	DeliveryWebhook = "webhook"
)

// Run statuses (a run's view of its operation's status).
const (
	StatusGenerating = "generating"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
)

// Steps of a run, in order.
const (
	StepQuery   = "query"
	StepDeliver = "deliver"
)

// Events of report runs (group analytics_report).
const (
	EventCompleted = "analytics_report.completed"
	EventFailed    = "analytics_report.failed"
)

// Bounds.
const (
	MaxName        = 200
	MaxDescription = 2000
	maxEmail       = 254
	// MaxDefinitions is the most saved definitions an organization keeps
	// per environment.
	MaxDefinitions = 100
)

// Formats returns the file formats.
func Formats() []string { return []string{FormatJSON, FormatCSV} }

// Deliveries returns the delivery methods.
func Deliveries() []string { return []string{DeliveryDownload, DeliveryEmail, DeliveryWebhook} }

// DatasetPermission returns the permission that reading dataset needs on
// top of analytics:read: the permission of the records it sums.
func DatasetPermission(dataset string) string {
	switch dataset {
	case "usage", "invoices", "payments":
		return "billing:read"
	case "tickets", "sla":
		return "support:read"
	}
	return "services:read"
}

// Request is what a report run or a saved definition asks for: the
// builder query, the file format, the delivery and, for provider staff,
// the organization read.
type Request struct {
	Query             builder.Definition
	Format            string // json (default) or csv
	DeliveryMethod    string // download (default), email or webhook
	NotificationEmail string // with email
	// OrganizationID is provider staff's choice of one organization; empty
	// reads every organization (staff) or the caller's own (customers).
	OrganizationID string
}

// Spec is a validated request with what it reads: what a run's operation
// stores as its input.
type Spec struct {
	Query             builder.Definition `json:"query"`
	From              time.Time          `json:"from"` // the period resolved when the run was asked for
	To                time.Time          `json:"to"`
	Format            string             `json:"format"`
	DeliveryMethod    string             `json:"delivery_method"`
	NotificationEmail string             `json:"notification_email,omitempty"`
	// ReadOrganizationID is the organization read ("" every organization:
	// staff only); Environment the environment read.
	ReadOrganizationID string             `json:"read_organization_id"`
	Environment        models.Environment `json:"environment"`
	// OrganizationID owns the run: the requester's organization.
	OrganizationID string `json:"organization_id"`
	RequestedBy    string `json:"requested_by"`
	DefinitionID   string `json:"definition_id,omitempty"`
	Scheduled      bool   `json:"scheduled,omitempty"`
}

// BuilderScope is the scope the builder reads.
func (s *Spec) BuilderScope() builder.Scope {
	return builder.Scope{OrganizationID: s.ReadOrganizationID, Environment: s.Environment}
}

// Plan returns the builder plan of the spec: the query with its period
// fixed to [From, To) as resolved when the run was asked for, so a retry
// reads the same period.
func (s *Spec) Plan() (*builder.Plan, error) {
	q := s.Query
	q.Period, q.From, q.To = "", s.From.Format(time.RFC3339Nano), s.To.Format(time.RFC3339Nano)
	return builder.Validate(q, s.To)
}

// Extension is the file's extension.
func (s *Spec) Extension() string { return s.Format }

// ContentType is the file's media type.
func (s *Spec) ContentType() string {
	if s.Format == FormatCSV {
		return "text/csv; charset=utf-8"
	}
	return "application/json"
}

// Store is the report builder over the core store: definitions, runs and
// their files.
type Store struct {
	core     *models.Store
	builder  *builder.Store
	eventlog *eventlog.Store
	identity *identity.Store
	blobs    *blob.Bucket
}

// NewStore returns the report builder over core; blobs (nil: runs fail
// with DEPENDENCY_UNAVAILABLE) keeps the files.
func NewStore(core *models.Store, blobs *blob.Bucket) *Store {
	return &Store{core: core, builder: builder.NewStore(core), eventlog: eventlog.NewStore(core), identity: identity.NewStore(core), blobs: blobs}
}

// Core returns the core store.
func (s *Store) Core() *models.Store { return s.core }

func (s *Store) now() time.Time {
	if s.core.Now != nil {
		return s.core.Now().UTC()
	}
	return time.Now().UTC()
}

// Validate checks a request of p at now: the builder query (its fields
// named as the builder names them: dataset, metrics[i], filter, ...), the
// format, the delivery, the organization, and that p holds the dataset's
// permission. Errors: VALIDATION_ERROR (every issue at once),
// INSUFFICIENT_PERMISSIONS.
func Validate(p *models.Principal, in Request, now time.Time) (*Spec, error) {
	var v models.Validator
	spec := &Spec{Query: in.Query, Format: strings.ToLower(strings.TrimSpace(in.Format)),
		DeliveryMethod: strings.ToLower(strings.TrimSpace(in.DeliveryMethod)), NotificationEmail: strings.TrimSpace(in.NotificationEmail),
		Environment: p.Environment, OrganizationID: p.OrganizationID, RequestedBy: p.ID}
	plan, err := builder.Validate(in.Query, now)
	if err != nil {
		me := models.AsError(err)
		if me.Code != models.CodeValidation {
			return nil, err
		}
		issues, _ := me.Details["fields"].([]models.FieldIssue)
		for _, is := range issues {
			v.Add(is.Field, is.Issue)
		}
		if len(issues) == 0 {
			v.Add("query", me.Message)
		}
	} else {
		spec.Query, spec.From, spec.To = plan.Definition, plan.From.UTC(), plan.To.UTC()
	}
	if spec.Format == "" {
		spec.Format = FormatJSON
	}
	v.Check(slices.Contains(Formats(), spec.Format), "format", "must be json or csv")
	if spec.DeliveryMethod == "" {
		spec.DeliveryMethod = DeliveryDownload
	}
	v.Check(slices.Contains(Deliveries(), spec.DeliveryMethod), "delivery.method", "must be download, email or webhook")
	if spec.NotificationEmail != "" {
		addr, err := mail.ParseAddress(spec.NotificationEmail)
		v.Check(err == nil && addr.Address == spec.NotificationEmail && len(spec.NotificationEmail) <= maxEmail,
			"delivery.notification_email", "must be an e-mail address")
	} else {
		v.Check(spec.DeliveryMethod != DeliveryEmail, "delivery.notification_email", "is required with method email")
	}
	org := strings.TrimSpace(in.OrganizationID)
	switch {
	case !p.IsStaff():
		v.Check(org == "", "organization_id", "only provider staff may choose the organization read")
		spec.ReadOrganizationID = p.OrganizationID
	default:
		v.Check(len(org) <= 40, "organization_id", "must be an organization id (org_...)")
		spec.ReadOrganizationID = org
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if perm := DatasetPermission(spec.Query.Dataset); !p.Can(perm) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "the %s dataset needs the %s permission", spec.Query.Dataset, perm).
			WithDetail("required_permission", perm)
	}
	return spec, nil
}
