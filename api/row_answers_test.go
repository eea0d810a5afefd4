package api_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
)

// TestGETAnswersFollowTheRow: GET /v1/services/{id} and GET
// /v1/operations/{id} answer the same bytes and ETag as a fresh instance
// while their row is unchanged, and a change of the row made outside the
// API (the store methods the worker's activities call, a raw statement
// that leaves updated_at alone, a JSON column) is in the very next
// answer, on this instance and on another one that answered before the
// change; If-None-Match follows the ETag; tenancy, environments and the
// operation's read permission still apply to every read.
func TestGETAnswersFollowTheRow(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	requestID, serviceID := provisionedFixture(t, h, a) // a completed operation
	other := secondInstance(t, h)
	metadata := regexp.MustCompile(`"metadata":\{[^}]*\},?`)
	get := func(path, key string, headers ...string) *response {
		t.Helper()
		return h.do("GET", path, key, nil, headers...)
	}
	// answer GETs path on h's server and on other, checks that both answer
	// the same body (without metadata) and ETag, and returns them.
	answer := func(path string) (string, string) {
		t.Helper()
		r := get(path, a.liveKey).decode(http.StatusOK, nil)
		var r2 *response
		on(h, other, func() { r2 = get(path, a.liveKey).decode(http.StatusOK, nil) })
		body, body2 := metadata.ReplaceAll(r.body, nil), metadata.ReplaceAll(r2.body, nil)
		if !bytes.Equal(body, body2) || r.header.Get("ETag") != r2.header.Get("ETag") || r.header.Get("ETag") == "" {
			t.Fatalf("GET %s: the two instances answer differently:\n%s %s\n%s %s", path, body, r.header.Get("ETag"), body2, r2.header.Get("ETag"))
		}
		return string(body), r.header.Get("ETag")
	}

	servicePath, operationPath := "/v1/services/"+serviceID, "/v1/operations/"+requestID
	for _, path := range []string{servicePath, operationPath} {
		body, etag := answer(path)
		for i := 0; i < 3; i++ {
			if again, tag := answer(path); again != body || tag != etag {
				t.Fatalf("GET %s of an unchanged row changed:\n%s %s\n%s %s", path, again, tag, body, etag)
			}
		}
		get(path, a.liveKey, "If-None-Match", etag).decode(http.StatusNotModified, nil)
		// Another tenant, the other environment: not found, whatever is kept.
		get(path, b.liveKey).wantError(http.StatusNotFound, "NOT_FOUND")
		get(path, a.testKey).wantError(http.StatusNotFound, "NOT_FOUND")
	}

	svcStore := services.NewStore(h.store)
	changes := []struct {
		name, path string
		change     func() error
		want       string
	}{
		{"a status transition (worker activity)", servicePath, func() error {
			_, err := svcStore.TransitionService(ctx, scope, nil, serviceID, services.ServiceMaintenance)
			return err
		}, `"status":"maintenance"`},
		{"the network assignment (worker activity)", servicePath, func() error {
			return svcStore.SetServiceNetwork(ctx, scope, serviceID, services.NetworkAssignment{CircuitID: "CKT-ROWANSWER"})
		}, `"circuit_id":"CKT-ROWANSWER"`},
		{"a raw statement leaving updated_at alone", servicePath, func() error {
			return h.store.DB.Exec("UPDATE services SET name = ? WHERE id = ?", "Renamed in place", serviceID).Error
		}, `"name":"Renamed in place"`},
		{"a JSON column", servicePath, func() error {
			return h.store.DB.Exec("UPDATE services SET configuration = ? WHERE id = ?", `{"qos_profile":"voice-priority"}`, serviceID).Error
		}, `"qos_profile":"voice-priority"`},
		{"an operation's result, in place", operationPath, func() error {
			return h.store.DB.Exec("UPDATE operations SET result = ? WHERE id = ?", `{"service_id":"`+serviceID+`","note":"rewritten"}`, requestID).Error
		}, `"note":"rewritten"`},
	}
	for _, c := range changes {
		before, etag := answer(c.path)
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after, tag := answer(c.path)
		if !strings.Contains(after, c.want) || after == before || tag == etag {
			t.Fatalf("%s: the next GET %s does not show it (%s):\n%s", c.name, c.path, c.want, after)
		}
		get(c.path, a.liveKey, "If-None-Match", etag).decode(http.StatusOK, nil)
		get(c.path, a.liveKey, "If-None-Match", tag).decode(http.StatusNotModified, nil)
	}

	// The operation's read permission is checked on every read, kept or not.
	narrow := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(ctx, a.org.ID, narrow, "billing only", models.RoleCustomer, []string{"billing:read"}); err != nil {
		t.Fatal(err)
	}
	get(operationPath, narrow).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	get(servicePath, narrow).wantError(http.StatusForbidden, "INSUFFICIENT_PERMISSIONS")
	answer(operationPath)
}
