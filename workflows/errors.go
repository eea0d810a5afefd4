package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
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
