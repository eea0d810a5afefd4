package businesstime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	ical "github.com/arran4/golang-ical"
)

// MaxICalBytes is the largest iCalendar stream ParseICal reads.
const MaxICalBytes = 2 << 20

// MaxHolidays is the most holidays ParseICal returns.
const MaxHolidays = 5000

// maxEventDays is the longest single event ParseICal accepts, in days.
const maxEventDays = MaxHolidays

// maxRecurrenceSteps bounds the years ParseICal walks through to expand
// every yearly rule of a stream.
const maxRecurrenceSteps = 1_000_000

// ParseICal reads an iCalendar (RFC 5545) stream, such as a public-holiday
// calendar exported by a calendar application, and returns its days as
// holidays, sorted by date, each date once (the first event's SUMMARY names
// it).
//
// Each VEVENT gives a holiday for every date from its DTSTART up to but
// excluding its DTEND (one day when DTEND is absent, or when it is not after
// DTSTART; a DURATION of whole days or weeks stands for DTEND), named by its
// SUMMARY with the text escapes (\\, \;, \, and \n) undone. DTSTART and
// DTEND may be dates (VALUE=DATE) or date-times: a date-time gives its date
// as written, and TZID parameters are ignored. A DTEND date-time after
// midnight includes its own date.
//
// A yearly rule (RRULE with FREQ=YEARLY and optionally INTERVAL, COUNT or
// UNTIL; BYMONTH and BYMONTHDAY only when they repeat DTSTART's) is expanded
// for the occurrences starting in the years fromYear through toYear; a
// February 29 occurrence is skipped in other years, as RFC 5545 says. Dates
// listed by EXDATE are left out. Other rules are an error naming the event.
// Events without a rule are kept whatever their year.
// Events with STATUS:CANCELLED are ignored.
//
// Content lines are read by github.com/arran4/golang-ical, which unfolds
// continuation lines and accepts CRLF and LF line endings. It is an error
// when the stream lacks BEGIN:VCALENDAR, is malformed, is larger than
// MaxICalBytes, has an event without DTSTART or with a date that does not
// parse, or gives more than MaxHolidays dates.
func ParseICal(r io.Reader, fromYear, toYear int) ([]Holiday, error) {
	if fromYear > toYear {
		return nil, fmt.Errorf("ical: year range %d..%d is empty", fromYear, toYear)
	}
	if fromYear < 1 || toYear > 9999 {
		return nil, fmt.Errorf("ical: year range %d..%d is outside 1..9999", fromYear, toYear)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxICalBytes+1))
	if err != nil {
		return nil, fmt.Errorf("ical: reading: %w", err)
	}
	if len(data) > MaxICalBytes {
		return nil, fmt.Errorf("ical: the calendar is larger than %d bytes", MaxICalBytes)
	}
	head := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\uFEFF")), " \t\r\n")
	if len(head) < 15 || !strings.EqualFold(string(head[:15]), "BEGIN:VCALENDAR") {
		return nil, errors.New("ical: not an iCalendar stream: it does not begin with BEGIN:VCALENDAR")
	}
	cal, err := ical.ParseCalendar(bytes.NewReader(head))
	if err != nil {
		return nil, fmt.Errorf("ical: %w", err)
	}
	p := &icalParser{fromYear: fromYear, toYear: toYear, seen: map[int64]bool{}}
	for i, ev := range cal.Events() {
		if err := p.event(i, ev); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(p.out, func(a, b Holiday) int { return strings.Compare(a.Date, b.Date) })
	return p.out, nil
}

// icalParser collects the holidays of a stream.
type icalParser struct {
	fromYear, toYear int
	seen             map[int64]bool
	out              []Holiday
	steps            int
}

// icalDate is an iCalendar DATE or DATE-TIME value: its civil date and
// whether it is a date-time after midnight.
type icalDate struct {
	day           int64
	afterMidnight bool
}

// prop returns the first property of ev named name (case-insensitively).
func prop(ev *ical.VEvent, name string) *ical.IANAProperty {
	for i := range ev.Properties {
		if strings.EqualFold(ev.Properties[i].IANAToken, name) {
			return &ev.Properties[i]
		}
	}
	return nil
}

// parseICalDate parses a DATE (20060102) or DATE-TIME (20060102T150405,
// optionally with Z) value.
func parseICalDate(v string) (icalDate, error) {
	v = strings.TrimSpace(v)
	datePart, timePart, hasTime := strings.Cut(v, "T")
	t, err := time.Parse("20060102", datePart)
	if err != nil || len(datePart) != 8 {
		return icalDate{}, fmt.Errorf("%q is not an iCalendar date", v)
	}
	d := icalDate{day: dayNumber(t.Date())}
	if hasTime {
		clock, err := time.Parse("150405", strings.TrimSuffix(timePart, "Z"))
		if err != nil || len(timePart) < 6 {
			return icalDate{}, fmt.Errorf("%q is not an iCalendar date-time", v)
		}
		d.afterMidnight = clock.Hour()+clock.Minute()+clock.Second() > 0
	}
	return d, nil
}

// event adds the holidays of the i-th event ev.
func (p *icalParser) event(i int, ev *ical.VEvent) error {
	name := ""
	if s := prop(ev, "SUMMARY"); s != nil {
		name = s.Value
	}
	label := fmt.Sprintf("event %d", i+1)
	if name != "" {
		label = fmt.Sprintf("event %d (%q)", i+1, name)
	}
	if st := prop(ev, "STATUS"); st != nil && strings.EqualFold(strings.TrimSpace(st.Value), "CANCELLED") {
		return nil
	}
	ds := prop(ev, "DTSTART")
	if ds == nil {
		return fmt.Errorf("ical: %s has no DTSTART", label)
	}
	start, err := parseICalDate(ds.Value)
	if err != nil {
		return fmt.Errorf("ical: %s: DTSTART: %w", label, err)
	}
	days := int64(1)
	if de := prop(ev, "DTEND"); de != nil {
		end, err := parseICalDate(de.Value)
		if err != nil {
			return fmt.Errorf("ical: %s: DTEND: %w", label, err)
		}
		days = end.day - start.day
		if end.afterMidnight {
			days++
		}
	} else if du := prop(ev, "DURATION"); du != nil {
		if days, err = durationDays(du.Value); err != nil {
			return fmt.Errorf("ical: %s: DURATION: %w", label, err)
		}
	}
	days = max(days, 1)
	if days > maxEventDays {
		return fmt.Errorf("ical: %s lasts more than %d days", label, maxEventDays)
	}
	excluded := map[int64]bool{}
	for _, pr := range ev.Properties {
		if !strings.EqualFold(pr.IANAToken, "EXDATE") {
			continue
		}
		for _, v := range strings.Split(pr.Value, ",") {
			x, err := parseICalDate(v)
			if err != nil {
				return fmt.Errorf("ical: %s: EXDATE: %w", label, err)
			}
			excluded[x.day] = true
		}
	}
	rr := prop(ev, "RRULE")
	if rr == nil {
		if excluded[start.day] {
			return nil
		}
		return p.add(label, name, start.day, days)
	}
	rule, err := parseYearly(rr.Value, start.day)
	if err != nil {
		return fmt.Errorf("ical: %s: %w", label, err)
	}
	y0, m0, d0 := civil(start.day)
	count := 0
	for y := y0; y <= p.toYear; y += rule.interval {
		if p.steps++; p.steps > maxRecurrenceSteps {
			return fmt.Errorf("ical: %s: too many recurrences to expand", label)
		}
		if rule.count == 0 && y+rule.interval <= p.fromYear {
			// No COUNT to keep: jump to the last step before fromYear.
			y += (p.fromYear - y - 1) / rule.interval * rule.interval
			continue
		}
		t := time.Date(y, m0, d0, 0, 0, 0, 0, time.UTC)
		if t.Day() != d0 {
			continue // February 29 in a common year
		}
		day := dayNumber(t.Date())
		if rule.until != nil && day > *rule.until {
			break
		}
		if count++; rule.count > 0 && count > rule.count {
			break
		}
		if y < p.fromYear || excluded[day] {
			continue
		}
		if err := p.add(label, name, day, days); err != nil {
			return err
		}
	}
	return nil
}

// add records the holidays of an occurrence of days days from day.
func (p *icalParser) add(label, name string, day, days int64) error {
	for n := day; n < day+days; n++ {
		if p.seen[n] {
			continue
		}
		if len(p.out) >= MaxHolidays {
			return fmt.Errorf("ical: %s: the calendar has more than %d holidays", label, MaxHolidays)
		}
		p.seen[n] = true
		y, m, d := civil(n)
		p.out = append(p.out, Holiday{Date: fmt.Sprintf("%04d-%02d-%02d", y, m, d), Name: name})
	}
	return nil
}

// durationDays parses a DURATION of whole days or weeks (P1D, P2W, P1DT0H).
func durationDays(v string) (int64, error) {
	s := strings.TrimPrefix(strings.TrimSpace(v), "+")
	if !strings.HasPrefix(s, "P") {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	s = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s[1:], "T0S"), "T0M"), "T0H")
	if s == "" {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	unit := int64(1)
	switch s[len(s)-1] {
	case 'W':
		unit = 7
	case 'D':
	default:
		return 0, fmt.Errorf("%q is not a duration of whole days", v)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a duration of whole days", v)
	}
	return n * unit, nil
}

// yearly is a parsed FREQ=YEARLY rule.
type yearly struct {
	interval int
	count    int
	until    *int64
}

// parseYearly parses an RRULE value, accepting only yearly rules that
// repeat the date of DTSTART (day number start).
func parseYearly(v string, start int64) (yearly, error) {
	r := yearly{interval: 1}
	freq := ""
	_, m0, d0 := civil(start)
	for _, part := range strings.Split(strings.TrimSpace(v), ";") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		k = strings.ToUpper(k)
		bad := func() (yearly, error) {
			return yearly{}, fmt.Errorf("RRULE %q: %s=%s is not supported (only yearly rules with INTERVAL, COUNT or UNTIL)", v, k, val)
		}
		switch k {
		case "FREQ":
			freq = strings.ToUpper(val)
		case "INTERVAL", "COUNT", "BYMONTH", "BYMONTHDAY":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || (k == "INTERVAL" && n > 9999) {
				return bad()
			}
			switch {
			case k == "INTERVAL":
				r.interval = n
			case k == "COUNT":
				r.count = n
			case k == "BYMONTH" && n != int(m0), k == "BYMONTHDAY" && n != d0:
				return bad()
			}
		case "UNTIL":
			u, err := parseICalDate(val)
			if err != nil {
				return yearly{}, fmt.Errorf("RRULE %q: UNTIL: %w", v, err)
			}
			r.until = &u.day
		case "WKST":
		default:
			return bad()
		}
	}
	if freq != "YEARLY" {
		return yearly{}, fmt.Errorf("RRULE %q is not supported (only FREQ=YEARLY)", v)
	}
	if r.count > 0 && r.until != nil {
		return yearly{}, fmt.Errorf("RRULE %q has both COUNT and UNTIL", v)
	}
	return r, nil
}
