package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

func TestBadInputGetsDocumentedErrors(t *testing.T) {
	h := newHarness(t)
	h.srv.App.Get("/v1/test-panic", func(*fiber.Ctx) error { panic("boom: secret internals") })
	key := h.tenants[0].liveKey
	huge := `{"name":"` + strings.Repeat("x", 2<<20) + `","currency":"USD","billing_email":"a@example.com"}`
	tests := []struct {
		name    string
		method  string
		path    string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"unknown route", "GET", "/v1/nowhere", nil, nil, 404, "NOT_FOUND"},
		{"unknown route without credential", "GET", "/v1/nowhere/else", nil, []string{"Authorization", ""}, 404, "NOT_FOUND"},
		{"wrong method", "DELETE", "/v1/services/catalog", nil, nil, 405, "METHOD_NOT_ALLOWED"},
		{"malformed JSON", "POST", "/v1/billing/accounts", `{"name": "x",`, nil, 400, "INVALID_JSON"},
		{"number out of range", "POST", "/v1/billing/payments", `{"invoice_id":"inv_x","amount":1e400}`, nil, 400, "INVALID_JSON"},
		{"trailing garbage", "POST", "/v1/billing/accounts", `{"name":"x","currency":"USD","billing_email":"a@example.com"} garbage`, nil, 400, "INVALID_JSON"},
		{"wrong content type", "POST", "/v1/billing/accounts", `name=x`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"oversized body", "POST", "/v1/billing/accounts", huge, nil, 413, "PAYLOAD_TOO_LARGE"},
		{"schema validation", "POST", "/v1/billing/accounts", map[string]any{"name": 12}, nil, 400, "VALIDATION_ERROR"},
		{"domain validation", "POST", "/v1/billing/accounts", map[string]any{"name": "x", "currency": "XXX", "billing_email": "nope"}, nil, 400, "VALIDATION_ERROR"},
		{"unknown field", "POST", "/v1/billing/accounts", map[string]any{"name": "x", "currency": "USD", "billing_email": "a@example.com", "colour": "red"}, nil, 400, "VALIDATION_ERROR"},
		{"limit out of range", "GET", "/v1/auth/api-keys?limit=500", nil, nil, 400, "VALIDATION_ERROR"},
		{"limit not a number", "GET", "/v1/auth/api-keys?limit=ten", nil, nil, 400, "VALIDATION_ERROR"},
		{"unknown sort field", "GET", "/v1/auth/api-keys?sort=colour:asc", nil, nil, 400, "VALIDATION_ERROR"},
		{"bad cursor", "GET", "/v1/auth/api-keys?cursor=%21%21", nil, nil, 400, "VALIDATION_ERROR"},
		{"unsupported version", "GET", "/v1/services/catalog", nil, []string{"API-Version", "2.0.0-beta"}, 400, "UNSUPPORTED_API_VERSION"},
		{"future minor version", "GET", "/v1/services/catalog", nil, []string{"API-Version", "1.3"}, 400, "UNSUPPORTED_API_VERSION"},
		{"no credential", "GET", "/v1/services/catalog", nil, []string{"Authorization", ""}, 401, "UNAUTHENTICATED"},
		{"malformed authorization", "GET", "/v1/services/catalog", nil, []string{"Authorization", "Basic abc"}, 401, "UNAUTHENTICATED"},
		{"unknown key", "GET", "/v1/services/catalog", nil, []string{"Authorization", "Bearer sk_live_" + strings.Repeat("a", 56)}, 401, "INVALID_API_KEY"},
		{"malformed key", "GET", "/v1/services/catalog", nil, []string{"X-API-Key", "sk_live_short"}, 401, "INVALID_API_KEY"},
		{"not a key in X-API-Key", "GET", "/v1/services/catalog", nil, []string{"X-API-Key", "garbage"}, 401, "INVALID_API_KEY"},
		{"not a key nor a token", "GET", "/v1/services/catalog", nil, []string{"Authorization", "Bearer hello"}, 401, "INVALID_TOKEN"},
		{"admin endpoint for a customer", "GET", "/v1/organizations", nil, nil, 403, "INSUFFICIENT_PERMISSIONS"},
		{"unknown catalog category", "GET", "/v1/services/catalog/quantum", nil, nil, 404, "NOT_FOUND"},
		{"bad idempotency key", "POST", "/v1/billing/accounts", map[string]any{"name": "x", "currency": "USD", "billing_email": "a@example.com"}, []string{"Idempotency-Key", strings.Repeat("k", 300)}, 400, "VALIDATION_ERROR"},
		{"panic", "GET", "/v1/test-panic", nil, nil, 500, "INTERNAL_ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(tc.method, tc.path, key, tc.body, tc.headers...)
			e := res.wantError(tc.status, tc.code)
			if e.Metadata == nil || e.Metadata["request_id"] != e.Error.RequestID {
				t.Fatalf("error without matching metadata: %s", res.body)
			}
			if strings.Contains(string(res.body), "secret internals") || strings.Contains(string(res.body), "goroutine") ||
				strings.Contains(string(res.body), "Go value") || strings.Contains(string(res.body), "float64") || strings.Contains(string(res.body), "json: ") {
				t.Fatalf("internals leaked: %s", res.body)
			}
			if res.header.Get("X-Request-Id") != e.Error.RequestID {
				t.Fatalf("X-Request-Id %q does not match %q", res.header.Get("X-Request-Id"), e.Error.RequestID)
			}
		})
	}
	t.Run("405 lists allowed methods", func(t *testing.T) {
		res := h.do("DELETE", "/api/v1/services/catalog", key, nil)
		if allow := res.header.Get("Allow"); !strings.Contains(allow, "GET") {
			t.Fatalf("Allow = %q", allow)
		}
	})
	t.Run("validation details name the fields", func(t *testing.T) {
		e := h.do("POST", "/v1/billing/accounts", key, map[string]any{"name": 5, "currency": "TOOLONG", "billing_email": "nope"}).wantError(400, "VALIDATION_ERROR")
		fields, _ := e.Error.Details["fields"].([]any)
		if len(fields) < 2 {
			t.Fatalf("want field details, got %v", e.Error.Details)
		}
	})
	t.Run("an e-mail format failure is worded for people", func(t *testing.T) {
		res := h.do("POST", "/v1/users", h.adminKey, map[string]any{"email": "nope", "name": "X"})
		res.wantError(400, "VALIDATION_ERROR")
		if !strings.Contains(string(res.body), "must be an e-mail address") || strings.Contains(string(res.body), "RFC 5322") {
			t.Fatalf("answer %s", res.body)
		}
	})
	t.Run("nothing was stored by rejected requests", func(t *testing.T) {
		var list struct {
			Accounts []any `json:"accounts"`
		}
		h.do("GET", "/v1/billing/accounts", key, nil).decode(200, &list)
		if len(list.Accounts) != 1 {
			t.Fatalf("want only the harness account, got %d", len(list.Accounts))
		}
	})
}

func TestVersioningAndMetadata(t *testing.T) {
	h := newHarness(t)
	tests := []struct{ header, want string }{
		{"", "1.2.3"}, {"1.0", "1.0.0"}, {"1.2", "1.2.3"}, {"1.2.1", "1.2.1"}, {"1", "1.2.3"}, {"1.1.0", "1.1.0"},
	}
	for _, tc := range tests {
		t.Run("version "+tc.header, func(t *testing.T) {
			var body struct {
				Metadata struct {
					RequestID string `json:"request_id"`
					Timestamp string `json:"timestamp"`
					Version   string `json:"version"`
				} `json:"metadata"`
			}
			res := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil, "API-Version", tc.header, "X-Request-Id", "client-req-1").decode(200, &body)
			if res.header.Get("API-Version") != tc.want || body.Metadata.Version != tc.want {
				t.Fatalf("served %q / %q, want %q", res.header.Get("API-Version"), body.Metadata.Version, tc.want)
			}
			if body.Metadata.RequestID != "client-req-1" || res.header.Get("X-Request-Id") != "client-req-1" {
				t.Fatalf("request id not echoed: %+v", body.Metadata)
			}
			if !strings.HasSuffix(body.Metadata.Timestamp, "Z") {
				t.Fatalf("timestamp %q is not UTC Z", body.Metadata.Timestamp)
			}
		})
	}
	t.Run("unsupported version lists supported ones", func(t *testing.T) {
		e := h.do("GET", "/v1/services/catalog", h.tenants[0].liveKey, nil, "API-Version", "2.0.0-beta").wantError(400, "UNSUPPORTED_API_VERSION")
		if _, ok := e.Error.Details["supported"]; !ok {
			t.Fatalf("no details.supported: %v", e.Error.Details)
		}
	})
}

func TestCatalog(t *testing.T) {
	h := newHarness(t)
	var cat struct {
		Categories []struct {
			Name     string
			Services []struct {
				ID               string
				BandwidthOptions []string `json:"bandwidth_options"`
				SLAOptions       []string `json:"sla_options"`
				Pricing          struct {
					StartingPrice float64 `json:"starting_price"`
					Unit          string
					Currency      string
				}
			}
		}
	}
	for _, path := range []string{"/v1/services/catalog", "/api/v1/services/catalog"} {
		h.do("GET", path, h.tenants[0].liveKey, nil).decode(200, &cat)
		names := []string{}
		for _, c := range cat.Categories {
			names = append(names, c.Name)
			if len(c.Services) == 0 {
				t.Fatalf("category %s has no services", c.Name)
			}
			for _, s := range c.Services {
				if s.Pricing.StartingPrice <= 0 || s.Pricing.Currency != "USD" || s.Pricing.Unit == "" || len(s.SLAOptions) == 0 {
					t.Fatalf("incomplete service %+v", s)
				}
			}
		}
		if strings.Join(names, ",") != "connectivity,voice,cloud,security,ai" {
			t.Fatalf("categories %v", names)
		}
	}
	var one struct {
		Category struct {
			Name     string
			Services []struct{ ID string }
		}
	}
	h.do("GET", "/api/v1/services/catalog/voice", h.tenants[1].testKey, nil).decode(200, &one)
	if one.Category.Name != "voice" || len(one.Category.Services) != 2 {
		t.Fatalf("voice category: %+v", one)
	}
	t.Run("needs services:read", func(t *testing.T) {
		var key struct {
			APIKey struct{ Key string } `json:"api_key"`
		}
		h.do("POST", "/v1/auth/api-keys", h.tenants[0].liveKey, map[string]any{"name": "billing only", "permissions": []string{"billing:read"}}).decode(201, &key)
		h.do("GET", "/v1/services/catalog", key.APIKey.Key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	})
}

func TestETag(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	first := h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
	etag := first.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on GET")
	}
	second := h.do("GET", "/v1/services/catalog", key, nil).decode(200, nil)
	if second.header.Get("ETag") != etag {
		t.Fatal("ETag changes between identical reads (metadata must not count)")
	}
	notModified := h.do("GET", "/v1/services/catalog", key, nil, "If-None-Match", etag)
	if notModified.status != http.StatusNotModified || len(notModified.body) != 0 {
		t.Fatalf("want 304 with no body, got %d %s", notModified.status, notModified.body)
	}
	h.do("GET", "/v1/services/catalog", key, nil, "If-None-Match", `"other"`).decode(200, nil)
	t.Run("a change changes the ETag", func(t *testing.T) {
		path := "/v1/billing/accounts/" + h.tenants[0].account.ID
		before := h.do("GET", path, key, nil).decode(200, nil).header.Get("ETag")
		h.do("PUT", path+"/preferences", key, map[string]any{"invoice_delivery": "portal"}).decode(200, nil)
		after := h.do("GET", path, key, nil, "If-None-Match", before)
		if after.status != 200 || after.header.Get("ETag") == before {
			t.Fatalf("stale ETag after a change: %d", after.status)
		}
	})
}

func TestIdempotencyKeys(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	body := map[string]any{"name": "Branch", "currency": "EUR", "billing_email": "branch@example.com"}
	first := h.do("POST", "/v1/billing/accounts", key, body, "Idempotency-Key", "k-1").decode(201, nil)
	replay := h.do("POST", "/v1/billing/accounts", key, body, "Idempotency-Key", "k-1").decode(201, nil)
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
		t.Fatalf("not replayed: %s vs %s", replay.body, first.body)
	}
	h.do("POST", "/v1/billing/accounts", key, map[string]any{"name": "Other", "currency": "EUR", "billing_email": "branch@example.com"}, "Idempotency-Key", "k-1").
		wantError(422, "IDEMPOTENCY_KEY_MISMATCH")
	t.Run("scoped per tenant", func(t *testing.T) {
		res := h.do("POST", "/v1/billing/accounts", h.tenants[1].liveKey, body, "Idempotency-Key", "k-1").decode(201, nil)
		if res.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("another tenant's key replayed")
		}
	})
	t.Run("in flight", func(t *testing.T) {
		ak, err := identity.NewStore(h.store).AuthenticateAPIKey(context.Background(), key, netip.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		p := ak.Principal
		raw := []byte(`{"name":"Busy","currency":"USD","billing_email":"busy@example.com"}`)
		sc := models.IdempotencyScope{PrincipalKind: p.Kind, PrincipalID: p.ID, OrganizationID: p.OrganizationID, Environment: p.Environment,
			Method: "POST", Path: "/v1/billing/accounts", Key: "k-busy"}
		if _, err := h.store.BeginIdempotent(context.Background(), sc, models.BodyHash(raw)); err != nil {
			t.Fatal(err)
		}
		h.do("POST", "/v1/billing/accounts", key, raw, "Idempotency-Key", "k-busy").wantError(409, "IDEMPOTENCY_KEY_IN_USE")
	})
	t.Run("errors that may succeed later are not stored", func(t *testing.T) {
		var k struct {
			APIKey struct{ Key string } `json:"api_key"`
		}
		h.do("POST", "/v1/auth/api-keys", key, map[string]any{"name": "read only", "permissions": []string{"billing:read"}}).decode(201, &k)
		h.do("POST", "/v1/billing/accounts", k.APIKey.Key, body, "Idempotency-Key", "k-403").wantError(403, "INSUFFICIENT_PERMISSIONS")
		res := h.do("POST", "/v1/billing/accounts", k.APIKey.Key, body, "Idempotency-Key", "k-403")
		if res.header.Get("Idempotent-Replayed") != "" {
			t.Fatal("a 403 was stored")
		}
	})
}

func TestIdempotencyAcrossMountsAndHead(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	body := map[string]any{"name": "Mounts", "currency": "USD", "billing_email": "m@example.com"}
	first := h.do("POST", "/v1/billing/accounts", key, body, "Idempotency-Key", "mount-1").decode(201, nil)
	again := h.do("POST", "/api/v1/billing/accounts", key, body, "Idempotency-Key", "mount-1").decode(201, nil)
	if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
		t.Fatal("a retry on the other mount created a second account")
	}
	head := h.do("HEAD", "/v1/services/catalog", key, nil)
	if head.status != 200 || len(head.body) != 0 || head.header.Get("ETag") == "" {
		t.Fatalf("HEAD: %d %q", head.status, head.body)
	}
	for _, q := range []string{"limit=0", "page=0", "per_page=0"} {
		h.do("GET", "/v1/auth/api-keys?"+q, key, nil).wantError(400, "VALIDATION_ERROR")
	}
}

func TestMissingRequiredFieldsAreNamed(t *testing.T) {
	h := newHarness(t)
	e := h.do("POST", "/v1/billing/accounts", h.tenants[0].liveKey, map[string]any{"currency": "USD"}).wantError(400, "VALIDATION_ERROR")
	fields, _ := e.Error.Details["fields"].([]any)
	names := map[string]string{}
	for _, f := range fields {
		m := f.(map[string]any)
		names[m["field"].(string)] = m["issue"].(string)
	}
	if names["name"] != "is required" || names["billing_email"] != "is required" {
		t.Fatalf("missing fields not named: %v", fields)
	}
}

// TestGETAnswerEncodedOnce checks the shape of a GET answer encoded once
// for its ETag and its bytes: the metadata is the first member, followed by
// exactly the bytes the ETag was computed over.
func TestGETAnswerEncodedOnce(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	for _, path := range []string{"/v1/services/catalog", "/v1/billing/accounts/" + h.tenants[0].account.ID, "/api/v1/auth/api-keys"} {
		res := h.do("GET", path, key, nil).decode(200, nil)
		prefix := []byte(`{"metadata":`)
		if !bytes.HasPrefix(res.body, prefix) {
			t.Fatalf("%s: body does not start with its metadata: %.80s", path, res.body)
		}
		dec := json.NewDecoder(bytes.NewReader(res.body[len(prefix):]))
		var meta struct {
			RequestID string `json:"request_id"`
			Timestamp string `json:"timestamp"`
		}
		if err := dec.Decode(&meta); err != nil || meta.RequestID == "" || meta.Timestamp == "" {
			t.Fatalf("%s: metadata %+v: %v", path, meta, err)
		}
		rest := bytes.TrimSpace(res.body[len(prefix)+int(dec.InputOffset()):])
		rest = bytes.TrimPrefix(rest, []byte(","))
		raw := append([]byte("{"), rest...)
		if !json.Valid(raw) {
			t.Fatalf("%s: the body without its metadata is not JSON: %.80s", path, raw)
		}
		if got, want := res.header.Get("ETag"), etagOf(raw); got != want {
			t.Fatalf("%s: ETag %s, want %s (the body without metadata)", path, got, want)
		}
	}
}

func etagOf(raw []byte) string {
	sum := sha256.Sum256(raw)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
