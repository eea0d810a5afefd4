package models

import "encoding/json"

// AsMap returns v as a JSON object (nil when v does not encode as one):
// how a typed value is kept in a JSON column of free-form maps, such as an
// operation's input or result.
func AsMap(v any) map[string]any {
	var m map[string]any
	if raw, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}
