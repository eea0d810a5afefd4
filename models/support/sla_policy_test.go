package support_test

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/testenv"
)

func TestTierOf(t *testing.T) {
	tests := []struct {
		sla  string
		plan models.Plan
		want string
	}{
		{"premium", models.PlanDeveloper, "premium"},
		{"enterprise", models.PlanDeveloper, "enterprise"},
		{" Standard ", models.PlanEnterprise, "standard"},
		{"", models.PlanDeveloper, "standard"},
		{"", models.PlanBusiness, "premium"},
		{"", models.PlanEnterprise, "enterprise"},
		{"", models.PlanCustom, "enterprise"},
		{"gold", models.PlanBusiness, "premium"},
		{"", models.Plan("unknown"), ""},
		{"", "", ""},
	}
	for _, tc := range tests {
		if got := support.TierOf(tc.sla, tc.plan); got != tc.want {
			t.Errorf("TierOf(%q, %q) = %q, want %q", tc.sla, tc.plan, got, tc.want)
		}
	}
}

func slaAdmin() *models.Principal {
	return &models.Principal{Role: models.RoleAdmin, Permissions: []string{"*"}}
}

func ptr[T any](v T) *T { return &v }

func TestSLAPolicyValidation(t *testing.T) {
	store, _ := testenv.SeededStore(t)
	s := support.NewStore(store)
	ctx := context.Background()
	tests := []struct {
		name   string
		in     support.PolicyInput
		fields []string // none: valid
	}{
		{"minimal (a tier not yet covered)", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium")}, nil},
		{"no name", support.PolicyInput{Tier: ptr("premium")}, []string{"name"}},
		{"bad tier", support.PolicyInput{Name: ptr("p"), Tier: ptr("gold")}, []string{"tier"}},
		{"bad category and calendar", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"), Category: ptr("quantum"), CalendarID: ptr("cal_x")},
			[]string{"category", "calendar_id"}},
		{"warning out of range", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"), WarningPercent: ptr(0)}, []string{"warning_percent"}},
		{"credit with three decimals", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"), CreditPercent: ptr(0.125)}, []string{"credit_percent"}},
		{"credit above 100", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"), CreditPercent: ptr(100.01)}, []string{"credit_percent"}},
		{"unknown priority", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"),
			Targets: map[string]support.PolicyTargetInput{"urgent": {ResponseTime: "1h", ResolutionTime: "2h"}}}, []string{"targets.urgent"}},
		{"response after resolution", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"),
			Targets: map[string]support.PolicyTargetInput{"high": {ResponseTime: "3h", ResolutionTime: "2h"}}}, []string{"targets.high.response_time"}},
		{"missing resolution", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"),
			Targets: map[string]support.PolicyTargetInput{"low": {ResponseTime: "3h", UpdateInterval: "90s"}}},
			[]string{"targets.low.resolution_time", "targets.low.update_interval"}},
		{"repeat before the breach", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"),
			Escalation: &[]support.EscalationStepInput{{Metric: "response", AtPercent: 99, Action: "notify_assignee", RepeatEvery: "1h"}}},
			[]string{"escalation[0].repeat_every"}},
		{"bad step", support.PolicyInput{Name: ptr("p"), Tier: ptr("premium"),
			Escalation: &[]support.EscalationStepInput{{Metric: "feelings", AtPercent: 0, Action: "shout"}}},
			[]string{"escalation[0].metric", "escalation[0].at_percent", "escalation[0].action"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.CreateSLAPolicy(ctx, slaAdmin(), tc.in)
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if err := s.DeleteSLAPolicy(ctx, slaAdmin(), p.ID); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantIssues(t, err, tc.fields...)
		})
	}
}

// wantIssues checks a VALIDATION_ERROR naming exactly fields.
func wantIssues(t *testing.T, err error, fields ...string) {
	t.Helper()
	e := models.AsError(err)
	if err == nil || e.Code != models.CodeValidation {
		t.Fatalf("err %v, want VALIDATION_ERROR on %v", err, fields)
	}
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	got := map[string]bool{}
	for _, f := range issues {
		got[f.Field] = true
	}
	for _, f := range fields {
		if !got[f] {
			t.Fatalf("no issue for %s: %v", f, issues)
		}
	}
	if len(got) != len(fields) {
		t.Fatalf("issues %v, want %v", issues, fields)
	}
}

func TestCalendarValidation(t *testing.T) {
	store, _ := testenv.SeededStore(t)
	s := support.NewStore(store)
	ctx := context.Background()
	week := func(m map[string][]support.ClockInterval) *map[string][]support.ClockInterval { return &m }
	iv := func(a, b string) []support.ClockInterval { return []support.ClockInterval{{Start: a, End: b}} }
	tests := []struct {
		name   string
		in     support.CalendarInput
		fields []string
	}{
		{"default week", support.CalendarInput{Name: ptr("c"), Timezone: ptr("Asia/Tokyo")}, nil},
		{"whole day", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), WorkingHours: week(map[string][]support.ClockInterval{"sunday": iv("00:00", "24:00")})}, nil},
		{"no name, no zone", support.CalendarInput{}, []string{"name", "timezone"}},
		{"bad zone", support.CalendarInput{Name: ptr("c"), Timezone: ptr("Europe/Atlantis")}, []string{"timezone"}},
		{"closed week", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), WorkingHours: week(nil)}, []string{"working_hours"}},
		{"bad clocks", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), WorkingHours: week(map[string][]support.ClockInterval{
			"monday": iv("9:00", "24:01"), "tuesday": iv("10:00", "10:00")})}, []string{"working_hours.monday[0].start", "working_hours.monday[0].end", "working_hours.tuesday[0].end"}},
		{"overlap", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), WorkingHours: week(map[string][]support.ClockInterval{
			"friday": {{Start: "12:00", End: "18:00"}, {Start: "08:00", End: "12:30"}}})}, []string{"working_hours.friday"}},
		{"unknown day", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), WorkingHours: week(map[string][]support.ClockInterval{
			"funday": iv("09:00", "10:00"), "monday": iv("09:00", "10:00")})}, []string{"working_hours.funday"}},
		{"bad holidays", support.CalendarInput{Name: ptr("c"), Timezone: ptr("UTC"), Holidays: &[]support.HolidayInput{{Date: "2026-13-01"}, {Date: "2026-01-01"}, {Date: "2026-01-01"}}},
			[]string{"holidays[0].date", "holidays[2].date"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateCalendar(ctx, slaAdmin(), tc.in)
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantIssues(t, err, tc.fields...)
		})
	}
}

func TestPolicyForOrder(t *testing.T) {
	store, _ := testenv.SeededStore(t)
	s := support.NewStore(store)
	ctx := context.Background()
	mk := func(tier, category string) string {
		t.Helper()
		p, err := s.CreateSLAPolicy(ctx, slaAdmin(), support.PolicyInput{Name: ptr(tier + "/" + category), Tier: ptr(tier), Category: ptr(category)})
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	exact := mk("premium", "network")
	tierAny := mk("premium", "")
	catAny := mk("", "network")
	tests := []struct {
		tier, category, want string
	}{
		{"premium", "network", exact},
		{"premium", "voice", tierAny},
		{"enterprise", "network", catAny},
		{"", "network", catAny},
		{"enterprise", "voice", support.SeedDefaultPolicyID},
		{"", "", support.SeedDefaultPolicyID},
		{"standard", "voice", support.SeedStandardPolicyID},
		{"standard", "network", support.SeedStandardPolicyID}, // (tier, any) before (any, category)
	}
	for _, tc := range tests {
		p, cal, err := s.PolicyFor(ctx, tc.tier, tc.category)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil || p.ID != tc.want {
			t.Fatalf("PolicyFor(%q, %q) = %+v, want %s", tc.tier, tc.category, p, tc.want)
		}
		if len(p.Targets) != 4 {
			t.Fatalf("targets %+v", p.Targets)
		}
		if (cal != nil) != (p.ID == support.SeedStandardPolicyID) {
			t.Fatalf("%s: calendar %+v", p.ID, cal)
		}
	}
	// The standard tier's calendar in the engine's form.
	p, cal, err := s.PolicyFor(ctx, "standard", "voice")
	if err != nil {
		t.Fatal(err)
	}
	if cal.Zone != "UTC" || len(cal.Week[1]) != 1 || cal.Week[1][0].Start != 8*60 || cal.Week[1][0].End != 18*60 || len(cal.Week[0]) != 0 {
		t.Fatalf("calendar %+v", cal)
	}
	if low, _ := p.Target("low"); !low.BusinessHours {
		t.Fatalf("standard low %+v", low)
	}
	// Without the default policy nothing may apply.
	if err := s.DeleteSLAPolicy(ctx, slaAdmin(), support.SeedDefaultPolicyID); err != nil {
		t.Fatal(err)
	}
	if p, cal, err := s.PolicyFor(ctx, "enterprise", "voice"); p != nil || cal != nil || err != nil {
		t.Fatalf("no policy: %+v %+v %v", p, cal, err)
	}
	// The seed is idempotent and brings the default back.
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _, err := s.PolicyFor(ctx, "enterprise", "voice"); err != nil || p == nil || p.ID != support.SeedDefaultPolicyID || len(p.Targets) != 4 {
		t.Fatalf("after the seed: %+v %v", p, err)
	}
}

func TestSLAPermissionsInTheModel(t *testing.T) {
	store, _ := testenv.SeededStore(t)
	s := support.NewStore(store)
	ctx := context.Background()
	customer := &models.Principal{OrganizationID: "org_x", Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
	for _, err := range []error{
		func() error { _, err := s.CreateCalendar(ctx, customer, support.CalendarInput{}); return err }(),
		func() error { _, err := s.GetSLAPolicy(ctx, customer, support.SeedDefaultPolicyID); return err }(),
		func() error { _, _, err := s.ListCalendars(ctx, customer, models.PageRequest{Limit: 10}); return err }(),
	} {
		if models.ErrorCode(err) != models.CodeInsufficientPermissions {
			t.Fatalf("customer: %v", err)
		}
	}
}
