package operations_test

import (
	"slices"
	"testing"

	"github.com/telcoplatform/platform/models/automation"
	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
)

// TestOperationFilterSchema: the type enum names every operation type the
// domains declare, and every field compiles.
func TestOperationFilterSchema(t *testing.T) {
	for _, typ := range []operations.OperationType{operations.OpTypeProvisioning, services.OpTypeModification, services.OpTypeScaling,
		services.OpTypeDecommission, operations.OpTypeBulkProvision, operations.OpTypeBulkModify, operations.OpTypeBulkStatus,
		automation.OpTypeOrchestration, automation.OpTypeOrchestrationTrigger, operations.OpTypeSupportReport} {
		if !slices.Contains(operations.TypeNames(), string(typ)) {
			t.Errorf("TypeNames lacks %q", typ)
		}
	}
	for _, st := range operations.StatusNames() {
		if !operations.OperationStatus(st).Terminal() && st != "pending" && st != "in_progress" {
			t.Errorf("status %q is neither running nor terminal", st)
		}
	}
	for _, expr := range []string{
		"type = orchestration_trigger and status in (partial, rolled_back)",
		"resource_id is null or created_by != usr_1",
		"created_at >= 2026-01-01 and updated_at < 2026-02-01T00:00:00Z and finished_at is not null",
	} {
		if _, err := filter.Compile(operations.OperationFilterSchema(), expr); err != nil {
			t.Errorf("%q: %v", expr, err)
		}
	}
	if _, err := filter.Compile(operations.OperationFilterSchema(), "status = done"); err == nil {
		t.Error("status = done compiled")
	}
}
