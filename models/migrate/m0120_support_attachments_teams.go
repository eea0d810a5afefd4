package migrate

import (
	"time"

	"gorm.io/gorm"
)

// supportAttachmentV4 is the support_attachments table as migration
// 202611260120 creates it: the metadata of a file stored in the blob store
// (BLOB_URL), attached to a ticket (comment_id empty) or to one of its
// comments, with the SHA-256 of its content.
type supportAttachmentV4 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	TicketID       string    `gorm:"size:40;not null;index"`
	CommentID      string    `gorm:"size:40;index"`
	Filename       string    `gorm:"size:255;not null"`
	ContentType    string    `gorm:"size:100;not null"`
	Size           int64     `gorm:"not null"`
	SHA256         string    `gorm:"column:sha256;size:64;not null"`
	StorageKey     string    `gorm:"size:200;not null"`
	CreatedBy      string    `gorm:"size:40;not null"`
	CreatedAt      time.Time `gorm:"not null;index"`
}

func (supportAttachmentV4) TableName() string { return "support_attachments" }

// supportTeamV4 is the support_teams table as migration 202611260120
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
// 202611260120 creates it: one row per agent of a team.
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
