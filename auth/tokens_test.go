package auth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

func newStore(t *testing.T, sealed bool) *models.Store {
	t.Helper()
	store := testenv.Store(t)
	if !sealed {
		store.Sealer = nil // as when SECRETS_KEY is not set
	}
	return store
}

var admin = &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}

func newOrg(t *testing.T, store *models.Store, plan models.Plan) *models.Organization {
	t.Helper()
	org, err := identity.NewStore(store).CreateOrganization(context.Background(), admin, identity.OrganizationInput{Name: "Org " + models.RandomString(5), Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	return org
}

func newUser(t *testing.T, store *models.Store, orgID string, role models.Role) *identity.User {
	t.Helper()
	u, err := identity.NewStore(store).CreateUser(context.Background(), admin, identity.UserInput{Email: strings.ToLower(models.RandomString(8)) + "@example.com", Name: "U", Role: role, OrganizationID: orgID})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestIssueValidatesTheGrant(t *testing.T) {
	store := newStore(t, true)
	tokens := auth.NewTokens(store, "https://api.example.com/", nil)
	if tokens.Issuer() != "https://api.example.com" || tokens.Audience() != "https://api.example.com/v1" {
		t.Fatalf("iss %q aud %q", tokens.Issuer(), tokens.Audience())
	}
	org := newOrg(t, store, models.PlanBusiness)
	for _, g := range []auth.Grant{
		{Subject: "ak_abc", OrganizationID: org.ID},
		{Subject: models.NewID(models.PrefixClient), OrganizationID: "acme"},
		{Subject: models.NewID(models.PrefixClient), OrganizationID: org.ID, Environment: "staging"},
		{Subject: models.NewID(models.PrefixClient), OrganizationID: org.ID, Permissions: []string{"services:fly"}},
	} {
		if _, err := tokens.Issue(context.Background(), g); models.ErrorCode(err) != models.CodeValidation {
			t.Errorf("Issue(%+v) = %v, want VALIDATION_ERROR", g, err)
		}
	}
	// An unknown organization or user cannot get a token.
	if _, err := tokens.Issue(context.Background(), auth.Grant{Subject: models.NewID(models.PrefixClient), OrganizationID: models.NewID(models.PrefixOrganization)}); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Errorf("unknown organization: %v", err)
	}
	if _, err := tokens.Issue(context.Background(), auth.Grant{Subject: models.NewID(models.PrefixUser), OrganizationID: org.ID}); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Errorf("unknown user: %v", err)
	}
}

func TestSigningKeysAreSealed(t *testing.T) {
	store := newStore(t, true)
	tokens := auth.NewTokens(store, "http://localhost:8080", nil)
	if _, err := tokens.Keys().JWKS(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys, err := identity.NewStore(store).ActiveSigningKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %d, err %v", len(keys), err)
	}
	if strings.Contains(keys[0].PrivateSealed, "PRIVATE KEY") || !strings.HasPrefix(keys[0].ID, auth.KeyPrefix+"_") || keys[0].Algorithm != "RS256" {
		t.Fatalf("stored key: id %s alg %s sealed %.30s", keys[0].ID, keys[0].Algorithm, keys[0].PrivateSealed)
	}

	// Without SECRETS_KEY no key can be created: an internal error, not a panic.
	bare := newStore(t, false)
	if _, err := auth.NewTokens(bare, "http://localhost:8080", nil).Keys().JWKS(context.Background()); models.ErrorCode(err) != models.CodeInternal {
		t.Fatalf("JWKS without a sealer: %v", err)
	}
}

func TestPrincipalOfAToken(t *testing.T) {
	ctx := context.Background()
	store := newStore(t, true)
	tokens := auth.NewTokens(store, "http://localhost:8080", nil)
	org := newOrg(t, store, models.PlanDeveloper)
	plan := org.Limits()
	// Staff exist only in the provider's organization.
	if err := store.In(ctx, models.SystemScope()).Model(&models.Organization{}).Where("id = ?", org.ID).Update("provider", true).Error; err != nil {
		t.Fatal(err)
	}
	staff := newUser(t, store, org.ID, models.RoleAgent)
	// A staff row in a customer organization (written before staff were
	// refused there) is a customer of it.
	customerOrg := newOrg(t, store, models.PlanDeveloper)
	oldStaff := newUser(t, store, customerOrg.ID, models.RoleCustomer)
	if err := store.In(ctx, models.SystemScope()).Model(&identity.User{}).Where("id = ?", oldStaff.ID).Update("role", models.RoleAdmin).Error; err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		grant auth.Grant
		want  models.Principal
	}{
		{"user with the plan's rate", auth.Grant{Subject: staff.ID, OrganizationID: org.ID, Permissions: []string{"support:read"}},
			models.Principal{Kind: models.PrincipalUser, ID: staff.ID, UserID: staff.ID, OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleAgent,
				Permissions: []string{"support:read"}, Limits: models.RateLimits{Hourly: plan.HourlyLimit, Burst: plan.BurstLimit, Concurrent: plan.Concurrent}}},
		{"a staff row of a customer organization", auth.Grant{Subject: oldStaff.ID, OrganizationID: customerOrg.ID, Permissions: []string{"services:read"}},
			models.Principal{Kind: models.PrincipalUser, ID: oldStaff.ID, UserID: oldStaff.ID, OrganizationID: customerOrg.ID, Environment: models.EnvLive, Role: models.RoleCustomer,
				Permissions: []string{"services:read"}, Limits: models.RateLimits{Hourly: plan.HourlyLimit, Burst: plan.BurstLimit, Concurrent: plan.Concurrent}}},
		{"client with a lower rate in test", auth.Grant{Subject: "cli_abc", OrganizationID: org.ID, Environment: models.EnvTest, RequestsPerMinute: 2, Permissions: []string{}},
			models.Principal{Kind: models.PrincipalClient, ID: "cli_abc", OrganizationID: org.ID, Environment: models.EnvTest, Role: models.RoleCustomer,
				Permissions: []string{}, Limits: models.RateLimits{Hourly: 120, Burst: plan.BurstLimit, Concurrent: plan.Concurrent}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iss, err := tokens.Issue(ctx, tc.grant)
			if err != nil {
				t.Fatal(err)
			}
			claims, err := tokens.Verify(ctx, iss.Token)
			if err != nil {
				t.Fatal(err)
			}
			p, err := tokens.Principal(ctx, claims)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tc.want.Kind || p.ID != tc.want.ID || p.UserID != tc.want.UserID || p.OrganizationID != tc.want.OrganizationID ||
				p.Environment != tc.want.Environment || p.Role != tc.want.Role || strings.Join(p.Permissions, ",") != strings.Join(tc.want.Permissions, ",") || p.Limits != tc.want.Limits {
				t.Fatalf("principal %+v, want %+v", *p, tc.want)
			}
			if iss.ExpiresIn != 3600 || time.Until(iss.ExpiresAt) > time.Hour+time.Second {
				t.Fatalf("expires_in %d at %s", iss.ExpiresIn, iss.ExpiresAt)
			}
		})
	}

	// A user moved to another organization loses the tokens of the old one.
	other := newOrg(t, store, models.PlanBusiness)
	iss, err := tokens.Issue(ctx, auth.Grant{Subject: staff.ID, OrganizationID: org.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.DB.WithContext(ctx).Exec("UPDATE users SET organization_id = ? WHERE id = ?", other.ID, staff.ID).Error; err != nil {
		t.Fatal(err)
	}
	claims, err := tokens.Verify(ctx, iss.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Principal(ctx, claims); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatalf("moved user: %v", err)
	}
}

func TestRevocationDenyList(t *testing.T) {
	ctx := context.Background()
	store := newStore(t, true)
	now := time.Now().UTC()
	if err := identity.NewStore(store).RevokeTokenID(ctx, "", "cli_x", now, ""); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("empty jti: %v", err)
	}
	for _, jti := range []string{"old", "current"} {
		exp := now.Add(time.Hour)
		if jti == "old" {
			exp = now.Add(-time.Hour)
		}
		if err := identity.NewStore(store).RevokeTokenID(ctx, jti, "cli_x", exp, "test"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := identity.NewStore(store).PurgeRevokedTokens(ctx, now)
	if err != nil || n != 1 {
		t.Fatalf("purged %d, err %v", n, err)
	}
	for jti, want := range map[string]bool{"old": false, "current": true, "never": false} {
		if got, err := identity.NewStore(store).TokenRevoked(ctx, jti); err != nil || got != want {
			t.Errorf("TokenRevoked(%s) = %v, %v; want %v", jti, got, err, want)
		}
	}
}

// TestRecheckRefusesARetiredSigningKey: claims verified earlier pass
// Recheck while their signing key is published, and fail it (INVALID_TOKEN)
// once the key is retired, or when they name no key at all.
func TestRecheckRefusesARetiredSigningKey(t *testing.T) {
	store := newStore(t, true)
	ctx := context.Background()
	tokens := auth.NewTokens(store, "https://api.example.com", nil)
	org := newOrg(t, store, models.PlanBusiness)
	issued, err := tokens.Issue(ctx, auth.Grant{Subject: models.NewID(models.PrefixClient), OrganizationID: org.ID})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := tokens.Verify(ctx, issued.Token)
	if err != nil {
		t.Fatal(err)
	}
	if claims.KeyID != issued.KeyID {
		t.Fatalf("verified claims name key %q, want %q", claims.KeyID, issued.KeyID)
	}
	if err := tokens.Recheck(ctx, claims); err != nil {
		t.Fatalf("Recheck of a valid token: %v", err)
	}
	keyless := *claims
	keyless.KeyID = ""
	if err := tokens.Recheck(ctx, &keyless); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatalf("Recheck of claims without a kid: %v", err)
	}
	if _, err := tokens.Keys().Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Recheck(ctx, claims); err != nil {
		t.Fatalf("Recheck after a rotation (the old key still published): %v", err)
	}
	if err := tokens.Keys().RetireKey(ctx, issued.KeyID); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Recheck(ctx, claims); models.ErrorCode(err) != models.CodeInvalidToken {
		t.Fatalf("Recheck after the signing key was retired: %v", err)
	}
}
