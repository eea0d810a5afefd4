package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/identity"
)

// certificateFixture stores a certificate registration of tn (live)
// without a client CA and returns its id.
func certificateFixture(t testing.TB, h *harness, tn tenant) string {
	t.Helper()
	now := time.Now().UTC()
	c, err := identity.NewStore(h.store).RegisterCertificate(context.Background(), tenantPrincipal(tn), &identity.ClientCertificate{Name: "fixture robot",
		FingerprintSHA256: strings.Repeat("ab", 32), Subject: "CN=fixture", Issuer: "CN=Platform client CA", SerialNumber: "42",
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}, []string{"services:read"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// certificateAnswer is the answer of the certificate endpoints.
type certificateAnswer struct {
	Certificate struct {
		ID                string   `json:"id"`
		FingerprintSHA256 string   `json:"fingerprint_sha256"`
		Status            string   `json:"status"`
		RevokedAt         *string  `json:"revoked_at"`
		Permissions       []string `json:"permissions"`
		OrganizationID    string   `json:"organization_id"`
	} `json:"certificate"`
}

// mtlsClientGet calls GET /v1/users/me on a mutual-TLS listener at base
// presenting cert, and returns the status, the principal id and the error code.
func mtlsClientGet(t *testing.T, base string, pool *x509.CertPool, cert testCert) (status int, principalID, code string) {
	t.Helper()
	c := cert.tls()
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	res, err := client.Get(base + "/v1/users/me")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Principal struct {
			ID string `json:"id"`
		} `json:"principal"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.Principal.ID, body.Error.Code
}

// TestCertificateListAndRevocation lists, reads and revokes certificate
// registrations: tenancy (404) and permission (403) as everywhere, a revoked
// certificate is refused on the mutual-TLS listener from then on and kept
// (status revoked) for audit, revoking twice is harmless, and the same
// certificate can then be registered again.
func TestCertificateListAndRevocation(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	m := newMTLS(t, h, "robot")
	robot := m.client
	now := time.Now()
	other := issueCert(t, &m.ca, "other", false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(24*time.Hour))
	pool, base := m.serve(t)

	register := func(cert testCert) certificateAnswer {
		t.Helper()
		var reg certificateAnswer
		h.do("POST", "/v1/auth/certificates", a.liveKey, map[string]any{"certificate": cert.pem, "name": "robot", "permissions": []string{"services:read"}}).
			decode(http.StatusCreated, &reg)
		return reg
	}
	first := register(robot).Certificate
	second := register(other).Certificate
	if first.Status != "active" || first.RevokedAt != nil {
		t.Fatalf("registration %+v", first)
	}
	if status, id, _ := mtlsClientGet(t, base, pool, robot); status != http.StatusOK || id != first.ID {
		t.Fatalf("registered certificate on the mutual-TLS listener: %d %s", status, id)
	}

	// Reading and listing.
	var one certificateAnswer
	h.do("GET", "/v1/auth/certificates/"+first.ID, a.liveKey, nil).decode(http.StatusOK, &one)
	if one.Certificate.ID != first.ID || one.Certificate.FingerprintSHA256 != first.FingerprintSHA256 || one.Certificate.OrganizationID != a.org.ID ||
		strings.Join(one.Certificate.Permissions, ",") != "services:read" || one.Certificate.Status != "active" {
		t.Fatalf("GET %+v", one.Certificate)
	}
	type listAnswer struct {
		Certificates []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"certificates"`
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	list := func(key, query string) listAnswer {
		t.Helper()
		var out listAnswer
		h.do("GET", "/v1/auth/certificates"+query, key, nil).decode(http.StatusOK, &out)
		return out
	}
	if l := list(a.liveKey, "?sort=created_at:asc"); l.Pagination.Total != 2 || l.Certificates[0].ID != first.ID || l.Certificates[1].ID != second.ID {
		t.Fatalf("list %+v", l)
	}
	if l := list(a.liveKey, "?status=revoked"); l.Pagination.Total != 0 {
		t.Fatalf("revoked before any revocation: %+v", l)
	}
	h.do("GET", "/v1/auth/certificates?status=lost", a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("GET", "/v1/auth/certificates?sort=fingerprint:asc", a.liveKey, nil).wantError(http.StatusBadRequest, "VALIDATION_ERROR")

	// Tenancy and permission.
	for _, key := range []string{b.liveKey, a.testKey} {
		if l := list(key, ""); l.Pagination.Total != 0 {
			t.Fatalf("another tenant lists A's certificates: %+v", l)
		}
		h.do("GET", "/v1/auth/certificates/"+first.ID, key, nil).wantError(http.StatusNotFound, "NOT_FOUND")
		h.do("DELETE", "/v1/auth/certificates/"+first.ID, key, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	}
	reader := limitedKey(t, h, a, "services:read")
	h.do("GET", "/v1/auth/certificates", reader, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("GET", "/v1/auth/certificates/"+first.ID, reader, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("DELETE", "/v1/auth/certificates/"+first.ID, reader, nil).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("DELETE", "/v1/auth/certificates/cert_nonexistent", a.liveKey, nil).wantError(http.StatusNotFound, "NOT_FOUND")
	if status, _, _ := mtlsClientGet(t, base, pool, robot); status != http.StatusOK {
		t.Fatalf("the refused attempts revoked the certificate: %d", status)
	}

	// Revocation: refused on the listener from then on, kept with revoked_at.
	var revoked certificateAnswer
	h.do("DELETE", "/v1/auth/certificates/"+first.ID, a.liveKey, nil).decode(http.StatusOK, &revoked)
	if revoked.Certificate.Status != "revoked" || revoked.Certificate.RevokedAt == nil {
		t.Fatalf("revocation answer %+v", revoked.Certificate)
	}
	if status, _, code := mtlsClientGet(t, base, pool, robot); status != http.StatusUnauthorized || code != "UNAUTHENTICATED" {
		t.Fatalf("revoked certificate on the mutual-TLS listener: %d %s", status, code)
	}
	if status, id, _ := mtlsClientGet(t, base, pool, other); status != http.StatusOK || id != second.ID {
		t.Fatalf("another certificate after a revocation: %d %s", status, id)
	}
	var again certificateAnswer
	h.do("DELETE", "/v1/auth/certificates/"+first.ID, a.liveKey, nil).decode(http.StatusOK, &again)
	if again.Certificate.RevokedAt == nil || *again.Certificate.RevokedAt != *revoked.Certificate.RevokedAt {
		t.Fatalf("second revocation moved revoked_at: %+v", again.Certificate)
	}
	h.do("GET", "/v1/auth/certificates/"+first.ID, a.liveKey, nil).decode(http.StatusOK, &one)
	if one.Certificate.Status != "revoked" {
		t.Fatalf("GET after revocation %+v", one.Certificate)
	}
	if l := list(a.liveKey, "?status=revoked"); l.Pagination.Total != 1 || l.Certificates[0].ID != first.ID {
		t.Fatalf("revoked list %+v", l)
	}
	if l := list(a.liveKey, "?status=active"); l.Pagination.Total != 1 || l.Certificates[0].ID != second.ID {
		t.Fatalf("active list %+v", l)
	}

	// The same certificate can be registered again.
	third := register(robot).Certificate
	if third.ID == first.ID || third.FingerprintSHA256 != first.FingerprintSHA256 {
		t.Fatalf("re-registration %+v", third)
	}
	if status, id, _ := mtlsClientGet(t, base, pool, robot); status != http.StatusOK || id != third.ID {
		t.Fatalf("re-registered certificate on the mutual-TLS listener: %d %s", status, id)
	}

	// One audit event for the revocation, not for the repeated DELETE.
	var audit struct {
		AuditEvents []struct {
			Reason string `json:"reason"`
		} `json:"audit_events"`
	}
	h.do("GET", "/v1/auth/audit-events?event_type=certificate.revoked", h.adminKey, nil).decode(http.StatusOK, &audit)
	if len(audit.AuditEvents) != 1 || audit.AuditEvents[0].Reason != first.FingerprintSHA256 {
		t.Fatalf("audit events %+v", audit.AuditEvents)
	}
}
