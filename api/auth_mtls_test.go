package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
)

type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func (c testCert) tls() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.cert.Raw}, PrivateKey: c.key}
}

// issueCert makes a certificate signed by parent (self-signed when parent is nil).
func issueCert(t *testing.T, parent *testCert, cn string, isCA bool, usage x509.ExtKeyUsage, notBefore, notAfter time.Time) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: isCA}
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCert{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// mtlsSetup is a client CA, a server certificate for 127.0.0.1 and a client
// certificate it issued, with the harness's server rebuilt to trust the CA.
type mtlsSetup struct {
	h                  *harness
	ca, server, client testCert
}

// newMTLS issues a client CA, a server certificate and a client certificate
// named clientCN (valid from an hour ago for a day), writes the CA file and
// rebuilds h's server with CLIENT_CA_FILE naming it.
func newMTLS(t *testing.T, h *harness, clientCN string) *mtlsSetup {
	t.Helper()
	now := time.Now()
	m := &mtlsSetup{h: h}
	m.ca = issueCert(t, nil, "Platform client CA", true, 0, now.Add(-time.Hour), now.Add(24*time.Hour))
	m.server = issueCert(t, &m.ca, "127.0.0.1", false, x509.ExtKeyUsageServerAuth, now.Add(-time.Hour), now.Add(24*time.Hour))
	m.client = issueCert(t, &m.ca, clientCN, false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(24*time.Hour))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(m.ca.pem), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string {
		if k == "CLIENT_CA_FILE" {
			return caFile
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	return m
}

// serve runs the harness's server on a mutual-TLS loopback listener (shut
// down when t finishes) and returns a pool holding the CA and the https://
// base URL of the listener.
func (m *mtlsSetup) serve(t *testing.T) (pool *x509.CertPool, base string) {
	t.Helper()
	pool = x509.NewCertPool()
	pool.AddCert(m.ca.cert)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := m.h.srv
	go func() {
		_ = srv.ServeMTLS(ln, &tls.Config{Certificates: []tls.Certificate{m.server.tls()}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool, MinVersion: tls.VersionTLS12})
	}()
	t.Cleanup(func() { _ = srv.App.Shutdown() })
	return pool, "https://" + ln.Addr().String()
}

func TestMutualTLS(t *testing.T) {
	h := newHarness(t)
	m := newMTLS(t, h, "billing-robot")
	ca, server, client := m.ca, m.server, m.client
	now := time.Now()
	unregistered := issueCert(t, &ca, "stranger", false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(24*time.Hour))
	expired := issueCert(t, &ca, "old", false, x509.ExtKeyUsageClientAuth, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	otherCA := issueCert(t, nil, "Someone else's CA", true, 0, now.Add(-time.Hour), now.Add(24*time.Hour))
	foreign := issueCert(t, &otherCA, "foreign", false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(24*time.Hour))

	key := h.tenants[0].liveKey
	var reg struct {
		Certificate struct {
			ID                string   `json:"id"`
			FingerprintSHA256 string   `json:"fingerprint_sha256"`
			Permissions       []string `json:"permissions"`
		} `json:"certificate"`
	}
	h.do("POST", "/v1/auth/certificates", key, map[string]any{"certificate": client.pem, "name": "billing robot", "permissions": []string{"services:read"}}).decode(http.StatusCreated, &reg)
	sum := sha256.Sum256(client.cert.Raw)
	if len(reg.Certificate.ID) < 6 || reg.Certificate.ID[:5] != "cert_" || reg.Certificate.FingerprintSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("registration: %+v", reg.Certificate)
	}
	for name, body := range map[string]map[string]any{
		"not PEM":     {"certificate": "hello", "name": "x", "permissions": []string{"services:read"}},
		"expired":     {"certificate": expired.pem, "name": "x", "permissions": []string{"services:read"}},
		"foreign CA":  {"certificate": foreign.pem, "name": "x", "permissions": []string{"services:read"}},
		"server cert": {"certificate": server.pem, "name": "x", "permissions": []string{"services:read"}},
		"bad perm":    {"certificate": unregistered.pem, "name": "x", "permissions": []string{"services:fly"}},
	} {
		t.Run(name, func(t *testing.T) {
			h.do("POST", "/v1/auth/certificates", key, body).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
		})
	}
	h.do("POST", "/v1/auth/certificates", key, map[string]any{"certificate": client.pem, "name": "again", "permissions": []string{"services:read"}}).wantError(http.StatusConflict, "ALREADY_EXISTS")

	// The mutual-TLS listener.
	pool, base := m.serve(t)
	get := func(cert *testCert, bearer string) (int, map[string]any, error) {
		tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if cert != nil { // always sent, even when it does not match the server's acceptable CAs
			c := cert.tls()
			tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		req, _ := http.NewRequest("GET", base+"/v1/users/me", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		res, err := c.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body, nil
	}
	status, me, err := get(&client, "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := me["principal"].(map[string]any)
	if status != 200 || p["type"] != "certificate" || p["id"] != reg.Certificate.ID || p["organization_id"] != h.tenants[0].org.ID {
		t.Fatalf("registered certificate: %d %v", status, me)
	}
	errCode := func(body map[string]any) any {
		e, _ := body["error"].(map[string]any)
		return e["code"]
	}
	if status, body, err := get(&unregistered, ""); err != nil || status != 401 || errCode(body) != "UNAUTHENTICATED" {
		t.Fatalf("unregistered certificate: %d %v %v", status, body, err)
	}
	if status, body, err := get(nil, ""); err != nil || status != 401 || errCode(body) != "UNAUTHENTICATED" {
		t.Fatalf("no certificate: %d %v %v", status, body, err)
	}
	if status, _, err := get(nil, key); err != nil || status != 200 {
		t.Fatalf("API key on the mutual-TLS listener: %d %v", status, err)
	}
	// Certificates that do not chain to the CA, or are expired, fail the handshake.
	for name, c := range map[string]*testCert{"foreign": &foreign, "expired": &expired} {
		if _, _, err := get(c, ""); err == nil {
			t.Fatalf("%s certificate was accepted by the TLS handshake", name)
		}
	}
}

// TestForwardedClientCertificate authenticates a registered certificate
// that a TLS-terminating proxy forwards in X-Client-Cert: honoured only from
// TRUSTED_PROXIES, and verified again against the client CA.
func TestForwardedClientCertificate(t *testing.T) {
	h := newHarness(t)
	m := newMTLS(t, h, "edge robot")
	h.do("POST", "/v1/auth/certificates", h.tenants[0].liveKey, map[string]any{"certificate": m.client.pem, "name": "behind the proxy", "permissions": []string{"services:read"}}).decode(http.StatusCreated, nil)
	forwarded := url.QueryEscape(m.client.pem)

	// From a peer that is not a trusted proxy the header means nothing.
	h.do("GET", "/v1/users/me", "", nil, api.ForwardedCertHeader, forwarded).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")

	// The test requests come from 0.0.0.0: make it the trusted proxy.
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(m.ca.pem), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"CLIENT_CA_FILE": caFile, "TRUSTED_PROXIES": "0.0.0.0/32"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	var me struct {
		Principal struct {
			Type           string `json:"type"`
			OrganizationID string `json:"organization_id"`
		} `json:"principal"`
	}
	h.do("GET", "/v1/users/me", "", nil, api.ForwardedCertHeader, forwarded).decode(http.StatusOK, &me)
	if me.Principal.Type != "certificate" || me.Principal.OrganizationID != h.tenants[0].org.ID {
		t.Fatalf("principal of a forwarded certificate: %+v", me.Principal)
	}
	now := time.Now()
	unregistered := issueCert(t, &m.ca, "stranger", false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(time.Hour))
	otherCA := issueCert(t, nil, "someone else's CA", true, 0, now.Add(-time.Hour), now.Add(time.Hour))
	foreign := issueCert(t, &otherCA, "edge robot", false, x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(time.Hour))
	for name, header := range map[string]string{
		"unregistered":    url.QueryEscape(unregistered.pem),
		"another CA's":    url.QueryEscape(foreign.pem),
		"not escaped PEM": "%zz",
		"not a cert":      url.QueryEscape("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
	} {
		t.Run(name, func(t *testing.T) {
			h.do("GET", "/v1/users/me", "", nil, api.ForwardedCertHeader, header).wantError(http.StatusUnauthorized, "UNAUTHENTICATED")
		})
	}
	// An API key in the same request wins; the header is not looked at.
	h.do("GET", "/v1/users/me", h.tenants[1].liveKey, nil, api.ForwardedCertHeader, forwarded).decode(http.StatusOK, &me)
	if me.Principal.Type != "api_key" || me.Principal.OrganizationID != h.tenants[1].org.ID {
		t.Fatalf("a key with a forwarded certificate: %+v", me.Principal)
	}
}
