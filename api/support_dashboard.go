package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// DashboardParams are the parameters of the support dashboard.
type DashboardParams struct {
	CustomerID string `query:"customer_id" maxLength:"64" doc:"Only this customer's tickets (cust_). Customers see their own organization's tickets whatever they send: another customer's id counts nothing, as in the ticket list"`
	DateRange  string `query:"date_range" maxLength:"4" pattern:"^[0-9]{1,3}d$" doc:"The period as a number of days ending now: 1d to 366d; default 30d. Not with start and end" example:"30d"`
	Start      string `query:"start" maxLength:"40" doc:"Start of an explicit period (inclusive), with end: an RFC 3339 timestamp, or a date (YYYY-MM-DD) meaning its midnight in timezone" example:"2026-11-01"`
	End        string `query:"end" maxLength:"40" doc:"End of an explicit period (exclusive), with start: an RFC 3339 timestamp, or a date (YYYY-MM-DD) meaning its midnight in timezone; after start, at most 366 days after it" example:"2026-12-01"`
	Timezone   string `query:"timezone" maxLength:"64" doc:"The IANA time zone the days and ISO weeks of the trends (and dates in start and end) are taken in; default UTC" example:"Europe/London"`
}

// DashboardPeriod is the period a dashboard covers.
type DashboardPeriod struct {
	Start    string `json:"start" doc:"Inclusive (RFC 3339, UTC)"`
	End      string `json:"end" doc:"Exclusive (RFC 3339, UTC)"`
	Timezone string `json:"timezone" example:"UTC"`
}

// DashboardOverview is the figures of every ticket of the period.
type DashboardOverview struct {
	TotalTickets         int64    `json:"total_tickets" doc:"Tickets created in the period"`
	TicketsResolved      int64    `json:"tickets_resolved" doc:"Of them, resolved or closed with a resolution time"`
	TicketsOpen          int64    `json:"tickets_open" doc:"Of them, neither resolved nor closed"`
	AvgResolutionTime    *string  `json:"avg_resolution_time" nullable:"true" doc:"Mean time from creation to resolution of the resolved tickets, in hours and minutes; null when none was resolved" example:"5h42m"`
	SLACompliance        *float64 `json:"sla_compliance" nullable:"true" doc:"Percent (one decimal) of the tickets' resolution SLA clocks, every cycle, that stopped without breach, among those stopped or breached; null when none is" example:"94.5"`
	CustomerSatisfaction *float64 `json:"customer_satisfaction" nullable:"true" doc:"Mean feedback rating (1 to 5, two decimals) of the tickets; null without feedback" example:"4.25"`
	SLAAtRisk            int64    `json:"sla_at_risk" doc:"Now, whatever the period: the open tickets with an SLA target due within the next hour and not yet breached (as GET /v1/support/tickets?breaching_within=1h)"`
}

// DashboardCategory is the figures of one category's tickets.
type DashboardCategory struct {
	Category          string   `json:"category" example:"network"`
	Count             int64    `json:"count" doc:"Tickets created in the period"`
	AvgResolutionTime *string  `json:"avg_resolution_time" nullable:"true" doc:"As in the overview" example:"3h10m"`
	SLACompliance     *float64 `json:"sla_compliance" nullable:"true" doc:"As in the overview"`
}

// DashboardDay is the number of tickets created on one day.
type DashboardDay struct {
	Date  string `json:"date" doc:"YYYY-MM-DD in timezone" example:"2026-11-23"`
	Count int64  `json:"count"`
}

// DashboardWeek is the mean resolution time of the tickets resolved in one
// ISO week.
type DashboardWeek struct {
	Week     string  `json:"week" doc:"The ISO week of the resolution, in timezone (YYYY-Www)" example:"2026-W48"`
	AvgHours float64 `json:"avg_hours" doc:"Mean time from creation to resolution, in hours (two decimals)" example:"5.7"`
}

// DashboardTrends are a dashboard's daily and weekly series.
type DashboardTrends struct {
	TicketsPerDay       []DashboardDay  `json:"tickets_per_day" doc:"Every day of the period, oldest first, zero included"`
	ResolutionTimeTrend []DashboardWeek `json:"resolution_time_trend" doc:"The weeks with resolutions of the period's tickets, oldest first"`
}

// DashboardItem is the support dashboard.
type DashboardItem struct {
	Period     DashboardPeriod     `json:"period"`
	Overview   DashboardOverview   `json:"overview"`
	Categories []DashboardCategory `json:"categories" doc:"The categories with tickets in the period, by category id"`
	Trends     DashboardTrends     `json:"trends"`
}

// DashboardOutput wraps the support dashboard.
type DashboardOutput struct {
	Body struct {
		Envelope
		Dashboard DashboardItem `json:"dashboard"`
	}
}

// registerSupportDashboard registers the support analytics dashboard.
func (s *Server) registerSupportDashboard(tags []string) {
	register(s, huma.Operation{OperationID: "get-support-dashboard", Method: http.MethodGet, Path: "/support/analytics/dashboard",
		Summary: "Support analytics dashboard",
		Description: "Figures of the tickets created in a period (date_range days ending now, or start and end): counts, mean resolution time, " +
			"SLA compliance from the resolution clocks, customer satisfaction from feedback, the same per category, tickets per day and the " +
			"mean resolution time per ISO week, days and weeks in timezone. Customers see their organization's tickets, provider staff every " +
			"organization's (or customer_id's); the credential's environment only. Definitions in docs/support.md.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *DashboardParams) (*DashboardOutput, error) {
			d, err := s.support.Dashboard(ctx, principal(ctx), support.DashboardInput{CustomerID: in.CustomerID, DateRange: in.DateRange,
				Start: in.Start, End: in.End, Timezone: in.Timezone}, s.now())
			if err != nil {
				return nil, err
			}
			_, atRisk, err := s.support.ListTickets(ctx, principal(ctx), support.TicketFilter{CustomerID: in.CustomerID, BreachingWithin: "1h"},
				models.PageRequest{Limit: 1})
			if err != nil {
				return nil, err
			}
			out := &DashboardOutput{}
			out.Body.Dashboard = dashboardItem(d)
			out.Body.Dashboard.Overview.SLAAtRisk = atRisk
			return out, nil
		})
}

// dashboardItem converts a dashboard.
func dashboardItem(d *support.Dashboard) DashboardItem {
	it := DashboardItem{
		Period: DashboardPeriod{Start: models.Timestamp(d.Start), End: models.Timestamp(d.End), Timezone: d.Location.String()},
		Overview: DashboardOverview{TotalTickets: d.Overview.Total, TicketsResolved: d.Overview.Resolved, TicketsOpen: d.Overview.Open,
			AvgResolutionTime: avgResolution(d.Overview), SLACompliance: d.Overview.SLACompliance(), CustomerSatisfaction: d.Overview.Satisfaction()},
		Categories: make([]DashboardCategory, len(d.Categories)),
		Trends:     DashboardTrends{TicketsPerDay: make([]DashboardDay, len(d.TicketsPerDay)), ResolutionTimeTrend: make([]DashboardWeek, len(d.ResolutionTrend))},
	}
	for i, c := range d.Categories {
		it.Categories[i] = DashboardCategory{Category: c.Category, Count: c.Total, AvgResolutionTime: avgResolution(c.DashboardFigures), SLACompliance: c.SLACompliance()}
	}
	for i, day := range d.TicketsPerDay {
		it.Trends.TicketsPerDay[i] = DashboardDay{Date: day.Date, Count: day.Count}
	}
	for i, w := range d.ResolutionTrend {
		it.Trends.ResolutionTimeTrend[i] = DashboardWeek{Week: w.Week, AvgHours: w.AvgHours}
	}
	return it
}

// avgResolution is the mean resolution time of f as "5h42m" (nil when
// nothing was resolved).
func avgResolution(f support.DashboardFigures) *string {
	avg, ok := f.AvgResolution()
	if !ok {
		return nil
	}
	v := support.FormatDuration(avg)
	return &v
}
