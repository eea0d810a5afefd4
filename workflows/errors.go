package workflows

import (
	"errors"
	"fmt"
	"maps"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// ErrorOf returns the domain error that err, the failure of an activity
// (or of a child workflow, whose failure wraps its activity's), carries:
// the reverse of activities.ApplicationError. An application error gives
// its type as the code (INTERNAL_ERROR when it has none), its client-safe
// message and its details; a timeout is DEPENDENCY_UNAVAILABLE (the
// network did not answer in time), a cancellation PROVISIONING_FAILED
// ("cancelled"), anything else INTERNAL_ERROR. The result never carries a
// cause: it is what operations record and clients read.
func ErrorOf(err error) *models.Error {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		e := &models.Error{Code: models.Code(appErr.Type()), Message: appErr.Message()}
		if appErr.HasDetails() {
			var d map[string]any
			if appErr.Details(&d) == nil {
				e.Details = d
			}
		}
		if e.Code == "" {
			e.Code = models.CodeInternal
		}
		return e
	}
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) {
		return &models.Error{Code: models.CodeDependencyUnavailable, Message: "the network did not answer in time"}
	}
	if temporal.IsCanceledError(err) {
		return &models.Error{Code: models.CodeProvisioningFailed, Message: "cancelled"}
	}
	return &models.Error{Code: models.CodeInternal, Message: "an internal error occurred"}
}

// StepFailed is the PROVISIONING_FAILED error of an operation whose step
// failed with err: its message names the step and the reason, its details
// the step, the reason's code ("reason_code"), whether everything was
// released ("compensated"), then extra, the reason's own details (neither
// overriding a key already set) and the compensations that failed. Used by
// the saga of the workflows and by the bulk items run in an activity, so
// both end an operation with the same error.
func StepFailed(step string, err error, extra map[string]any, compensationErrors []string) *operations.OperationError {
	r := ErrorOf(err)
	details := map[string]any{"step": step, "reason_code": string(r.Code), "compensated": len(compensationErrors) == 0}
	// Copying between maps gives the same map in any iteration order.
	maps.Copy(details, extra) //workflowcheck:ignore
	//workflowcheck:ignore
	for k, v := range r.Details {
		if _, taken := details[k]; !taken {
			details[k] = v
		}
	}
	if len(compensationErrors) > 0 {
		details["compensation_errors"] = compensationErrors
	}
	return &operations.OperationError{Code: models.CodeProvisioningFailed, Message: fmt.Sprintf("%s failed: %s", step, r.Message), Details: details}
}

// CancelledNotReleased is the PROVISIONING_FAILED error of an operation
// cancelled at step whose compensations did not all succeed (message says
// so): nil when every compensation succeeded.
func CancelledNotReleased(step, message string, compensationErrors []string) *operations.OperationError {
	if len(compensationErrors) == 0 {
		return nil
	}
	return &operations.OperationError{Code: models.CodeProvisioningFailed, Message: message,
		Details: map[string]any{"step": step, "compensated": false, "compensation_errors": compensationErrors}}
}
