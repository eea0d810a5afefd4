package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
)

// userAnswer is the answer of the user endpoints.
type userAnswer struct {
	User struct {
		ID          string   `json:"id"`
		Role        string   `json:"role"`
		Permissions []string `json:"permissions"`
	} `json:"user"`
}

// portalToken signs a user in to the portal with a password and exchanges
// the session for an access token, as a person would.
func portalToken(t *testing.T, h *harness, email, password string) string {
	t.Helper()
	b := &browserish{t: t, h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/portal", nil)
	csrf := hiddenCSRF.FindStringSubmatch(page)[1]
	if res, _ := b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {email}, "password": {password}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("portal sign-in of %s: %d", email, res.StatusCode)
	}
	_, page = b.send("GET", "/portal", nil)
	session := hiddenCSRF.FindStringSubmatch(page)[1]
	res, body := b.send("POST", "/v1/auth/session/token", nil, "X-CSRF-Token", session)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("token exchange: %d %s", res.StatusCode, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token exchange answer %s: %v", body, err)
	}
	return tok.AccessToken
}

// mePermissions returns the permissions GET /v1/users/me reports for a credential.
func mePermissions(t *testing.T, h *harness, cred string) []string {
	t.Helper()
	var me meBody
	h.do("GET", "/v1/users/me", cred, nil).decode(http.StatusOK, &me)
	return me.Principal.Permissions
}

// TestCreatingUsersCannotEscalate: a user is a credential of its own, so a
// caller creates or changes only users whose permissions it could grant
// itself, and a sandbox credential creates none. Before, a key holding only
// auth:manage created a customer whose portal token carried every customer
// permission, in the live environment, even from an sk_test_ key.
func TestCreatingUsersCannotEscalate(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	manager := limitedKey(t, h, a, "auth:manage")
	body := func(email string, perms ...string) map[string]any {
		b := map[string]any{"email": email, "name": "New person", "password": "correct horse battery"}
		if perms != nil {
			b["permissions"] = perms
		}
		return b
	}

	// By default a user gets every permission of its role: more than auth:manage.
	e := h.do("POST", "/v1/users", manager, body("escalate@tenant-a.example")).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if e.Error.Details["requested_permissions"] == nil {
		t.Fatalf("details %+v", e.Error.Details)
	}
	h.do("POST", "/v1/users", manager, body("billing@tenant-a.example", "billing:write")).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	// A permission outside the role is a validation error, whoever asks.
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "x@tenant-a.example", "name": "X", "organization_id": a.org.ID,
		"permissions": []string{"billing:admin"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	// A sandbox credential, even with every permission, creates no person.
	h.do("POST", "/v1/users", a.testKey, body("sandbox@tenant-a.example")).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")

	// What the caller holds, it may hand on; the person's sessions carry no more.
	var created userAnswer
	h.do("POST", "/v1/users", manager, body("helper@tenant-a.example", "auth:manage")).decode(http.StatusCreated, &created)
	if !slices.Equal(created.User.Permissions, []string{"auth:manage"}) {
		t.Fatalf("created %+v", created.User)
	}
	tok := portalToken(t, h, "helper@tenant-a.example", "correct horse battery")
	if got := mePermissions(t, h, tok); !slices.Equal(got, []string{"auth:manage"}) {
		t.Fatalf("portal token permissions %v, want [auth:manage]", got)
	}
	h.do("GET", "/v1/billing/invoices", tok, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")

	// Changing: the caller grants only what it holds, changes only users it
	// could have created, and only administrators change roles.
	h.do("PATCH", "/v1/users/"+created.User.ID, manager, map[string]any{"permissions": []string{"auth:manage", "billing:write"}}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", "/v1/users/"+created.User.ID, a.liveKey, map[string]any{"role": "admin"}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	var full userAnswer
	h.do("POST", "/v1/users", a.liveKey, body("full@tenant-a.example")).decode(http.StatusCreated, &full)
	if !slices.Contains(full.User.Permissions, "billing:write") || slices.Contains(full.User.Permissions, "billing:admin") || slices.Contains(full.User.Permissions, "*") {
		t.Fatalf("a customer's default permissions: %v", full.User.Permissions)
	}
	h.do("PATCH", "/v1/users/"+full.User.ID, manager, map[string]any{"name": "Renamed"}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", "/v1/users/"+full.User.ID, manager, map[string]any{"ip_allowlist": []string{"203.0.113.0/24"}}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	var narrowed userAnswer
	h.do("PATCH", "/v1/users/"+full.User.ID, a.liveKey, map[string]any{"permissions": []string{"services:read"}}).decode(http.StatusOK, &narrowed)
	if !slices.Equal(narrowed.User.Permissions, []string{"services:read"}) {
		t.Fatalf("narrowed %+v", narrowed.User)
	}
	h.do("PATCH", "/v1/users/"+full.User.ID, h.adminKey, map[string]any{"role": "agent"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("PATCH", "/v1/users/"+full.User.ID, a.testKey, map[string]any{"name": "Sandbox"}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
}

// TestStaffRolesOnlyInTheProvider: staff (admin, agent) act across every
// organization, so only the provider's own people may be staff. Before, an
// administrator's POST /v1/users made a customer organization's user an
// admin, whose token then listed and minted API keys of other tenants.
func TestStaffRolesOnlyInTheProvider(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	for _, role := range []string{"admin", "agent"} {
		e := h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": role + "@tenant-a.example", "name": "Staff?", "organization_id": a.org.ID,
			"role": role, "password": "correct horse battery"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "role") {
			t.Fatalf("%s in a customer organization: %+v", role, e.Error)
		}
	}
	// An organization that does not exist is a bad reference in the body.
	e := h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "nowhere@tenant-a.example", "name": "Nowhere", "organization_id": "org_doesnotexist",
		"password": "correct horse battery"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "organization_id") {
		t.Fatalf("unknown organization: %+v", e.Error)
	}

	// A staff row in a customer organization (written by an earlier
	// version) signs in as a customer of that organization only.
	var u userAnswer
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "old-staff@tenant-a.example", "name": "Old staff", "organization_id": a.org.ID,
		"password": "correct horse battery"}).decode(http.StatusCreated, &u)
	if err := h.store.In(context.Background(), models.SystemScope()).Model(&identity.User{}).Where("id = ?", u.User.ID).Update("role", models.RoleAdmin).Error; err != nil {
		t.Fatal(err)
	}
	tok := portalToken(t, h, "old-staff@tenant-a.example", "correct horse battery")
	var me meBody
	h.do("GET", "/v1/users/me", tok, nil).decode(http.StatusOK, &me)
	if me.Principal.Role != "customer" || me.Principal.OrganizationID != a.org.ID {
		t.Fatalf("a staff row of a customer organization signs in as %+v", me.Principal)
	}
	h.do("GET", "/v1/organizations", tok, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if r := h.do("POST", "/v1/auth/api-keys", tok, map[string]any{"name": "cross", "permissions": []string{"services:read"}, "organization_id": b.org.ID}); r.status == http.StatusCreated {
		t.Fatalf("a customer's token minted a key in another organization: %s", r.body)
	}

	// So does a staff-role API key of a customer organization (key creation
	// refuses one; a row written otherwise is still a customer's key). The
	// key is changed before its first use, so no cache holds it.
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "old staff key", "permissions": []string{"*"}}).decode(http.StatusCreated, &k)
	if err := h.store.In(context.Background(), models.SystemScope()).Model(&identity.APIKey{}).Where("id = ?", k.APIKey.ID).Update("role", models.RoleAdmin).Error; err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/v1/users/me", k.APIKey.Key, nil).decode(http.StatusOK, &me)
	if me.Principal.Role != "customer" || me.Principal.OrganizationID != a.org.ID {
		t.Fatalf("a staff-role key of a customer organization acts as %+v", me.Principal)
	}
	h.do("GET", "/v1/organizations", k.APIKey.Key, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	if r := h.do("POST", "/v1/auth/api-keys", k.APIKey.Key, map[string]any{"name": "cross", "permissions": []string{"services:read"}, "organization_id": b.org.ID}); r.status == http.StatusCreated {
		t.Fatalf("a customer organization's staff-role key minted a key in another organization: %s", r.body)
	}
}

// totpUser is a customer user of tenant 0 with a confirmed TOTP factor and
// an access token carrying perms; next returns a fresh TOTP code.
type totpUser struct {
	user  *identity.User
	token string
	next  func() string
}

func newTOTPUser(t *testing.T, h *harness, perms ...string) *totpUser {
	t.Helper()
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: perms, AuthMethod: "password"}).Token
	var setup struct {
		Secret string `json:"secret"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).decode(http.StatusOK, &setup)
	next := func() string {
		clock = clock.Add(30 * time.Second)
		code, err := totp.GenerateCode(setup.Secret, clock)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": next()}).decode(http.StatusOK, nil)
	return &totpUser{user: u, token: tok, next: next}
}

// pass answers the challenge of a 401 mfa_required with a TOTP code and
// returns the challenge id to repeat the request with.
func (u *totpUser) pass(t *testing.T, h *harness, r *response) string {
	t.Helper()
	var ch mfaRequired
	r.decode(http.StatusUnauthorized, &ch)
	if ch.Error != "mfa_required" || ch.ChallengeID == "" {
		t.Fatalf("not a challenge: %+v", ch)
	}
	h.do("POST", "/v1/auth/mfa/verify", u.token, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": u.next()}).decode(http.StatusOK, nil)
	return ch.ChallengeID
}

// TestIdentityAndProvisioningChangesChallengeUsers: every operation that
// mints a credential or a person, changes a second factor, can provision or
// arranges later charges challenges a user who has a second factor. Before, OAuth clients, users,
// the SMS phone, orchestrations and retries went through without one, and
// a client's token (a machine principal) is never challenged afterwards.
func TestIdentityAndProvisioningChangesChallengeUsers(t *testing.T) {
	h := newHarness(t)
	u := newTOTPUser(t, h, "*")
	clientID := clientFixture(t, h, h.tenants[0])
	var other userAnswer
	h.do("POST", "/v1/users", h.tenants[0].liveKey, map[string]any{"email": "other@tenant-a.example", "name": "Other"}).decode(http.StatusCreated, &other)
	for _, tc := range []struct {
		method, path string
		body         map[string]any
	}{
		{"POST", "/v1/auth/clients", map[string]any{"name": "machine", "grant_types": []string{"client_credentials"}, "scopes": []string{"billing.write"}}},
		{"PATCH", "/v1/auth/clients/" + clientID, map[string]any{"scopes": []string{"billing.write"}}},
		{"POST", "/v1/auth/clients/" + clientID + "/rotate-secret", nil},
		{"POST", "/v1/users", map[string]any{"email": "new@tenant-a.example", "name": "New"}},
		{"PATCH", "/v1/users/" + other.User.ID, map[string]any{"ip_allowlist": []string{}}},
		{"POST", "/v1/auth/mfa/sms/setup", map[string]any{"phone_number": "+14155550123"}},
		{"POST", "/v1/services/orchestration/workflows", map[string]any{"name": "w", "steps": []map[string]any{{"order": 1, "action": "wait", "parameters": map[string]any{"duration": "1s"}}}}},
		{"POST", "/v1/operations/bulk_x/retry", nil},
		// What arranges later charges: auto-pay with a saved method, recurring billing.
		{"PUT", "/v1/billing/accounts/" + h.tenants[0].account.ID + "/preferences", map[string]any{"auto_pay": false}},
		{"POST", "/v1/billing/recurring", map[string]any{"account_id": h.tenants[0].account.ID, "services": []map[string]any{{"service_id": "svc_x"}}}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body any
			if tc.body != nil {
				body = tc.body
			}
			var ch mfaRequired
			h.do(tc.method, tc.path, u.token, body).decode(http.StatusUnauthorized, &ch)
			if ch.Error != "mfa_required" {
				t.Fatalf("answer %+v", ch)
			}
		})
	}
	// With the challenge passed, the client is created.
	body := map[string]any{"name": "machine", "grant_types": []string{"client_credentials"}, "scopes": []string{"billing.write"}}
	id := u.pass(t, h, h.do("POST", "/v1/auth/clients", u.token, body))
	h.do("POST", "/v1/auth/clients", u.token, body, "X-MFA-Challenge-Id", id).decode(http.StatusCreated, nil)
}

// TestReplacingThePhoneNeedsTheExistingFactor: a confirmed phone is changed
// only with a passed challenge, and stays the factor until the new number is
// confirmed. Before, POST /auth/mfa/sms/setup overwrote it unchallenged.
func TestReplacingThePhoneNeedsTheExistingFactor(t *testing.T) {
	h := newHarness(t)
	u := newTOTPUser(t, h, "auth:manage")
	ctx := context.Background()
	setPhone := func(number string) {
		t.Helper()
		body := map[string]any{"phone_number": number}
		id := u.pass(t, h, h.do("POST", "/v1/auth/mfa/sms/setup", u.token, body))
		h.do("POST", "/v1/auth/mfa/sms/setup", u.token, body, "X-MFA-Challenge-Id", id).decode(http.StatusAccepted, nil)
	}
	setPhone("+14155550123")
	h.do("POST", "/v1/auth/mfa/verify", u.token, map[string]any{"method": "sms", "code": outboxCode(t, h, u.user.OrganizationID, "+14155550123")}).decode(http.StatusOK, nil)

	// An attacker holding the session, without the factor: refused, phone unchanged.
	var ch mfaRequired
	h.do("POST", "/v1/auth/mfa/sms/setup", u.token, map[string]any{"phone_number": "+14155550999"}).decode(http.StatusUnauthorized, &ch)
	if got, _ := identity.NewStore(h.store).MFAPhoneOf(ctx, u.user.ID); got != "+14155550123" {
		t.Fatalf("phone after an unchallenged change: %q", got)
	}
	// With the factor: the new number is pending; codes still go to the confirmed one.
	setPhone("+14155550199")
	if got, _ := identity.NewStore(h.store).MFAPhoneOf(ctx, u.user.ID); got != "+14155550123" {
		t.Fatalf("an unconfirmed number replaced the confirmed one: %q", got)
	}
	var sent struct {
		Destination string `json:"destination"`
	}
	h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", u.token, map[string]any{"method": "sms"}).decode(http.StatusAccepted, &sent)
	if sent.Destination != "********0123" {
		t.Fatalf("challenge code sent to %q", sent.Destination)
	}
	h.do("POST", "/v1/auth/mfa/verify", u.token, map[string]any{"method": "sms", "code": outboxCode(t, h, u.user.OrganizationID, "+14155550199")}).decode(http.StatusOK, nil)
	if got, _ := identity.NewStore(h.store).MFAPhoneOf(ctx, u.user.ID); got != "+14155550199" {
		t.Fatalf("confirmed new phone: %q", got)
	}
}

// TestCustomersDisputeInvoices: customers cannot void the provider's
// invoices; they dispute them, which pauses auto-pay, and provider staff
// resolve the dispute (here by cancelling the invoice).
func TestCustomersDisputeInvoices(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	svc := mustService(t, h, a)
	inv := newInvoice(t, h, a, svc, 1, 20)
	path := "/v1/billing/invoices/" + inv.ID + "/disputes"

	h.do("POST", path, a.liveKey, map[string]any{"reason": "other"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("POST", path, a.liveKey, map[string]any{"reason": "because"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("POST", path, b.liveKey, map[string]any{"reason": "duplicate_charge"}).wantError(http.StatusNotFound, "NOT_FOUND")
	var d struct {
		Dispute struct {
			ID, Status, Reason, Resolution string
		} `json:"dispute"`
	}
	h.do("POST", path, a.liveKey, map[string]any{"reason": "duplicate_charge", "description": "billed twice for November"}).decode(http.StatusCreated, &d)
	if d.Dispute.Status != "open" || d.Dispute.Reason != "duplicate_charge" {
		t.Fatalf("dispute %+v", d.Dispute)
	}
	h.do("POST", path, a.liveKey, map[string]any{"reason": "duplicate_charge"}).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	if got := eventTypes(t, h, a, inv.ID); !slices.Contains(got, "invoice.disputed") {
		t.Fatalf("events %v", got)
	}
	target, err := billing.NewStore(h.store).AutoPayTargetOf(context.Background(), models.TenantScope(a.org.ID, models.EnvLive), inv.ID)
	if err != nil || !target.Disputed {
		t.Fatalf("auto-pay target %+v %v", target, err)
	}
	// The customer still cannot cancel; provider staff can, which resolves the dispute.
	h.do("POST", "/v1/billing/invoices/"+inv.ID+"/cancel", a.liveKey, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("POST", "/v1/billing/invoices/"+inv.ID+"/cancel", h.adminKey, map[string]any{"reason": "duplicate"}).decode(http.StatusOK, nil)
	var list struct {
		Disputes []struct {
			ID, Status, Resolution string
		} `json:"disputes"`
		Pagination api.Pagination `json:"pagination"`
	}
	h.do("GET", path, a.liveKey, nil).decode(http.StatusOK, &list)
	if len(list.Disputes) != 1 || list.Disputes[0].Status != "resolved" || !strings.Contains(list.Disputes[0].Resolution, "duplicate") || list.Pagination.Total != 1 {
		t.Fatalf("disputes %+v", list)
	}
	h.do("POST", path, a.liveKey, map[string]any{"reason": "duplicate_charge"}).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")
	h.do("GET", path, b.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	// The voiding is in the audit trail.
	var audit struct {
		AuditEvents []struct {
			EventType string `json:"event_type"`
			SessionID string `json:"session_id"`
		} `json:"audit_events"`
	}
	h.do("GET", "/v1/auth/audit-events?event_type=invoice.voided", h.adminKey, nil).decode(http.StatusOK, &audit)
	if len(audit.AuditEvents) != 1 || audit.AuditEvents[0].SessionID != inv.ID {
		t.Fatalf("audit %+v", audit)
	}
}

// TestRevokingNeedsTheCredentialsPermissions: a weaker credential cannot
// take a stronger key or client out of service.
func TestRevokingNeedsTheCredentialsPermissions(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	manager := limitedKey(t, h, a, "auth:manage")
	var strong keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "strong", "permissions": []string{"billing:write", "auth:manage"}}).decode(http.StatusCreated, &strong)
	h.do("DELETE", "/v1/auth/api-keys/"+strong.APIKey.ID, manager, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	var c clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "strong", "grant_types": []string{"client_credentials"}, "scopes": []string{"billing.write"}}).decode(http.StatusCreated, &c)
	h.do("DELETE", "/v1/auth/clients/"+c.Client.ClientID, manager, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	// Holding them, it may.
	h.do("DELETE", "/v1/auth/clients/"+c.Client.ClientID, a.liveKey, nil).decode(http.StatusNoContent, nil)
	h.do("DELETE", "/v1/auth/api-keys/"+strong.APIKey.ID, a.liveKey, nil).decode(http.StatusOK, nil)
}

// TestBodyOrganizationReferences: an organization_id in a body that names
// an organization the caller may not see (another tenant's, or none) is a
// bad field (400 VALIDATION_ERROR), never a 404 that tells it apart.
func TestBodyOrganizationReferences(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	account := func(org string) map[string]any {
		return map[string]any{"name": "Elsewhere", "currency": "USD", "billing_email": "b@example.com", "organization_id": org}
	}
	for name, r := range map[string]*response{
		"a customer's account in another organization": h.do("POST", "/v1/billing/accounts", a.liveKey, account(b.org.ID)),
		"a customer's account in no organization":      h.do("POST", "/v1/billing/accounts", a.liveKey, account("org_doesnotexist")),
		"staff's account in no organization":           h.do("POST", "/v1/billing/accounts", h.adminKey, account("org_doesnotexist")),
		"a key in no organization": h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "k", "permissions": []string{"services:read"},
			"organization_id": "org_doesnotexist"}),
	} {
		e := r.wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "organization_id") {
			t.Fatalf("%s: %+v", name, e.Error)
		}
	}
}

// TestKeyRateLimitFieldsAreIndependent: a key's rate_limit may lower one
// of its two limits only; the other keeps the plan's.
func TestKeyRateLimitFieldsAreIndependent(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for _, rl := range []map[string]any{{"requests_per_minute": 60}, {"burst_limit": 20}} {
		var got struct {
			APIKey struct {
				RateLimit map[string]any `json:"rate_limit"`
			} `json:"api_key"`
		}
		h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "one limit", "permissions": []string{"services:read"}, "rate_limit": rl}).decode(http.StatusCreated, &got)
		for k, v := range rl {
			if fmt.Sprint(got.APIKey.RateLimit[k]) != fmt.Sprint(v) {
				t.Fatalf("rate_limit %v: answered %v", rl, got.APIKey.RateLimit)
			}
		}
	}
}

// TestCustomerCredentialsHoldNoStaffPermissions (attack): a customer's `*`
// credential cannot mint a key, or register or change an OAuth client,
// holding the permissions only provider staff hold (billing:admin,
// support:admin), as a customer's user cannot; provider administrators
// still give them to staff keys.
func TestCustomerCredentialsHoldNoStaffPermissions(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	for _, perm := range []string{"billing:admin", "support:admin"} {
		e := h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "staff?", "permissions": []string{"services:read", perm}}).
			wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "permissions[1]") {
			t.Fatalf("%s on a customer's key: %+v", perm, e.Error)
		}
		scope := models.PermissionToScope(perm)
		e = h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "staff?", "grant_types": []string{"client_credentials"}, "scopes": []string{scope}}).
			wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(fmt.Sprint(e.Error.Details["fields"]), "scopes[0]") {
			t.Fatalf("%s on a customer's client: %+v", scope, e.Error)
		}
	}
	var c clientAnswer
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "ok", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"}}).
		decode(http.StatusCreated, &c)
	h.do("PATCH", "/v1/auth/clients/"+c.Client.ClientID, a.liveKey, map[string]any{"scopes": []string{"services.read", "billing.admin"}}).
		wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	// Nor does a provider administrator give them to a customer's client.
	h.do("PATCH", "/v1/auth/clients/"+c.Client.ClientID, h.adminKey, map[string]any{"scopes": []string{"services.read", "support.admin"}}).
		wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	var k keyAnswer
	h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "billing staff", "role": "agent", "permissions": []string{"billing:admin"}}).
		decode(http.StatusCreated, &k)
}
