package models

import (
	"context"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// User is a person who signs in (password, OAuth authorization code, device
// flow or SAML). Users belong to one organization and act in either environment.
type User struct {
	ID             string    `gorm:"primaryKey;size:40" json:"id"`
	OrganizationID string    `gorm:"size:40;not null;index" json:"organization_id"`
	Email          string    `gorm:"size:320;not null;uniqueIndex" json:"email"`
	Name           string    `gorm:"size:200;not null" json:"name"`
	Role           Role      `gorm:"size:16;not null" json:"role"`
	PasswordHash   string    `gorm:"size:100" json:"-"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// UserInput is the body of user creation.
type UserInput struct {
	Email          string
	Name           string
	Role           Role
	OrganizationID string
	Password       string
}

// CreateUser creates a user. Customers create customer users in their own
// organization; admins create anyone anywhere. Errors: VALIDATION_ERROR,
// INSUFFICIENT_PERMISSIONS, NOT_FOUND (organization), SERVICE_CONFLICT (email taken).
func (s *Store) CreateUser(ctx context.Context, p *Principal, in UserInput) (*User, error) {
	var v Validator
	in.Email = strings.ToLower(strings.TrimSpace(in.Email))
	addr, err := mail.ParseAddress(in.Email)
	v.Check(err == nil && addr.Address == in.Email && len(in.Email) <= 320, "email", "must be a valid e-mail address")
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	if in.Role == "" {
		in.Role = RoleCustomer
	}
	v.Check(in.Role.Valid(), "role", "must be customer, agent or admin")
	v.Check(in.Password == "" || (len(in.Password) >= 12 && len(in.Password) <= 72), "password", "must be 12 to 72 characters")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if in.OrganizationID == "" {
		in.OrganizationID = p.OrganizationID
	}
	if !p.IsAdmin() && (in.OrganizationID != p.OrganizationID || in.Role != RoleCustomer) {
		return nil, Errorf(CodeInsufficientPermissions, "only provider administrators can create staff or users of other organizations")
	}
	if _, err := s.GetOrganization(ctx, p, in.OrganizationID); err != nil {
		return nil, err
	}
	u := &User{ID: NewID(PrefixUser), OrganizationID: in.OrganizationID, Email: in.Email, Name: in.Name, Role: in.Role}
	if in.Password != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), bcrypt.DefaultCost)
		if err != nil {
			return nil, Internal(err)
		}
		u.PasswordHash = string(hash)
	}
	if err := s.In(ctx, SystemScope()).Create(u).Error; err != nil {
		if isUniqueViolation(err) {
			return nil, Errorf(CodeServiceConflict, "a user with e-mail %s already exists", in.Email)
		}
		return nil, dbErr(err)
	}
	return u, nil
}

// GetUser returns one user visible to p. Errors: NOT_FOUND.
func (s *Store) GetUser(ctx context.Context, p *Principal, id string) (*User, error) {
	var u User
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&u).Error
	return &u, notFoundOr(err, "user")
}

// ListUsers returns a page of the users visible to p.
func (s *Store) ListUsers(ctx context.Context, p *Principal, page PageRequest) ([]User, int64, error) {
	var users []User
	total, err := Paginate(s.In(ctx, p.Scope()).Model(&User{}), page, userSorts, &users)
	return users, total, err
}

var userSorts = SortFields{"created_at": "created_at", "email": "email", "name": "name"}

// CheckPassword returns the user with the e-mail if password matches.
// Errors: UNAUTHENTICATED (unknown e-mail or wrong password, indistinguishable).
func (s *Store) CheckPassword(ctx context.Context, email, password string) (*User, error) {
	var u User
	err := s.In(ctx, SystemScope()).Where("email = ?", strings.ToLower(strings.TrimSpace(email))).Take(&u).Error
	if err != nil || u.PasswordHash == "" || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		return nil, Errorf(CodeUnauthenticated, "e-mail or password is wrong")
	}
	return &u, nil
}
