package identity

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// SpendOAuthToken marks an active artefact (an authorization code) used and
// reports whether this call did: it is one conditional UPDATE, so of
// parallel exchanges of the same code exactly one gets true.
// Errors: INTERNAL_ERROR.
func (s *Store) SpendOAuthToken(ctx context.Context, kind, signature string) (bool, error) {
	res := s.In(ctx, models.SystemScope()).Model(&OAuthToken{}).
		Where("kind = ? AND signature = ? AND active = ?", kind, signature, true).Update("active", false)
	if res.Error != nil {
		return false, models.DBErr(res.Error)
	}
	return res.RowsAffected == 1, nil
}

// RotateRefreshToken spends a refresh token and revokes the access token
// issued with it (its jti goes on the deny-list), in one transaction. It
// reports whether this call spent the token: of parallel refreshes with the
// same token exactly one gets true; the others change nothing.
// Errors: INTERNAL_ERROR.
func (s *Store) RotateRefreshToken(ctx context.Context, signature string) (bool, error) {
	spent := false
	err := s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		res := tx.Model(&OAuthToken{}).Where("kind = ? AND signature = ? AND active = ?", OAuthKindRefresh, signature, true).Update("active", false)
		if res.Error != nil || res.RowsAffected != 1 {
			return res.Error
		}
		spent = true
		var rt OAuthToken
		if err := tx.Select("access_signature").Where("kind = ? AND signature = ?", OAuthKindRefresh, signature).Take(&rt).Error; err != nil {
			return err
		}
		return revokeAccessTokenTx(tx, rt.AccessSignature, s.Now(), "refreshed")
	})
	if err != nil {
		return false, models.DBErr(err)
	}
	return spent, nil
}

// revokeAccessTokenTx deny-lists the jti of the access token with the
// signature and marks it inactive (nothing when there is none).
func revokeAccessTokenTx(tx *gorm.DB, signature string, now time.Time, reason string) error {
	if signature == "" {
		return nil
	}
	var at OAuthToken
	err := tx.Select("jti", "subject", "expires_at").Where("kind = ? AND signature = ?", OAuthKindAccess, signature).Limit(1).Find(&at).Error
	if err != nil {
		return err
	}
	if at.JTI != "" {
		row := RevokedToken{JTI: at.JTI, Subject: at.Subject, ExpiresAt: at.ExpiresAt.UTC(), RevokedAt: now, Reason: reason}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
			return err
		}
	}
	return tx.Model(&OAuthToken{}).Where("kind = ? AND signature = ?", OAuthKindAccess, signature).Update("active", false).Error
}

// RefreshScopes returns the scopes of the tokens a refresh issues (RFC 6749
// section 6): the grant's scopes when the refresh asks for none, else the
// requested ones, which must all be among the grant's. outside is the first
// requested scope the grant does not hold ("" when there is none): such a
// refresh is refused, never quietly narrowed.
func RefreshScopes(granted, requested []string) (scopes []string, outside string) {
	if len(requested) == 0 {
		return granted, ""
	}
	for _, sc := range requested {
		if !slices.Contains(granted, sc) {
			return nil, sc
		}
	}
	for _, sc := range granted {
		if slices.Contains(requested, sc) {
			scopes = append(scopes, sc)
		}
	}
	return scopes, ""
}
