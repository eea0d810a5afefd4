package businesstime_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models/businesstime"
)

// crlf turns the LF line ends of s into CRLF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

const sampleICal = `BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Example Corp//Holidays 1.0//EN
CALSCALE:GREGORIAN
X-WR-CALNAME:UK bank holidays
BEGIN:VTIMEZONE
TZID:Europe/London
BEGIN:STANDARD
DTSTART:19701025T020000
TZOFFSETFROM:+0100
TZOFFSETTO:+0000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE
BEGIN:VEVENT
UID:christmas@example.com
DTSTAMP:20260101T000000Z
DTSTART;VALUE=DATE:20261225
DTEND;VALUE=DATE:20261229
SUMMARY:Christmas\, Boxing Day\; and the
  substitute day
DESCRIPTION:A long description that is folded over
	 two lines with a tab.
END:VEVENT
BEGIN:VEVENT
UID:newyear@example.com
DTSTART;VALUE=DATE:20260101
SUMMARY:New Year's Day
RRULE:FREQ=YEARLY;COUNT=3
END:VEVENT
BEGIN:VEVENT
UID:may@example.com
DTSTART;TZID=Europe/London:20260504T090000
DTEND;TZID=Europe/London:20260504T170000
SUMMARY:Early May bank holiday\nclosed
END:VEVENT
BEGIN:VEVENT
UID:dup@example.com
DTSTART;VALUE=DATE:20261225
SUMMARY:Duplicate Christmas
END:VEVENT
BEGIN:VEVENT
UID:anniversary@example.com
DTSTART;VALUE=DATE:20200701
DURATION:P2D
RRULE:FREQ=YEARLY;INTERVAL=3;UNTIL=20300101
EXDATE;VALUE=DATE:20290701
SUMMARY:Company day\\off
END:VEVENT
END:VCALENDAR
`

func TestParseICal(t *testing.T) {
	want := []businesstime.Holiday{
		{Date: "2026-01-01", Name: "New Year's Day"},
		{Date: "2026-05-04", Name: "Early May bank holiday\nclosed"},
		{Date: "2026-07-01", Name: `Company day\off`},
		{Date: "2026-07-02", Name: `Company day\off`},
		{Date: "2026-12-25", Name: "Christmas, Boxing Day; and the substitute day"},
		{Date: "2026-12-26", Name: "Christmas, Boxing Day; and the substitute day"},
		{Date: "2026-12-27", Name: "Christmas, Boxing Day; and the substitute day"},
		{Date: "2026-12-28", Name: "Christmas, Boxing Day; and the substitute day"},
		{Date: "2027-01-01", Name: "New Year's Day"},
		{Date: "2028-01-01", Name: "New Year's Day"},
	}
	for name, text := range map[string]string{"CRLF": crlf(sampleICal), "LF": sampleICal} {
		t.Run(name, func(t *testing.T) {
			got, err := businesstime.ParseICal(strings.NewReader(text), 2026, 2030)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ParseICal =\n%q\nwant\n%q", got, want)
			}
		})
	}
	t.Run("year range", func(t *testing.T) {
		got, err := businesstime.ParseICal(strings.NewReader(crlf(sampleICal)), 2027, 2027)
		if err != nil {
			t.Fatal(err)
		}
		var dates []string
		for _, h := range got {
			dates = append(dates, h.Date)
		}
		// Single events are kept whatever their year; recurrences only in range.
		wantDates := []string{"2026-05-04", "2026-12-25", "2026-12-26", "2026-12-27", "2026-12-28", "2027-01-01"}
		if !reflect.DeepEqual(dates, wantDates) {
			t.Fatalf("dates = %v, want %v", dates, wantDates)
		}
	})
	t.Run("leap day", func(t *testing.T) {
		text := "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20240229\nRRULE:FREQ=YEARLY;COUNT=2\nSUMMARY:Leap\nEND:VEVENT\nEND:VCALENDAR\n"
		got, err := businesstime.ParseICal(strings.NewReader(text), 2024, 2040)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Date != "2024-02-29" || got[1].Date != "2028-02-29" {
			t.Fatalf("got %v", got)
		}
	})
}

func TestParseICalErrors(t *testing.T) {
	event := func(body string) string {
		return crlf("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\n" + body + "END:VEVENT\nEND:VCALENDAR\n")
	}
	tests := []struct {
		name, text, msg string
		from, to        int
	}{
		{"not a calendar", "hello world\n", "BEGIN:VCALENDAR", 2026, 2026},
		{"empty", "", "BEGIN:VCALENDAR", 2026, 2026},
		{"vcard", "BEGIN:VCARD\r\nEND:VCARD\r\n", "BEGIN:VCALENDAR", 2026, 2026},
		{"no DTSTART", event("SUMMARY:Mystery\n"), `event 1 ("Mystery") has no DTSTART`, 2026, 2026},
		{"bad date", event("DTSTART;VALUE=DATE:20261332\nSUMMARY:Bad\n"), `"Bad"): DTSTART: "20261332" is not an iCalendar date`, 2026, 2026},
		{"bad date-time", event("DTSTART:20261201T25\nSUMMARY:Bad\n"), "not an iCalendar date-time", 2026, 2026},
		{"bad DTEND", event("DTSTART;VALUE=DATE:20261201\nDTEND;VALUE=DATE:2026-12-02\n"), "DTEND", 2026, 2026},
		{"monthly rule", event("DTSTART;VALUE=DATE:20260101\nRRULE:FREQ=MONTHLY\nSUMMARY:Pay day\n"), `event 1 ("Pay day"): RRULE "FREQ=MONTHLY" is not supported`, 2026, 2026},
		{"yearly by day", event("DTSTART;VALUE=DATE:20260525\nRRULE:FREQ=YEARLY;BYDAY=-1MO;BYMONTH=5\nSUMMARY:Spring\n"), "BYDAY=-1MO is not supported", 2026, 2026},
		{"huge interval", event("DTSTART;VALUE=DATE:20260101\nRRULE:FREQ=YEARLY;INTERVAL=9223372036854775807\n"), "INTERVAL=9223372036854775807 is not supported", 2026, 2026},
		{"too long", event("DTSTART;VALUE=DATE:20000101\nDTEND;VALUE=DATE:20300101\n"), "lasts more than", 2026, 2026},
		{"too many", crlf("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20000101\nDTEND;VALUE=DATE:20100101\nEND:VEVENT\n" +
			"BEGIN:VEVENT\nDTSTART;VALUE=DATE:20100101\nDTEND;VALUE=DATE:20200101\nEND:VEVENT\nEND:VCALENDAR\n"), "more than 5000 holidays", 2026, 2026},
		{"years reversed", event("DTSTART;VALUE=DATE:20260101\n"), "year range", 2027, 2026},
		{"unterminated", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260101\r\n", "ical", 2026, 2026},
		{"too large", "BEGIN:VCALENDAR\r\n" + strings.Repeat("X-PAD:"+strings.Repeat("a", 70)+"\r\n", 30000) + "END:VCALENDAR\r\n", "larger than", 2026, 2026},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := businesstime.ParseICal(strings.NewReader(tt.text), tt.from, tt.to)
			if err == nil {
				t.Fatalf("ParseICal gave %d holidays, want an error", len(got))
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
}

// FuzzParseICal checks that no input makes ParseICal panic and that what it
// returns is sorted, unique and bounded.
func FuzzParseICal(f *testing.F) {
	f.Add(sampleICal)
	f.Add(crlf(sampleICal))
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20240229\nRRULE:FREQ=YEARLY;COUNT=2\nEND:VEVENT\nEND:VCALENDAR\n")
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE\nEND:VEVENT\nEND:VCALENDAR\n")
	f.Fuzz(func(t *testing.T, text string) {
		hs, err := businesstime.ParseICal(strings.NewReader(text), 2020, 2030)
		if err != nil {
			return
		}
		if len(hs) > businesstime.MaxHolidays {
			t.Fatalf("%d holidays", len(hs))
		}
		for i := 1; i < len(hs); i++ {
			if hs[i-1].Date >= hs[i].Date {
				t.Fatalf("holidays not sorted and unique: %v, %v", hs[i-1], hs[i])
			}
		}
	})
}
