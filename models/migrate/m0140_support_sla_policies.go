package migrate

import (
	"time"

	"gorm.io/gorm"
)

// supportCalendarV0140 is the support_calendars table as migration
// 202611260140 creates it: a business calendar (working hours of each
// weekday as JSON, in an IANA time zone).
type supportCalendarV0140 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	Name      string    `gorm:"size:200;not null"`
	Timezone  string    `gorm:"size:64;not null"`
	Week      string    `gorm:"type:text;not null"`
	CreatedAt time.Time `gorm:"not null;index"`
	UpdatedAt time.Time `gorm:"not null"`
}

func (supportCalendarV0140) TableName() string { return "support_calendars" }

// supportCalendarHolidayV0140 is the support_calendar_holidays table as
// migration 202611260140 creates it: one holiday per calendar and date.
type supportCalendarHolidayV0140 struct {
	ID         string `gorm:"primaryKey;size:40"`
	CalendarID string `gorm:"size:40;not null;uniqueIndex:idx_support_calendar_holidays_date,priority:1"`
	Date       string `gorm:"size:10;not null;uniqueIndex:idx_support_calendar_holidays_date,priority:2"`
	Name       string `gorm:"size:200;not null"`
}

func (supportCalendarHolidayV0140) TableName() string { return "support_calendar_holidays" }

// supportSLAPolicyV0140 is the support_sla_policies table as migration
// 202611260140 creates it: at most one policy per (tier, category), ""
// meaning any.
type supportSLAPolicyV0140 struct {
	ID              string    `gorm:"primaryKey;size:40"`
	Name            string    `gorm:"size:200;not null"`
	Description     string    `gorm:"size:1000"`
	Tier            string    `gorm:"size:20;not null;uniqueIndex:idx_support_sla_policies_scope,priority:1"`
	Category        string    `gorm:"size:40;not null;uniqueIndex:idx_support_sla_policies_scope,priority:2"`
	CalendarID      string    `gorm:"size:40;not null;index"`
	WarningPercent  int       `gorm:"not null"`
	CreditPercentBP int       `gorm:"column:credit_percent_bp;not null"`
	Escalation      string    `gorm:"type:text"`
	CreatedAt       time.Time `gorm:"not null;index"`
	UpdatedAt       time.Time `gorm:"not null"`
}

func (supportSLAPolicyV0140) TableName() string { return "support_sla_policies" }

// supportSLAPolicyTargetV0140 is the support_sla_policy_targets table as
// migration 202611260140 creates it: a policy's targets of one priority.
type supportSLAPolicyTargetV0140 struct {
	PolicyID          string `gorm:"primaryKey;size:40"`
	Priority          string `gorm:"primaryKey;size:16"`
	ResponseMinutes   int    `gorm:"not null"`
	ResolutionMinutes int    `gorm:"not null"`
	UpdateMinutes     int    `gorm:"not null"`
	BusinessHours     bool   `gorm:"not null"`
}

func (supportSLAPolicyTargetV0140) TableName() string { return "support_sla_policy_targets" }

// migrateSupportSLAPoliciesV0140 creates the calendars, holidays, SLA
// policies and policy targets tables.
func migrateSupportSLAPoliciesV0140(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportCalendarV0140{}, &supportCalendarHolidayV0140{}, &supportSLAPolicyV0140{}, &supportSLAPolicyTargetV0140{})
}

// rollbackSupportSLAPoliciesV0140 drops the tables of migration 202611260140.
func rollbackSupportSLAPoliciesV0140(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&supportSLAPolicyTargetV0140{}, &supportSLAPolicyV0140{}, &supportCalendarHolidayV0140{}, &supportCalendarV0140{})
}
