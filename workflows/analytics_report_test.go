package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/activities"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/builder"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
	"github.com/telcoplatform/platform/workflows"
)

// TestScheduledAnalyticsReport runs a schedule's firing with the real
// activities on a real store, the test clock set to the firing time: the
// run is created with the definition's relative period read at that time
// and completes as a child AnalyticsReport with its file and event; a
// firing of a deleted definition runs nothing.
func TestScheduledAnalyticsReport(t *testing.T) {
	ctx := context.Background()
	store, seeded := testenv.SeededStore(t)
	blobs := testenv.Blobs(t)
	customer := &models.Principal{ID: "ak_cust", OrganizationID: seeded.Demo.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	if _, err := support.NewStore(store).CreateTicket(ctx, customer, support.TicketInput{Title: "t", Description: "d", Category: "general", Priority: "high"}); err != nil {
		t.Fatal(err)
	}
	rs := reports.NewStore(store, blobs)
	d, err := rs.CreateDefinition(ctx, customer, reports.DefinitionInput{Name: "weekly tickets", Request: reports.Request{Format: "csv",
		Query: builder.Definition{Dataset: "tickets", Metrics: []string{"count"}, Dimensions: []string{"priority"}, Period: "last_7_days"}},
		Schedule: &reports.ScheduleInput{Frequency: "daily"}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(defID string, at time.Time) (*testsuite.TestWorkflowEnvironment, error) {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.SetStartTime(at)
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "analytics-report-" + defID + "-" + at.Format(time.RFC3339)})
		env.RegisterWorkflowWithOptions(workflows.ScheduledAnalyticsReport, workflow.RegisterOptions{Name: workflows.ScheduledAnalyticsReportWorkflow})
		env.RegisterWorkflowWithOptions(workflows.AnalyticsReport, workflow.RegisterOptions{Name: workflows.AnalyticsReportWorkflow})
		env.RegisterActivityWithOptions(activities.NewAnalyticsReports(store, blobs, "http://api.test", time.Hour),
			activity.RegisterOptions{Name: workflows.ActivityPrefix[workflows.AnalyticsReportsActivities]()})
		env.ExecuteWorkflow(workflows.ScheduledAnalyticsReportWorkflow, workflows.ScheduledReportInput{DefinitionID: defID})
		if !env.IsWorkflowCompleted() {
			t.Fatal("the workflow did not complete")
		}
		return env, env.GetWorkflowError()
	}
	// The firing at 06:00 UTC tomorrow: the period is the 7 days before it.
	at := time.Now().UTC().Truncate(24 * time.Hour).Add(30 * time.Hour)
	if _, err := run(d.ID, at); err != nil {
		t.Fatal(err)
	}
	got, _ := rs.GetDefinition(ctx, customer, d.ID)
	op, err := operations.NewStore(store).OperationIn(ctx, customer.OwnScope(), got.LastRunID)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := reports.SpecOf(op)
	res := reports.ResultOf(op)
	if op.Status != operations.OpCompleted || res == nil || res.RowCount != 1 || !spec.Scheduled || !spec.To.Equal(at) || !spec.From.Equal(at.AddDate(0, 0, -7)) {
		t.Fatalf("operation %+v, spec %+v, result %+v", op, spec, res)
	}
	var n int64
	store.DB.Table("events").Where("type = ? AND resource_id = ?", reports.EventCompleted, op.ID).Count(&n)
	if n != 1 {
		t.Fatalf("%d completion events", n)
	}

	if _, err := rs.DeleteDefinition(ctx, customer, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := run(d.ID, at.Add(24*time.Hour)); err != nil {
		t.Fatalf("a deleted definition's firing: %v", err)
	}
	var runs int64
	store.DB.Table("operations").Where("type = ?", operations.OpTypeAnalyticsReport).Count(&runs)
	if runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
}

// TestAnalyticsScheduleSpec checks the calendars of the three frequencies.
func TestAnalyticsScheduleSpec(t *testing.T) {
	for _, tt := range []struct {
		s                  reports.Schedule
		dayOfWeek, dayOfMo int // -1: every day
	}{
		{reports.Schedule{Frequency: "daily", Hour: 6, Minute: 30, Timezone: "Europe/Paris"}, -1, -1},
		{reports.Schedule{Frequency: "weekly", Hour: 7, Weekday: "sunday", Timezone: "UTC"}, 0, -1},
		{reports.Schedule{Frequency: "monthly", Hour: 0, DayOfMonth: 28, Timezone: "America/Chicago"}, -1, 28},
	} {
		spec := workflows.AnalyticsScheduleSpec(&tt.s)
		c := spec.Calendars[0]
		if spec.TimeZoneName != tt.s.Timezone || c.Hour[0].Start != tt.s.Hour || c.Minute[0].Start != tt.s.Minute || c.Second[0].Start != 0 {
			t.Fatalf("%s: %+v", tt.s.Frequency, spec)
		}
		if (tt.dayOfWeek < 0) != (c.DayOfWeek == nil) || (tt.dayOfWeek >= 0 && c.DayOfWeek[0].Start != tt.dayOfWeek) {
			t.Fatalf("%s: day of week %+v", tt.s.Frequency, c.DayOfWeek)
		}
		if (tt.dayOfMo < 0) != (c.DayOfMonth == nil) || (tt.dayOfMo >= 0 && c.DayOfMonth[0].Start != tt.dayOfMo) {
			t.Fatalf("%s: day of month %+v", tt.s.Frequency, c.DayOfMonth)
		}
	}
}
