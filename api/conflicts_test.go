package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestErrorDetailsAlwaysAnObject: every error answer carries error.details,
// an empty object when the error has no details.
func TestErrorDetailsAlwaysAnObject(t *testing.T) {
	h := newHarness(t)
	for _, r := range []*response{
		h.do("GET", "/v1/services/svc_doesnotexist", h.tenants[0].liveKey, nil),
		h.do("GET", "/v1/no-such-endpoint", h.tenants[0].liveKey, nil),
		h.do("GET", "/v1/services", "", nil),
	} {
		var raw struct {
			Error map[string]json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(r.body, &raw); err != nil {
			t.Fatal(err)
		}
		if d, ok := raw.Error["details"]; !ok || d[0] != '{' {
			t.Fatalf("error.details missing or not an object: %s", r.body)
		}
	}
}

// TestConflictCodes: a taken unique value is 409 ALREADY_EXISTS, not
// SERVICE_CONFLICT (which is kept for service configurations).
func TestConflictCodes(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tests := []struct {
		name string
		path string
		body map[string]any
	}{
		{"duplicate e-mail", "/v1/users", map[string]any{"email": "dup@tenant-a.example", "name": "Dup", "role": "customer", "organization_id": a.org.ID}},
		{"duplicate customer_id", "/v1/organizations", map[string]any{"name": "Cust", "plan": "business", "customer_id": "cust_dup1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.do("POST", tc.path, h.adminKey, tc.body).decode(http.StatusCreated, nil)
			h.do("POST", tc.path, h.adminKey, tc.body).wantError(http.StatusConflict, "ALREADY_EXISTS")
		})
	}
}

// TestUnauthorizedChallengesAndRootRedirect: 401 answers carry a Bearer
// challenge with the realm (error="invalid_token" for a refused token);
// GET / redirects to the explorer.
func TestUnauthorizedChallengesAndRootRedirect(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		key, want string
	}{
		{"", `Bearer realm="http://localhost:8080"`},
		{"not.a.token", `Bearer realm="http://localhost:8080", error="invalid_token"`},
		{"sk_live_" + strings.Repeat("x", 56), `Bearer realm="http://localhost:8080", error="invalid_token"`},
	}
	for _, tc := range tests {
		res := h.do("GET", "/v1/services", tc.key, nil)
		if res.status != http.StatusUnauthorized || res.header.Get("WWW-Authenticate") != tc.want {
			t.Errorf("key %q: %d, WWW-Authenticate %q, want %q", tc.key, res.status, res.header.Get("WWW-Authenticate"), tc.want)
		}
	}
	res := h.do("GET", "/", "", nil)
	if res.status != http.StatusFound || res.header.Get("Location") != "/docs" {
		t.Fatalf("GET /: %d, Location %q", res.status, res.header.Get("Location"))
	}
}
