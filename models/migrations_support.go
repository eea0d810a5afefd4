package models

import (
	"time"

	"gorm.io/gorm"
)

// The support area's tables as migration 202611260070 creates them. The
// domain types live in package models/support (which imports this
// package), so the migration keeps its own frozen copy of each table: a
// later change to a domain type needs a new migration, never an edit here.

type supportCategoryV1 struct {
	ID              string    `gorm:"primaryKey;size:40"`
	Name            string    `gorm:"size:200;not null"`
	Description     string    `gorm:"size:1000"`
	DefaultPriority string    `gorm:"size:16;not null"`
	Position        int       `gorm:"not null;default:0"`
	CreatedAt       time.Time `gorm:"not null"`
	UpdatedAt       time.Time `gorm:"not null"`
}

func (supportCategoryV1) TableName() string { return "support_categories" }

type supportSubcategoryV1 struct {
	CategoryID          string `gorm:"primaryKey;size:40"`
	ID                  string `gorm:"primaryKey;size:40"`
	Name                string `gorm:"size:200;not null"`
	AutoAssign          string `gorm:"size:100"`
	EscalationThreshold string `gorm:"size:20"`
	Position            int    `gorm:"not null;default:0"`
}

func (supportSubcategoryV1) TableName() string { return "support_subcategories" }

type supportSLATargetV1 struct {
	CategoryID        string `gorm:"primaryKey;size:40"`
	Priority          string `gorm:"primaryKey;size:16"`
	ResponseMinutes   int    `gorm:"not null"`
	ResolutionMinutes int    `gorm:"not null"`
}

func (supportSLATargetV1) TableName() string { return "support_sla_targets" }

type supportCounterV1 struct {
	Name  string `gorm:"primaryKey;size:40"`
	Value int64  `gorm:"not null;default:0"`
}

func (supportCounterV1) TableName() string { return "support_counters" }

type supportTicketV1 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	Number               string     `gorm:"size:20;not null;uniqueIndex"`
	Title                string     `gorm:"size:200;not null"`
	Description          string     `gorm:"type:text"`
	CustomerID           string     `gorm:"size:40;not null;index"`
	Status               string     `gorm:"size:16;not null;index"`
	Priority             string     `gorm:"size:16;not null;index"`
	Severity             string     `gorm:"size:32"`
	Category             string     `gorm:"size:40;not null;index"`
	Subcategory          string     `gorm:"size:40"`
	ServiceAffected      string     `gorm:"size:64"`
	Contact              string     `gorm:"type:text"`
	Location             string     `gorm:"type:text"`
	Metadata             string     `gorm:"type:text"`
	AssignedTo           string     `gorm:"size:40;index"`
	SLAResponseMinutes   int        `gorm:"not null"`
	SLAResolutionMinutes int        `gorm:"not null"`
	ResponseDue          time.Time  `gorm:"not null"`
	ResolutionDue        time.Time  `gorm:"not null"`
	RespondedAt          *time.Time ``
	Escalated            bool       `gorm:"not null;default:false"`
	EscalationLevel      int        `gorm:"not null;default:0"`
	EscalationReason     string     `gorm:"size:500"`
	EscalatedAt          *time.Time ``
	EstimatedResolution  *time.Time ``
	InternalNotes        string     `gorm:"type:text"`
	RootCause            string     `gorm:"size:2000"`
	VendorTicket         string     `gorm:"size:100"`
	CreatedBy            string     `gorm:"size:40;not null"`
	ResolvedAt           *time.Time ``
	ClosedAt             *time.Time ``
	CreatedAt            time.Time  `gorm:"not null;index"`
	UpdatedAt            time.Time  `gorm:"not null"`
}

func (supportTicketV1) TableName() string { return "support_tickets" }

type supportTicketHistoryV1 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	TicketID  string    `gorm:"size:40;not null;index"`
	Field     string    `gorm:"size:40;not null"`
	OldValue  string    `gorm:"type:text"`
	NewValue  string    `gorm:"type:text"`
	ActorID   string    `gorm:"size:40;not null"`
	ActorType string    `gorm:"size:16;not null"`
	Internal  bool      `gorm:"not null;default:false"`
	CreatedAt time.Time `gorm:"not null;index"`
}

func (supportTicketHistoryV1) TableName() string { return "support_ticket_history" }

type supportCommentV1 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	TicketID    string    `gorm:"size:40;not null;index"`
	Content     string    `gorm:"type:text;not null"`
	Type        string    `gorm:"size:32;not null"`
	Visibility  string    `gorm:"size:16;not null"`
	AuthorType  string    `gorm:"size:16;not null"`
	AuthorID    string    `gorm:"size:40;not null"`
	AuthorName  string    `gorm:"size:200"`
	AuthorEmail string    `gorm:"size:320"`
	Metadata    string    `gorm:"type:text"`
	CreatedAt   time.Time `gorm:"not null;index"`
}

func (supportCommentV1) TableName() string { return "support_comments" }

// supportTablesV1 lists the tables of migration 202611260070, parents first.
func supportTablesV1() []any {
	return []any{&supportCategoryV1{}, &supportSubcategoryV1{}, &supportSLATargetV1{}, &supportCounterV1{},
		&supportTicketV1{}, &supportTicketHistoryV1{}, &supportCommentV1{}}
}

// migrateSupportV1 creates the support tables and the ticket-number counter
// row (the one sequence of TKT- numbers for the platform).
func migrateSupportV1(tx *gorm.DB) error {
	if err := tx.AutoMigrate(supportTablesV1()...); err != nil {
		return err
	}
	var n int64
	if err := tx.Model(&supportCounterV1{}).Where("name = ?", "ticket_number").Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return tx.Create(&supportCounterV1{Name: "ticket_number"}).Error
	}
	return nil
}

// rollbackSupportV1 drops the support tables, children first.
func rollbackSupportV1(tx *gorm.DB) error {
	tables := supportTablesV1()
	for i := len(tables) - 1; i >= 0; i-- {
		if err := tx.Migrator().DropTable(tables[i]); err != nil {
			return err
		}
	}
	return nil
}

// supportRoutingRuleV2 is the routing rules table as migration
// 202611260080 creates it (frozen, like the tables above).
type supportRoutingRuleV2 struct {
	ID                   string    `gorm:"primaryKey;size:40"`
	Name                 string    `gorm:"size:200;not null"`
	Category             string    `gorm:"size:40"`
	Priorities           string    `gorm:"type:text"`
	Keywords             string    `gorm:"type:text"`
	CustomerTier         string    `gorm:"size:20"`
	AssignTo             string    `gorm:"size:40"`
	Notify               string    `gorm:"type:text"`
	EscalateAfterMinutes int       `gorm:"not null;default:0"`
	AutoUpdateMinutes    int       `gorm:"not null;default:0"`
	Active               bool      `gorm:"not null;default:false;index"`
	CreatedBy            string    `gorm:"size:40;not null"`
	CreatedAt            time.Time `gorm:"not null;index"`
	UpdatedAt            time.Time `gorm:"not null"`
}

func (supportRoutingRuleV2) TableName() string { return "support_routing_rules" }

// migrateSupportRoutingV2 creates the routing rules table.
func migrateSupportRoutingV2(tx *gorm.DB) error { return tx.AutoMigrate(&supportRoutingRuleV2{}) }

// rollbackSupportRoutingV2 drops the routing rules table.
func rollbackSupportRoutingV2(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&supportRoutingRuleV2{})
}

// supportArticleV3 is the knowledge base articles table as migration
// 202611260090 creates it (frozen, like the tables above).
type supportArticleV3 struct {
	ID          string     `gorm:"primaryKey;size:40"`
	Title       string     `gorm:"size:200;not null"`
	Body        string     `gorm:"type:text;not null"`
	Category    string     `gorm:"size:40;not null;index"`
	Tags        string     `gorm:"type:text"`
	Status      string     `gorm:"size:16;not null;index"`
	CreatedBy   string     `gorm:"size:40;not null"`
	UpdatedBy   string     `gorm:"size:40;not null"`
	PublishedAt *time.Time ``
	CreatedAt   time.Time  `gorm:"not null;index"`
	UpdatedAt   time.Time  `gorm:"not null;index"`
}

func (supportArticleV3) TableName() string { return "support_articles" }

// supportFeedbackV3 is the ticket feedback table as migration
// 202611260090 creates it: one row per ticket (unique ticket_id).
type supportFeedbackV3 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	TicketID   string    `gorm:"size:40;not null;uniqueIndex"`
	CustomerID string    `gorm:"size:40;not null;index"`
	Rating     int       `gorm:"not null"`
	Comment    string    `gorm:"size:2000"`
	CreatedBy  string    `gorm:"size:40;not null"`
	CreatedAt  time.Time `gorm:"not null;index"`
}

func (supportFeedbackV3) TableName() string { return "support_feedback" }

// migrateSupportKnowledgeV3 creates the knowledge base and feedback tables.
func migrateSupportKnowledgeV3(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportArticleV3{}, &supportFeedbackV3{})
}

// rollbackSupportKnowledgeV3 drops the knowledge base and feedback tables.
func rollbackSupportKnowledgeV3(tx *gorm.DB) error {
	if err := tx.Migrator().DropTable(&supportFeedbackV3{}); err != nil {
		return err
	}
	return tx.Migrator().DropTable(&supportArticleV3{})
}

// supportTicketNotificationV3 is the support_ticket_notifications table as
// migration 202611260100 creates it: one row per message a ticket sent
// (its id is the outbox row's id).
type supportTicketNotificationV3 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	TicketID      string    `gorm:"size:40;not null;index"`
	Channel       string    `gorm:"size:10;not null"`
	Recipient     string    `gorm:"size:320;not null"`
	RecipientName string    `gorm:"size:200"`
	Role          string    `gorm:"size:40"`
	Template      string    `gorm:"size:60;not null"`
	Subject       string    `gorm:"size:300"`
	Trigger       string    `gorm:"size:40;not null"`
	CreatedBy     string    `gorm:"size:40;not null"`
	CreatedAt     time.Time `gorm:"not null;index"`
}

func (supportTicketNotificationV3) TableName() string { return "support_ticket_notifications" }

// migrateSupportNotificationsV3 creates the ticket notifications table.
func migrateSupportNotificationsV3(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportTicketNotificationV3{})
}

// rollbackSupportNotificationsV3 drops the ticket notifications table.
func rollbackSupportNotificationsV3(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&supportTicketNotificationV3{})
}

// supportAttachmentV4 is the support_attachments table as migration
// 202611260110 creates it: the metadata of a file stored in the blob store
// (BLOB_URL), attached to a ticket (comment_id empty) or to one of its
// comments, with the SHA-256 of its content.
type supportAttachmentV4 struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	TicketID    string    `gorm:"size:40;not null;index"`
	CommentID   string    `gorm:"size:40;index"`
	Filename    string    `gorm:"size:255;not null"`
	ContentType string    `gorm:"size:100;not null"`
	Size        int64     `gorm:"not null"`
	SHA256      string    `gorm:"column:sha256;size:64;not null"`
	StorageKey  string    `gorm:"size:200;not null"`
	CreatedBy   string    `gorm:"size:40;not null"`
	CreatedAt   time.Time `gorm:"not null;index"`
}

func (supportAttachmentV4) TableName() string { return "support_attachments" }

// supportTeamV4 is the support_teams table as migration 202611260110
// creates it: a group of provider agents, usually the team of one
// category.
type supportTeamV4 struct {
	ID        string    `gorm:"primaryKey;size:40"`
	Name      string    `gorm:"size:200;not null"`
	Category  string    `gorm:"size:40;index"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

func (supportTeamV4) TableName() string { return "support_teams" }

// supportTeamMemberV4 is the support_team_members table as migration
// 202611260110 creates it: one row per agent of a team.
type supportTeamMemberV4 struct {
	TeamID    string    `gorm:"primaryKey;size:40"`
	UserID    string    `gorm:"primaryKey;size:40;index"`
	CreatedAt time.Time `gorm:"not null"`
}

func (supportTeamMemberV4) TableName() string { return "support_team_members" }

// migrateSupportAttachmentsTeamsV4 creates the attachments, teams and team
// members tables.
func migrateSupportAttachmentsTeamsV4(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportAttachmentV4{}, &supportTeamV4{}, &supportTeamMemberV4{})
}

// rollbackSupportAttachmentsTeamsV4 drops the attachments, teams and team
// members tables.
func rollbackSupportAttachmentsTeamsV4(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&supportTeamMemberV4{}, &supportTeamV4{}, &supportAttachmentV4{})
}
