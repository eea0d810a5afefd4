package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// SAMLRequest is an AuthnRequest the service provider sent: a response is
// accepted only InResponseTo one of these, once, before it expires.
type SAMLRequest struct {
	ID        string    `gorm:"primaryKey;size:100"`
	ExpiresAt time.Time `gorm:"not null;index"`
}

// SaveSAMLRequest records an AuthnRequest id. Errors: INTERNAL_ERROR.
func (s *Store) SaveSAMLRequest(ctx context.Context, id string, ttl time.Duration) error {
	return dbErr(s.In(ctx, SystemScope()).Create(&SAMLRequest{ID: id, ExpiresAt: s.Now().Add(ttl)}).Error)
}

// TakeSAMLRequest spends an unexpired AuthnRequest id; false when there is none.
// Errors: INTERNAL_ERROR.
func (s *Store) TakeSAMLRequest(ctx context.Context, id string) (bool, error) {
	res := s.In(ctx, SystemScope()).Where("id = ? AND expires_at > ?", id, s.Now()).Delete(&SAMLRequest{})
	return res.RowsAffected == 1, dbErr(res.Error)
}

// EnsureServerSecretWith returns the named secret, generating it with gen
// and sealing it on first use; concurrent callers get the same value.
// Errors: INTERNAL_ERROR.
func (s *Store) EnsureServerSecretWith(ctx context.Context, name string, gen func() (string, error)) (string, error) {
	if s.Sealer == nil {
		return "", Internal(errors.New("server secrets need SECRETS_KEY (no sealer configured)"))
	}
	db := s.In(ctx, SystemScope())
	var stored ServerSecret
	err := db.Where("name = ?", name).Take(&stored).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		value, gerr := gen()
		if gerr != nil {
			return "", Internal(gerr)
		}
		row := ServerSecret{Name: name, Sealed: s.Sealer.Seal(value), CreatedAt: s.Now()}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return "", dbErr(err)
		}
		err = db.Where("name = ?", name).Take(&stored).Error
	}
	if err != nil {
		return "", dbErr(err)
	}
	plain, err := s.Sealer.Open(stored.Sealed)
	if err != nil {
		return "", Internal(err)
	}
	return plain, nil
}

// SAMLUser returns the user with the e-mail, creating a customer of the
// organization that domains maps the e-mail's domain to (just in time).
// Errors: ACCESS_RESTRICTED (unknown user outside a configured domain),
// INTERNAL_ERROR.
func (s *Store) SAMLUser(ctx context.Context, email, name string, domains map[string]string) (*User, bool, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	var u User
	err := s.In(ctx, SystemScope()).Where("email = ?", email).Take(&u).Error
	if err == nil {
		return &u, false, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, dbErr(err)
	}
	_, domain, _ := strings.Cut(email, "@")
	orgID, ok := domains[domain]
	if !ok {
		return nil, false, Errorf(CodeAccessRestricted, "no account for %s and its domain is not enabled for single sign-on", email)
	}
	if strings.TrimSpace(name) == "" {
		name = email
	}
	admin := &Principal{Role: RoleAdmin, Permissions: []string{"*"}}
	created, err := s.CreateUser(ctx, admin, UserInput{Email: email, Name: name, Role: RoleCustomer, OrganizationID: orgID})
	if err != nil {
		return nil, false, err
	}
	return created, true, nil
}
