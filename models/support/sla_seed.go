package support

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/businesstime"
)

// Ids of the seeded SLA calendar and policies.
const (
	SeedCalendarID       = "cal_standard"
	SeedDefaultPolicyID  = "slap_default"
	SeedStandardPolicyID = "slap_standard"
)

// seedSLA ensures the default SLA policy (any tier, any category: the
// DefaultSLATargets in calendar time), the "Standard business hours"
// calendar (UTC, Monday to Friday 08:00 to 18:00) and the standard tier's
// policy on it (low and medium counted in business hours). Rows that exist
// are kept unchanged; a policy's targets are written only when the seed
// creates the policy.
func (s *Store) seedSLA(ctx context.Context) error {
	now := s.now()
	var week [7][]businesstime.Interval
	for d := range week {
		week[d] = []businesstime.Interval{}
	}
	for d := time.Monday; d <= time.Friday; d++ {
		week[d] = []businesstime.Interval{{Start: 8 * 60, End: 18 * 60}}
	}
	cal := Calendar{ID: SeedCalendarID, Name: "Standard business hours", Timezone: "UTC", Week: week, CreatedAt: now, UpdatedAt: now}
	std := SLAPolicy{ID: SeedStandardPolicyID, Name: "Standard tier", Description: "Standard-tier services: low and medium priorities in business hours.",
		Tier: TierStandard, CalendarID: SeedCalendarID, WarningPercent: defaultWarningPercent, Escalation: []EscalationStep{}, CreatedAt: now, UpdatedAt: now}
	std.Targets = defaultPolicyTargets(std.ID)
	for i := range std.Targets {
		std.Targets[i].BusinessHours = std.Targets[i].Priority == PriorityLow || std.Targets[i].Priority == PriorityMedium
	}
	def := SLAPolicy{ID: SeedDefaultPolicyID, Name: "Default", Description: "Every ticket no other policy covers, in calendar time.",
		WarningPercent: defaultWarningPercent, Escalation: []EscalationStep{}, CreatedAt: now, UpdatedAt: now}
	def.Targets = defaultPolicyTargets(def.ID)
	err := s.core.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&cal).Error; err != nil {
			return err
		}
		for _, pol := range []*SLAPolicy{&def, &std} {
			res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(pol)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				continue
			}
			if err := writePolicyTargets(tx, pol); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("support seed: SLA policies: %w", err)
	}
	return nil
}
