package catalog

import (
	"context"
	"fmt"

	"github.com/telcoplatform/platform/models"
)

// ProvisioningTemplate is a ready-made order for one of the catalog's
// services (POST /services/provision, spec 2.2): the service type and the
// defaults that customizations may override. Reference data shared by every
// tenant.
type ProvisioningTemplate struct {
	ID               string `gorm:"primaryKey;size:60" json:"id"`
	Name             string `gorm:"size:200;not null" json:"name"`
	Description      string `gorm:"size:2000" json:"description"`
	CatalogServiceID string `gorm:"size:60;not null;index" json:"catalog_service_id"`
	ServiceType      string `gorm:"size:40;not null" json:"service_type"`
	DefaultBandwidth string `gorm:"size:20;not null" json:"default_bandwidth"`
	DefaultSLA       string `gorm:"size:20;not null" json:"default_sla"`
	Redundancy       string `gorm:"size:20;not null" json:"redundancy"`
	Monitoring       string `gorm:"size:20;not null" json:"monitoring"`
	// SandboxOnly templates exist only in the test environment.
	SandboxOnly bool `gorm:"not null;default:false" json:"sandbox_only,omitempty"`
	// FailAtStep is a sandbox magic value: in the test environment, orders
	// from this template fail at the named provisioning step.
	FailAtStep string `gorm:"size:40" json:"fail_at_step,omitempty"`
	Position   int    `gorm:"not null" json:"-"`
}

// Template returns the provisioning template id as seen from environment
// env. Errors: VALIDATION_ERROR (unknown template, reported as
// service_template).
// It reads the reference data kept in memory (ReferenceTTL).
func (s *Store) Template(ctx context.Context, env models.Environment, id string) (*ProvisioningTemplate, error) {
	ref, err := s.reference(ctx)
	if err != nil {
		return nil, err
	}
	t, ok := ref.templates[id]
	if !ok || (t.SandboxOnly && env != models.EnvTest) {
		return nil, models.Invalid(models.FieldIssue{Field: "service_template", Issue: fmt.Sprintf("no provisioning template %q; see GET /v1/services/provision/templates", id)})
	}
	return &t, nil
}

// Templates returns the provisioning templates visible in environment env.
func (s *Store) Templates(ctx context.Context, env models.Environment) ([]ProvisioningTemplate, error) {
	var out []ProvisioningTemplate
	q := s.In(ctx, models.SystemScope()).Order("position")
	if env != models.EnvTest {
		q = q.Where("sandbox_only = ?", false)
	}
	err := q.Find(&out).Error
	return out, models.DBErr(err)
}
