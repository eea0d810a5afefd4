package models

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MFA rules: challenges live 5 minutes and are single use; 5 wrong codes in
// a row lock verification for 15 minutes.
const (
	MFAChallengeTTL   = 5 * time.Minute
	MFAMaxFailures    = 5
	MFALockout        = 15 * time.Minute
	MFABackupCodes    = 10
	MFAChallengeState = "pending"
)

// MFAEnrollment is a user's TOTP factor: the secret (sealed), whether the
// first code confirmed it, the last accepted time step (no replay), and the
// count of wrong codes (lockout).
type MFAEnrollment struct {
	UserID         string     `gorm:"primaryKey;size:40"`
	SecretSealed   string     `gorm:"type:text;not null"`
	Confirmed      bool       `gorm:"not null"`
	LastStep       int64      `gorm:"not null;default:0"`
	FailedAttempts int        `gorm:"not null;default:0"`
	LockedUntil    *time.Time ``
	CreatedAt      time.Time  `gorm:"not null"`
	ConfirmedAt    *time.Time ``
}

// MFABackupCode is one single-use backup code, stored only as a hash.
type MFABackupCode struct {
	CodeHash string     `gorm:"primaryKey;size:64"`
	UserID   string     `gorm:"size:40;not null;index"`
	UsedAt   *time.Time ``
}

// MFAChallenge is a second-factor challenge for one operation of one user.
type MFAChallenge struct {
	ID         string     `gorm:"primaryKey;size:40"` // mfa_...
	UserID     string     `gorm:"size:40;not null;index"`
	Operation  string     `gorm:"size:300;not null"` // METHOD path
	Status     string     `gorm:"size:16;not null"`  // pending, verified, used
	ExpiresAt  time.Time  `gorm:"not null"`
	CreatedAt  time.Time  `gorm:"not null"`
	VerifiedAt *time.Time ``
}

// MFAEnrollmentOf returns a user's enrollment, or nil. Errors: INTERNAL_ERROR.
func (s *Store) MFAEnrollmentOf(ctx context.Context, userID string) (*MFAEnrollment, error) {
	var e MFAEnrollment
	err := s.In(ctx, SystemScope()).Where("user_id = ?", userID).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return &e, dbErr(err)
}

// BeginTOTPEnrollment stores a new, unconfirmed TOTP secret and backup codes
// for a user, replacing an unconfirmed one. Errors: SERVICE_CONFLICT (a
// confirmed factor exists), INTERNAL_ERROR.
func (s *Store) BeginTOTPEnrollment(ctx context.Context, userID, secret string, backupCodes []string) error {
	if s.Sealer == nil {
		return Internal(errors.New("MFA needs SECRETS_KEY (no sealer configured)"))
	}
	return s.Tx(ctx, SystemScope(), func(tx *gorm.DB) error {
		var cur MFAEnrollment
		err := tx.Where("user_id = ?", userID).Take(&cur).Error
		if err == nil && cur.Confirmed {
			return Errorf(CodeServiceConflict, "TOTP is already enrolled for this user")
		}
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return dbErr(err)
		}
		if err := tx.Where("user_id = ?", userID).Delete(&MFABackupCode{}).Error; err != nil {
			return dbErr(err)
		}
		e := MFAEnrollment{UserID: userID, SecretSealed: s.Sealer.Seal(secret), CreatedAt: s.Now()}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&e).Error; err != nil {
			return dbErr(err)
		}
		for _, c := range backupCodes {
			if err := tx.Create(&MFABackupCode{CodeHash: HashSecret(NormalizeBackupCode(c)), UserID: userID}).Error; err != nil {
				return dbErr(err)
			}
		}
		return nil
	})
}

// NormalizeBackupCode returns a backup code without separators, lower case.
func NormalizeBackupCode(c string) string {
	return strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(c))
}

// TOTPMatcher reports which time step (if any) a code matches around now.
type TOTPMatcher func(secret, code string, now time.Time) (step int64, ok bool)

// VerifySecondFactor checks a TOTP or backup code of a user: a TOTP code is
// accepted only for a time step later than the last accepted one (no
// replay); a backup code only once. An unconfirmed enrollment is confirmed
// by its first valid TOTP code. Errors: VALIDATION_ERROR (wrong code),
// ACCESS_RESTRICTED (locked after repeated wrong codes; details.locked_until),
// NOT_FOUND (no enrollment), INTERNAL_ERROR.
func (s *Store) VerifySecondFactor(ctx context.Context, userID, code string, match TOTPMatcher) error {
	var wrong error // returned after the transaction commits the failure count
	err := s.Tx(ctx, SystemScope(), func(tx *gorm.DB) error {
		var e MFAEnrollment
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ?", userID).Take(&e).Error; err != nil {
			return notFoundOr(err, "MFA enrollment")
		}
		now := s.Now()
		if e.LockedUntil != nil && now.Before(*e.LockedUntil) {
			return Errorf(CodeAccessRestricted, "too many wrong codes: try again later").WithDetail("locked_until", Timestamp(*e.LockedUntil))
		}
		secret, err := s.Sealer.Open(e.SecretSealed)
		if err != nil {
			return Internal(err)
		}
		code = strings.TrimSpace(code)
		upd := map[string]any{}
		ok := false
		if step, matched := match(secret, code, now); matched && step > e.LastStep {
			ok = true
			upd["last_step"] = step
			if !e.Confirmed {
				upd["confirmed"], upd["confirmed_at"] = true, now
			}
		} else if e.Confirmed && len(code) > 6 {
			res := tx.Model(&MFABackupCode{}).Where("code_hash = ? AND user_id = ? AND used_at IS NULL", HashSecret(NormalizeBackupCode(code)), userID).Update("used_at", now)
			if res.Error != nil {
				return dbErr(res.Error)
			}
			ok = res.RowsAffected == 1
		}
		if ok {
			upd["failed_attempts"], upd["locked_until"] = 0, nil
		} else {
			upd["failed_attempts"] = e.FailedAttempts + 1
			if e.FailedAttempts+1 >= MFAMaxFailures {
				upd["locked_until"], upd["failed_attempts"] = now.Add(MFALockout), 0
			}
		}
		if err := tx.Model(&MFAEnrollment{}).Where("user_id = ?", userID).Updates(upd).Error; err != nil {
			return dbErr(err)
		}
		if !ok {
			wrong = Invalid(FieldIssue{Field: "code", Issue: "is not a valid code (or was already used)"})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return wrong
}

// CreateMFAChallenge opens a challenge for one operation of a user. Errors: INTERNAL_ERROR.
func (s *Store) CreateMFAChallenge(ctx context.Context, userID, operation string) (*MFAChallenge, error) {
	now := s.Now()
	c := &MFAChallenge{ID: NewID(PrefixMFA), UserID: userID, Operation: operation, Status: MFAChallengeState, ExpiresAt: now.Add(MFAChallengeTTL), CreatedAt: now}
	return c, dbErr(s.In(ctx, SystemScope()).Create(c).Error)
}

// PendingMFAChallenge returns a user's pending, unexpired challenge.
// Errors: NOT_FOUND.
func (s *Store) PendingMFAChallenge(ctx context.Context, userID, id string) (*MFAChallenge, error) {
	var c MFAChallenge
	err := s.In(ctx, SystemScope()).Where("id = ? AND user_id = ? AND status = ? AND expires_at > ?", id, userID, MFAChallengeState, s.Now()).Take(&c).Error
	return &c, notFoundOr(err, "MFA challenge")
}

// MarkMFAChallengeVerified records that the challenge's code was verified.
// Errors: NOT_FOUND (not pending any more), INTERNAL_ERROR.
func (s *Store) MarkMFAChallengeVerified(ctx context.Context, id string) error {
	res := s.In(ctx, SystemScope()).Model(&MFAChallenge{}).Where("id = ? AND status = ?", id, MFAChallengeState).
		Updates(map[string]any{"status": "verified", "verified_at": s.Now()})
	if res.Error != nil {
		return dbErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return NotFound("MFA challenge")
	}
	return nil
}

// ConsumeMFAChallenge spends a verified, unexpired challenge of the user for
// the operation; it returns false when there is none (wrong id, other user
// or operation, expired, not verified, or already used). Errors: INTERNAL_ERROR.
func (s *Store) ConsumeMFAChallenge(ctx context.Context, userID, id, operation string) (bool, error) {
	res := s.In(ctx, SystemScope()).Model(&MFAChallenge{}).
		Where("id = ? AND user_id = ? AND operation = ? AND status = ? AND expires_at > ?", id, userID, operation, "verified", s.Now()).
		Update("status", "used")
	if res.Error != nil {
		return false, dbErr(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// constantTimeEqual reports whether a and b are equal without leaking where they differ.
func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// MatchCode reports whether code equals want in constant time (TOTP matchers use it).
func MatchCode(code, want string) bool { return constantTimeEqual(code, want) }
