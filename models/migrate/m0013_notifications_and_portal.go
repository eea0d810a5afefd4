package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611260013_notifications_and_portal: the notification outbox
// gets sealed bodies and delivery attempts, second-factor challenges get
// codes sent by e-mail or SMS, SAML requests keep their relay target; second
// factor phones and portal sessions.

// contactNotificationV0013 is the contact_notifications table as migration 0013 migrates it.
type contactNotificationV0013 struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Environment    string     `gorm:"size:8;not null;index"`
	ServiceID      string     `gorm:"size:40;not null;index"`
	OperationID    string     `gorm:"size:64;index"`
	Channel        string     `gorm:"size:10;not null"`
	Role           string     `gorm:"size:20;not null"`
	Recipient      string     `gorm:"size:320;not null"`
	Template       string     `gorm:"size:60;not null"`
	Subject        string     `gorm:"size:300;not null"`
	Data           string     `gorm:"type:text"`
	BodySealed     string     `gorm:"type:text"`
	Attempts       int        `gorm:"not null;default:0"`
	LastError      string     `gorm:"size:500"`
	NextAttemptAt  *time.Time `gorm:"index"`
	CreatedAt      time.Time
	SentAt         *time.Time `gorm:"index"`
}

func (contactNotificationV0013) TableName() string { return "contact_notifications" }

// mfaChallengeV0013 is the mfa_challenges table as migration 0013 migrates it.
type mfaChallengeV0013 struct {
	ID         string    `gorm:"primaryKey;size:40"`
	UserID     string    `gorm:"size:40;not null;index"`
	Operation  string    `gorm:"size:300;not null"`
	Status     string    `gorm:"size:16;not null"`
	ExpiresAt  time.Time `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null"`
	VerifiedAt *time.Time
	CodeHash   string `gorm:"size:64"`
	CodeMethod string `gorm:"size:8"`
	CodeSentAt *time.Time
	CodeSends  int `gorm:"not null;default:0"`
}

func (mfaChallengeV0013) TableName() string { return "mfa_challenges" }

// samlRequestV0013 is the saml_requests table as migration 0013 migrates it.
type samlRequestV0013 struct {
	ID          string    `gorm:"primaryKey;size:100"`
	ExpiresAt   time.Time `gorm:"not null;index"`
	RelayTarget string    `gorm:"type:text"`
}

func (samlRequestV0013) TableName() string { return "saml_requests" }

// mfaPhoneV0013 is the mfa_phones table as migration 0013 migrates it.
type mfaPhoneV0013 struct {
	UserID        string `gorm:"primaryKey;size:40"`
	Number        string `gorm:"size:20;not null"`
	Confirmed     bool   `gorm:"not null;default:false"`
	CodeHash      string `gorm:"size:64"`
	CodeExpiresAt *time.Time
	CreatedAt     time.Time `gorm:"not null"`
	ConfirmedAt   *time.Time
}

func (mfaPhoneV0013) TableName() string { return "mfa_phones" }

// portalSessionV0013 is the portal_sessions table as migration 0013 migrates it.
type portalSessionV0013 struct {
	TokenHash      string    `gorm:"primaryKey;size:64"`
	UserID         string    `gorm:"size:40;not null;index"`
	OrganizationID string    `gorm:"size:40;not null"`
	CSRFToken      string    `gorm:"size:64;not null"`
	AuthMethod     string    `gorm:"size:16;not null"`
	Groups         string    `gorm:"size:1000"`
	CreatedAt      time.Time `gorm:"not null"`
	ExpiresAt      time.Time `gorm:"not null;index"`
	EndedAt        *time.Time
}

func (portalSessionV0013) TableName() string { return "portal_sessions" }

// migrateNotificationsAndPortal adds the new columns and creates the new
// tables.
func migrateNotificationsAndPortal(tx *gorm.DB) error {
	return tx.AutoMigrate(&contactNotificationV0013{}, &mfaChallengeV0013{}, &samlRequestV0013{}, &mfaPhoneV0013{}, &portalSessionV0013{})
}

// rollbackNotificationsAndPortal drops the new tables (the added columns
// stay).
func rollbackNotificationsAndPortal(tx *gorm.DB) error {
	return tx.Migrator().DropTable(&portalSessionV0013{}, &mfaPhoneV0013{})
}
