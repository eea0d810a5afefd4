package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/api"
	"github.com/telcoplatform/platform/models"
)

// The schema-driven robustness test: every operation of /openapi.json gets
// bodies generated from its request schema (valid, boundary and invalid),
// malformed headers, real and garbage path identifiers and query values,
// with a valid credential and an invalid one. Whatever it is sent, the
// server answers no 5xx but 503 (the test server has no workflow engine),
// never panics (a panic is a 500), and every 4xx carries the documented
// error shape with the status of its code. The generator is a math/rand
// seeded from the operation's name, so a failure names a case that
// reproduces.

// robustnessCase is one request of the test.
type robustnessCase struct {
	name        string
	path        string // concrete, query included
	key         string
	body        []byte // nil: none
	contentType string
	headers     []string
	// adminToo sends the case as the provider's administrator too when the
	// valid request is forbidden to the tenant (a provider-only operation).
	adminToo bool
}

// outboundOperations call the integration's URL (a real host) when their
// identifier is real: only garbage identifiers and invalid credentials
// are sent to them.
var outboundOperations = map[string]bool{
	"POST /v1/support/integrations/chat/{integration_id}/test":    true,
	"POST /v1/support/integrations/tracker/{integration_id}/test": true,
}

// garbageIDs replace the path's identifiers.
var garbageIDs = []string{"does_not_exist", "%FF%FE", strings.Repeat("a", 300), "..%2F..%2Fetc", "-1", "%27%20OR%201%3D1--", "%00", "%E2%80%AE"}

var robustnessParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// TestSchemaDrivenRobustness sends, to every operation, generated requests
// and checks that none gets a 5xx (503 aside) and every 4xx is in the
// documented error shape.
func TestSchemaDrivenRobustness(t *testing.T) {
	started := time.Now()
	h := newHarness(t)
	a := h.tenants[0]
	doc := loadSchemaDoc(t, h)
	fixtures := routeFixtures(t, h, a)
	fixtures["category"] = "internet"
	fixtures["article_id"] = newArticle(t, h, nil).Article.ID
	b := newMinimalBuilder(doc, fixtures)
	t.Logf("fixtures ready in %v", time.Since(started).Round(time.Millisecond))

	keys := robustnessOrder(doc)
	if len(keys) < 150 {
		t.Fatalf("only %d operations in /openapi.json", len(keys))
	}
	sent := 0
	for _, key := range keys {
		method, path, _ := strings.Cut(key, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		cases := robustnessCases(t, b, fixtures, key, op, h.adminKey, a.liveKey)
		failed, validStatus := 0, 0
		for _, c := range cases {
			tries := []robustnessCase{c}
			if c.adminToo && validStatus == 403 {
				admin := c
				admin.key, admin.name = h.adminKey, c.name+", provider admin"
				tries = append(tries, admin)
			}
			for _, c := range tries {
				res := h.send(method, c)
				sent++
				if c.name == "valid" {
					validStatus = res.status
				}
				if problem := robustnessProblem(method, path, res); problem != "" {
					failed++
					if failed <= 3 {
						t.Errorf("%s %s [%s]: %s\n  body sent: %s\n  answer %d: %s", method, c.path, c.name, problem, clipBytes(c.body, 300), res.status, clipBytes(res.body, 400))
					}
				}
			}
		}
		if failed > 3 {
			t.Errorf("%s: %d more failing cases", key, failed-3)
		}
	}
	t.Logf("%d requests to %d operations in %v", sent, len(keys), time.Since(started).Round(time.Millisecond))
}

// robustnessOrder lists the operations sorted, reads before writes and
// deletions last, so that a deletion does not take a fixture away from
// the other operations.
func robustnessOrder(doc schemaDoc) []string {
	rank := map[string]int{"get": 0, "head": 0, "post": 1, "put": 1, "patch": 1, "delete": 2}
	var keys []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if _, ok := rank[method]; ok {
				keys = append(keys, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		mi, _, _ := strings.Cut(keys[i], " ")
		mj, _, _ := strings.Cut(keys[j], " ")
		if ri, rj := rank[strings.ToLower(mi)], rank[strings.ToLower(mj)]; ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// robustnessProblem says what is wrong with an answer, or "".
func robustnessProblem(method, path string, res *response) string {
	if res.status >= 500 && res.status != 503 {
		return fmt.Sprintf("status %d", res.status)
	}
	if res.status < 400 || method == "HEAD" || !strings.HasPrefix(path, "/v1/") {
		return "" // the health, metrics and document routes answer in their own shapes
	}
	var e errorBody
	var raw struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(res.body, &e); err != nil || json.Unmarshal(res.body, &raw) != nil {
		return fmt.Sprintf("%d answer is not the JSON error shape: %v", res.status, err)
	}
	if !regexp.MustCompile(`^[A-Z][A-Z_]+$`).MatchString(e.Error.Code) || e.Error.Message == "" || e.Error.RequestID == "" {
		return fmt.Sprintf("%d answer without code, message or request_id", res.status)
	}
	if d := raw.Error["details"]; len(d) == 0 || d[0] != '{' {
		return fmt.Sprintf("%d answer whose details are not an object", res.status)
	}
	if want := api.HTTPStatus(models.Code(e.Error.Code)); want != res.status {
		return fmt.Sprintf("status %d for code %s (documented: %d)", res.status, e.Error.Code, want)
	}
	if res.status == 503 && e.Error.Code != string(models.CodeDependencyUnavailable) && e.Error.Code != string(models.CodeServiceMaintenance) {
		return "503 " + e.Error.Code
	}
	return ""
}

// send sends one case.
func (h *harness) send(method string, c robustnessCase) *response {
	h.t.Helper()
	headers := append([]string{}, c.headers...)
	if c.body != nil {
		headers = append([]string{"Content-Type", c.contentType}, headers...)
	}
	var body any
	if c.body != nil {
		body = c.body
	}
	return h.do(method, c.path, c.key, body, headers...)
}

// robustnessCases generates the cases of one operation, deterministically.
func robustnessCases(t *testing.T, b minimalBuilder, fixtures map[string]string, key string, op schemaOperation, adminKey, liveKey string) []robustnessCase {
	t.Helper()
	hash := fnv.New64a()
	hash.Write([]byte(key))
	rng := rand.New(rand.NewSource(int64(hash.Sum64())))
	method, path, _ := strings.Cut(key, " ")
	invalidKey := "sk_live_" + strings.Repeat("Z", 56)

	realPath, ok := concretePath(path, func(name string) (string, bool) {
		id, ok := fixtureFor(fixtures, path, name)
		return url.PathEscape(id), ok
	})
	garbage := garbageIDs[rng.Intn(len(garbageIDs))]
	garbagePath, _ := concretePath(path, func(string) (string, bool) { return garbage, true })
	if !ok {
		realPath = garbagePath
	}
	validQuery, badQueries := queryValues(b, op, rng)
	withQuery := func(p string, q url.Values) string {
		if len(q) == 0 {
			return p
		}
		return p + "?" + q.Encode()
	}
	var headers []string
	for _, p := range op.Parameters {
		if p.In == "header" && p.Required {
			if v, err := b.value(p.Schema, "header."+p.Name); err == nil {
				headers = append(headers, p.Name, fmt.Sprint(v))
			}
		}
	}

	var jsonBody []byte
	var bodies []robustnessCase
	if op.RequestBody != nil {
		if media, ok := op.RequestBody.Content["application/json"]; ok {
			minimal := b.requestBody(t, method, path)
			jsonBody = encodeJSON(t, minimal)
			g := bodyGen{b: b, rng: rng}
			bodies = g.cases(t, media.Schema, minimal)
		}
	}
	contentType := ""
	if jsonBody != nil {
		contentType = "application/json"
	}
	base := robustnessCase{path: withQuery(realPath, validQuery), key: liveKey, body: jsonBody, contentType: contentType, headers: headers}
	with := func(name string, change func(*robustnessCase)) robustnessCase {
		c := base
		c.name = name
		c.headers = append([]string{}, base.headers...)
		change(&c)
		return c
	}
	var cases []robustnessCase
	add := func(c robustnessCase) { cases = append(cases, c) }

	// Credentials: none, invalid, malformed; the garbage path too.
	add(with("invalid key", func(c *robustnessCase) { c.key = invalidKey }))
	add(with("no credential", func(c *robustnessCase) { c.key = "" }))
	add(with("malformed Authorization", func(c *robustnessCase) {
		c.key = ""
		c.headers = append(c.headers, "Authorization", []string{"Bearer", "Basic Zm9vOmJhcg==", "Bearer " + strings.Repeat("x", 3000), "Bearer eyJhbGciOiJub25lIn0.e30.", "Digest x"}[rng.Intn(5)])
	}))
	add(with("garbage id", func(c *robustnessCase) { c.path = withQuery(garbagePath, validQuery) }))
	add(with("garbage id, invalid key", func(c *robustnessCase) { c.path, c.key = garbagePath, invalidKey }))
	if outboundOperations[key] {
		return cases
	}
	// The valid-ish request, as the tenant and as the provider's administrator.
	add(with("valid", func(*robustnessCase) {}))
	add(with("valid, provider admin", func(c *robustnessCase) { c.key = adminKey }))
	// Malformed headers.
	add(with("API-Version garbage", func(c *robustnessCase) {
		c.headers = append(c.headers, "API-Version", []string{"9.9", "v", "1.2.3.4", "latest", "1.99999999999999999999", "-1"}[rng.Intn(6)])
	}))
	add(with("Idempotency-Key too long", func(c *robustnessCase) { c.headers = append(c.headers, "Idempotency-Key", strings.Repeat("k", 300)) }))
	add(with("X-Request-ID garbage", func(c *robustnessCase) { c.headers = append(c.headers, "X-Request-ID", strings.Repeat("é", 200)) }))
	add(with("signature headers garbage", func(c *robustnessCase) {
		c.headers = append(c.headers, "X-Timestamp", "-99999999999999999999", "X-Signature", "v9,@@@", "X-Nonce", strings.Repeat("n", 200))
	}))
	if jsonBody != nil {
		add(with("Content-Type text/plain", func(c *robustnessCase) { c.contentType = "text/plain" }))
		add(with("Content-Type multipart without boundary", func(c *robustnessCase) { c.contentType = "multipart/form-data" }))
		add(with("Content-Type garbage", func(c *robustnessCase) { c.contentType = "application/json; charset=\"" }))
	}
	// Query values out of their schema (and the paging regressions).
	for _, q := range badQueries {
		add(with("query "+q.Encode(), func(c *robustnessCase) { c.path, c.adminToo = withQuery(realPath, q), true }))
	}
	// Generated bodies.
	for _, bc := range bodies {
		add(with(bc.name, func(c *robustnessCase) {
			c.body, c.contentType, c.adminToo = bc.body, "application/json", true
			if bc.contentType != "" {
				c.contentType = bc.contentType
			}
		}))
	}
	if len(bodies) > 0 {
		add(with("invalid body, invalid key", func(c *robustnessCase) { c.body, c.key = bodies[len(bodies)-1].body, invalidKey }))
	}
	return cases
}

// concretePath replaces each {param} of path with id(param).
func concretePath(path string, id func(string) (string, bool)) (string, bool) {
	all := true
	out := robustnessParam.ReplaceAllStringFunc(path, func(m string) string {
		v, ok := id(m[1 : len(m)-1])
		if !ok {
			all = false
		}
		return v
	})
	return out, all
}

// queryValues returns the operation's query: its required parameters
// with schema values, and a few queries with one value out of its schema
// each (wrong type, too large, too long, empty), plus the paging values
// that overflowed an offset (page, offset, cursor) where the operation
// takes them.
func queryValues(b minimalBuilder, op schemaOperation, rng *rand.Rand) (url.Values, []url.Values) {
	valid := url.Values{}
	var names []string
	for _, p := range op.Parameters {
		if p.In != "query" {
			continue
		}
		names = append(names, p.Name)
		if p.Required {
			if v, err := b.value(p.Schema, "query."+p.Name); err == nil {
				valid.Set(p.Name, fmt.Sprint(v))
			}
		}
	}
	bad := []string{"-1", "99999999999999999999", "abc", "", strings.Repeat("z", 500), "1e999", "%00", "true", "[]"}
	var out []url.Values
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for _, n := range names[:min(len(names), 3)] {
		q := cloneValues(valid)
		q.Set(n, bad[rng.Intn(len(bad))])
		out = append(out, q)
	}
	huge := "9223372036854775807"
	for _, kv := range [][2]string{{"page", huge}, {"offset", huge}, {"cursor", base64.RawURLEncoding.EncodeToString([]byte("o:" + huge))}, {"cursor", "@@@"}} {
		if slices.Contains(names, kv[0]) {
			q := cloneValues(valid)
			q.Set(kv[0], kv[1])
			out = append(out, q)
		}
	}
	return valid, out
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string{}, vs...)
	}
	return out
}

// bodyGen generates request bodies from a schema.
type bodyGen struct {
	b   minimalBuilder
	rng *rand.Rand
}

// utf8Sentinel marks the string a body's invalid UTF-8 replaces.
const utf8Sentinel = "\u0001utf8-sentinel\u0001"

// cases returns the body cases of a schema: the minimal body with its
// optional properties, boundary values of one property at a time, and
// invalid bodies.
func (g bodyGen) cases(t *testing.T, schema *jsonSchema, minimal any) []robustnessCase {
	t.Helper()
	s, err := g.b.resolve(schema)
	if err != nil || s == nil {
		return nil
	}
	var out []robustnessCase
	add := func(name string, v any) { out = append(out, robustnessCase{name: name, body: encodeJSON(t, v)}) }
	addRaw := func(name string, raw []byte) { out = append(out, robustnessCase{name: name, body: raw}) }
	obj, isObject := minimal.(map[string]any)
	if isObject {
		// Every optional property too.
		full := cloneMap(obj)
		for name, p := range s.Properties {
			if _, ok := full[name]; ok {
				continue
			}
			if id, ok := g.b.ids[name]; ok {
				full[name] = id
			} else if v, err := g.b.value(p, name); err == nil {
				full[name] = v
			}
		}
		add("valid with optional properties", full)
		// Boundary values and wrong types, one property at a time.
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		g.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, name := range names[:min(len(names), 4)] {
			ps, err := g.b.resolve(s.Properties[name])
			if err != nil || ps == nil {
				continue
			}
			for i, v := range g.boundaries(ps) {
				m := cloneMap(obj)
				m[name] = v
				add(fmt.Sprintf("boundary %s #%d", name, i), m)
			}
			m := cloneMap(obj)
			m[name] = wrongType(ps, g.rng)
			add("wrong type "+name, m)
		}
		if len(names) > 0 {
			m := cloneMap(obj)
			m[names[0]] = utf8Sentinel
			raw := encodeJSON(t, m)
			quoted, _ := json.Marshal(utf8Sentinel)
			addRaw("invalid UTF-8 in "+names[0], bytes.Replace(raw, quoted, []byte("\"\xff\xfe\xfd\xc0\xaf\""), 1))
		}
		m := cloneMap(obj)
		m["zz_unknown_field"] = map[string]any{"a": 1}
		add("extra field", m)
		if len(s.Required) > 0 {
			m := cloneMap(obj)
			delete(m, s.Required[g.rng.Intn(len(s.Required))])
			add("missing required", m)
		}
		m = cloneMap(obj)
		for k := range m {
			m[k] = nil
		}
		add("every field null", m)
	}
	// Shapes no schema allows.
	raw := encodeJSON(t, minimal)
	huge := []string{"1e999", "123456789012345678901234567890", "-1e400", "1.7976931348623157e309"}[g.rng.Intn(4)]
	addRaw("huge number", []byte(`{"amount":`+huge+`,"quantity":`+huge+`,"limit":`+huge+`}`))
	addRaw("deeply nested object", []byte(strings.Repeat(`{"a":`, 5000)+"1"+strings.Repeat("}", 5000)))
	addRaw("deeply nested array", []byte(strings.Repeat("[", 20000)+strings.Repeat("]", 20000)))
	addRaw("truncated", raw[:len(raw)/2])
	addRaw("top-level array", []byte("["+string(raw)+"]"))
	addRaw("top-level null", []byte("null"))
	addRaw("empty", []byte{})
	addRaw("duplicate keys", append([]byte(`{"a":1,"a":2,`), raw[1:]...))
	addRaw("trailing garbage", append(append([]byte{}, raw...), []byte("}{")...))
	addRaw("NUL bytes", []byte("{\"\x00\":\"\x00\"}"))
	addRaw("too large", append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 2<<20)...), []byte(`"}`)...))
	return out
}

// boundaries returns the edge values of a property's schema: its
// bounds, one past them, and the enum's last value.
func (g bodyGen) boundaries(s *jsonSchema) []any {
	var out []any
	switch s.Type {
	case "string":
		out = append(out, "", " ", "\u202e\u0000")
		if s.MaxLength != nil {
			out = append(out, strings.Repeat("x", *s.MaxLength), strings.Repeat("é", *s.MaxLength+1))
		} else {
			out = append(out, strings.Repeat("x", 70000))
		}
		if s.MinLength != nil && *s.MinLength > 0 {
			out = append(out, strings.Repeat("x", *s.MinLength-1))
		}
		if len(s.Enum) > 0 {
			out = append(out, s.Enum[len(s.Enum)-1], strings.ToUpper(fmt.Sprint(s.Enum[0])))
		}
	case "integer", "number":
		out = append(out, 0, -1, 1.5, 9007199254740993)
		if s.Minimum != nil {
			out = append(out, *s.Minimum, *s.Minimum-1)
		}
		if s.Maximum != nil {
			out = append(out, *s.Maximum, *s.Maximum+1)
		}
	case "array":
		out = append(out, []any{}, []any{nil})
		n := 60
		if s.MaxItems != nil {
			n = min(*s.MaxItems+1, 300)
		}
		item, _ := g.b.value(s.Items, "items")
		items := make([]any, n)
		for i := range items {
			items[i] = item
		}
		out = append(out, items)
	case "boolean":
		out = append(out, true)
	case "object":
		out = append(out, map[string]any{})
	}
	return out
}

// wrongType returns a value of another JSON type than s's.
func wrongType(s *jsonSchema, rng *rand.Rand) any {
	choices := map[string][]any{
		"string":  {12345, true, []any{"x"}, map[string]any{"x": "y"}},
		"integer": {"12", 1.5, []any{1}, true},
		"number":  {"1.5", []any{}, map[string]any{}},
		"boolean": {"true", 1, []any{}},
		"array":   {"a,b", 1, map[string]any{"0": "a"}},
		"object":  {"{}", []any{}, 1},
	}
	c, ok := choices[s.Type]
	if !ok {
		c = []any{map[string]any{"nested": []any{1, "2", nil}}}
	}
	return c[rng.Intn(len(c))]
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func encodeJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	return raw
}

func clipBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}
