package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Idempotency windows (DECISIONS 6).
const (
	IdempotencyTTL  = 24 * time.Hour
	idempotencyLock = 2 * time.Minute
)

// ValidIdempotencyKey reports whether key is an Idempotency-Key the API
// accepts: 1 to 255 printable ASCII characters, no space.
func ValidIdempotencyKey(key string) bool {
	return key != "" && len(key) <= 255 && !strings.ContainsFunc(key, func(r rune) bool { return r < 0x21 || r > 0x7e })
}

// IdempotencyRecord remembers the first answer to a POST with an
// Idempotency-Key, in the database so every API instance sees it. The
// answer's body is stored only sealed with the store's Sealer (answers may
// carry secrets shown once: API keys, client secrets, signing secrets).
type IdempotencyRecord struct {
	ScopeKey    string `gorm:"primaryKey;size:64"`
	RequestHash string `gorm:"size:64;not null"`
	Done        bool   `gorm:"not null;default:false"`
	Status      int
	ContentType string `gorm:"size:100"`
	Location    string `gorm:"size:2000"`
	BodySealed  string `gorm:"type:text"`
	LockedUntil time.Time
	ExpiresAt   time.Time `gorm:"index"`
	CreatedAt   time.Time
}

// IdempotentAnswer is a stored answer, opened, ready to replay.
type IdempotentAnswer struct {
	Status      int
	ContentType string
	Location    string
	Body        []byte
}

// IdempotencyScope identifies a key: the credential that sent it (its kind
// and id, so that another credential of the same organization never sees
// the answer), organization, environment, method and path.
type IdempotencyScope struct {
	PrincipalKind  PrincipalKind
	PrincipalID    string
	OrganizationID string
	Environment    Environment
	Method         string
	Path           string
	Key            string
}

func (sc IdempotencyScope) hash() string {
	sum := sha256.Sum256([]byte(string(sc.PrincipalKind) + "\x00" + sc.PrincipalID + "\x00" + sc.OrganizationID + "\x00" +
		string(sc.Environment) + "\x00" + sc.Method + "\x00" + sc.Path + "\x00" + sc.Key))
	return hex.EncodeToString(sum[:])
}

// BodyHash returns the hash under which a request body is compared.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// BeginIdempotent claims a key for a request. It returns the stored answer to
// replay when the same request already completed, or nil when the caller
// should process the request (and then Complete or Release the key).
// Errors: IDEMPOTENCY_KEY_IN_USE (same key still in flight),
// IDEMPOTENCY_KEY_MISMATCH (same key, different body), INTERNAL_ERROR (an
// answer that cannot be opened with this SECRETS_KEY).
func (s *Store) BeginIdempotent(ctx context.Context, sc IdempotencyScope, bodyHash string) (*IdempotentAnswer, error) {
	now := s.Now()
	db := s.In(ctx, SystemScope())
	rec := IdempotencyRecord{ScopeKey: sc.hash(), RequestHash: bodyHash, LockedUntil: now.Add(idempotencyLock), ExpiresAt: now.Add(IdempotencyTTL)}
	for attempt := 0; attempt < 2; attempt++ {
		err := db.Create(&rec).Error
		if err == nil {
			return nil, nil
		}
		if !isUniqueViolation(err) {
			return nil, DBErr(err)
		}
		var existing IdempotencyRecord
		if err := db.Where("scope_key = ?", rec.ScopeKey).Take(&existing).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				continue // released meanwhile: try to claim again
			}
			return nil, DBErr(err)
		}
		stale := existing.ExpiresAt.Before(now) || (!existing.Done && existing.LockedUntil.Before(now))
		if stale {
			// An expired answer or an abandoned claim: take it over atomically.
			res := db.Model(&IdempotencyRecord{}).
				Where("scope_key = ? AND expires_at = ? AND locked_until = ?", existing.ScopeKey, existing.ExpiresAt, existing.LockedUntil).
				Updates(map[string]any{"request_hash": bodyHash, "done": false, "status": 0, "body_sealed": "", "content_type": "", "location": "",
					"locked_until": rec.LockedUntil, "expires_at": rec.ExpiresAt})
			if res.Error != nil {
				return nil, DBErr(res.Error)
			}
			if res.RowsAffected == 1 {
				return nil, nil
			}
			continue
		}
		if existing.RequestHash != bodyHash {
			return nil, Errorf(CodeIdempotencyKeyMismatch, "this Idempotency-Key was used with a different request body")
		}
		if !existing.Done {
			return nil, Errorf(CodeIdempotencyKeyInUse, "a request with this Idempotency-Key is still being processed")
		}
		return s.openAnswer(&existing)
	}
	return nil, Errorf(CodeIdempotencyKeyInUse, "a request with this Idempotency-Key is still being processed")
}

// openAnswer decrypts a stored answer. Errors: INTERNAL_ERROR.
func (s *Store) openAnswer(rec *IdempotencyRecord) (*IdempotentAnswer, error) {
	a := &IdempotentAnswer{Status: rec.Status, ContentType: rec.ContentType, Location: rec.Location}
	if rec.BodySealed == "" {
		return a, nil
	}
	if s.Sealer == nil {
		return nil, Internal(errors.New("stored idempotent answers need SECRETS_KEY (no sealer configured)"))
	}
	body, err := s.Sealer.Open(BindIdempotency(rec.ScopeKey), rec.BodySealed)
	if err != nil {
		return nil, Internal(err)
	}
	a.Body = []byte(body)
	return a, nil
}

// CompleteIdempotent stores the answer to replay for the key, its body
// sealed. Without a sealer nothing is stored: the key is released and a
// retry is processed afresh. Errors: INTERNAL_ERROR.
func (s *Store) CompleteIdempotent(ctx context.Context, sc IdempotencyScope, a IdempotentAnswer) error {
	if s.Sealer == nil {
		return s.ReleaseIdempotent(ctx, sc)
	}
	sealed := ""
	if len(a.Body) > 0 {
		sealed = s.Sealer.Seal(BindIdempotency(sc.hash()), string(a.Body))
	}
	return DBErr(s.In(ctx, SystemScope()).Model(&IdempotencyRecord{}).Where("scope_key = ?", sc.hash()).Updates(map[string]any{
		"done": true, "status": a.Status, "content_type": a.ContentType, "location": a.Location, "body_sealed": sealed,
	}).Error)
}

// ReleaseIdempotent forgets the key so a retry is processed afresh (answers 401, 403, 429 and 5xx).
func (s *Store) ReleaseIdempotent(ctx context.Context, sc IdempotencyScope) error {
	return DBErr(s.In(ctx, SystemScope()).Where("scope_key = ?", sc.hash()).Delete(&IdempotencyRecord{}).Error)
}

// PurgeIdempotency deletes expired records and returns how many.
func (s *Store) PurgeIdempotency(ctx context.Context) (int64, error) {
	res := s.In(ctx, SystemScope()).Where("expires_at < ?", s.Now()).Delete(&IdempotencyRecord{})
	return res.RowsAffected, DBErr(res.Error)
}
