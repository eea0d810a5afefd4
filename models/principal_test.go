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
