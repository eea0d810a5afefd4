package automation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/telcoplatform/platform/models"
)

// Bounds of step parameters, stated in their JSON Schemas.
const (
	maxParamString = 2000
	maxParamList   = 20
)

// ParametersSchema returns the JSON Schema (draft 2020-12) of the action's
// parameters: an object with exactly the action's parameters, the required
// ones required; strings and durations at most 2000 characters, integers
// whole and non-negative, lists of at most 20 strings, objects of strings
// with only the keys the parameter allows. The API publishes it in the OpenAPI
// document (OrchestrationParameters_<action>); CreateOrchestrationDefinition
// validates every step's parameters with it.
func (a ActionSpec) ParametersSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, ps := range a.Params {
		props[ps.Name] = paramSchema(ps)
		if ps.Required {
			required = append(required, ps.Name)
		}
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"title":                "Parameters of " + a.Name,
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// paramSchema is the JSON Schema of one parameter of kind ps.Kind.
func paramSchema(ps ParamSpec) map[string]any {
	switch ps.Kind {
	case "integer":
		return map[string]any{"type": "integer", "minimum": 0}
	case "string_list":
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": maxParamList}
	case "object":
		fields := map[string]any{}
		for _, f := range ps.Fields {
			fields[f] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": fields, "additionalProperties": false}
	default: // string, duration
		return map[string]any{"type": "string", "maxLength": maxParamString}
	}
}

// paramIssue is the issue reported for a parameter of kind k whose value
// does not match its schema.
func paramIssue(k string) string {
	switch k {
	case "integer":
		return "must be a non-negative integer"
	case "string_list":
		return fmt.Sprintf("must be a list of at most %d strings", maxParamList)
	case "object":
		return "must be an object"
	default:
		return fmt.Sprintf("must be a string (at most %d characters)", maxParamString)
	}
}

// parametersURL names the action's parameters schema.
func parametersURL(a ActionSpec) string { return "urn:platform:orchestration:parameters:" + a.Name }

// checkParameterShapes validates params against the action's JSON Schema
// and records each issue under f (f.<parameter>, f.<parameter>.<key>), once.
func checkParameterShapes(v *models.Validator, f string, a ActionSpec, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	violations, err := models.SchemaViolations(parametersURL(a), a.ParametersSchema(), params)
	if err != nil || len(violations) == 0 {
		return err
	}
	kinds := map[string]ParamSpec{}
	for _, ps := range a.Params {
		kinds[ps.Name] = ps
	}
	seen := map[string]bool{}
	add := func(field, issue string) {
		if !seen[field+"\x00"+issue] {
			seen[field+"\x00"+issue] = true
			v.Add(field, issue)
		}
	}
	for _, leaf := range violations {
		loc := leaf.InstanceLocation
		switch k := leaf.ErrorKind.(type) {
		case *kind.Required:
			for _, name := range k.Missing {
				add(f+"."+strings.Join(append(slices.Clone(loc), name), "."), "is required")
			}
			continue
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				if len(loc) == 0 {
					add(f+"."+name, "is not a parameter of "+a.Name)
				} else {
					add(f+"."+loc[0]+"."+name, "is not one of "+strings.Join(kinds[loc[0]].Fields, ", "))
				}
			}
			continue
		}
		if len(loc) == 0 {
			add(f, "must be an object")
			continue
		}
		ps := kinds[loc[0]]
		if ps.Kind == "object" && len(loc) > 1 {
			add(f+"."+loc[0]+"."+loc[1], "must be a string")
			continue
		}
		add(f+"."+loc[0], paramIssue(ps.Kind))
	}
	return nil
}
