package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthEndpointsRefuseUnauthenticatedClients: the introspection,
// revocation, device authorization and token endpoints answer a missing or
// failed client authentication with 401 invalid_client and a Basic
// challenge (RFC 6749 section 5.2, RFC 7662 section 2.3); introspection
// also accepts client_secret_post.
func TestOAuthEndpointsRefuseUnauthenticatedClients(t *testing.T) {
	e := newOAuthEnv(t)
	post := func(path, user, pass string, form url.Values) (*http.Response, map[string]any) {
		req, _ := http.NewRequest("POST", e.base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res, body
	}
	forms := map[string]url.Values{
		"/oauth/introspect":  {"token": {"x.y.z"}},
		"/oauth/revoke":      {"token": {"x.y.z"}},
		"/oauth/device/code": {"scope": {"services.read"}},
		"/oauth/token":       {"grant_type": {"client_credentials"}},
	}
	for path, form := range forms {
		for _, tc := range []struct {
			name, user, pass string
		}{
			{"no client authentication", "", ""},
			{"wrong secret", e.client.ID, "cs_wrong"},
		} {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				res, body := post(path, tc.user, tc.pass, form)
				if res.StatusCode != http.StatusUnauthorized || body["error"] != "invalid_client" {
					t.Fatalf("%d %v, want 401 invalid_client", res.StatusCode, body)
				}
				if got := res.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, `Basic realm="`) {
					t.Fatalf("WWW-Authenticate %q", got)
				}
			})
		}
	}
	// client_secret_post works at the introspection endpoint.
	res, body := post("/oauth/introspect", "", "", url.Values{"token": {"x.y.z"}, "client_id": {e.client.ID}, "client_secret": {e.client.Secret}})
	if res.StatusCode != http.StatusOK || body["active"] != false {
		t.Fatalf("introspection with client_secret_post: %d %v", res.StatusCode, body)
	}
}
