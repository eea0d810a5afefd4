package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics/reports"
	"github.com/telcoplatform/platform/workflows"
)

// ReportScheduleBody is when a saved definition runs by itself.
type ReportScheduleBody struct {
	Frequency  string `json:"frequency" required:"true" enum:"daily,weekly,monthly"`
	Hour       *int   `json:"hour,omitempty" minimum:"0" maximum:"23" default:"6" doc:"Local hour of the run"`
	Minute     *int   `json:"minute,omitempty" minimum:"0" maximum:"59" default:"0"`
	Weekday    string `json:"weekday,omitempty" enum:"monday,tuesday,wednesday,thursday,friday,saturday,sunday" doc:"Weekly: the day (default monday)"`
	DayOfMonth *int   `json:"day_of_month,omitempty" minimum:"1" maximum:"28" doc:"Monthly: the day (default 1)"`
	Timezone   string `json:"timezone,omitempty" maxLength:"64" doc:"IANA zone of hour and day; default the query's timezone"`
}

// ReportDefinitionBody is a saved definition: a report query with its
// name, format, delivery and optional schedule.
type ReportDefinitionBody struct {
	Name        string `json:"name" required:"true" minLength:"1" maxLength:"200" example:"Monthly invoices by status"`
	Description string `json:"description,omitempty" maxLength:"2000"`
	AnalyticsReportBody
	Schedule *ReportScheduleBody `json:"schedule,omitempty" doc:"Run by itself every day, week or month (a Temporal schedule); absent: run by hand only"`
}

// input converts the body.
func (b *ReportDefinitionBody) input() reports.DefinitionInput {
	in := reports.DefinitionInput{Name: b.Name, Description: b.Description, Request: b.request()}
	if b.Schedule != nil {
		in.Schedule = &reports.ScheduleInput{Frequency: b.Schedule.Frequency, Hour: b.Schedule.Hour, Minute: b.Schedule.Minute,
			Weekday: b.Schedule.Weekday, DayOfMonth: b.Schedule.DayOfMonth, Timezone: b.Schedule.Timezone}
	}
	return in
}

// ReportScheduleItem is a definition's schedule.
type ReportScheduleItem struct {
	_          struct{} `nullable:"true"` // answered as null where there is none
	Frequency  string   `json:"frequency" enum:"daily,weekly,monthly"`
	Hour       int      `json:"hour"`
	Minute     int      `json:"minute"`
	Weekday    *string  `json:"weekday" doc:"Weekly only"`
	DayOfMonth *int     `json:"day_of_month" doc:"Monthly only"`
	Timezone   string   `json:"timezone"`
	ScheduleID string   `json:"schedule_id" doc:"The Temporal schedule (operators see it in the Temporal UI)"`
	NextRuns   []string `json:"next_runs,omitempty" doc:"On GET of one definition: the next run times, from the workflow engine"`
}

// ReportDefinitionItem is a saved definition.
type ReportDefinitionItem struct {
	ID             string                `json:"id" example:"rdef_8Hs2kQ"`
	Name           string                `json:"name"`
	Description    string                `json:"description"`
	Query          AnalyticsQueryItem    `json:"query"`
	From           *string               `json:"from" doc:"The absolute period, when the query has one"`
	To             *string               `json:"to"`
	Format         string                `json:"format" enum:"json,csv"`
	Delivery       AnalyticsDeliveryBody `json:"delivery"`
	OrganizationID *string               `json:"organization_id" doc:"Provider staff's choice of the organization read; null: the owner's own organization, or every organization when provider staff saved it"`
	Schedule       *ReportScheduleItem   `json:"schedule"`
	LastRunID      *string               `json:"last_run_id"`
	LastRunAt      *string               `json:"last_run_at"`
	CreatedBy      string                `json:"created_by"`
	CreatedAt      string                `json:"created_at"`
	UpdatedAt      string                `json:"updated_at"`
}

// reportDefinitionItem renders a definition.
func reportDefinitionItem(d *reports.Definition) ReportDefinitionItem {
	it := ReportDefinitionItem{ID: d.ID, Name: d.Name, Description: d.Description, Query: analyticsQueryItem(d.Query), Format: d.Format,
		Delivery: AnalyticsDeliveryBody{Method: d.DeliveryMethod, NotificationEmail: d.NotificationEmail}, LastRunAt: optTimestamp(d.LastRunAt),
		CreatedBy: d.CreatedBy, CreatedAt: models.Timestamp(d.CreatedAt), UpdatedAt: models.Timestamp(d.UpdatedAt)}
	if d.Query.From != "" {
		it.From, it.To = &d.Query.From, &d.Query.To
	}
	if d.ReadOrganizationID != "" {
		it.OrganizationID = &d.ReadOrganizationID
	}
	if d.LastRunID != "" {
		it.LastRunID = &d.LastRunID
	}
	if sc := d.Schedule; sc != nil {
		si := &ReportScheduleItem{Frequency: sc.Frequency, Hour: sc.Hour, Minute: sc.Minute, Timezone: sc.Timezone, ScheduleID: d.ScheduleID}
		if sc.Weekday != "" {
			si.Weekday = &sc.Weekday
		}
		if sc.DayOfMonth != 0 {
			si.DayOfMonth = &sc.DayOfMonth
		}
		it.Schedule = si
	}
	return it
}

// ReportDefinitionOutput wraps one definition.
type ReportDefinitionOutput struct {
	Status int
	Body   struct {
		Envelope
		Definition ReportDefinitionItem `json:"definition"`
	}
}

// ReportDefinitionsOutput lists definitions.
type ReportDefinitionsOutput struct {
	Body struct {
		Envelope
		Definitions []ReportDefinitionItem `json:"definitions"`
		Pagination  Pagination             `json:"pagination"`
	}
}

// definitionPath names one definition.
type definitionPath struct {
	DefinitionID string `path:"definition_id" maxLength:"64" doc:"The definition (rdef_...)"`
}

// syncReportSchedule makes the workflow engine's schedule of definition d
// match it: created, updated or deleted (old is d before the change, nil
// for a new one; d nil for a deleted one). Errors: DEPENDENCY_UNAVAILABLE.
func (s *Server) syncReportSchedule(ctx context.Context, old, d *reports.Definition) error {
	hadSchedule, wantSchedule := old != nil && old.ScheduleID != "", d != nil && d.ScheduleID != ""
	if !hadSchedule && !wantSchedule {
		return nil
	}
	unavailable := func(err error) error {
		e := models.Errorf(models.CodeDependencyUnavailable, "the workflow engine is unavailable, so the schedule cannot be changed; retry later").WithDetail("retry_after", 5)
		e.Cause = err
		return e
	}
	if s.temporal == nil {
		return unavailable(nil)
	}
	sc := s.temporal.ScheduleClient()
	ctx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	var err error
	switch {
	case wantSchedule && hadSchedule:
		err = sc.GetHandle(ctx, d.ScheduleID).Update(ctx, clientScheduleUpdate(s, d))
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			_, err = sc.Create(ctx, workflows.AnalyticsScheduleOptions(s.taskQueues(), d))
		}
	case wantSchedule:
		_, err = sc.Create(ctx, workflows.AnalyticsScheduleOptions(s.taskQueues(), d))
	default:
		err = sc.GetHandle(ctx, old.ScheduleID).Delete(ctx)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			err = nil
		}
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// nextRuns reads the next run times of d's schedule; nil when unknown.
func (s *Server) nextRuns(ctx context.Context, d *reports.Definition) []string {
	if s.temporal == nil || d.ScheduleID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, workflowStartTimeout)
	defer cancel()
	desc, err := s.temporal.ScheduleClient().GetHandle(ctx, d.ScheduleID).Describe(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "reading a report schedule failed", "schedule_id", d.ScheduleID, "error", err)
		return nil
	}
	out := make([]string, 0, len(desc.Info.NextActionTimes))
	for _, t := range desc.Info.NextActionTimes {
		out = append(out, models.Timestamp(t))
	}
	return out
}

// registerAnalyticsReportDefinitions registers saved definitions (docs/analytics.md).
func (s *Server) registerAnalyticsReportDefinitions(tags []string) {
	read, write := access{permission: reports.PermissionRead}, access{permission: reports.PermissionWrite}
	register(s, huma.Operation{OperationID: "create-analytics-report-definition", Method: http.MethodPost, Path: "/analytics/report-definitions",
		Summary: "Save a report definition", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Saves a report builder query with its name, format and delivery, to run again by hand (POST .../{definition_id}/run) or, with " +
			"schedule, by itself every day, week or month (a Temporal schedule per definition). The query is checked as POST /v1/analytics/reports " +
			"checks it, the dataset's permission included. At most 100 definitions per organization and environment."},
		write, func(ctx context.Context, in *struct{ Body ReportDefinitionBody }) (*ReportDefinitionOutput, error) {
			p := principal(ctx)
			d, err := s.analyticsReports.CreateDefinition(ctx, p, in.Body.input())
			if err != nil {
				return nil, err
			}
			if err := s.syncReportSchedule(ctx, nil, d); err != nil {
				if _, derr := s.analyticsReports.DeleteDefinition(context.WithoutCancel(ctx), p, d.ID); derr != nil {
					s.log.ErrorContext(ctx, "removing a definition whose schedule failed", "definition_id", d.ID, "error", derr)
				}
				return nil, err
			}
			out := &ReportDefinitionOutput{Status: http.StatusCreated}
			out.Body.Definition = reportDefinitionItem(d)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-analytics-report-definitions", Method: http.MethodGet, Path: "/analytics/report-definitions",
		Summary: "List report definitions", Tags: tags, Description: "The saved definitions of the caller's organization and environment, newest first."},
		read, func(ctx context.Context, in *struct {
			ListParams
			Scheduled string `query:"scheduled" enum:"true,false" doc:"Only the scheduled (true) or unscheduled (false) definitions"`
		}) (*ReportDefinitionsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			var sched *bool
			if in.Scheduled != "" {
				v := in.Scheduled == "true"
				sched = &v
			}
			defs, total, err := s.analyticsReports.ListDefinitions(ctx, principal(ctx), sched, pr)
			if err != nil {
				return nil, err
			}
			out := &ReportDefinitionsOutput{}
			out.Body.Definitions = mapSlice(defs, reportDefinitionItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-analytics-report-definition", Method: http.MethodGet, Path: "/analytics/report-definitions/{definition_id}",
		Summary: "Get a report definition", Tags: tags, Description: "The definition; a scheduled one with its next run times. Another organization's is 404."},
		read, func(ctx context.Context, in *definitionPath) (*ReportDefinitionOutput, error) {
			d, err := s.analyticsReports.GetDefinition(ctx, principal(ctx), in.DefinitionID)
			if err != nil {
				return nil, err
			}
			out := &ReportDefinitionOutput{Status: http.StatusOK}
			out.Body.Definition = reportDefinitionItem(d)
			if out.Body.Definition.Schedule != nil {
				out.Body.Definition.Schedule.NextRuns = s.nextRuns(ctx, d)
			}
			return out, nil
		})
	register(s, huma.Operation{OperationID: "replace-analytics-report-definition", Method: http.MethodPut, Path: "/analytics/report-definitions/{definition_id}",
		Summary: "Replace a report definition", Tags: tags,
		Description: "Replaces the definition whole (absent fields take their defaults); a schedule added, changed or removed changes its Temporal schedule."},
		write, func(ctx context.Context, in *struct {
			DefinitionID string `path:"definition_id" maxLength:"64" doc:"The definition (rdef_...)"`
			Body         ReportDefinitionBody
		}) (*ReportDefinitionOutput, error) {
			p := principal(ctx)
			old, d, err := s.analyticsReports.UpdateDefinition(ctx, p, in.DefinitionID, in.Body.input())
			if err != nil {
				return nil, err
			}
			if err := s.syncReportSchedule(ctx, old, d); err != nil {
				if rerr := s.analyticsReports.RestoreDefinition(context.WithoutCancel(ctx), old); rerr != nil {
					s.log.ErrorContext(ctx, "restoring a definition whose schedule failed", "definition_id", d.ID, "error", rerr)
				}
				return nil, err
			}
			out := &ReportDefinitionOutput{Status: http.StatusOK}
			out.Body.Definition = reportDefinitionItem(d)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-analytics-report-definition", Method: http.MethodDelete, Path: "/analytics/report-definitions/{definition_id}",
		Summary: "Delete a report definition", Tags: tags, DefaultStatus: http.StatusNoContent,
		Description: "Deletes the definition and its schedule. Its runs stay (GET /v1/analytics/reports?definition_id=...)."},
		write, func(ctx context.Context, in *definitionPath) (*struct{}, error) {
			p := principal(ctx)
			d, err := s.analyticsReports.DeleteDefinition(ctx, p, in.DefinitionID)
			if err != nil {
				return nil, err
			}
			if err := s.syncReportSchedule(ctx, d, nil); err != nil {
				if rerr := s.analyticsReports.RestoreDefinition(context.WithoutCancel(ctx), d); rerr != nil {
					s.log.ErrorContext(ctx, "restoring a definition whose schedule could not be deleted", "definition_id", d.ID, "error", rerr)
				}
				return nil, err
			}
			return nil, nil
		})
	register(s, huma.Operation{OperationID: "run-analytics-report-definition", Method: http.MethodPost, Path: "/analytics/report-definitions/{definition_id}/run",
		Summary: "Run a report definition", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Runs the saved definition now, as POST /v1/analytics/reports would (the caller's permissions apply; a relative period is read as of now). 202 with the report."},
		read, func(ctx context.Context, in *definitionPath) (*AnalyticsReportOutput, error) {
			op, err := s.analyticsReports.NewDefinitionRun(ctx, principal(ctx), in.DefinitionID)
			if err != nil {
				return nil, err
			}
			return s.startAnalyticsReport(ctx, op)
		})
}

// clientScheduleUpdate is d's schedule updater on s's task queues.
func clientScheduleUpdate(s *Server, d *reports.Definition) client.ScheduleUpdateOptions {
	return client.ScheduleUpdateOptions{DoUpdate: workflows.UpdateAnalyticsSchedule(s.taskQueues(), d)}
}
