package models

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code (UPPER_SNAKE), mapped to an HTTP status in one table in api/errors.go.
type Code string

// Error codes shared by every area (see docs/api.md for the HTTP status of each).
const (
	CodeValidation              Code = "VALIDATION_ERROR"
	CodeInvalidJSON             Code = "INVALID_JSON"
	CodeUnsupportedAPIVersion   Code = "UNSUPPORTED_API_VERSION"
	CodeUnauthenticated         Code = "UNAUTHENTICATED"
	CodeInvalidAPIKey           Code = "INVALID_API_KEY"
	CodeInvalidToken            Code = "INVALID_TOKEN"
	CodeTokenExpired            Code = "TOKEN_EXPIRED"
	CodeInvalidSignature        Code = "INVALID_SIGNATURE"
	CodeInsufficientFunds       Code = "INSUFFICIENT_FUNDS"
	CodeInsufficientPermissions Code = "INSUFFICIENT_PERMISSIONS"
	CodeIPNotAllowed            Code = "IP_NOT_ALLOWED"
	CodeAccessRestricted        Code = "ACCESS_RESTRICTED"
	CodeNotFound                Code = "NOT_FOUND"
	CodeMethodNotAllowed        Code = "METHOD_NOT_ALLOWED"
	CodeDuplicatePayment        Code = "DUPLICATE_PAYMENT"
	CodeServiceConflict         Code = "SERVICE_CONFLICT"
	CodeInvalidStateTransition  Code = "INVALID_STATE_TRANSITION"
	CodeIdempotencyKeyInUse     Code = "IDEMPOTENCY_KEY_IN_USE"
	CodeAlreadyExists           Code = "ALREADY_EXISTS"
	CodeResourceLimit           Code = "RESOURCE_LIMIT_EXCEEDED"
	CodePayloadTooLarge         Code = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType    Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeUnavailableAtLocation   Code = "SERVICE_UNAVAILABLE_AT_LOCATION"
	CodeInsufficientBandwidth   Code = "INSUFFICIENT_BANDWIDTH"
	CodeLocationNotServiceable  Code = "LOCATION_NOT_SERVICEABLE"
	CodeIdempotencyKeyMismatch  Code = "IDEMPOTENCY_KEY_MISMATCH"
	CodeRateLimitExceeded       Code = "RATE_LIMIT_EXCEEDED"
	CodeConcurrencyLimit        Code = "CONCURRENCY_LIMIT_EXCEEDED"
	CodeInternal                Code = "INTERNAL_ERROR"
	CodeServiceMaintenance      Code = "SERVICE_MAINTENANCE"
	CodeDependencyUnavailable   Code = "DEPENDENCY_UNAVAILABLE"
	CodeProvisioningFailed      Code = "PROVISIONING_FAILED"
	CodeFailedDependency        Code = "FAILED_DEPENDENCY"
	CodeQueryTooDeep            Code = "QUERY_TOO_DEEP"
	CodeQueryTooComplex         Code = "QUERY_TOO_COMPLEX"
)

// FieldIssue names one invalid input field and what is wrong with it.
type FieldIssue struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Error is the one error type of the platform: a code, a message safe to show
// to the client, optional details, and an optional internal cause that is
// logged but never shown.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Cause   error
}

// Error returns the code and message (and the cause, for logs).
func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Cause }

// WithDetail returns e with one more detail set.
func (e *Error) WithDetail(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Errorf returns an *Error with the code and a formatted client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a NOT_FOUND error for the named kind of resource.
func NotFound(what string) *Error {
	return Errorf(CodeNotFound, "%s not found", what)
}

// Invalid returns a VALIDATION_ERROR listing the invalid fields.
func Invalid(issues ...FieldIssue) *Error {
	msg := "the request has invalid fields"
	if len(issues) == 1 {
		msg = fmt.Sprintf("%s: %s", issues[0].Field, issues[0].Issue)
	}
	return &Error{Code: CodeValidation, Message: msg, Details: map[string]any{"fields": issues}}
}

// Internal wraps an unexpected failure; its cause is logged, never shown.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, Message: "an internal error occurred", Cause: cause}
}

// ErrorCode returns the code of err, or INTERNAL_ERROR for errors that are not *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as *Error, wrapping unknown errors as internal ones.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

// Validator collects field issues; Err returns nil when there are none.
type Validator struct{ issues []FieldIssue }

// Check records issue for field when ok is false.
func (v *Validator) Check(ok bool, field, issue string) {
	if !ok {
		v.issues = append(v.issues, FieldIssue{Field: field, Issue: issue})
	}
}

// Add records an issue for field.
func (v *Validator) Add(field, issue string) { v.Check(false, field, issue) }

// Err returns a VALIDATION_ERROR with every recorded issue, or nil.
func (v *Validator) Err() error {
	if len(v.issues) == 0 {
		return nil
	}
	return Invalid(v.issues...)
}
