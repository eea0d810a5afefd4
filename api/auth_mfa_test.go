package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/identity"
)

// oathtool returns the TOTP code of a base32 secret at a time, computed by
// Debian's oathtool (an implementation independent of the server's).
func oathtool(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	out, err := exec.Command("oathtool", "--totp", "-b", "--now", at.UTC().Format("2006-01-02 15:04:05 UTC"), secret).Output()
	if err != nil {
		t.Fatalf("oathtool: %v", err)
	}
	return strings.TrimSpace(string(out))
}

type mfaRequired struct {
	Error       string   `json:"error"`
	ChallengeID string   `json:"challenge_id"`
	Methods     []string `json:"methods"`
	Message     string   `json:"message"`
}

func TestMFATOTPChallenge(t *testing.T) {
	if _, err := exec.LookPath("oathtool"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("oathtool is missing: .ci/run installs it")
		}
		t.Skip("oathtool is not installed (Debian package oathtool): the TOTP test needs an independent code generator")
	}
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"auth:manage", "services:read"}, AuthMethod: "password"}).Token
	newKey := map[string]any{"name": "from a user", "permissions": []string{"services:read"}}

	// Machine credentials cannot enrol; users can.
	h.do("POST", "/v1/auth/mfa/totp/setup", h.tenants[0].liveKey, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	var setup struct {
		Secret      string   `json:"secret"`
		QRCode      string   `json:"qr_code"`
		BackupCodes []string `json:"backup_codes"`
		SetupURL    string   `json:"setup_url"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).decode(http.StatusOK, &setup)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(setup.QRCode, "data:image/png;base64,"))
	if err != nil || !strings.HasPrefix(setup.QRCode, "data:image/png;base64,") {
		t.Fatalf("qr_code is not a PNG data URI: %.40s", setup.QRCode)
	}
	if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
		t.Fatalf("qr_code PNG: %v", err)
	}
	if len(setup.Secret) < 16 || len(setup.BackupCodes) != 10 || !strings.HasPrefix(setup.SetupURL, "otpauth://totp/") || !strings.Contains(setup.SetupURL, "secret="+setup.Secret) {
		t.Fatalf("setup: %+v", setup)
	}

	// Not confirmed yet: no challenge.
	h.do("POST", "/v1/auth/api-keys", tok, newKey).decode(http.StatusCreated, nil)
	// Confirm with a code from oathtool; the same code cannot be used again.
	code := oathtool(t, setup.Secret, clock)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": code}).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": code}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	// Enrolled: setting up again is a conflict.
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).wantError(http.StatusConflict, "INVALID_STATE_TRANSITION")

	challenge := func() mfaRequired {
		t.Helper()
		var ch mfaRequired
		h.do("POST", "/v1/auth/api-keys", tok, newKey).decode(http.StatusUnauthorized, &ch)
		if ch.Error != "mfa_required" || !strings.HasPrefix(ch.ChallengeID, "mfa_") || len(ch.Methods) == 0 || ch.Methods[0] != "totp" || ch.Message == "" {
			t.Fatalf("challenge body: %+v", ch)
		}
		return ch
	}
	// Challenged; satisfied by the code of the next time step; single use.
	ch := challenge()
	clock = clock.Add(30 * time.Second)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": oathtool(t, setup.Secret, clock)}).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", ch.ChallengeID).decode(http.StatusCreated, nil)
	again := mfaRequired{}
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", ch.ChallengeID).decode(http.StatusUnauthorized, &again)
	if again.Error != "mfa_required" || again.ChallengeID == ch.ChallengeID {
		t.Fatalf("a used challenge was accepted again: %+v", again)
	}
	// An unverified challenge does not pass.
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", again.ChallengeID).decode(http.StatusUnauthorized, nil)

	// The replayed code of the same step is refused for a new challenge.
	ch = challenge()
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": oathtool(t, setup.Secret, clock)}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	// A backup code works once.
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "backup_code", "code": setup.BackupCodes[0]}).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", ch.ChallengeID).decode(http.StatusCreated, nil)
	ch = challenge()
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "backup_code", "code": setup.BackupCodes[0]}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	// Unknown challenge, another user's challenge, expired challenge: 404.
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": "mfa_doesnotexist", "method": "totp", "code": "123456"}).wantError(http.StatusNotFound, "NOT_FOUND")
	other := h.tokenUser(0)
	otherTok := h.issue(h.srv.Tokens(), auth.Grant{Subject: other.ID, OrganizationID: other.OrganizationID, Permissions: []string{"auth:manage"}}).Token
	h.do("POST", "/v1/auth/mfa/verify", otherTok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": "123456"}).wantError(http.StatusNotFound, "NOT_FOUND")
	clock = clock.Add(identity.MFAChallengeTTL + time.Second)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": oathtool(t, setup.Secret, clock)}).wantError(http.StatusNotFound, "NOT_FOUND")

	// Provisioning is challenged too (before the body is looked at).
	writer := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"services:write"}}).Token
	var prov mfaRequired
	h.do("POST", "/v1/services/provision", writer, map[string]any{}).decode(http.StatusUnauthorized, &prov)
	if prov.Error != "mfa_required" {
		t.Fatalf("provisioning without a second factor: %+v", prov)
	}
	// Machine credentials are never challenged.
	h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, newKey).decode(http.StatusCreated, nil)
	// No phone number pending: nothing to confirm by SMS; an e-mail code needs its challenge.
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "sms", "code": "123456"}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "email", "code": "123456"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	// Lockout after repeated wrong codes in a row, even for a right code afterwards.
	ch = challenge()
	clock = clock.Add(30 * time.Second)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": oathtool(t, setup.Secret, clock)}).decode(http.StatusOK, nil) // resets the count
	ch = challenge()
	for i := 0; i < identity.MFAMaxFailures; i++ {
		h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": "000000"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	}
	clock = clock.Add(30 * time.Second)
	e := h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "totp", "code": oathtool(t, setup.Secret, clock)}).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	if e.Error.Details["locked_until"] == nil {
		t.Fatalf("lockout without locked_until: %+v", e.Error)
	}
}

// outboxCode returns the 6-digit code of the newest queued message to
// recipient, read as the outbox's dispatcher reads it (the portal never
// shows codes).
func outboxCode(t *testing.T, h *harness, orgID, recipient string) string {
	t.Helper()
	pending, err := eventlog.NewStore(h.store).PendingNotifications(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(pending) - 1; i >= 0; i-- { // oldest first: the newest is last
		n := &pending[i]
		if n.Recipient != recipient || n.OrganizationID != orgID {
			continue
		}
		_, body, err := eventlog.NewStore(h.store).NotificationText(n)
		m := regexp.MustCompile(`\b(\d{6})\b`).FindStringSubmatch(body)
		if err != nil || m == nil {
			t.Fatalf("message to %s without a code: %q %v", recipient, body, err)
		}
		return m[1]
	}
	t.Fatalf("no message to %s in the outbox", recipient)
	return ""
}

// TestMFACodesByEmailAndSMS answers challenges with codes sent through the
// notification outbox: by e-mail to the user's address, and by SMS once a
// phone number is confirmed.
func TestMFACodesByEmailAndSMS(t *testing.T) {
	h := newHarness(t)
	clock := time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)
	h.store.Now = func() time.Time { return clock }
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: u.OrganizationID, Permissions: []string{"auth:manage"}, AuthMethod: "saml"}).Token
	newKey := map[string]any{"name": "from a user", "permissions": []string{"auth:manage"}}

	// SMS needs TOTP first.
	h.do("POST", "/v1/auth/mfa/sms/setup", tok, map[string]any{"phone_number": "+14155550123"}).wantError(http.StatusNotFound, "NOT_FOUND")
	var setup struct {
		Secret string `json:"secret"`
	}
	h.do("POST", "/v1/auth/mfa/totp/setup", tok, nil).decode(http.StatusOK, &setup)
	code, err := totp.GenerateCode(setup.Secret, clock)
	if err != nil {
		t.Fatal(err)
	}
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "totp", "code": code}).decode(http.StatusOK, nil)

	challenge := func(wantMethods string) mfaRequired {
		t.Helper()
		var ch mfaRequired
		h.do("POST", "/v1/auth/api-keys", tok, newKey).decode(http.StatusUnauthorized, &ch)
		if strings.Join(ch.Methods, ",") != wantMethods {
			t.Fatalf("challenge methods %v, want %s", ch.Methods, wantMethods)
		}
		return ch
	}
	ch := challenge("totp,email")
	// An e-mail code: sent through the outbox to the user's address, masked in the answer.
	var sent struct {
		ChallengeID string `json:"challenge_id"`
		Method      string `json:"method"`
		Destination string `json:"destination"`
	}
	h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", tok, map[string]any{"method": "email"}).decode(http.StatusAccepted, &sent)
	if sent.ChallengeID != ch.ChallengeID || sent.Method != "email" || strings.Contains(sent.Destination, u.Email[:3]) || !strings.HasSuffix(sent.Destination, "@"+strings.SplitN(u.Email, "@", 2)[1]) {
		t.Fatalf("sent: %+v (user %s)", sent, u.Email)
	}
	// Too soon for another code; sms is not available without a phone.
	e := h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", tok, map[string]any{"method": "email"}).wantError(http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if e.Error.Details["retry_after"] == nil {
		t.Fatalf("no retry_after: %+v", e.Error)
	}
	clock = clock.Add(identity.MFACodeResendAfter)
	h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", tok, map[string]any{"method": "sms"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/mfa/challenges/mfa_unknown/send", tok, map[string]any{"method": "email"}).wantError(http.StatusNotFound, "NOT_FOUND")
	emailCode := outboxCode(t, h, u.OrganizationID, u.Email)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "sms", "code": emailCode}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "email", "code": "000000"}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "email", "code": emailCode}).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "email", "code": emailCode}).wantError(http.StatusNotFound, "NOT_FOUND")
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", ch.ChallengeID).decode(http.StatusCreated, nil)

	// A phone number: adding one is challenged with the existing factor; a
	// bad one is refused; a good one gets a confirmation code by SMS.
	phone := func(number string) *response {
		t.Helper()
		var pc mfaRequired
		h.do("POST", "/v1/auth/mfa/sms/setup", tok, map[string]any{"phone_number": number}).decode(http.StatusUnauthorized, &pc)
		clock = clock.Add(30 * time.Second) // a fresh TOTP code
		code, err := totp.GenerateCode(setup.Secret, clock)
		if err != nil {
			t.Fatal(err)
		}
		h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": pc.ChallengeID, "method": "totp", "code": code}).decode(http.StatusOK, nil)
		return h.do("POST", "/v1/auth/mfa/sms/setup", tok, map[string]any{"phone_number": number}, "X-MFA-Challenge-Id", pc.ChallengeID)
	}
	phone("0155 5555").wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	phone("+14155550123").decode(http.StatusAccepted, nil)
	challenge("totp,email") // not confirmed yet
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"method": "sms", "code": outboxCode(t, h, u.OrganizationID, "+14155550123")}).decode(http.StatusOK, nil)
	ch = challenge("totp,email,sms")
	h.do("POST", "/v1/auth/mfa/challenges/"+ch.ChallengeID+"/send", tok, map[string]any{"method": "sms"}).decode(http.StatusAccepted, &sent)
	if sent.Destination != "********0123" {
		t.Fatalf("masked number: %q", sent.Destination)
	}
	h.do("POST", "/v1/auth/mfa/verify", tok, map[string]any{"challenge_id": ch.ChallengeID, "method": "sms", "code": outboxCode(t, h, u.OrganizationID, "+14155550123")}).decode(http.StatusOK, nil)
	h.do("POST", "/v1/auth/api-keys", tok, newKey, "X-MFA-Challenge-Id", ch.ChallengeID).decode(http.StatusCreated, nil)
}

// TestMFAOperationsAreTheDocumentedOnes pins the operations that challenge
// users (DECISIONS 7): everything that starts provisioning, payments,
// payment-method changes and what arranges later charges (billing
// preferences, recurring billing), API-key create and rotate, certificate
// registration.
func TestMFAOperationsAreTheDocumentedOnes(t *testing.T) {
	h := newHarness(t)
	want := []string{
		"DELETE /v1/billing/accounts/{account_id}/payment-methods/{payment_method_id}",
		"PATCH /v1/auth/clients/{client_id}",
		"PATCH /v1/users/{user_id}",
		"POST /v1/auth/api-keys",
		"POST /v1/auth/api-keys/{key_id}/rotate",
		"POST /v1/auth/certificates",
		"POST /v1/auth/clients",
		"POST /v1/auth/clients/{client_id}/rotate-secret",
		"POST /v1/auth/mfa/sms/setup",
		"POST /v1/billing/accounts/{account_id}/payment-methods",
		"POST /v1/billing/invoices/{invoice_id}/cancel",
		"POST /v1/billing/payments",
		"POST /v1/billing/recurring",
		"POST /v1/operations/{request_id}/retry",
		"POST /v1/services",
		"POST /v1/services/ai/platforms",
		"POST /v1/services/bulk/provision",
		"POST /v1/services/cloud/infrastructure",
		"POST /v1/services/cloud/platforms",
		"POST /v1/services/connectivity/internet",
		"POST /v1/services/connectivity/networks",
		"POST /v1/services/orchestration/workflows",
		"POST /v1/services/provision",
		"POST /v1/services/security/infrastructure",
		"POST /v1/services/security/managed",
		"POST /v1/services/voice/contact-centers",
		"POST /v1/services/voice/systems",
		"POST /v1/users",
		"PUT /v1/billing/accounts/{account_id}/preferences",
	}
	got := h.srv.MFAOperations()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations with an MFA challenge:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
