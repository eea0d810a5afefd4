package identity

import (
	"context"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// AccessSubject names whose restrictions bind a request: the principal's own
// organization (for provider staff, the provider's organization, never the
// tenants they act on), and, for an access token, the OAuth client it was
// issued to and the user it acts for.
type AccessSubject struct {
	OrganizationID string
	ClientID       string // "" unless the credential is an access token issued through a client
	UserID         string // "" unless a user stands behind the credential
}

// CheckAccess evaluates, at s.Now(), every restriction that binds a request
// of sub from origin: the client's and the user's IP allow-lists, then the
// organization's access policy (IP allow-list, countries, time window). The
// three are read in one query.
// Errors: IP_NOT_ALLOWED, ACCESS_RESTRICTED (see AccessPolicy.Check),
// INVALID_TOKEN (the token's client or user no longer exists),
// UNAUTHENTICATED (the organization no longer exists), INTERNAL_ERROR.
func (s *Store) CheckAccess(ctx context.Context, sub AccessSubject, origin models.RequestOrigin) error {
	var row struct {
		AccessPolicy      *models.AccessPolicy `gorm:"serializer:json"`
		ClientID          *string
		ClientIPAllowList []string `gorm:"serializer:json"`
		UserID            *string
		UserIPAllowList   []string `gorm:"serializer:json"`
	}
	cols := []string{"organizations.access_policy AS access_policy"}
	q := s.In(ctx, models.SystemScope()).Model(&models.Organization{})
	if sub.ClientID != "" {
		// o_auth_clients is gorm's table name of OAuthClient.
		cols = append(cols, "o_auth_clients.id AS client_id", "o_auth_clients.ip_allow_list AS client_ip_allow_list")
		q = q.Joins("LEFT JOIN o_auth_clients ON o_auth_clients.id = ? AND o_auth_clients.organization_id = organizations.id", sub.ClientID)
	}
	if sub.UserID != "" {
		cols = append(cols, "users.id AS user_id", "users.ip_allow_list AS user_ip_allow_list")
		q = q.Joins("LEFT JOIN users ON users.id = ? AND users.organization_id = organizations.id", sub.UserID)
	}
	err := q.Select(strings.Join(cols, ", ")).Where("organizations.id = ?", sub.OrganizationID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return models.Errorf(models.CodeUnauthenticated, "the credential's organization no longer exists")
	}
	if err != nil {
		return models.DBErr(err)
	}
	if sub.ClientID != "" && row.ClientID == nil {
		return models.Errorf(models.CodeInvalidToken, "the access token's client no longer exists")
	}
	if sub.UserID != "" && row.UserID == nil {
		return models.Errorf(models.CodeInvalidToken, "the access token's user no longer exists")
	}
	if err := models.CheckIPAllowList(row.ClientIPAllowList, origin, "client"); err != nil {
		return err
	}
	if err := models.CheckIPAllowList(row.UserIPAllowList, origin, "user"); err != nil {
		return err
	}
	return row.AccessPolicy.Check(s.Now(), origin)
}

// CheckClientAccess evaluates, at s.Now(), the restrictions that bind an
// OAuth client calling the OAuth endpoints (token, introspection,
// revocation, device authorization): its IP allow-list, then its
// organization's access policy, read in one query. An unknown client passes:
// the endpoint refuses it itself.
// Errors: IP_NOT_ALLOWED, ACCESS_RESTRICTED, INTERNAL_ERROR.
func (s *Store) CheckClientAccess(ctx context.Context, clientID string, origin models.RequestOrigin) error {
	var row struct {
		IPAllowList  []string             `gorm:"serializer:json"`
		AccessPolicy *models.AccessPolicy `gorm:"serializer:json"`
	}
	err := s.In(ctx, models.SystemScope()).Model(&OAuthClient{}).
		Select("o_auth_clients.ip_allow_list AS ip_allow_list, organizations.access_policy AS access_policy").
		Joins("JOIN organizations ON organizations.id = o_auth_clients.organization_id").
		Where("o_auth_clients.id = ?", clientID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return models.DBErr(err)
	}
	if err := models.CheckIPAllowList(row.IPAllowList, origin, "client"); err != nil {
		return err
	}
	return row.AccessPolicy.Check(s.Now(), origin)
}
