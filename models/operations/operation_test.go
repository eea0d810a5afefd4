package operations_test

import (
	"errors"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
)

// TestCheckCancellable: who may cancel what. An item of a bulk job with no
// workflow of its own is cancelled through its job.
func TestCheckCancellable(t *testing.T) {
	writer := &models.Principal{Permissions: []string{"services:write"}}
	reader := &models.Principal{Permissions: []string{"services:read"}}
	item := func(status operations.OperationStatus, runID string) *operations.Operation {
		op := operations.NewOperation("prov_1", operations.OpTypeProvisioning, "svc_1", "ak_1", operations.ProvisioningSteps(false),
			map[string]any{"bulk_request_id": "bulk_1", "position": 3})
		op.Status, op.RunID = status, runID
		return op
	}
	own := operations.NewOperation("prov_2", operations.OpTypeProvisioning, "svc_2", "ak_1", operations.ProvisioningSteps(false), nil)
	own.Status, own.RunID = operations.OpInProgress, "run_2"
	cases := []struct {
		name   string
		p      *models.Principal
		op     *operations.Operation
		code   models.Code
		detail string
	}{
		{"running operation", writer, own, "", ""},
		{"without the write permission", reader, own, models.CodeInsufficientPermissions, ""},
		{"ended", writer, item(operations.OpCompleted, ""), models.CodeInvalidStateTransition, ""},
		{"already cancelled", writer, item(operations.OpCancelled, ""), "", ""},
		{"bulk item in its job's workflow", writer, item(operations.OpInProgress, ""), models.CodeInvalidStateTransition, "bulk_1"},
		{"bulk item with a workflow of its own", writer, item(operations.OpInProgress, "run_1"), "", ""},
	}
	for _, c := range cases {
		err := operations.CheckCancellable(c.p, c.op)
		if models.ErrorCode(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		if c.detail != "" {
			var e *models.Error
			if !errors.As(err, &e) || e.Details["bulk_request_id"] != c.detail {
				t.Errorf("%s: details of %v", c.name, err)
			}
		}
	}
	if got := item(operations.OpInProgress, "").BulkParent(); got != "bulk_1" {
		t.Errorf("BulkParent %q", got)
	}
	if got := own.BulkParent(); got != "" {
		t.Errorf("BulkParent of an operation of its own %q", got)
	}
}
