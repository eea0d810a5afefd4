package models_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

// TestRevokedBootstrapKeyStaysRevoked: start-up ensures PLATFORM_ADMIN_KEY
// exists, but a key that was revoked is never brought back (before, every
// start cleared revoked_at).
func TestRevokedBootstrapKeyStaysRevoked(t *testing.T) {
	ctx := context.Background()
	s, _ := testenv.SeededStore(t)
	provider, err := identity.NewStore(s).EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret := "sk_live_" + models.RandomString(56)
	key, err := identity.NewStore(s).EnsureAPIKey(ctx, provider.ID, secret, "admin", models.RoleAdmin, []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := identity.NewStore(s).EnsureAPIKey(ctx, provider.ID, secret, "admin", models.RoleAdmin, []string{"*"}); err != nil || again.ID != key.ID {
		t.Fatalf("ensuring twice: %v %v", again, err)
	}
	admin := &models.Principal{ID: key.ID, OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	if _, err := identity.NewStore(s).RevokeAPIKey(ctx, admin, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.NewStore(s).EnsureAPIKey(ctx, provider.ID, secret, "admin", models.RoleAdmin, []string{"*"}); models.ErrorCode(err) != models.CodeInvalidStateTransition {
		t.Fatalf("ensuring a revoked key: %v", err)
	}
	if _, err := identity.NewStore(s).AuthenticateAPIKey(ctx, secret, netip.MustParseAddr("127.0.0.1")); models.ErrorCode(err) != models.CodeInvalidAPIKey {
		t.Fatalf("the revoked key authenticates: %v", err)
	}
}
