package activities_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/workflows"
)

// TestApplicationErrorRoundTrip converts domain errors into application
// errors and back (workflows.ErrorOf): the code, message and details
// survive, the retryability follows the one list, and an internal cause
// never leaves the activity.
func TestApplicationErrorRoundTrip(t *testing.T) {
	for _, c := range []struct {
		err       error
		retry     activities.Retry
		code      models.Code
		retryable bool
	}{
		{models.NotFound("service"), activities.RetryByCode, models.CodeNotFound, false},
		{models.Errorf(models.CodeInsufficientBandwidth, "no bandwidth left").WithDetail("available_mbps", 0), activities.RetryByCode, models.CodeInsufficientBandwidth, false},
		{models.Internal(errors.New("connection reset by peer at 10.0.0.7")), activities.RetryByCode, models.CodeInternal, true},
		{models.Errorf(models.CodeDependencyUnavailable, "the network is unavailable"), activities.RetryByCode, models.CodeDependencyUnavailable, true},
		{models.Errorf(models.CodeServiceConflict, "another operation holds the service"), activities.RetryByCode, models.CodeServiceConflict, true},
		{fmt.Errorf("wrapped: %w", models.NotFound("delivery")), activities.RetryAll, models.CodeNotFound, true},
	} {
		out := activities.ApplicationError(c.err, c.retry)
		var appErr *temporal.ApplicationError
		if !errors.As(out, &appErr) {
			t.Fatalf("%v: not an application error: %T", c.err, out)
		}
		if appErr.Type() != string(c.code) || appErr.NonRetryable() == c.retryable {
			t.Errorf("%v: type %s non-retryable %v, want %s retryable %v", c.err, appErr.Type(), appErr.NonRetryable(), c.code, c.retryable)
		}
		want := models.AsError(c.err)
		back := workflows.ErrorOf(out)
		if back.Code != c.code || back.Message != want.Message || back.Cause != nil {
			t.Errorf("%v: back %+v, want code %s message %q", c.err, back, c.code, want.Message)
		}
		if strings.Contains(back.Message, "10.0.0.7") || strings.Contains(appErr.Error(), "10.0.0.7") {
			t.Errorf("an internal cause leaked: %q", appErr.Error())
		}
		if want.Details != nil && fmt.Sprint(back.Details) != fmt.Sprint(want.Details) {
			t.Errorf("%v: details %v, want %v", c.err, back.Details, want.Details)
		}
	}
}

// TestApplicationErrorPassesThrough checks what is not converted: nil,
// context errors (the activity was cancelled or timed out) and errors that
// already are application errors.
func TestApplicationErrorPassesThrough(t *testing.T) {
	if activities.ApplicationError(nil, activities.RetryByCode) != nil {
		t.Fatal("nil converted")
	}
	for _, err := range []error{context.Canceled, fmt.Errorf("step: %w", context.DeadlineExceeded),
		temporal.NewNonRetryableApplicationError("the item has no changes", string(models.CodeValidation), nil)} {
		if out := activities.ApplicationError(err, activities.RetryAll); out != err {
			t.Errorf("%v converted into %v", err, out)
		}
	}
}

// TestRetryableCodes pins the one list of retryable codes.
func TestRetryableCodes(t *testing.T) {
	for code, want := range map[models.Code]bool{
		models.CodeInternal: true, models.CodeDependencyUnavailable: true, models.CodeServiceConflict: true,
		models.CodeNotFound: false, models.CodeValidation: false, models.CodeInsufficientBandwidth: false, models.CodeProvisioningFailed: false,
	} {
		if activities.Retryable(code) != want {
			t.Errorf("Retryable(%s) = %v, want %v", code, !want, want)
		}
	}
}

// TestErrorOfOtherFailures checks the reverse conversion of failures that
// are not application errors.
func TestErrorOfOtherFailures(t *testing.T) {
	if e := workflows.ErrorOf(temporal.NewTimeoutError(0, nil)); e.Code != models.CodeDependencyUnavailable {
		t.Errorf("timeout: %+v", e)
	}
	if e := workflows.ErrorOf(temporal.NewCanceledError()); e.Code != models.CodeProvisioningFailed || e.Message != "cancelled" {
		t.Errorf("cancellation: %+v", e)
	}
	if e := workflows.ErrorOf(errors.New("boom")); e.Code != models.CodeInternal || e.Message == "boom" {
		t.Errorf("other: %+v", e)
	}
	if e := workflows.ErrorOf(temporal.NewApplicationError("no type", "")); e.Code != models.CodeInternal {
		t.Errorf("untyped: %+v", e)
	}
}
