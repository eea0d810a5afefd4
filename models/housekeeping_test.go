package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// TestPurgeExpired inserts one row of every purged kind on each side of the
// boundary (expiry more than PurgeGrace ago is removed; exactly PurgeGrace
// ago, within the grace, or in the future is kept), purges, and checks
// what is left, the counts, and that a second purge removes nothing.
func TestPurgeExpired(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	db := s.In(ctx, models.SystemScope())

	gone := now.Add(-identity.PurgeGrace - time.Second) // expired longer than the grace: removed
	edge := now.Add(-identity.PurgeGrace)               // exactly at the grace: kept
	grace := now.Add(-time.Second)                      // expired, but within the grace: kept
	future := now.Add(time.Hour)                        // not expired: kept

	token := func(kind, sig string, exp time.Time, active bool) func(*testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if err := identity.NewStore(s).SaveOAuthToken(ctx, &identity.OAuthToken{Kind: kind, Signature: sig, RequestID: "req_" + sig, ClientID: "cli_test",
				Active: active, ExpiresAt: exp, RequestedAt: now.Add(-2 * time.Hour), Data: "{}"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create := func(row any) func(*testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if err := db.Create(row).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	deny := func(jti string, exp time.Time) func(*testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if err := identity.NewStore(s).RevokeTokenID(ctx, jti, "usr_test", exp, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	device := func(code string, exp time.Time, status string) any {
		return &identity.DeviceGrant{DeviceCodeHash: models.HashSecret(code), UserCode: code, ClientID: "cli_test", Scopes: "[]",
			Status: status, Interval: 5, ExpiresAt: exp, CreatedAt: now.Add(-time.Hour)}
	}
	challenge := func(id string, exp time.Time, status string) any {
		return &identity.MFAChallenge{ID: id, UserID: "usr_test", Operation: "POST /auth/api-keys", Status: status, ExpiresAt: exp, CreatedAt: now.Add(-time.Hour)}
	}
	count := func(model any, where string, args ...any) func(*testing.T) int64 {
		return func(t *testing.T) int64 {
			t.Helper()
			var n int64
			if err := db.Model(model).Where(where, args...).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	tokenLeft := func(kind, sig string) func(*testing.T) int64 {
		return count(&identity.OAuthToken{}, "kind = ? AND signature = ?", kind, sig)
	}

	cases := []struct {
		name    string
		insert  func(*testing.T)
		left    func(*testing.T) int64
		removed bool
	}{
		{"unused code expired past the grace", token(identity.OAuthKindCode, "code-gone", gone, true), tokenLeft(identity.OAuthKindCode, "code-gone"), true},
		{"used code expired past the grace", token(identity.OAuthKindCode, "code-used-gone", gone, false), tokenLeft(identity.OAuthKindCode, "code-used-gone"), true},
		{"code at the grace boundary", token(identity.OAuthKindCode, "code-edge", edge, true), tokenLeft(identity.OAuthKindCode, "code-edge"), false},
		{"used code not expired (reuse detection)", token(identity.OAuthKindCode, "code-used-live", future, false), tokenLeft(identity.OAuthKindCode, "code-used-live"), false},
		{"PKCE request expired", token(identity.OAuthKindPKCE, "pkce-gone", gone, true), tokenLeft(identity.OAuthKindPKCE, "pkce-gone"), true},
		{"PKCE request within the grace", token(identity.OAuthKindPKCE, "pkce-grace", grace, true), tokenLeft(identity.OAuthKindPKCE, "pkce-grace"), false},
		{"access token expired", token(identity.OAuthKindAccess, "at-gone", gone, true), tokenLeft(identity.OAuthKindAccess, "at-gone"), true},
		{"access token within the grace", token(identity.OAuthKindAccess, "at-grace", grace, true), tokenLeft(identity.OAuthKindAccess, "at-grace"), false},
		{"access token valid", token(identity.OAuthKindAccess, "at-live", future, true), tokenLeft(identity.OAuthKindAccess, "at-live"), false},
		{"refresh token expired", token(identity.OAuthKindRefresh, "rt-gone", gone, true), tokenLeft(identity.OAuthKindRefresh, "rt-gone"), true},
		{"spent refresh token expired", token(identity.OAuthKindRefresh, "rt-spent-gone", gone, false), tokenLeft(identity.OAuthKindRefresh, "rt-spent-gone"), true},
		{"spent refresh token not expired (reuse detection)", token(identity.OAuthKindRefresh, "rt-spent-live", future, false), tokenLeft(identity.OAuthKindRefresh, "rt-spent-live"), false},
		{"refresh token at the grace boundary", token(identity.OAuthKindRefresh, "rt-edge", edge, true), tokenLeft(identity.OAuthKindRefresh, "rt-edge"), false},
		{"pending device grant expired", create(device("BCDFGHJK", gone, identity.DevicePending)), count(&identity.DeviceGrant{}, "user_code = ?", "BCDFGHJK"), true},
		{"consumed device grant expired", create(device("LMNPQRST", gone, identity.DeviceConsumed)), count(&identity.DeviceGrant{}, "user_code = ?", "LMNPQRST"), true},
		{"device grant within the grace", create(device("VWXZBCDF", grace, identity.DevicePending)), count(&identity.DeviceGrant{}, "user_code = ?", "VWXZBCDF"), false},
		{"device grant pending", create(device("GHJKLMNP", future, identity.DevicePending)), count(&identity.DeviceGrant{}, "user_code = ?", "GHJKLMNP"), false},
		{"deny-listed token expired past the grace", deny("jti-gone", gone), count(&identity.RevokedToken{}, "jti = ?", "jti-gone"), true},
		{"deny-listed token within the clock-skew grace", deny("jti-grace", grace), count(&identity.RevokedToken{}, "jti = ?", "jti-grace"), false},
		{"deny-listed token at the grace boundary", deny("jti-edge", edge), count(&identity.RevokedToken{}, "jti = ?", "jti-edge"), false},
		{"deny-listed token not expired", deny("jti-live", future), count(&identity.RevokedToken{}, "jti = ?", "jti-live"), false},
		{"SAML request expired", create(&identity.SAMLRequest{ID: "saml-gone", ExpiresAt: gone}), count(&identity.SAMLRequest{}, "id = ?", "saml-gone"), true},
		{"SAML request pending", create(&identity.SAMLRequest{ID: "saml-live", ExpiresAt: future}), count(&identity.SAMLRequest{}, "id = ?", "saml-live"), false},
		{"MFA challenge expired", create(challenge("mfa_gone", gone, identity.MFAChallengeState)), count(&identity.MFAChallenge{}, "id = ?", "mfa_gone"), true},
		{"used MFA challenge expired", create(challenge("mfa_used_gone", gone, "used")), count(&identity.MFAChallenge{}, "id = ?", "mfa_used_gone"), true},
		{"MFA challenge within the grace", create(challenge("mfa_grace", grace, "verified")), count(&identity.MFAChallenge{}, "id = ?", "mfa_grace"), false},
		{"MFA challenge pending", create(challenge("mfa_live", future, identity.MFAChallengeState)), count(&identity.MFAChallenge{}, "id = ?", "mfa_live"), false},
		{"portal session expired", create(&identity.PortalSession{TokenHash: "ps-gone", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: gone.Add(-time.Hour), ExpiresAt: gone}),
			count(&identity.PortalSession{}, "token_hash = ?", "ps-gone"), true},
		{"portal session ended", create(&identity.PortalSession{TokenHash: "ps-ended", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: gone, ExpiresAt: future, EndedAt: &gone}),
			count(&identity.PortalSession{}, "token_hash = ?", "ps-ended"), true},
		{"portal session live", create(&identity.PortalSession{TokenHash: "ps-live", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: now, ExpiresAt: future}),
			count(&identity.PortalSession{}, "token_hash = ?", "ps-live"), false},
		{"unconfirmed phone whose code expired", create(&identity.MFAPhone{UserID: "usr_phone_gone", Number: "+14155550100", CodeExpiresAt: &gone, CreatedAt: gone}),
			count(&identity.MFAPhone{}, "user_id = ?", "usr_phone_gone"), true},
		{"confirmed phone", create(&identity.MFAPhone{UserID: "usr_phone_ok", Number: "+14155550101", Confirmed: true, CodeExpiresAt: &gone, CreatedAt: gone}),
			count(&identity.MFAPhone{}, "user_id = ?", "usr_phone_ok"), false},
	}
	for _, tc := range cases {
		tc.insert(t)
	}

	got, err := identity.NewStore(s).PurgeExpired(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := identity.PurgeCounts{AuthorizationCodes: 2, PKCERequests: 1, AccessTokens: 1, RefreshTokens: 2, DeviceGrants: 2,
		RevokedTokens: 1, SAMLRequests: 1, MFAChallenges: 2, PortalSessions: 2, PendingPhones: 1}
	if got != want {
		t.Errorf("purge counts %+v, want %+v", got, want)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.left(t)
			if tc.removed && n != 0 {
				t.Fatal("kept, want removed")
			}
			if !tc.removed && n != 1 {
				t.Fatalf("%d rows left, want the row kept", n)
			}
		})
	}

	// Idempotent: nothing more to remove at the same time.
	again, err := identity.NewStore(s).PurgeExpired(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if again.Total() != 0 {
		t.Fatalf("second purge removed %+v", again)
	}
	// Two minutes later the rows that were within the grace or at the boundary go too.
	later, err := identity.NewStore(s).PurgeExpired(ctx, now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if later.AuthorizationCodes != 1 || later.PKCERequests != 1 || later.AccessTokens != 1 || later.RefreshTokens != 1 || later.DeviceGrants != 1 ||
		later.RevokedTokens != 2 || later.MFAChallenges != 1 || later.SAMLRequests != 0 {
		t.Fatalf("purge after the grace: %+v", later)
	}
}
