package api

import (
	"bytes"
	"context"
	"mime"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// ClockIntervalBody is a working period of a day: HH:MM clocks.
type ClockIntervalBody struct {
	Start string `json:"start" required:"true" pattern:"^([01][0-9]|2[0-4]):[0-5][0-9]$" doc:"Required: HH:MM, 00:00 to 24:00; before end" example:"09:00"`
	End   string `json:"end" required:"true" pattern:"^([01][0-9]|2[0-4]):[0-5][0-9]$" doc:"Required: HH:MM, 00:00 to 24:00 (24:00 is midnight at the end of the day); after start" example:"17:00"`
}

// WorkingHoursBody is a calendar's week as sent: each day's intervals, at
// most 12, not overlapping or touching; a day left out is closed.
type WorkingHoursBody struct {
	Monday    []ClockIntervalBody `json:"monday,omitempty" maxItems:"12"`
	Tuesday   []ClockIntervalBody `json:"tuesday,omitempty" maxItems:"12"`
	Wednesday []ClockIntervalBody `json:"wednesday,omitempty" maxItems:"12"`
	Thursday  []ClockIntervalBody `json:"thursday,omitempty" maxItems:"12"`
	Friday    []ClockIntervalBody `json:"friday,omitempty" maxItems:"12"`
	Saturday  []ClockIntervalBody `json:"saturday,omitempty" maxItems:"12"`
	Sunday    []ClockIntervalBody `json:"sunday,omitempty" maxItems:"12"`
}

func (w *WorkingHoursBody) input() *map[string][]support.ClockInterval {
	if w == nil {
		return nil
	}
	out := map[string][]support.ClockInterval{}
	days := [7][]ClockIntervalBody{w.Sunday, w.Monday, w.Tuesday, w.Wednesday, w.Thursday, w.Friday, w.Saturday}
	for d, name := range support.Weekdays() {
		for _, iv := range days[d] {
			out[name] = append(out[name], support.ClockInterval{Start: iv.Start, End: iv.End})
		}
	}
	return &out
}

// HolidayBody is a holiday as sent.
type HolidayBody struct {
	Date string `json:"date" required:"true" pattern:"^[0-9]{4}-[0-9]{2}-[0-9]{2}$" doc:"Required: a date YYYY-MM-DD; one holiday per date" example:"2026-12-25"`
	Name string `json:"name,omitempty" maxLength:"200" example:"Christmas Day"`
}

func holidayInputs(l *[]HolidayBody) *[]support.HolidayInput {
	if l == nil {
		return nil
	}
	out := make([]support.HolidayInput, len(*l))
	for i, h := range *l {
		out[i] = support.HolidayInput{Date: h.Date, Name: h.Name}
	}
	return &out
}

// CalendarCreateBody is the body of a calendar creation.
type CalendarCreateBody struct {
	Name         string            `json:"name" required:"true" minLength:"1" maxLength:"200" doc:"Required" example:"UK office hours"`
	Timezone     string            `json:"timezone" required:"true" minLength:"1" maxLength:"64" doc:"Required: an IANA time zone name" example:"Europe/London"`
	WorkingHours *WorkingHoursBody `json:"working_hours,omitempty" doc:"Default Monday to Friday 09:00-17:00; at least one working minute in the week"`
	Holidays     *[]HolidayBody    `json:"holidays,omitempty" maxItems:"1000" doc:"Dates not worked, each once"`
}

// CalendarUpdateBody is the body of a calendar update: absent fields are
// unchanged; working_hours and holidays, when sent, are replaced whole.
type CalendarUpdateBody struct {
	Name         *string           `json:"name,omitempty" minLength:"1" maxLength:"200"`
	Timezone     *string           `json:"timezone,omitempty" minLength:"1" maxLength:"64" doc:"An IANA time zone name" example:"Europe/London"`
	WorkingHours *WorkingHoursBody `json:"working_hours,omitempty" doc:"Replaces the week (a day left out is closed); at least one working minute in the week"`
	Holidays     *[]HolidayBody    `json:"holidays,omitempty" maxItems:"1000" doc:"Replaces the holidays"`
}

// ClockIntervalItem is a working period as answered.
type ClockIntervalItem struct {
	Start string `json:"start" example:"09:00"`
	End   string `json:"end" example:"17:00"`
}

// WorkingHoursItem is a calendar's week: every day, [] when closed.
type WorkingHoursItem struct {
	Monday    []ClockIntervalItem `json:"monday"`
	Tuesday   []ClockIntervalItem `json:"tuesday"`
	Wednesday []ClockIntervalItem `json:"wednesday"`
	Thursday  []ClockIntervalItem `json:"thursday"`
	Friday    []ClockIntervalItem `json:"friday"`
	Saturday  []ClockIntervalItem `json:"saturday"`
	Sunday    []ClockIntervalItem `json:"sunday"`
}

// HolidayItem is a holiday as answered.
type HolidayItem struct {
	Date string `json:"date" example:"2026-12-25"`
	Name string `json:"name" example:"Christmas Day"`
}

func holidayItem(h *support.Holiday) HolidayItem { return HolidayItem{Date: h.Date, Name: h.Name} }

// CalendarItem is a business calendar.
type CalendarItem struct {
	ID           string           `json:"id" example:"cal_3fK9aZ"`
	Name         string           `json:"name"`
	Timezone     string           `json:"timezone" example:"Europe/London"`
	WorkingHours WorkingHoursItem `json:"working_hours"`
	Holidays     []HolidayItem    `json:"holidays" doc:"By date"`
	CreatedAt    string           `json:"created_at"`
	UpdatedAt    string           `json:"updated_at"`
}

func calendarItem(c *support.Calendar) CalendarItem {
	wh := c.WorkingHours()
	day := func(name string) []ClockIntervalItem {
		out := []ClockIntervalItem{}
		for _, iv := range wh[name] {
			out = append(out, ClockIntervalItem{Start: iv.Start, End: iv.End})
		}
		return out
	}
	return CalendarItem{ID: c.ID, Name: c.Name, Timezone: c.Timezone,
		WorkingHours: WorkingHoursItem{Monday: day("monday"), Tuesday: day("tuesday"), Wednesday: day("wednesday"), Thursday: day("thursday"),
			Friday: day("friday"), Saturday: day("saturday"), Sunday: day("sunday")},
		Holidays: mapSlice(c.Holidays, holidayItem), CreatedAt: models.Timestamp(c.CreatedAt), UpdatedAt: models.Timestamp(c.UpdatedAt)}
}

// CalendarOutput wraps one calendar.
type CalendarOutput struct {
	Status int
	Body   struct {
		Envelope
		Calendar CalendarItem `json:"calendar"`
	}
}

func calendarOutput(status int, c *support.Calendar) *CalendarOutput {
	out := &CalendarOutput{Status: status}
	out.Body.Calendar = calendarItem(c)
	return out
}

// CalendarsOutput is a page of calendars.
type CalendarsOutput struct {
	Body struct {
		Envelope
		Calendars  []CalendarItem `json:"calendars"`
		Pagination Pagination     `json:"pagination"`
	}
}

// HolidayOutput wraps one holiday.
type HolidayOutput struct {
	Status int
	Body   struct {
		Envelope
		Holiday HolidayItem `json:"holiday"`
	}
}

// HolidayImportOutput is the outcome of an iCalendar import.
type HolidayImportOutput struct {
	Body struct {
		Envelope
		Imported int           `json:"imported" doc:"Holidays added"`
		Skipped  int           `json:"skipped" doc:"Dates passed over: the calendar already had a holiday on them (or the file named them twice)"`
		Holidays []HolidayItem `json:"holidays" doc:"The holidays added, by date"`
	}
}

// CalendarPath names a calendar in the path.
type CalendarPath struct {
	ID string `path:"calendar_id" maxLength:"64" example:"cal_standard"`
}

// HolidayPath names a holiday of a calendar in the path.
type HolidayPath struct {
	CalendarPath
	Date string `path:"date" maxLength:"10" doc:"YYYY-MM-DD" example:"2026-12-25"`
}

// HolidayImportInput is an iCalendar file to import.
type HolidayImportInput struct {
	CalendarPath
	FromYear    int    `query:"from_year" minimum:"1900" maximum:"2200" doc:"First year imported; default this year"`
	ToYear      int    `query:"to_year" minimum:"1900" maximum:"2200" doc:"Last year imported; default from_year + 2; at most 9 years after from_year"`
	ContentType string `header:"Content-Type" doc:"text/calendar"`
	RawBody     []byte `contentType:"text/calendar"`
}

// registerSupportSLA registers the SLA policies and the business calendars
// (provider staff: support:read to read, support:admin to write).
func (s *Server) registerSupportSLA(tags []string) {
	readers := " Provider staff with support:read only (403 for customers)."
	writers := " Provider staff with support:admin only (403 for everyone else, before the body is read)."
	read := access{permission: support.PermissionRead, staff: true}
	write := access{permission: support.PermissionAdmin, staff: true}
	register(s, huma.Operation{OperationID: "create-support-calendar", Method: http.MethodPost, Path: "/support/calendars", Summary: "Create a business calendar",
		Description: "Stores a calendar: working hours per weekday (HH:MM, 00:00 to 24:00, sorted, not overlapping) in an IANA time zone, and holidays. " +
			"SLA policies count business-hours targets in it." + writers, Tags: tags, DefaultStatus: http.StatusCreated},
		write, func(ctx context.Context, in *struct{ Body CalendarCreateBody }) (*CalendarOutput, error) {
			b := in.Body
			c, err := s.support.CreateCalendar(ctx, principal(ctx), support.CalendarInput{Name: &b.Name, Timezone: &b.Timezone,
				WorkingHours: b.WorkingHours.input(), Holidays: holidayInputs(b.Holidays)})
			if err != nil {
				return nil, err
			}
			return calendarOutput(http.StatusCreated, c), nil
		})
	register(s, huma.Operation{OperationID: "list-support-calendars", Method: http.MethodGet, Path: "/support/calendars", Summary: "List business calendars",
		Description: "Every calendar with its holidays, newest first; sortable by created_at, updated_at, name." + readers, Tags: tags},
		read, func(ctx context.Context, in *struct{ ListParams }) (*CalendarsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.ListCalendars(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &CalendarsOutput{}
			out.Body.Calendars = mapSlice(rows, calendarItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-calendar", Method: http.MethodGet, Path: "/support/calendars/{calendar_id}", Summary: "Get a business calendar",
		Description: "One calendar with its holidays." + readers, Tags: tags},
		read, func(ctx context.Context, in *CalendarPath) (*CalendarOutput, error) {
			c, err := s.support.GetCalendar(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return calendarOutput(http.StatusOK, c), nil
		})
	register(s, huma.Operation{OperationID: "update-support-calendar", Method: http.MethodPatch, Path: "/support/calendars/{calendar_id}", Summary: "Update a business calendar",
		Description: "Applies the fields sent; working_hours and holidays are replaced whole. The result is validated as a new calendar. Open tickets " +
			"whose clocks count in it are re-timed at once (their SLA workflows are signalled)." + writers, Tags: tags},
		write, func(ctx context.Context, in *struct {
			CalendarPath
			Body CalendarUpdateBody
		}) (*CalendarOutput, error) {
			b := in.Body
			c, err := s.support.UpdateCalendar(ctx, principal(ctx), in.ID, support.CalendarInput{Name: b.Name, Timezone: b.Timezone,
				WorkingHours: b.WorkingHours.input(), Holidays: holidayInputs(b.Holidays)})
			if err != nil {
				return nil, err
			}
			s.retimeSLA(ctx, support.RetimeScope{CalendarID: c.ID})
			return calendarOutput(http.StatusOK, c), nil
		})
	register(s, huma.Operation{OperationID: "delete-support-calendar", Method: http.MethodDelete, Path: "/support/calendars/{calendar_id}", Summary: "Delete a business calendar",
		Description: "Removes the calendar and its holidays. A calendar an SLA policy uses is not removed: 409 INVALID_STATE_TRANSITION, " +
			"the policies in details.used_by." + writers, Tags: tags, DefaultStatus: http.StatusNoContent},
		write, func(ctx context.Context, in *CalendarPath) (*struct{}, error) {
			return nil, s.support.DeleteCalendar(ctx, principal(ctx), in.ID)
		})
	register(s, huma.Operation{OperationID: "import-support-calendar-holidays", Method: http.MethodPost, Path: "/support/calendars/{calendar_id}/holidays/import",
		Summary: "Import holidays from an iCalendar file",
		Description: "Reads the all-day events of an iCalendar file (Content-Type text/calendar, at most 1 MiB: 413 above) between from_year and to_year " +
			"and adds those on dates the calendar has no holiday yet; the others are counted as skipped. Answers the holidays added." + writers,
		Tags: tags},
		write, func(ctx context.Context, in *HolidayImportInput) (*HolidayImportOutput, error) {
			if mt, _, err := mime.ParseMediaType(in.ContentType); err != nil || mt != "text/calendar" {
				return nil, models.Errorf(models.CodeUnsupportedMediaType, "send the iCalendar file with Content-Type: text/calendar")
			}
			if len(bytes.TrimSpace(in.RawBody)) == 0 {
				return nil, models.Invalid(models.FieldIssue{Field: "body", Issue: "is required: an iCalendar file"})
			}
			from := in.FromYear
			if from == 0 {
				from = s.now().Year()
			}
			to := in.ToYear
			if to == 0 {
				to = from + 2
			}
			res, err := s.support.ImportHolidays(ctx, principal(ctx), in.ID, bytes.NewReader(in.RawBody), from, to)
			if err != nil {
				return nil, err
			}
			if len(res.Imported) > 0 {
				s.retimeSLA(ctx, support.RetimeScope{CalendarID: in.ID})
			}
			out := &HolidayImportOutput{}
			out.Body.Imported, out.Body.Skipped = len(res.Imported), res.Skipped
			out.Body.Holidays = mapSlice(res.Imported, holidayItem)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "add-support-calendar-holiday", Method: http.MethodPost, Path: "/support/calendars/{calendar_id}/holidays", Summary: "Add a holiday",
		Description: "Adds one holiday to the calendar; a date that already has one is 409 ALREADY_EXISTS." + writers, Tags: tags, DefaultStatus: http.StatusCreated},
		write, func(ctx context.Context, in *struct {
			CalendarPath
			Body HolidayBody
		}) (*HolidayOutput, error) {
			h, err := s.support.AddHoliday(ctx, principal(ctx), in.ID, support.HolidayInput{Date: in.Body.Date, Name: in.Body.Name})
			if err != nil {
				return nil, err
			}
			s.retimeSLA(ctx, support.RetimeScope{CalendarID: in.ID})
			out := &HolidayOutput{Status: http.StatusCreated}
			out.Body.Holiday = holidayItem(h)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-support-calendar-holiday", Method: http.MethodDelete, Path: "/support/calendars/{calendar_id}/holidays/{date}",
		Summary: "Remove a holiday", Description: "Removes the calendar's holiday on the date (404 when there is none)." + writers, Tags: tags,
		DefaultStatus: http.StatusNoContent},
		write, func(ctx context.Context, in *HolidayPath) (*struct{}, error) {
			if err := s.support.DeleteHoliday(ctx, principal(ctx), in.ID, in.Date); err != nil {
				return nil, err
			}
			s.retimeSLA(ctx, support.RetimeScope{CalendarID: in.ID})
			return nil, nil
		})
	s.registerSupportSLAPolicies(tags, read, write, readers, writers)
	s.registerSupportSLASimulate(tags)
}

// PolicyTargetBody is a policy's target of one priority as sent.
type PolicyTargetBody struct {
	ResponseTime   string `json:"response_time" required:"true" minLength:"2" maxLength:"20" doc:"Required: whole minutes, 1m to 720h" example:"15m"`
	ResolutionTime string `json:"resolution_time" required:"true" minLength:"2" maxLength:"20" doc:"Required: whole minutes, 1m to 720h; not shorter than response_time" example:"4h"`
	UpdateInterval string `json:"update_interval,omitempty" maxLength:"20" doc:"How often the customer is updated: whole minutes, 1m to 720h; \"\" or absent: none" example:"1h"`
	BusinessHours  bool   `json:"business_hours,omitempty" doc:"Count these targets in the business hours of the policy's calendar (calendar time when the policy has none); default false"`
}

func (b *PolicyTargetBody) input() support.PolicyTargetInput {
	return support.PolicyTargetInput{ResponseTime: b.ResponseTime, ResolutionTime: b.ResolutionTime, UpdateInterval: b.UpdateInterval, BusinessHours: b.BusinessHours}
}

// PolicyTargetsBody are a policy's targets as sent: the priorities sent
// replace theirs; on creation the others take the default targets.
type PolicyTargetsBody struct {
	Critical *PolicyTargetBody `json:"critical,omitempty"`
	High     *PolicyTargetBody `json:"high,omitempty"`
	Medium   *PolicyTargetBody `json:"medium,omitempty"`
	Low      *PolicyTargetBody `json:"low,omitempty"`
}

func (b *PolicyTargetsBody) input() map[string]support.PolicyTargetInput {
	out := map[string]support.PolicyTargetInput{}
	if b == nil {
		return out
	}
	for pr, t := range map[string]*PolicyTargetBody{support.PriorityCritical: b.Critical, support.PriorityHigh: b.High,
		support.PriorityMedium: b.Medium, support.PriorityLow: b.Low} {
		if t != nil {
			out[pr] = t.input()
		}
	}
	return out
}

// EscalationStepBody is an escalation step as sent.
type EscalationStepBody struct {
	Metric           string   `json:"metric" required:"true" enum:"response,resolution" doc:"Required: the target watched" example:"resolution"`
	AtPercent        int      `json:"at_percent" required:"true" minimum:"1" maximum:"500" doc:"Required: the share of the target elapsed, 1 to 500 (100 is the breach, above is after it)" example:"100"`
	Action           string   `json:"action" required:"true" enum:"notify_assignee,notify_team_lead,reassign_team_lead,page_duty_manager,notify,escalate" doc:"Required. escalate: the ticket becomes escalated, one level up (ticket.escalated)" example:"notify_team_lead"`
	Recipients       []string `json:"recipients,omitempty" maxItems:"20" doc:"With action notify only, and required there: 1 to 20 e-mail addresses"`
	RepeatEvery      string   `json:"repeat_every,omitempty" maxLength:"20" doc:"Repeat the action this often (whole minutes, 1m to 720h); only with at_percent 100 or more" example:"1h"`
	WorkingHoursOnly bool     `json:"working_hours_only,omitempty" doc:"Hold the action outside the calendar's working hours; default false"`
}

func escalationInputs(l *[]EscalationStepBody) *[]support.EscalationStepInput {
	if l == nil {
		return nil
	}
	out := make([]support.EscalationStepInput, len(*l))
	for i, st := range *l {
		out[i] = support.EscalationStepInput{Metric: st.Metric, AtPercent: st.AtPercent, Action: st.Action, Recipients: st.Recipients,
			RepeatEvery: st.RepeatEvery, WorkingHoursOnly: st.WorkingHoursOnly}
	}
	return &out
}

// SLAPolicyCreateBody is the body of an SLA policy creation.
type SLAPolicyCreateBody struct {
	Name           string                `json:"name" required:"true" minLength:"1" maxLength:"200" doc:"Required" example:"Premium network"`
	Description    string                `json:"description,omitempty" maxLength:"1000"`
	Tier           string                `json:"tier,omitempty" enum:",standard,premium,enterprise" doc:"\"\" (default): any tier; one policy per tier and category"`
	Category       string                `json:"category,omitempty" maxLength:"40" doc:"\"\" (default): any category; else a category id"`
	CalendarID     string                `json:"calendar_id,omitempty" maxLength:"64" doc:"\"\" (default): calendar time only; else a calendar id (cal_)"`
	WarningPercent *int                  `json:"warning_percent,omitempty" minimum:"1" maximum:"99" doc:"Warn when this share of a target elapsed; default 75"`
	CreditPercent  *float64              `json:"credit_percent,omitempty" minimum:"0" maximum:"100" doc:"Credit on a resolution breach, percent of the service's monthly price, at most two decimals; default 0"`
	Targets        *PolicyTargetsBody    `json:"targets,omitempty" doc:"Per priority; the priorities left out take the default targets (calendar time)"`
	Escalation     *[]EscalationStepBody `json:"escalation,omitempty" maxItems:"10" doc:"The escalation ladder; no step repeats another's metric, at_percent and action"`
}

// SLAPolicyUpdateBody is the body of an SLA policy update: absent fields
// are unchanged; targets replace the priorities sent; escalation, when
// sent, replaces the ladder.
type SLAPolicyUpdateBody struct {
	Name           *string               `json:"name,omitempty" minLength:"1" maxLength:"200"`
	Description    *string               `json:"description,omitempty" maxLength:"1000"`
	Tier           *string               `json:"tier,omitempty" enum:",standard,premium,enterprise" doc:"\"\": any tier"`
	Category       *string               `json:"category,omitempty" maxLength:"40" doc:"\"\": any category; else a category id"`
	CalendarID     *string               `json:"calendar_id,omitempty" maxLength:"64" doc:"\"\": calendar time only; else a calendar id (cal_)"`
	WarningPercent *int                  `json:"warning_percent,omitempty" minimum:"1" maximum:"99"`
	CreditPercent  *float64              `json:"credit_percent,omitempty" minimum:"0" maximum:"100" doc:"At most two decimals"`
	Targets        *PolicyTargetsBody    `json:"targets,omitempty"`
	Escalation     *[]EscalationStepBody `json:"escalation,omitempty" maxItems:"10"`
}

// PolicyTargetItem is a policy's target of one priority.
type PolicyTargetItem struct {
	ResponseTime   string `json:"response_time" example:"15m"`
	ResolutionTime string `json:"resolution_time" example:"4h"`
	UpdateInterval string `json:"update_interval" doc:"\"\" when none" example:"1h"`
	BusinessHours  bool   `json:"business_hours"`
}

// PolicyTargetsItem are a policy's targets, every priority.
type PolicyTargetsItem struct {
	Critical PolicyTargetItem `json:"critical"`
	High     PolicyTargetItem `json:"high"`
	Medium   PolicyTargetItem `json:"medium"`
	Low      PolicyTargetItem `json:"low"`
}

// EscalationStepItem is an escalation step as answered.
type EscalationStepItem struct {
	Metric           string   `json:"metric" enum:"response,resolution"`
	AtPercent        int      `json:"at_percent"`
	Action           string   `json:"action"`
	Recipients       []string `json:"recipients"`
	RepeatEvery      string   `json:"repeat_every" doc:"\"\" when the step does not repeat"`
	WorkingHoursOnly bool     `json:"working_hours_only"`
}

// SLAPolicyItem is an SLA policy.
type SLAPolicyItem struct {
	ID             string               `json:"id" example:"slap_3fK9aZ"`
	Name           string               `json:"name"`
	Description    string               `json:"description"`
	Tier           string               `json:"tier" doc:"\"\": any tier"`
	Category       string               `json:"category" doc:"\"\": any category"`
	CalendarID     string               `json:"calendar_id" doc:"\"\": calendar time only"`
	WarningPercent int                  `json:"warning_percent"`
	CreditPercent  float64              `json:"credit_percent"`
	Targets        PolicyTargetsItem    `json:"targets"`
	Escalation     []EscalationStepItem `json:"escalation" doc:"By metric (response, then resolution), then at_percent"`
	CreatedAt      string               `json:"created_at"`
	UpdatedAt      string               `json:"updated_at"`
}

func slaPolicyItem(p *support.SLAPolicy) SLAPolicyItem {
	dur := func(m int) string {
		if m == 0 {
			return ""
		}
		return support.FormatMinutes(m)
	}
	target := func(pr string) PolicyTargetItem {
		t, _ := p.Target(pr)
		return PolicyTargetItem{ResponseTime: dur(t.ResponseMinutes), ResolutionTime: dur(t.ResolutionMinutes), UpdateInterval: dur(t.UpdateMinutes),
			BusinessHours: t.BusinessHours}
	}
	it := SLAPolicyItem{ID: p.ID, Name: p.Name, Description: p.Description, Tier: p.Tier, Category: p.Category, CalendarID: p.CalendarID,
		WarningPercent: p.WarningPercent, CreditPercent: p.CreditPercent(),
		Targets: PolicyTargetsItem{Critical: target(support.PriorityCritical), High: target(support.PriorityHigh),
			Medium: target(support.PriorityMedium), Low: target(support.PriorityLow)},
		Escalation: []EscalationStepItem{}, CreatedAt: models.Timestamp(p.CreatedAt), UpdatedAt: models.Timestamp(p.UpdatedAt)}
	for _, st := range p.Escalation {
		rec := st.Recipients
		if rec == nil {
			rec = []string{}
		}
		it.Escalation = append(it.Escalation, EscalationStepItem{Metric: st.Metric, AtPercent: st.AtPercent, Action: st.Action, Recipients: rec,
			RepeatEvery: dur(st.RepeatEveryMinutes), WorkingHoursOnly: st.WorkingHoursOnly})
	}
	return it
}

// SLAPolicyOutput wraps one SLA policy.
type SLAPolicyOutput struct {
	Status int
	Body   struct {
		Envelope
		Policy SLAPolicyItem `json:"policy"`
	}
}

func slaPolicyOutput(status int, p *support.SLAPolicy) *SLAPolicyOutput {
	out := &SLAPolicyOutput{Status: status}
	out.Body.Policy = slaPolicyItem(p)
	return out
}

// SLAPoliciesOutput is a page of SLA policies.
type SLAPoliciesOutput struct {
	Body struct {
		Envelope
		Policies   []SLAPolicyItem `json:"policies"`
		Pagination Pagination      `json:"pagination"`
	}
}

// SLAPolicyPath names an SLA policy in the path.
type SLAPolicyPath struct {
	ID string `path:"policy_id" maxLength:"64" example:"slap_default"`
}

// registerSupportSLAPolicies registers the SLA policies.
func (s *Server) registerSupportSLAPolicies(tags []string, read, write access, readers, writers string) {
	register(s, huma.Operation{OperationID: "create-support-sla-policy", Method: http.MethodPost, Path: "/support/sla-policies", Summary: "Create an SLA policy",
		Description: "Stores the SLA policy of a service tier and a category (\"\": any): targets per priority, warning threshold, credit and escalation " +
			"ladder. One policy per tier and category (409 ALREADY_EXISTS). A ticket gets the first policy of (tier, category), (tier, any), " +
			"(any, category), (any, any)." + writers, Tags: tags, DefaultStatus: http.StatusCreated},
		write, func(ctx context.Context, in *struct{ Body SLAPolicyCreateBody }) (*SLAPolicyOutput, error) {
			b := in.Body
			p, err := s.support.CreateSLAPolicy(ctx, principal(ctx), support.PolicyInput{Name: &b.Name, Description: &b.Description, Tier: &b.Tier,
				Category: &b.Category, CalendarID: &b.CalendarID, WarningPercent: b.WarningPercent, CreditPercent: b.CreditPercent,
				Targets: b.Targets.input(), Escalation: escalationInputs(b.Escalation)})
			if err != nil {
				return nil, err
			}
			s.retimeSLA(ctx, support.RetimeScopeOfPolicy(p))
			return slaPolicyOutput(http.StatusCreated, p), nil
		})
	register(s, huma.Operation{OperationID: "list-support-sla-policies", Method: http.MethodGet, Path: "/support/sla-policies", Summary: "List SLA policies",
		Description: "Every SLA policy, newest first; sortable by created_at, updated_at, name." + readers, Tags: tags},
		read, func(ctx context.Context, in *struct{ ListParams }) (*SLAPoliciesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.ListSLAPolicies(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &SLAPoliciesOutput{}
			out.Body.Policies = mapSlice(rows, slaPolicyItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-sla-policy", Method: http.MethodGet, Path: "/support/sla-policies/{policy_id}", Summary: "Get an SLA policy",
		Description: "One SLA policy." + readers, Tags: tags},
		read, func(ctx context.Context, in *SLAPolicyPath) (*SLAPolicyOutput, error) {
			p, err := s.support.GetSLAPolicy(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return slaPolicyOutput(http.StatusOK, p), nil
		})
	register(s, huma.Operation{OperationID: "update-support-sla-policy", Method: http.MethodPatch, Path: "/support/sla-policies/{policy_id}", Summary: "Update an SLA policy",
		Description: "Applies the fields sent (targets: the priorities sent; escalation: replaced whole); the result is validated as a new policy. " +
			"Open tickets under it (and, for a change of category, every open ticket) are re-timed at once: their SLA workflows are signalled." + writers, Tags: tags},
		write, func(ctx context.Context, in *struct {
			SLAPolicyPath
			Body SLAPolicyUpdateBody
		}) (*SLAPolicyOutput, error) {
			b := in.Body
			pin := support.PolicyInput{Name: b.Name, Description: b.Description, Tier: b.Tier, Category: b.Category, CalendarID: b.CalendarID,
				WarningPercent: b.WarningPercent, CreditPercent: b.CreditPercent, Escalation: escalationInputs(b.Escalation)}
			pin.Targets = b.Targets.input()
			before, err := s.support.GetSLAPolicy(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			p, err := s.support.UpdateSLAPolicy(ctx, principal(ctx), in.ID, pin)
			if err != nil {
				return nil, err
			}
			scope := support.RetimeScopeOfPolicy(p)
			if before.Category != p.Category {
				scope.Any = true
			}
			s.retimeSLA(ctx, scope)
			return slaPolicyOutput(http.StatusOK, p), nil
		})
	register(s, huma.Operation{OperationID: "delete-support-sla-policy", Method: http.MethodDelete, Path: "/support/sla-policies/{policy_id}", Summary: "Delete an SLA policy",
		Description: "Removes the policy; the open tickets under it are re-timed at once under the policy that now applies." + writers, Tags: tags, DefaultStatus: http.StatusNoContent},
		write, func(ctx context.Context, in *SLAPolicyPath) (*struct{}, error) {
			if err := s.support.DeleteSLAPolicy(ctx, principal(ctx), in.ID); err != nil {
				return nil, err
			}
			s.retimeSLA(ctx, support.RetimeScope{PolicyID: in.ID})
			return nil, nil
		})
}
