package api

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui/v5emb"

	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/services"
)

// registerDocs serves the OpenAPI 3.0 document (huma's downgrade of its 3.1
// model) at /openapi.json and /openapi.yaml, the 3.1 original at
// /openapi-3.1.json, and an explorer whose assets ship with the binary at /docs.
func (s *Server) registerDocs() {
	s.App.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/docs", fiber.StatusFound) })
	document := func(contentType string, render func() ([]byte, error)) fiber.Handler {
		return func(c *fiber.Ctx) error {
			b, err := render()
			if err != nil {
				return err
			}
			c.Set(fiber.HeaderContentType, contentType)
			return c.Send(b)
		}
	}
	s.App.Get("/openapi.json", document("application/json", s.API.OpenAPI().Downgrade))
	s.App.Get("/openapi.yaml", document("application/yaml", s.API.OpenAPI().DowngradeYAML))
	s.App.Get("/openapi-3.1.json", document("application/json", s.API.OpenAPI().MarshalJSON))
	explorer := adaptor.HTTPHandler(v5emb.New("Telecom & IT Services Platform API", "/openapi.json", "/docs/"))
	s.App.Get("/docs", explorer)
	s.App.Get("/docs/*", explorer)
}

// parameterSchemaName is the OpenAPI component of an action's parameters.
func parameterSchemaName(action string) string { return "OrchestrationParameters_" + action }

// configurationSchemaName is the OpenAPI component of a kind's
// configuration settings.
func configurationSchemaName(kind string) string { return "ServiceConfiguration_" + kind }

// publishDomainSchemas adds to the OpenAPI components the JSON Schemas the
// domain validates free-form objects with: every orchestration action's
// parameters (parameterSchemaName, automation.ActionSpec.ParametersSchema)
// and every kind's configuration settings (configurationSchemaName,
// services.SettingsSchema).
func (s *Server) publishDomainSchemas() {
	for _, a := range automation.OrchestrationActions() {
		s.publishSchema(parameterSchemaName(a.Name), a.ParametersSchema())
	}
	for _, k := range services.KindNames() {
		s.publishSchema(configurationSchemaName(k), services.SettingsSchema(k))
	}
}

// publishSchema adds the JSON Schema doc to the OpenAPI components as name.
func (s *Server) publishSchema(name string, doc map[string]any) {
	delete(doc, "$schema") // the OpenAPI document's own dialect applies
	b, err := json.Marshal(nullableTypes(doc))
	var hs huma.Schema
	if err == nil {
		err = json.Unmarshal(b, &hs)
	}
	if err != nil {
		s.log.Error("schema not published", "name", name, "error", err)
		return
	}
	s.API.OpenAPI().Components.Schemas.Map()[name] = &hs
}

// nullableTypes rewrites, in a JSON Schema and every schema it holds, a
// type list of one type and "null" as that type with nullable (and drops
// null from an enum): the form the OpenAPI document's schemas take.
func nullableTypes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = nullableTypes(e)
		}
		if types, ok := x["type"].([]string); ok && len(types) == 2 && slices.Contains(types, "null") {
			for _, t := range types {
				if t != "null" {
					out["type"] = t
				}
			}
			out["nullable"] = true
			if enum, ok := x["enum"].([]any); ok {
				out["enum"] = slices.DeleteFunc(slices.Clone(enum), func(e any) bool { return e == nil })
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nullableTypes(e)
		}
		return out
	}
	return v
}

// outputOnStatusKey is the operation metadata listing the error statuses
// (e.g. "503") whose body is the operation's own output, not an ErrorBody:
// documentErrors documents them with the 200 answer's content.
const outputOnStatusKey = "output-on-status"

// documentErrors makes every operation's error answers say what the server
// sends: application/json with ErrorBody (DECISIONS 3), where huma would
// describe its own application/problem+json model. It replaces that model
// in every response and gives the error responses declared without a body
// (a 503, a 409) the same schema; the problem model leaves the components.
// Call once every operation is registered.
func (s *Server) documentErrors() {
	doc := s.API.OpenAPI()
	// huma's problem model and its ErrorDetail (whose name ours shares).
	delete(doc.Components.Schemas.Map(), "ErrorModel")
	delete(doc.Components.Schemas.Map(), "ErrorDetail")
	errSchema := doc.Components.Schemas.Schema(reflect.TypeFor[ErrorBody](), true, "ErrorBody")
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Head, item.Post, item.Put, item.Patch, item.Delete, item.Options} {
			if op == nil {
				continue
			}
			own, _ := op.Metadata[outputOnStatusKey].([]string)
			for code, res := range op.Responses {
				if res == nil {
					continue
				}
				if ok := op.Responses["200"]; ok != nil && slices.Contains(own, code) {
					res.Content = ok.Content
					continue
				}
				_, problem := res.Content["application/problem+json"]
				isError := code == "default" || len(code) == 3 && (code[0] == '4' || code[0] == '5')
				if !problem && !(isError && len(res.Content) == 0) {
					continue
				}
				delete(res.Content, "application/problem+json")
				if res.Content == nil {
					res.Content = map[string]*huma.MediaType{}
				}
				res.Content["application/json"] = &huma.MediaType{Schema: errSchema}
				if code == "default" {
					res.Description = "An error: `error.code` says which (docs/api.md lists them), with the HTTP status of docs/api.md's table"
				}
			}
		}
	}
}
