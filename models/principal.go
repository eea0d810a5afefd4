package models

import (
	"context"
	"slices"
	"strings"
)

// Role is a principal's role: customers belong to a tenant; agents and admins are provider staff.
type Role string

// Roles (DECISIONS 7).
const (
	RoleCustomer Role = "customer"
	RoleAgent    Role = "agent"
	RoleAdmin    Role = "admin"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleCustomer || r == RoleAgent || r == RoleAdmin }

// PrincipalKind says which kind of credential authenticated a request.
type PrincipalKind string

// Principal kinds.
const (
	PrincipalAPIKey      PrincipalKind = "api_key"
	PrincipalUser        PrincipalKind = "user"
	PrincipalClient      PrincipalKind = "oauth_client"
	PrincipalCertificate PrincipalKind = "certificate"
)

// Permissions known to the platform (DECISIONS 7); "*" grants all of them.
var knownPermissions = []string{
	"services:read", "services:write", "billing:read", "billing:write", "billing:admin",
	"support:read", "support:create", "support:write", "support:admin",
	"webhooks:manage", "auth:manage", "analytics:read", "analytics:write", "*",
}

// KnownPermissions returns every permission a credential can hold.
func KnownPermissions() []string { return slices.Clone(knownPermissions) }

// ValidPermission reports whether p is a known permission.
func ValidPermission(p string) bool { return slices.Contains(knownPermissions, p) }

// Principal is who makes a request, whatever the credential: the tenant and
// environment it acts in, its role and its permissions. Authorisation is
// written once, against this.
type Principal struct {
	Kind           PrincipalKind
	ID             string // ak_, usr_, cli_ or cert_ id
	OrganizationID string
	Environment    Environment
	Role           Role
	Permissions    []string
	UserID         string // set when a person stands behind the credential
	Limits         RateLimits
}

// RateLimits are a credential's effective limits: its organization's plan,
// lowered by the credential's own limits. Zero means unlimited.
type RateLimits struct {
	Hourly     int
	Burst      int
	Concurrent int
}

// EffectiveLimits returns the organization's plan limits lowered by a key's
// own requests_per_minute (×60 caps the hourly limit) and burst_limit.
func EffectiveLimits(org *Organization, requestsPerMinute, burst int) RateLimits {
	pl := org.Limits()
	l := RateLimits{Hourly: pl.HourlyLimit, Burst: pl.BurstLimit, Concurrent: pl.Concurrent}
	lower := func(cur, own int) int {
		if own <= 0 {
			return cur
		}
		if cur == 0 || own < cur {
			return own
		}
		return cur
	}
	l.Hourly = lower(l.Hourly, requestsPerMinute*60)
	l.Burst = lower(l.Burst, burst)
	return l
}

// Can reports whether the principal holds permission perm ("*" holds all).
func (p *Principal) Can(perm string) bool {
	if p == nil {
		return false
	}
	return slices.Contains(p.Permissions, "*") || slices.Contains(p.Permissions, perm)
}

// IsStaff reports whether the principal is provider staff (agent or admin).
func (p *Principal) IsStaff() bool {
	return p != nil && (p.Role == RoleAdmin || p.Role == RoleAgent)
}

// IsAdmin reports whether the principal may use the administration endpoints.
func (p *Principal) IsAdmin() bool {
	return p != nil && p.Role == RoleAdmin && (p.Can("*") || p.Can("auth:manage"))
}

// Scope returns the data the principal may see: staff see every organization
// of their environment, customers their own organization only.
func (p *Principal) Scope() Scope {
	if p.IsStaff() {
		return Scope{OrganizationID: p.OrganizationID, Environment: p.Environment, AllOrganizations: true}
	}
	return TenantScope(p.OrganizationID, p.Environment)
}

// OwnScope returns the principal's own organization and environment, even for staff.
func (p *Principal) OwnScope() Scope { return TenantScope(p.OrganizationID, p.Environment) }

// CanGrant reports whether the principal may hand out every permission in perms.
func (p *Principal) CanGrant(perms []string) bool {
	for _, perm := range perms {
		if !p.Can(perm) {
			return false
		}
	}
	return true
}

// RolePermissions returns the permissions of a person's own session (a
// portal or SAML sign-in and its token exchange): every permission for
// admins; the support permissions plus services:read and billing:read for
// agents; everything but the staff permissions (support:admin,
// billing:admin) and "*" for customers.
func RolePermissions(role Role) []string {
	switch role {
	case RoleAdmin:
		return []string{"*"}
	case RoleAgent:
		return []string{"support:read", "support:create", "support:write", "services:read", "billing:read"}
	}
	var out []string
	for _, p := range knownPermissions {
		if p != "*" && !StaffPermission(p) {
			out = append(out, p)
		}
	}
	return out
}

// UserTokenScopes returns the scopes an OAuth token of a person may carry:
// those requested that the client holds and the person may hold
// (userPermissions: User.SessionPermissions, the rule of their own
// session), in the order asked, without repeats. The authorization code,
// the device flow and every refresh apply it, so a token never gives a
// person more than their own session would, whatever the client may hold.
func UserTokenScopes(requested, clientScopes, userPermissions []string) []string {
	allowed := &Principal{Permissions: userPermissions}
	out := []string{}
	for _, sc := range requested {
		if ValidScope(sc) && slices.Contains(clientScopes, sc) && allowed.Can(ScopeToPermission(sc)) && !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// ScopeToPermission maps an OAuth scope (services.read) to a permission (services:read).
func ScopeToPermission(scope string) string { return strings.Replace(scope, ".", ":", 1) }

// PermissionToScope maps a permission to its OAuth scope
// (services:read → services.read), ScopeToPermission's inverse.
func PermissionToScope(perm string) string { return strings.Replace(perm, ":", ".", 1) }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal carried by ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// PermissionBillingAdmin is the provider-staff permission for the
// provider's side of billing: voiding invoices and setting tax rates.
const PermissionBillingAdmin = "billing:admin"

// StaffPermission reports whether perm is one only provider staff hold
// (support:admin, billing:admin): a customer's role, user or key never
// lists it.
func StaffPermission(perm string) bool {
	return perm == "support:admin" || perm == PermissionBillingAdmin
}

// ValidScope reports whether s is a dotted scope of a known permission ("*" is not a scope).
func ValidScope(s string) bool {
	return strings.Contains(s, ".") && ValidPermission(ScopeToPermission(s)) && s != "*"
}
