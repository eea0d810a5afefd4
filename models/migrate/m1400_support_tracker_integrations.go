package migrate

import (
	"time"

	"gorm.io/gorm"
)

// supportTrackerIntegrationV1400 is the support_tracker_integrations table
// as migration 202611261400 creates it: an issue tracker (trk_) that new
// tickets of its organization and environment become issues of, its API
// token sealed.
type supportTrackerIntegrationV1400 struct {
	ID              string `gorm:"primaryKey;size:40"`
	OrganizationID  string `gorm:"size:40;not null;index"`
	Environment     string `gorm:"size:8;not null;index"`
	TrackerURL      string `gorm:"size:2000;not null"`
	Username        string `gorm:"size:200;not null"`
	APITokenSealed  string `gorm:"type:text;not null"`
	APITokenLast4   string `gorm:"size:4;not null"`
	ProjectKey      string `gorm:"size:10;not null"`
	CreateIssues    bool   `gorm:"not null"`
	SyncComments    bool   `gorm:"not null"`
	PriorityMapping string `gorm:"type:text;not null"`
	Active          bool   `gorm:"not null;index"`
	LastError       string `gorm:"size:500"`
	LastErrorAt     *time.Time
	CreatedBy       string    `gorm:"size:40"`
	CreatedAt       time.Time `gorm:"not null;index"`
	UpdatedAt       time.Time
}

func (supportTrackerIntegrationV1400) TableName() string { return "support_tracker_integrations" }

// supportTrackerLinkV1400 is the support_tracker_links table as migration
// 202611261400 creates it: a ticket's issue in an integration's tracker,
// one per integration and ticket.
type supportTrackerLinkV1400 struct {
	ID               string `gorm:"primaryKey;size:40"`
	OrganizationID   string `gorm:"size:40;not null;index"`
	Environment      string `gorm:"size:8;not null;index"`
	IntegrationID    string `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_links_ticket,priority:1"`
	TicketID         string `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_links_ticket,priority:2"`
	IssueKey         string `gorm:"size:100;not null"`
	IssueID          string `gorm:"size:40"`
	Priority         string `gorm:"size:60"`
	Adopted          bool   `gorm:"not null;default:false"`
	RemoteStatus     string `gorm:"size:100"`
	StatusCheckedAt  *time.Time
	CommentsPolledAt *time.Time
	CreatedAt        time.Time `gorm:"not null;index"`
	UpdatedAt        time.Time
}

func (supportTrackerLinkV1400) TableName() string { return "support_tracker_links" }

// supportTrackerCommentV1400 is the support_tracker_comments table as
// migration 202611261400 creates it: a comment synced by an integration,
// unique per integration on our comment id and on the tracker's.
type supportTrackerCommentV1400 struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	Environment    string    `gorm:"size:8;not null;index"`
	IntegrationID  string    `gorm:"size:40;not null;uniqueIndex:ux_support_tracker_comments_local,priority:1;uniqueIndex:ux_support_tracker_comments_remote,priority:1"`
	TicketID       string    `gorm:"size:40;not null;index"`
	CommentID      string    `gorm:"size:64;not null;uniqueIndex:ux_support_tracker_comments_local,priority:2"`
	RemoteID       string    `gorm:"size:64;not null;uniqueIndex:ux_support_tracker_comments_remote,priority:2"`
	Direction      string    `gorm:"size:8;not null"`
	CreatedAt      time.Time `gorm:"not null"`
}

func (supportTrackerCommentV1400) TableName() string { return "support_tracker_comments" }

// migrateSupportTrackerV1400 creates the tracker integrations, links and
// synced comments tables.
func migrateSupportTrackerV1400(tx *gorm.DB) error {
	return tx.AutoMigrate(&supportTrackerIntegrationV1400{}, &supportTrackerLinkV1400{}, &supportTrackerCommentV1400{})
}

// rollbackSupportTrackerV1400 drops them.
func rollbackSupportTrackerV1400(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&supportTrackerCommentV1400{}, &supportTrackerLinkV1400{}, &supportTrackerIntegrationV1400{})
}
