package identity

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
)

// FuzzVerifySignature: the X-Timestamp, X-Signature and X-Nonce headers of
// a signing key's request never make VerifySignature panic; any headers
// of the fuzzer's own are refused with INVALID_SIGNATURE, a v1 and a v2
// signature computed as documented are accepted, and the v2 one is
// refused once the body, the path, the method or the nonce changes.
func FuzzVerifySignature(f *testing.F) {
	f.Add("1767225600", "v2,AAAA", "n-1", "POST", "/v1/services?x=1", []byte(`{"a":1}`))
	f.Add("", "", "", "GET", "/", []byte(nil))
	f.Add("-9223372036854775808", "v3,AAAA", strings.Repeat("n", 129), "get", "/v1/x", []byte("b"))
	f.Add("1767225600", "v1,", "nonce with space", "DELETE", "", []byte{})
	f.Add("01767225600", ",,,", "\x7f", "PATCH", "/%zz", []byte("\xff"))
	sealer, err := models.NewSealer(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1767225600, 0).UTC()
	s := NewStore(models.NewStore(nil, sealer))
	s.Now = func() time.Time { return now }
	const secret = "sig_secret_for_fuzzing"
	key := &APIKey{ID: "key_fuzz", SigningSecret: sealer.Seal(models.BindAPIKey("key_fuzz"), secret)}
	stamp := strconv.FormatInt(now.Unix(), 10)
	f.Fuzz(func(t *testing.T, timestamp, signature, nonce, method, path string, body []byte) {
		r := SignedRequest{Timestamp: timestamp, Signature: signature, Nonce: nonce, Method: method, RawPath: path, Body: body}
		if _, err := s.VerifySignature(key, r); err == nil {
			t.Fatalf("headers of the fuzzer's own are accepted: %+v", r)
		} else if models.ErrorCode(err) != models.CodeInvalidSignature {
			t.Fatalf("%+v: error %v is not INVALID_SIGNATURE", r, err)
		}
		v1 := SignedRequest{Timestamp: stamp, Signature: base64.StdEncoding.EncodeToString(SignRequest(secret, stamp, method, path)), Method: method, RawPath: path}
		if got, err := s.VerifySignature(key, v1); err != nil || got.Scheme != SignatureV1 {
			t.Fatalf("a v1 signature is refused: %v", err)
		}
		okNonce := nonce != "" && len(nonce) <= MaxNonceLength && !strings.ContainsFunc(nonce, func(c rune) bool { return c < 0x21 || c > 0x7e })
		v2 := SignedRequest{Timestamp: stamp, Nonce: nonce, Method: method, RawPath: path, Body: body,
			Signature: "v2," + base64.StdEncoding.EncodeToString(SignRequestV2(secret, stamp, nonce, method, path, body))}
		got, err := s.VerifySignature(key, v2)
		if okNonce != (err == nil) {
			t.Fatalf("nonce %q (valid: %v): v2 answer %v", nonce, okNonce, err)
		}
		if err != nil {
			if models.ErrorCode(err) != models.CodeInvalidSignature {
				t.Fatalf("error %v is not INVALID_SIGNATURE", err)
			}
			return
		}
		if got.Scheme != SignatureV2 || got.Timestamp != stamp {
			t.Fatalf("verified %+v", got)
		}
		for name, change := range map[string]func(*SignedRequest){
			"body":   func(r *SignedRequest) { r.Body = append(bytes.Clone(r.Body), '!') },
			"path":   func(r *SignedRequest) { r.RawPath += "x" },
			"method": func(r *SignedRequest) { r.Method += "X" },
			"nonce":  func(r *SignedRequest) { r.Nonce = strings.Repeat("z", len(r.Nonce)%MaxNonceLength+1) + "!" },
		} {
			changed := v2
			change(&changed)
			if changed.Nonce == v2.Nonce && name == "nonce" {
				continue
			}
			if _, err := s.VerifySignature(key, changed); err == nil {
				t.Fatalf("a v2 signature still matches after the %s changed", name)
			}
		}
	})
}

// FuzzSafeRedirectTarget: the SAML RelayState (and a sign-in's return
// path) never leads off the site: SafeRedirectTarget answers the fallback
// or a same-site relative path that a browser resolves on this host.
func FuzzSafeRedirectTarget(f *testing.F) {
	for _, s := range []string{"/portal", "/oauth/authorize?client_id=a&state=b", "//evil.example", "/\\evil.example", "https://evil.example/",
		"/%2F%2Fevil.example", "/\t/evil.example", "javascript:alert(1)", "", "/" + strings.Repeat("a", 4000), "/a?next=//evil", "/@evil.example", "\\\\evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://platform.example/saml/acs")
	f.Fuzz(func(t *testing.T, target string) {
		got := SafeRedirectTarget(target, "/portal")
		if got == "/portal" {
			return
		}
		if got != target {
			t.Fatalf("%q: answered %q, neither the target nor the fallback", target, got)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("%q accepted but does not parse: %v", got, err)
		}
		if r := base.ResolveReference(u); r.Host != base.Host || r.Scheme != base.Scheme || r.User != nil {
			t.Fatalf("%q leads to %s", got, r)
		}
		if strings.ContainsAny(got, "\\\r\n\t") || strings.HasPrefix(got, "//") {
			t.Fatalf("%q accepted", got)
		}
	})
}

// FuzzOAuthParameters: the OAuth parameters the platform reads itself
// (registered redirect URIs, scopes, device user codes) never panic the
// parsers; an accepted redirect URI is absolute https (or http on
// loopback) without fragment; an accepted scope maps to a known
// permission and back; a normalised user code is only A-Z and its
// display form normalises back to it.
func FuzzOAuthParameters(f *testing.F) {
	for _, s := range []string{"https://app.example/cb", "http://localhost:8080/cb", "http://127.0.0.1/cb", "http://[::1]:9/cb", "http://evil.example/cb",
		"https://app.example/cb#frag", "https:///nohost", "services.read", "services:read", "*", "bcdf-ghjk", "BCDFGHJK", " b c d f ", "ÄÖÜ", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validRedirectURI(s) {
			u, err := url.Parse(s)
			if err != nil || u.Host == "" || u.Fragment != "" || len(s) > 2000 {
				t.Fatalf("redirect URI %q accepted", s)
			}
			host := u.Hostname()
			if u.Scheme != "https" && !(u.Scheme == "http" && (host == "localhost" || host == "127.0.0.1" || host == "::1")) {
				t.Fatalf("redirect URI %q accepted: plain http off loopback", s)
			}
		}
		if models.ValidScope(s) {
			perm := models.ScopeToPermission(s)
			if !models.ValidPermission(perm) || ScopeForPermission(perm) != s || s == "*" {
				t.Fatalf("scope %q accepted: permission %q, back %q", s, perm, ScopeForPermission(perm))
			}
		}
		code := NormalizeUserCode(s)
		if strings.ContainsFunc(code, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			t.Fatalf("user code %q normalised to %q", s, code)
		}
		if NormalizeUserCode(FormatUserCode(code)) != code {
			t.Fatalf("user code %q: display form %q normalises to %q", code, FormatUserCode(code), NormalizeUserCode(FormatUserCode(code)))
		}
	})
}
