package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/identity"
)

// rawRoutes are served by Fiber directly (documents and the explorer), not operations.
var rawRoutes = map[string]bool{
	"GET /openapi.json": true, "GET /openapi.yaml": true, "GET /openapi-3.1.json": true,
	"GET /": true, "GET /docs": true, "GET /docs/*": true,
	// OAuth 2.0 endpoints (RFC 6749/7009/7662 bodies, documented in docs/authentication.md).
	"GET /oauth/authorize": true, "POST /oauth/authorize": true, "POST /oauth/token": true,
	"POST /oauth/introspect": true, "POST /oauth/revoke": true,
	"POST /oauth/device/code": true, "GET /oauth/device": true, "POST /oauth/device": true,
	"GET /saml/metadata": true, "GET /saml/sso": true, "POST /saml/acs": true,
	// The portal's server-rendered pages (docs/portal.md).
	"GET /portal": true, "POST /portal/login": true, "POST /portal/logout": true,
}

var fiberParam = regexp.MustCompile(`:([a-zA-Z_]+)`)

type openAPIDoc struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
}

func loadOpenAPI(t *testing.T, h *harness) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	h.do("GET", "/openapi.json", "", nil).decode(200, &doc)
	return doc
}

func TestEveryRouteIsDocumentedAndViceVersa(t *testing.T) {
	h := newHarness(t)
	doc := loadOpenAPI(t, h)
	if !strings.HasPrefix(doc.OpenAPI, "3.0") {
		t.Fatalf("/openapi.json is OpenAPI %s, want 3.0.x", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	routed, apiAliases := map[string]bool{}, map[string]bool{}
	for _, r := range h.srv.App.GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == "USE" {
			continue
		}
		key := r.Method + " " + fiberParam.ReplaceAllString(r.Path, "{$1}")
		if rawRoutes[key] || strings.HasPrefix(r.Path, "/portal/") { // the portal's pages (api/portal, docs/portal.md)
			continue
		}
		routed[key] = true
	}
	var missing, phantom []string
	for k := range documented {
		if !routed[k] {
			phantom = append(phantom, k)
		}
		if strings.Contains(k, " /api/v1/") {
			t.Errorf("%s is documented: the document lists /v1 only", k)
		}
	}
	// Every /api/v1 route is the alias of a documented /v1 operation.
	for k := range routed {
		if strings.Contains(k, " /api/v1/") {
			delete(routed, k)
			apiAliases[k] = true
			if twin := strings.Replace(k, " /api/v1/", " /v1/", 1); !documented[twin] {
				missing = append(missing, k)
			}
		}
	}
	for k := range routed {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(phantom)
	if len(missing) > 0 || len(phantom) > 0 {
		t.Fatalf("routes not in the OpenAPI document: %v\ndocumented operations without a route: %v", missing, phantom)
	}
	for k := range documented {
		if strings.HasPrefix(strings.SplitN(k, " ", 2)[1], "/v1/") {
			if alias := strings.Replace(k, " /v1/", " /api/v1/", 1); !apiAliases[alias] {
				t.Errorf("%s has no /api/v1 alias", k)
			}
		}
	}
	h.do("GET", "/openapi.yaml", "", nil).decode(200, nil)
	h.do("GET", "/docs", "", nil).decode(200, nil)
}

// TestTenantsNeverSeeEachOther calls every documented operation that names a
// resource, as tenant A (who owns it), as tenant B and as tenant A's sandbox
// key: the last two must get 404 (403 on admin-only endpoints) and lists of
// B must not contain A's ids. A new path parameter without a fixture here
// fails the test, so new endpoints are covered by construction.
func TestTenantsNeverSeeEachOther(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	fixtures := routeFixtures(t, h, a)
	// The catalog and the knowledge base are the same for every tenant (a
	// published article is every tenant's; drafts are staff-only, tested
	// in TestSupportKnowledgeLifecycleAndPermissions).
	global := map[string]bool{"category": true, "article_id": true}
	// A report's download link needs no credential: its signature is the
	// authorisation (TestSupportReportDownload tampers with it).
	signed := map[string]bool{"/v1/support/reports/{report_id}/download": true, "/v1/analytics/reports/{report_id}/download": true}
	bodies := map[string]any{
		"PUT /v1/organizations/{organization_id}":          map[string]any{},
		"PATCH /v1/webhooks/{webhook_id}":                  map[string]any{},
		"PATCH /v1/users/{user_id}":                        map[string]any{},
		"PATCH /v1/auth/clients/{client_id}":               map[string]any{},
		"PATCH /v1/support/tickets/{ticket_id}":            map[string]any{},
		"PATCH /v1/support/routing-rules/{rule_id}":        map[string]any{},
		"PATCH /v1/support/categories/{category_id}":       map[string]any{},
		"POST /v1/auth/mfa/challenges/{challenge_id}/send": map[string]any{"method": "email"},
		"POST /v1/billing/invoices/{invoice_id}/disputes":  map[string]any{"reason": "other", "description": "probe"},
	}
	doc := loadOpenAPI(t, h)
	// Other bodies are the smallest their schema announces, so that the
	// answer is about the resource, not about a missing field.
	minimal := newMinimalBuilder(loadSchemaDoc(t, h), fixtures)
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") || !strings.Contains(path, "{") || signed[path] {
			continue
		}
		names := param.FindAllStringSubmatch(path, -1)
		concrete, skip := path, false
		for _, n := range names {
			if global[n[1]] {
				skip = true
				break
			}
			id, ok := fixtureFor(fixtures, path, n[1])
			if !ok {
				t.Errorf("no tenancy fixture for path parameter %q of %s: add one to this test", n[1], path)
				skip = true
				break
			}
			concrete = strings.Replace(concrete, n[0], id, 1)
		}
		if skip {
			continue
		}
		for method := range ops {
			method = strings.ToUpper(method)
			body := bodies[method+" "+path]
			if body == nil && (method == "PUT" || method == "POST" || method == "PATCH") {
				body = minimal.requestBody(t, method, path)
			}
			for _, who := range []struct{ name, key string }{{"other tenant", b.liveKey}, {"own sandbox", a.testKey}} {
				t.Run(method+" "+path+" as "+who.name, func(t *testing.T) {
					res := h.do(method, concrete, who.key, body)
					if res.status != 404 && res.status != 403 {
						t.Fatalf("status %d, want 404 (or 403): %s", res.status, res.body)
					}
					if strings.Contains(string(res.body), a.org.ID) && res.status != 403 {
						t.Fatalf("answer reveals tenant A: %s", res.body)
					}
				})
			}
			if method == "GET" {
				t.Run(method+" "+path+" as owner", func(t *testing.T) {
					res := h.do(method, concrete, a.liveKey, nil)
					if res.status == 404 {
						t.Fatalf("the owner gets 404: %s", res.body)
					}
				})
			}
		}
	}
	for _, list := range []string{"/v1/billing/accounts", "/v1/auth/api-keys", "/v1/users", "/v1/auth/clients", "/v1/auth/certificates",
		"/v1/support/tickets", "/v1/support/tickets/search?q=packet"} {
		t.Run("list "+list, func(t *testing.T) {
			for _, k := range []string{b.liveKey, a.testKey} {
				res := h.do("GET", list, k, nil).decode(200, nil)
				for name, id := range fixtures {
					if (name == "organization_id" || name == "user_id") && k == a.testKey {
						continue // A's sandbox is still organization A, whose users act in both environments
					}
					if strings.Contains(string(res.body), id) {
						t.Fatalf("%s shows %s to another tenant or environment", list, id)
					}
				}
			}
		})
	}
}

// routeFixtures creates one resource of tenant a per path parameter of the
// OpenAPI document and returns their ids by parameter name (tenant-wide
// parameters, category and article_id, are not included).
func routeFixtures(t *testing.T, h *harness, a tenant) map[string]string {
	t.Helper()
	var key keyAnswer
	h.do("POST", "/v1/auth/api-keys", a.liveKey, map[string]any{"name": "A's key", "permissions": []string{"services:read"}}).decode(201, &key)
	requestID, serviceID := provisionedFixture(t, h, a)
	webhookID, eventID := webhookFixtures(t, h, a, serviceID)
	fixtures := map[string]string{
		"account_id":      a.account.ID,
		"key_id":          key.APIKey.ID,
		"organization_id": a.org.ID,
		"request_id":      requestID,
		"service_id":      serviceID,
		"webhook_id":      webhookID,
		"event_id":        eventID,
	}
	for name, id := range billingFixtures(t, h, a, serviceID) {
		fixtures[name] = id
	}
	fixtures["quote_id"] = quoteFixture(t, h, a)
	fixtures["workflow_id"] = orchestrationFixture(t, h, a)
	var user struct {
		User struct{ ID string } `json:"user"`
	}
	h.do("POST", "/v1/users", a.liveKey, map[string]any{"email": "tenancy-" + strings.ToLower(models.RandomString(6)) + "@example.com", "name": "A's user"}).decode(201, &user)
	fixtures["user_id"] = user.User.ID
	fixtures["client_id"] = clientFixture(t, h, a)
	fixtures["certificate_id"] = certificateFixture(t, h, a)
	ch, err := identity.NewStore(h.store).CreateMFAChallenge(context.Background(), user.User.ID, "POST /auth/api-keys")
	if err != nil {
		t.Fatal(err)
	}
	fixtures["challenge_id"] = ch.ID
	fixtures["ticket_id"] = newTicket(t, h, a.liveKey, nil).Ticket.ID
	fixtures["category_id"] = "network" // the provider's: customers of every tenant get 403 on PATCH
	fixtures["attachment_id"] = attach(t, h, a.liveKey, fixtures["ticket_id"], map[string]any{"content": "probe",
		"attachments": []map[string]any{{"filename": "probe.txt", "content_type": "text/plain", "data": "cHJvYmU="}}}).ID
	_, agentID := staffKey(t, h)
	// Routing rules are the provider's: customers of every tenant get 403.
	fixtures["rule_id"] = newRule(t, h, map[string]any{"rule_name": "tenancy probe", "actions": map[string]any{"assign_to": agentID}}).RoutingRule.ID
	// SLA calendars and policies are the provider's: customers of every tenant get 403.
	fixtures["calendar_id"] = newCalendar(t, h, map[string]any{"name": "tenancy probe", "timezone": "UTC",
		"holidays": []map[string]any{{"date": "2026-12-25", "name": "Christmas Day"}}}).Calendar.ID
	fixtures["date"] = "2026-12-25"
	fixtures["policy_id"] = newPolicy(t, h, map[string]any{"name": "tenancy probe", "tier": "enterprise", "category": "voice"}).Policy.ID
	fixtures["integration_id"] = chatFixture(t, h, a)
	fixtures[trackerFixturePrefix+"integration_id"] = trackerFixture(t, h, a)
	fixtures["report_id"] = reportFixture(t, h, a)
	fixtures[analyticsFixturePrefix+"report_id"] = analyticsRunFixture(t, h, a, reports.Request{Query: buildQuery("tickets", []string{"count"}, nil)})
	var def struct {
		Definition struct{ ID string } `json:"definition"`
	}
	h.do("POST", "/v1/analytics/report-definitions", a.liveKey, map[string]any{"name": "tenancy probe", "dataset": "tickets", "metrics": []string{"count"}}).
		decode(http.StatusCreated, &def)
	fixtures["definition_id"] = def.Definition.ID
	return fixtures
}

// analyticsFixturePrefix names, in the fixtures, the path parameters of the
// analytics report routes, whose report_id is not a support report's.
const analyticsFixturePrefix = "analytics:"

// trackerFixturePrefix names, in the fixtures, the path parameters of the
// tracker integration routes, whose integration_id is not a chat one.
const trackerFixturePrefix = "tracker:"

// fixtureFor returns the fixture of path parameter name in path: the
// tracker integration's and the analytics report's under their routes,
// else the parameter's.
func fixtureFor(fixtures map[string]string, path, name string) (string, bool) {
	if strings.HasPrefix(path, "/v1/support/integrations/tracker/") {
		if id, ok := fixtures[trackerFixturePrefix+name]; ok {
			return id, true
		}
	}
	if strings.HasPrefix(path, "/v1/analytics/reports/") {
		if id, ok := fixtures[analyticsFixturePrefix+name]; ok {
			return id, true
		}
	}
	id, ok := fixtures[name]
	return id, ok
}
