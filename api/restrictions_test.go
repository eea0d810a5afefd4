package api_test

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/auth"
	"github.com/telcoplatform/platform/config"
)

// behindProxy rebuilds the harness's server with TRUSTED_PROXIES set, on the
// same database and keys. The handler tests' peer address is 0.0.0.0.
func behindProxy(t *testing.T, h *harness, proxies string) {
	t.Helper()
	cfg, err := config.Load(func(k string) string {
		if k == "TRUSTED_PROXIES" {
			return proxies
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv = api.New(api.Deps{Config: cfg, Store: h.store})
}

// setClock fixes the store's clock, which the access restrictions read.
func setClock(t *testing.T, h *harness, rfc3339 string) {
	t.Helper()
	now, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		t.Fatal(err)
	}
	h.store.Now = func() time.Time { return now }
}

// fieldsOf returns the field names of a VALIDATION_ERROR answer.
func fieldsOf(t *testing.T, e errorBody) []string {
	t.Helper()
	list, _ := e.Error.Details["fields"].([]any)
	var out []string
	for _, f := range list {
		out = append(out, f.(map[string]any)["field"].(string))
	}
	return out
}

type orgAnswer struct {
	Organization struct {
		ID           string `json:"id"`
		AccessPolicy struct {
			IPAllowList      []string `json:"ip_allowlist"`
			AllowedCountries []string `json:"allowed_countries"`
			DeniedCountries  []string `json:"denied_countries"`
			TimeRestrictions *struct {
				Timezone string   `json:"timezone"`
				Days     []string `json:"days"`
				Start    string   `json:"start"`
				End      string   `json:"end"`
			} `json:"time_restrictions"`
		} `json:"access_policy"`
	} `json:"organization"`
}

func TestOrganizationTimeRestrictions(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	orgPath := "/v1/organizations/" + a.org.ID

	// Only provider administrators set the policy; errors name the fields.
	policy := map[string]any{"time_restrictions": map[string]any{"timezone": "America/New_York", "days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "08:00", "end": "18:00"}}
	h.do("PUT", orgPath, a.liveKey, map[string]any{"access_policy": policy}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	e := h.do("PUT", orgPath, h.adminKey, map[string]any{"access_policy": map[string]any{
		"ip_allowlist": []string{"192.0.2.0/24", "192.0.2.300"}, "allowed_countries": []string{"USA"},
		"time_restrictions": map[string]any{"timezone": "Mars/Base", "days": []string{"someday"}, "start": "8am", "end": "25:00"},
	}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	want := []string{"access_policy.ip_allowlist[1]", "access_policy.allowed_countries[0]", "access_policy.time_restrictions.timezone",
		"access_policy.time_restrictions.days[0]", "access_policy.time_restrictions.start", "access_policy.time_restrictions.end"}
	if got := fieldsOf(t, e); !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	var org orgAnswer
	h.do("PUT", orgPath, h.adminKey, map[string]any{"access_policy": policy}).decode(http.StatusOK, &org)
	if tr := org.Organization.AccessPolicy.TimeRestrictions; tr == nil || tr.Timezone != "America/New_York" || tr.Start != "08:00" || len(tr.Days) != 5 ||
		org.Organization.AccessPolicy.IPAllowList == nil {
		t.Fatalf("stored policy %+v", org.Organization.AccessPolicy)
	}

	// Saturday 2026-11-28, noon in New York: every credential of A is refused.
	setClock(t, h, "2026-11-28T17:00:00Z")
	e = h.do("GET", "/v1/services/catalog", a.liveKey, nil).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	if e.Error.Details["restriction"] != "time" || e.Error.Details["next_allowed_at"] != "2026-11-30T13:00:00Z" || e.Error.Details["local_time"] != "sat 12:00" {
		t.Fatalf("details %v", e.Error.Details)
	}
	allowed, _ := e.Error.Details["allowed"].(map[string]any)
	if allowed["timezone"] != "America/New_York" || allowed["start"] != "08:00" || allowed["end"] != "18:00" {
		t.Fatalf("allowed %v", allowed)
	}
	if strings.Contains(string(e.raw(t)), b.org.ID) {
		t.Fatalf("the refusal mentions another tenant: %s", e.raw(t))
	}
	h.do("GET", "/api/v1/services/catalog", a.testKey, nil).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	u := h.tokenUser(0)
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: a.org.ID, Permissions: []string{"services:read"}, AuthMethod: "password"})
	h.do("GET", "/v1/users/me", tok.Token, nil).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	// Other tenants, provider staff acting on A, and public routes are not affected.
	h.do("GET", "/v1/services/catalog", b.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", orgPath, h.adminKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/healthz", a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/.well-known/jwks.json", a.liveKey, nil).decode(http.StatusOK, nil)
	// The refusal is audited.
	var list auditList
	h.do("GET", "/v1/auth/audit-events?event_type=credential.refused", h.adminKey, nil).decode(http.StatusOK, &list)
	if len(list.AuditEvents) == 0 || list.AuditEvents[0].Reason != "ACCESS_RESTRICTED" {
		t.Fatalf("audit %+v", list)
	}

	// Monday 08:00 in New York (13:00 UTC): allowed; 18:00 closes again.
	setClock(t, h, "2026-11-30T13:00:00Z")
	h.do("GET", "/v1/services/catalog", a.liveKey, nil).decode(http.StatusOK, nil)
	h.do("GET", "/v1/users/me", tok.Token, nil).decode(http.StatusOK, nil)
	var own struct {
		OrganizationID string `json:"organization_id"`
		AccessPolicy   struct {
			TimeRestrictions *struct{ Start string } `json:"time_restrictions"`
		} `json:"access_policy"`
	}
	h.do("GET", "/v1/auth/access-policy", a.liveKey, nil).decode(http.StatusOK, &own)
	if own.OrganizationID != a.org.ID || own.AccessPolicy.TimeRestrictions == nil || own.AccessPolicy.TimeRestrictions.Start != "08:00" {
		t.Fatalf("own policy %+v", own)
	}
	setClock(t, h, "2026-11-30T23:00:00Z")
	h.do("GET", "/v1/services/catalog", a.liveKey, nil).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")

	// An update without access_policy keeps it; {} removes it.
	h.do("PUT", orgPath, h.adminKey, map[string]any{"name": "Tenant A renamed"}).decode(http.StatusOK, nil)
	h.do("GET", "/v1/services/catalog", a.liveKey, nil).wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	h.do("PUT", orgPath, h.adminKey, map[string]any{"access_policy": map[string]any{}}).decode(http.StatusOK, &org)
	if org.Organization.AccessPolicy.TimeRestrictions != nil || len(org.Organization.AccessPolicy.IPAllowList) != 0 {
		t.Fatalf("cleared policy %+v", org.Organization.AccessPolicy)
	}
	h.do("GET", "/v1/services/catalog", a.liveKey, nil).decode(http.StatusOK, nil)
}

func TestForwardedForOnlyFromTrustedProxy(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"ip_allowlist": []string{"192.0.2.0/24"}}}).decode(http.StatusOK, nil)
	catalog := func(key string, xff ...string) *response {
		t.Helper()
		var headers []string
		if len(xff) > 0 {
			headers = []string{"X-Forwarded-For", xff[0]}
		}
		return h.do("GET", "/v1/services/catalog", key, nil, headers...)
	}

	// Without TRUSTED_PROXIES the header is ignored: the peer (0.0.0.0) is the client.
	e := catalog(a.liveKey, "192.0.2.10").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	if e.Error.Details["ip_address"] != "0.0.0.0" || e.Error.Details["scope"] != "organization" {
		t.Fatalf("details %v", e.Error.Details)
	}
	// A peer outside TRUSTED_PROXIES is not trusted either.
	behindProxy(t, h, "10.0.0.0/8")
	catalog(a.liveKey, "192.0.2.10").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")

	// From a trusted proxy, the nearest address that is not a trusted proxy is the client.
	behindProxy(t, h, "0.0.0.0/32, 10.0.0.0/8")
	catalog(a.liveKey, "192.0.2.10").decode(http.StatusOK, nil)
	catalog(a.liveKey, "192.0.2.10, 10.1.2.3").decode(http.StatusOK, nil)
	e = catalog(a.liveKey, "198.51.100.7").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	if e.Error.Details["ip_address"] != "198.51.100.7" {
		t.Fatalf("details %v", e.Error.Details)
	}
	// Entries the client wrote itself (left of the proxy's) prove nothing.
	catalog(a.liveKey, "192.0.2.10, 198.51.100.7").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	catalog(a.liveKey, "not-an-address").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	catalog(a.liveKey).wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	// Other tenants are not affected.
	catalog(h.tenants[1].liveKey, "198.51.100.7").decode(http.StatusOK, nil)

	// Countries come from the GeoIP table (built-in: 192.0.2.0/24 US,
	// 198.51.100.0/24 DE, 203.0.113.0/24 JP).
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"allowed_countries": []string{"us", "DE"}}}).decode(http.StatusOK, nil)
	catalog(a.liveKey, "192.0.2.10").decode(http.StatusOK, nil)
	catalog(a.liveKey, "198.51.100.7").decode(http.StatusOK, nil)
	e = catalog(a.liveKey, "203.0.113.9").wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	if d := e.Error.Details; d["restriction"] != "country" || d["country"] != "JP" || d["rule"] != "allowed_countries" {
		t.Fatalf("details %v", d)
	}
	e = catalog(a.liveKey, "8.8.8.8").wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	if d := e.Error.Details; d["country"] != nil {
		t.Fatalf("an address of no known country: %v", d)
	}
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"denied_countries": []string{"JP"}}}).decode(http.StatusOK, nil)
	catalog(a.liveKey, "8.8.8.8").decode(http.StatusOK, nil)
	e = catalog(a.liveKey, "203.0.113.9").wantError(http.StatusForbidden, "ACCESS_RESTRICTED")
	if d := e.Error.Details; d["rule"] != "denied_countries" || d["country"] != "JP" {
		t.Fatalf("details %v", d)
	}

	// An administrator cannot lock themselves out of the provider's organization.
	var me meBody
	h.do("GET", "/v1/users/me", h.adminKey, nil).decode(http.StatusOK, &me)
	e = h.do("PUT", "/v1/organizations/"+me.Principal.OrganizationID, h.adminKey, map[string]any{"access_policy": map[string]any{"ip_allowlist": []string{"192.0.2.0/24"}}},
		"X-Forwarded-For", "198.51.100.7").wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if got := fieldsOf(t, e); !slices.Equal(got, []string{"access_policy.ip_allowlist"}) {
		t.Fatalf("fields %v", got)
	}
	h.do("PUT", "/v1/organizations/"+me.Principal.OrganizationID, h.adminKey, map[string]any{"access_policy": map[string]any{"ip_allowlist": []string{"198.51.100.0/24"}}},
		"X-Forwarded-For", "198.51.100.7").decode(http.StatusOK, nil)
	// ... and then staff are bound by their own organization's policy.
	h.do("GET", "/v1/organizations", h.adminKey, nil, "X-Forwarded-For", "192.0.2.10").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	h.do("GET", "/v1/organizations", h.adminKey, nil, "X-Forwarded-For", "198.51.100.7").decode(http.StatusOK, nil)
}

// basicAuth returns an HTTP Basic header value of an OAuth client (RFC 6749 2.3.1).
func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func TestClientIPAllowList(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	behindProxy(t, h, "0.0.0.0/32")
	e := h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "Robot", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"},
		"ip_allowlist": []string{"192.0.2.0/24", "192.0.2.0/40"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if got := fieldsOf(t, e); !slices.Equal(got, []string{"ip_allowlist[1]"}) {
		t.Fatalf("fields %v", got)
	}
	var reg struct {
		Client struct {
			ClientID     string   `json:"client_id"`
			ClientSecret string   `json:"client_secret"`
			IPAllowList  []string `json:"ip_allowlist"`
		} `json:"client"`
	}
	h.do("POST", "/v1/auth/clients", a.liveKey, map[string]any{"name": "Robot", "grant_types": []string{"client_credentials"}, "scopes": []string{"services.read"},
		"ip_allowlist": []string{"192.0.2.0/24"}}).decode(http.StatusCreated, &reg)
	if !slices.Equal(reg.Client.IPAllowList, []string{"192.0.2.0/24"}) {
		t.Fatalf("registered %+v", reg.Client)
	}
	token := func(ip string) *response {
		t.Helper()
		return h.do("POST", "/oauth/token", "", "grant_type=client_credentials&scope=services.read",
			"Content-Type", "application/x-www-form-urlencoded", "Authorization", basicAuth(reg.Client.ClientID, reg.Client.ClientSecret), "X-Forwarded-For", ip)
	}
	// The token endpoint refuses the client from elsewhere, in the RFC 6749 shape.
	res := token("198.51.100.7")
	var refused map[string]any
	if err := json.Unmarshal(res.body, &refused); err != nil || res.status != http.StatusForbidden || refused["error"] != "access_denied" || refused["error_description"] == nil {
		t.Fatalf("token from outside: %d %s", res.status, res.body)
	}
	// The client_id of a client_secret_post request is checked too.
	res = h.do("POST", "/oauth/token", "", "grant_type=client_credentials&client_id="+reg.Client.ClientID+"&client_secret="+reg.Client.ClientSecret,
		"Content-Type", "application/x-www-form-urlencoded", "X-Forwarded-For", "198.51.100.7")
	if res.status != http.StatusForbidden {
		t.Fatalf("client_secret_post from outside: %d %s", res.status, res.body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	token("192.0.2.5").decode(http.StatusOK, &tok)

	// Every request of its tokens must come from the list.
	var me meBody
	h.do("GET", "/v1/users/me", tok.AccessToken, nil, "X-Forwarded-For", "192.0.2.5").decode(http.StatusOK, &me)
	if me.Principal.Type != "oauth_client" {
		t.Fatalf("principal %+v", me.Principal)
	}
	e = h.do("GET", "/v1/users/me", tok.AccessToken, nil, "X-Forwarded-For", "198.51.100.7").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	if e.Error.Details["scope"] != "client" || e.Error.Details["ip_address"] != "198.51.100.7" {
		t.Fatalf("details %v", e.Error.Details)
	}
	// So must those of a user who signed in through the client.
	u := h.tokenUser(0)
	userTok := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: a.org.ID, Permissions: []string{"services:read"}, ClientID: reg.Client.ClientID, AuthMethod: "password"})
	h.do("GET", "/v1/users/me", userTok.Token, nil, "X-Forwarded-For", "192.0.2.200").decode(http.StatusOK, nil)
	h.do("GET", "/v1/users/me", userTok.Token, nil, "X-Forwarded-For", "203.0.113.1").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	// The allow-list can be changed (PATCH) and removed ([]): then the token works from anywhere.
	var patched struct {
		Client struct {
			IPAllowList []string `json:"ip_allowlist"`
		} `json:"client"`
	}
	h.do("PATCH", "/v1/auth/clients/"+reg.Client.ClientID, a.liveKey, map[string]any{"ip_allowlist": []string{"203.0.113.0/24", "bad"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	h.do("PATCH", "/v1/auth/clients/"+reg.Client.ClientID, a.liveKey, map[string]any{"ip_allowlist": []string{"203.0.113.0/24"}}).decode(http.StatusOK, &patched)
	if !slices.Equal(patched.Client.IPAllowList, []string{"203.0.113.0/24"}) {
		t.Fatalf("patched %+v", patched.Client)
	}
	h.do("GET", "/v1/users/me", userTok.Token, nil, "X-Forwarded-For", "203.0.113.1").decode(http.StatusOK, nil)
	h.do("GET", "/v1/users/me", userTok.Token, nil, "X-Forwarded-For", "192.0.2.200").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	h.do("PATCH", "/v1/auth/clients/"+reg.Client.ClientID, a.liveKey, map[string]any{"ip_allowlist": []string{}}).decode(http.StatusOK, &patched)
	if len(patched.Client.IPAllowList) != 0 {
		t.Fatalf("after removing the allow-list: %+v", patched.Client)
	}
	h.do("GET", "/v1/users/me", userTok.Token, nil, "X-Forwarded-For", "198.51.100.7").decode(http.StatusOK, nil)
	// A token whose client no longer exists is refused.
	ghost := h.issue(h.srv.Tokens(), auth.Grant{Subject: u.ID, OrganizationID: a.org.ID, Permissions: []string{"services:read"}, ClientID: "cli_gone", AuthMethod: "password"})
	h.do("GET", "/v1/users/me", ghost.Token, nil, "X-Forwarded-For", "192.0.2.5").wantError(http.StatusUnauthorized, "INVALID_TOKEN")
}

func TestUserIPAllowList(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	behindProxy(t, h, "0.0.0.0/32")
	e := h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "bad@example.com", "name": "Bad", "organization_id": a.org.ID,
		"ip_allowlist": []string{"192.0.2.0/24", "nope"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if got := fieldsOf(t, e); !slices.Equal(got, []string{"ip_allowlist[1]"}) {
		t.Fatalf("fields %v", got)
	}
	var created struct {
		User struct {
			ID          string   `json:"id"`
			Name        string   `json:"name"`
			IPAllowList []string `json:"ip_allowlist"`
		} `json:"user"`
	}
	h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "ada@example.com", "name": "Ada", "organization_id": a.org.ID,
		"ip_allowlist": []string{"192.0.2.7"}}).decode(http.StatusCreated, &created)
	if !slices.Equal(created.User.IPAllowList, []string{"192.0.2.7/32"}) {
		t.Fatalf("created %+v", created.User)
	}
	userID := created.User.ID
	tok := h.issue(h.srv.Tokens(), auth.Grant{Subject: userID, OrganizationID: a.org.ID, Permissions: []string{"services:read", "auth:manage"}, AuthMethod: "saml"})
	h.do("GET", "/v1/users/me", tok.Token, nil, "X-Forwarded-For", "192.0.2.7").decode(http.StatusOK, nil)
	e = h.do("GET", "/v1/users/me", tok.Token, nil, "X-Forwarded-For", "192.0.2.8").wantError(http.StatusForbidden, "IP_NOT_ALLOWED")
	if e.Error.Details["scope"] != "user" {
		t.Fatalf("details %v", e.Error.Details)
	}
	// API keys of the organization are not bound by a user's list.
	h.do("GET", "/v1/users/me", a.liveKey, nil, "X-Forwarded-For", "192.0.2.8").decode(http.StatusOK, nil)

	// PATCH /v1/users/{user_id}: the tenant's live credential, not its sandbox, not another tenant.
	path := "/v1/users/" + userID
	e = h.do("PATCH", path, a.liveKey, map[string]any{"ip_allowlist": []string{"192.0.2.0/24", "10.0.0.0/8/8"}}).wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if got := fieldsOf(t, e); !slices.Equal(got, []string{"ip_allowlist[1]"}) {
		t.Fatalf("fields %v", got)
	}
	h.do("PATCH", path, a.testKey, map[string]any{"ip_allowlist": []string{}}).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	h.do("PATCH", path, b.liveKey, map[string]any{"ip_allowlist": []string{}}).wantError(http.StatusNotFound, "NOT_FOUND")
	// Users cannot shut themselves out.
	e = h.do("PATCH", path, tok.Token, map[string]any{"ip_allowlist": []string{"203.0.113.0/24"}}, "X-Forwarded-For", "192.0.2.7").wantError(http.StatusBadRequest, "VALIDATION_ERROR")
	if got := fieldsOf(t, e); !slices.Equal(got, []string{"ip_allowlist"}) {
		t.Fatalf("fields %v", got)
	}
	h.do("PATCH", path, tok.Token, map[string]any{"ip_allowlist": []string{"192.0.2.0/24", "203.0.113.0/24"}}, "X-Forwarded-For", "192.0.2.7").decode(http.StatusOK, &created)
	h.do("GET", "/v1/users/me", tok.Token, nil, "X-Forwarded-For", "203.0.113.50").decode(http.StatusOK, nil)
	// Name only keeps the list; [] removes it.
	h.do("PATCH", path, a.liveKey, map[string]any{"name": "Ada L."}).decode(http.StatusOK, &created)
	if created.User.Name != "Ada L." || len(created.User.IPAllowList) != 2 {
		t.Fatalf("after a name change %+v", created.User)
	}
	h.do("PATCH", path, a.liveKey, map[string]any{"ip_allowlist": []string{}}).decode(http.StatusOK, &created)
	if len(created.User.IPAllowList) != 0 {
		t.Fatalf("cleared %+v", created.User)
	}
	h.do("GET", "/v1/users/me", tok.Token, nil, "X-Forwarded-For", "198.51.100.1").decode(http.StatusOK, nil)
	var users struct {
		Users []struct {
			ID          string   `json:"id"`
			IPAllowList []string `json:"ip_allowlist"`
		} `json:"users"`
	}
	h.do("GET", "/v1/users", a.liveKey, nil).decode(http.StatusOK, &users)
	for _, u := range users.Users {
		if u.IPAllowList == nil {
			t.Fatalf("ip_allowlist missing from the list: %+v", users)
		}
	}
}

// raw returns an error answer as JSON, to search it.
func (e errorBody) raw(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCertificateRestricted checks that the organization's policy binds a
// client certificate on the mutual-TLS listener (peer 127.0.0.1, which the
// built-in GeoIP table places in XL).
func TestCertificateRestricted(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	m := newMTLS(t, h, "robot")
	h.do("POST", "/v1/auth/certificates", a.liveKey, map[string]any{"certificate": m.client.pem, "name": "robot", "permissions": []string{"services:read"}}).decode(http.StatusCreated, nil)

	pool, base := m.serve(t)
	cert := m.client.tls()
	httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }}}}
	me := func() (int, errorBody) {
		t.Helper()
		res, err := httpc.Get(base + "/v1/users/me")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body errorBody
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if status, body := me(); status != http.StatusOK {
		t.Fatalf("certificate without a policy: %d %+v", status, body)
	}
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"allowed_countries": []string{"US"}}}).decode(http.StatusOK, nil)
	status, body := me()
	if status != http.StatusForbidden || body.Error.Code != "ACCESS_RESTRICTED" || body.Error.Details["country"] != "XL" {
		t.Fatalf("certificate outside the allowed countries: %d %+v", status, body)
	}
	h.do("PUT", "/v1/organizations/"+a.org.ID, h.adminKey, map[string]any{"access_policy": map[string]any{"allowed_countries": []string{"US", "XL"}}}).decode(http.StatusOK, nil)
	if status, body := me(); status != http.StatusOK {
		t.Fatalf("certificate from an allowed country: %d %+v", status, body)
	}
}
