package identity

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// SigningKey is an RSA key that signs access tokens (RS256). The private key
// is stored only sealed (AES-256-GCM under SECRETS_KEY); the public key is
// published at /.well-known/jwks.json under its kid until the key is retired.
type SigningKey struct {
	ID            string     `gorm:"primaryKey;size:40"` // the JWT header's kid
	Algorithm     string     `gorm:"size:10;not null"`
	PrivateSealed string     `gorm:"type:text;not null"` // sealed PKCS#8 PEM
	PublicPEM     string     `gorm:"type:text;not null"` // PKIX PEM
	CreatedAt     time.Time  `gorm:"not null;index"`
	RetiredAt     *time.Time `gorm:"index"`
}

// RevokedToken is the deny-list entry of an access token's jti: the API
// refuses the token on every request until it would have expired anyway.
type RevokedToken struct {
	JTI       string    `gorm:"primaryKey;size:64"`
	Subject   string    `gorm:"size:40;not null"`
	ExpiresAt time.Time `gorm:"not null;index"`
	RevokedAt time.Time `gorm:"not null"`
	Reason    string    `gorm:"size:200"`
}

// SaveSigningKey stores a new signing key. Its private part must already be
// sealed by the caller. Errors: INTERNAL_ERROR.
func (s *Store) SaveSigningKey(ctx context.Context, k *SigningKey) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Create(k).Error)
}

// ActiveSigningKeys returns the keys that are not retired, newest first.
// Errors: INTERNAL_ERROR.
func (s *Store) ActiveSigningKeys(ctx context.Context) ([]SigningKey, error) {
	var keys []SigningKey
	err := s.In(ctx, models.SystemScope()).Where("retired_at IS NULL").Order("created_at DESC").Order("id").Find(&keys).Error
	return keys, models.DBErr(err)
}

// SigningKeys returns every signing key, retired ones included, newest
// first (for operators: `platform signing-keys list`).
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	var keys []SigningKey
	err := s.In(ctx, models.SystemScope()).Order("created_at DESC").Order("id").Find(&keys).Error
	return keys, models.DBErr(err)
}

// RetireSigningKey stops publishing a key: tokens it signed stop verifying.
// Errors: NOT_FOUND, INTERNAL_ERROR.
func (s *Store) RetireSigningKey(ctx context.Context, kid string) error {
	res := s.In(ctx, models.SystemScope()).Model(&SigningKey{}).Where("id = ? AND retired_at IS NULL", kid).Update("retired_at", s.Now())
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("signing key")
	}
	return nil
}

// RevokeTokenID puts a token's jti on the deny-list until expiresAt (a
// second revocation is a no-op). Errors: VALIDATION_ERROR, INTERNAL_ERROR.
func (s *Store) RevokeTokenID(ctx context.Context, jti, subject string, expiresAt time.Time, reason string) error {
	if jti == "" || len(jti) > 64 {
		return models.Invalid(models.FieldIssue{Field: "jti", Issue: "must be 1 to 64 characters"})
	}
	row := RevokedToken{JTI: jti, Subject: subject, ExpiresAt: expiresAt.UTC(), RevokedAt: s.Now(), Reason: reason}
	return models.DBErr(s.In(ctx, models.SystemScope()).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error)
}

// TokenRevoked reports whether a jti is on the deny-list. Errors: INTERNAL_ERROR.
func (s *Store) TokenRevoked(ctx context.Context, jti string) (bool, error) {
	var row RevokedToken
	err := s.In(ctx, models.SystemScope()).Where("jti = ?", jti).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	if err != nil {
		return false, models.DBErr(err)
	}
	return true, nil
}

// PurgeRevokedTokens deletes deny-list entries of tokens that have expired
// anyway and returns how many were removed. Errors: INTERNAL_ERROR.
func (s *Store) PurgeRevokedTokens(ctx context.Context, now time.Time) (int64, error) {
	res := s.In(ctx, models.SystemScope()).Where("expires_at < ?", now.UTC()).Delete(&RevokedToken{})
	return res.RowsAffected, models.DBErr(res.Error)
}

// TokenSubject is what an access token's subject resolves to at the API: its
// organization (for the plan's rate limits) and, for a user, the user.
type TokenSubject struct {
	Organization *models.Organization
	User         *User // nil unless the subject is a usr_ id
}

// ResolveTokenSubject loads the organization and, for usr_ subjects, the
// user of a verified access token; the user must still belong to the
// organization. Errors: INVALID_TOKEN (unknown organization or user), INTERNAL_ERROR.
func (s *Store) ResolveTokenSubject(ctx context.Context, orgID, subject string) (*TokenSubject, error) {
	var org models.Organization
	if err := s.In(ctx, models.SystemScope()).Where("id = ?", orgID).Take(&org).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, models.Errorf(models.CodeInvalidToken, "the access token's organization no longer exists")
		}
		return nil, models.DBErr(err)
	}
	out := &TokenSubject{Organization: &org}
	if models.HasPrefix(subject, models.PrefixUser) {
		var u User
		if err := s.In(ctx, models.SystemScope()).Where("id = ?", subject).Take(&u).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return nil, models.Errorf(models.CodeInvalidToken, "the access token's user no longer exists")
			}
			return nil, models.DBErr(err)
		}
		if u.OrganizationID != org.ID {
			return nil, models.Errorf(models.CodeInvalidToken, "the access token's user does not belong to its organization")
		}
		out.User = &u
	}
	return out, nil
}
