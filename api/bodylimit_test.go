package api_test

import (
	"strings"
	"testing"
)

// TestBodyLimitPerRoute: an ordinary JSON route refuses a body above 1 MiB
// with 413 PAYLOAD_TOO_LARGE in the error envelope, before authentication
// (the server-wide ceiling is the attachments' 16 MiB).
func TestBodyLimitPerRoute(t *testing.T) {
	h := newHarness(t)
	twoMiB := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, key := range []string{h.tenants[0].liveKey, ""} {
		e := h.do("POST", "/v1/billing/accounts", key, twoMiB).wantError(413, "PAYLOAD_TOO_LARGE")
		if e.Metadata["request_id"] == nil || e.Error.Details["max_bytes"] != float64(1<<20) {
			t.Fatalf("413 without metadata or max_bytes: %+v", e)
		}
	}
	// A webhook route (a small JSON body) is limited the same way.
	h.do("POST", "/v1/webhooks", h.tenants[0].liveKey, twoMiB).wantError(413, "PAYLOAD_TOO_LARGE")
	// Just under the limit the body is parsed (and refused for its content, not its size).
	under := `{"name":"` + strings.Repeat("x", 1<<20-64) + `"}`
	h.do("POST", "/v1/billing/accounts", h.tenants[0].liveKey, under).wantError(400, "VALIDATION_ERROR")
}
