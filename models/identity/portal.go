package identity

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// PortalSessionTTL is how long a portal sign-in lasts.
const PortalSessionTTL = 8 * time.Hour

// PortalSession is a person's browser session on the portal and the OAuth
// sign-in pages, started by a SAML or password login. The cookie holds a
// random token; only its hash is stored. The CSRF token guards the session's
// state-changing calls (token exchange, sign-out).
type PortalSession struct {
	TokenHash      string     `gorm:"primaryKey;size:64"`
	UserID         string     `gorm:"size:40;not null;index"`
	OrganizationID string     `gorm:"size:40;not null"`
	CSRFToken      string     `gorm:"size:64;not null"`
	AuthMethod     string     `gorm:"size:16;not null"` // saml or password
	Groups         string     `gorm:"size:1000"`        // the IdP's groups at sign-in, comma-separated
	CreatedAt      time.Time  `gorm:"not null"`
	ExpiresAt      time.Time  `gorm:"not null;index"`
	EndedAt        *time.Time ``
}

// StartPortalSession opens a session for a user and returns the cookie
// token (shown once) with the session. Errors: INTERNAL_ERROR.
func (s *Store) StartPortalSession(ctx context.Context, u *User, method string, groups []string) (string, *PortalSession, error) {
	token := models.RandomString(43)
	now := s.Now()
	ps := &PortalSession{TokenHash: models.HashSecret(token), UserID: u.ID, OrganizationID: u.OrganizationID, CSRFToken: models.RandomString(32),
		AuthMethod: method, Groups: strings.Join(groups, ","), CreatedAt: now, ExpiresAt: now.Add(PortalSessionTTL)}
	if len(ps.Groups) > 1000 {
		ps.Groups = ps.Groups[:1000]
	}
	if err := s.In(ctx, models.SystemScope()).Create(ps).Error; err != nil {
		return "", nil, models.DBErr(err)
	}
	return token, ps, nil
}

// PortalSessionByToken returns the live session of a cookie token and its
// user. Errors: UNAUTHENTICATED (unknown, ended or expired), INTERNAL_ERROR.
func (s *Store) PortalSessionByToken(ctx context.Context, token string) (*PortalSession, *User, error) {
	if token == "" {
		return nil, nil, models.Errorf(models.CodeUnauthenticated, "no portal session: sign in at /portal")
	}
	db := s.In(ctx, models.SystemScope())
	var ps PortalSession
	err := db.Where("token_hash = ? AND ended_at IS NULL AND expires_at > ?", models.HashSecret(token), s.Now()).Take(&ps).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, models.Errorf(models.CodeUnauthenticated, "the portal session has expired or ended: sign in again at /portal")
	}
	if err != nil {
		return nil, nil, models.DBErr(err)
	}
	var u User
	if err := db.Where("id = ?", ps.UserID).Take(&u).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil, models.Errorf(models.CodeUnauthenticated, "the session's user no longer exists")
		}
		return nil, nil, models.DBErr(err)
	}
	return &ps, &u, nil
}

// EndPortalSession ends the session of a cookie token (sign-out); ending an
// unknown or ended session is not an error. Errors: INTERNAL_ERROR.
func (s *Store) EndPortalSession(ctx context.Context, token string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&PortalSession{}).Where("token_hash = ? AND ended_at IS NULL", models.HashSecret(token)).
		Update("ended_at", s.Now()).Error)
}

// SafeRedirectTarget returns target when it is a same-site relative path
// ("/portal", "/oauth/authorize?..."), and fallback otherwise: absolute
// URLs, scheme-relative ("//host") and backslash tricks are refused, so a
// login can never send the browser to another site.
func SafeRedirectTarget(target, fallback string) string {
	if target == "" || len(target) > 4000 || !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.ContainsAny(target, "\\\r\n\t") {
		return fallback
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return fallback
	}
	return target
}
