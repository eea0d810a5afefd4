package identity

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
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
	// A one-time code sent by e-mail or SMS for this challenge (hash only).
	CodeHash   string     `gorm:"size:64"`
	CodeMethod string     `gorm:"size:8"`
	CodeSentAt *time.Time ``
	CodeSends  int        `gorm:"not null;default:0"`
}

// MFAEnrollmentOf returns a user's enrollment, or nil. Errors: INTERNAL_ERROR.
func (s *Store) MFAEnrollmentOf(ctx context.Context, userID string) (*MFAEnrollment, error) {
	var e MFAEnrollment
	err := s.In(ctx, models.SystemScope()).Where("user_id = ?", userID).Take(&e).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	return &e, models.DBErr(err)
}

// BeginTOTPEnrollment stores a new, unconfirmed TOTP secret and backup codes
// for a user, replacing an unconfirmed one. Errors: SERVICE_CONFLICT (a
// confirmed factor exists), INTERNAL_ERROR.
func (s *Store) BeginTOTPEnrollment(ctx context.Context, userID, secret string, backupCodes []string) error {
	if s.Sealer == nil {
		return models.Internal(errors.New("MFA needs SECRETS_KEY (no sealer configured)"))
	}
	return s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		var cur MFAEnrollment
		err := tx.Where("user_id = ?", userID).Take(&cur).Error
		if err == nil && cur.Confirmed {
			return models.Errorf(models.CodeInvalidStateTransition, "TOTP is already enrolled for this user")
		}
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return models.DBErr(err)
		}
		if err := tx.Where("user_id = ?", userID).Delete(&MFABackupCode{}).Error; err != nil {
			return models.DBErr(err)
		}
		e := MFAEnrollment{UserID: userID, SecretSealed: s.Sealer.Seal(models.BindMFA(userID), secret), CreatedAt: s.Now()}
		if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&e).Error; err != nil {
			return models.DBErr(err)
		}
		for _, c := range backupCodes {
			if err := tx.Create(&MFABackupCode{CodeHash: models.HashSecret(NormalizeBackupCode(c)), UserID: userID}).Error; err != nil {
				return models.DBErr(err)
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
	err := s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		var e MFAEnrollment
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ?", userID).Take(&e).Error; err != nil {
			return models.NotFoundOr(err, "MFA enrollment")
		}
		now := s.Now()
		if e.LockedUntil != nil && now.Before(*e.LockedUntil) {
			return models.Errorf(models.CodeAccessRestricted, "too many wrong codes: try again later").WithDetail("locked_until", models.Timestamp(*e.LockedUntil))
		}
		secret, err := s.Sealer.Open(models.BindMFA(e.UserID), e.SecretSealed)
		if err != nil {
			return models.Internal(err)
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
			res := tx.Model(&MFABackupCode{}).Where("code_hash = ? AND user_id = ? AND used_at IS NULL", models.HashSecret(NormalizeBackupCode(code)), userID).Update("used_at", now)
			if res.Error != nil {
				return models.DBErr(res.Error)
			}
			ok = res.RowsAffected == 1
		}
		wrong, err = recordMFAAttempt(tx, &e, ok, now, upd)
		return err
	})
	if err != nil {
		return err
	}
	return wrong
}

// CreateMFAChallenge opens a challenge for one operation of a user. Errors: INTERNAL_ERROR.
func (s *Store) CreateMFAChallenge(ctx context.Context, userID, operation string) (*MFAChallenge, error) {
	now := s.Now()
	c := &MFAChallenge{ID: models.NewID(models.PrefixMFA), UserID: userID, Operation: operation, Status: MFAChallengeState, ExpiresAt: now.Add(MFAChallengeTTL), CreatedAt: now}
	return c, models.DBErr(s.In(ctx, models.SystemScope()).Create(c).Error)
}

// PendingMFAChallenge returns a user's pending, unexpired challenge.
// Errors: NOT_FOUND.
func (s *Store) PendingMFAChallenge(ctx context.Context, userID, id string) (*MFAChallenge, error) {
	var c MFAChallenge
	err := s.In(ctx, models.SystemScope()).Where("id = ? AND user_id = ? AND status = ? AND expires_at > ?", id, userID, MFAChallengeState, s.Now()).Take(&c).Error
	return &c, models.NotFoundOr(err, "MFA challenge")
}

// MarkMFAChallengeVerified records that the challenge's code was verified.
// Errors: NOT_FOUND (not pending any more), INTERNAL_ERROR.
func (s *Store) MarkMFAChallengeVerified(ctx context.Context, id string) error {
	res := s.In(ctx, models.SystemScope()).Model(&MFAChallenge{}).Where("id = ? AND status = ?", id, MFAChallengeState).
		Updates(map[string]any{"status": "verified", "verified_at": s.Now()})
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("MFA challenge")
	}
	return nil
}

// ConsumeMFAChallenge spends a verified, unexpired challenge of the user for
// the operation; it returns false when there is none (wrong id, other user
// or operation, expired, not verified, or already used). Errors: INTERNAL_ERROR.
func (s *Store) ConsumeMFAChallenge(ctx context.Context, userID, id, operation string) (bool, error) {
	res := s.In(ctx, models.SystemScope()).Model(&MFAChallenge{}).
		Where("id = ? AND user_id = ? AND operation = ? AND status = ? AND expires_at > ?", id, userID, operation, "verified", s.Now()).
		Update("status", "used")
	if res.Error != nil {
		return false, models.DBErr(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// constantTimeEqual reports whether a and b are equal without leaking where they differ.
func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// MatchCode reports whether code equals want in constant time (TOTP matchers use it).
func MatchCode(code, want string) bool { return constantTimeEqual(code, want) }

// recordMFAAttempt writes the outcome of a code check on an enrollment
// (locked by the caller's transaction) together with upd: a success resets
// the failure count; the MFAMaxFailures-th failure in a row locks
// verification for MFALockout. It returns the VALIDATION_ERROR to answer
// for a wrong code, after the transaction commits the count.
func recordMFAAttempt(tx *gorm.DB, e *MFAEnrollment, ok bool, now time.Time, upd map[string]any) (wrong, err error) {
	if ok {
		upd["failed_attempts"], upd["locked_until"] = 0, nil
	} else {
		upd["failed_attempts"] = e.FailedAttempts + 1
		if e.FailedAttempts+1 >= MFAMaxFailures {
			upd["locked_until"], upd["failed_attempts"] = now.Add(MFALockout), 0
		}
	}
	if err := tx.Model(&MFAEnrollment{}).Where("user_id = ?", e.UserID).Updates(upd).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if !ok {
		return models.Invalid(models.FieldIssue{Field: "code", Issue: "is not a valid code (or was already used)"}), nil
	}
	return nil, nil
}

// lockedEnrollment returns the user's enrollment locked for update, or
// ACCESS_RESTRICTED while verification is locked. Errors: NOT_FOUND.
func lockedEnrollment(tx *gorm.DB, userID string, now time.Time) (*MFAEnrollment, error) {
	var e MFAEnrollment
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("user_id = ?", userID).Take(&e).Error; err != nil {
		return nil, models.NotFoundOr(err, "MFA enrollment")
	}
	if e.LockedUntil != nil && now.Before(*e.LockedUntil) {
		return nil, models.Errorf(models.CodeAccessRestricted, "too many wrong codes: try again later").WithDetail("locked_until", models.Timestamp(*e.LockedUntil))
	}
	return &e, nil
}

// Out-of-band codes (e-mail and SMS): 6 digits, at most MFAMaxCodeSends per
// challenge, MFACodeResendAfter apart; a phone confirmation code lives
// MFAPhoneCodeTTL.
const (
	MFAMaxCodeSends    = 5
	MFACodeResendAfter = 30 * time.Second
	MFAPhoneCodeTTL    = 10 * time.Minute
)

// MFAPhone is a user's phone number for SMS codes, usable once confirmed by
// a code sent to it.
type MFAPhone struct {
	UserID    string `gorm:"primaryKey;size:40"`
	Number    string `gorm:"size:20;not null"`
	Confirmed bool   `gorm:"not null;default:false"`
	// PendingNumber is a number waiting for its confirmation code; a
	// confirmed Number keeps receiving codes until it is confirmed.
	PendingNumber string     `gorm:"size:20"`
	CodeHash      string     `gorm:"size:64"`
	CodeExpiresAt *time.Time ``
	CreatedAt     time.Time  `gorm:"not null"`
	ConfirmedAt   *time.Time ``
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// ValidPhoneNumber reports whether n is an E.164 number (+ and 7 to 15 digits).
func ValidPhoneNumber(n string) bool { return e164.MatchString(n) }

// MFAMethods returns the second-factor methods a user can answer a challenge
// with: totp (authenticator or backup code), email, and sms once a phone is
// confirmed. Errors: INTERNAL_ERROR.
func (s *Store) MFAMethods(ctx context.Context, userID string) ([]string, error) {
	methods := []string{"totp", "email"}
	var n int64
	if err := s.In(ctx, models.SystemScope()).Model(&MFAPhone{}).Where("user_id = ? AND confirmed = ?", userID, true).Count(&n).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if n > 0 {
		methods = append(methods, "sms")
	}
	return methods, nil
}

// MFACodeSent says where a one-time code went and until when it is valid.
type MFACodeSent struct {
	ChallengeID string
	Method      string
	Destination string // masked
	ExpiresAt   time.Time
}

// SendMFACode generates a one-time code for a pending challenge of user and
// queues it by e-mail (to the user's address) or SMS (to the confirmed
// phone) in the notification outbox, in one transaction; a new code replaces
// the previous one. scope is where the message is filed (the user's
// organization). Errors: NOT_FOUND (challenge), VALIDATION_ERROR (method, no
// confirmed phone), RATE_LIMIT_EXCEEDED (too many or too frequent sends;
// details.retry_after), INTERNAL_ERROR.
func (s *Store) SendMFACode(ctx context.Context, scope models.Scope, user *User, challengeID, method, code string) (*MFACodeSent, error) {
	if method != eventlog.ChannelEmail && method != eventlog.ChannelSMS {
		return nil, models.Invalid(models.FieldIssue{Field: "method", Issue: "must be email or sms"})
	}
	var sent *MFACodeSent
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		now := s.Now()
		var c MFAChallenge
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).
			Where("id = ? AND user_id = ? AND status = ? AND expires_at > ?", challengeID, user.ID, MFAChallengeState, now).Take(&c).Error
		if err != nil {
			return models.NotFoundOr(err, "MFA challenge")
		}
		if c.CodeSends >= MFAMaxCodeSends {
			return models.Errorf(models.CodeRateLimitExceeded, "no more codes for this challenge: start the operation again for a new challenge")
		}
		if c.CodeSentAt != nil && now.Sub(*c.CodeSentAt) < MFACodeResendAfter {
			wait := MFACodeResendAfter - now.Sub(*c.CodeSentAt)
			return models.Errorf(models.CodeRateLimitExceeded, "a code was just sent: wait before asking for another").WithDetail("retry_after", int(wait.Seconds())+1)
		}
		to := user.Email
		if method == eventlog.ChannelSMS {
			var ph MFAPhone
			if err := tx.Where("user_id = ? AND confirmed = ?", user.ID, true).Take(&ph).Error; err != nil {
				if errors.Is(err, gorm.ErrRecordNotFound) {
					return models.Invalid(models.FieldIssue{Field: "method", Issue: "sms needs a confirmed phone number (POST /v1/auth/mfa/sms/setup)"})
				}
				return models.DBErr(err)
			}
			to = ph.Number
		}
		if err := tx.Model(&MFAChallenge{}).Where("id = ?", c.ID).Updates(map[string]any{
			"code_hash": models.HashSecret(code), "code_method": method, "code_sent_at": now, "code_sends": c.CodeSends + 1}).Error; err != nil {
			return models.DBErr(err)
		}
		if _, err := eventlog.QueueMessage(tx, s.Sealer, mfaCodeMessage(method, to, code, "to confirm a sensitive operation")); err != nil {
			return err
		}
		sent = &MFACodeSent{ChallengeID: c.ID, Method: method, Destination: eventlog.MaskRecipient(to), ExpiresAt: c.ExpiresAt}
		return nil
	})
	return sent, err
}

func mfaCodeMessage(method, to, code, purpose string) eventlog.Message {
	body := fmt.Sprintf("Your Telco Platform verification code is %s (%s). It expires in a few minutes; never share it.", code, purpose)
	return eventlog.Message{Channel: method, Recipient: to, Template: eventlog.TemplateMFACode, Subject: "Your verification code", Body: body}
}

// VerifyMFACode checks an e-mail or SMS code against the challenge it was
// sent for and, when it matches, marks the challenge verified and forgets
// the code; wrong codes count toward the same lockout as TOTP codes.
// Errors: NOT_FOUND (challenge, or no code sent by that method),
// VALIDATION_ERROR (wrong code), ACCESS_RESTRICTED (locked), INTERNAL_ERROR.
func (s *Store) VerifyMFACode(ctx context.Context, userID, challengeID, method, code string) error {
	return s.checkOneTimeCode(ctx, userID, code, func(tx *gorm.DB, now time.Time) (string, func() error, error) {
		var c MFAChallenge
		err := tx.Where("id = ? AND user_id = ? AND status = ? AND expires_at > ? AND code_method = ? AND code_hash <> ''",
			challengeID, userID, MFAChallengeState, now, method).Take(&c).Error
		if err != nil {
			return "", nil, models.NotFoundOr(err, "MFA challenge with a code sent by "+method)
		}
		return c.CodeHash, func() error {
			return models.DBErr(tx.Model(&MFAChallenge{}).Where("id = ?", c.ID).
				Updates(map[string]any{"status": "verified", "verified_at": now, "code_hash": ""}).Error)
		}, nil
	})
}

// checkOneTimeCode checks a code sent by e-mail or SMS in one transaction:
// the user's enrollment is locked (and refused while locked out), find
// returns the stored hash to compare with and what to do on a match, and
// the outcome counts toward the lockout like a TOTP code.
// Errors: those of find, VALIDATION_ERROR (wrong code), ACCESS_RESTRICTED,
// NOT_FOUND (no enrollment), INTERNAL_ERROR.
func (s *Store) checkOneTimeCode(ctx context.Context, userID, code string, find func(tx *gorm.DB, now time.Time) (hash string, onMatch func() error, err error)) error {
	var wrong error
	err := s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		now := s.Now()
		e, err := lockedEnrollment(tx, userID, now)
		if err != nil {
			return err
		}
		hash, onMatch, err := find(tx, now)
		if err != nil {
			return err
		}
		ok := constantTimeEqual(models.HashSecret(strings.TrimSpace(code)), hash)
		if ok {
			if err := onMatch(); err != nil {
				return err
			}
		}
		wrong, err = recordMFAAttempt(tx, e, ok, now, map[string]any{})
		return err
	})
	if err != nil {
		return err
	}
	return wrong
}

// BeginPhoneEnrollment records an unconfirmed phone number for a user with a
// confirmed TOTP factor and queues a confirmation code to it by SMS. A
// confirmed number is not replaced until the new one is confirmed
// (ConfirmPhone); the API challenges the change with an existing factor.
// Errors: VALIDATION_ERROR (not E.164), NOT_FOUND (no MFA enrollment: enrol
// TOTP first), INTERNAL_ERROR.
func (s *Store) BeginPhoneEnrollment(ctx context.Context, scope models.Scope, userID, number, code string) error {
	number = strings.TrimSpace(number)
	if !ValidPhoneNumber(number) {
		return models.Invalid(models.FieldIssue{Field: "phone_number", Issue: "must be an E.164 number such as +14155550123"})
	}
	return s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&MFAEnrollment{}).Where("user_id = ? AND confirmed = ?", userID, true).Count(&n).Error; err != nil {
			return models.DBErr(err)
		}
		if n == 0 {
			return models.NotFound("confirmed TOTP enrollment (enrol TOTP first: POST /v1/auth/mfa/totp/setup)")
		}
		now := s.Now()
		exp := now.Add(MFAPhoneCodeTTL)
		var cur MFAPhone
		err := tx.Where("user_id = ?", userID).Take(&cur).Error
		switch {
		case err == nil && cur.Confirmed:
			// The confirmed number stays the factor until the new one is confirmed.
			if err := tx.Model(&MFAPhone{}).Where("user_id = ?", userID).
				Updates(map[string]any{"pending_number": number, "code_hash": models.HashSecret(code), "code_expires_at": exp}).Error; err != nil {
				return models.DBErr(err)
			}
		case err == nil || errors.Is(err, gorm.ErrRecordNotFound):
			ph := MFAPhone{UserID: userID, Number: number, PendingNumber: number, CodeHash: models.HashSecret(code), CodeExpiresAt: &exp, CreatedAt: now}
			if err := tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&ph).Error; err != nil {
				return models.DBErr(err)
			}
		default:
			return models.DBErr(err)
		}
		_, err = eventlog.QueueMessage(tx, s.Sealer, mfaCodeMessage(eventlog.ChannelSMS, number, code, "to confirm this phone number"))
		return err
	})
}

// ConfirmPhone confirms a user's pending phone number with the code sent to
// it; wrong codes count toward the lockout. Errors: NOT_FOUND (no pending
// number or code expired), VALIDATION_ERROR (wrong code), ACCESS_RESTRICTED
// (locked), INTERNAL_ERROR.
func (s *Store) ConfirmPhone(ctx context.Context, userID, code string) error {
	return s.checkOneTimeCode(ctx, userID, code, func(tx *gorm.DB, now time.Time) (string, func() error, error) {
		var ph MFAPhone
		if err := tx.Where("user_id = ? AND code_hash <> '' AND code_expires_at > ?", userID, now).Take(&ph).Error; err != nil {
			return "", nil, models.NotFoundOr(err, "pending phone number")
		}
		number := ph.Number
		if ph.PendingNumber != "" {
			number = ph.PendingNumber
		}
		return ph.CodeHash, func() error {
			return models.DBErr(tx.Model(&MFAPhone{}).Where("user_id = ?", userID).
				Updates(map[string]any{"number": number, "pending_number": "", "confirmed": true, "confirmed_at": now, "code_hash": "", "code_expires_at": nil}).Error)
		}, nil
	})
}

// MFAPhoneOf returns a user's confirmed phone number, or "". Errors: INTERNAL_ERROR.
func (s *Store) MFAPhoneOf(ctx context.Context, userID string) (string, error) {
	var ph MFAPhone
	err := s.In(ctx, models.SystemScope()).Where("user_id = ? AND confirmed = ?", userID, true).Take(&ph).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return ph.Number, models.DBErr(err)
}
