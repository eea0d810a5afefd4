package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

// newStore opens a migrated, seeded database for one test.
func newStore(t *testing.T) *models.Store {
	t.Helper()
	store, _ := testenv.SeededStore(t)
	return store
}

func admin(t *testing.T, s *models.Store) *models.Principal {
	t.Helper()
	org, err := identity.NewStore(s).EnsureProviderOrganization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &models.Principal{Kind: models.PrincipalAPIKey, ID: "ak_admin", OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
}

func TestTenantScopingIsEnforced(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	adm := admin(t, s)
	orgA, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "A", Plan: models.PlanDeveloper})
	if err != nil {
		t.Fatal(err)
	}
	orgB, err := identity.NewStore(s).CreateOrganization(ctx, adm, identity.OrganizationInput{Name: "B", Plan: models.PlanDeveloper})
	if err != nil {
		t.Fatal(err)
	}
	pa := &models.Principal{OrganizationID: orgA.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	pb := &models.Principal{OrganizationID: orgB.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	pbTest := &models.Principal{OrganizationID: orgB.ID, Environment: models.EnvTest, Role: models.RoleCustomer, Permissions: []string{"*"}}
	acct, err := billing.NewStore(s).CreateAccount(ctx, pb, billing.AccountInput{Name: "B main", Currency: "usd", BillingEmail: "b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		who    *models.Principal
		wantOK bool
	}{
		{"owner sees it", pb, true},
		{"other tenant gets not found", pa, false},
		{"owner's sandbox does not see live data", pbTest, false},
		{"staff see every tenant", adm, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := billing.NewStore(s).GetAccount(ctx, tc.who, acct.ID)
			if tc.wantOK && err != nil {
				t.Fatalf("want the account, got %v", err)
			}
			if !tc.wantOK && models.ErrorCode(err) != models.CodeNotFound {
				t.Fatalf("want NOT_FOUND, got %v", err)
			}
		})
	}

	t.Run("a query without a scope fails", func(t *testing.T) {
		var n int64
		err := s.DB.WithContext(ctx).Model(&models.BillingAccount{}).Count(&n).Error
		if !errors.Is(err, models.ErrUnscoped) {
			t.Fatalf("want ErrUnscoped, got %v", err)
		}
	})
	t.Run("an insert for another tenant fails", func(t *testing.T) {
		row := &models.BillingAccount{ID: models.NewID("acct"), Tenant: models.Tenant{OrganizationID: orgB.ID, Environment: models.EnvLive}, Name: "x", Currency: "USD", BillingEmail: "x@example.com", BillingCycle: "monthly", InvoiceDelivery: "email"}
		err := s.In(ctx, pa.Scope()).Create(row).Error
		if !errors.Is(err, models.ErrWrongTenant) {
			t.Fatalf("want ErrWrongTenant, got %v", err)
		}
	})
}

func TestParsePage(t *testing.T) {
	tests := []struct {
		name    string
		in      models.ListQuery
		want    models.PageRequest
		wantErr bool
	}{
		{"defaults", models.ListQuery{}, models.PageRequest{Limit: 50}, false},
		{"per_page alias and page", models.ListQuery{PerPage: 10, Page: 3}, models.PageRequest{Limit: 10, Offset: 20}, false},
		{"offset", models.ListQuery{Limit: 5, Offset: 7}, models.PageRequest{Limit: 5, Offset: 7}, false},
		{"limit too big", models.ListQuery{Limit: 201}, models.PageRequest{}, true},
		{"negative offset", models.ListQuery{Offset: -1}, models.PageRequest{}, true},
		{"bad cursor", models.ListQuery{Cursor: "!!"}, models.PageRequest{}, true},
		{"bad sort direction", models.ListQuery{Sort: "name:up"}, models.PageRequest{}, true},
		{"sort", models.ListQuery{Sort: "name:desc,created_at"}, models.PageRequest{Limit: 50, Sort: []models.SortField{{Field: "name", Desc: true}, {Field: "created_at"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := models.ParsePage(tc.in)
			if tc.wantErr {
				if models.ErrorCode(err) != models.CodeValidation {
					t.Fatalf("want VALIDATION_ERROR, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Limit != tc.want.Limit || got.Offset != tc.want.Offset || len(got.Sort) != len(tc.want.Sort) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("cursor round trip", func(t *testing.T) {
		pr := models.PageRequest{Limit: 10, Offset: 10}
		c := pr.NextCursor(100)
		got, err := models.ParsePage(models.ListQuery{Limit: 10, Cursor: c})
		if err != nil || got.Offset != 20 {
			t.Fatalf("got %+v, %v", got, err)
		}
		if pr.NextCursor(20) != "" {
			t.Fatal("no cursor expected past the end")
		}
	})
}

func TestMoney(t *testing.T) {
	tests := []struct {
		in      string
		want    models.Money
		wantErr bool
	}{
		{"12.5", 1250, false}, {"0.01", 1, false}, {"100", 10000, false}, {"-3.20", -320, false},
		{"1.234", 0, true}, {"1e3", 0, true}, {"abc", 0, true}, {"", 0, true},
	}
	for _, tc := range tests {
		got, err := models.ParseMoney(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseMoney(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	if models.Money(1250).String() != "12.50" {
		t.Fatal(models.Money(1250).String())
	}
}
