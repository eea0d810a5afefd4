package workflows

import (
	"context"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/models/operations"
)

// Registered names of the analytics report builder's workflows.
const (
	// AnalyticsReportWorkflow runs one report (its id is the report's
	// id, rpt_..., which is also the operation's request_id).
	AnalyticsReportWorkflow = "AnalyticsReport"
	// ScheduledAnalyticsReportWorkflow is what a saved definition's
	// Temporal schedule starts at every firing: it creates the run and
	// runs it as a child AnalyticsReport.
	ScheduledAnalyticsReportWorkflow = "ScheduledAnalyticsReport"
)

// AnalyticsReportCompleteInput is the argument of AnalyticsReports.Complete.
type AnalyticsReportCompleteInput struct {
	ReportID string         `json:"report_id"`
	Result   reports.Result `json:"result"`
}

// ScheduledReportInput is the argument of ScheduledAnalyticsReport: the
// saved definition its schedule runs.
type ScheduledReportInput struct {
	DefinitionID string `json:"definition_id"`
}

// PrepareReportInput is the argument of AnalyticsReports.Prepare: the
// definition, the firing's key (the scheduled workflow's id, one per
// firing) and the firing's time, which the definition's period is read at.
type PrepareReportInput struct {
	DefinitionID string    `json:"definition_id"`
	Key          string    `json:"key"`
	At           time.Time `json:"at"`
}

// PreparedReport is what AnalyticsReports.Prepare made: the run's id (""
// when the definition is gone or no longer scheduled) and its tenant.
type PreparedReport struct {
	ReportID       string             `json:"report_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
}

// AnalyticsReportsActivities are the activities of the analytics report
// workflows (activities.AnalyticsReports), named "AnalyticsReports.<Method>".
type AnalyticsReportsActivities interface {
	Prepare(ctx context.Context, in PrepareReportInput) (*PreparedReport, error)
	Begin(ctx context.Context, in ReportInput) error
	Generate(ctx context.Context, in ReportInput) (*reports.Result, error)
	Complete(ctx context.Context, in AnalyticsReportCompleteInput) error
	Fail(ctx context.Context, in ReportFailInput) error
}

// AnalyticsReport runs a report builder report, as SupportReport runs a
// support report: it marks it in progress, writes the file into the blob
// store (step query), then completes it (step deliver: the result,
// analytics_report.completed, the e-mail with the link when asked). A
// failure ends it failed (analytics_report.failed), a cancellation
// cancelled, recorded in a disconnected context.
func AnalyticsReport(ctx workflow.Context, in ReportInput) error {
	return runReport(ctx, in, reportSteps[AnalyticsReportsActivities, reports.Result, AnalyticsReportCompleteInput]{
		begin: AnalyticsReportsActivities.Begin, generate: AnalyticsReportsActivities.Generate, complete: AnalyticsReportsActivities.Complete,
		fail: AnalyticsReportsActivities.Fail,
		completeInput: func(id string, res reports.Result) AnalyticsReportCompleteInput {
			return AnalyticsReportCompleteInput{ReportID: id, Result: res}
		},
		query: reports.StepQuery, deliver: reports.StepDeliver,
	})
}

// ScheduledAnalyticsReport is one firing of a saved definition's schedule:
// it creates the run (once, keyed by this workflow's id) with the period
// read at the firing's time, then runs it as a child AnalyticsReport
// whose id is the report's, and waits for it. A definition deleted or
// unscheduled meanwhile makes it end at once, having run nothing.
func ScheduledAnalyticsReport(ctx workflow.Context, in ScheduledReportInput) error {
	actx := workflow.WithActivityOptions(ctx, ReportActivityOptions())
	info := workflow.GetInfo(ctx)
	var prep PreparedReport
	if err := call(summarized(actx, "prepare a run of report definition "+in.DefinitionID), AnalyticsReportsActivities.Prepare, PrepareReportInput{DefinitionID: in.DefinitionID, Key: info.WorkflowExecution.ID,
		At: workflow.Now(ctx).UTC()}).Get(actx, &prep); err != nil {
		return err
	}
	if prep.ReportID == "" {
		workflow.GetLogger(ctx).Info("scheduled report skipped: its definition is gone or no longer scheduled", "definition_id", in.DefinitionID)
		return nil
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            prep.ReportID,
		ParentClosePolicy:     enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: searchAttributes(prep.OrganizationID, prep.Environment, string(operations.OpTypeAnalyticsReport), in.DefinitionID),
	})
	return workflow.ExecuteChildWorkflow(cctx, AnalyticsReportWorkflow, ReportInput{ReportID: prep.ReportID}).Get(cctx, nil)
}

// AnalyticsScheduleOptions returns the Temporal schedule of saved
// definition d (d.Schedule set) on queues: a calendar at the schedule's
// hour and minute in its zone (weekly on its weekday, monthly on its day),
// starting ScheduledAnalyticsReport on the background queue; a firing
// while the previous run goes on is skipped, one missed by up to an hour
// (the server down) still runs.
func AnalyticsScheduleOptions(queues TaskQueues, d *reports.Definition) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:            d.ScheduleID,
		Spec:          AnalyticsScheduleSpec(d.Schedule),
		Action:        analyticsScheduleAction(queues, d),
		Overlap:       enums.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Hour,
		Note:          "analytics report definition " + d.ID + ": " + models.Truncate(d.Name, 100),
	}
}

// analyticsScheduleAction is what d's schedule starts.
func analyticsScheduleAction(queues TaskQueues, d *reports.Definition) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:                    d.ScheduleID,
		Workflow:              ScheduledAnalyticsReportWorkflow,
		Args:                  []any{ScheduledReportInput{DefinitionID: d.ID}},
		TaskQueue:             queues.For(Background),
		TypedSearchAttributes: searchAttributes(d.OrganizationID, d.Environment, string(operations.OpTypeAnalyticsReport), d.ID),
	}
}

// AnalyticsScheduleSpec is the calendar of a definition's schedule.
func AnalyticsScheduleSpec(s *reports.Schedule) client.ScheduleSpec {
	cal := client.ScheduleCalendarSpec{
		Second: []client.ScheduleRange{{Start: 0}},
		Minute: []client.ScheduleRange{{Start: s.Minute}},
		Hour:   []client.ScheduleRange{{Start: s.Hour}},
	}
	switch s.Frequency {
	case reports.FrequencyWeekly:
		cal.DayOfWeek = []client.ScheduleRange{{Start: s.WeekdayNumber()}}
	case reports.FrequencyMonthly:
		cal.DayOfMonth = []client.ScheduleRange{{Start: s.DayOfMonth}}
	}
	return client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{cal}, TimeZoneName: s.Timezone}
}

// UpdateAnalyticsSchedule returns the updater of d's existing schedule:
// its calendar, action and note replaced, its state (paused) kept.
func UpdateAnalyticsSchedule(queues TaskQueues, d *reports.Definition) func(client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
	return func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		sch := in.Description.Schedule
		spec := AnalyticsScheduleSpec(d.Schedule)
		sch.Spec = &spec
		sch.Action = analyticsScheduleAction(queues, d)
		if sch.Policy == nil {
			sch.Policy = &client.SchedulePolicies{}
		}
		sch.Policy.Overlap, sch.Policy.CatchupWindow = enums.SCHEDULE_OVERLAP_POLICY_SKIP, time.Hour
		return &client.ScheduleUpdate{Schedule: &sch}, nil
	}
}
