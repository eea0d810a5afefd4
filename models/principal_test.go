package models_test

import (
	"slices"
	"testing"

	"github.com/telcoplatform/platform/models"
)

func TestRolePermissions(t *testing.T) {
	tests := []struct {
		role        models.Role
		has, hasNot []string
		wantExactly []string
	}{
		{role: models.RoleAdmin, wantExactly: []string{"*"}},
		{role: models.RoleAgent, has: []string{"support:read", "support:write", "services:read", "billing:read"}, hasNot: []string{"*", "support:admin", "services:write", "billing:write"}},
		{role: models.RoleCustomer, has: []string{"services:write", "billing:write", "support:create", "webhooks:manage", "auth:manage"}, hasNot: []string{"*", "support:admin"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.role), func(t *testing.T) {
			got := models.RolePermissions(tc.role)
			if tc.wantExactly != nil && !slices.Equal(got, tc.wantExactly) {
				t.Fatalf("%v, want %v", got, tc.wantExactly)
			}
			for _, p := range tc.has {
				if !slices.Contains(got, p) {
					t.Errorf("lacks %s: %v", p, got)
				}
			}
			for _, p := range tc.hasNot {
				if slices.Contains(got, p) {
					t.Errorf("holds %s: %v", p, got)
				}
			}
		})
	}
}

// TestUserTokenScopes caps a person's OAuth scopes by what was asked, what
// the client holds and what the person's role permits.
func TestUserTokenScopes(t *testing.T) {
	client := []string{"services.read", "services.write", "billing.read", "support.admin"}
	tests := []struct {
		role      models.Role
		requested []string
		want      []string
	}{
		{models.RoleAgent, []string{"services.read", "services.write"}, []string{"services.read"}},
		{models.RoleAgent, []string{"services.write"}, []string{}},
		{models.RoleCustomer, []string{"services.write", "support.admin", "webhooks.manage"}, []string{"services.write"}},
		{models.RoleAdmin, []string{"support.admin", "services.write", "services.write", "auth.manage"}, []string{"support.admin", "services.write"}},
	}
	for _, tc := range tests {
		if got := models.UserTokenScopes(tc.requested, client, models.RolePermissions(tc.role)); !slices.Equal(got, tc.want) {
			t.Errorf("%s asking %v: %v, want %v", tc.role, tc.requested, got, tc.want)
		}
	}
}
