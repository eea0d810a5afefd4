package workflows_test

import (
	"reflect"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/workflows"
)

// TestTaskQueuesByPriority checks the task queue of each priority, with
// the queues configured and with the defaults.
func TestTaskQueuesByPriority(t *testing.T) {
	for _, c := range []struct {
		q                       workflows.TaskQueues
		interactive, background string
	}{
		{workflows.TaskQueues{}, "platform", "platform-background"},
		{workflows.TaskQueues{Interactive: "tq"}, "tq", "tq-background"},
		{workflows.TaskQueues{Interactive: "tq", Background: "bulk"}, "tq", "bulk"},
		{workflows.TaskQueues{Background: "bulk"}, "platform", "bulk"},
	} {
		if got := c.q.For(workflows.Interactive); got != c.interactive {
			t.Errorf("%+v interactive: %q, want %q", c.q, got, c.interactive)
		}
		if got := c.q.For(workflows.Background); got != c.background {
			t.Errorf("%+v background: %q, want %q", c.q, got, c.background)
		}
	}
}

// TestStartOptions checks the options of a tenant's workflow (its request
// id, a duplicate refused, the four search attributes) and of the
// housekeeping singleton (joined while it runs, OperationType only).
func TestStartOptions(t *testing.T) {
	queues := workflows.TaskQueues{Interactive: "tq", Background: "tq-bg"}
	got := workflows.StartOptions(queues, workflows.Start{ID: "bulk_1", Priority: workflows.Background,
		OrganizationID: "org_1", Environment: models.EnvTest, OperationType: "bulk_provision", ResourceID: "bulk_1"})
	want := client.StartWorkflowOptions{
		ID:                                       "bulk_1",
		TaskQueue:                                "tq-bg",
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            "Bulk provision for org_1 (test)",
		StaticDetails:                            "**Work**: `bulk_provision` on `bulk_1`\n\n**Tenant**: `org_1` (test). Its workflows: `OrganizationId = \"org_1\" AND Environment = \"test\"`",
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.OrganizationIDKey.ValueSet("org_1"),
			workflows.EnvironmentKey.ValueSet("test"),
			workflows.OperationTypeKey.ValueSet("bulk_provision"),
			workflows.ResourceIDKey.ValueSet("bulk_1"),
		),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tenant start\n%+v\nwant\n%+v", got, want)
	}

	got = workflows.StartOptions(workflows.TaskQueues{Interactive: "tq"}, workflows.Start{ID: workflows.HousekeepingWorkflowID,
		OperationType: "housekeeping", Singleton: true})
	want = client.StartWorkflowOptions{
		ID:                       workflows.HousekeepingWorkflowID,
		TaskQueue:                "tq",
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes:    temporal.NewSearchAttributes(workflows.OperationTypeKey.ValueSet("housekeeping")),
		StaticSummary:            "Housekeeping",
		StaticDetails:            "**Work**: `housekeeping`",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("singleton start\n%+v\nwant\n%+v", got, want)
	}
}

// TestStartSummaries checks the one line and the details an operator reads
// in the Temporal UI: a given summary wins; otherwise the kind of work,
// what it is about and the tenant; the API link in the details.
func TestStartSummaries(t *testing.T) {
	for _, c := range []struct {
		st            workflows.Start
		summary, link string
	}{
		{workflows.Start{ID: "prov_1", OrganizationID: "org_1", Environment: models.EnvLive, OperationType: "provisioning", ResourceID: "svc_1",
			Link: "http://api/v1/operations/prov_1"}, "Provisioning svc_1 for org_1 (live)", "**API**: http://api/v1/operations/prov_1"},
		{workflows.Start{ID: "sub_1", OrganizationID: "org_1", Environment: models.EnvTest, OperationType: "subscription", Summary: "Subscription sub_1"},
			"Subscription sub_1", ""},
		{workflows.Start{ID: "x"}, "Workflow", ""},
	} {
		got := workflows.StartOptions(workflows.TaskQueues{}, c.st)
		if got.StaticSummary != c.summary {
			t.Errorf("%s: summary %q, want %q", c.st.ID, got.StaticSummary, c.summary)
		}
		if c.link != "" && !strings.Contains(got.StaticDetails, c.link) {
			t.Errorf("%s: details %q lack %q", c.st.ID, got.StaticDetails, c.link)
		}
	}
}
