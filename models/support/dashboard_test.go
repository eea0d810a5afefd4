package support_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/support"
)

// dashboardFixture seeds tickets with known answers (all times UTC):
//
//	A network/high      created Fri 11-20 23:30, resolved Sat 11-21 05:30 (6h, SLA met), rating 5
//	B network/critical  created Sat 11-21 10:00, breached, resolved Sun 11-22 16:00 (30h), rating 2
//	C voice/low         created Sun 11-22 23:30, open (clock running)
//	D general/medium    created Mon 11-23 08:00, open
//
// plus tickets that never count: one of another organization, one in the
// demo organization's sandbox, one created after the periods.
func dashboardFixture(t *testing.T) *slaFixture {
	f := newSLAFixture(t)
	at := func(day, hour, minute int) time.Time { return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC) }
	openAt := func(p *models.Principal, when time.Time, category, priority string) *support.Ticket {
		t.Helper()
		f.clock = when
		tk, err := f.s.CreateTicket(f.ctx, p, support.TicketInput{Title: "t", Description: "d", Category: category, Priority: priority})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	resolve := func(id string, when time.Time) {
		t.Helper()
		f.clock = when
		f.update(id, support.UpdateInput{Status: ptr(support.StatusResolved)})
		f.sync(id)
	}
	rate := func(id string, rating int) {
		t.Helper()
		if _, err := f.s.SubmitFeedback(f.ctx, f.customer, support.FeedbackInput{TicketID: id, Rating: rating}); err != nil {
			t.Fatal(err)
		}
	}
	a := openAt(f.customer, at(20, 23, 30), "network", "high")
	resolve(a.ID, at(21, 5, 30))
	rate(a.ID, 5)
	b := openAt(f.customer, at(21, 10, 0), "network", "critical")
	f.clock = at(21, 15, 0)
	f.sync(b.ID)
	resolve(b.ID, at(22, 16, 0))
	rate(b.ID, 2)
	openAt(f.customer, at(22, 23, 30), "voice", "low")
	openAt(f.customer, at(23, 8, 0), "general", "medium")

	adm := &models.Principal{ID: "ak_adm", OrganizationID: f.staff.OrganizationID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	other, err := identity.NewStore(f.core).CreateOrganization(f.ctx, adm, identity.OrganizationInput{Name: "Other Co", Plan: models.PlanBusiness})
	if err != nil {
		t.Fatal(err)
	}
	stranger := &models.Principal{ID: "ak_other", OrganizationID: other.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	openAt(stranger, at(21, 12, 0), "network", "high")
	sandbox := *f.customer
	sandbox.Environment = models.EnvTest
	openAt(&sandbox, at(21, 12, 0), "network", "high")
	openAt(f.customer, at(25, 12, 0), "network", "high")
	f.clock = at(23, 9, 0)
	return f
}

func TestDashboardFigures(t *testing.T) {
	f := dashboardFixture(t)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	tests := []struct {
		name       string
		p          *models.Principal
		in         support.DashboardInput
		start, end time.Time
		overview   support.DashboardFigures
		categories map[string]support.DashboardFigures
		days       []support.DayCount
		weeks      []support.WeekHours
	}{
		{
			name: "customer UTC", p: f.customer, in: support.DashboardInput{Start: "2026-11-20", End: "2026-11-24"},
			start: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), end: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC),
			overview: support.DashboardFigures{Total: 4, Resolved: 2, Open: 2, ResolutionSeconds: 36 * 3600, SLAMet: 1, SLAMeasured: 2, RatingSum: 7, Ratings: 2},
			categories: map[string]support.DashboardFigures{
				"general": {Total: 1, Open: 1},
				"network": {Total: 2, Resolved: 2, ResolutionSeconds: 36 * 3600, SLAMet: 1, SLAMeasured: 2, RatingSum: 7, Ratings: 2},
				"voice":   {Total: 1, Open: 1},
			},
			days:  []support.DayCount{{"2026-11-20", 1}, {"2026-11-21", 1}, {"2026-11-22", 1}, {"2026-11-23", 1}},
			weeks: []support.WeekHours{{Week: "2026-W47", AvgHours: 18, Count: 2}},
		},
		{
			name: "customer Tokyo: 23:30 UTC is the next day and B resolves in the next ISO week", p: f.customer,
			in:    support.DashboardInput{Start: "2026-11-20", End: "2026-11-24", Timezone: "Asia/Tokyo"},
			start: time.Date(2026, 11, 20, 0, 0, 0, 0, tokyo), end: time.Date(2026, 11, 24, 0, 0, 0, 0, tokyo),
			overview: support.DashboardFigures{Total: 4, Resolved: 2, Open: 2, ResolutionSeconds: 36 * 3600, SLAMet: 1, SLAMeasured: 2, RatingSum: 7, Ratings: 2},
			categories: map[string]support.DashboardFigures{
				"general": {Total: 1, Open: 1},
				"network": {Total: 2, Resolved: 2, ResolutionSeconds: 36 * 3600, SLAMet: 1, SLAMeasured: 2, RatingSum: 7, Ratings: 2},
				"voice":   {Total: 1, Open: 1},
			},
			days:  []support.DayCount{{"2026-11-20", 0}, {"2026-11-21", 2}, {"2026-11-22", 0}, {"2026-11-23", 2}},
			weeks: []support.WeekHours{{Week: "2026-W47", AvgHours: 6, Count: 1}, {Week: "2026-W48", AvgHours: 30, Count: 1}},
		},
		{
			name: "staff, last 2 days: B, C, D and the other organization's ticket", p: f.staff, in: support.DashboardInput{DateRange: "2d"},
			start: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), end: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC),
			overview: support.DashboardFigures{Total: 4, Resolved: 1, Open: 3, ResolutionSeconds: 30 * 3600, SLAMeasured: 1, RatingSum: 2, Ratings: 1},
			categories: map[string]support.DashboardFigures{
				"general": {Total: 1, Open: 1},
				"network": {Total: 2, Resolved: 1, Open: 1, ResolutionSeconds: 30 * 3600, SLAMeasured: 1, RatingSum: 2, Ratings: 1},
				"voice":   {Total: 1, Open: 1},
			},
			days:  []support.DayCount{{"2026-11-21", 2}, {"2026-11-22", 1}, {"2026-11-23", 1}},
			weeks: []support.WeekHours{{Week: "2026-W47", AvgHours: 30, Count: 1}},
		},
		{
			name: "staff, one customer: the demo's tickets only", p: f.staff, in: support.DashboardInput{DateRange: "2d", CustomerID: demoCustomerID(t, f)},
			start: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), end: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC),
			overview: support.DashboardFigures{Total: 3, Resolved: 1, Open: 2, ResolutionSeconds: 30 * 3600, SLAMeasured: 1, RatingSum: 2, Ratings: 1},
			categories: map[string]support.DashboardFigures{
				"general": {Total: 1, Open: 1},
				"network": {Total: 1, Resolved: 1, ResolutionSeconds: 30 * 3600, SLAMeasured: 1, RatingSum: 2, Ratings: 1},
				"voice":   {Total: 1, Open: 1},
			},
			days:  []support.DayCount{{"2026-11-21", 1}, {"2026-11-22", 1}, {"2026-11-23", 1}},
			weeks: []support.WeekHours{{Week: "2026-W47", AvgHours: 30, Count: 1}},
		},
		{
			name: "customer naming another customer: nothing", p: f.customer, in: support.DashboardInput{DateRange: "30d", CustomerID: "cust_someone_else"},
			start: time.Date(2026, 10, 24, 9, 0, 0, 0, time.UTC), end: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC),
			categories: map[string]support.DashboardFigures{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := f.s.Dashboard(f.ctx, tc.p, tc.in, f.clock)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Start.Equal(tc.start) || !d.End.Equal(tc.end) {
				t.Fatalf("period %s - %s, want %s - %s", d.Start, d.End, tc.start, tc.end)
			}
			if !sameFigures(d.Overview, tc.overview) {
				t.Errorf("overview %+v, want %+v", d.Overview, tc.overview)
			}
			got := map[string]support.DashboardFigures{}
			for _, c := range d.Categories {
				got[c.Category] = c.DashboardFigures
			}
			if len(got) != len(tc.categories) {
				t.Errorf("categories %+v, want %+v", got, tc.categories)
			}
			for cat, want := range tc.categories {
				if !sameFigures(got[cat], want) {
					t.Errorf("%s: %+v, want %+v", cat, got[cat], want)
				}
			}
			if tc.days != nil && !reflect.DeepEqual(d.TicketsPerDay, tc.days) {
				t.Errorf("days %v, want %v", d.TicketsPerDay, tc.days)
			}
			if len(d.ResolutionTrend) != len(tc.weeks) || (len(tc.weeks) > 0 && !reflect.DeepEqual(d.ResolutionTrend, tc.weeks)) {
				t.Errorf("weeks %v, want %v", d.ResolutionTrend, tc.weeks)
			}
		})
	}
}

// sameFigures compares figures, the resolution seconds to the second.
func sameFigures(a, b support.DashboardFigures) bool {
	if a.ResolutionSeconds-b.ResolutionSeconds > 1 || b.ResolutionSeconds-a.ResolutionSeconds > 1 {
		return false
	}
	a.ResolutionSeconds = b.ResolutionSeconds
	return a == b
}

func demoCustomerID(t *testing.T, f *slaFixture) string {
	t.Helper()
	var org models.Organization
	if err := f.core.In(f.ctx, models.SystemScope()).Where("id = ?", f.customer.OrganizationID).Take(&org).Error; err != nil {
		t.Fatal(err)
	}
	return org.CustomerID
}

func TestDashboardDerivedFigures(t *testing.T) {
	f := support.DashboardFigures{Resolved: 3, ResolutionSeconds: 3 * (5*3600 + 42*60), SLAMet: 2, SLAMeasured: 3, RatingSum: 13, Ratings: 3}
	avg, ok := f.AvgResolution()
	if !ok || support.FormatDuration(avg) != "5h42m" {
		t.Fatalf("average %v %v", avg, ok)
	}
	if *f.SLACompliance() != 66.7 || *f.Satisfaction() != 4.33 {
		t.Fatalf("compliance %v, satisfaction %v", *f.SLACompliance(), *f.Satisfaction())
	}
	var none support.DashboardFigures
	if _, ok := none.AvgResolution(); ok || none.SLACompliance() != nil || none.Satisfaction() != nil {
		t.Fatal("figures without data")
	}
	for d, want := range map[time.Duration]string{0: "0m", 45 * time.Minute: "45m", 8 * time.Hour: "8h", 52*time.Hour + 10*time.Minute + 40*time.Second: "52h11m"} {
		if got := support.FormatDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

func TestDashboardValidation(t *testing.T) {
	f := newSLAFixture(t)
	tests := []struct {
		name  string
		in    support.DashboardInput
		field string
	}{
		{"range not in days", support.DashboardInput{DateRange: "4w"}, "date_range"},
		{"range zero", support.DashboardInput{DateRange: "0d"}, "date_range"},
		{"range too long", support.DashboardInput{DateRange: "367d"}, "date_range"},
		{"zone", support.DashboardInput{Timezone: "Mars/Olympus"}, "timezone"},
		{"local zone", support.DashboardInput{Timezone: "Local"}, "timezone"},
		{"start without end", support.DashboardInput{Start: "2026-01-01"}, "end"},
		{"end without start", support.DashboardInput{End: "2026-01-01"}, "start"},
		{"bad start", support.DashboardInput{Start: "01/01/2026", End: "2026-02-01"}, "start"},
		{"end before start", support.DashboardInput{Start: "2026-02-01", End: "2026-01-01"}, "end"},
		{"over 366 days", support.DashboardInput{Start: "2025-01-01", End: "2026-01-03"}, "end"},
		{"range with dates", support.DashboardInput{DateRange: "7d", Start: "2026-01-01", End: "2026-01-02"}, "date_range"},
		{"366 days", support.DashboardInput{Start: "2025-01-01T00:00:00Z", End: "2026-01-02T00:00:00Z"}, ""},
		{"366 days in a zone with DST", support.DashboardInput{Start: "2024-01-01", End: "2025-01-01", Timezone: "Europe/Paris"}, ""},
		{"a year", support.DashboardInput{DateRange: "366d", Timezone: "Asia/Kathmandu"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.Dashboard(f.ctx, f.customer, tc.in, f.clock)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e := models.AsError(err)
			if err == nil || e.Code != models.CodeValidation {
				t.Fatalf("error %v", err)
			}
			fields := e.Details["fields"].([]models.FieldIssue)
			if len(fields) != 1 || fields[0].Field != tc.field {
				t.Fatalf("issues %v, want one for %s", fields, tc.field)
			}
		})
	}
}
