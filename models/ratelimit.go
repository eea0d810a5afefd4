package models

import (
	"context"
	"time"
)

// RateLimitSuspension records that a credential was suspended for excessive
// bursts (DECISIONS 8), for account review by provider staff.
type RateLimitSuspension struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	CredentialID   string    `gorm:"size:40;not null;index"`
	ClientIP       string    `gorm:"size:64"`
	Path           string    `gorm:"size:2000"`
	SuspendedUntil time.Time `gorm:"not null"`
	CreatedAt      time.Time `gorm:"index"`
}

// RecordSuspension stores a suspension of p's credential.
func (s *Store) RecordSuspension(ctx context.Context, p *Principal, clientIP, path string, until time.Time) (*RateLimitSuspension, error) {
	row := &RateLimitSuspension{ID: NewID("rls"), CredentialID: p.ID, ClientIP: clientIP, Path: path, SuspendedUntil: until}
	return row, DBErr(s.In(ctx, p.OwnScope()).Create(row).Error)
}

// ListSuspensions returns a page of suspensions visible to p (staff: every
// tenant), optionally of one credential, newest first.
func (s *Store) ListSuspensions(ctx context.Context, p *Principal, credentialID string, page PageRequest) ([]RateLimitSuspension, int64, error) {
	q := s.In(ctx, p.Scope()).Model(&RateLimitSuspension{})
	if credentialID != "" {
		q = q.Where("credential_id = ?", credentialID)
	}
	var out []RateLimitSuspension
	total, err := Paginate(q, page, SortFields{"created_at": "created_at"}, &out)
	return out, total, err
}
