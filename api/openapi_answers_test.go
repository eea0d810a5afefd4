package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// TestAnswersMatchTheirSchemas: answers, null fields and errors included,
// are valid against the response schemas /openapi-3.1.json documents for
// them (a client generated from the document can read them): the 200 of an
// operation still running (error and result null), of a service without a
// maintenance window, of its health without an open incident, of a ticket
// not yet assigned, and the error body of a 404 and of a 400.
func TestAnswersMatchTheirSchemas(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	var doc map[string]any
	if err := json.Unmarshal(h.do("GET", "/openapi-3.1.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	svc := mustService(t, h, a)
	op := h.runningOperation(t)
	var ticket struct {
		Ticket struct {
			ID string `json:"id"`
		} `json:"ticket"`
	}
	h.do("POST", "/v1/support/tickets", a.liveKey, map[string]any{"title": "Slow link", "description": "since noon", "category": "network", "priority": "low"}).
		decode(http.StatusCreated, &ticket)

	tests := []struct {
		name, method, path, template string
		status                       int
	}{
		{"a running operation", "GET", "/v1/operations/" + op, "/v1/operations/{request_id}", 200},
		{"the operations", "GET", "/v1/operations", "/v1/operations", 200},
		{"a service without a maintenance window", "GET", "/v1/services/" + svc, "/v1/services/{service_id}", 200},
		{"the services", "GET", "/v1/services", "/v1/services", 200},
		{"a service's health", "GET", "/v1/services/" + svc + "/health", "/v1/services/{service_id}/health", 200},
		{"a ticket not yet assigned", "GET", "/v1/support/tickets/" + ticket.Ticket.ID, "/v1/support/tickets/{ticket_id}", 200},
		{"a 404", "GET", "/v1/services/svc_doesnotexist", "/v1/services/{service_id}", 404},
		{"a 400", "GET", "/v1/services?status=nonsense", "/v1/services", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := h.do(tc.method, tc.path, a.liveKey, nil)
			if res.status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.status, tc.status, res.body)
			}
			responses, _ := dig(doc, "paths", tc.template, strings.ToLower(tc.method), "responses").(map[string]any)
			if responses == nil {
				t.Fatalf("%s %s is not documented", tc.method, tc.template)
			}
			code := strconv.Itoa(tc.status)
			if _, ok := responses[code]; !ok {
				code = "default"
			}
			content, _ := dig(responses, code, "content").(map[string]any)
			if _, ok := content["application/json"]; !ok {
				t.Fatalf("the %s answer is not documented as application/json: %v", code, keys(content))
			}
			// The whole document, with a $ref to the answer's schema, so
			// that its $refs to components resolve.
			schema := map[string]any{}
			for k, v := range doc {
				schema[k] = v
			}
			schema["$ref"] = "#/paths/" + pointerEscape(tc.template) + "/" + strings.ToLower(tc.method) + "/responses/" + code + "/content/application~1json/schema"
			var body any
			if err := json.Unmarshal(res.body, &body); err != nil {
				t.Fatal(err)
			}
			violations, err := models.SchemaViolations("https://platform.example/openapi-3.1.json", schema, body)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range violations {
				t.Errorf("at %s: %v", "/"+strings.Join(v.InstanceLocation, "/"), v.ErrorKind)
			}
			if t.Failed() {
				t.Logf("answer: %s", res.body)
			}
		})
	}
}

// dig follows keys through nested objects (nil when one is missing).
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// keys lists an object's keys.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// TestEveryOperationStatesItsAccess: the description of every operation of
// /openapi.json says who may call it: public, or the credential (and
// permission, role, second factor) it requires.
func TestEveryOperationStatesItsAccess(t *testing.T) {
	h := newHarness(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Description string `json:"description"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(h.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths {
		for method, op := range item {
			n++
			if !strings.Contains(op.Description, "Public: needs no credential.") && !strings.Contains(op.Description, "Requires a credential") {
				t.Errorf("%s %s does not state its access: %q", strings.ToUpper(method), path, op.Description)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d operations documented", n)
	}
}
