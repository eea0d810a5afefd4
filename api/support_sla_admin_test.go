package api_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// calendarAnswer is the part of a calendar answer the tests read.
type calendarAnswer struct {
	Calendar struct {
		ID           string                         `json:"id"`
		Name         string                         `json:"name"`
		Timezone     string                         `json:"timezone"`
		WorkingHours map[string][]map[string]string `json:"working_hours"`
		Holidays     []struct {
			Date string `json:"date"`
			Name string `json:"name"`
		} `json:"holidays"`
		CreatedAt string `json:"created_at"`
		UpdatedAt string `json:"updated_at"`
	} `json:"calendar"`
}

// policyAnswer is the part of an SLA policy answer the tests read.
type policyAnswer struct {
	Policy struct {
		ID             string  `json:"id"`
		Name           string  `json:"name"`
		Tier           string  `json:"tier"`
		Category       string  `json:"category"`
		CalendarID     string  `json:"calendar_id"`
		WarningPercent int     `json:"warning_percent"`
		CreditPercent  float64 `json:"credit_percent"`
		Targets        map[string]struct {
			ResponseTime   string `json:"response_time"`
			ResolutionTime string `json:"resolution_time"`
			UpdateInterval string `json:"update_interval"`
			BusinessHours  bool   `json:"business_hours"`
		} `json:"targets"`
		Escalation []struct {
			Metric      string   `json:"metric"`
			AtPercent   int      `json:"at_percent"`
			Action      string   `json:"action"`
			Recipients  []string `json:"recipients"`
			RepeatEvery string   `json:"repeat_every"`
		} `json:"escalation"`
	} `json:"policy"`
}

func newCalendar(t *testing.T, h *harness, body map[string]any) calendarAnswer {
	t.Helper()
	if body == nil {
		body = map[string]any{"name": "UK office", "timezone": "Europe/London"}
	}
	var c calendarAnswer
	h.do("POST", "/v1/support/calendars", h.adminKey, body).decode(201, &c)
	return c
}

func newPolicy(t *testing.T, h *harness, body map[string]any) policyAnswer {
	t.Helper()
	var p policyAnswer
	h.do("POST", "/v1/support/sla-policies", h.adminKey, body).decode(201, &p)
	return p
}

// leadKey is a provider agent key holding support:read and support:admin.
func leadKey(t *testing.T, h *harness, perms ...string) string {
	t.Helper()
	prov, err := identity.NewStore(h.store).EnsureProviderOrganization(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	key := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(context.Background(), prov.ID, key, "lead", models.RoleAgent, perms); err != nil {
		t.Fatal(err)
	}
	return key
}

func TestSupportCalendarsCRUD(t *testing.T) {
	h := newHarness(t)
	c := newCalendar(t, h, map[string]any{"name": " UK office ", "timezone": "Europe/London",
		"working_hours": map[string]any{"monday": []map[string]any{{"start": "13:00", "end": "17:30"}, {"start": "08:00", "end": "12:00"}},
			"saturday": []map[string]any{{"start": "00:00", "end": "24:00"}}},
		"holidays": []map[string]any{{"date": "2026-12-26", "name": "Boxing Day"}, {"date": "2026-12-25", "name": "Christmas Day"}}})
	cc := c.Calendar
	if !strings.HasPrefix(cc.ID, "cal_") || cc.Name != "UK office" || cc.Timezone != "Europe/London" || len(cc.WorkingHours) != 7 ||
		len(cc.WorkingHours["monday"]) != 2 || cc.WorkingHours["monday"][0]["start"] != "08:00" || cc.WorkingHours["saturday"][0]["end"] != "24:00" ||
		cc.WorkingHours["tuesday"] == nil || len(cc.WorkingHours["tuesday"]) != 0 || len(cc.Holidays) != 2 || cc.Holidays[0].Date != "2026-12-25" {
		t.Fatalf("created %+v", cc)
	}
	// The default week: Monday to Friday 09:00-17:00.
	d := newCalendar(t, h, nil).Calendar
	if len(d.WorkingHours["friday"]) != 1 || d.WorkingHours["friday"][0]["start"] != "09:00" || len(d.WorkingHours["sunday"]) != 0 {
		t.Fatalf("default week %+v", d.WorkingHours)
	}
	path := "/v1/support/calendars/" + cc.ID
	var got calendarAnswer
	h.do("GET", path, h.adminKey, nil).decode(200, &got)
	if got.Calendar.ID != cc.ID || len(got.Calendar.Holidays) != 2 {
		t.Fatalf("get %+v", got.Calendar)
	}
	h.do("PATCH", path, h.adminKey, map[string]any{"timezone": "UTC", "working_hours": map[string]any{"sunday": []map[string]any{{"start": "10:00", "end": "14:00"}}}}).decode(200, &got)
	if got.Calendar.Timezone != "UTC" || got.Calendar.Name != "UK office" || len(got.Calendar.WorkingHours["monday"]) != 0 ||
		len(got.Calendar.WorkingHours["sunday"]) != 1 || len(got.Calendar.Holidays) != 2 {
		t.Fatalf("patched %+v", got.Calendar)
	}
	// Holidays one by one.
	var hol struct {
		Holiday struct {
			Date string `json:"date"`
			Name string `json:"name"`
		} `json:"holiday"`
	}
	h.do("POST", path+"/holidays", h.adminKey, map[string]any{"date": "2027-01-01", "name": "New Year's Day"}).decode(201, &hol)
	if hol.Holiday.Date != "2027-01-01" || hol.Holiday.Name != "New Year's Day" {
		t.Fatalf("holiday %+v", hol)
	}
	h.do("POST", path+"/holidays", h.adminKey, map[string]any{"date": "2027-01-01"}).wantError(409, "ALREADY_EXISTS")
	wantFields(t, h.do("POST", path+"/holidays", h.adminKey, map[string]any{"date": "2027-02-30"}), "date")
	wantFields(t, h.do("POST", path+"/holidays", h.adminKey, map[string]any{"date": "2027-02-03", "name": strings.Repeat("n", 201)}), "name")
	h.do("DELETE", path+"/holidays/2026-12-26", h.adminKey, nil).decode(204, nil)
	h.do("DELETE", path+"/holidays/2026-12-26", h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", path, h.adminKey, nil).decode(200, &got)
	if len(got.Calendar.Holidays) != 2 || got.Calendar.Holidays[0].Date != "2026-12-25" || got.Calendar.Holidays[1].Date != "2027-01-01" {
		t.Fatalf("holidays %+v", got.Calendar.Holidays)
	}
	// The list (the seeded calendar included), sorted by name.
	var list struct {
		Calendars []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"calendars"`
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	h.do("GET", "/v1/support/calendars?sort=name:asc", h.adminKey, nil).decode(200, &list)
	if list.Pagination.Total != 3 || len(list.Calendars) != 3 || list.Calendars[0].Name != "Standard business hours" {
		t.Fatalf("list %+v", list)
	}
	h.do("GET", "/v1/support/calendars?sort=colour:asc", h.adminKey, nil).wantError(400, "VALIDATION_ERROR")
	h.do("DELETE", path, h.adminKey, nil).decode(204, nil)
	h.do("GET", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("DELETE", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("PATCH", path, h.adminKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")
	h.do("POST", path+"/holidays", h.adminKey, map[string]any{"date": "2027-01-01"}).wantError(404, "NOT_FOUND")
	h.do("DELETE", path+"/holidays/2027-01-01", h.adminKey, nil).wantError(404, "NOT_FOUND")
}

func TestSupportCalendarValidation(t *testing.T) {
	h := newHarness(t)
	post := func(body map[string]any, fields ...string) {
		t.Helper()
		wantFields(t, h.do("POST", "/v1/support/calendars", h.adminKey, body), fields...)
	}
	iv := func(s, e string) []map[string]any { return []map[string]any{{"start": s, "end": e}} }
	post(map[string]any{"name": "x", "timezone": "Mars/Olympus"}, "timezone")
	post(map[string]any{"name": "x", "timezone": "Local"}, "timezone")
	post(map[string]any{"name": " ", "timezone": "UTC"}, "name")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{}}, "working_hours")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{"monday": iv("17:00", "09:00")}}, "working_hours.monday[0].end")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{"monday": iv("24:30", "09:00")}}, "working_hours.monday[0].start")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{"monday": iv("23:00", "24:01")}}, "working_hours.monday[0].end")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{
		"monday": []map[string]any{{"start": "09:00", "end": "12:00"}, {"start": "11:00", "end": "15:00"}}}}, "working_hours.monday")
	post(map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{
		"tuesday": []map[string]any{{"start": "09:00", "end": "12:00"}, {"start": "12:00", "end": "15:00"}}}}, "working_hours.tuesday")
	post(map[string]any{"name": "x", "timezone": "UTC", "holidays": []map[string]any{{"date": "2026-02-29"}, {"date": "2026-12-25"}, {"date": "2026-12-25"}}},
		"holidays[0].date", "holidays[2].date")
	h.do("POST", "/v1/support/calendars", h.adminKey, map[string]any{"name": "x", "timezone": "UTC", "working_hours": map[string]any{"funday": iv("09:00", "10:00")}}).
		wantError(400, "VALIDATION_ERROR")
	// An update is validated as a whole calendar.
	c := newCalendar(t, h, nil)
	wantFields(t, h.do("PATCH", "/v1/support/calendars/"+c.Calendar.ID, h.adminKey, map[string]any{"timezone": "Nowhere/Land",
		"working_hours": map[string]any{"monday": []map[string]any{}}}), "timezone", "working_hours")
}

func TestSupportSLAPoliciesCRUD(t *testing.T) {
	h := newHarness(t)
	cal := newCalendar(t, h, nil).Calendar.ID
	p := newPolicy(t, h, map[string]any{"name": "Premium network", "tier": "premium", "category": "network", "calendar_id": cal,
		"warning_percent": 80, "credit_percent": 2.5,
		"targets": map[string]any{"critical": map[string]any{"response_time": "10m", "resolution_time": "2h", "update_interval": "30m"},
			"low": map[string]any{"response_time": "8h", "resolution_time": "90h", "business_hours": true}},
		"escalation": []map[string]any{
			{"metric": "resolution", "at_percent": 100, "action": "page_duty_manager", "repeat_every": "1h"},
			{"metric": "response", "at_percent": 150, "action": "notify", "recipients": []string{"noc@example.com"}},
			{"metric": "resolution", "at_percent": 75, "action": "notify_team_lead", "working_hours_only": true},
			{"metric": "response", "at_percent": 50, "action": "notify_assignee"}}})
	pp := p.Policy
	if !strings.HasPrefix(pp.ID, "slap_") || pp.Tier != "premium" || pp.Category != "network" || pp.CalendarID != cal || pp.WarningPercent != 80 ||
		pp.CreditPercent != 2.5 || len(pp.Targets) != 4 {
		t.Fatalf("created %+v", pp)
	}
	if c := pp.Targets["critical"]; c.ResponseTime != "10m" || c.ResolutionTime != "2h" || c.UpdateInterval != "30m" || c.BusinessHours {
		t.Fatalf("critical %+v", c)
	}
	if l := pp.Targets["low"]; l.ResolutionTime != "90h" || !l.BusinessHours {
		t.Fatalf("low %+v", l)
	}
	if m := pp.Targets["medium"]; m.ResponseTime != "4h" || m.ResolutionTime != "24h" || m.UpdateInterval != "" { // the defaults
		t.Fatalf("medium %+v", m)
	}
	order := []string{}
	for _, st := range pp.Escalation {
		order = append(order, st.Metric+"@"+strconv.Itoa(st.AtPercent))
	}
	if strings.Join(order, ",") != "response@50,response@150,resolution@75,resolution@100" || pp.Escalation[1].Recipients[0] != "noc@example.com" ||
		pp.Escalation[3].RepeatEvery != "1h" {
		t.Fatalf("escalation %v %+v", order, pp.Escalation)
	}
	path := "/v1/support/sla-policies/" + pp.ID
	var got policyAnswer
	h.do("GET", path, h.adminKey, nil).decode(200, &got)
	if got.Policy.ID != pp.ID || len(got.Policy.Escalation) != 4 {
		t.Fatalf("get %+v", got.Policy)
	}
	// PATCH changes what is sent; the priorities not sent keep their targets.
	h.do("PATCH", path, h.adminKey, map[string]any{"calendar_id": "", "escalation": []map[string]any{},
		"targets": map[string]any{"high": map[string]any{"response_time": "30m", "resolution_time": "6h"}}}).decode(200, &got)
	g := got.Policy
	if g.CalendarID != "" || len(g.Escalation) != 0 || g.Targets["high"].ResponseTime != "30m" || g.Targets["critical"].ResponseTime != "10m" || g.Name != pp.Name {
		t.Fatalf("patched %+v", g)
	}
	// One policy per tier and category.
	h.do("POST", "/v1/support/sla-policies", h.adminKey, map[string]any{"name": "again", "tier": "premium", "category": "network"}).wantError(409, "ALREADY_EXISTS")
	other := newPolicy(t, h, map[string]any{"name": "Premium", "tier": "premium"})
	h.do("PATCH", "/v1/support/sla-policies/"+other.Policy.ID, h.adminKey, map[string]any{"category": "network"}).wantError(409, "ALREADY_EXISTS")
	var list struct {
		Policies []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"policies"`
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	h.do("GET", "/v1/support/sla-policies?sort=name:asc", h.adminKey, nil).decode(200, &list)
	if list.Pagination.Total != 4 || list.Policies[0].Name != "Default" { // with the two seeded policies
		t.Fatalf("list %+v", list)
	}
	h.do("DELETE", path, h.adminKey, nil).decode(204, nil)
	h.do("GET", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("DELETE", path, h.adminKey, nil).wantError(404, "NOT_FOUND")
	h.do("PATCH", path, h.adminKey, map[string]any{"name": "x"}).wantError(404, "NOT_FOUND")
}

func TestSupportSeededSLAPolicies(t *testing.T) {
	h := newHarness(t)
	var def, std policyAnswer
	h.do("GET", "/v1/support/sla-policies/slap_default", h.adminKey, nil).decode(200, &def)
	if def.Policy.Tier != "" || def.Policy.Category != "" || def.Policy.CalendarID != "" || def.Policy.WarningPercent != 75 ||
		def.Policy.Targets["critical"].ResponseTime != "15m" || def.Policy.Targets["low"].ResolutionTime != "72h" || def.Policy.Targets["low"].BusinessHours {
		t.Fatalf("default %+v", def.Policy)
	}
	h.do("GET", "/v1/support/sla-policies/slap_standard", h.adminKey, nil).decode(200, &std)
	if std.Policy.Tier != "standard" || std.Policy.CalendarID != "cal_standard" || !std.Policy.Targets["low"].BusinessHours ||
		!std.Policy.Targets["medium"].BusinessHours || std.Policy.Targets["high"].BusinessHours {
		t.Fatalf("standard %+v", std.Policy)
	}
	var cal calendarAnswer
	h.do("GET", "/v1/support/calendars/cal_standard", h.adminKey, nil).decode(200, &cal)
	if cal.Calendar.Timezone != "UTC" || cal.Calendar.WorkingHours["monday"][0]["start"] != "08:00" || cal.Calendar.WorkingHours["friday"][0]["end"] != "18:00" ||
		len(cal.Calendar.WorkingHours["saturday"]) != 0 {
		t.Fatalf("calendar %+v", cal.Calendar)
	}
	// A calendar in use is not deleted.
	e := h.do("DELETE", "/v1/support/calendars/cal_standard", h.adminKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	if !strings.Contains(e.Error.Message, "slap_standard") || e.Error.Details["used_by"] == nil {
		t.Fatalf("in use: %+v", e.Error)
	}
}

func TestSupportSLAPolicyValidation(t *testing.T) {
	h := newHarness(t)
	post := func(body map[string]any, fields ...string) {
		t.Helper()
		wantFields(t, h.do("POST", "/v1/support/sla-policies", h.adminKey, body), fields...)
	}
	post(map[string]any{"name": "x", "tier": "enterprise", "category": "quantum", "calendar_id": "cal_nowhere"}, "category", "calendar_id")
	post(map[string]any{"name": "x", "tier": "gold"}, "tier")
	post(map[string]any{"name": "x", "tier": "enterprise", "warning_percent": 100, "credit_percent": 100.5}, "warning_percent", "credit_percent")
	post(map[string]any{"name": "x", "tier": "enterprise", "credit_percent": 1.234}, "credit_percent")
	post(map[string]any{"name": "x", "tier": "enterprise", "targets": map[string]any{
		"critical": map[string]any{"response_time": "5h", "resolution_time": "4h"},
		"high":     map[string]any{"response_time": "30s", "resolution_time": "1000h", "update_interval": "soon"}}},
		"targets.critical.response_time", "targets.high.response_time", "targets.high.resolution_time", "targets.high.update_interval")
	post(map[string]any{"name": "x", "tier": "enterprise", "escalation": []map[string]any{
		{"metric": "response", "at_percent": 50, "action": "notify"},
		{"metric": "resolution", "at_percent": 80, "action": "notify_assignee", "repeat_every": "1h", "recipients": []string{"a@example.com"}},
		{"metric": "resolution", "at_percent": 120, "action": "notify", "recipients": []string{"not-an-email"}},
		{"metric": "response", "at_percent": 50, "action": "notify", "recipients": []string{"b@example.com"}}}},
		"escalation[0].recipients", "escalation[1].repeat_every", "escalation[1].recipients", "escalation[2].recipients", "escalation[3]")
	post(map[string]any{"name": "x", "tier": "enterprise", "escalation": []map[string]any{{"metric": "response", "at_percent": 501, "action": "notify_assignee"}}},
		"escalation[0].at_percent")
	steps := []map[string]any{}
	for i := range 11 {
		steps = append(steps, map[string]any{"metric": "resolution", "at_percent": i + 1, "action": "notify_assignee"})
	}
	post(map[string]any{"name": "x", "tier": "enterprise", "escalation": steps}, "escalation")
	// An update is validated as a whole policy.
	p := newPolicy(t, h, map[string]any{"name": "ok", "tier": "enterprise"})
	wantFields(t, h.do("PATCH", "/v1/support/sla-policies/"+p.Policy.ID, h.adminKey, map[string]any{"name": " ", "category": "quantum"}), "name", "category")
}

func TestSupportSLAPermissions(t *testing.T) {
	h := newHarness(t)
	agentKey, _ := staffKey(t, h) // support:read, no support:admin
	cal := newCalendar(t, h, nil).Calendar.ID
	pol := newPolicy(t, h, map[string]any{"name": "p", "tier": "enterprise"}).Policy.ID
	calPath, polPath := "/v1/support/calendars/"+cal, "/v1/support/sla-policies/"+pol
	writes := func(key string) {
		t.Helper()
		h.do("POST", "/v1/support/calendars", key, map[string]any{"name": "x", "timezone": "UTC"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("PATCH", calPath, key, map[string]any{"name": "x"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("DELETE", calPath, key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", calPath+"/holidays", key, map[string]any{"date": "2027-01-01"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("DELETE", calPath+"/holidays/2027-01-01", key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", calPath+"/holidays/import", key, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "Content-Type", "text/calendar").wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("POST", "/v1/support/sla-policies", key, map[string]any{"name": "x", "tier": "premium"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("PATCH", polPath, key, map[string]any{"name": "x"}).wantError(403, "INSUFFICIENT_PERMISSIONS")
		h.do("DELETE", polPath, key, nil).wantError(403, "INSUFFICIENT_PERMISSIONS")
	}
	reads := func(key string, status int) {
		t.Helper()
		for _, p := range []string{"/v1/support/calendars", calPath, "/v1/support/sla-policies", polPath} {
			if status == 200 {
				h.do("GET", p, key, nil).decode(200, nil)
			} else {
				h.do("GET", p, key, nil).wantError(status, "INSUFFICIENT_PERMISSIONS")
			}
		}
	}
	// Customers, whatever their permissions: 403 on everything.
	for _, key := range []string{h.tenants[0].liveKey, h.tenants[0].testKey, h.tenants[1].liveKey} {
		writes(key)
		reads(key, 403)
	}
	// An agent with support:read reads, but does not write.
	writes(agentKey)
	reads(agentKey, 200)
	// An agent without support:read reads nothing.
	reads(leadKey(t, h, "support:create"), 403)
	// An agent with support:admin writes.
	lead := leadKey(t, h, "support:read", "support:admin")
	h.do("PATCH", calPath, lead, map[string]any{"name": "renamed"}).decode(200, nil)
	h.do("POST", "/v1/support/sla-policies", lead, map[string]any{"name": "x", "tier": "premium"}).decode(201, nil)
	h.do("GET", calPath, "", nil).wantError(401, "UNAUTHENTICATED")
}

func TestSupportCalendarDeleteInUse(t *testing.T) {
	h := newHarness(t)
	cal := newCalendar(t, h, nil).Calendar.ID
	pol := newPolicy(t, h, map[string]any{"name": "p", "tier": "enterprise", "calendar_id": cal}).Policy.ID
	e := h.do("DELETE", "/v1/support/calendars/"+cal, h.adminKey, nil).wantError(409, "INVALID_STATE_TRANSITION")
	if !strings.Contains(e.Error.Message, pol) {
		t.Fatalf("message %q does not name the policy", e.Error.Message)
	}
	h.do("GET", "/v1/support/calendars/"+cal, h.adminKey, nil).decode(200, nil)
	h.do("PATCH", "/v1/support/sla-policies/"+pol, h.adminKey, map[string]any{"calendar_id": ""}).decode(200, nil)
	h.do("DELETE", "/v1/support/calendars/"+cal, h.adminKey, nil).decode(204, nil)
}

func TestSupportHolidayImportLimits(t *testing.T) {
	h := newHarness(t)
	path := "/v1/support/calendars/" + newCalendar(t, h, nil).Calendar.ID + "/holidays/import"
	big := "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-FILLER:"+strings.Repeat("x", 1000)+"\r\n", 1100) + "END:VCALENDAR\r\n"
	h.do("POST", path, h.adminKey, big, "Content-Type", "text/calendar").wantError(413, "PAYLOAD_TOO_LARGE")
	h.do("POST", path, h.adminKey, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "Content-Type", "application/json").wantError(415, "UNSUPPORTED_MEDIA_TYPE")
	wantFields(t, h.do("POST", path, h.adminKey, " ", "Content-Type", "text/calendar"), "body")
	wantFields(t, h.do("POST", path+"?from_year=2030&to_year=2020", h.adminKey, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "Content-Type", "text/calendar"), "to_year")
	h.do("POST", "/v1/support/calendars/cal_nowhere/holidays/import", h.adminKey, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", "Content-Type", "text/calendar").
		wantError(404, "NOT_FOUND")
}
