package identity

import (
	"context"
	"time"

	"github.com/telcoplatform/platform/models"
)

// PurgeGrace is how long an artefact is kept past its expiry before
// PurgeExpired removes it. It exceeds the clock skew that the API allows on
// access tokens (30 seconds), so a deny-list entry never disappears while
// some server could still accept its token, and a row is never removed
// while a server whose clock lags could still read it as valid.
const PurgeGrace = time.Minute

// PurgeCounts says how many rows of each kind PurgeExpired removed.
type PurgeCounts struct {
	AuthorizationCodes int64 `json:"authorization_codes"` // used or not, once expired
	PKCERequests       int64 `json:"pkce_requests"`
	AccessTokens       int64 `json:"access_tokens"`
	RefreshTokens      int64 `json:"refresh_tokens"`
	DeviceGrants       int64 `json:"device_grants"`
	RevokedTokens      int64 `json:"revoked_tokens"` // deny-list entries
	SAMLRequests       int64 `json:"saml_requests"`
	MFAChallenges      int64 `json:"mfa_challenges"`
	PortalSessions     int64 `json:"portal_sessions"` // expired or ended
	PendingPhones      int64 `json:"pending_phones"`  // unconfirmed numbers whose code expired
}

// Total returns the number of rows removed, all kinds together.
func (c PurgeCounts) Total() int64 {
	return c.AuthorizationCodes + c.PKCERequests + c.AccessTokens + c.RefreshTokens + c.DeviceGrants +
		c.RevokedTokens + c.SAMLRequests + c.MFAChallenges + c.PortalSessions + c.PendingPhones
}

// Add returns the sum of c and o, kind by kind.
func (c PurgeCounts) Add(o PurgeCounts) PurgeCounts {
	return PurgeCounts{
		AuthorizationCodes: c.AuthorizationCodes + o.AuthorizationCodes, PKCERequests: c.PKCERequests + o.PKCERequests,
		AccessTokens: c.AccessTokens + o.AccessTokens, RefreshTokens: c.RefreshTokens + o.RefreshTokens,
		DeviceGrants: c.DeviceGrants + o.DeviceGrants, RevokedTokens: c.RevokedTokens + o.RevokedTokens,
		SAMLRequests: c.SAMLRequests + o.SAMLRequests, MFAChallenges: c.MFAChallenges + o.MFAChallenges,
		PortalSessions: c.PortalSessions + o.PortalSessions, PendingPhones: c.PendingPhones + o.PendingPhones,
	}
}

// PurgeExpired deletes the authentication artefacts whose expiry is more
// than PurgeGrace before now and returns how many of each kind it removed:
// authorization codes (used ones are kept until they expire, so that a
// replayed code still revokes what it issued) and their PKCE requests,
// access-token and refresh-token rows (spent refresh tokens are kept until
// they expire, for reuse detection), device grants, deny-list entries (only
// once the token itself has expired), SAML request ids, MFA challenges,
// expired or ended portal sessions and unconfirmed phone numbers whose code expired.
// Every row it removes is useless already, so running it again, or from
// several workers at once, is harmless. Errors: INTERNAL_ERROR.
func (s *Store) PurgeExpired(ctx context.Context, now time.Time) (PurgeCounts, error) {
	cutoff := now.UTC().Add(-PurgeGrace)
	db := s.In(ctx, models.SystemScope())
	var out PurgeCounts
	for _, step := range []struct {
		model any
		where string
		args  []any
		count *int64
	}{
		{&OAuthToken{}, "kind = ? AND expires_at < ?", []any{OAuthKindCode, cutoff}, &out.AuthorizationCodes},
		{&OAuthToken{}, "kind = ? AND expires_at < ?", []any{OAuthKindPKCE, cutoff}, &out.PKCERequests},
		{&OAuthToken{}, "kind = ? AND expires_at < ?", []any{OAuthKindAccess, cutoff}, &out.AccessTokens},
		{&OAuthToken{}, "kind = ? AND expires_at < ?", []any{OAuthKindRefresh, cutoff}, &out.RefreshTokens},
		{&DeviceGrant{}, "expires_at < ?", []any{cutoff}, &out.DeviceGrants},
		{&RevokedToken{}, "expires_at < ?", []any{cutoff}, &out.RevokedTokens},
		{&SAMLRequest{}, "expires_at < ?", []any{cutoff}, &out.SAMLRequests},
		{&MFAChallenge{}, "expires_at < ?", []any{cutoff}, &out.MFAChallenges},
		{&PortalSession{}, "expires_at < ? OR ended_at < ?", []any{cutoff, cutoff}, &out.PortalSessions},
		{&MFAPhone{}, "confirmed = ? AND code_expires_at < ?", []any{false, cutoff}, &out.PendingPhones},
	} {
		res := db.Where(step.where, step.args...).Delete(step.model)
		if res.Error != nil {
			return out, models.DBErr(res.Error)
		}
		*step.count = res.RowsAffected
	}
	return out, nil
}
