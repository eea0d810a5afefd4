package activities

import (
	"context"
	"errors"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
)

// Retryable reports whether a failure with code may pass when its activity
// is tried again: the platform's one list of retryable codes (an internal
// error, an unavailable dependency, a conflict on a service that another
// operation holds). Every other code is a business failure that a retry
// cannot fix: its application error is non-retryable, and the workflow
// sees it at once.
func Retryable(code models.Code) bool {
	switch code {
	case models.CodeInternal, models.CodeDependencyUnavailable, models.CodeServiceConflict:
		return true
	}
	return false
}

// Retry is which failures an activity's errors leave to Temporal's retry
// policy.
type Retry int

const (
	// RetryByCode retries the failures whose code is Retryable; the others
	// are non-retryable. Every activity but those of RetryAll.
	RetryByCode Retry = iota
	// RetryAll retries every failure: the webhook delivery and
	// housekeeping activities, whose only failures are the store's
	// (infrastructure) and whose workflows bound the retries by time
	// (workflows.WebhookActivityOptions, HousekeepingActivityOptions).
	RetryAll
)

// ApplicationError converts err, the failure of an activity, into a
// Temporal application error: its type is the error's code, its message
// the client-safe message and its details the error's details (models.AsError:
// an internal cause is never carried). It is retryable as retry says.
// Context errors (the activity was cancelled or timed out) and errors that
// already are application errors pass through unchanged; nil is nil.
// workflows.ErrorOf is the reverse conversion.
func ApplicationError(err error, retry Retry) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return err
	}
	e := models.AsError(err)
	var details []any
	if e.Details != nil {
		details = append(details, e.Details)
	}
	return temporal.NewApplicationErrorWithOptions(e.Message, string(e.Code), temporal.ApplicationErrorOptions{
		NonRetryable: retry == RetryByCode && !Retryable(e.Code),
		Details:      details,
	})
}

// failed converts err like ApplicationError with RetryByCode and logs it:
// a warning with the error when it will be retried, an info line with the
// code and message when it will not. attrs name what failed (activity,
// request id, step...).
func failed(ctx context.Context, log *slog.Logger, err error, attrs ...any) error {
	var appErr *temporal.ApplicationError
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &appErr) {
		return err // passed through by ApplicationError, not logged
	}
	out := ApplicationError(err, RetryByCode)
	if errors.As(out, &appErr) && appErr.NonRetryable() {
		log.InfoContext(ctx, "activity failed", append(attrs, "code", appErr.Type(), "message", appErr.Message())...)
	} else {
		log.WarnContext(ctx, "activity failed; it will be retried", append(attrs, "error", err)...)
	}
	return out
}
