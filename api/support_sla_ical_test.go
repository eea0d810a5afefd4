package api_test

import (
	"testing"
)

// holidaysICS is a small iCalendar file: two all-day events, one of them
// on a date the calendar already has.
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Holidays//EN\r\n" +
	"BEGIN:VEVENT\r\nUID:xmas-2026@example.com\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nDTEND;VALUE=DATE:20261226\r\nSUMMARY:Christmas Day\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:boxing-2026@example.com\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261226\r\nDTEND;VALUE=DATE:20261227\r\nSUMMARY:Boxing Day\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// TestSupportHolidayImport needs the business-time engine's iCalendar
// reader (businesstime.ParseICal): it fails against the temporary
// placeholder until that lands.
func TestSupportHolidayImport(t *testing.T) {
	h := newHarness(t)
	c := newCalendar(t, h, map[string]any{"name": "UK", "timezone": "Europe/London", "holidays": []map[string]any{{"date": "2026-12-25", "name": "Xmas"}}})
	path := "/v1/support/calendars/" + c.Calendar.ID
	var res struct {
		Imported int `json:"imported"`
		Skipped  int `json:"skipped"`
		Holidays []struct {
			Date string `json:"date"`
			Name string `json:"name"`
		} `json:"holidays"`
	}
	h.do("POST", path+"/holidays/import?from_year=2026&to_year=2026", h.adminKey, holidaysICS, "Content-Type", "text/calendar; charset=utf-8").decode(200, &res)
	if res.Imported != 1 || res.Skipped != 1 || len(res.Holidays) != 1 || res.Holidays[0].Date != "2026-12-26" || res.Holidays[0].Name != "Boxing Day" {
		t.Fatalf("import %+v", res)
	}
	// Importing again adds nothing.
	h.do("POST", path+"/holidays/import?from_year=2026&to_year=2026", h.adminKey, holidaysICS, "Content-Type", "text/calendar").decode(200, &res)
	if res.Imported != 0 || res.Skipped != 2 || len(res.Holidays) != 0 {
		t.Fatalf("second import %+v", res)
	}
	var got calendarAnswer
	h.do("GET", path, h.adminKey, nil).decode(200, &got)
	if len(got.Calendar.Holidays) != 2 || got.Calendar.Holidays[0].Name != "Xmas" {
		t.Fatalf("holidays %+v", got.Calendar.Holidays)
	}
	// A file that does not parse is 400.
	wantFields(t, h.do("POST", path+"/holidays/import", h.adminKey, "not a calendar", "Content-Type", "text/calendar"), "body")
}
