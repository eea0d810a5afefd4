package migrate

import (
	"time"

	"gorm.io/gorm"
)

// Migration 202611220010_identity: signing keys, revoked tokens, server
// secrets, OAuth clients and tokens, device grants, second factors, client
// certificates, SAML requests and the audit log.

// signingKeyV0010 is the signing_keys table as migration 0010 migrates it.
type signingKeyV0010 struct {
	ID            string     `gorm:"primaryKey;size:40"`
	Algorithm     string     `gorm:"size:10;not null"`
	PrivateSealed string     `gorm:"type:text;not null"`
	PublicPEM     string     `gorm:"type:text;not null"`
	CreatedAt     time.Time  `gorm:"not null;index"`
	RetiredAt     *time.Time `gorm:"index"`
}

func (signingKeyV0010) TableName() string { return "signing_keys" }

// revokedTokenV0010 is the revoked_tokens table as migration 0010 migrates it.
type revokedTokenV0010 struct {
	JTI       string    `gorm:"primaryKey;size:64"`
	Subject   string    `gorm:"size:40;not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
	RevokedAt time.Time `gorm:"not null"`
	Reason    string    `gorm:"size:200"`
}

func (revokedTokenV0010) TableName() string { return "revoked_tokens" }

// serverSecretV0010 is the server_secrets table as migration 0010 migrates it.
type serverSecretV0010 struct {
	Name      string    `gorm:"primaryKey;size:40"`
	Sealed    string    `gorm:"type:text;not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (serverSecretV0010) TableName() string { return "server_secrets" }

// oauthClientV0010 is the o_auth_clients table as migration 0010 migrates it.
type oauthClientV0010 struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	Environment    string `gorm:"size:8;not null;index"`
	Name           string `gorm:"size:200;not null"`
	SecretHash     string `gorm:"size:100"`
	RedirectURIs   string `gorm:"type:text;not null"`
	GrantTypes     string `gorm:"type:text;not null"`
	Scopes         string `gorm:"type:text;not null"`
	Public         bool   `gorm:"not null;default:false"`
	CreatedAt      time.Time
}

func (oauthClientV0010) TableName() string { return "o_auth_clients" }

// oauthTokenV0010 is the o_auth_tokens table as migration 0010 migrates it.
type oauthTokenV0010 struct {
	Kind            string    `gorm:"primaryKey;size:16"`
	Signature       string    `gorm:"primaryKey;size:512"`
	RequestID       string    `gorm:"size:64;not null;index"`
	ClientID        string    `gorm:"size:40;not null;index"`
	Subject         string    `gorm:"size:40"`
	Active          bool      `gorm:"not null"`
	AccessSignature string    `gorm:"size:512"`
	JTI             string    `gorm:"size:64"`
	ExpiresAt       time.Time `gorm:"not null;index"`
	RequestedAt     time.Time `gorm:"not null"`
	Data            string    `gorm:"type:text;not null"`
}

func (oauthTokenV0010) TableName() string { return "o_auth_tokens" }

// deviceGrantV0010 is the device_grants table as migration 0010 migrates it.
type deviceGrantV0010 struct {
	DeviceCodeHash string `gorm:"primaryKey;size:64"`
	UserCode       string `gorm:"size:16;not null;uniqueIndex"`
	ClientID       string `gorm:"size:40;not null;index"`
	Scopes         string `gorm:"type:text;not null"`
	Status         string `gorm:"size:16;not null"`
	UserID         string `gorm:"size:40"`
	Interval       int    `gorm:"not null"`
	LastPolledAt   *time.Time
	ExpiresAt      time.Time `gorm:"not null;index"`
	CreatedAt      time.Time `gorm:"not null"`
}

func (deviceGrantV0010) TableName() string { return "device_grants" }

// mfaEnrollmentV0010 is the mfa_enrollments table as migration 0010 migrates it.
type mfaEnrollmentV0010 struct {
	UserID         string `gorm:"primaryKey;size:40"`
	SecretSealed   string `gorm:"type:text;not null"`
	Confirmed      bool   `gorm:"not null"`
	LastStep       int64  `gorm:"not null;default:0"`
	FailedAttempts int    `gorm:"not null;default:0"`
	LockedUntil    *time.Time
	CreatedAt      time.Time `gorm:"not null"`
	ConfirmedAt    *time.Time
}

func (mfaEnrollmentV0010) TableName() string { return "mfa_enrollments" }

// mfaBackupCodeV0010 is the mfa_backup_codes table as migration 0010 migrates it.
type mfaBackupCodeV0010 struct {
	CodeHash string `gorm:"primaryKey;size:64"`
	UserID   string `gorm:"size:40;not null;index"`
	UsedAt   *time.Time
}

func (mfaBackupCodeV0010) TableName() string { return "mfa_backup_codes" }

// mfaChallengeV0010 is the mfa_challenges table as migration 0010 migrates it.
type mfaChallengeV0010 struct {
	ID         string    `gorm:"primaryKey;size:40"`
	UserID     string    `gorm:"size:40;not null;index"`
	Operation  string    `gorm:"size:300;not null"`
	Status     string    `gorm:"size:16;not null"`
	ExpiresAt  time.Time `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null"`
	VerifiedAt *time.Time
}

func (mfaChallengeV0010) TableName() string { return "mfa_challenges" }

// clientCertificateV0010 is the client_certificates table as migration 0010 migrates it.
type clientCertificateV0010 struct {
	ID                string    `gorm:"primaryKey;size:40"`
	OrganizationID    string    `gorm:"size:40;not null;index"`
	Environment       string    `gorm:"size:8;not null;index"`
	Name              string    `gorm:"size:200;not null"`
	FingerprintSHA256 string    `gorm:"size:64;not null;uniqueIndex"`
	Subject           string    `gorm:"size:500;not null"`
	Issuer            string    `gorm:"size:500;not null"`
	SerialNumber      string    `gorm:"size:100;not null"`
	Permissions       string    `gorm:"type:text;not null"`
	NotBefore         time.Time `gorm:"not null"`
	NotAfter          time.Time `gorm:"not null"`
	CreatedAt         time.Time
}

func (clientCertificateV0010) TableName() string { return "client_certificates" }

// samlRequestV0010 is the saml_requests table as migration 0010 migrates it.
type samlRequestV0010 struct {
	ID        string    `gorm:"primaryKey;size:100"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

func (samlRequestV0010) TableName() string { return "saml_requests" }

// auditEventV0010 is the audit_events table as migration 0010 migrates it.
type auditEventV0010 struct {
	ID                   string    `gorm:"primaryKey;size:40"`
	CreatedAt            time.Time `gorm:"not null;index"`
	EventType            string    `gorm:"size:40;not null;index"`
	OrganizationID       string    `gorm:"column:org_id;size:40;index"`
	UserID               string    `gorm:"size:40;index"`
	ClientID             string    `gorm:"size:40"`
	IPAddress            string    `gorm:"size:64"`
	UserAgent            string    `gorm:"size:300"`
	AuthenticationMethod string    `gorm:"size:40"`
	TokenType            string    `gorm:"size:40"`
	Scopes               string    `gorm:"size:500"`
	SessionID            string    `gorm:"size:64"`
	Outcome              string    `gorm:"size:16;not null"`
	Reason               string    `gorm:"size:300"`
}

func (auditEventV0010) TableName() string { return "audit_events" }

// identityTablesV0010 lists the tables of migration 0010, parents first.
func identityTablesV0010() []any {
	return []any{&signingKeyV0010{}, &revokedTokenV0010{}, &serverSecretV0010{}, &oauthClientV0010{}, &oauthTokenV0010{}, &deviceGrantV0010{},
		&mfaEnrollmentV0010{}, &mfaBackupCodeV0010{}, &mfaChallengeV0010{}, &clientCertificateV0010{}, &samlRequestV0010{}, &auditEventV0010{}}
}

// migrateIdentity creates the identity tables.
func migrateIdentity(tx *gorm.DB) error { return tx.AutoMigrate(identityTablesV0010()...) }

// rollbackIdentity drops them.
func rollbackIdentity(tx *gorm.DB) error { return dropTables(tx, identityTablesV0010()) }
