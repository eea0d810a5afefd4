// Package analytics answers the analytics endpoints (GET /v1/analytics/...):
// usage and costs over a period, in time buckets of a time zone, for the
// services, accounts and organizations a caller may see. Every endpoint
// shares one query model (Query): the period (from and to, or a named
// period), the granularity of its buckets, the time zone the buckets are
// taken in, and filters. Figures are SQL aggregates per 15-minute bucket
// folded here into the zone's hours, days, ISO weeks or months, so the
// work is bounded by the period's length, not by the rows it covers.
package analytics

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// Named periods.
const (
	PeriodLast24Hours  = "last_24_hours"
	PeriodLast7Days    = "last_7_days"
	PeriodLast30Days   = "last_30_days"
	PeriodCurrentMonth = "current_month"
	PeriodLastMonth    = "last_month"
	PeriodCurrentYear  = "current_year"
	DefaultPeriod      = PeriodLast30Days
)

// Periods returns the named periods, in the order the docs list them.
func Periods() []string {
	return []string{PeriodLast24Hours, PeriodLast7Days, PeriodLast30Days, PeriodCurrentMonth, PeriodLastMonth, PeriodCurrentYear}
}

// Granularities of the buckets.
const (
	GranularityHour  = "hour"
	GranularityDay   = "day"
	GranularityWeek  = "week"
	GranularityMonth = "month"
)

// Granularities returns the granularities, finest first.
func Granularities() []string {
	return []string{GranularityHour, GranularityDay, GranularityWeek, GranularityMonth}
}

// MaxBuckets is the most buckets one answer lists.
const MaxBuckets = 1000

// bucketSeconds is the width of the buckets the database counts in before
// they are folded into the zone's buckets: 15 minutes, which every UTC
// offset in use is a multiple of.
const bucketSeconds = 15 * 60

// QueryInput is the query model as a request sends it: every parameter a
// string, empty when absent.
type QueryInput struct {
	From           string // RFC 3339, or YYYY-MM-DD (midnight in Timezone); inclusive
	To             string // RFC 3339, or YYYY-MM-DD (midnight in Timezone); exclusive
	Period         string // a named period, not with From and To; default last_30_days
	Granularity    string // hour, day, week or month; default from the period's length
	Timezone       string // IANA name; default UTC
	ServiceID      string // one service (svc_)
	ServiceType    string // a service kind, a catalog category or a service type
	Location       string // a location id (loc_), a ZIP code, a two-letter state code or a city
	AccountID      string // one billing account (acct_)
	OrganizationID string // provider staff only: one organization (org_)
}

// Filters are a query's filters, trimmed; empty fields do not filter.
type Filters struct {
	ServiceID      string
	ServiceType    string
	Location       string
	AccountID      string
	OrganizationID string
}

// serviceFilter reports whether a filter selects services (any but the
// account and organization).
func (f Filters) serviceFilter() bool {
	return f.ServiceID != "" || f.ServiceType != "" || f.Location != ""
}

// Bucket is one time bucket of an answer: [Start, End), both in the
// query's zone, clamped to the query's period (so the first and the last
// bucket may be shorter than the granularity).
type Bucket struct {
	Start time.Time
	End   time.Time
}

// Query is a validated query: the period [From, To) (in Location), its
// granularity and buckets, and the filters.
type Query struct {
	From        time.Time
	To          time.Time
	Period      string // the named period asked for ("" with from and to)
	Granularity string
	Location    *time.Location
	Filters     Filters
	Buckets     []Bucket
}

var (
	identPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	typePattern  = regexp.MustCompile(`^[a-z0-9_-]{1,40}$`)
)

// ParseQuery validates in at now for a caller (staff: provider staff, who
// may filter by organization). Every invalid field is reported at once.
// Errors: VALIDATION_ERROR (a customer's organization_id too: only staff
// may filter by organization).
func ParseQuery(in QueryInput, staff bool, now time.Time) (*Query, error) {
	var v models.Validator
	trim := strings.TrimSpace
	in.From, in.To, in.Period, in.Granularity, in.Timezone = trim(in.From), trim(in.To), trim(in.Period), trim(in.Granularity), trim(in.Timezone)
	q := &Query{Location: time.UTC, Granularity: in.Granularity, Filters: Filters{ServiceID: trim(in.ServiceID), ServiceType: trim(in.ServiceType),
		Location: trim(in.Location), AccountID: trim(in.AccountID), OrganizationID: trim(in.OrganizationID)}}
	if in.Timezone != "" {
		loc, err := time.LoadLocation(in.Timezone)
		if err != nil || in.Timezone == "Local" || strings.HasPrefix(in.Timezone, "/") {
			v.Add("timezone", "must be an IANA time zone name, such as Europe/London or UTC")
		} else {
			q.Location = loc
		}
	}
	f := q.Filters
	v.Check(f.ServiceID == "" || identPattern.MatchString(f.ServiceID), "service_id", "must be a service id (svc_...)")
	v.Check(f.AccountID == "" || identPattern.MatchString(f.AccountID), "account_id", "must be a billing account id")
	v.Check(f.ServiceType == "" || typePattern.MatchString(f.ServiceType), "service_type", "must be a service kind, a category or a service type (lowercase letters, digits, _ and -, at most 40)")
	v.Check(len(f.Location) <= 100, "location", "must be at most 100 characters")
	if f.OrganizationID != "" {
		v.Check(staff, "organization_id", "only provider staff may filter by organization")
		v.Check(!staff || identPattern.MatchString(f.OrganizationID), "organization_id", "must be an organization id (org_...)")
	}
	if in.Granularity != "" && !slices.Contains(Granularities(), in.Granularity) {
		v.Add("granularity", "must be one of "+strings.Join(Granularities(), ", "))
	}
	loc := q.Location
	var okFrom, okTo bool
	switch {
	case in.From != "" || in.To != "":
		v.Check(in.Period == "", "period", "cannot be combined with from and to")
		v.Check(in.From != "", "from", "is required with to")
		v.Check(in.To != "", "to", "is required with from")
		if in.From != "" {
			q.From, okFrom = ParseTime(in.From, loc)
			v.Check(okFrom, "from", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
		}
		if in.To != "" {
			q.To, okTo = ParseTime(in.To, loc)
			v.Check(okTo, "to", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
		}
		if okFrom && okTo {
			v.Check(q.To.After(q.From), "to", "must be after from")
			v.Check(q.From.Year() >= 2000 && q.To.Year() <= 2100, "from", "must lie between the years 2000 and 2100, as must to")
		}
	default:
		q.Period = in.Period
		if q.Period == "" {
			q.Period = DefaultPeriod
		}
		if from, to, ok := PeriodWindow(q.Period, now, loc); ok {
			q.From, q.To, okFrom, okTo = from, to, true, true
		} else {
			v.Add("period", "must be one of "+strings.Join(Periods(), ", "))
		}
	}
	if okFrom && okTo && q.To.After(q.From) && v.Err() == nil {
		if q.Granularity == "" {
			q.Granularity = defaultGranularity(q.Period, q.To.Sub(q.From))
		}
		buckets, ok := makeBuckets(q.From.In(loc), q.To.In(loc), q.Granularity)
		if ok {
			q.Buckets = buckets
		} else {
			v.Add("granularity", fmt.Sprintf("the period would have more than %d %s buckets: choose a coarser granularity or a shorter period", MaxBuckets, q.Granularity))
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	q.From, q.To = q.From.In(loc), q.To.In(loc)
	return q, nil
}

// ParseTime reads an RFC 3339 timestamp, or a date as midnight of that day
// in loc.
func ParseTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// PeriodWindow returns the window [from, to) of a named period at now in
// loc: the last 24 hours, 7 or 30 days end at now; the current and last
// month and the current year are calendar periods of loc (the current
// ones end in the future). ok is false for an unknown name.
func PeriodWindow(period string, now time.Time, loc *time.Location) (from, to time.Time, ok bool) {
	now = now.In(loc)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	switch period {
	case PeriodLast24Hours:
		return now.Add(-24 * time.Hour), now, true
	case PeriodLast7Days:
		return now.AddDate(0, 0, -7), now, true
	case PeriodLast30Days:
		return now.AddDate(0, 0, -30), now, true
	case PeriodCurrentMonth:
		return month, month.AddDate(0, 1, 0), true
	case PeriodLastMonth:
		return month.AddDate(0, -1, 0), month, true
	case PeriodCurrentYear:
		y := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, loc)
		return y, y.AddDate(1, 0, 0), true
	}
	return time.Time{}, time.Time{}, false
}

// defaultGranularity is the granularity of a period asked without one:
// hours for the last 24 hours (or a span of at most two days), months for
// the current year (or a span over 92 days), days otherwise.
func defaultGranularity(period string, span time.Duration) string {
	switch period {
	case PeriodLast24Hours:
		return GranularityHour
	case PeriodCurrentYear:
		return GranularityMonth
	case "":
		switch {
		case span <= 48*time.Hour:
			return GranularityHour
		case span > 92*24*time.Hour:
			return GranularityMonth
		}
	}
	return GranularityDay
}

// unitStart returns the first instant of the hour, day, ISO week (from
// Monday) or month of loc that holds t (t in loc).
func unitStart(t time.Time, granularity string) time.Time {
	loc := t.Location()
	switch granularity {
	case GranularityHour:
		// Local hours start where the local clock shows a whole hour;
		// subtracting the minutes and seconds shown finds it whatever the
		// zone's offset.
		return t.Add(-time.Duration(t.Minute())*time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	case GranularityWeek:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		back := (int(d.Weekday()) + 6) % 7 // days since Monday
		return time.Date(d.Year(), d.Month(), d.Day()-back, 0, 0, 0, 0, loc)
	case GranularityMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// nextUnit returns the start of the unit after the one starting at s.
func nextUnit(s time.Time, granularity string) time.Time {
	loc := s.Location()
	switch granularity {
	case GranularityHour:
		// An hour later in absolute time is the next local whole hour,
		// across DST changes too (they move clocks by whole hours in the
		// zones that shift them).
		return unitStart(s.Add(time.Hour), GranularityHour)
	case GranularityWeek:
		return time.Date(s.Year(), s.Month(), s.Day()+7, 0, 0, 0, 0, loc)
	case GranularityMonth:
		return time.Date(s.Year(), s.Month()+1, 1, 0, 0, 0, 0, loc)
	}
	return time.Date(s.Year(), s.Month(), s.Day()+1, 0, 0, 0, 0, loc)
}

// makeBuckets lists the buckets of [from, to) (in their zone), each
// clamped to the period; ok is false past MaxBuckets.
func makeBuckets(from, to time.Time, granularity string) ([]Bucket, bool) {
	var out []Bucket
	for s := unitStart(from, granularity); s.Before(to); {
		e := nextUnit(s, granularity)
		if !e.After(s) { // a zone oddity: never loop
			e = s.Add(time.Hour)
		}
		if len(out) == MaxBuckets {
			return nil, false
		}
		b := Bucket{Start: s, End: e}
		if b.Start.Before(from) {
			b.Start = from
		}
		if b.End.After(to) {
			b.End = to
		}
		out = append(out, b)
		s = e
	}
	return out, true
}

// bucketIndex returns the index of the bucket that holds the 15-minute
// database bucket n (seconds since the epoch / 900): the last bucket
// starting at or before it, the first when it starts before the period
// (the period need not start on a quarter hour).
func (q *Query) bucketIndex(n int64) int {
	at := time.Unix(n*bucketSeconds, 0)
	i := sort.Search(len(q.Buckets), func(i int) bool { return q.Buckets[i].Start.After(at) }) - 1
	return max(i, 0)
}
