// Package devidp runs crewjam/saml's samlidp, a real SAML 2.0 identity
// provider, for development (`platform dev`) and tests. Production
// deployments use their own identity provider (SAML_IDP_METADATA_URL).
package devidp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/crewjam/saml/samlidp"
)

// IdP is a running identity provider.
type IdP struct {
	URL   string // base address; metadata at URL + "/metadata"
	srv   *http.Server
	token string // of the management endpoints (users, service providers, sessions, shortcuts)
}

// guard serves the sign-in endpoints (metadata, SSO, login) to anyone and
// samlidp's management endpoints (users, service providers, sessions,
// shortcuts) only with the IdP's own token: without it anyone on the
// machine could add a user with a known password, or read the session
// cookies, and sign in as any user of the domains SAML trusts.
func guard(next http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); first {
		case "metadata", "sso", "login":
		default:
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+token)) != 1 {
				http.Error(w, "not found", http.StatusNotFound)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// User is a person the identity provider signs in (by Name and Password).
type User struct {
	Name       string   `json:"name"`
	Email      string   `json:"email"`
	Password   string   `json:"password"`
	CommonName string   `json:"common_name,omitempty"`
	Groups     []string `json:"groups,omitempty"`
}

// loginForm posts the credentials straight back to the SSO endpoint with the
// request (HTTP-POST binding), so a browser goes on to the service provider
// after signing in (samlidp's own form answers its session as JSON).
const loginForm = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body style="font-family:system-ui,sans-serif;max-width:24rem;margin:3rem auto">
<h1>Development identity provider</h1>{{if .Toast}}<p role="alert">{{.Toast}}</p>{{end}}
<form method="post" action="%s">
<p><label>User<br><input type="text" name="user" autocomplete="username" autofocus></label></p>
<p><label>Password<br><input type="password" name="password" autocomplete="current-password"></label></p>
<input type="hidden" name="SAMLRequest" value="{{.SAMLRequest}}"><input type="hidden" name="RelayState" value="{{.RelayState}}">
<p><input type="submit" value="Sign in"></p></form></body></html>`

// Start listens on addr ("127.0.0.1:0" for any port) with a new signing key.
// logger may be nil. Errors: the listener's.
func Start(addr string, logger *log.Logger) (*IdP, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "telco-platform development IdP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	u, _ := url.Parse(base)
	opts := samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{},
		LoginFormTemplate: template.Must(template.New("login").Parse(fmt.Sprintf(loginForm, base+"/sso")))}
	if logger != nil {
		opts.Logger = logger
	}
	idp, err := samlidp.New(opts)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		_ = ln.Close()
		return nil, err
	}
	token := hex.EncodeToString(raw)
	srv := &http.Server{Handler: guard(idp, token), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &IdP{URL: base, srv: srv, token: token}, nil
}

// Close stops the identity provider.
func (i *IdP) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return i.srv.Shutdown(ctx)
}

// AddServiceProvider registers a service provider by its metadata (XML).
// Errors: the IdP's refusal.
func (i *IdP) AddServiceProvider(ctx context.Context, name string, metadata []byte) error {
	return i.put(ctx, "/services/"+name, "application/xml", metadata)
}

// AddUser registers a user. Errors: the IdP's refusal.
func (i *IdP) AddUser(ctx context.Context, u User) error {
	raw, _ := json.Marshal(u)
	return i.put(ctx, "/users/"+u.Name, "application/json", raw)
}

func (i *IdP) put(ctx context.Context, path, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, i.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+i.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("identity provider: PUT %s: %d", path, res.StatusCode)
	}
	return nil
}
