// Package businesstime is the platform's business-time arithmetic: a
// calendar of weekly working hours in an IANA time zone, with holidays,
// and pure, deterministic functions over it (add business time to an
// instant, count the business time between two instants, split a span into
// working and non-working pieces). It does no I/O beyond reading zone data:
// the SLA clock's activities and the API's what-if simulation use the same
// functions.
//
// Working intervals are local wall-clock times, so business time follows
// the zone's daylight-saving changes: a 00:00-24:00 day lasts 23 or 25 hours
// when the clocks change. A nil *Calendar counts calendar time; so does a
// calendar that Validate refuses because its zone does not load or its week
// has no working minute (an SLA clock keeps running rather than never
// ending). Every search is bounded by Horizon.
//
// ParseICal imports holidays from an iCalendar (RFC 5545) stream; the
// content lines are read with github.com/arran4/golang-ical, and the
// expansion of yearly rules into dates is done here.
package businesstime

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	_ "time/tzdata" // zones are embedded: a host without zone files still has them
)

// Interval is one working period of a day, in minutes after local
// midnight: [Start, End), 0 <= Start < End <= 1440.
type Interval struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Holiday is a local calendar date (YYYY-MM-DD) on which nobody works.
type Holiday struct {
	Date string `json:"date"`
	Name string `json:"name,omitempty"`
}

// Calendar is when business time runs: the working intervals of each
// weekday (indexed by time.Weekday, sorted, not overlapping) in Zone, an
// IANA time zone name, except on Holidays. A nil *Calendar means calendar
// time: every minute counts.
type Calendar struct {
	Zone     string        `json:"zone"`
	Week     [7][]Interval `json:"week"`
	Holidays []Holiday     `json:"holidays,omitempty"`
}

// MinutesPerDay is the end of a day in minutes after local midnight: an
// interval ending at 24:00 has End == MinutesPerDay.
const MinutesPerDay = 24 * 60

// dateLayout is the layout of Holiday.Date.
const dateLayout = "2006-01-02"

// Problem is one reason a Calendar is not valid: Field is a path into the
// calendar ("zone", "week", "week[1][0]", "holidays[2].date") and Message
// says what is wrong with it.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Validate checks c and returns its problems, or nil when c is valid: Zone
// must be an IANA time zone name that time.LoadLocation loads ("Local" and
// the empty name are refused: they would not give the same answers on every
// machine); every interval must lie within 0..1440 with Start < End, the
// intervals of a day must be sorted and must not overlap; the week must have
// at least one working minute; holiday dates must parse as 2006-01-02 and be
// unique. A nil calendar (calendar time) is valid.
func (c *Calendar) Validate() []Problem {
	if c == nil {
		return nil
	}
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if _, err := c.Location(); err != nil {
		add("zone", "%v", err)
	}
	total := 0
	for day, ivs := range c.Week {
		for i, iv := range ivs {
			field := fmt.Sprintf("week[%d][%d]", day, i)
			switch {
			case iv.Start < 0 || iv.Start > MinutesPerDay || iv.End < 0 || iv.End > MinutesPerDay:
				add(field, "%s interval %d..%d is outside 0..%d (00:00..24:00)", time.Weekday(day), iv.Start, iv.End, MinutesPerDay)
				continue
			case iv.Start >= iv.End:
				add(field, "%s interval %s-%s does not end after it starts", time.Weekday(day), FormatClock(iv.Start), FormatClock(iv.End))
				continue
			}
			total += iv.End - iv.Start
			if i > 0 {
				prev := ivs[i-1]
				if iv.Start < prev.End {
					add(field, "%s interval %s-%s starts before the previous interval (%s-%s) ends: intervals must be sorted and must not overlap",
						time.Weekday(day), FormatClock(iv.Start), FormatClock(iv.End), FormatClock(prev.Start), FormatClock(prev.End))
				}
			}
		}
	}
	if total == 0 {
		add("week", "the week has no working time")
	}
	seen := make(map[string]int, len(c.Holidays))
	for i, h := range c.Holidays {
		field := fmt.Sprintf("holidays[%d].date", i)
		if _, err := time.Parse(dateLayout, h.Date); err != nil {
			add(field, "%q is not a date of the form YYYY-MM-DD", h.Date)
			continue
		}
		if j, ok := seen[h.Date]; ok {
			add(field, "%s is already holidays[%d]", h.Date, j)
			continue
		}
		seen[h.Date] = i
	}
	return ps
}

// Location returns the time zone of c: UTC for a nil calendar, otherwise
// time.LoadLocation(c.Zone) from the embedded zone database. It returns an
// error when the zone does not load, and for the empty name and "Local",
// which time.LoadLocation would resolve to UTC or to this machine's zone.
func (c *Calendar) Location() (*time.Location, error) {
	if c == nil {
		return time.UTC, nil
	}
	switch c.Zone {
	case "":
		return nil, errors.New("zone is required: an IANA time zone name such as Europe/London")
	case "Local":
		return nil, errors.New(`zone "Local" depends on the machine: use an IANA time zone name such as Europe/London`)
	}
	loc, err := time.LoadLocation(c.Zone)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", c.Zone)
	}
	return loc, nil
}

// ParseClock parses a wall-clock time "HH:MM", 00:00 through 24:00, into
// minutes after midnight (24:00 is 1440, the end of the day).
func ParseClock(s string) (int, error) {
	if len(s) != 5 || s[2] != ':' || !isDigits(s[:2]) || !isDigits(s[3:]) {
		return 0, fmt.Errorf("clock time %q is not of the form HH:MM", s)
	}
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, fmt.Errorf("clock time %q is outside 00:00..24:00", s)
	}
	return h*60 + m, nil
}

// FormatClock formats minutes after midnight as "HH:MM" (1440 is "24:00").
// Values outside 0..1440 are formatted the same way: hours past 24, and a
// leading minus sign for negative values.
func FormatClock(m int) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%02d:%02d", sign, m/60, m%60)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sortedHolidays returns the valid holiday dates of hs as day numbers,
// sorted and without duplicates.
func sortedHolidays(hs []Holiday) []int64 {
	days := make([]int64, 0, len(hs))
	for _, h := range hs {
		t, err := time.Parse(dateLayout, h.Date)
		if err != nil {
			continue
		}
		days = append(days, dayNumber(t.Date()))
	}
	slices.Sort(days)
	return slices.Compact(days)
}
