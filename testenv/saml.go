package testenv

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/crewjam/saml/samlidp"
)

// IdP is crewjam/saml's samlidp, a real SAML identity provider, serving on loopback.
type IdP struct {
	URL string // base address; metadata at URL + "/metadata"
}

// SAMLIdP starts an identity provider for the test.
func SAMLIdP(t testing.TB) *IdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test IdP"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	u, _ := url.Parse(base)
	idp, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: idp, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &IdP{URL: base}
}

// AddServiceProvider registers a service provider by its metadata.
func (i *IdP) AddServiceProvider(t testing.TB, name string, metadata []byte) {
	t.Helper()
	i.put(t, "/services/"+name, "application/xml", metadata)
}

// IdPUser is a person the identity provider signs in.
type IdPUser struct {
	Name       string   `json:"name"`
	Email      string   `json:"email"`
	Password   string   `json:"password"`
	CommonName string   `json:"common_name,omitempty"`
	Groups     []string `json:"groups,omitempty"`
}

// AddUser registers a user at the identity provider.
func (i *IdP) AddUser(t testing.TB, u IdPUser) {
	t.Helper()
	raw, _ := json.Marshal(u)
	i.put(t, "/users/"+u.Name, "application/json", raw)
}

func (i *IdP) put(t testing.TB, path, contentType string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, i.URL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %d", path, res.StatusCode)
	}
}
