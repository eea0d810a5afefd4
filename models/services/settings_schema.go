package services

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/telcoplatform/platform/models"
)

// listSettings are the setting types whose value is a list of strings.
var listSettings = []string{"emails", "ips", "cidrs", "hostnames", "countries", "strings"}

// SettingsSchema returns the JSON Schema (draft 2020-12) of the
// configuration settings of a kind of service (PUT
// /services/{id}/configuration): exactly the kind's settings, each of its
// JSON type (null removes a setting), enums with their values, whole
// numbers with their range, lists of strings with their most items. The
// API publishes it in the OpenAPI document (ServiceConfiguration_<kind>);
// the rules a schema cannot state (addresses, networks, time zones,
// response times, the order between settings) are checked in code.
func SettingsSchema(kind string) map[string]any {
	props := map[string]any{}
	for name, r := range serviceSettings(kind) {
		props[name] = settingSchema(r)
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"title":                "Configuration settings of a " + strings.ReplaceAll(kind, "_", " "),
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
}

// settingSchema is the JSON Schema of one setting.
func settingSchema(r settingRule) map[string]any {
	s := map[string]any{}
	switch {
	case r.Type == "enum":
		values := make([]any, 0, len(r.Values)+1)
		for _, v := range r.Values {
			values = append(values, v)
		}
		s["type"], s["enum"] = []string{"string", "null"}, append(values, nil)
	case r.Type == "bool":
		s["type"] = []string{"boolean", "null"}
	case r.Type == "int":
		s["type"], s["minimum"], s["maximum"] = []string{"integer", "null"}, r.Min, r.Max
	case slices.Contains(listSettings, r.Type):
		s["type"], s["items"] = []string{"array", "null"}, map[string]any{"type": "string"}
		if r.Max > 0 {
			s["maxItems"] = r.Max
		}
	default: // email, timezone, response_time
		s["type"] = []string{"string", "null"}
	}
	if r.Doc != "" {
		s["description"] = r.Doc
	}
	return s
}

// settingShapeIssue is the issue of a setting whose value does not have
// the shape its schema states.
func settingShapeIssue(r settingRule) string {
	switch r.Type {
	case "enum":
		return "must be one of " + strings.Join(r.Values, ", ")
	case "bool":
		return "must be true or false"
	case "int":
		return fmt.Sprintf("must be a whole number from %d to %d", r.Min, r.Max)
	case "email":
		return "must be an e-mail address"
	case "timezone":
		return "must be an IANA time zone, e.g. America/Chicago"
	case "response_time":
		return "must be <n>_minutes, <n>_hour or <n>_hours"
	}
	return "must be a list of strings"
}

// checkSettingShapes validates settings against the kind's schema, records
// each issue under configuration.<name> once, and returns the names of the
// settings that have one (their values are not checked further).
func checkSettingShapes(v *models.Validator, kindName string, settings map[string]any) (map[string]bool, error) {
	rules := serviceSettings(kindName)
	violations, err := models.SchemaViolations("urn:platform:services:configuration:"+kindName, SettingsSchema(kindName), settings)
	if err != nil {
		return nil, err
	}
	bad := map[string]bool{}
	if len(violations) == 0 {
		return bad, nil
	}
	names := make([]string, 0, len(rules))
	for k := range rules {
		names = append(names, k)
	}
	slices.Sort(names)
	seen := map[string]bool{}
	add := func(field, issue string) {
		if !seen[field+"\x00"+issue] {
			seen[field+"\x00"+issue] = true
			v.Add(field, issue)
		}
	}
	for _, leaf := range violations {
		loc := leaf.InstanceLocation
		if k, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok && len(loc) == 0 {
			for _, name := range k.Properties {
				bad[name] = true
				add("configuration."+name, fmt.Sprintf("is not a setting of a %s; settings: %s", strings.ReplaceAll(kindName, "_", " "), strings.Join(names, ", ")))
			}
			continue
		}
		if len(loc) == 0 {
			add("configuration", "must be an object")
			continue
		}
		r := rules[loc[0]]
		bad[loc[0]] = true
		field := "configuration." + loc[0]
		switch {
		case len(loc) > 1:
			add(field+"["+loc[1]+"]", "must be a string")
		case r.Max > 0 && slices.Contains(listSettings, r.Type) && isMaxItems(leaf.ErrorKind):
			add(field, fmt.Sprintf("must list at most %d values", r.Max))
		default:
			add(field, settingShapeIssue(r))
		}
	}
	return bad, nil
}

// isMaxItems reports whether k is a maxItems error.
func isMaxItems(k jsonschema.ErrorKind) bool {
	_, ok := k.(*kind.MaxItems)
	return ok
}
