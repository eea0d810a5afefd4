package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Password sign-in protection, per account: after PasswordMaxFailures wrong
// passwords in a row the account takes no password for PasswordLockoutBase,
// doubling with every further wrong password up to PasswordLockoutMax; a
// right password (outside a lockout) resets the count.
const (
	PasswordMaxFailures = 5
	PasswordLockoutBase = time.Minute
	PasswordLockoutMax  = time.Hour
)

// dummyPasswordHash is a bcrypt hash, at bcrypt.DefaultCost like every
// stored password, of a random string no one knows: an unknown e-mail (or
// an account without a password) is compared against it, so that it costs
// the same time as a known one.
const dummyPasswordHash = "$2a$10$bSYz.GRGRO4u5vcMdF9MFOeFYbYR1KmupCg5/Zx.ppNCLu0gvCwAK"

// PasswordLockout returns how long an account is locked after failures
// wrong passwords in a row: nothing below PasswordMaxFailures, then
// PasswordLockoutBase doubled per further failure, at most PasswordLockoutMax.
func PasswordLockout(failures int) time.Duration {
	if failures < PasswordMaxFailures {
		return 0
	}
	d := PasswordLockoutBase
	for i := PasswordMaxFailures; i < failures && d < PasswordLockoutMax; i++ {
		d *= 2
	}
	return min(d, PasswordLockoutMax)
}

// comparePassword runs the password hash comparison (Store.ComparePassword
// or bcrypt's).
func (s *Store) comparePassword(hash, password string) error {
	if s.ComparePassword != nil {
		return s.ComparePassword([]byte(hash), []byte(password))
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
}

// wrongPassword is the one answer of every refused password sign-in.
func wrongPassword() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "e-mail or password is wrong")
}

// CheckPassword is the password sign-in of every page (portal, OAuth
// authorization, device): it returns the user with the e-mail if password
// matches. Every call costs one hash comparison, against a dummy hash for an
// unknown e-mail. Wrong passwords count toward the account's lockout
// (PasswordLockout); while it lasts even the right password is refused, with
// details.retry_after (seconds) and details.locked_until. Errors:
// UNAUTHENTICATED (unknown e-mail, wrong password or locked account, with
// the same message), INTERNAL_ERROR.
func (s *Store) CheckPassword(ctx context.Context, email, password string) (*User, error) {
	var u User
	err := s.In(ctx, models.SystemScope()).Where("email = ?", strings.ToLower(strings.TrimSpace(email))).Take(&u).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.DBErr(err)
	}
	known := err == nil && u.PasswordHash != ""
	hash := dummyPasswordHash
	if known {
		hash = u.PasswordHash
	}
	matches := s.comparePassword(hash, password) == nil
	if !known {
		return nil, wrongPassword()
	}
	now := s.Now()
	if u.LockedUntil != nil && now.Before(*u.LockedUntil) {
		return nil, lockedOut(*u.LockedUntil, now)
	}
	db := s.In(ctx, models.SystemScope())
	if matches {
		if u.FailedLogins > 0 || u.LockedUntil != nil {
			if err := db.Model(&User{}).Where("id = ?", u.ID).UpdateColumns(map[string]any{"failed_logins": 0, "locked_until": nil}).Error; err != nil {
				return nil, models.DBErr(err)
			}
			u.FailedLogins, u.LockedUntil = 0, nil
		}
		return &u, nil
	}
	var until *time.Time
	err = s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Model(&User{}).Where("id = ?", u.ID).UpdateColumn("failed_logins", gorm.Expr("failed_logins + 1")).Error; err != nil {
			return err
		}
		var cur User
		if err := tx.Select("failed_logins").Where("id = ?", u.ID).Take(&cur).Error; err != nil {
			return err
		}
		if lock := PasswordLockout(cur.FailedLogins); lock > 0 {
			t := now.Add(lock)
			until = &t
			return tx.Model(&User{}).Where("id = ?", u.ID).UpdateColumn("locked_until", t).Error
		}
		return nil
	})
	if err != nil {
		return nil, models.DBErr(err)
	}
	if until != nil {
		return nil, lockedOut(*until, now)
	}
	return nil, wrongPassword()
}

// lockedOut is the answer of a locked account: the usual failure with a hint
// of when to try again.
func lockedOut(until, now time.Time) *models.Error {
	return wrongPassword().WithDetail("retry_after", int(until.Sub(now).Seconds()+0.999)).WithDetail("locked_until", models.Timestamp(until))
}

// RetryAfter returns the seconds a refused sign-in says to wait
// (details.retry_after), or 0.
func RetryAfter(err error) int {
	if e := models.AsError(err); e != nil {
		if n, ok := e.Details["retry_after"].(int); ok {
			return n
		}
	}
	return 0
}
