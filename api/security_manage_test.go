package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// TestStaffChangeOnlyWhatTheyCouldIssue: rotating, revoking, changing or
// deleting a credential needs a credential that could have issued it.
// Staff see every organization's keys and clients; before, an agent holding
// auth:manage rotated an administrator's key (and signed in as an
// administrator with the new secret) and rotated a tenant's keys and client
// secrets (and acted as the tenant).
func TestStaffChangeOnlyWhatTheyCouldIssue(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	issue := func(cred string, body map[string]any) keyAnswer {
		t.Helper()
		var k keyAnswer
		h.do("POST", "/v1/auth/api-keys", cred, body).decode(http.StatusCreated, &k)
		return k
	}
	admin := issue(h.adminKey, map[string]any{"name": "ops", "role": "admin", "permissions": []string{"auth:manage", "services:read"}})
	agent := issue(h.adminKey, map[string]any{"name": "agent", "role": "agent", "permissions": []string{"support:read", "support:write", "auth:manage", "services:read"}})
	tenantKey := issue(a.liveKey, map[string]any{"name": "tenant reader", "permissions": []string{"services:read"}})
	var client clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "tenant app", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"}}).
		decode(http.StatusCreated, &client)

	for _, c := range []struct{ name, method, path string }{
		{"an administrator's key: rotate", "POST", "/v1/auth/api-keys/" + admin.APIKey.ID + "/rotate"},
		{"an administrator's key: revoke", "DELETE", "/v1/auth/api-keys/" + admin.APIKey.ID},
		{"a tenant's key: rotate", "POST", "/v1/auth/api-keys/" + tenantKey.APIKey.ID + "/rotate"},
		{"a tenant's key: revoke", "DELETE", "/api/v1/auth/api-keys/" + tenantKey.APIKey.ID},
		{"a tenant's client: rotate its secret", "POST", "/v1/auth/clients/" + client.Client.ClientID + "/rotate-secret"},
		{"a tenant's client: change", "PATCH", "/v1/auth/clients/" + client.Client.ClientID},
		{"a tenant's client: delete", "DELETE", "/v1/auth/clients/" + client.Client.ClientID},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.method == "PATCH" {
				body = map[string]any{"name": "taken over"}
			}
			h.do(c.method, c.path, agent.APIKey.Key, body).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
		})
	}
	// The provider's own sign-in client: an agent repointing its redirect
	// URIs would receive administrators' authorization codes.
	var portal clientAnswer
	h.do("POST", "/v1/auth/clients", h.adminKey, map[string]any{"name": "staff portal", "redirect_uris": []string{"https://portal.example.com/cb"},
		"scopes": []string{"services.read"}}).decode(http.StatusCreated, &portal)
	h.do("PATCH", "/v1/auth/clients/"+portal.Client.ClientID, agent.APIKey.Key, map[string]any{"redirect_uris": []string{"https://agent.example.com/cb"}}).
		wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/auth/clients/"+portal.Client.ClientID+"/rotate-secret", agent.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("DELETE", "/v1/auth/clients/"+portal.Client.ClientID, agent.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", "/v1/auth/clients/"+portal.Client.ClientID, h.adminKey, map[string]any{"name": "staff portal (renamed)"}).decode(http.StatusOK, nil)

	// Nothing changed: the administrator's and the tenant's secrets still work.
	h.do("GET", "/v1/organizations", admin.APIKey.Key, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/services", tenantKey.APIKey.Key, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/auth/clients/"+client.Client.ClientID, a.liveKey, nil).decode(http.StatusOK, nil)

	// The agent still manages what it could issue: a key of its own role.
	own := issue(agent.APIKey.Key, map[string]any{"name": "agent's own", "permissions": []string{"support:read"}})
	h.do("POST", "/v1/auth/api-keys/"+own.APIKey.ID+"/rotate", agent.APIKey.Key, nil).decode(http.StatusOK, nil)
	// An administrator manages any.
	h.do("POST", "/v1/auth/api-keys/"+tenantKey.APIKey.ID+"/rotate", h.adminKey, nil).decode(http.StatusOK, nil)

	// A staff-role row in a customer organization acts as the customer's,
	// so the customer may still rotate and revoke it.
	legacy := issue(a.liveKey, map[string]any{"name": "old staff key", "permissions": []string{"services:read"}})
	if err := h.store.In(ctx, models.SystemScope()).Model(&identity.APIKey{}).Where("id = ?", legacy.APIKey.ID).Update("role", models.RoleAdmin).Error; err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/v1/auth/api-keys/"+legacy.APIKey.ID+"/rotate", a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("DELETE", "/v1/auth/api-keys/"+legacy.APIKey.ID, a.liveKey, nil).decode(http.StatusOK, nil)

	// An expired key is not given a secret that could never work.
	expired := issue(a.liveKey, map[string]any{"name": "expiring", "permissions": []string{"services:read"}})
	if err := h.store.In(ctx, models.SystemScope()).Model(&identity.APIKey{}).Where("id = ?", expired.APIKey.ID).Update("expires_at", time.Now().Add(-time.Minute)).Error; err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/v1/auth/api-keys/"+expired.APIKey.ID+"/rotate", a.liveKey, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
}

// TestChallengeBelongsToItsResource: a second-factor challenge passed for
// one resource is not accepted for another of the same route. Before, a
// challenge passed to rotate one key rotated any other, and one passed to
// change one user changed another: a challenge was bound to the route's
// pattern, not the request's path.
func TestChallengeBelongsToItsResource(t *testing.T) {
	h := newHarness(t)
	u := newTOTPUser(t, h, "*")
	a := h.tenants[0]
	var first, second userAnswer
	h.do("POST", "/v1/users", a.liveKey, map[string]any{"email": "first@tenant-a.example", "name": "First"}).decode(http.StatusCreated, &first)
	h.do("POST", "/v1/users", a.liveKey, map[string]any{"email": "second@tenant-a.example", "name": "Second"}).decode(http.StatusCreated, &second)
	body := map[string]any{"ip_allowlist": []string{}}
	id := u.pass(t, h, h.do("PATCH", "/v1/users/"+first.User.ID, u.token, body))
	// For the other user the challenge is not accepted: a new one is issued.
	var ch mfaRequired
	h.do("PATCH", "/v1/users/"+second.User.ID, u.token, body, "X-MFA-Challenge-Id", id).decode(http.StatusUnauthorized, &ch)
	if ch.Error != "mfa_required" || ch.ChallengeID == id {
		t.Fatalf("a challenge for %s answered for %s: %+v", first.User.ID, second.User.ID, ch)
	}
	// For its own user, on either mount, it is (once).
	h.do("PATCH", "/api/v1/users/"+first.User.ID, u.token, body, "X-MFA-Challenge-Id", id).decode(http.StatusOK, nil)
	h.do("PATCH", "/v1/users/"+first.User.ID, u.token, body, "X-MFA-Challenge-Id", id).decode(http.StatusUnauthorized, &ch)
}

// TestTokensFollowTheirUser: a person's access token carries at most what
// the person holds now. Before, a permission taken from a user stayed in
// the user's token until it expired (an hour), long enough to mint a
// permanent key holding it.
func TestTokensFollowTheirUser(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	u := h.tokenUser(0)
	h.do("PATCH", "/v1/users/"+u.ID, a.liveKey, map[string]any{"permissions": []string{"services:read", "auth:manage"}}).decode(http.StatusOK, nil)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:read", "auth:manage"}, AuthMethod: "password"}).Token
	if got := mePermissions(t, h, tok); !slices.Equal(got, []string{"services:read", "auth:manage"}) {
		t.Fatalf("before: %v", got)
	}
	h.do("PATCH", "/v1/users/"+u.ID, a.liveKey, map[string]any{"permissions": []string{"services:read"}}).decode(http.StatusOK, nil)
	if got := mePermissions(t, h, tok); !slices.Equal(got, []string{"services:read"}) {
		t.Fatalf("after the user lost auth:manage, the token carries %v", got)
	}
	h.do("POST", "/v1/auth/api-keys", tok, map[string]any{"name": "persist", "permissions": []string{"services:read", "auth:manage"}}).
		wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/auth/api-keys", tok, map[string]any{"name": "persist", "permissions": []string{"services:read"}}).
		wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS") // auth:manage is what creating keys needs
	// A token carrying every permission ("*") carries what the user holds.
	star := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"*"}, AuthMethod: "password"}).Token
	if got := mePermissions(t, h, star); !slices.Equal(got, []string{"services:read"}) {
		t.Fatalf("a * token of the user carries %v", got)
	}
}
