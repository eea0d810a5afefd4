package models

import (
	"context"
	"encoding/json"
	"errors"

	"gorm.io/gorm"
)

// DemoOrganizationName is the name of the tenant that `platform seed` creates.
const DemoOrganizationName = "Demo Telecom Customer"

// SeedResult says what Seed ensured.
type SeedResult struct {
	Provider *Organization
	Demo     *Organization
	Account  *BillingAccount
	DemoUser *User
	// DemoClient is the demo tenant's public OAuth client (DemoClientID).
	DemoClient *OAuthClient
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
	if err := SeedServiceInventory(ctx, s.DB); err != nil {
		return nil, err
	}
	provider, err := s.EnsureProviderOrganization(ctx)
	if err != nil {
		return nil, err
	}
	db := s.In(ctx, SystemScope())
	var demo Organization
	err = db.Where("name = ? AND provider = ?", DemoOrganizationName, false).Take(&demo).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		demo = Organization{ID: NewID(PrefixOrganization), Name: DemoOrganizationName, Plan: PlanBusiness, CustomerID: NewID(PrefixCustomer)}
		err = db.Create(&demo).Error
	}
	if err != nil {
		return nil, dbErr(err)
	}
	res := &SeedResult{Provider: provider, Demo: &demo}
	for _, env := range []Environment{EnvLive, EnvTest} {
		var acct BillingAccount
		scoped := s.In(ctx, TenantScope(demo.ID, env))
		err := scoped.Order("created_at").Take(&acct).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			acct = BillingAccount{ID: NewID(PrefixAccount), Name: "Demo main account", Currency: "USD", BillingEmail: "billing@demo.example", BillingCycle: "monthly", InvoiceDelivery: "email"}
			err = scoped.Create(&acct).Error
		}
		if err != nil {
			return nil, dbErr(err)
		}
		if env == EnvLive {
			res.Account = &acct
		}
	}
	var user User
	err = db.Where("email = ?", DemoUserEmail).Take(&user).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		user = User{ID: NewID(PrefixUser), OrganizationID: demo.ID, Email: DemoUserEmail, Name: "Demo User", Role: RoleCustomer}
		err = db.Create(&user).Error
	}
	if err != nil {
		return nil, dbErr(err)
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
func (s *Store) ensureDemoClient(ctx context.Context, orgID string) (*OAuthClient, error) {
	db := s.In(ctx, TenantScope(orgID, EnvLive))
	var c OAuthClient
	err := db.Where("id = ?", DemoClientID).Take(&c).Error
	if err == nil {
		return &c, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, dbErr(err)
	}
	var scopes []string
	for _, p := range RolePermissions(RoleCustomer) {
		scopes = append(scopes, ScopeForPermission(p))
	}
	lists := func(v []string) string { raw, _ := json.Marshal(v); return string(raw) }
	c = OAuthClient{ID: DemoClientID, Name: "Demo command-line and portal client", Public: true,
		RedirectURIs: lists([]string{"http://127.0.0.1/callback"}),
		GrantTypes:   lists([]string{GrantAuthorizationCode, GrantRefreshToken, GrantDeviceCode}),
		Scopes:       lists(scopes)}
	if err := db.Create(&c).Error; err != nil {
		return nil, dbErr(err)
	}
	return &c, nil
}

// DemoOrganization returns the seeded demo tenant. Errors: NOT_FOUND when seed has not run.
func (s *Store) DemoOrganization(ctx context.Context) (*Organization, error) {
	var demo Organization
	err := s.In(ctx, SystemScope()).Where("name = ? AND provider = ?", DemoOrganizationName, false).Take(&demo).Error
	return &demo, notFoundOr(err, "demo organization")
}
