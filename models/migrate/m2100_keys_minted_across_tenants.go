package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611272100_keys_minted_across_tenants: an API key minted in an
// organization by a user of another customer organization is revoked, with
// every key minted by such a key. Only provider staff act across
// organizations; a customer organization's user could do so only through
// the staff role that POST /v1/users wrongly let an administrator give
// (migration 2000 demoted those users). The keys that user minted in other
// tenants were keys of those tenants in an outsider's hands. Data only: the
// rollback leaves the keys revoked (they were never valid).

// migrateKeysMintedAcrossTenants revokes the keys a customer organization's
// user minted in another organization, then, until none is left, the keys
// minted by a key this migration revoked.
func migrateKeysMintedAcrossTenants(tx *gorm.DB) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	res := tx.Exec("UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE revoked_at IS NULL AND created_by IN "+
		"(SELECT u.id FROM users u JOIN organizations o ON o.id = u.organization_id WHERE o.provider = ? AND u.organization_id <> api_keys.organization_id)",
		now, now, false)
	for res.Error == nil && res.RowsAffected > 0 {
		res = tx.Exec("UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE revoked_at IS NULL AND created_by IN "+
			"(SELECT k.id FROM api_keys k WHERE k.revoked_at = ?)", now, now, now)
	}
	return res.Error
}

// rollbackKeysMintedAcrossTenants leaves the keys revoked.
func rollbackKeysMintedAcrossTenants(*gorm.DB) error { return nil }
