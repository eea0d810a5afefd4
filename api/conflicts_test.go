package api_test

import (
	"encoding/json"
	"net/http"
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
