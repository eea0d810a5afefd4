package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/telcoplatform/platform/models"
)

// User is a person who signs in (password, OAuth authorization code, device
// flow or SAML). Users belong to one organization and act in either environment.
type User struct {
	ID             string      `gorm:"primaryKey;size:40" json:"id"`
	OrganizationID string      `gorm:"size:40;not null;index" json:"organization_id"`
	Email          string      `gorm:"size:320;not null;uniqueIndex" json:"email"`
	Name           string      `gorm:"size:200;not null" json:"name"`
	Role           models.Role `gorm:"size:16;not null" json:"role"`
	PasswordHash   string      `gorm:"size:100" json:"-"`
	CreatedAt      time.Time   `json:"created_at"`
	UpdatedAt      time.Time   `json:"updated_at"`
	// IPAllowList, when not empty, is where every request made with the
	// user's access tokens must come from (CIDR ranges).
	IPAllowList []string `gorm:"serializer:json;type:text" json:"ip_allowlist,omitempty"`
	// Permissions, when not nil, narrows what the user's sessions and tokens
	// carry below the role's permissions (see SessionPermissions); users
	// created through the API always have it, so a creator never hands out
	// more than it holds. Nil (SAML just-in-time users, seeds): the role's.
	Permissions []string `gorm:"serializer:json;type:text" json:"permissions,omitempty"`
	// FailedLogins counts wrong passwords in a row; LockedUntil is when the
	// account takes a password again after too many (see CheckPassword).
	FailedLogins int        `gorm:"not null;default:0" json:"-"`
	LockedUntil  *time.Time `json:"-"`
}

// SessionPermissions returns what a person's own session (portal, SAML,
// OAuth or device sign-in) may carry: the role's permissions
// (RolePermissions), narrowed by the user's own list when it has one.
func (u *User) SessionPermissions() []string {
	role := models.RolePermissions(u.Role)
	if u.Permissions == nil {
		return role
	}
	holder := &models.Principal{Permissions: role}
	out := []string{}
	for _, perm := range u.Permissions {
		if holder.Can(perm) {
			out = append(out, perm)
		}
	}
	return out
}

// validUserPermissions checks a user's permission list against its role:
// each must be known and part of the role's own permissions.
func validUserPermissions(v *models.Validator, field string, role models.Role, perms []string) {
	holder := &models.Principal{Permissions: models.RolePermissions(role)}
	for i, perm := range perms {
		switch {
		case !models.ValidPermission(perm):
			v.Add(field+"["+strconv.Itoa(i)+"]", "unknown permission "+strconv.Quote(perm))
		case !holder.Can(perm):
			v.Add(field+"["+strconv.Itoa(i)+"]", "is not among the permissions of role "+string(role))
		}
	}
}

// UserInput is the body of user creation.
type UserInput struct {
	Email          string
	Name           string
	Role           models.Role
	OrganizationID string
	Password       string
	IPAllowList    []string // IP addresses or CIDR ranges; empty: any address
	// Permissions are what the user's sessions may carry; nil: every
	// permission of the role. The creator must hold each of them.
	Permissions []string
}

// CreateUser creates a user. Customers create customer users in their own
// organization; administrators create users of any organization, and staff
// (agents, admins) only in the provider's. A user is a credential of its
// own, so the rule of keys and clients applies: the creator must hold
// every permission the user's sessions will carry (in.Permissions, by
// default all of the role's), and since people act in both environments a
// test-mode (sandbox) credential creates none. Errors: VALIDATION_ERROR
// (an unknown organization_id, a staff role outside the provider),
// INSUFFICIENT_PERMISSIONS, ALREADY_EXISTS (email taken).
func (s *Store) CreateUser(ctx context.Context, p *models.Principal, in UserInput) (*User, error) {
	if p.Environment == models.EnvTest {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "users act in both environments: create them with a live credential")
	}
	var v models.Validator
	in.Email = strings.ToLower(strings.TrimSpace(in.Email))
	addr, err := mail.ParseAddress(in.Email)
	v.Check(err == nil && addr.Address == in.Email && len(in.Email) <= 320, "email", "must be a valid e-mail address")
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	if in.Role == "" {
		in.Role = models.RoleCustomer
	}
	v.Check(in.Role.Valid(), "role", "must be customer, agent or admin")
	v.Check(in.Password == "" || (len(in.Password) >= 12 && len(in.Password) <= 72), "password", "must be 12 to 72 characters")
	allow := models.NormalizeIPAllowList(&v, "ip_allowlist", in.IPAllowList)
	granted := in.Permissions // nil: the role's, following later role changes
	if in.Role.Valid() {
		if granted == nil {
			granted = models.RolePermissions(in.Role)
		}
		validUserPermissions(&v, "permissions", in.Role, granted)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !p.CanGrant(granted) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "a user cannot hold permissions that its creator lacks: list in permissions only what this credential holds").
			WithDetail("requested_permissions", granted).WithDetail("held_permissions", p.Permissions)
	}
	if in.OrganizationID == "" {
		in.OrganizationID = p.OrganizationID
	}
	if !p.IsAdmin() && (in.OrganizationID != p.OrganizationID || in.Role != models.RoleCustomer) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can create staff or users of other organizations")
	}
	org, err := s.GetOrganization(ctx, p, in.OrganizationID)
	if models.ErrorCode(err) == models.CodeNotFound {
		return nil, models.Invalid(models.FieldIssue{Field: "organization_id", Issue: fmt.Sprintf("no organization %s", in.OrganizationID)})
	}
	if err != nil {
		return nil, err
	}
	if err := checkStaffRole(org, in.Role); err != nil {
		return nil, err
	}
	u := &User{ID: models.NewID(models.PrefixUser), OrganizationID: in.OrganizationID, Email: in.Email, Name: in.Name, Role: in.Role, IPAllowList: allow,
		Permissions: slices.Clone(in.Permissions)}
	if in.Password != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), bcrypt.DefaultCost)
		if err != nil {
			return nil, models.Internal(err)
		}
		u.PasswordHash = string(hash)
	}
	if err := s.In(ctx, models.SystemScope()).Create(u).Error; err != nil {
		if models.IsUniqueViolation(err) {
			return nil, models.Errorf(models.CodeAlreadyExists, "a user with e-mail %s already exists", in.Email)
		}
		return nil, models.DBErr(err)
	}
	return u, nil
}

// UserUpdate is a change to a user: nil fields are left as they are.
type UserUpdate struct {
	Name        *string
	IPAllowList *[]string // replaces the allow-list; an empty list removes it
	// Role changes the user's role (provider administrators only; staff
	// roles exist only in the provider's organization).
	Role *models.Role
	// Permissions replaces the user's own permission list; an empty list
	// leaves the user no permission. The caller must hold each of them.
	Permissions *[]string
	// Origin is where the request making the change comes from: users
	// cannot set an allow-list that excludes the request setting it.
	Origin models.RequestOrigin
}

// UpdateUser changes a user's name, IP allow-list, role or permissions and
// returns the user. Provider administrators change any user; other callers
// (auth:manage, checked by the API) change the customer users of their own
// organization. Users act in both environments, so sandbox (test)
// credentials change none. A caller changes only users whose permissions it
// could grant itself, and grants only permissions it holds. An allow-list
// that excludes the address of the request, set by the user on themselves,
// is refused (it would lock them out).
// Errors: VALIDATION_ERROR, INSUFFICIENT_PERMISSIONS, NOT_FOUND, INTERNAL_ERROR.
func (s *Store) UpdateUser(ctx context.Context, p *models.Principal, id string, in UserUpdate) (*User, error) {
	if p.Environment == models.EnvTest {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "users act in both environments: change them with a live credential")
	}
	var v models.Validator
	updates := map[string]any{}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		v.Check(name != "" && len(name) <= 200, "name", "is required, at most 200 characters")
		updates["name"] = name
	}
	var allow []string
	if in.IPAllowList != nil {
		allow = models.NormalizeIPAllowList(&v, "ip_allowlist", *in.IPAllowList)
		updates["ip_allow_list"] = models.StoredList(allow)
	}
	if in.Role != nil {
		v.Check(in.Role.Valid(), "role", "must be customer, agent or admin")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	u, err := s.GetUser(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if !p.IsAdmin() && (u.OrganizationID != p.OrganizationID || u.Role != models.RoleCustomer) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can change staff or users of other organizations")
	}
	if p.UserID != u.ID && !p.CanGrant(u.SessionPermissions()) { // restricting oneself is never an escalation
		return nil, models.Errorf(models.CodeInsufficientPermissions, "this user holds permissions that the caller lacks: only a credential holding all of them can change it").
			WithDetail("user_permissions", u.SessionPermissions())
	}
	role := u.Role
	if in.Role != nil && *in.Role != u.Role {
		if !p.IsAdmin() {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can change a user's role")
		}
		if *in.Role != models.RoleCustomer {
			org, err := s.GetOrganization(ctx, p, u.OrganizationID)
			if err != nil {
				return nil, err
			}
			if err := checkStaffRole(org, *in.Role); err != nil {
				return nil, err
			}
		}
		role = *in.Role
		updates["role"] = role
	}
	granted := u.Permissions
	if in.Permissions != nil {
		granted = slices.Clone(*in.Permissions)
		if granted == nil {
			granted = []string{}
		}
	}
	if in.Permissions != nil || role != u.Role {
		check := granted
		if check == nil {
			check = models.RolePermissions(role)
		}
		validUserPermissions(&v, "permissions", role, check)
		if err := v.Err(); err != nil {
			return nil, err
		}
		if !p.CanGrant(check) {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "a user cannot hold permissions that the caller lacks").
				WithDetail("requested_permissions", check).WithDetail("held_permissions", p.Permissions)
		}
		if in.Permissions != nil {
			b, _ := json.Marshal(granted) // "[]" for none: NULL would mean the role's
			updates["permissions"] = string(b)
		}
	}
	if in.IPAllowList != nil && p.UserID == u.ID && models.CheckIPAllowList(allow, in.Origin, "user") != nil {
		ip := "unknown"
		if in.Origin.IP.IsValid() {
			ip = in.Origin.IP.Unmap().String()
		}
		return nil, models.Invalid(models.FieldIssue{Field: "ip_allowlist", Issue: "does not include the address of this request (" + ip + "): saving it would lock you out"})
	}
	if len(updates) > 0 {
		if err := s.In(ctx, models.SystemScope()).Model(u).Updates(updates).Error; err != nil {
			return nil, models.DBErr(err)
		}
	}
	return s.GetUser(ctx, p, id)
}

// GetUser returns one user visible to p. Errors: NOT_FOUND.
func (s *Store) GetUser(ctx context.Context, p *models.Principal, id string) (*User, error) {
	var u User
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&u).Error
	return &u, models.NotFoundOr(err, "user")
}

// ListUsers returns a page of the users visible to p.
func (s *Store) ListUsers(ctx context.Context, p *models.Principal, page models.PageRequest) ([]User, int64, error) {
	var users []User
	total, err := models.Paginate(s.In(ctx, p.Scope()).Model(&User{}), page, userSorts, &users)
	return users, total, err
}

var userSorts = models.SortFields{"created_at": "created_at", "email": "email", "name": "name"}

// DemoUserEmail is the e-mail of the demo tenant's seeded user.
const DemoUserEmail = "demo.user@demo.example"

// EnsureUserPassword gives the user with the e-mail this password unless it
// already has it (development bootstrap: PLATFORM_DEMO_PASSWORD).
// Errors: VALIDATION_ERROR (12 to 72 characters), NOT_FOUND, INTERNAL_ERROR.
func (s *Store) EnsureUserPassword(ctx context.Context, email, password string) error {
	if len(password) < 12 || len(password) > 72 {
		return models.Invalid(models.FieldIssue{Field: "password", Issue: "must be 12 to 72 characters"})
	}
	var u User
	if err := s.In(ctx, models.SystemScope()).Where("email = ?", strings.ToLower(email)).Take(&u).Error; err == nil &&
		u.PasswordHash != "" && s.comparePassword(u.PasswordHash, password) == nil {
		return nil
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return models.Internal(err)
	}
	res := s.In(ctx, models.SystemScope()).Model(&User{}).Where("email = ?", strings.ToLower(email)).
		Updates(map[string]any{"password_hash": string(hash), "updated_at": s.Now()})
	if res.Error != nil {
		return models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return models.NotFound("user")
	}
	return nil
}

// checkStaffRole refuses a staff role (agent, admin) for a user or key of
// any organization but the provider's: staff act across every
// organization, so only the provider's own people may be staff.
// Errors: VALIDATION_ERROR (role).
func checkStaffRole(org *models.Organization, role models.Role) error {
	if role != models.RoleCustomer && !org.Provider {
		return models.Invalid(models.FieldIssue{Field: "role", Issue: "staff roles exist only in the provider's organization"})
	}
	return nil
}
