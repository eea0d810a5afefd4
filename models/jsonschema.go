package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaViolations validates v against the JSON Schema schema (built in
// Go; url names it) and returns the innermost violations, the ones that
// say what is wrong: none when v is valid. The domains validate their
// free-form objects with it (orchestration parameters, configuration
// settings). Errors: INTERNAL_ERROR (schema is not a valid schema, or v
// not JSON).
func SchemaViolations(url string, schema map[string]any, v any) ([]*jsonschema.ValidationError, error) {
	doc, err := jsonDocument(schema)
	if err != nil {
		return nil, Internal(fmt.Errorf("schema %s: %w", url, err))
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, Internal(fmt.Errorf("schema %s: %w", url, err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, Internal(fmt.Errorf("schema %s: %w", url, err))
	}
	inst, err := jsonDocument(v)
	if err != nil {
		return nil, Internal(err)
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(inst); err == nil || !errors.As(err, &ve) {
		return nil, nil
	}
	return violationLeaves(ve), nil
}

// jsonDocument returns v as the JSON decoder gives it (numbers as
// json.Number), the form the validator reads.
func jsonDocument(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// violationLeaves returns the innermost errors of e.
func violationLeaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, violationLeaves(c)...)
	}
	return out
}
