package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The OpenAPI document must be enough to build a request the server
// accepts: every field the server requires is required in the schema, and
// every rule JSON Schema can state (enum, range, length, pattern, format) is
// in it. These tests read the server's own /openapi.json.

// schemaDoc is the part of an OpenAPI 3.0 document these tests read.
type schemaDoc struct {
	Paths      map[string]map[string]schemaOperation `json:"paths"`
	Components struct {
		Schemas map[string]*jsonSchema `json:"schemas"`
	} `json:"components"`
}

type schemaOperation struct {
	OperationID string `json:"operationId"`
	Parameters  []struct {
		Name     string      `json:"name"`
		In       string      `json:"in"`
		Required bool        `json:"required"`
		Schema   *jsonSchema `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Required bool `json:"required"`
		Content  map[string]struct {
			Schema *jsonSchema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

// jsonSchema is the subset of a schema object a minimal value is built from.
type jsonSchema struct {
	Ref              string                 `json:"$ref"`
	Type             string                 `json:"type"`
	Format           string                 `json:"format"`
	Description      string                 `json:"description"`
	Properties       map[string]*jsonSchema `json:"properties"`
	Required         []string               `json:"required"`
	Items            *jsonSchema            `json:"items"`
	Enum             []any                  `json:"enum"`
	Default          any                    `json:"default"`
	Example          any                    `json:"example"`
	Examples         []any                  `json:"examples"`
	Minimum          *float64               `json:"minimum"`
	Maximum          *float64               `json:"maximum"`
	MaxLength        *int                   `json:"maxLength"`
	MaxItems         *int                   `json:"maxItems"`
	ExclusiveMinimum any                    `json:"exclusiveMinimum"` // bool in 3.0, number in 3.1
	MinLength        *int                   `json:"minLength"`
	MinItems         *int                   `json:"minItems"`
	Pattern          string                 `json:"pattern"`
	OneOf            []*jsonSchema          `json:"oneOf"`
	AnyOf            []*jsonSchema          `json:"anyOf"`
}

func loadSchemaDoc(t *testing.T, h *harness) schemaDoc {
	t.Helper()
	var doc schemaDoc
	h.do("GET", "/openapi.json", "", nil).decode(200, &doc)
	if len(doc.Components.Schemas) == 0 {
		t.Fatal("/openapi.json has no component schemas")
	}
	return doc
}

// minimalBuilder builds the smallest value a schema announces as valid.
type minimalBuilder struct {
	doc schemaDoc
	// ids replaces the value of properties named like a fixture
	// (account_id, service_id, ...): the schema can say an identifier's
	// shape, not which identifiers exist; and url, webhook_url and tracker_url, whose host
	// must resolve to a public address (a DNS fact, not a schema one).
	ids map[string]string
}

func newMinimalBuilder(doc schemaDoc, fixtures map[string]string) minimalBuilder {
	ids := map[string]string{"url": publicHook, "webhook_url": publicHook, "tracker_url": publicHook}
	for k, v := range fixtures {
		ids[k] = v
	}
	return minimalBuilder{doc: doc, ids: ids}
}

// requestBody is the minimal JSON body of an operation: {} when it
// declares none.
func (b minimalBuilder) requestBody(t *testing.T, method, path string) any {
	t.Helper()
	op, ok := b.doc.Paths[path][strings.ToLower(method)]
	if !ok || op.RequestBody == nil {
		return map[string]any{}
	}
	media, ok := op.RequestBody.Content["application/json"]
	if !ok {
		return map[string]any{}
	}
	body, err := b.value(media.Schema, "body")
	if err != nil {
		t.Fatalf("%s %s: cannot build a body from the schema: %v", method, path, err)
	}
	return body
}

func (b minimalBuilder) resolve(s *jsonSchema) (*jsonSchema, error) {
	for depth := 0; s != nil && s.Ref != ""; depth++ {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		if !ok || depth > 20 {
			return nil, fmt.Errorf("unresolvable $ref %q", s.Ref)
		}
		s = b.doc.Components.Schemas[name]
		if s == nil {
			return nil, fmt.Errorf("$ref %q names no component schema", name)
		}
	}
	if s != nil && len(s.OneOf) > 0 {
		return b.resolve(s.OneOf[0])
	}
	if s != nil && len(s.AnyOf) > 0 {
		return b.resolve(s.AnyOf[0])
	}
	return s, nil
}

// value is the minimal value of schema s at path (for messages): its
// example, else its first enum value, else its default, else one derived
// from its type and constraints; objects carry their required properties
// only.
func (b minimalBuilder) value(s *jsonSchema, path string) (any, error) {
	s, err := b.resolve(s)
	if err != nil || s == nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if s.Type == "object" || (s.Type == "" && s.Properties != nil) {
		out := map[string]any{}
		for _, name := range s.Required {
			prop, ok := s.Properties[name]
			if !ok {
				return nil, fmt.Errorf("%s: required property %q is not described", path, name)
			}
			if id, ok := b.ids[name]; ok {
				out[name] = id
				continue
			}
			v, err := b.value(prop, path+"."+name)
			if err != nil {
				return nil, err
			}
			out[name] = v
		}
		return out, nil
	}
	if s.Example != nil {
		return s.Example, nil
	}
	if len(s.Examples) > 0 {
		return s.Examples[0], nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0], nil
	}
	if s.Default != nil {
		return s.Default, nil
	}
	switch s.Type {
	case "array":
		n := 0
		if s.MinItems != nil {
			n = *s.MinItems
		}
		items := make([]any, 0, n)
		for i := range n {
			v, err := b.value(s.Items, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return items, nil
	case "boolean":
		return false, nil
	case "integer", "number":
		n := 1.0 // a neutral count when the schema states no minimum
		if s.Minimum != nil {
			n = *s.Minimum
			if ex, ok := s.ExclusiveMinimum.(bool); ok && ex {
				n++
			}
		} else if ex, ok := s.ExclusiveMinimum.(float64); ok {
			n = ex + 1
		}
		return n, nil
	case "string":
		switch s.Format {
		case "email":
			return "schema-probe@example.com", nil
		case "date-time":
			return time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second).Format(time.RFC3339), nil
		case "date":
			return time.Now().UTC().Add(48 * time.Hour).Format(time.DateOnly), nil
		case "uri", "url":
			return "https://example.com/schema-probe", nil
		case "ipv4":
			return "192.0.2.10", nil
		case "":
		default:
			return nil, fmt.Errorf("%s: format %q without an example", path, s.Format)
		}
		if s.Pattern != "" {
			return nil, fmt.Errorf("%s: a pattern (%s) without an example", path, s.Pattern)
		}
		// docs/api.md promises an example (or an enum) for every required
		// string whose value has no format: a length alone is not enough.
		if s.MinLength == nil {
			return nil, fmt.Errorf("%s: a required string without an example, enum or format", path)
		}
		return strings.Repeat("x", max(*s.MinLength, 1)), nil
	}
	return nil, fmt.Errorf("%s: no type, example, enum or default to build a value from", path)
}

// schemaBodyExemptions are the operations whose minimal schema body the
// server refuses by a rule JSON Schema cannot state in this document: a
// cross-field rule, or one that depends on the operation sharing its body
// type. Each rule is written in the operation's field descriptions.
var schemaBodyExemptions = map[string]string{
	// Exactly one of service_template, quote_id and type (a oneOf of three
	// shapes): each is optional, the rule is in their descriptions.
	"POST /v1/services/provision": "exactly one of service_template, quote_id and type",
	"POST /v1/services":           "the same operation as POST /v1/services/provision",
	// title or its alias subject: both optional, the rule in their descriptions.
	"POST /v1/support/tickets": "title or its alias subject is required",
	// The create and update bodies are one type: these fields are required
	// on creation only (their descriptions say so).
	"POST /v1/support/knowledge":     "title, body and category are required on creation only",
	"POST /v1/support/routing-rules": "rule_name is required on creation only",
	"POST /v1/support/categories":    "id, name and default_priority are required on creation only",
	// One of two fields: payment_method or payment_method_id; location or location_id.
	"POST /v1/billing/payments":                 "payment_method or payment_method_id",
	"POST /v1/services/security/infrastructure": "location or location_id",
	// Changes to make: each item's changes or the request's common changes.
	"POST /v1/services/bulk/modify": "at least one change, per item or common",
	// The service's kind decides: new_bandwidth or new_quantity; the
	// configuration settings (at least one).
	"PUT /v1/services/{service_id}/scaling":       "new_bandwidth or new_quantity, by the service's kind",
	"PUT /v1/services/{service_id}/configuration": "at least one of the kind's settings",
	// redirect_uris is required when grant_types has authorization_code, the default.
	"POST /v1/auth/clients": "redirect_uris with the authorization_code grant (the default)",
	// A PEM certificate issued by the platform's client CA: data, not shape.
	"POST /v1/auth/certificates": "a certificate issued by the client CA",
	// One body type for every subscription endpoint: the events must belong
	// to the path's area (services, billing, support), which the descriptions say.
	"POST /v1/services/webhooks": "events of the services area",
	"POST /v1/billing/webhooks":  "events of the billing area",
	"POST /v1/support/webhooks":  "events of the support area",
	// Exactly one of ticket_id and filter, and exactly one kind of change
	// (priority, policy_id, or calendar_id with its edits).
	"POST /v1/support/sla/simulate": "exactly one of ticket_id and filter; exactly one kind of change",
}

// TestEveryOperationAcceptsItsSchemaMinimalBody builds, for every operation
// with a request body, the smallest body its schema announces (required
// properties only) and sends it as an authorised caller: the server must not
// refuse it as malformed (400, or 422 VALIDATION_ERROR). Answers about the
// data (404, 409, 402, 403, a location not serviceable) are fine: the point
// is that the schema alone is enough to build an acceptable body.
func TestEveryOperationAcceptsItsSchemaMinimalBody(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	doc := loadSchemaDoc(t, h)
	fixtures := routeFixtures(t, h, a)
	fixtures["category"] = "internet"
	fixtures["article_id"] = newArticle(t, h, nil).Article.ID
	b := newMinimalBuilder(doc, fixtures)
	param := regexp.MustCompile(`\{([a-z_]+)\}`)

	var keys []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody != nil && strings.HasPrefix(path, "/v1/") {
				keys = append(keys, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(keys)
	if len(keys) < 50 {
		t.Fatalf("only %d operations with a body in /openapi.json", len(keys))
	}
	used := map[string]bool{}
	for _, key := range keys {
		method, path, _ := strings.Cut(key, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		t.Run(key, func(t *testing.T) {
			if _, ok := op.RequestBody.Content["application/json"]; !ok {
				t.Skipf("not a JSON body")
			}
			body := b.requestBody(t, method, path)
			concrete := path
			for _, n := range param.FindAllStringSubmatch(path, -1) {
				id, ok := fixtureFor(fixtures, path, n[1])
				if !ok {
					t.Fatalf("no fixture for path parameter %q: add one to routeFixtures", n[1])
				}
				concrete = strings.Replace(concrete, n[0], url.PathEscape(id), 1)
			}
			var headers []string
			query := url.Values{}
			for _, p := range op.Parameters {
				if !p.Required || p.In == "path" {
					continue
				}
				v, err := b.value(p.Schema, p.In+"."+p.Name)
				if err != nil {
					t.Fatalf("cannot build a required parameter: %v", err)
				}
				switch p.In {
				case "header":
					headers = append(headers, p.Name, fmt.Sprint(v))
				case "query":
					query.Set(p.Name, fmt.Sprint(v))
				}
			}
			if len(query) > 0 {
				concrete += "?" + query.Encode()
			}
			res := h.do(method, concrete, a.liveKey, body, headers...)
			if res.status == 403 { // provider-only operations: call them as the provider's administrator
				res = h.do(method, concrete, h.adminKey, body, headers...)
			}
			refused := refusesBody(res, path)
			if reason, exempt := schemaBodyExemptions[key]; exempt {
				used[key] = true
				if !refused {
					t.Errorf("exempt (%s) but the minimal body is accepted (%d): drop the exemption", reason, res.status)
				}
				return
			}
			if refused {
				raw, _ := json.Marshal(body)
				t.Errorf("minimal schema body %s refused: %d %s", raw, res.status, res.body)
			}
		})
	}
	for key := range schemaBodyExemptions {
		if !used[key] {
			t.Errorf("exemption for %s names no operation with a body", key)
		}
	}
}

// refusesBody tells whether the answer refuses the body as malformed: a
// 400 (or a 422 VALIDATION_ERROR), or a 500. Not counted: issues about the
// path's identifiers only (e.g. retrying an operation that is not a bulk
// one) and an update that changes nothing (the body is well-formed, the
// resource already has its values); 503 DEPENDENCY_UNAVAILABLE is the test
// server's missing workflow engine.
func refusesBody(res *response, path string) bool {
	if res.status == 500 {
		return true
	}
	if res.status != 400 && res.status != 422 {
		return false
	}
	var e errorBody
	if json.Unmarshal(res.body, &e) != nil {
		return true
	}
	if res.status == 422 && e.Error.Code != "VALIDATION_ERROR" {
		return false
	}
	fields, _ := e.Error.Details["fields"].([]any)
	if len(fields) == 0 {
		return true
	}
	for _, f := range fields {
		m, _ := f.(map[string]any)
		field, _ := m["field"].(string)
		issue, _ := m["issue"].(string)
		aboutPath := strings.Contains(path, "{"+field+"}")
		noChange := field == "(body)" && strings.HasPrefix(issue, "changes nothing")
		if !aboutPath && !noChange {
			return true
		}
	}
	return false
}

// unconditionallyRequired matches a description that declares its field
// required without a condition ("Required", "Required: ...").
var unconditionallyRequired = regexp.MustCompile(`^Required(\.|:|$)`)

// TestFieldsDocumentedAsRequiredAreRequired checks every property of every
// schema whose description says it is required: the schema must list it in
// required. Conditional rules ("Required with ...", "required when ...")
// stay optional and their descriptions say the condition.
func TestFieldsDocumentedAsRequiredAreRequired(t *testing.T) {
	h := newHarness(t)
	doc := loadSchemaDoc(t, h)
	checked := 0
	for name, s := range doc.Components.Schemas {
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for prop, ps := range s.Properties {
			if ps == nil || !unconditionallyRequired.MatchString(ps.Description) {
				continue
			}
			checked++
			if !required[prop] {
				t.Errorf("%s.%s is documented as %q but is optional in the schema", name, prop, ps.Description)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d properties documented as required: has the wording changed?", checked)
	}
}

// TestSchemaRefusalsAnswerLikeTheServer checks that a body refused by the
// schema (before the operation runs) gets the documented answer: 400
// VALIDATION_ERROR naming each field, a missing or empty required field as
// "is required", like the operations' own checks.
func TestSchemaRefusalsAnswerLikeTheServer(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	issues := func(res *response) map[string]string {
		t.Helper()
		return fieldNames(res.wantError(400, "VALIDATION_ERROR"))
	}
	tk := newTicket(t, h, a.liveKey, nil)
	if got := issues(h.do("POST", "/v1/support/tickets/"+tk.Ticket.ID+"/comments", a.liveKey, map[string]any{"content": ""})); got["content"] != "is required" || len(got) != 1 {
		t.Fatalf("empty content: %v", got)
	}
	if got := issues(h.do("POST", "/v1/services/orchestration/workflows", a.liveKey, map[string]any{})); got["name"] != "is required" || got["steps"] != "is required" {
		t.Fatalf("missing name and steps: %v", got)
	}
	got := issues(h.do("POST", "/v1/services/connectivity/internet", a.liveKey, map[string]any{"account_id": a.account.ID, "service_type": "fiber_dedicated",
		"bandwidth": "1gbps", "sla": "gold", "location": map[string]any{"address": "100 Congress Ave", "city": "Austin", "state": "TX"}}))
	if got["sla"] == "" || got["location.zip"] != "is required" || len(got) != 2 {
		t.Fatalf("sla outside its enum and a missing nested field: %v", got)
	}
	if got := issues(h.do("POST", "/v1/billing/budgets", a.liveKey, map[string]any{"account_id": a.account.ID, "amount": 0})); got["amount"] == "" || len(got) != 1 {
		t.Fatalf("amount of 0: %v", got)
	}
}
