package api_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/ratelimit"
	"github.com/telcoplatform/platform/redisconn"
	"github.com/telcoplatform/platform/rowversion"
	"github.com/telcoplatform/platform/testenv"
)

// versionedInstances returns two API servers on h's store that serve rows
// by their versions: each rate-limits through its own client of one real
// redis-server, and every commit on the store is told to that server, as
// `platform serve` and `platform worker` do with a REDIS_URL.
func versionedInstances(t *testing.T, h *harness) []*api.Server {
	t.Helper()
	url := testenv.RedisURL(t)
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	open := func() redis.UniversalClient {
		rdb, _, closeFn, err := redisconn.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = closeFn() })
		return rdb
	}
	if err := rowversion.Watch(h.store, open(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = models.OnWrites(h.store.DB, nil, nil) })
	var out []*api.Server
	for range 2 {
		rdb := open()
		out = append(out, api.New(api.Deps{Config: cfg, Store: h.store, Blobs: h.blobs, Redis: rdb, Limiter: ratelimit.New(rdb), RowVersions: true}))
	}
	return out
}

// TestRowVersionsBoundUntoldWrites: with row versions, a GET answers an
// unchanged row without reading it; a write no process told (a statement
// on the database by hand) is in the answers within
// models.RowSnapshotMaxAge.
func TestRowVersionsBoundUntoldWrites(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	_, serviceID := provisionedFixture(t, h, a)
	h.srv = versionedInstances(t, h)[0]
	path := "/v1/services/" + serviceID
	name := func() string {
		t.Helper()
		var out struct {
			Service struct {
				Name string `json:"name"`
			} `json:"service"`
		}
		h.do("GET", path, a.liveKey, nil).decode(http.StatusOK, &out)
		return out.Service.Name
	}
	// A told write: the next answer reads the row again.
	if err := services.NewStore(h.store).SetServiceNetwork(ctx, scope, serviceID, services.NetworkAssignment{CircuitID: "CKT-TOLD"}); err != nil {
		t.Fatal(err)
	}
	read := time.Now()
	old := name()
	// A write nobody tells.
	if err := models.OnWrites(h.store.DB, nil, nil); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	if err := h.store.DB.Exec("UPDATE services SET name = ? WHERE id = ?", "Renamed by hand", serviceID).Error; err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if got := name(); sent.Sub(read) < models.RowSnapshotMaxAge/2 && got != old {
		t.Fatalf("a GET within %v of the last read answered %q: the row was read again, want the kept %q", sent.Sub(read), got, old)
	}
	for {
		sent := time.Now()
		if name() == "Renamed by hand" {
			break
		}
		if sent.Sub(changed) > models.RowSnapshotMaxAge {
			t.Fatalf("a GET sent %v after an untold write does not show it (bound %v)", sent.Sub(changed), models.RowSnapshotMaxAge)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGETAnswersFollowTheRow: GET /v1/services/{id} and GET
// /v1/operations/{id} answer the same bytes and ETag as a fresh instance
// while their row is unchanged, and a change of the row made outside the
// API (the store methods the worker's activities call, a raw statement
// that leaves updated_at alone, a JSON column) is in the very next
// answer, on this instance and on another one that answered before the
// change; If-None-Match follows the ETag; tenancy, environments and the
// operation's read permission still apply to every read.
//
// Both ways of serving them are checked: reading the row on every GET
// (no shared Redis), and row versions (two instances rate-limited through
// one real redis-server, every commit told to it: an unchanged row is not
// read again).
func TestGETAnswersFollowTheRow(t *testing.T) {
	for _, versions := range []bool{false, true} {
		name := "row read on every GET"
		if versions {
			name = "row versions"
		}
		t.Run(name, func(t *testing.T) { testGETAnswersFollowTheRow(t, versions) })
	}
}

func testGETAnswersFollowTheRow(t *testing.T, versions bool) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	ctx := context.Background()
	scope := models.TenantScope(a.org.ID, models.EnvLive)
	requestID, serviceID := provisionedFixture(t, h, a) // a completed operation
	var other *api.Server
	if versions {
		servers := versionedInstances(t, h)
		h.srv, other = servers[0], servers[1]
	} else {
		other = secondInstance(t, h)
	}
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
		{"a write in a transaction (atomic batch, bulk page)", servicePath, func() error {
			return h.store.Tx(ctx, scope, func(tx *gorm.DB) error {
				return tx.Model(&services.Service{}).Where("id = ?", serviceID).Update("billing_contact", "tx@example.com").Error
			})
		}, `"tx@example.com"`},
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
