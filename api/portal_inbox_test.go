package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// TestPortalInboxNeverShowsCodes sends an MFA code by e-mail for a
// challenge of a user signed in to the portal: the portal page says a code
// was sent, to a masked address, and never shows the code.
func TestPortalInboxNeverShowsCodes(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	var created struct {
		User identity.User `json:"user"`
	}
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "noor@tenant-a.example", "name": "Noor", "role": "customer",
		"organization_id": h.tenants[0].org.ID, "password": "correct horse battery"}).decode(http.StatusCreated, &created)
	u := created.User
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"auth:manage"}, AuthMethod: "password"}).Token
	var setup struct {
		Secret string `json:"secret"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).decode(http.StatusOK, &setup)
	code, err := totp.GenerateCode(setup.Secret, clock)
	if err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": code}).decode(http.StatusOK, nil)
	var ch mfaRequired
	h.do("POST", "/v1/auth/api-keys", tok, map[string]any{"name": "k", "permissions": []string{"auth:manage"}}).decode(http.StatusUnauthorized, &ch)
	h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", tok, map[string]any{"method": "email"}).decode(http.StatusAccepted, nil)
	emailCode := outboxCode(t, h, u.OrganizationID, u.Email)

	b := &browserish{t: t, h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/portal", nil)
	res, _ := b.send("POST", "/portal/login", url.Values{"csrf_token": {hiddenCSRF.FindStringSubmatch(page)[1]}, "email": {u.Email}, "password": {"correct horse battery"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	res, page = b.send("GET", "/portal", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Your verification code") || !strings.Contains(page, "A code was sent to "+eventlog.MaskRecipient(u.Email)) {
		t.Fatalf("portal inbox: %d %s", res.StatusCode, page)
	}
	if strings.Contains(page, emailCode) {
		t.Fatalf("the portal shows the e-mailed code %s: %s", emailCode, page)
	}
	// The code still works for the one who received it.
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "email", "code": emailCode}).decode(http.StatusOK, nil)
}
