package support

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// PrefixTrackerIntegration starts the id of a tracker integration (trk_).
const PrefixTrackerIntegration = "trk"

// TrackerIntegrationType is the type of the tracker integrations this file
// keeps (the last segment of their endpoints).
const TrackerIntegrationType = "tracker"

// Bounds of a tracker integration's fields.
const (
	MaxTrackerUsername   = 200
	MaxTrackerToken      = 1000
	MaxTrackerPriority   = 60
	MaxTrackersPerTenant = 5
)

// Default priority names of a tracker (Jira's defaults), by ticket priority.
const (
	DefaultTrackerCritical = "Highest"
	DefaultTrackerHigh     = "High"
	DefaultTrackerMedium   = "Medium"
	DefaultTrackerLow      = "Low"
)

// trackerProjectKey is a tracker project key: an upper-case letter, then 1
// to 9 upper-case letters, digits or underscores (Jira's rule).
var trackerProjectKey = regexp.MustCompile(`^[A-Z][A-Z0-9_]{1,9}$`)

// BindTrackerToken is the binding of a tracker integration's sealed API
// token (models.Sealer): its table and row.
func BindTrackerToken(id string) string { return "support_tracker_integrations:" + id }

// PriorityMapping names the tracker priority each ticket priority maps to.
type PriorityMapping struct {
	Critical string `json:"critical"`
	High     string `json:"high"`
	Medium   string `json:"medium"`
	Low      string `json:"low"`
}

// DefaultPriorityMapping returns the mapping used for the priorities a
// request leaves out.
func DefaultPriorityMapping() PriorityMapping {
	return PriorityMapping{Critical: DefaultTrackerCritical, High: DefaultTrackerHigh, Medium: DefaultTrackerMedium, Low: DefaultTrackerLow}
}

// withDefaults fills the blank names of m from DefaultPriorityMapping.
func (m PriorityMapping) withDefaults() PriorityMapping {
	d := DefaultPriorityMapping()
	fill := func(v *string, def string) {
		if *v = strings.TrimSpace(*v); *v == "" {
			*v = def
		}
	}
	fill(&m.Critical, d.Critical)
	fill(&m.High, d.High)
	fill(&m.Medium, d.Medium)
	fill(&m.Low, d.Low)
	return m
}

// For returns the tracker priority of a ticket priority (medium's for an
// unknown one).
func (m PriorityMapping) For(priority string) string {
	switch priority {
	case PriorityCritical:
		return m.Critical
	case PriorityHigh:
		return m.High
	case PriorityLow:
		return m.Low
	}
	return m.Medium
}

// TrackerIntegration connects an organization and environment to an issue
// tracker's Jira-compatible REST API (trk_): new tickets become issues,
// and customer-visible comments travel both ways (docs/support.md,
// "Tracker integration"). Its API token is sealed at rest and never
// answered; APITokenLast4 identifies it.
type TrackerIntegration struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TrackerURL      string          `gorm:"size:2000;not null"`
	Username        string          `gorm:"size:200;not null"`
	APITokenSealed  string          `gorm:"type:text;not null" json:"-"`
	APITokenLast4   string          `gorm:"size:4;not null"`
	ProjectKey      string          `gorm:"size:10;not null"`
	CreateIssues    bool            `gorm:"not null"`
	SyncComments    bool            `gorm:"not null"`
	PriorityMapping PriorityMapping `gorm:"serializer:json;type:text;not null"`
	Active          bool            `gorm:"not null;index"`
	LastError       string          `gorm:"size:500"`
	LastErrorAt     *time.Time      ``
	CreatedBy       string          `gorm:"size:40"`
	CreatedAt       time.Time       `gorm:"not null;index"`
	UpdatedAt       time.Time
}

// TableName is the tracker integrations table.
func (TrackerIntegration) TableName() string { return "support_tracker_integrations" }

// Scope is the integration's organization and environment.
func (c *TrackerIntegration) Scope() models.Scope {
	return models.TenantScope(c.OrganizationID, c.Environment)
}

// TrackerSpec is a tracker integration to create; its URL is already
// checked (events.Subscriptions.CheckTrackerURL), the store checks the
// rest. Blank priority names take DefaultPriorityMapping's.
type TrackerSpec struct {
	TrackerURL      string
	Username        string
	APIToken        string
	ProjectKey      string
	CreateIssues    bool
	SyncComments    bool
	PriorityMapping PriorityMapping
	Active          bool
}

// TrackerPatch is a change to a tracker integration; nil fields stay.
type TrackerPatch struct {
	TrackerURL      *string
	Username        *string
	APIToken        *string
	ProjectKey      *string
	CreateIssues    *bool
	SyncComments    *bool
	PriorityMapping *PriorityMapping
	Active          *bool
}

// checkTrackerFields validates the fields the store owns into v (nil ones
// are not checked).
func checkTrackerFields(v *models.Validator, username, token, project *string, pm *PriorityMapping) {
	if username != nil {
		n := utf8.RuneCountInString(strings.TrimSpace(*username))
		v.Check(n >= 1 && n <= MaxTrackerUsername, "username", "must be 1 to 200 characters")
	}
	if token != nil {
		n := len(*token)
		v.Check(strings.TrimSpace(*token) != "" && n <= MaxTrackerToken, "api_token", "must be 1 to 1000 characters, not blank")
		v.Check(!strings.ContainsAny(*token, "\r\n"), "api_token", "must be one line")
	}
	if project != nil {
		v.Check(trackerProjectKey.MatchString(*project), "project_key", "must be 2 to 10 characters: an upper-case letter, then upper-case letters, digits or underscores")
	}
	if pm != nil {
		for _, f := range []struct{ name, val string }{{"critical", pm.Critical}, {"high", pm.High}, {"medium", pm.Medium}, {"low", pm.Low}} {
			v.Check(utf8.RuneCountInString(strings.TrimSpace(f.val)) <= MaxTrackerPriority, "sync_settings.priority_mapping."+f.name, "must be at most 60 characters")
		}
	}
}

// last4 is the end of a token that identifies it in answers.
func last4(token string) string {
	if len(token) <= 4 {
		return ""
	}
	return token[len(token)-4:]
}

// CreateTrackerIntegration stores a tracker integration for p's own
// organization and environment (at most MaxTrackersPerTenant), its API
// token sealed. Errors: VALIDATION_ERROR (username, api_token,
// project_key, sync_settings.priority_mapping.*), RESOURCE_LIMIT_EXCEEDED,
// INTERNAL_ERROR (no sealer).
func (s *Store) CreateTrackerIntegration(ctx context.Context, p *models.Principal, spec TrackerSpec) (*TrackerIntegration, error) {
	var v models.Validator
	checkTrackerFields(&v, &spec.Username, &spec.APIToken, &spec.ProjectKey, &spec.PriorityMapping)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if s.core.Sealer == nil {
		return nil, models.Internal(errors.New("the store has no sealer for secrets"))
	}
	c := &TrackerIntegration{ID: models.NewID(PrefixTrackerIntegration), TrackerURL: strings.TrimRight(spec.TrackerURL, "/"),
		Username: strings.TrimSpace(spec.Username), APITokenLast4: last4(spec.APIToken), ProjectKey: spec.ProjectKey,
		CreateIssues: spec.CreateIssues, SyncComments: spec.SyncComments, PriorityMapping: spec.PriorityMapping.withDefaults(),
		Active: spec.Active, CreatedBy: p.ID}
	c.APITokenSealed = s.core.Sealer.Seal(BindTrackerToken(c.ID), spec.APIToken)
	if err := s.createCapped(ctx, p, &TrackerIntegration{}, c, MaxTrackersPerTenant, "tracker_integrations", "tracker integrations"); err != nil {
		return nil, err
	}
	return c, nil
}

// GetTrackerIntegration returns a tracker integration visible to p.
// Errors: NOT_FOUND.
func (s *Store) GetTrackerIntegration(ctx context.Context, p *models.Principal, id string) (*TrackerIntegration, error) {
	return s.TrackerIntegrationIn(ctx, p.Scope(), id)
}

// TrackerIntegrationIn returns a tracker integration in scope. Errors: NOT_FOUND.
func (s *Store) TrackerIntegrationIn(ctx context.Context, scope models.Scope, id string) (*TrackerIntegration, error) {
	var c TrackerIntegration
	err := s.core.In(ctx, scope).Where("id = ?", id).Take(&c).Error
	return &c, models.NotFoundOr(err, "tracker integration")
}

// TrackerToken opens the integration's API token. Errors: INTERNAL_ERROR
// (no sealer, or a value no configured key opens).
func (s *Store) TrackerToken(c *TrackerIntegration) (string, error) {
	if s.core.Sealer == nil {
		return "", models.Internal(errors.New("the store has no sealer for secrets"))
	}
	tok, err := s.core.Sealer.Open(BindTrackerToken(c.ID), c.APITokenSealed)
	if err != nil {
		return "", models.Internal(err)
	}
	return tok, nil
}

var trackerSorts = models.SortFields{"created_at": "created_at", "project_key": "project_key"}

// ListTrackerIntegrations returns a page of the tracker integrations
// visible to p. Errors: VALIDATION_ERROR (sort).
func (s *Store) ListTrackerIntegrations(ctx context.Context, p *models.Principal, page models.PageRequest) ([]TrackerIntegration, int64, error) {
	var out []TrackerIntegration
	total, err := models.Paginate(s.core.In(ctx, p.Scope()).Model(&TrackerIntegration{}), page, trackerSorts, &out)
	return out, total, err
}

// UpdateTrackerIntegration applies a patch whose URL is already checked; a
// new API token is sealed, a priority mapping replaces the old one (blank
// names take the defaults). Errors: NOT_FOUND, VALIDATION_ERROR.
func (s *Store) UpdateTrackerIntegration(ctx context.Context, p *models.Principal, id string, patch TrackerPatch) (*TrackerIntegration, error) {
	var v models.Validator
	checkTrackerFields(&v, patch.Username, patch.APIToken, patch.ProjectKey, patch.PriorityMapping)
	if err := v.Err(); err != nil {
		return nil, err
	}
	if patch.APIToken != nil && s.core.Sealer == nil {
		return nil, models.Internal(errors.New("the store has no sealer for secrets"))
	}
	err := s.core.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var c TrackerIntegration
		if err := tx.Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "tracker integration")
		}
		if patch.TrackerURL != nil {
			c.TrackerURL = strings.TrimRight(*patch.TrackerURL, "/")
		}
		if patch.Username != nil {
			c.Username = strings.TrimSpace(*patch.Username)
		}
		if patch.APIToken != nil {
			c.APITokenSealed, c.APITokenLast4 = s.core.Sealer.Seal(BindTrackerToken(c.ID), *patch.APIToken), last4(*patch.APIToken)
		}
		if patch.ProjectKey != nil {
			c.ProjectKey = *patch.ProjectKey
		}
		if patch.CreateIssues != nil {
			c.CreateIssues = *patch.CreateIssues
		}
		if patch.SyncComments != nil {
			c.SyncComments = *patch.SyncComments
		}
		if patch.PriorityMapping != nil {
			c.PriorityMapping = patch.PriorityMapping.withDefaults()
		}
		if patch.Active != nil {
			c.Active = *patch.Active
		}
		c.UpdatedAt = s.now()
		return models.DBErr(tx.Save(&c).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.GetTrackerIntegration(ctx, p, id)
}

// DeleteTrackerIntegration removes a tracker integration with its links
// and comment marks; the issues stay in the tracker and the imported
// comments on the tickets. Its sync workflow ends at its next round.
// Errors: NOT_FOUND.
func (s *Store) DeleteTrackerIntegration(ctx context.Context, p *models.Principal, id string) error {
	return s.core.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var c TrackerIntegration
		if err := tx.Where("id = ?", id).Take(&c).Error; err != nil {
			return models.NotFoundOr(err, "tracker integration")
		}
		if err := tx.Where("integration_id = ?", id).Delete(&TrackerComment{}).Error; err != nil {
			return models.DBErr(err)
		}
		if err := tx.Where("integration_id = ?", id).Delete(&TrackerLink{}).Error; err != nil {
			return models.DBErr(err)
		}
		return models.DBErr(tx.Where("id = ?", id).Delete(&TrackerIntegration{}).Error)
	})
}

// RecordTrackerError notes the last failed call of an integration ("" clears it).
func (s *Store) RecordTrackerError(ctx context.Context, c *TrackerIntegration, msg string) error {
	var at *time.Time
	if msg != "" {
		now := s.now()
		at = &now
	}
	err := s.core.In(ctx, c.Scope()).Model(&TrackerIntegration{}).Where("id = ?", c.ID).
		Updates(map[string]any{"last_error": models.Truncate(msg, 500), "last_error_at": at}).Error
	return models.DBErr(err)
}

// ActiveTrackerIntegrations returns the active tracker integrations of an
// organization and environment, oldest first (id, tenant and sync
// settings only; never the token).
func (s *Store) ActiveTrackerIntegrations(ctx context.Context, scope models.Scope) ([]TrackerIntegration, error) {
	var out []TrackerIntegration
	err := s.core.In(ctx, scope).Select("id", "organization_id", "environment", "create_issues", "sync_comments").
		Where("active = ?", true).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}
