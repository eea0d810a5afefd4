package webhooks

import (
	"errors"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// wantCode fails t unless err is a *models.Error with code.
func wantCode(t *testing.T, err error, code models.Code) *models.Error {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *models.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s, want %s (error %v)", e.Code, code, err)
	}
	return e
}

// fieldsOf returns the names of the invalid fields of a VALIDATION_ERROR.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	e := wantCode(t, err, models.CodeValidation)
	issues, ok := e.Details["fields"].([]models.FieldIssue)
	if !ok {
		t.Fatalf("details[fields] = %#v, want []models.FieldIssue", e.Details["fields"])
	}
	names := make([]string, len(issues))
	for i, is := range issues {
		names[i] = is.Field
	}
	return names
}
