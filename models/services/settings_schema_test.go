package services

import (
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

func TestSettingShapes(t *testing.T) {
	for _, k := range KindNames() {
		var v models.Validator
		if _, err := checkSettingShapes(&v, k, map[string]any{}); err != nil {
			t.Errorf("%s: the schema does not compile: %v", k, err)
		}
	}
	five := []any{"a", "b", "c", "d", "e"}
	cases := []struct {
		name     string
		kind     string
		settings map[string]any
		want     map[string]string // field → part of the issue; nil: none
	}{
		{"valid, and null removes", catalog.KindInternet, map[string]any{"dns_servers": []any{"1.1.1.1"}, "monitoring": "advanced", "alert_emails": nil}, nil},
		{"unknown setting", catalog.KindInternet, map[string]any{"colour": "blue"}, map[string]string{"configuration.colour": "is not a setting of a internet"}},
		{"names are case-sensitive", catalog.KindInternet, map[string]any{"Monitoring": "basic"}, map[string]string{"configuration.Monitoring": "is not a setting"}},
		{"bad enum", catalog.KindInternet, map[string]any{"qos_profile": "platinum"}, map[string]string{"configuration.qos_profile": "must be one of standard, voice_priority, bulk_data"}},
		{"not a boolean", catalog.KindNetwork, map[string]any{"encryption": "yes"}, map[string]string{"configuration.encryption": "must be true or false"}},
		{"out of range", KindPhoneSystem, map[string]any{"recording_retention_days": 0}, map[string]string{"configuration.recording_retention_days": "from 1 to 3650"}},
		{"not whole", KindPhoneSystem, map[string]any{"recording_retention_days": 1.5}, map[string]string{"configuration.recording_retention_days": "whole number"}},
		{"too many", catalog.KindInternet, map[string]any{"dns_servers": five}, map[string]string{"configuration.dns_servers": "at most 4 values"}},
		{"not a list", catalog.KindInternet, map[string]any{"dns_servers": "1.1.1.1"}, map[string]string{"configuration.dns_servers": "must be a list of strings"}},
		{"an element not a string", catalog.KindInternet, map[string]any{"dns_servers": []any{"1.1.1.1", 8}}, map[string]string{"configuration.dns_servers[1]": "must be a string"}},
		{"a time zone that is not a string", KindPhoneSystem, map[string]any{"timezone": 5}, map[string]string{"configuration.timezone": "IANA time zone"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v models.Validator
			bad, err := checkSettingShapes(&v, tc.kind, tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			if e := models.AsError(v.Err()); e != nil {
				issues, _ := e.Details["fields"].([]models.FieldIssue)
				for _, fi := range issues {
					got[fi.Field] = fi.Issue
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("issues %v, want %v", got, tc.want)
			}
			for field, part := range tc.want {
				if !strings.Contains(got[field], part) {
					t.Errorf("%s: issue %q, want it to contain %q", field, got[field], part)
				}
				name := strings.TrimPrefix(field, "configuration.")
				name, _, _ = strings.Cut(name, "[")
				if !bad[name] {
					t.Errorf("%s is not marked bad: %v", name, bad)
				}
			}
		})
	}
}
