package reports

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
)

// Schedule frequencies.
const (
	FrequencyDaily   = "daily"
	FrequencyWeekly  = "weekly"
	FrequencyMonthly = "monthly"
)

// Frequencies returns the schedule frequencies.
func Frequencies() []string { return []string{FrequencyDaily, FrequencyWeekly, FrequencyMonthly} }

// Weekdays returns the days a weekly schedule may run on, Monday first.
func Weekdays() []string {
	return []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
}

// Schedule is when a saved definition runs by itself: every day, week or
// month at Hour:Minute of Timezone (weekly on Weekday, monthly on
// DayOfMonth). Each run reads the definition's period as of the run.
type Schedule struct {
	Frequency  string `json:"frequency"`
	Hour       int    `json:"hour"`
	Minute     int    `json:"minute"`
	Weekday    string `json:"weekday,omitempty"`      // weekly
	DayOfMonth int    `json:"day_of_month,omitempty"` // monthly: 1 to 28
	Timezone   string `json:"timezone"`
}

// WeekdayNumber is the Weekday as time.Weekday (Sunday 0).
func (s Schedule) WeekdayNumber() int {
	i := slices.Index(Weekdays(), s.Weekday)
	return (i + 1) % 7
}

// ScheduleInput is a schedule as a request sends it; absent fields take
// their defaults (06:00, Monday, the 1st, the query's time zone).
type ScheduleInput struct {
	Frequency  string
	Hour       *int
	Minute     *int
	Weekday    string
	DayOfMonth *int
	Timezone   string
}

// Definition is a saved report definition (rdef_...) of an organization
// and environment: a request to run again, by hand or on its schedule.
type Definition struct {
	ID             string             `gorm:"primaryKey;size:40"`
	OrganizationID string             `gorm:"size:40;not null;index"`
	Environment    models.Environment `gorm:"size:8;not null;index"`
	Name           string             `gorm:"size:200;not null"`
	Description    string             `gorm:"size:2000;not null;default:''"`
	// Query is the builder query, as saved (its period relative, when so asked).
	Query             builder.Definition `gorm:"serializer:json;type:text;not null"`
	Format            string             `gorm:"size:8;not null"`
	DeliveryMethod    string             `gorm:"size:16;not null"`
	NotificationEmail string             `gorm:"size:254;not null;default:''"`
	// ReadOrganizationID is provider staff's choice of the organization
	// read ("" when none was made).
	ReadOrganizationID string `gorm:"size:40;not null;default:''"`
	// AllOrganizations is set when provider staff saved it without
	// choosing: its runs read every organization.
	AllOrganizations bool      `gorm:"not null;default:false"`
	Schedule         *Schedule `gorm:"serializer:json;type:text"`
	// ScheduleID is the Temporal schedule running it ("" when unscheduled).
	ScheduleID string `gorm:"size:120;not null;default:''"`
	LastRunID  string `gorm:"size:40;not null;default:''"`
	LastRunAt  *time.Time
	CreatedBy  string    `gorm:"size:40;not null;default:''"`
	CreatedAt  time.Time `gorm:"not null;index"`
	UpdatedAt  time.Time
}

// TableName is the table of saved definitions.
func (Definition) TableName() string { return "analytics_report_definitions" }

// ReadScope is the organization its runs read: staff's choice, every
// organization ("") when staff made none, else its own.
func (d *Definition) ReadScope() string {
	switch {
	case d.ReadOrganizationID != "":
		return d.ReadOrganizationID
	case d.AllOrganizations:
		return ""
	}
	return d.OrganizationID
}

// Request returns the request the definition makes.
func (d *Definition) Request() Request {
	return Request{Query: d.Query, Format: d.Format, DeliveryMethod: d.DeliveryMethod, NotificationEmail: d.NotificationEmail,
		OrganizationID: d.ReadOrganizationID}
}

// DefinitionInput is a definition as a request sends it.
type DefinitionInput struct {
	Name        string
	Description string
	Request     Request
	Schedule    *ScheduleInput // nil: not scheduled
}

// ScheduleID returns the id of the Temporal schedule of definition id.
func ScheduleID(id string) string { return "analytics-report-" + id }

// validateDefinition checks in for p at now and returns the definition to
// save (id, owner and schedule id set). Errors: as Validate.
func validateDefinition(p *models.Principal, in DefinitionInput, now time.Time) (*Definition, error) {
	var v models.Validator
	name, desc := strings.TrimSpace(in.Name), strings.TrimSpace(in.Description)
	v.Check(name != "", "name", "is required")
	v.Check(utf8.RuneCountInString(name) <= MaxName, "name", "must be at most 200 characters")
	v.Check(utf8.RuneCountInString(desc) <= MaxDescription, "description", "must be at most 2000 characters")
	sched := validateSchedule(&v, in.Schedule, in.Request.Query.Timezone)
	spec, err := Validate(p, in.Request, now)
	if err != nil {
		if me := models.AsError(err); me.Code == models.CodeValidation {
			issues, _ := me.Details["fields"].([]models.FieldIssue)
			for _, is := range issues {
				v.Add(is.Field, is.Issue)
			}
		} else if v.Err() == nil {
			return nil, err
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	d := &Definition{ID: models.NewID(models.PrefixReportDefinition), OrganizationID: p.OrganizationID, Environment: p.Environment,
		Name: name, Description: desc, Query: in.Request.Query, Format: spec.Format, DeliveryMethod: spec.DeliveryMethod,
		NotificationEmail: spec.NotificationEmail, ReadOrganizationID: strings.TrimSpace(in.Request.OrganizationID),
		AllOrganizations: spec.ReadOrganizationID == "", Schedule: sched, CreatedBy: p.ID}
	// The query as asked (a relative period stays relative), with the
	// builder's defaults filled in.
	d.Query = spec.Query
	if sched != nil {
		d.ScheduleID = ScheduleID(d.ID)
	}
	return d, nil
}

// validateSchedule checks a schedule, defaulting its time zone to tz.
func validateSchedule(v *models.Validator, in *ScheduleInput, tz string) *Schedule {
	if in == nil || (in.Frequency == "" && in.Hour == nil && in.Minute == nil && in.Weekday == "" && in.DayOfMonth == nil && in.Timezone == "") {
		return nil
	}
	s := &Schedule{Frequency: strings.ToLower(strings.TrimSpace(in.Frequency)), Hour: 6, Weekday: strings.ToLower(strings.TrimSpace(in.Weekday)),
		Timezone: strings.TrimSpace(in.Timezone)}
	v.Check(slices.Contains(Frequencies(), s.Frequency), "schedule.frequency", "must be daily, weekly or monthly")
	if in.Hour != nil {
		s.Hour = *in.Hour
	}
	if in.Minute != nil {
		s.Minute = *in.Minute
	}
	v.Check(s.Hour >= 0 && s.Hour <= 23, "schedule.hour", "must be 0 to 23")
	v.Check(s.Minute >= 0 && s.Minute <= 59, "schedule.minute", "must be 0 to 59")
	switch s.Frequency {
	case FrequencyWeekly:
		if s.Weekday == "" {
			s.Weekday = "monday"
		}
		v.Check(slices.Contains(Weekdays(), s.Weekday), "schedule.weekday", "must be a day of the week (monday to sunday)")
	default:
		v.Check(s.Weekday == "", "schedule.weekday", "is only used by weekly schedules")
		s.Weekday = ""
	}
	switch {
	case s.Frequency == FrequencyMonthly:
		s.DayOfMonth = 1
		if in.DayOfMonth != nil {
			s.DayOfMonth = *in.DayOfMonth
		}
		v.Check(s.DayOfMonth >= 1 && s.DayOfMonth <= 28, "schedule.day_of_month", "must be 1 to 28 (every month has it)")
	case in.DayOfMonth != nil:
		v.Add("schedule.day_of_month", "is only used by monthly schedules")
	}
	if s.Timezone == "" {
		s.Timezone = strings.TrimSpace(tz)
	}
	if s.Timezone == "" {
		s.Timezone = "UTC"
	}
	if _, err := time.LoadLocation(s.Timezone); err != nil || s.Timezone == "Local" || strings.HasPrefix(s.Timezone, "/") {
		v.Add("schedule.timezone", "must be an IANA time zone name, such as Europe/London or UTC")
	}
	return s
}

// CreateDefinition saves a definition of p (its organization and
// environment), within MaxDefinitions. Errors: VALIDATION_ERROR,
// INSUFFICIENT_PERMISSIONS (the dataset's), NOT_FOUND (staff's
// organization_id), RESOURCE_LIMIT_EXCEEDED.
func (s *Store) CreateDefinition(ctx context.Context, p *models.Principal, in DefinitionInput) (*Definition, error) {
	d, err := validateDefinition(p, in, s.now())
	if err != nil {
		return nil, err
	}
	if err := s.checkOrganization(ctx, d.ReadOrganizationID); err != nil {
		return nil, err
	}
	err = s.core.Tx(ctx, p.OwnScope(), func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Definition{}).Count(&n).Error; err != nil {
			return models.DBErr(err)
		}
		if n >= MaxDefinitions {
			return models.Errorf(models.CodeResourceLimit, "an organization keeps at most %d report definitions per environment: delete one first", MaxDefinitions).
				WithDetail("limit", MaxDefinitions)
		}
		return models.DBErr(tx.Create(d).Error)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// checkOrganization checks that staff's chosen organization exists.
// Errors: NOT_FOUND.
func (s *Store) checkOrganization(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	var n int64
	if err := s.core.In(ctx, models.SystemScope()).Model(&models.Organization{}).Where("id = ?", id).Count(&n).Error; err != nil {
		return models.DBErr(err)
	}
	if n == 0 {
		return models.NotFound("organization")
	}
	return nil
}

// UpdateDefinition replaces definition id of p's organization with in
// (a full replacement: absent fields take their defaults). Errors: as
// CreateDefinition, NOT_FOUND.
func (s *Store) UpdateDefinition(ctx context.Context, p *models.Principal, id string, in DefinitionInput) (old, updated *Definition, err error) {
	cur, err := s.GetDefinition(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	d, err := validateDefinition(p, in, s.now())
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkOrganization(ctx, d.ReadOrganizationID); err != nil {
		return nil, nil, err
	}
	d.ID, d.CreatedAt, d.CreatedBy, d.LastRunID, d.LastRunAt = cur.ID, cur.CreatedAt, cur.CreatedBy, cur.LastRunID, cur.LastRunAt
	d.ScheduleID = ""
	if d.Schedule != nil {
		d.ScheduleID = ScheduleID(d.ID)
	}
	if err := s.core.In(ctx, p.OwnScope()).Select("*").Omit("created_at").Save(d).Error; err != nil {
		return nil, nil, models.DBErr(err)
	}
	return cur, d, nil
}

// GetDefinition returns definition id of p's organization and environment.
// Errors: NOT_FOUND.
func (s *Store) GetDefinition(ctx context.Context, p *models.Principal, id string) (*Definition, error) {
	var d Definition
	if err := s.core.In(ctx, p.OwnScope()).Where("id = ?", id).Take(&d).Error; err != nil {
		return nil, models.NotFoundOr(err, "report definition")
	}
	return &d, nil
}

// DefinitionByID returns a definition whatever its tenant (its schedule
// names it). Errors: NOT_FOUND.
func (s *Store) DefinitionByID(ctx context.Context, id string) (*Definition, error) {
	var d Definition
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&d).Error; err != nil {
		return nil, models.NotFoundOr(err, "report definition")
	}
	return &d, nil
}

// definitionSorts are the fields a list of definitions sorts by.
var definitionSorts = models.SortFields{"created_at": "created_at", "updated_at": "updated_at", "name": "name", "last_run_at": lastRunAtOrder}

// lastRunAtOrder sorts by last_run_at with the definitions never run after
// the others in either direction's NULL placement alike on SQLite and
// PostgreSQL (which place NULLs at opposite ends by default).
const lastRunAtOrder = "CASE WHEN last_run_at IS NULL THEN 1 ELSE 0 END, last_run_at"

// ListDefinitions returns a page of p's organization's definitions (its
// environment) in page's order (definitionSorts; default newest first),
// ties by id; scheduled filters. Errors: VALIDATION_ERROR (sort).
func (s *Store) ListDefinitions(ctx context.Context, p *models.Principal, scheduled *bool, page models.PageRequest) ([]Definition, int64, error) {
	q := s.core.In(ctx, p.OwnScope()).Model(&Definition{})
	if scheduled != nil {
		if *scheduled {
			q = q.Where("schedule_id <> ''")
		} else {
			q = q.Where("schedule_id = ''")
		}
	}
	var out []Definition
	total, err := models.Paginate(q, page, definitionSorts, &out)
	return out, total, err
}

// DeleteDefinition deletes definition id of p's organization and returns
// it (its schedule is the caller's to delete). Runs already made stay.
// Errors: NOT_FOUND.
func (s *Store) DeleteDefinition(ctx context.Context, p *models.Principal, id string) (*Definition, error) {
	d, err := s.GetDefinition(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := s.core.In(ctx, p.OwnScope()).Where("id = ?", id).Delete(&Definition{}).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return d, nil
}

// RestoreDefinition saves d again as it was (when its schedule could not be
// changed after a delete).
func (s *Store) RestoreDefinition(ctx context.Context, d *Definition) error {
	return models.DBErr(s.core.In(ctx, models.TenantScope(d.OrganizationID, d.Environment)).Select("*").Save(d).Error)
}
