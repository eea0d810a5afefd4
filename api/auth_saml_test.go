package api_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml/samlidp"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
)

var samlInput = regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)"`)
var formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)

// startIdP runs crewjam/saml's samlidp, a real SAML identity provider, on loopback.
func startIdP(t *testing.T) string {
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
	return base
}

func put(t *testing.T, u, contentType string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest("PUT", u, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("PUT %s: %d", u, res.StatusCode)
	}
}

func TestSAMLSingleSignOn(t *testing.T) {
	h := newHarness(t)
	idp := startIdP(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	org := h.tenants[1].org.ID
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"PUBLIC_BASE_URL": base, "SAML_IDP_METADATA_URL": idp + "/metadata", "SAML_DOMAINS": "sso.example.com=" + org}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
	go func() { _ = h.srv.App.Listener(ln) }()
	t.Cleanup(func() { _ = h.srv.App.Shutdown() })

	// Register the service provider and two users at the IdP.
	res, err := http.Get(base + "/saml/metadata")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(md, []byte(`Name="email"`)) || !bytes.Contains(md, []byte(base+"/saml/acs")) {
		t.Fatalf("SP metadata: %d %s", res.StatusCode, md)
	}
	put(t, idp+"/services/platform", "application/xml", md)
	for _, u := range []map[string]any{
		{"name": "ada", "email": "ada@sso.example.com", "password": "ada password", "common_name": "Ada Lovelace", "groups": []string{"ops"}},
		{"name": "eve", "email": "eve@elsewhere.example", "password": "eve password"},
	} {
		raw, _ := json.Marshal(u)
		put(t, idp+"/users/"+u["name"].(string), "application/json", raw)
	}

	// login drives the browser part: SP -> IdP login form -> auto-post form -> ACS.
	login := func(user, password string) (samlResponse url.Values, acsURL string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar}
		res, err := browser.Get(base + "/saml/sso?RelayState=portal")
		if err != nil {
			t.Fatal(err)
		}
		ssoURL := res.Request.URL.String() // the IdP's SSO address with our SAMLRequest
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		form := url.Values{"user": {user}, "password": {password}}
		for _, m := range samlInput.FindAllStringSubmatch(string(page), -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		if form.Get("SAMLRequest") == "" {
			t.Fatalf("IdP login page without SAMLRequest: %s", page)
		}
		loginAction := formAction.FindStringSubmatch(string(page))
		if loginAction == nil {
			t.Fatalf("IdP login page without a form: %s", page)
		}
		res, err = browser.PostForm(html.UnescapeString(loginAction[1]), form) // signs in: session cookie
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		res, err = browser.Get(ssoURL) // signed in: the IdP answers with the auto-post form
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(res.Body)
		res.Body.Close()
		post := url.Values{}
		for _, m := range samlInput.FindAllStringSubmatch(string(page), -1) {
			post.Set(m[1], html.UnescapeString(m[2]))
		}
		action := formAction.FindStringSubmatch(string(page))
		if post.Get("SAMLResponse") == "" || action == nil {
			t.Fatalf("IdP answer without SAMLResponse: %s", page)
		}
		return post, html.UnescapeString(action[1])
	}
	acs := func(form url.Values) (int, map[string]any) {
		t.Helper()
		res, err := http.PostForm(base+"/saml/acs", form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}

	form, action := login("ada", "ada password")
	if action != base+"/saml/acs" || form.Get("RelayState") != "portal" {
		t.Fatalf("IdP posts to %s with RelayState %q", action, form.Get("RelayState"))
	}
	status, tok := acs(form)
	if status != 200 || tok["token_type"] != "Bearer" || tok["user_created"] != true || tok["relay_state"] != "portal" {
		t.Fatalf("ACS: %d %v", status, tok)
	}
	st, me := (&oauthEnv{base: base}).api(t, tok["access_token"].(string), "/v1/users/me")
	p, _ := me["principal"].(map[string]any)
	u, _ := p["user"].(map[string]any)
	if st != 200 || p["type"] != "user" || p["organization_id"] != org || u["email"] != "ada@sso.example.com" {
		t.Fatalf("SAML user at the API: %d %v", st, me)
	}
	// A response is accepted once.
	if status, body := acs(form); status != 401 {
		t.Fatalf("replayed SAML response: %d %v", status, body)
	}
	// A tampered response fails the signature (or decryption) check.
	form, _ = login("ada", "ada password")
	raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
	tampered := bytes.Clone(raw)
	if i := bytes.Index(tampered, []byte("CipherValue>")); i >= 0 { // encrypted assertion: corrupt the ciphertext
		j := i + len("CipherValue>") + 20
		tampered[j] ^= 0x01
		if tampered[j] == '<' || tampered[j] == '=' {
			tampered[j] = 'A'
		}
	} else {
		tampered = bytes.Replace(tampered, []byte("ada@sso.example.com"), []byte("adm@sso.example.com"), -1)
	}
	if bytes.Equal(tampered, raw) {
		t.Fatal("the test did not manage to tamper with the response")
	}
	form.Set("SAMLResponse", base64.StdEncoding.EncodeToString(tampered))
	if status, body := acs(form); status != 401 {
		t.Fatalf("tampered SAML response: %d %v", status, body)
	}
	// The second login finds the user created the first time.
	form, _ = login("ada", "ada password")
	if status, body := acs(form); status != 200 || body["user_created"] != false || body["user_id"] != tok["user_id"] {
		t.Fatalf("second login: %d %v", status, body)
	}
	// A user outside the configured domains is not created.
	form, _ = login("eve", "eve password")
	if status, body := acs(form); status != 403 || fmt.Sprint(body["error"].(map[string]any)["code"]) != "ACCESS_RESTRICTED" {
		t.Fatalf("user outside the domains: %d %v", status, body)
	}
	// IdP-initiated responses (no InResponseTo) are refused.
	unsolicited := strings.Replace(string(raw), "InResponseTo=", "X-InResponseTo=", 1)
	if status, _ := acs(url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString([]byte(unsolicited))}}); status != 401 {
		t.Fatalf("unsolicited response: %d", status)
	}
}
