package migrate

import (
	"gorm.io/gorm"
)

// Migration 202611260012_access_restrictions: the organizations' access
// policy (JSON) and the IP allow-lists (JSON) of users and OAuth clients.

// organizationV0012 holds the column migration 0012 adds to organizations.
type organizationV0012 struct {
	AccessPolicy string `gorm:"type:text"`
}

func (organizationV0012) TableName() string { return "organizations" }

// userV0012 holds the column migration 0012 adds to users.
type userV0012 struct {
	IPAllowList string `gorm:"type:text"`
}

func (userV0012) TableName() string { return "users" }

// oauthClientV0012 holds the column migration 0012 adds to o_auth_clients.
type oauthClientV0012 struct {
	IPAllowList string `gorm:"type:text"`
}

func (oauthClientV0012) TableName() string { return "o_auth_clients" }

// migrateAccessRestrictions adds the access policy and the allow-lists.
func migrateAccessRestrictions(tx *gorm.DB) error {
	if err := addColumns(tx, &organizationV0012{}, "AccessPolicy"); err != nil {
		return err
	}
	if err := addColumns(tx, &userV0012{}, "IPAllowList"); err != nil {
		return err
	}
	return addColumns(tx, &oauthClientV0012{}, "IPAllowList")
}

// rollbackAccessRestrictions drops them.
func rollbackAccessRestrictions(tx *gorm.DB) error {
	if err := dropColumns(tx, &oauthClientV0012{}, "IPAllowList"); err != nil {
		return err
	}
	if err := dropColumns(tx, &userV0012{}, "IPAllowList"); err != nil {
		return err
	}
	return dropColumns(tx, &organizationV0012{}, "AccessPolicy")
}
