package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
)

// TestPasswordSignInLockout signs in to the portal with wrong passwords
// until the account locks: the right password is then refused with the
// same message plus a retry hint, audited as login.failed, until the
// lockout passes.
func TestPasswordSignInLockout(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC()
	h.store.Now = func() time.Time { return clock }
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "kim@tenant-a.example", "name": "Kim", "role": "customer",
		"organization_id": h.tenants[0].org.ID, "password": "correct horse battery"}).decode(http.StatusCreated, nil)
	b := &browserish{t: t, h: h, cookies: map[string]string{}}
	_, page := b.send("GET", "/portal", nil)
	csrf := hiddenCSRF.FindStringSubmatch(page)[1]
	login := func(password string) (int, string) {
		res, page := b.send("POST", "/portal/login", url.Values{"csrf_token": {csrf}, "email": {"kim@tenant-a.example"}, "password": {password}})
		return res.StatusCode, page
	}
	for range identity.PasswordMaxFailures {
		if status, page := login("wrong horse battery"); status != http.StatusUnauthorized || !strings.Contains(page, "E-mail or password is wrong.") {
			t.Fatalf("wrong password: %d", status)
		}
	}
	status, page := login("correct horse battery")
	if status != http.StatusUnauthorized || !strings.Contains(page, "E-mail or password is wrong.") || !strings.Contains(page, "try again in 1 minute") || b.cookies["platform_session"] != "" {
		t.Fatalf("the right password on a locked account: %d %s", status, page)
	}
	var list auditList
	h.do("GET", "/v1/auth/audit-events?event_type=login.failed", h.adminKey, nil).decode(http.StatusOK, &list)
	locked := 0
	for _, ev := range list.AuditEvents {
		if strings.Contains(ev.Reason, "locked") {
			locked++
		}
	}
	if locked != 2 { // the failure that locked the account, and the refused right password
		t.Fatalf("login.failed events of the locked account: %d, want 2: %+v", locked, list)
	}
	clock = clock.Add(identity.PasswordLockoutBase + time.Second)
	if status, _ := login("correct horse battery"); status != http.StatusSeeOther || b.cookies["platform_session"] == "" {
		t.Fatalf("the right password after the lockout: %d", status)
	}
}
