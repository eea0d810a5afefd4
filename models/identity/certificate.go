package identity

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Audit event type of certificate revocation (certificate.registered is in audit.go).
const AuditCertRevoked = "certificate.revoked"

// Statuses of a registered certificate, as answered and filtered.
const (
	CertificateActive  = "active"
	CertificateRevoked = "revoked"
	CertificateExpired = "expired"
	CertificatePending = "not_yet_valid"
)

// ClientCertificate is a client certificate registered for mutual TLS: a
// presented certificate is matched by the SHA-256 fingerprint of its DER.
// A revoked registration is kept (RevokedAt set) for audit; a fingerprint
// can have one unrevoked registration at a time, so a revoked certificate
// can be registered again.
type ClientCertificate struct {
	ID string `gorm:"primaryKey;size:40" json:"id"`
	models.Tenant
	Name              string    `gorm:"size:200;not null" json:"name"`
	FingerprintSHA256 string    `gorm:"size:64;not null;uniqueIndex:idx_client_certificates_active_fingerprint,where:revoked_at IS NULL" json:"fingerprint_sha256"`
	Subject           string    `gorm:"size:500;not null" json:"subject"`
	Issuer            string    `gorm:"size:500;not null" json:"issuer"`
	SerialNumber      string    `gorm:"size:100;not null" json:"serial_number"`
	Permissions       string    `gorm:"type:text;not null" json:"-"` // JSON array
	NotBefore         time.Time `gorm:"not null" json:"not_before"`
	NotAfter          time.Time `gorm:"not null" json:"not_after"`
	CreatedAt         time.Time `json:"created_at"`
	// RevokedAt is when the registration was revoked (nil: not revoked).
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Status returns the registration's status at now: revoked, expired,
// not_yet_valid or active.
func (c *ClientCertificate) Status(now time.Time) string {
	switch {
	case c.RevokedAt != nil:
		return CertificateRevoked
	case now.After(c.NotAfter):
		return CertificateExpired
	case now.Before(c.NotBefore):
		return CertificatePending
	}
	return CertificateActive
}

// PermissionList returns the certificate's permissions.
func (c *ClientCertificate) PermissionList() []string {
	var out []string
	_ = json.Unmarshal([]byte(c.Permissions), &out)
	return out
}

// RegisterCertificate stores a parsed client certificate for p's
// organization and environment. Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS,
// SERVICE_CONFLICT (fingerprint already registered), INTERNAL_ERROR.
func (s *Store) RegisterCertificate(ctx context.Context, p *models.Principal, c *ClientCertificate, perms []string) (*ClientCertificate, error) {
	var v models.Validator
	v.Check(c.Name != "" && len(c.Name) <= 200, "name", "is required, at most 200 characters")
	v.Check(len(perms) > 0, "permissions", "at least one permission is required")
	for _, perm := range perms {
		v.Check(models.ValidPermission(perm), "permissions", "unknown permission "+perm)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !p.CanGrant(perms) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "a certificate cannot hold permissions that its registrant lacks")
	}
	raw, _ := json.Marshal(perms)
	c.ID = models.NewID(models.PrefixCertificate)
	c.Tenant = models.Tenant{OrganizationID: p.OrganizationID, Environment: p.Environment}
	c.Permissions = string(raw)
	if err := s.In(ctx, p.OwnScope()).Create(c).Error; err != nil {
		if models.IsUniqueViolation(err) {
			return nil, models.Errorf(models.CodeAlreadyExists, "this certificate is already registered")
		}
		return nil, models.DBErr(err)
	}
	return c, nil
}

// CertificateByFingerprint returns the unrevoked registration of a
// presented certificate. Errors: UNAUTHENTICATED (unknown, revoked or
// outside its validity), INTERNAL_ERROR.
func (s *Store) CertificateByFingerprint(ctx context.Context, fingerprint string) (*ClientCertificate, *models.Organization, error) {
	var c ClientCertificate
	err := s.In(ctx, models.SystemScope()).Where("fingerprint_sha256 = ? AND revoked_at IS NULL", fingerprint).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		var revoked int64
		if err := s.In(ctx, models.SystemScope()).Model(&ClientCertificate{}).Where("fingerprint_sha256 = ?", fingerprint).Count(&revoked).Error; err != nil {
			return nil, nil, models.DBErr(err)
		}
		if revoked > 0 {
			return nil, nil, models.Errorf(models.CodeUnauthenticated, "the client certificate has been revoked")
		}
		return nil, nil, models.Errorf(models.CodeUnauthenticated, "the client certificate is not registered (POST /v1/auth/certificates)")
	}
	if err != nil {
		return nil, nil, models.DBErr(err)
	}
	now := s.Now()
	if now.Before(c.NotBefore) || now.After(c.NotAfter) {
		return nil, nil, models.Errorf(models.CodeUnauthenticated, "the client certificate is expired or not yet valid")
	}
	var org models.Organization
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", c.OrganizationID).Take(&org).Error; err != nil {
		return nil, nil, models.Errorf(models.CodeUnauthenticated, "the client certificate's organization no longer exists")
	}
	return &c, &org, nil
}

// CertificateFilter narrows a certificate list: Status is "" (all),
// active, revoked, expired or not_yet_valid.
type CertificateFilter struct {
	Status string
}

var certificateSorts = models.SortFields{"created_at": "created_at", "name": "name", "not_after": "not_after", "revoked_at": "revoked_at"}

// ListCertificates returns a page of the registrations visible to p
// (revoked ones included, marked), newest first unless sorted otherwise.
// Errors: VALIDATION_ERROR (status, sort), INTERNAL_ERROR.
func (s *Store) ListCertificates(ctx context.Context, p *models.Principal, f CertificateFilter, page models.PageRequest) ([]ClientCertificate, int64, error) {
	q := s.In(ctx, p.Scope()).Model(&ClientCertificate{})
	now := s.Now()
	switch f.Status {
	case "":
	case CertificateRevoked:
		q = q.Where("revoked_at IS NOT NULL")
	case CertificateExpired:
		q = q.Where("revoked_at IS NULL AND not_after < ?", now)
	case CertificatePending:
		q = q.Where("revoked_at IS NULL AND not_before > ?", now)
	case CertificateActive:
		q = q.Where("revoked_at IS NULL AND not_before <= ? AND not_after >= ?", now, now)
	default:
		return nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be active, revoked, expired or not_yet_valid"})
	}
	var rows []ClientCertificate
	total, err := models.Paginate(q, page, certificateSorts, &rows)
	return rows, total, err
}

// GetCertificate returns one registration visible to p. Errors: NOT_FOUND
// (unknown, or another tenant's), INTERNAL_ERROR.
func (s *Store) GetCertificate(ctx context.Context, p *models.Principal, id string) (*ClientCertificate, error) {
	var c ClientCertificate
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&c).Error
	return &c, models.NotFoundOr(err, "certificate")
}

// RevokeCertificate revokes a registration visible to p: from then on a
// request presenting the certificate on the mutual-TLS listener is refused.
// The row is kept with its revocation time; revoking twice is harmless
// (the first time stays). Like a key's, it needs a credential that could
// have registered it: holding its permissions, and of its organization
// and environment unless a provider administrator. It returns the
// registration and whether this call revoked it. Errors: NOT_FOUND,
// INSUFFICIENT_PERMISSIONS, INTERNAL_ERROR.
func (s *Store) RevokeCertificate(ctx context.Context, p *models.Principal, id string) (*ClientCertificate, bool, error) {
	c, err := s.GetCertificate(ctx, p, id)
	if err != nil {
		return nil, false, err
	}
	if err := mayManage(p, c.OrganizationID, c.Environment, "", "revoke"); err != nil {
		return nil, false, err
	}
	if !p.CanGrant(c.PermissionList()) {
		return nil, false, models.Errorf(models.CodeInsufficientPermissions, "a certificate can only be revoked by a credential that holds every permission of it")
	}
	if c.RevokedAt != nil {
		return c, false, nil
	}
	now := s.Now()
	res := s.In(ctx, p.Scope()).Model(&ClientCertificate{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", now)
	if res.Error != nil {
		return nil, false, models.DBErr(res.Error)
	}
	// Read back: the stored time (the database's precision) is the one answered from now on.
	c, err = s.GetCertificate(ctx, p, id)
	return c, err == nil && res.RowsAffected == 1, err
}
