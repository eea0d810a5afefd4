package workflows_test

import (
	"testing"

	"github.com/telcoplatform/platform/workflows"
)

// TestActivityNames checks that a method expression of an activity
// interface names the activity type recorded in the histories.
func TestActivityNames(t *testing.T) {
	for _, c := range []struct {
		m    any
		want string
	}{
		{workflows.ProvisioningActivities.Begin, "Provisioning.Begin"},
		{workflows.ProvisioningActivities.ReleaseNetwork, "Provisioning.ReleaseNetwork"},
		{workflows.ServiceChangeActivities.StartMaintenance, "ServiceChange.StartMaintenance"},
		{workflows.DecommissionActivities.RollbackMigration, "Decommission.RollbackMigration"},
		{workflows.WebhooksActivities.Attempt, "Webhooks.Attempt"},
		{workflows.BillingActivities.ClosePeriod, "Billing.ClosePeriod"},
		{workflows.BulkActivities.PrepareRevert, "Bulk.PrepareRevert"},
		{workflows.OrchestrationActivities.CheckAvailability, "Orchestration.CheckAvailability"},
		{workflows.HousekeepingActivities.Purge, "Housekeeping.Purge"},
	} {
		if got := workflows.ActivityName(c.m); got != c.want {
			t.Errorf("ActivityName = %q, want %q", got, c.want)
		}
	}
	if got := workflows.ActivityPrefix[workflows.OrchestrationActivities](); got != "Orchestration." {
		t.Errorf("ActivityPrefix = %q", got)
	}
}

// TestActivityNameRejectsOtherFunctions checks that a function that is not
// a method of an activity interface is refused, not given a made-up name.
func TestActivityNameRejectsOtherFunctions(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a plain function")
		}
	}()
	workflows.ActivityName(workflows.Provisioning)
}
