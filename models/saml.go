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
	// RelayTarget is where the browser goes after the login: a same-site
	// relative path kept here, never sent to the IdP.
	RelayTarget string `gorm:"type:text"`
}

// SaveSAMLRequest records an AuthnRequest id with the relative path to
// return to. Errors: INTERNAL_ERROR.
func (s *Store) SaveSAMLRequest(ctx context.Context, id, relayTarget string, ttl time.Duration) error {
	return dbErr(s.In(ctx, SystemScope()).Create(&SAMLRequest{ID: id, ExpiresAt: s.Now().Add(ttl), RelayTarget: relayTarget}).Error)
}

// TakeSAMLRequest spends an unexpired AuthnRequest id and returns it; nil
// when there is none (unknown, expired or already used). Errors: INTERNAL_ERROR.
func (s *Store) TakeSAMLRequest(ctx context.Context, id string) (*SAMLRequest, error) {
	var req SAMLRequest
	err := s.Tx(ctx, SystemScope(), func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND expires_at > ?", id, s.Now()).Take(&req).Error; err != nil {
			return err
		}
		res := tx.Where("id = ?", id).Delete(&SAMLRequest{})
		if res.Error == nil && res.RowsAffected != 1 {
			return gorm.ErrRecordNotFound
		}
		return res.Error
	})
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, dbErr(err)
	}
	return &req, nil
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

// SAMLLogin is what a verified assertion says about a person.
type SAMLLogin struct {
	Email  string
	Name   string
	Groups []string
}

// SAMLPolicy is the configuration of SAML sign-in: which e-mail domains get
// users just in time (domain -> org_ id), and which IdP groups grant which
// role (group -> role).
type SAMLPolicy struct {
	Domains    map[string]string
	GroupRoles map[string]Role
}

var roleRank = map[Role]int{RoleCustomer: 0, RoleAgent: 1, RoleAdmin: 2}

// RoleForGroups returns the highest role that groups grant under mapping
// (customer when none matches). Staff roles (agent, admin) are granted only
// to users of the provider's own organization; anyone else gets customer, so
// a tenant's IdP can never make its users provider staff.
func RoleForGroups(groups []string, mapping map[string]Role, provider bool) Role {
	role := RoleCustomer
	for _, g := range groups {
		if r, ok := mapping[strings.TrimSpace(g)]; ok && roleRank[r] > roleRank[role] {
			role = r
		}
	}
	if role != RoleCustomer && !provider {
		return RoleCustomer
	}
	return role
}

// SAMLUser returns the user of a SAML login, creating one in the
// organization that the policy maps the e-mail's domain to (just in time).
// When the policy maps groups to roles, the user's role follows the groups
// of every login (RoleForGroups). It reports whether the user was created.
// Errors: ACCESS_RESTRICTED (unknown user outside a configured domain),
// INTERNAL_ERROR.
func (s *Store) SAMLUser(ctx context.Context, login SAMLLogin, policy SAMLPolicy) (*User, bool, error) {
	email := strings.ToLower(strings.TrimSpace(login.Email))
	db := s.In(ctx, SystemScope())
	provider := func(orgID string) (bool, error) {
		var org Organization
		if err := db.Where("id = ?", orgID).Take(&org).Error; err != nil {
			return false, notFoundOr(err, "organization")
		}
		return org.Provider, nil
	}
	var u User
	err := db.Where("email = ?", email).Take(&u).Error
	if err == nil {
		if len(policy.GroupRoles) == 0 {
			return &u, false, nil
		}
		isProvider, err := provider(u.OrganizationID)
		if err != nil {
			return nil, false, err
		}
		if role := RoleForGroups(login.Groups, policy.GroupRoles, isProvider); role != u.Role {
			if err := db.Model(&User{}).Where("id = ?", u.ID).Updates(map[string]any{"role": role, "updated_at": s.Now()}).Error; err != nil {
				return nil, false, dbErr(err)
			}
			u.Role = role
		}
		return &u, false, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, dbErr(err)
	}
	_, domain, _ := strings.Cut(email, "@")
	orgID, ok := policy.Domains[domain]
	if !ok {
		return nil, false, Errorf(CodeAccessRestricted, "no account for %s and its domain is not enabled for single sign-on", email)
	}
	name := login.Name
	if strings.TrimSpace(name) == "" {
		name = email
	}
	isProvider, err := provider(orgID)
	if err != nil {
		return nil, false, err
	}
	admin := &Principal{Role: RoleAdmin, Permissions: []string{"*"}}
	created, err := s.CreateUser(ctx, admin, UserInput{Email: email, Name: name, Role: RoleForGroups(login.Groups, policy.GroupRoles, isProvider), OrganizationID: orgID})
	if err != nil {
		return nil, false, err
	}
	return created, true, nil
}
