package api

import (
	"encoding/json"
	"testing"
)

func TestItemTargetEscapesByPart(t *testing.T) {
	answers := func(id string) (json.RawMessage, bool) {
		if id != "a" {
			return nil, false
		}
		return json.RawMessage(`{"id":"x/y","name":"a&b=c+d e"}`), true
	}
	tests := []struct{ path, want string }{
		{"/v1/services/{{a.body.id}}", "/v1/services/x%2Fy"},
		{"/v1/services?search={{a.body.name}}", "/v1/services?search=a%26b%3Dc%2Bd+e"},
		{"/v1/services/{{a.body.id}}/status?q={{a.body.name}}&limit=5", "/v1/services/x%2Fy/status?q=a%26b%3Dc%2Bd+e&limit=5"},
	}
	for _, tt := range tests {
		got, err := itemTarget(tt.path, answers)
		if err != nil || got != tt.want {
			t.Errorf("itemTarget(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
	if _, err := itemTarget("/v1/services?q={{b.body.id}}", answers); err == nil {
		t.Error("a reference to an item that is not a dependency resolved")
	}
}

func TestHasEscapedNUL(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"name":"a\u0000b"}`, true},
		{`{"name":"\u0000"}`, true},
		{`{"name":"a\\u0000b"}`, false}, // a backslash, then the text u0000
		{`{"name":"a\\\u0000b"}`, true}, // a backslash, then NUL
		{`{"name":"\u00001"}`, true},    // NUL then 1
		{`{"name":"\u0001"}`, false},    // another control character
		{`{"a":"\\u0000","b":"\u0000"}`, true},
		{`{}`, false},
	}
	for _, tt := range tests {
		if got := hasEscapedNUL([]byte(tt.body)); got != tt.want {
			t.Errorf("hasEscapedNUL(%s) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

// TestKeepsCredentials: the areas whose writes keep the key cache, by
// either prefix and in any case; everything else empties it.
func TestKeepsCredentials(t *testing.T) {
	for path, want := range map[string]bool{
		"/v1/services/provision":        true,
		"/API/V1/Support/tickets":       true,
		"/api/v1/webhooks/wh_1":         true,
		"/v1/operations/prov_1/cancel":  true,
		"/v1/graphql":                   true,
		"/v1/auth/api-keys":             false,
		"/v1/auth/api-keys/ak_1/rotate": false,
		"/v1/organizations/org_1":       false,
		"/v1/users":                     false,
		"/v1/billing/subscriptions":     false,
		"/v1/batch":                     false,
		"/v1/servicesx":                 false,
		"/v1":                           false,
		"/services/provision":           false,
		"/portal/developers/keys":       false,
		"/v1//auth/api-keys":            false,
		"/API/v1/AUTH/api-keys":         false,
		"/v1/services/":                 true,
		"/v1/services%2F..%2Fauth":      false,
	} {
		if got := keepsCredentials(path); got != want {
			t.Errorf("keepsCredentials(%q) = %v, want %v", path, got, want)
		}
	}
}
