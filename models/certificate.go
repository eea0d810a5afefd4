package models

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
)

// ClientCertificate is a client certificate registered for mutual TLS: a
// presented certificate is matched by the SHA-256 fingerprint of its DER.
type ClientCertificate struct {
	ID string `gorm:"primaryKey;size:40" json:"id"`
	Tenant
	Name              string    `gorm:"size:200;not null" json:"name"`
	FingerprintSHA256 string    `gorm:"size:64;not null;uniqueIndex" json:"fingerprint_sha256"`
	Subject           string    `gorm:"size:500;not null" json:"subject"`
	Issuer            string    `gorm:"size:500;not null" json:"issuer"`
	SerialNumber      string    `gorm:"size:100;not null" json:"serial_number"`
	Permissions       string    `gorm:"type:text;not null" json:"-"` // JSON array
	NotBefore         time.Time `gorm:"not null" json:"not_before"`
	NotAfter          time.Time `gorm:"not null" json:"not_after"`
	CreatedAt         time.Time `json:"created_at"`
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
func (s *Store) RegisterCertificate(ctx context.Context, p *Principal, c *ClientCertificate, perms []string) (*ClientCertificate, error) {
	var v Validator
	v.Check(c.Name != "" && len(c.Name) <= 200, "name", "is required, at most 200 characters")
	v.Check(len(perms) > 0, "permissions", "at least one permission is required")
	for _, perm := range perms {
		v.Check(ValidPermission(perm), "permissions", "unknown permission "+perm)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !p.CanGrant(perms) {
		return nil, Errorf(CodeInsufficientPermissions, "a certificate cannot hold permissions that its registrant lacks")
	}
	raw, _ := json.Marshal(perms)
	c.ID = NewID(PrefixCertificate)
	c.Tenant = Tenant{OrganizationID: p.OrganizationID, Environment: p.Environment}
	c.Permissions = string(raw)
	if err := s.In(ctx, p.OwnScope()).Create(c).Error; err != nil {
		if isUniqueViolation(err) {
			return nil, Errorf(CodeServiceConflict, "this certificate is already registered")
		}
		return nil, dbErr(err)
	}
	return c, nil
}

// CertificateByFingerprint returns the registration of a presented
// certificate. Errors: UNAUTHENTICATED (unknown or outside its validity), INTERNAL_ERROR.
func (s *Store) CertificateByFingerprint(ctx context.Context, fingerprint string) (*ClientCertificate, *Organization, error) {
	var c ClientCertificate
	err := s.In(ctx, SystemScope()).Where("fingerprint_sha256 = ?", fingerprint).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, Errorf(CodeUnauthenticated, "the client certificate is not registered (POST /v1/auth/certificates)")
	}
	if err != nil {
		return nil, nil, dbErr(err)
	}
	now := s.Now()
	if now.Before(c.NotBefore) || now.After(c.NotAfter) {
		return nil, nil, Errorf(CodeUnauthenticated, "the client certificate is expired or not yet valid")
	}
	var org Organization
	if err := s.In(ctx, SystemScope()).Where("id = ?", c.OrganizationID).Take(&org).Error; err != nil {
		return nil, nil, Errorf(CodeUnauthenticated, "the client certificate's organization no longer exists")
	}
	return &c, &org, nil
}
