package automation

import (
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

func TestEveryActionSchemaCompiles(t *testing.T) {
	for _, a := range OrchestrationActions() {
		if _, err := models.SchemaViolations(parametersURL(a), a.ParametersSchema(), map[string]any{}); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
		s := a.ParametersSchema()
		props := s["properties"].(map[string]any)
		if len(props) != len(a.Params) || s["additionalProperties"] != false {
			t.Errorf("%s: schema %v", a.Name, s)
		}
	}
}

func TestParameterShapes(t *testing.T) {
	long := strings.Repeat("x", maxParamString+1)
	many := make([]any, maxParamList+1)
	for i := range many {
		many[i] = "voice"
	}
	cases := []struct {
		name   string
		action string
		params map[string]any
		want   map[string]string // field → part of the issue; nil: no issue
	}{
		{"valid", ActionScaleService, map[string]any{"service_id": "svc_1", "scaling_action": "scale_up", "new_quantity": 3,
			"maintenance_window": map[string]any{"start": "2026-12-01T02:00:00Z", "duration": "2h"}}, nil},
		{"missing", ActionProvisionService, map[string]any{"template": "t"}, map[string]string{"p.location": "is required"}},
		{"unknown parameter", ActionWait, map[string]any{"duration": "1m", "colour": "red"}, map[string]string{"p.colour": "is not a parameter of wait"}},
		{"names are case-sensitive", ActionSuspendService, map[string]any{"Service_ID": "svc_1"},
			map[string]string{"p.Service_ID": "is not a parameter", "p.service_id": "is required"}},
		{"not a string", ActionWait, map[string]any{"duration": 60}, map[string]string{"p.duration": "must be a string"}},
		{"too long", ActionNotify, map[string]any{"event": "x", "message": long}, map[string]string{"p.message": "at most 2000"}},
		{"negative integer", ActionScaleService, map[string]any{"service_id": "s", "scaling_action": "scale_up", "new_quantity": -1},
			map[string]string{"p.new_quantity": "non-negative integer"}},
		{"fractional integer", ActionScaleService, map[string]any{"service_id": "s", "scaling_action": "scale_up", "new_quantity": 1.5},
			map[string]string{"p.new_quantity": "non-negative integer"}},
		{"list too long", ActionRunAvailabilityCheck, map[string]any{"location": "l", "service_types": many}, map[string]string{"p.service_types": "at most 20 strings"}},
		{"list of numbers", ActionRunAvailabilityCheck, map[string]any{"location": "l", "service_types": []any{1, 2}}, map[string]string{"p.service_types": "at most 20 strings"}},
		{"not an object", ActionModifyService, map[string]any{"service_id": "s", "changes": "faster"}, map[string]string{"p.changes": "must be an object"}},
		{"object key not allowed", ActionModifyService, map[string]any{"service_id": "s", "changes": map[string]any{"colour": "red"}},
			map[string]string{"p.changes.colour": "is not one of name, sla, bandwidth, redundancy, monitoring"}},
		{"object value not a string", ActionModifyService, map[string]any{"service_id": "s", "changes": map[string]any{"sla": 3}},
			map[string]string{"p.changes.sla": "must be a string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := LookupAction(tc.action)
			if !ok {
				t.Fatalf("no action %s", tc.action)
			}
			var v models.Validator
			if err := checkParameterShapes(&v, "p", a, tc.params); err != nil {
				t.Fatal(err)
			}
			err := v.Err()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("unexpected issues: %v", err)
				}
				return
			}
			e := models.AsError(err)
			if e == nil {
				t.Fatalf("no issues, want %v", tc.want)
			}
			got := map[string]string{}
			issues, _ := e.Details["fields"].([]models.FieldIssue)
			for _, fi := range issues {
				got[fi.Field] = fi.Issue
			}
			if len(got) != len(tc.want) {
				t.Errorf("issues %v, want %v", got, tc.want)
			}
			for field, part := range tc.want {
				if !strings.Contains(got[field], part) {
					t.Errorf("%s: issue %q, want it to contain %q (all: %v)", field, got[field], part, got)
				}
			}
		})
	}
}
