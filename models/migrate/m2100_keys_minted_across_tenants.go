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
// user minted in another organization, then the keys minted by those keys,
// generation by generation (through keys already revoked too: a tenant that
// revoked the outsider's key did not revoke what that key had minted).
func migrateKeysMintedAcrossTenants(tx *gorm.DB) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var ids []string
	if err := tx.Raw("SELECT id FROM api_keys WHERE created_by IN "+
		"(SELECT u.id FROM users u JOIN organizations o ON o.id = u.organization_id WHERE o.provider = ? AND u.organization_id <> api_keys.organization_id)",
		false).Scan(&ids).Error; err != nil {
		return err
	}
	seen := map[string]bool{}
	for len(ids) > 0 {
		var next []string
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				next = append(next, id)
			}
		}
		if len(next) == 0 {
			break
		}
		if err := tx.Exec("UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE revoked_at IS NULL AND id IN ?", now, now, next).Error; err != nil {
			return err
		}
		ids = nil
		if err := tx.Raw("SELECT id FROM api_keys WHERE created_by IN ?", next).Scan(&ids).Error; err != nil {
			return err
		}
	}
	return nil
}

// rollbackKeysMintedAcrossTenants leaves the keys revoked.
func rollbackKeysMintedAcrossTenants(*gorm.DB) error { return nil }
