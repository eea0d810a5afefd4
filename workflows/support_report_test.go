package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// TestSupportReport runs the report workflow with its real activities on a
// real store: a run completes with its file and report.completed; without
// a blob store it ends failed (after its retries) with report.failed; a
// cancelled run ends cancelled with no event.
func TestSupportReport(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, err := support.NewStore(store).CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general"}); err != nil {
		t.Fatal(err)
	}
	ops := operations.NewStore(store)
	newReport := func() string {
		spec, err := support.ValidateReport(customer, support.ReportRequest{Grouping: []string{"category"}, Format: "csv"}, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		id := models.NewID(models.PrefixReport)
		if err := ops.CreateOperation(ctx, customer.OwnScope(), support.NewReportOperation(id, spec)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	events := func(typ, id string) int64 {
		var n int64
		store.DB.Table("events").Where("type = ? AND resource_id = ?", typ, id).Count(&n)
		return n
	}
	run := func(id string, blobs *blob.Bucket, setup func(env *testsuite.TestWorkflowEnvironment)) error {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.RegisterWorkflowWithOptions(workflows.SupportReport, workflow.RegisterOptions{Name: workflows.SupportReportWorkflow})
		env.RegisterActivityWithOptions(activities.NewReports(store, blobs, "http://api.test", time.Hour),
			activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.ReportsActivities]()})
		if setup != nil {
			setup(env)
		}
		env.ExecuteWorkflow(workflows.SupportReportWorkflow, workflows.ReportInput{ReportID: id})
		if !env.IsWorkflowCompleted() {
			t.Fatal("the workflow did not complete")
		}
		return env.GetWorkflowError()
	}

	t.Run("completes", func(t *testing.T) {
		id := newReport()
		if err := run(id, testenv.Blobs(t), nil); err != nil {
			t.Fatal(err)
		}
		op, _ := ops.OperationIn(ctx, customer.OwnScope(), id)
		res := support.ResultOf(op)
		if op.Status != operations.OpCompleted || res == nil || res.RowCount != 1 || events(support.EventReportCompleted, id) != 1 {
			t.Fatalf("operation %+v, result %+v", op, res)
		}
	})
	t.Run("fails without a blob store", func(t *testing.T) {
		id := newReport()
		if err := run(id, nil, nil); err == nil {
			t.Fatal("the workflow succeeded")
		}
		op, _ := ops.OperationIn(ctx, customer.OwnScope(), id)
		if op.Status != operations.OpFailed || op.Error == nil || op.Error.Code != models.CodeDependencyUnavailable ||
			op.Step(support.ReportStepQuery).Status != operations.StepFailed || events(support.EventReportFailed, id) != 1 {
			t.Fatalf("operation %+v", op)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		id := newReport()
		err := run(id, testenv.Blobs(t), func(env *testsuite.TestWorkflowEnvironment) {
			env.OnActivity(workflows.ActivityName(workflows.ReportsActivities.Generate), mock.Anything, mock.Anything).
				Return(&support.ReportResult{}, nil).After(time.Hour)
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
		})
		if err == nil {
			t.Fatal("the cancelled workflow succeeded")
		}
		op, _ := ops.OperationIn(ctx, customer.OwnScope(), id)
		if op.Status != operations.OpCancelled || events(support.EventReportFailed, id) != 0 || events(support.EventReportCompleted, id) != 0 {
			t.Fatalf("operation %+v", op)
		}
	})
}
