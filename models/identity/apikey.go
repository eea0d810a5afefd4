package identity

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// API key format (spec 5.1, DECISIONS 7): sk_live_ or sk_test_ and 56 base62 characters.
const (
	apiKeySecretLength = 56
	liveKeyPrefix      = "sk_live_"
	testKeyPrefix      = "sk_test_"
	signatureMaxSkew   = 5 * time.Minute
)

// APIKey is a stored API key. The secret is stored only as its SHA-256.
type APIKey struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	Name              string      `gorm:"size:200;not null"`
	Description       string      `gorm:"size:10000"`
	DisplayPrefix     string      `gorm:"size:20;not null"`
	Hash              string      `gorm:"size:64;not null;uniqueIndex"`
	Role              models.Role `gorm:"size:16;not null"`
	Permissions       []string    `gorm:"serializer:json;type:text;not null"`
	RequestsPerMinute int         `gorm:"not null;default:0"`
	BurstLimit        int         `gorm:"not null;default:0"`
	IPAllowList       []string    `gorm:"serializer:json;type:text"`
	SigningSecret     string      `gorm:"size:200"` // sealed with SECRETS_KEY; empty when signing is not required
	ExpiresAt         *time.Time
	RevokedAt         *time.Time
	LastUsedAt        *time.Time
	UsageCount        int64  `gorm:"not null;default:0"`
	CreatedBy         string `gorm:"size:40"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// APIKeyInput is the body of key creation (spec 2.6, DECISIONS 11).
type APIKeyInput struct {
	Name              string
	Description       string
	Permissions       []string
	RequestsPerMinute int // 0: not set, the plan's hourly limit applies (the API refuses a 0 that is sent)
	BurstLimit        int // 0: not set, the plan's burst applies; else at least 3
	IPAllowList       []string
	ExpiresAt         *time.Time
	RequireSigning    bool
	OrganizationID    string             // staff only
	Environment       models.Environment // staff only
	Role              models.Role        // admins only
}

// IssuedKey is a key with its secrets, shown once on create and rotate.
type IssuedKey struct {
	Key           *APIKey
	Secret        string
	SigningSecret string
}

func newKeySecret(env models.Environment) string {
	prefix := liveKeyPrefix
	if env == models.EnvTest {
		prefix = testKeyPrefix
	}
	return prefix + models.RandomString(apiKeySecretLength)
}

// ValidKeyFormat reports whether secret is shaped like an API key and returns its environment.
func ValidKeyFormat(secret string) (models.Environment, bool) {
	var env models.Environment
	var rest string
	switch {
	case strings.HasPrefix(secret, liveKeyPrefix):
		env, rest = models.EnvLive, secret[len(liveKeyPrefix):]
	case strings.HasPrefix(secret, testKeyPrefix):
		env, rest = models.EnvTest, secret[len(testKeyPrefix):]
	default:
		return "", false
	}
	if len(rest) != apiKeySecretLength {
		return "", false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", false
		}
	}
	return env, true
}

func parseAllowList(entries []string) ([]string, bool) {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if pfx, err := netip.ParsePrefix(e); err == nil {
			out = append(out, pfx.Masked().String())
			continue
		}
		if addr, err := netip.ParseAddr(e); err == nil {
			out = append(out, netip.PrefixFrom(addr, addr.BitLen()).String())
			continue
		}
		return nil, false
	}
	return out, true
}

// CreateAPIKey issues a key. A key never holds a permission its creator lacks
// and never exceeds its organization's plan. Errors: VALIDATION_ERROR,
// INSUFFICIENT_PERMISSIONS, NOT_FOUND (organization).
func (s *Store) CreateAPIKey(ctx context.Context, p *models.Principal, in APIKeyInput) (*IssuedKey, error) {
	var v models.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "name", "is required, at most 200 characters")
	v.Check(len(in.Description) <= 10000, "description", "must be at most 10000 characters")
	v.Check(len(in.Permissions) > 0, "permissions", "must list at least one permission")
	for i, perm := range in.Permissions {
		v.Check(models.ValidPermission(perm), "permissions["+strconv.Itoa(i)+"]", "unknown permission "+strconv.Quote(perm))
	}
	v.Check(in.RequestsPerMinute >= 0, "rate_limit.requests_per_minute", "must not be negative")
	v.Check(in.BurstLimit >= 0, "rate_limit.burst_limit", "must not be negative")
	v.Check(in.BurstLimit == 0 || in.BurstLimit >= 3, "rate_limit.burst_limit", "must be at least 3 (the cost of a DELETE)")
	allow, ok := parseAllowList(in.IPAllowList)
	v.Check(ok, "restrictions.ip_whitelist", "must list IP addresses or CIDR ranges")
	v.Check(len(in.IPAllowList) <= 100, "restrictions.ip_whitelist", "must have at most 100 entries")
	if in.ExpiresAt != nil {
		v.Check(in.ExpiresAt.After(s.Now()), "restrictions.expires_at", "must be in the future")
	}
	v.Check(in.Environment == "" || in.Environment.Valid(), "environment", "must be live or test")
	v.Check(in.Role == "" || in.Role.Valid(), "role", "must be customer, agent or admin")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if !p.CanGrant(in.Permissions) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "a key cannot hold permissions that its creator lacks")
	}
	orgID, env, role := p.OrganizationID, p.Environment, models.RoleCustomer
	if in.OrganizationID != "" || in.Environment != "" || (in.Role != "" && in.Role != models.RoleCustomer) {
		if !p.IsAdmin() {
			return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can issue keys for other organizations, environments or staff roles")
		}
		if in.OrganizationID != "" {
			orgID = in.OrganizationID
		}
		if in.Environment != "" {
			env = in.Environment
		}
		if in.Role != "" {
			role = in.Role
		}
	} else if p.IsStaff() {
		role = p.Role
	}
	org, err := s.GetOrganization(ctx, p, orgID)
	if models.ErrorCode(err) == models.CodeNotFound && in.OrganizationID != "" {
		return nil, models.Invalid(models.FieldIssue{Field: "organization_id", Issue: "no organization " + in.OrganizationID})
	}
	if err != nil {
		return nil, err
	}
	if err := checkStaffRole(org, role); err != nil {
		return nil, err
	}
	if role == models.RoleCustomer {
		for i, perm := range in.Permissions {
			v.Check(!models.StaffPermission(perm), "permissions["+strconv.Itoa(i)+"]", "is a provider staff permission: a customer's key cannot hold it")
		}
	}
	limits := org.Limits()
	if limits.HourlyLimit > 0 && in.RequestsPerMinute*60 > limits.HourlyLimit {
		v.Add("rate_limit.requests_per_minute", "exceeds the organization's plan ("+strconv.Itoa(limits.HourlyLimit/60)+" per minute)")
	}
	if limits.BurstLimit > 0 && in.BurstLimit > limits.BurstLimit {
		v.Add("rate_limit.burst_limit", "exceeds the organization's plan ("+strconv.Itoa(limits.BurstLimit)+")")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	secret := newKeySecret(env)
	key := &APIKey{
		ID: models.NewID(models.PrefixAPIKey), Tenant: models.Tenant{OrganizationID: orgID, Environment: env},
		Name: in.Name, Description: in.Description, DisplayPrefix: secret[:12], Hash: models.HashSecret(secret),
		Role: role, Permissions: in.Permissions, RequestsPerMinute: in.RequestsPerMinute, BurstLimit: in.BurstLimit,
		IPAllowList: allow, ExpiresAt: in.ExpiresAt, CreatedBy: p.ID,
	}
	issued := &IssuedKey{Key: key, Secret: secret}
	if in.RequireSigning {
		issued.SigningSecret = "ss_" + models.RandomString(40)
		key.SigningSecret = s.Sealer.Seal(models.BindAPIKey(key.ID), issued.SigningSecret)
	}
	if err := s.In(ctx, models.TenantScope(orgID, env)).Create(key).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return issued, nil
}

// EnsureAPIKey makes sure a key with exactly secret exists (bootstrap of
// PLATFORM_ADMIN_KEY and the demo key); it is created once and reused. A
// key that was revoked stays revoked: start-up never brings it back.
// Errors: VALIDATION_ERROR, INVALID_STATE_TRANSITION (revoked), INTERNAL_ERROR.
func (s *Store) EnsureAPIKey(ctx context.Context, orgID string, secret, name string, role models.Role, perms []string) (*APIKey, error) {
	env, ok := ValidKeyFormat(secret)
	if !ok {
		return nil, models.Invalid(models.FieldIssue{Field: "key", Issue: "must be sk_live_ or sk_test_ followed by 56 letters and digits"})
	}
	db := s.In(ctx, models.SystemScope())
	var key APIKey
	err := db.Where("hash = ?", models.HashSecret(secret)).Take(&key).Error
	if err == nil {
		if key.RevokedAt != nil {
			return nil, models.Errorf(models.CodeInvalidStateTransition, "the key %s... was revoked on %s and is not brought back: configure a new key", secret[:12], key.RevokedAt.UTC().Format(time.RFC3339))
		}
		key.Role, key.Permissions, key.OrganizationID = role, perms, orgID
		return &key, models.DBErr(db.Save(&key).Error)
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.DBErr(err)
	}
	key = APIKey{
		ID: models.NewID(models.PrefixAPIKey), Tenant: models.Tenant{OrganizationID: orgID, Environment: env}, Name: name,
		DisplayPrefix: secret[:12], Hash: models.HashSecret(secret), Role: role, Permissions: perms, CreatedBy: "bootstrap",
	}
	return &key, models.DBErr(s.In(ctx, models.TenantScope(orgID, env)).Create(&key).Error)
}

// GetAPIKey returns one key visible to p. Errors: NOT_FOUND.
func (s *Store) GetAPIKey(ctx context.Context, p *models.Principal, id string) (*APIKey, error) {
	var k APIKey
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&k).Error
	return &k, models.NotFoundOr(err, "API key")
}

// ListAPIKeys returns a page of the keys visible to p (revoked keys included, marked).
func (s *Store) ListAPIKeys(ctx context.Context, p *models.Principal, page models.PageRequest) ([]APIKey, int64, error) {
	var keys []APIKey
	total, err := models.Paginate(s.In(ctx, p.Scope()).Model(&APIKey{}), page, apiKeySorts, &keys)
	return keys, total, err
}

var apiKeySorts = models.SortFields{"created_at": "created_at", "name": "name", "last_used": "last_used_at"}

// RotateAPIKey replaces a key's secret (and signing secret) at once; the old
// secret stops working immediately. It needs a credential that could have
// issued the key (mayManage) and holds every permission of it. Errors:
// NOT_FOUND, INVALID_STATE_TRANSITION (revoked or expired),
// INSUFFICIENT_PERMISSIONS.
func (s *Store) RotateAPIKey(ctx context.Context, p *models.Principal, id string) (*IssuedKey, error) {
	key, err := s.GetAPIKey(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if key.RevokedAt != nil {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "a revoked key cannot be rotated")
	}
	if key.ExpiresAt != nil && !key.ExpiresAt.After(s.Now()) {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "an expired key cannot be rotated: create a new key").WithDetail("status", "expired")
	}
	role, err := s.actingRole(ctx, key.OrganizationID, key.Role)
	if err != nil {
		return nil, err
	}
	if err := mayManage(p, key.OrganizationID, key.Environment, role, "rotate"); err != nil {
		return nil, err
	}
	if !p.CanGrant(key.Permissions) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "a key cannot be rotated by a credential that lacks its permissions")
	}
	secret := newKeySecret(key.Environment)
	issued := &IssuedKey{Key: key, Secret: secret}
	updates := map[string]any{"hash": models.HashSecret(secret), "display_prefix": secret[:12]}
	if key.SigningSecret != "" {
		issued.SigningSecret = "ss_" + models.RandomString(40)
		updates["signing_secret"] = s.Sealer.Seal(models.BindAPIKey(key.ID), issued.SigningSecret)
	}
	// Not a key revoked since it was read: its new secret would never work.
	res := s.In(ctx, p.Scope()).Model(&APIKey{}).Where("id = ? AND revoked_at IS NULL", key.ID).Updates(updates)
	if res.Error != nil {
		return nil, models.DBErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, models.Errorf(models.CodeInvalidStateTransition, "a revoked key cannot be rotated")
	}
	key.Hash, key.DisplayPrefix = updates["hash"].(string), secret[:12]
	return issued, nil
}

// RevokeAPIKey revokes a key; revoking twice is harmless. Like rotation,
// it needs a credential that could have issued the key (mayManage) and
// holds every permission of it (a weaker credential cannot take a stronger
// one out of service).
// Errors: NOT_FOUND, INSUFFICIENT_PERMISSIONS.
func (s *Store) RevokeAPIKey(ctx context.Context, p *models.Principal, id string) (*APIKey, error) {
	key, err := s.GetAPIKey(ctx, p, id)
	if err != nil {
		return nil, err
	}
	role, err := s.actingRole(ctx, key.OrganizationID, key.Role)
	if err != nil {
		return nil, err
	}
	if err := mayManage(p, key.OrganizationID, key.Environment, role, "revoke"); err != nil {
		return nil, err
	}
	if !p.CanGrant(key.Permissions) {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "a key can only be revoked by a credential that holds every permission of it")
	}
	if key.RevokedAt == nil {
		now := s.Now()
		if err := s.In(ctx, p.Scope()).Model(key).Update("revoked_at", now).Error; err != nil {
			return nil, models.DBErr(err)
		}
		key.RevokedAt = &now
	}
	return key, nil
}

// AuthenticatedKey is the result of authenticating an API key.
type AuthenticatedKey struct {
	Principal *models.Principal
	Key       *APIKey
	// Policy is the key's organization's access policy (nil: none), read
	// with the key so that the hot path needs no second query.
	Policy *models.AccessPolicy
}

// AuthenticateAPIKey resolves a presented secret to its principal.
// Errors: INVALID_API_KEY (malformed, unknown, expired or revoked),
// IP_NOT_ALLOWED (client IP outside the key's allow-list).
func (s *Store) AuthenticateAPIKey(ctx context.Context, secret string, clientIP netip.Addr) (*AuthenticatedKey, error) {
	return s.AuthenticateAPIKeyCached(ctx, nil, secret, clientIP)
}

// AuthenticateAPIKeyCached is AuthenticateAPIKey reading the key (with its
// organization's plan limits and access policy) through cache, which may
// be nil (no cache). Only what the database holds is cached: revocation,
// expiry and the IP allow-list are checked on every call, against the
// cached row. Unknown keys are not cached.
func (s *Store) AuthenticateAPIKeyCached(ctx context.Context, cache *KeyCache, secret string, clientIP netip.Addr) (*AuthenticatedKey, error) {
	if _, ok := ValidKeyFormat(secret); !ok {
		return nil, models.Errorf(models.CodeInvalidAPIKey, "the API key is malformed")
	}
	hash := models.HashSecret(secret)
	rec, ticket, found := cache.get(hash)
	if !found {
		var err error
		if rec, err = s.readKeyRecord(ctx, hash); err != nil {
			return nil, err
		}
		cache.put(hash, rec, ticket)
	}
	return s.checkKeyRecord(rec, clientIP)
}

// AuthenticateAPIKeyByID is AuthenticateAPIKeyCached for the key with id
// (a reference to a key authenticated earlier, such as a stream token's):
// the same revocation, expiry and IP allow-list checks, the same
// principal. Errors: INVALID_API_KEY (unknown, expired or revoked),
// IP_NOT_ALLOWED.
func (s *Store) AuthenticateAPIKeyByID(ctx context.Context, cache *KeyCache, id string, clientIP netip.Addr) (*AuthenticatedKey, error) {
	if !models.HasPrefix(id, models.PrefixAPIKey) {
		return nil, models.Errorf(models.CodeInvalidAPIKey, "the API key is not valid")
	}
	cacheKey := "id:" + id // a hash of a secret never starts so
	rec, ticket, found := cache.get(cacheKey)
	if !found {
		var err error
		if rec, err = s.readKeyRecordWhere(ctx, "api_keys.id = ?", id); err != nil {
			return nil, err
		}
		cache.put(cacheKey, rec, ticket)
	}
	return s.checkKeyRecord(rec, clientIP)
}

// keyRecord is what authenticating a key reads from the database: the key
// with its organization's plan limits and access policy. It is shared by
// the requests that find it in a KeyCache: never modified.
type keyRecord struct {
	key    APIKey
	org    models.Organization // ID, plan, custom limits and provider only
	policy *models.AccessPolicy
}

// readKeyRecord reads the key whose secret hashes to hash.
// Errors: INVALID_API_KEY (unknown).
func (s *Store) readKeyRecord(ctx context.Context, hash string) (*keyRecord, error) {
	return s.readKeyRecordWhere(ctx, "api_keys.hash = ?", hash)
}

// readKeyRecordWhere reads the key that cond (on api_keys) with arg selects.
// Errors: INVALID_API_KEY (none).
func (s *Store) readKeyRecordWhere(ctx context.Context, cond string, arg string) (*keyRecord, error) {
	// One read on the hot path: the key with its organization's plan limits
	// and access policy.
	var row struct {
		APIKey
		Plan             models.Plan
		CustomHourly     int
		CustomBurst      int
		CustomConcurrent int
		Provider         bool
		AccessPolicy     *models.AccessPolicy `gorm:"serializer:json"`
	}
	err := s.In(ctx, models.SystemScope()).Model(&APIKey{}).
		Select("api_keys.*, organizations.plan, organizations.custom_hourly, organizations.custom_burst, organizations.custom_concurrent, organizations.provider, organizations.access_policy").
		Joins("JOIN organizations ON organizations.id = api_keys.organization_id").
		Where(cond, arg).Take(&row).Error
	if err != nil {
		if e := models.NotFoundOr(err, "key"); models.ErrorCode(e) == models.CodeNotFound {
			return nil, models.Errorf(models.CodeInvalidAPIKey, "the API key is not valid")
		}
		return nil, models.DBErr(err)
	}
	return &keyRecord{
		key: row.APIKey,
		org: models.Organization{ID: row.OrganizationID, Plan: row.Plan, CustomHourly: row.CustomHourly, CustomBurst: row.CustomBurst, CustomConcurrent: row.CustomConcurrent,
			Provider: row.Provider},
		policy: row.AccessPolicy,
	}, nil
}

// checkKeyRecord applies revocation, expiry and the IP allow-list to a key
// read by readKeyRecord and builds its principal (fresh values: callers
// may keep or change them).
func (s *Store) checkKeyRecord(rec *keyRecord, clientIP netip.Addr) (*AuthenticatedKey, error) {
	key := rec.key
	org := rec.org
	if key.RevokedAt != nil {
		return nil, models.Errorf(models.CodeInvalidAPIKey, "the API key has been revoked")
	}
	if key.ExpiresAt != nil && !key.ExpiresAt.After(s.Now()) {
		return nil, models.Errorf(models.CodeInvalidAPIKey, "the API key has expired")
	}
	if len(key.IPAllowList) > 0 {
		allowed := false
		for _, cidr := range key.IPAllowList {
			if pfx, err := netip.ParsePrefix(cidr); err == nil && clientIP.IsValid() && pfx.Contains(clientIP.Unmap()) {
				allowed = true
				break
			}
		}
		if !allowed {
			return nil, models.Errorf(models.CodeIPNotAllowed, "requests from this IP address are not allowed for this key")
		}
	}
	role := key.Role
	if role != models.RoleCustomer && !org.Provider {
		// Staff exist only in the provider's organization (checkStaffRole):
		// a staff-role key of another organization, whatever wrote it, is a
		// customer's key of that organization.
		role = models.RoleCustomer
	}
	return &AuthenticatedKey{
		Key: &key, Policy: rec.policy,
		Principal: &models.Principal{
			Kind: models.PrincipalAPIKey, ID: key.ID, OrganizationID: key.OrganizationID, Environment: key.Environment,
			Role: role, Permissions: key.Permissions,
			Limits: models.EffectiveLimits(&org, key.RequestsPerMinute, key.BurstLimit),
		},
	}, nil
}

// mayManage refuses p the change (rotate, revoke, change, delete) of a
// credential of organization orgID and environment env held under role
// (empty for a client or certificate) unless p could have issued it, as
// CreateAPIKey decides: provider administrators any; everyone else only
// its own organization's and environment's, and no staff role but its own.
// Staff see every organization's credentials; they change only their own
// organization's. Errors: INSUFFICIENT_PERMISSIONS.
func mayManage(p *models.Principal, orgID string, env models.Environment, role models.Role, verb string) error {
	if p.IsAdmin() {
		return nil
	}
	if orgID != p.OrganizationID || env != p.Environment || (role != "" && role != models.RoleCustomer && role != p.Role) {
		return models.Errorf(models.CodeInsufficientPermissions, "only provider administrators can %s credentials of other organizations, environments or staff roles", verb)
	}
	return nil
}

// actingRole is the role a credential of organization orgID recorded under
// role acts with: a staff role only in the provider's organization, a
// customer's anywhere else. Errors: INTERNAL_ERROR.
func (s *Store) actingRole(ctx context.Context, orgID string, role models.Role) (models.Role, error) {
	if role == "" || role == models.RoleCustomer {
		return role, nil
	}
	provider, err := orgIsProvider(ctx, s.DB, orgID)
	if err != nil {
		return "", err
	}
	if !provider {
		return models.RoleCustomer, nil
	}
	return role, nil
}
