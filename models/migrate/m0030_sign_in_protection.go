package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611260030_sign_in_protection (recorded as
// 202611260030_password_lockout by databases of the release that introduced
// it, which run it again under its new ID: it adds only what is missing):
// the users' password lockout and the SAML requests' browser binding.

// userV0030 holds the columns migration 0030 adds to users.
type userV0030 struct {
	FailedLogins int `gorm:"not null;default:0"`
	LockedUntil  *time.Time
}

func (userV0030) TableName() string { return "users" }

// samlRequestV0030 holds the column migration 0030 adds to saml_requests.
type samlRequestV0030 struct {
	BrowserHash string `gorm:"size:64"`
}

func (samlRequestV0030) TableName() string { return "saml_requests" }

// migrateSignInProtection adds the lockout and browser binding columns.
func migrateSignInProtection(tx *gorm.DB) error {
	if err := addColumns(tx, &userV0030{}, "FailedLogins", "LockedUntil"); err != nil {
		return err
	}
	return addColumns(tx, &samlRequestV0030{}, "BrowserHash")
}

// rollbackSignInProtection drops them.
func rollbackSignInProtection(tx *gorm.DB) error {
	if err := dropColumns(tx, &samlRequestV0030{}, "BrowserHash"); err != nil {
		return err
	}
	return dropColumns(tx, &userV0030{}, "FailedLogins", "LockedUntil")
}
