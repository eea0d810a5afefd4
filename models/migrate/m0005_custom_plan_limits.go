package migrate

import "gorm.io/gorm"

// Migration 202611220005_custom_plan_limits: the limits of an
// organization's custom plan (0 = unlimited).

// organizationV0005 holds the columns migration 0005 adds to organizations.
type organizationV0005 struct {
	CustomHourly     int `gorm:"not null;default:0"`
	CustomBurst      int `gorm:"not null;default:0"`
	CustomConcurrent int `gorm:"not null;default:0"`
}

func (organizationV0005) TableName() string { return "organizations" }

// customPlanLimitFields are the fields of organizationV0005.
func customPlanLimitFields() []string {
	return []string{"CustomHourly", "CustomBurst", "CustomConcurrent"}
}

// migrateCustomPlanLimits adds the custom plan limits.
func migrateCustomPlanLimits(tx *gorm.DB) error {
	return addColumns(tx, &organizationV0005{}, customPlanLimitFields()...)
}

// rollbackCustomPlanLimits drops them.
func rollbackCustomPlanLimits(tx *gorm.DB) error {
	return dropColumns(tx, &organizationV0005{}, customPlanLimitFields()...)
}
