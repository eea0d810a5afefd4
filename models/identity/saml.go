package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// SAMLRequest is an AuthnRequest the service provider sent: a response is
// accepted only InResponseTo one of these, once, before it expires, and
// only from the browser that started it.
type SAMLRequest struct {
	ID        string    `gorm:"primaryKey;size:100"`
	ExpiresAt time.Time `gorm:"not null;index"`
	// RelayTarget is where the browser goes after the login: a same-site
	// relative path kept here, never sent to the IdP.
	RelayTarget string `gorm:"type:text"`
	// BrowserHash is the hash of the random value of the cookie set in the
	// browser that started the sign-in (the value itself is not stored).
	BrowserHash string `gorm:"size:64"`
}

// BoundTo reports whether browserValue (the starting browser's cookie) is
// the one the request was started with.
func (r *SAMLRequest) BoundTo(browserValue string) bool {
	return browserValue != "" && r.BrowserHash != "" && constantTimeEqual(models.HashSecret(browserValue), r.BrowserHash)
}

// SaveSAMLRequest records an AuthnRequest id with the relative path to
// return to and the value of the cookie that binds it to the starting
// browser. Errors: INTERNAL_ERROR.
func (s *Store) SaveSAMLRequest(ctx context.Context, id, relayTarget, browserValue string, ttl time.Duration) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Create(&SAMLRequest{ID: id, ExpiresAt: s.Now().Add(ttl), RelayTarget: relayTarget, BrowserHash: models.HashSecret(browserValue)}).Error)
}

// PendingSAMLRequest returns an unexpired, unspent AuthnRequest without
// spending it; nil when there is none. Errors: INTERNAL_ERROR.
func (s *Store) PendingSAMLRequest(ctx context.Context, id string) (*SAMLRequest, error) {
	var req SAMLRequest
	err := s.In(ctx, models.SystemScope()).Where("id = ? AND expires_at > ?", id, s.Now()).Take(&req).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	return &req, nil
}

// TakeSAMLRequest spends an unexpired AuthnRequest id and returns it; nil
// when there is none (unknown, expired or already used). Call it only once
// the response's signature is verified, so that a forged response cannot
// spend a legitimate request. Errors: INTERNAL_ERROR.
func (s *Store) TakeSAMLRequest(ctx context.Context, id string) (*SAMLRequest, error) {
	var req SAMLRequest
	err := s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
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
		return nil, models.DBErr(err)
	}
	return &req, nil
}

// EnsureServerSecretWith returns the named secret, generating it with gen
// and sealing it on first use; concurrent callers get the same value.
// Errors: INTERNAL_ERROR.
func (s *Store) EnsureServerSecretWith(ctx context.Context, name string, gen func() (string, error)) (string, error) {
	if s.Sealer == nil {
		return "", models.Internal(errors.New("server secrets need SECRETS_KEY (no sealer configured)"))
	}
	db := s.In(ctx, models.SystemScope())
	var stored ServerSecret
	err := db.Where("name = ?", name).Take(&stored).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		value, gerr := gen()
		if gerr != nil {
			return "", models.Internal(gerr)
		}
		row := ServerSecret{Name: name, Sealed: s.Sealer.Seal(models.BindServerSecret(name), value), CreatedAt: s.Now()}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return "", models.DBErr(err)
		}
		err = db.Where("name = ?", name).Take(&stored).Error
	}
	if err != nil {
		return "", models.DBErr(err)
	}
	plain, err := s.Sealer.Open(models.BindServerSecret(name), stored.Sealed)
	if err != nil {
		return "", models.Internal(err)
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
	GroupRoles map[string]models.Role
}

var roleRank = map[models.Role]int{models.RoleCustomer: 0, models.RoleAgent: 1, models.RoleAdmin: 2}

// RoleForGroups returns the highest role that groups grant under mapping
// (customer when none matches). Staff roles (agent, admin) are granted only
// to users of the provider's own organization; anyone else gets customer, so
// a tenant's IdP can never make its users provider staff.
func RoleForGroups(groups []string, mapping map[string]models.Role, provider bool) models.Role {
	role := models.RoleCustomer
	for _, g := range groups {
		if r, ok := mapping[strings.TrimSpace(g)]; ok && roleRank[r] > roleRank[role] {
			role = r
		}
	}
	if role != models.RoleCustomer && !provider {
		return models.RoleCustomer
	}
	return role
}

// SAMLUser returns the user of a SAML login. The identity provider is
// trusted only for the e-mail domains of the policy, each for one
// organization: an existing user is matched only when their e-mail's domain
// is trusted and they belong to that domain's organization (so a tenant's
// IdP can never sign in another organization's user, nor provider staff);
// an unknown e-mail of a trusted domain becomes a user of its organization
// (just in time). When the policy maps groups to roles, the user's role
// follows the groups of every login (RoleForGroups). It reports whether the
// user was created. Errors: ACCESS_RESTRICTED (domain not trusted, or the
// account belongs to another organization), INTERNAL_ERROR.
func (s *Store) SAMLUser(ctx context.Context, login SAMLLogin, policy SAMLPolicy) (*User, bool, error) {
	email := strings.ToLower(strings.TrimSpace(login.Email))
	_, domain, _ := strings.Cut(email, "@")
	orgID, trusted := policy.Domains[domain]
	if !trusted {
		return nil, false, models.Errorf(models.CodeAccessRestricted, "single sign-on is not enabled for %s's domain", email)
	}
	db := s.In(ctx, models.SystemScope())
	provider := func(orgID string) (bool, error) {
		var org models.Organization
		if err := db.Where("id = ?", orgID).Take(&org).Error; err != nil {
			return false, models.NotFoundOr(err, "organization")
		}
		return org.Provider, nil
	}
	var u User
	err := db.Where("email = ?", email).Take(&u).Error
	if err == nil {
		if u.OrganizationID != orgID {
			return nil, false, models.Errorf(models.CodeAccessRestricted, "the account %s cannot sign in through this identity provider: it belongs to another organization than the one single sign-on serves for its domain", email)
		}
		if len(policy.GroupRoles) == 0 {
			return &u, false, nil
		}
		isProvider, err := provider(u.OrganizationID)
		if err != nil {
			return nil, false, err
		}
		if role := RoleForGroups(login.Groups, policy.GroupRoles, isProvider); role != u.Role {
			if err := db.Model(&User{}).Where("id = ?", u.ID).Updates(map[string]any{"role": role, "updated_at": s.Now()}).Error; err != nil {
				return nil, false, models.DBErr(err)
			}
			u.Role = role
		}
		return &u, false, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, models.DBErr(err)
	}
	name := login.Name
	if strings.TrimSpace(name) == "" {
		name = email
	}
	isProvider, err := provider(orgID)
	if err != nil {
		return nil, false, err
	}
	admin := &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
	created, err := s.CreateUser(ctx, admin, UserInput{Email: email, Name: name, Role: RoleForGroups(login.Groups, policy.GroupRoles, isProvider), OrganizationID: orgID})
	if err != nil {
		return nil, false, err
	}
	return created, true, nil
}
