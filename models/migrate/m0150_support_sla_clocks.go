package migrate

import (
	"time"

	"gorm.io/gorm"
)

// supportTicketSLAV5 is the part of support_tickets migration 202611260150
// adds: the SLA clock's cycle, policy, replay mark and next breach.
type supportTicketSLAV5 struct {
	ID              string     `gorm:"primaryKey;size:40"`
	SLACycle        int        `gorm:"not null;default:1"`
	SLAPolicyID     string     `gorm:"size:40"`
	SLASyncedAt     *time.Time ``
	SLANextBreachAt *time.Time `gorm:"index"`
}

func (supportTicketSLAV5) TableName() string { return "support_tickets" }

// supportSLAClockV5 is the support_sla_clocks table as migration
// 202611260150 creates it: one clock per metric and cycle of a ticket.
type supportSLAClockV5 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Environment    string     `gorm:"size:8;not null;index"`
	TicketID       string     `gorm:"size:40;not null;uniqueIndex:idx_support_sla_clocks_metric,priority:1"`
	Cycle          int        `gorm:"not null;uniqueIndex:idx_support_sla_clocks_metric,priority:2"`
	Metric         string     `gorm:"size:16;not null;uniqueIndex:idx_support_sla_clocks_metric,priority:3"`
	PolicyID       string     `gorm:"size:40"`
	CalendarID     string     `gorm:"size:40;index"`
	TargetMinutes  int        `gorm:"not null"`
	BusinessHours  bool       `gorm:"not null;default:false"`
	WarningPercent int        `gorm:"not null"`
	Calendar       string     `gorm:"type:text"`
	State          string     `gorm:"size:16;not null"`
	ElapsedSeconds int64      `gorm:"not null;default:0"`
	RunningSince   *time.Time ``
	StartedAt      time.Time  `gorm:"not null"`
	DueAt          *time.Time `gorm:"index"`
	WarnAt         *time.Time ``
	WarnedAt       *time.Time ``
	BreachedAt     *time.Time ``
	StoppedAt      *time.Time ``
	CreatedAt      time.Time  `gorm:"not null"`
	UpdatedAt      time.Time  `gorm:"not null"`
}

func (supportSLAClockV5) TableName() string { return "support_sla_clocks" }

// supportSLASegmentV5 is the support_sla_segments table as migration
// 202611260150 creates it: the ledger of the clocks.
type supportSLASegmentV5 struct {
	ID              string     `gorm:"primaryKey;size:40"`
	OrganizationID  string     `gorm:"size:40;not null;index"`
	Environment     string     `gorm:"size:8;not null;index"`
	ClockID         string     `gorm:"size:40;not null;index"`
	TicketID        string     `gorm:"size:40;not null;index"`
	Cycle           int        `gorm:"not null"`
	Metric          string     `gorm:"size:16;not null"`
	Seq             int        `gorm:"not null"`
	Kind            string     `gorm:"size:16;not null"`
	StartedAt       time.Time  `gorm:"not null"`
	EndedAt         *time.Time ``
	BusinessSeconds int64      `gorm:"not null;default:0"`
	Note            string     `gorm:"size:500"`
	CreatedAt       time.Time  `gorm:"not null"`
}

func (supportSLASegmentV5) TableName() string { return "support_sla_segments" }

// supportSLAEscalationV5 is the support_sla_escalations table as migration
// 202611260150 creates it: each firing of a ladder step, warning and
// manual escalation, once.
type supportSLAEscalationV5 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	TicketID       string    `gorm:"size:40;not null;uniqueIndex:idx_support_sla_escalations_step,priority:1"`
	Cycle          int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:2"`
	Metric         string    `gorm:"size:16;not null;uniqueIndex:idx_support_sla_escalations_step,priority:3"`
	Step           int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:4"`
	Repeat         int       `gorm:"not null;uniqueIndex:idx_support_sla_escalations_step,priority:5"`
	Action         string    `gorm:"size:32;not null"`
	Level          int       `gorm:"not null;default:0"`
	Reason         string    `gorm:"size:500"`
	Detail         string    `gorm:"size:1000"`
	ActorID        string    `gorm:"size:40;not null"`
	FiredAt        time.Time `gorm:"not null;index"`
	CreatedAt      time.Time `gorm:"not null"`
}

func (supportSLAEscalationV5) TableName() string { return "support_sla_escalations" }

// migrateSupportSLAClocksV5 adds the tickets' SLA columns and creates the
// clocks, ledger and escalations tables.
func migrateSupportSLAClocksV5(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportTicketSLAV5{}, &supportSLAClockV5{}, &supportSLASegmentV5{}, &supportSLAEscalationV5{})
}

// rollbackSupportSLAClocksV5 drops them.
func rollbackSupportSLAClocksV5(tx *gorm.DB) error {
	if err := tx.Migrator().DropTable(&supportSLAEscalationV5{}, &supportSLASegmentV5{}, &supportSLAClockV5{}); err != nil {
		return err
	}
	for _, col := range []string{"SLANextBreachAt", "SLASyncedAt", "SLAPolicyID", "SLACycle"} {
		if err := tx.Migrator().DropColumn(&supportTicketSLAV5{}, col); err != nil {
			return err
		}
	}
	return nil
}
