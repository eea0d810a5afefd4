package migrate

import "gorm.io/gorm"

// Migration 202611272000_staff_outside_provider: staff roles (admin, agent)
// exist only in the provider's organization, because staff act across
// every organization. An administrator's POST /v1/users could give a
// customer organization's user one; this demotes any such user to
// customer. Their tokens were already read as a customer's; the row now
// says so too, so that no other reader of the role (ticket assignment,
// team membership, the portal) takes them for provider staff. Data only:
// the schema does not change, and the rollback leaves the users as they
// are (the roles were never valid).

// migrateStaffOutsideProvider demotes the staff users of customer
// organizations.
func migrateStaffOutsideProvider(tx *gorm.DB) error {
	return tx.Exec("UPDATE users SET role = ? WHERE role IN (?, ?) AND organization_id NOT IN (SELECT id FROM organizations WHERE provider = ?)",
		"customer", "admin", "agent", true).Error
}

// rollbackStaffOutsideProvider leaves the users as they are.
func rollbackStaffOutsideProvider(*gorm.DB) error { return nil }
