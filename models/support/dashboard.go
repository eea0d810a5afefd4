package support

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Bounds of a dashboard's period.
const (
	DefaultDashboardDays = 30  // date_range when none is given
	MaxDashboardDays     = 366 // the longest period, in days
)

// bucketSeconds is the width of the time buckets the dashboard's trends are
// counted in by the database before they are folded into local days and
// ISO weeks: 15 minutes, which every UTC offset in use is a multiple of.
const bucketSeconds = 15 * 60

// DashboardInput is what a dashboard is asked for: the period (date_range
// "Nd" ending now, or an explicit start and end), the time zone its days
// and weeks are taken in, and optionally one customer.
type DashboardInput struct {
	CustomerID string
	DateRange  string // "Nd", 1 to 366; default 30d (not with Start and End)
	Start      string // RFC 3339, or YYYY-MM-DD (midnight in the zone)
	End        string // RFC 3339, or YYYY-MM-DD (midnight in the zone); exclusive
	Timezone   string // IANA name; default UTC
}

// DashboardFigures are the figures of a set of tickets: the overview, or
// one category. Sums and counts are kept so that figures add up.
type DashboardFigures struct {
	Total             int64   // tickets created in the period
	Resolved          int64   // of them, resolved or closed with resolved_at set
	Open              int64   // of them, neither resolved nor closed
	ResolutionSeconds float64 // the sum of resolved_at - created_at over Resolved
	SLAMet            int64   // resolution clocks stopped without breach
	SLAMeasured       int64   // resolution clocks stopped or breached
	RatingSum         int64   // the sum of the feedback ratings
	Ratings           int64   // the number of feedback ratings
}

// add adds o's figures to f's.
func (f *DashboardFigures) add(o DashboardFigures) {
	f.Total += o.Total
	f.Resolved += o.Resolved
	f.Open += o.Open
	f.ResolutionSeconds += o.ResolutionSeconds
	f.SLAMet += o.SLAMet
	f.SLAMeasured += o.SLAMeasured
	f.RatingSum += o.RatingSum
	f.Ratings += o.Ratings
}

// AvgResolution is the mean time from creation to resolution of the
// resolved tickets; false when none was resolved.
func (f DashboardFigures) AvgResolution() (time.Duration, bool) {
	if f.Resolved == 0 {
		return 0, false
	}
	return time.Duration(f.ResolutionSeconds / float64(f.Resolved) * float64(time.Second)), true
}

// SLACompliance is the share, in percent with one decimal, of the measured
// resolution clocks that stopped without breach; nil when none is measured.
func (f DashboardFigures) SLACompliance() *float64 {
	if f.SLAMeasured == 0 {
		return nil
	}
	v := round(float64(f.SLAMet)*100/float64(f.SLAMeasured), 1)
	return &v
}

// Satisfaction is the mean feedback rating (1 to 5) with two decimals; nil
// without feedback.
func (f DashboardFigures) Satisfaction() *float64 {
	if f.Ratings == 0 {
		return nil
	}
	v := round(float64(f.RatingSum)/float64(f.Ratings), 2)
	return &v
}

// CategoryFigures are the figures of one category.
type CategoryFigures struct {
	Category string
	DashboardFigures
}

// DayCount is the number of tickets created on one local day.
type DayCount struct {
	Date  string // YYYY-MM-DD in the dashboard's zone
	Count int64
}

// WeekHours is the mean resolution time, in hours, of the tickets resolved
// in one ISO week.
type WeekHours struct {
	Week     string // YYYY-Www, the ISO week of resolved_at in the zone
	AvgHours float64
	Count    int64
}

// Dashboard is the support analytics of a period: the overview, the
// figures per category and the daily and weekly trends.
type Dashboard struct {
	Start, End      time.Time
	Location        *time.Location
	Overview        DashboardFigures
	Categories      []CategoryFigures // by category id
	TicketsPerDay   []DayCount        // every local day of the period, oldest first
	ResolutionTrend []WeekHours       // weeks with resolutions, oldest first
}

var dateRangePattern = regexp.MustCompile(`^([0-9]{1,3})d$`)

// period validates in's period and zone against now: the zone, the start
// and the (exclusive) end.
func (in DashboardInput) period(now time.Time) (*time.Location, time.Time, time.Time, error) {
	var v models.Validator
	in.Timezone, in.DateRange = strings.TrimSpace(in.Timezone), strings.TrimSpace(in.DateRange)
	in.Start, in.End = strings.TrimSpace(in.Start), strings.TrimSpace(in.End)
	loc := time.UTC
	if in.Timezone != "" {
		if ValidTimezone(in.Timezone) {
			loc, _ = time.LoadLocation(in.Timezone)
		} else {
			v.Add("timezone", "must be an IANA time zone name, such as Europe/London or UTC")
		}
	}
	checkLen(&v, "customer_id", in.CustomerID, MaxShort)
	var start, end time.Time
	switch {
	case in.Start != "" || in.End != "":
		v.Check(in.DateRange == "", "date_range", "cannot be combined with start and end")
		v.Check(in.Start != "", "start", "is required with end")
		v.Check(in.End != "", "end", "is required with start")
		var okStart, okEnd bool
		if in.Start != "" {
			start, okStart = parseDashboardTime(in.Start, loc)
			v.Check(okStart, "start", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
		}
		if in.End != "" {
			end, okEnd = parseDashboardTime(in.End, loc)
			v.Check(okEnd, "end", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
		}
		if okStart && okEnd {
			v.Check(end.After(start), "end", "must be after start")
			v.Check(!end.After(start.In(loc).AddDate(0, 0, MaxDashboardDays)), "end", "must be at most "+itoa(MaxDashboardDays)+" days after start")
		}
	default:
		days := DefaultDashboardDays
		if in.DateRange != "" {
			m := dateRangePattern.FindStringSubmatch(in.DateRange)
			if m != nil {
				days, _ = strconv.Atoi(m[1])
			}
			if m == nil || days < 1 || days > MaxDashboardDays {
				v.Add("date_range", "must be a number of days from 1 to "+itoa(MaxDashboardDays)+", such as 30d")
			}
		}
		end = now
		start = now.In(loc).AddDate(0, 0, -days)
	}
	if err := v.Err(); err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	return loc, start.UTC(), end.UTC(), nil
}

// parseDashboardTime reads an RFC 3339 timestamp, or a date as midnight of
// that day in loc.
func parseDashboardTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// Dashboard answers the support analytics of the tickets p sees (their
// organization for customers, every organization for provider staff; the
// credential's environment only), of in.CustomerID when given, created in
// the period in asks for (see docs/support.md, Dashboard). Every figure is
// an SQL aggregate; the trends are counted per 15 minutes in the database
// and folded into the zone's days and ISO weeks here, so the work is
// bounded by the period's length, not by its tickets.
// Errors: VALIDATION_ERROR.
func (s *Store) Dashboard(ctx context.Context, p *models.Principal, in DashboardInput, now time.Time) (*Dashboard, error) {
	loc, start, end, err := in.period(now)
	if err != nil {
		return nil, err
	}
	in.CustomerID = strings.TrimSpace(in.CustomerID)
	d := &Dashboard{Start: start, End: end, Location: loc}
	q := &dashboardQuery{s: s, ctx: ctx, p: p, customerID: in.CustomerID, start: start, end: end, sqlite: models.IsSQLite(s.core.DB)}
	if d.Categories, err = q.categories(); err != nil {
		return nil, err
	}
	for _, c := range d.Categories {
		d.Overview.add(c.DashboardFigures)
	}
	if d.TicketsPerDay, err = q.ticketsPerDay(loc); err != nil {
		return nil, err
	}
	if d.ResolutionTrend, err = q.resolutionTrend(loc); err != nil {
		return nil, err
	}
	return d, nil
}

// dashboardQuery runs the dashboard's aggregates over the tickets of a
// period that p sees.
type dashboardQuery struct {
	s          *Store
	ctx        context.Context
	p          *models.Principal
	customerID string
	start, end time.Time
	sqlite     bool
}

// resolvedCond is true for a resolved ticket (aliased t, or unqualified
// when prefix is "").
func resolvedCond(prefix string) string {
	return fmt.Sprintf("%sstatus IN ('%s', '%s') AND %sresolved_at IS NOT NULL", prefix, StatusResolved, StatusClosed, prefix)
}

// seconds is the expression of resolved_at - created_at in seconds.
func (q *dashboardQuery) seconds() string {
	if q.sqlite {
		return "((julianday(resolved_at) - julianday(created_at)) * 86400.0)"
	}
	return "CAST(EXTRACT(EPOCH FROM (resolved_at - created_at)) AS DOUBLE PRECISION)"
}

// bucket is the expression of the 15-minute bucket (seconds since the
// epoch / bucketSeconds) of the timestamp column col.
func (q *dashboardQuery) bucket(col string) string {
	if q.sqlite {
		return fmt.Sprintf("(CAST(strftime('%%s', %s) AS INTEGER) / %d)", col, bucketSeconds)
	}
	return fmt.Sprintf("CAST(FLOOR(EXTRACT(EPOCH FROM %s) / %d) AS BIGINT)", col, bucketSeconds)
}

// tickets is the scoped query of the period's tickets (table t when
// joined, the model's otherwise).
func (q *dashboardQuery) tickets(model any, prefix string) *gorm.DB {
	db := q.s.core.In(q.ctx, q.p.Scope()).Model(model)
	if prefix != "" {
		db = db.Joins("JOIN support_tickets t ON t.id = " + prefix)
	}
	col := func(c string) string {
		if prefix != "" {
			return "t." + c
		}
		return c
	}
	db = db.Where(col("created_at")+" >= ? AND "+col("created_at")+" < ?", q.start, q.end)
	if q.customerID != "" {
		db = db.Where(col("customer_id")+" = ?", q.customerID)
	}
	return db
}

// categories returns the figures of each category with tickets in the
// period: counts and resolution times, then SLA clocks, then feedback.
func (q *dashboardQuery) categories() ([]CategoryFigures, error) {
	var rows []struct {
		Category string
		Total    int64
		Resolved int64
		Open     int64
		Seconds  float64
	}
	res := resolvedCond("")
	err := q.tickets(&Ticket{}, "").Select(fmt.Sprintf("category, COUNT(*) AS total, SUM(CASE WHEN %s THEN 1 ELSE 0 END) AS resolved, "+
		"SUM(CASE WHEN status NOT IN ('%s', '%s') THEN 1 ELSE 0 END) AS open, COALESCE(SUM(CASE WHEN %s THEN %s ELSE 0 END), 0) AS seconds",
		res, StatusResolved, StatusClosed, res, q.seconds())).Group("category").Scan(&rows).Error
	if err != nil {
		return nil, dbErr(err)
	}
	out := make([]CategoryFigures, len(rows))
	index := map[string]int{}
	for i, r := range rows {
		out[i] = CategoryFigures{Category: r.Category, DashboardFigures: DashboardFigures{Total: r.Total, Resolved: r.Resolved, Open: r.Open, ResolutionSeconds: r.Seconds}}
		index[r.Category] = i
	}
	var clocks []struct {
		Category string
		Met      int64
		Measured int64
	}
	err = q.tickets(&Clock{}, "support_sla_clocks.ticket_id").Where("support_sla_clocks.metric = ?", MetricResolution).
		Select(fmt.Sprintf("t.category AS category, SUM(CASE WHEN support_sla_clocks.breached_at IS NULL AND support_sla_clocks.state = '%s' THEN 1 ELSE 0 END) AS met, "+
			"SUM(CASE WHEN support_sla_clocks.breached_at IS NOT NULL OR support_sla_clocks.state = '%s' THEN 1 ELSE 0 END) AS measured", ClockStopped, ClockStopped)).
		Group("t.category").Scan(&clocks).Error
	if err != nil {
		return nil, dbErr(err)
	}
	for _, c := range clocks {
		if i, ok := index[c.Category]; ok {
			out[i].SLAMet, out[i].SLAMeasured = c.Met, c.Measured
		}
	}
	var ratings []struct {
		Category string
		Total    int64
		Count    int64
	}
	err = q.tickets(&Feedback{}, "support_feedback.ticket_id").
		Select("t.category AS category, SUM(support_feedback.rating) AS total, COUNT(*) AS count").Group("t.category").Scan(&ratings).Error
	if err != nil {
		return nil, dbErr(err)
	}
	for _, r := range ratings {
		if i, ok := index[r.Category]; ok {
			out[i].RatingSum, out[i].Ratings = r.Total, r.Count
		}
	}
	slices.SortFunc(out, func(a, b CategoryFigures) int { return strings.Compare(a.Category, b.Category) })
	return out, nil
}

// bucketRow is one 15-minute bucket of a trend.
type bucketRow struct {
	Bucket  int64
	N       int64
	Seconds float64
}

// at is the bucket's first instant in loc.
func (r bucketRow) at(loc *time.Location) time.Time {
	return time.Unix(r.Bucket*bucketSeconds, 0).In(loc)
}

// ticketsPerDay counts the period's tickets per local day of loc, every
// day of the period listed (zero included).
func (q *dashboardQuery) ticketsPerDay(loc *time.Location) ([]DayCount, error) {
	var rows []bucketRow
	b := q.bucket("created_at")
	if err := q.tickets(&Ticket{}, "").Select(b + " AS bucket, COUNT(*) AS n").Group(b).Scan(&rows).Error; err != nil {
		return nil, dbErr(err)
	}
	counts := map[string]int64{}
	for _, r := range rows {
		counts[r.at(loc).Format(time.DateOnly)] += r.N
	}
	first, last := q.start.In(loc), q.end.Add(-time.Nanosecond).In(loc)
	lastDate := last.Format(time.DateOnly)
	var out []DayCount
	// Noon never falls in a DST gap, so stepping from it lands on every day.
	for day := time.Date(first.Year(), first.Month(), first.Day(), 12, 0, 0, 0, loc); ; day = day.AddDate(0, 0, 1) {
		date := day.Format(time.DateOnly)
		if date > lastDate {
			break
		}
		out = append(out, DayCount{Date: date, Count: counts[date]})
	}
	return out, nil
}

// resolutionTrend is the mean resolution time, in hours with two
// decimals, of the period's resolved tickets per ISO week (in loc) of
// their resolved_at.
func (q *dashboardQuery) resolutionTrend(loc *time.Location) ([]WeekHours, error) {
	var rows []bucketRow
	b := q.bucket("resolved_at")
	err := q.tickets(&Ticket{}, "").Where(resolvedCond("")).
		Select(b + " AS bucket, COUNT(*) AS n, COALESCE(SUM(" + q.seconds() + "), 0) AS seconds").Group(b).Scan(&rows).Error
	if err != nil {
		return nil, dbErr(err)
	}
	weeks := map[string]*WeekHours{}
	for _, r := range rows {
		y, w := r.at(loc).ISOWeek()
		key := fmt.Sprintf("%04d-W%02d", y, w)
		wh := weeks[key]
		if wh == nil {
			wh = &WeekHours{Week: key}
			weeks[key] = wh
		}
		wh.AvgHours += r.Seconds // the sum until divided below
		wh.Count += r.N
	}
	out := make([]WeekHours, 0, len(weeks))
	for _, wh := range weeks {
		wh.AvgHours = round(wh.AvgHours/float64(wh.Count)/3600, 2)
		out = append(out, *wh)
	}
	slices.SortFunc(out, func(a, b WeekHours) int { return strings.Compare(a.Week, b.Week) })
	return out, nil
}

// FormatDuration writes a duration in whole hours and minutes, rounded to
// the minute: "5h42m", "8h", "45m", "0m".
func FormatDuration(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	if m <= 0 {
		return "0m"
	}
	return FormatMinutes(m)
}

// round rounds v to n decimals.
func round(v float64, n int) float64 {
	p := math.Pow(10, float64(n))
	return math.Round(v*p) / p
}
