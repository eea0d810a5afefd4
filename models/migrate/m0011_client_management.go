package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611260011_client_management: OAuth clients get updated_at and
// secret_rotated_at; client certificates get revoked_at, and their
// fingerprint is unique only among unrevoked registrations (a revoked
// certificate can be registered again).

// oauthClientV0011 holds the columns migration 0011 adds to o_auth_clients.
type oauthClientV0011 struct {
	UpdatedAt       time.Time
	SecretRotatedAt *time.Time
}

func (oauthClientV0011) TableName() string { return "o_auth_clients" }

// clientCertificateV0011 holds the column migration 0011 adds to
// client_certificates and the fingerprint's new unique index.
type clientCertificateV0011 struct {
	FingerprintSHA256 string `gorm:"size:64;not null;uniqueIndex:idx_client_certificates_active_fingerprint,where:revoked_at IS NULL"`
	RevokedAt         *time.Time
}

func (clientCertificateV0011) TableName() string { return "client_certificates" }

// The fingerprint's unique index before and after migration 0011.
const (
	certificateFingerprintIndexV0010 = "idx_client_certificates_fingerprint_sha256"
	certificateFingerprintIndexV0011 = "idx_client_certificates_active_fingerprint"
)

// migrateClientManagement adds the columns, replaces the fingerprint's
// unique index and dates the clients' last update at their creation.
func migrateClientManagement(tx *gorm.DB) error {
	if err := addColumns(tx, &oauthClientV0011{}, "UpdatedAt", "SecretRotatedAt"); err != nil {
		return err
	}
	if err := addColumns(tx, &clientCertificateV0011{}, "RevokedAt"); err != nil {
		return err
	}
	m := tx.Migrator()
	if m.HasIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0010) {
		if err := m.DropIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0010); err != nil {
			return err
		}
	}
	if !m.HasIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0011) {
		if err := m.CreateIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0011); err != nil {
			return err
		}
	}
	return tx.Exec("UPDATE o_auth_clients SET updated_at = created_at WHERE updated_at IS NULL").Error
}

// rollbackClientManagement undoes migrateClientManagement; revoked
// certificate registrations are deleted (the old unique index allows one
// row per fingerprint).
func rollbackClientManagement(tx *gorm.DB) error {
	m := tx.Migrator()
	if m.HasIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0011) {
		if err := m.DropIndex(&clientCertificateV0011{}, certificateFingerprintIndexV0011); err != nil {
			return err
		}
	}
	if err := tx.Exec("DELETE FROM client_certificates WHERE revoked_at IS NOT NULL").Error; err != nil {
		return err
	}
	if err := dropColumns(tx, &clientCertificateV0011{}, "RevokedAt"); err != nil {
		return err
	}
	if err := dropColumns(tx, &oauthClientV0011{}, "UpdatedAt", "SecretRotatedAt"); err != nil {
		return err
	}
	return tx.Exec("CREATE UNIQUE INDEX IF NOT EXISTS " + certificateFingerprintIndexV0010 + " ON client_certificates (fingerprint_sha256)").Error
}
