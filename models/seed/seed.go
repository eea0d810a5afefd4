package seed

import (
	"context"
	"encoding/json"
	"errors"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/identity"
)

// DemoOrganizationName is the name of the tenant that `platform seed` creates.
const DemoOrganizationName = "Demo Telecom Customer"

// SeedResult says what Seed ensured.
type SeedResult struct {
	Provider *models.Organization
	Demo     *models.Organization
	Account  *models.BillingAccount
	DemoUser *identity.User
	// DemoClient is the demo tenant's public OAuth client (DemoClientID).
	DemoClient *identity.OAuthClient
}

// Seed loads the reference data (catalog) and ensures the demo tenant with a
// billing account and a demo user. It is idempotent.
func (s *Store) Seed(ctx context.Context) (*SeedResult, error) {
	if err := SeedCatalog(ctx, s.DB); err != nil {
		return nil, err
	}
	if err := SeedProvisioning(ctx, s.DB); err != nil {
		return nil, err
	}
	if err := catalog.SeedServiceInventory(ctx, s.DB); err != nil {
		return nil, err
	}
	provider, err := s.identity.EnsureProviderOrganization(ctx)
	if err != nil {
		return nil, err
	}
	db := s.In(ctx, models.SystemScope())
	var demo models.Organization
	err = db.Where("name = ? AND provider = ?", DemoOrganizationName, false).Take(&demo).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		demo = models.Organization{ID: models.NewID(models.PrefixOrganization), Name: DemoOrganizationName, Plan: models.PlanBusiness, CustomerID: models.NewID(models.PrefixCustomer)}
		err = db.Create(&demo).Error
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	res := &SeedResult{Provider: provider, Demo: &demo}
	for _, env := range []models.Environment{models.EnvLive, models.EnvTest} {
		var acct models.BillingAccount
		scoped := s.In(ctx, models.TenantScope(demo.ID, env))
		err := scoped.Order("created_at").Take(&acct).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			acct = models.BillingAccount{ID: models.NewID(models.PrefixAccount), Name: "Demo main account", Currency: "USD", BillingEmail: "billing@demo.example", BillingCycle: "monthly", InvoiceDelivery: "email"}
			err = scoped.Create(&acct).Error
		}
		if err != nil {
			return nil, models.DBErr(err)
		}
		if env == models.EnvLive {
			res.Account = &acct
		}
	}
	var user identity.User
	err = db.Where("email = ?", identity.DemoUserEmail).Take(&user).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		user = identity.User{ID: models.NewID(models.PrefixUser), OrganizationID: demo.ID, Email: identity.DemoUserEmail, Name: "Demo User", Role: models.RoleCustomer}
		err = db.Create(&user).Error
	}
	if err != nil {
		return nil, models.DBErr(err)
	}
	res.DemoUser = &user
	client, err := s.ensureDemoClient(ctx, demo.ID)
	if err != nil {
		return nil, err
	}
	res.DemoClient = client
	return res, nil
}

// DemoClientID is the seeded public OAuth client of the demo tenant.
const DemoClientID = "cli_demo_public"

// ensureDemoClient seeds the demo tenant's public OAuth client (PKCE, no
// secret): authorization code with loopback redirects for native apps
// (RFC 8252: any port on 127.0.0.1), refresh tokens and the device flow,
// with every customer scope.
func (s *Store) ensureDemoClient(ctx context.Context, orgID string) (*identity.OAuthClient, error) {
	db := s.In(ctx, models.TenantScope(orgID, models.EnvLive))
	var c identity.OAuthClient
	err := db.Where("id = ?", DemoClientID).Take(&c).Error
	if err == nil {
		return &c, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, models.DBErr(err)
	}
	var scopes []string
	for _, p := range models.RolePermissions(models.RoleCustomer) {
		scopes = append(scopes, identity.ScopeForPermission(p))
	}
	lists := func(v []string) string { raw, _ := json.Marshal(v); return string(raw) }
	c = identity.OAuthClient{ID: DemoClientID, Name: "Demo command-line and portal client", Public: true,
		RedirectURIs: lists([]string{"http://127.0.0.1/callback"}),
		GrantTypes:   lists([]string{identity.GrantAuthorizationCode, identity.GrantRefreshToken, identity.GrantDeviceCode}),
		Scopes:       lists(scopes)}
	if err := db.Create(&c).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return &c, nil
}

// DemoOrganization returns the seeded demo tenant. Errors: NOT_FOUND when seed has not run.
func (s *Store) DemoOrganization(ctx context.Context) (*models.Organization, error) {
	var demo models.Organization
	err := s.In(ctx, models.SystemScope()).Where("name = ? AND provider = ?", DemoOrganizationName, false).Take(&demo).Error
	return &demo, models.NotFoundOr(err, "demo organization")
}
