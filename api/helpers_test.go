package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/config"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/testenv"
)

// harness is a server on a fresh database with an admin key and two tenants,
// each with a live and a test key holding every permission.
type harness struct {
	t        testing.TB
	srv      *api.Server
	store    *models.Store
	adminKey string
	tenants  [2]tenant
	blobs    *blob.Bucket // the attachments' blob store
}

type tenant struct {
	org     *models.Organization
	liveKey string
	testKey string
	account *models.BillingAccount
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	blobs := testenv.Blobs(t)
	h := &harness{t: t, store: store, blobs: blobs, srv: api.New(api.Deps{Config: cfg, Store: store, Blobs: blobs})}
	h.adminKey = "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(store).EnsureAPIKey(ctx, seeded.Provider.ID, h.adminKey, "admin", models.RoleAdmin, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	for i := range h.tenants {
		var org struct {
			Organization struct{ ID string } `json:"organization"`
		}
		h.do("POST", "/v1/organizations", h.adminKey, map[string]any{"name": []string{"Tenant A", "Tenant B"}[i], "plan": "business"}).decode(http.StatusCreated, &org)
		o, err := identity.NewStore(store).GetOrganization(ctx, &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}, org.Organization.ID)
		if err != nil {
			t.Fatal(err)
		}
		h.tenants[i].org = o
		for _, env := range []string{"live", "test"} {
			var key struct {
				APIKey struct{ Key string } `json:"api_key"`
			}
			h.do("POST", "/v1/auth/api-keys", h.adminKey, map[string]any{"name": "all " + env, "permissions": []string{"*"}, "organization_id": o.ID, "environment": env}).decode(http.StatusCreated, &key)
			if env == "live" {
				h.tenants[i].liveKey = key.APIKey.Key
			} else {
				h.tenants[i].testKey = key.APIKey.Key
			}
		}
		var acct struct {
			Account struct{ ID string } `json:"account"`
		}
		h.do("POST", "/v1/billing/accounts", h.tenants[i].liveKey, map[string]any{"name": "Main", "currency": "USD", "billing_email": "billing@example.com"}).decode(http.StatusCreated, &acct)
		a, err := billing.NewStore(store).GetAccount(ctx, &models.Principal{OrganizationID: o.ID, Environment: models.EnvLive, Permissions: []string{"*"}}, acct.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		h.tenants[i].account = a
	}
	return h
}

// response is a finished HTTP exchange.
type response struct {
	t      testing.TB
	status int
	header http.Header
	body   []byte
}

// do sends a JSON request (body may be nil, a string sent raw, or a value to encode).
func (h *harness) do(method, path, key string, body any, headers ...string) *response {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := h.srv.App.Test(req, -1)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return &response{t: h.t, status: res.StatusCode, header: res.Header, body: raw}
}

// decode checks the status and decodes the body into v (v may be nil).
func (r *response) decode(status int, v any) *response {
	r.t.Helper()
	if r.status != status {
		r.t.Fatalf("status %d, want %d; body: %s", r.status, status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			r.t.Fatalf("decode %s: %v", r.body, err)
		}
	}
	return r
}

// errorBody is the documented error shape.
type errorBody struct {
	Error struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		Details   map[string]any `json:"details"`
		RequestID string         `json:"request_id"`
	} `json:"error"`
	Metadata map[string]any `json:"metadata"`
}

// wantError checks the status and the error code of an error answer.
func (r *response) wantError(status int, code string) errorBody {
	r.t.Helper()
	var e errorBody
	r.decode(status, &e)
	if e.Error.Code != code {
		r.t.Fatalf("error code %q, want %q; body: %s", e.Error.Code, code, r.body)
	}
	if e.Error.Message == "" || e.Error.RequestID == "" {
		r.t.Fatalf("error without message or request_id: %s", r.body)
	}
	return e
}
