package businesstime_test

import (
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/businesstime"
)

func TestValidate(t *testing.T) {
	iv := func(s, e int) businesstime.Interval { return businesstime.Interval{Start: s, End: e} }
	tests := []struct {
		name  string
		edit  func(c *businesstime.Calendar)
		field string // "" for a valid calendar
		msg   string
	}{
		{"valid", func(*businesstime.Calendar) {}, "", ""},
		{"24:00 end", func(c *businesstime.Calendar) { c.Week[time.Saturday] = []businesstime.Interval{iv(0, 1440)} }, "", ""},
		{"unknown zone", func(c *businesstime.Calendar) { c.Zone = "Europe/Atlantis" }, "zone", "unknown time zone"},
		{"empty zone", func(c *businesstime.Calendar) { c.Zone = "" }, "zone", "required"},
		{"Local zone", func(c *businesstime.Calendar) { c.Zone = "Local" }, "zone", "depends on the machine"},
		{"negative start", func(c *businesstime.Calendar) { c.Week[time.Monday] = []businesstime.Interval{iv(-1, 60)} }, "week[1][0]", "outside 0..1440"},
		{"end past midnight", func(c *businesstime.Calendar) { c.Week[time.Tuesday] = []businesstime.Interval{iv(60, 1441)} }, "week[2][0]", "outside 0..1440"},
		{"empty interval", func(c *businesstime.Calendar) { c.Week[time.Monday] = []businesstime.Interval{iv(600, 600)} }, "week[1][0]", "does not end after it starts"},
		{"reversed interval", func(c *businesstime.Calendar) { c.Week[time.Monday] = []businesstime.Interval{iv(700, 600)} }, "week[1][0]", "does not end after it starts"},
		{"unsorted", func(c *businesstime.Calendar) {
			c.Week[time.Wednesday] = []businesstime.Interval{iv(780, 1020), iv(540, 720)}
		}, "week[3][1]", "must be sorted"},
		{"overlapping", func(c *businesstime.Calendar) {
			c.Week[time.Friday] = []businesstime.Interval{iv(540, 720), iv(700, 1020)}
		}, "week[5][1]", "must not overlap"},
		{"no working time", func(c *businesstime.Calendar) { c.Week = [7][]businesstime.Interval{} }, "week", "no working time"},
		{"bad holiday date", func(c *businesstime.Calendar) {
			c.Holidays = []businesstime.Holiday{{Date: "2026-12-25"}, {Date: "2026-02-30"}}
		}, "holidays[1].date", "not a date"},
		{"holiday date format", func(c *businesstime.Calendar) { c.Holidays = []businesstime.Holiday{{Date: "25/12/2026"}} }, "holidays[0].date", "not a date"},
		{"duplicate holiday", func(c *businesstime.Calendar) {
			c.Holidays = []businesstime.Holiday{{Date: "2026-12-25"}, {Date: "2026-12-26"}, {Date: "2026-12-25"}}
		}, "holidays[2].date", "already holidays[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := nineToFive(london)
			tt.edit(c)
			ps := c.Validate()
			if tt.field == "" {
				if ps != nil {
					t.Fatalf("Validate() = %v, want nil", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Field != tt.field || !strings.Contains(ps[0].Message, tt.msg) {
				t.Fatalf("Validate() = %v, want one problem at %s containing %q", ps, tt.field, tt.msg)
			}
		})
	}
	var nilCal *businesstime.Calendar
	if ps := nilCal.Validate(); ps != nil {
		t.Errorf("nil calendar: %v", ps)
	}
}

func TestLocation(t *testing.T) {
	var nilCal *businesstime.Calendar
	if loc, err := nilCal.Location(); err != nil || loc != time.UTC {
		t.Errorf("nil Location() = %v, %v", loc, err)
	}
	if loc, err := nineToFive(kolkata).Location(); err != nil || loc.String() != kolkata {
		t.Errorf("Location() = %v, %v", loc, err)
	}
	if _, err := (&businesstime.Calendar{Zone: "Nowhere/Special"}).Location(); err == nil {
		t.Error("an unknown zone loaded")
	}
}

func TestClock(t *testing.T) {
	good := map[string]int{"00:00": 0, "09:30": 570, "17:00": 1020, "23:59": 1439, "24:00": 1440}
	for s, m := range good {
		got, err := businesstime.ParseClock(s)
		if err != nil || got != m {
			t.Errorf("ParseClock(%q) = %d, %v, want %d", s, got, err, m)
		}
		if f := businesstime.FormatClock(m); f != s {
			t.Errorf("FormatClock(%d) = %q, want %q", m, f, s)
		}
	}
	for _, s := range []string{"", "9:00", "09:0", "0900", "24:01", "25:00", "12:60", "-1:00", "ab:cd", "09:00 ", "09.00"} {
		if m, err := businesstime.ParseClock(s); err == nil {
			t.Errorf("ParseClock(%q) = %d, want an error", s, m)
		}
	}
	if f := businesstime.FormatClock(-90); f != "-01:30" {
		t.Errorf("FormatClock(-90) = %q", f)
	}
}
