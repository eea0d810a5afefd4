package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
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

	gone := now.Add(-models.PurgeGrace - time.Second) // expired longer than the grace: removed
	edge := now.Add(-models.PurgeGrace)               // exactly at the grace: kept
	grace := now.Add(-time.Second)                    // expired, but within the grace: kept
	future := now.Add(time.Hour)                      // not expired: kept

	token := func(kind, sig string, exp time.Time, active bool) func(*testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if err := s.SaveOAuthToken(ctx, &models.OAuthToken{Kind: kind, Signature: sig, RequestID: "req_" + sig, ClientID: "cli_test",
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
			if err := s.RevokeTokenID(ctx, jti, "usr_test", exp, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	device := func(code string, exp time.Time, status string) any {
		return &models.DeviceGrant{DeviceCodeHash: models.HashSecret(code), UserCode: code, ClientID: "cli_test", Scopes: "[]",
			Status: status, Interval: 5, ExpiresAt: exp, CreatedAt: now.Add(-time.Hour)}
	}
	challenge := func(id string, exp time.Time, status string) any {
		return &models.MFAChallenge{ID: id, UserID: "usr_test", Operation: "POST /auth/api-keys", Status: status, ExpiresAt: exp, CreatedAt: now.Add(-time.Hour)}
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
		return count(&models.OAuthToken{}, "kind = ? AND signature = ?", kind, sig)
	}

	cases := []struct {
		name    string
		insert  func(*testing.T)
		left    func(*testing.T) int64
		removed bool
	}{
		{"unused code expired past the grace", token(models.OAuthKindCode, "code-gone", gone, true), tokenLeft(models.OAuthKindCode, "code-gone"), true},
		{"used code expired past the grace", token(models.OAuthKindCode, "code-used-gone", gone, false), tokenLeft(models.OAuthKindCode, "code-used-gone"), true},
		{"code at the grace boundary", token(models.OAuthKindCode, "code-edge", edge, true), tokenLeft(models.OAuthKindCode, "code-edge"), false},
		{"used code not expired (reuse detection)", token(models.OAuthKindCode, "code-used-live", future, false), tokenLeft(models.OAuthKindCode, "code-used-live"), false},
		{"PKCE request expired", token(models.OAuthKindPKCE, "pkce-gone", gone, true), tokenLeft(models.OAuthKindPKCE, "pkce-gone"), true},
		{"PKCE request within the grace", token(models.OAuthKindPKCE, "pkce-grace", grace, true), tokenLeft(models.OAuthKindPKCE, "pkce-grace"), false},
		{"access token expired", token(models.OAuthKindAccess, "at-gone", gone, true), tokenLeft(models.OAuthKindAccess, "at-gone"), true},
		{"access token within the grace", token(models.OAuthKindAccess, "at-grace", grace, true), tokenLeft(models.OAuthKindAccess, "at-grace"), false},
		{"access token valid", token(models.OAuthKindAccess, "at-live", future, true), tokenLeft(models.OAuthKindAccess, "at-live"), false},
		{"refresh token expired", token(models.OAuthKindRefresh, "rt-gone", gone, true), tokenLeft(models.OAuthKindRefresh, "rt-gone"), true},
		{"spent refresh token expired", token(models.OAuthKindRefresh, "rt-spent-gone", gone, false), tokenLeft(models.OAuthKindRefresh, "rt-spent-gone"), true},
		{"spent refresh token not expired (reuse detection)", token(models.OAuthKindRefresh, "rt-spent-live", future, false), tokenLeft(models.OAuthKindRefresh, "rt-spent-live"), false},
		{"refresh token at the grace boundary", token(models.OAuthKindRefresh, "rt-edge", edge, true), tokenLeft(models.OAuthKindRefresh, "rt-edge"), false},
		{"pending device grant expired", create(device("BCDFGHJK", gone, models.DevicePending)), count(&models.DeviceGrant{}, "user_code = ?", "BCDFGHJK"), true},
		{"consumed device grant expired", create(device("LMNPQRST", gone, models.DeviceConsumed)), count(&models.DeviceGrant{}, "user_code = ?", "LMNPQRST"), true},
		{"device grant within the grace", create(device("VWXZBCDF", grace, models.DevicePending)), count(&models.DeviceGrant{}, "user_code = ?", "VWXZBCDF"), false},
		{"device grant pending", create(device("GHJKLMNP", future, models.DevicePending)), count(&models.DeviceGrant{}, "user_code = ?", "GHJKLMNP"), false},
		{"deny-listed token expired past the grace", deny("jti-gone", gone), count(&models.RevokedToken{}, "jti = ?", "jti-gone"), true},
		{"deny-listed token within the clock-skew grace", deny("jti-grace", grace), count(&models.RevokedToken{}, "jti = ?", "jti-grace"), false},
		{"deny-listed token at the grace boundary", deny("jti-edge", edge), count(&models.RevokedToken{}, "jti = ?", "jti-edge"), false},
		{"deny-listed token not expired", deny("jti-live", future), count(&models.RevokedToken{}, "jti = ?", "jti-live"), false},
		{"SAML request expired", create(&models.SAMLRequest{ID: "saml-gone", ExpiresAt: gone}), count(&models.SAMLRequest{}, "id = ?", "saml-gone"), true},
		{"SAML request pending", create(&models.SAMLRequest{ID: "saml-live", ExpiresAt: future}), count(&models.SAMLRequest{}, "id = ?", "saml-live"), false},
		{"MFA challenge expired", create(challenge("mfa_gone", gone, models.MFAChallengeState)), count(&models.MFAChallenge{}, "id = ?", "mfa_gone"), true},
		{"used MFA challenge expired", create(challenge("mfa_used_gone", gone, "used")), count(&models.MFAChallenge{}, "id = ?", "mfa_used_gone"), true},
		{"MFA challenge within the grace", create(challenge("mfa_grace", grace, "verified")), count(&models.MFAChallenge{}, "id = ?", "mfa_grace"), false},
		{"MFA challenge pending", create(challenge("mfa_live", future, models.MFAChallengeState)), count(&models.MFAChallenge{}, "id = ?", "mfa_live"), false},
		{"portal session expired", create(&models.PortalSession{TokenHash: "ps-gone", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: gone.Add(-time.Hour), ExpiresAt: gone}),
			count(&models.PortalSession{}, "token_hash = ?", "ps-gone"), true},
		{"portal session ended", create(&models.PortalSession{TokenHash: "ps-ended", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: gone, ExpiresAt: future, EndedAt: &gone}),
			count(&models.PortalSession{}, "token_hash = ?", "ps-ended"), true},
		{"portal session live", create(&models.PortalSession{TokenHash: "ps-live", UserID: "usr_test", OrganizationID: "org_test", CSRFToken: "x", AuthMethod: "saml", CreatedAt: now, ExpiresAt: future}),
			count(&models.PortalSession{}, "token_hash = ?", "ps-live"), false},
		{"unconfirmed phone whose code expired", create(&models.MFAPhone{UserID: "usr_phone_gone", Number: "+14155550100", CodeExpiresAt: &gone, CreatedAt: gone}),
			count(&models.MFAPhone{}, "user_id = ?", "usr_phone_gone"), true},
		{"confirmed phone", create(&models.MFAPhone{UserID: "usr_phone_ok", Number: "+14155550101", Confirmed: true, CodeExpiresAt: &gone, CreatedAt: gone}),
			count(&models.MFAPhone{}, "user_id = ?", "usr_phone_ok"), false},
	}
	for _, tc := range cases {
		tc.insert(t)
	}

	got, err := s.PurgeExpired(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := models.PurgeCounts{AuthorizationCodes: 2, PKCERequests: 1, AccessTokens: 1, RefreshTokens: 2, DeviceGrants: 2,
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
	again, err := s.PurgeExpired(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if again.Total() != 0 {
		t.Fatalf("second purge removed %+v", again)
	}
	// Two minutes later the rows that were within the grace or at the boundary go too.
	later, err := s.PurgeExpired(ctx, now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if later.AuthorizationCodes != 1 || later.PKCERequests != 1 || later.AccessTokens != 1 || later.RefreshTokens != 1 || later.DeviceGrants != 1 ||
		later.RevokedTokens != 2 || later.MFAChallenges != 1 || later.SAMLRequests != 0 {
		t.Fatalf("purge after the grace: %+v", later)
	}
}
