package businesstime

import (
	"slices"
	"time"
)

// Horizon is how far the engine looks: Add, NextWorking, Between and Spans
// consider at most the 100 years of calendar time (36525 days) that follow
// their starting instant. It bounds their work whatever the calendar (a
// calendar whose holidays cover decades) or the duration asked for.
const Horizon = 36525 * 24 * time.Hour

// horizonDays is Horizon in days.
const horizonDays = 36525

// MaxSpans is the most pieces Spans returns.
const MaxSpans = 10000

// week is the length of a week in absolute time when no zone transition
// falls within it.
const week = 7 * 24 * time.Hour

// Span is a piece of a time range that is either all working time or all
// non-working time (nights, weekends, holidays): [Start, End).
type Span struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Working bool      `json:"working"`
}

// engine is a calendar prepared for arithmetic: its zone loaded, its week
// cleaned (intervals clipped to the day, sorted, merged) and its holidays as
// sorted day numbers.
type engine struct {
	loc      *time.Location
	week     [7][]Interval
	weekly   time.Duration // working time of a week without holidays or zone transitions
	holidays []int64
}

// engine prepares c. It reports false when c counts calendar time: a nil
// calendar, and (documented on Add) a calendar whose zone does not load or
// whose week has no working minute, both of which Validate refuses.
func (c *Calendar) engine() (*engine, bool) {
	if c == nil {
		return nil, false
	}
	loc, err := c.Location()
	if err != nil {
		return nil, false
	}
	e := &engine{loc: loc}
	for day, ivs := range c.Week {
		var clean []Interval
		for _, iv := range ivs {
			iv.Start = max(iv.Start, 0)
			iv.End = min(iv.End, MinutesPerDay)
			if iv.Start < iv.End {
				clean = append(clean, iv)
			}
		}
		slices.SortFunc(clean, func(a, b Interval) int { return a.Start - b.Start })
		var merged []Interval
		for _, iv := range clean {
			if n := len(merged); n > 0 && iv.Start <= merged[n-1].End {
				merged[n-1].End = max(merged[n-1].End, iv.End)
				continue
			}
			merged = append(merged, iv)
		}
		for _, iv := range merged {
			e.weekly += time.Duration(iv.End-iv.Start) * time.Minute
		}
		e.week[day] = merged
	}
	if e.weekly == 0 {
		return nil, false
	}
	e.holidays = sortedHolidays(c.Holidays)
	return e, true
}

// dayNumber is the number of days from 1970-01-01 to the civil date y-m-d.
func dayNumber(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// civil is the civil date of day number n.
func civil(n int64) (int, time.Month, int) {
	return time.Unix(n*86400, 0).UTC().Date()
}

// weekday is the day of the week of day number n (1970-01-01 was a Thursday).
func weekday(n int64) time.Weekday {
	return time.Weekday(((n+4)%7 + 7) % 7)
}

// midnight is the first instant of local day n, resolved as time.Date does
// when midnight falls in a zone transition.
func (e *engine) midnight(n int64) time.Time {
	y, m, d := civil(n)
	return time.Date(y, m, d, 0, 0, 0, 0, e.loc)
}

// dayOf is the local day whose [midnight, next midnight) holds t.
func (e *engine) dayOf(t time.Time) int64 {
	n := dayNumber(t.In(e.loc).Date())
	for e.midnight(n).After(t) {
		n--
	}
	for !t.Before(e.midnight(n + 1)) {
		n++
	}
	return n
}

// nextHoliday is the first holiday on or after day n (max int64 if none).
func (e *engine) nextHoliday(n int64) int64 {
	i, _ := slices.BinarySearch(e.holidays, n)
	if i == len(e.holidays) {
		return 1<<63 - 1
	}
	return e.holidays[i]
}

// span is one working range of a day, [a, b).
type span struct{ a, b time.Time }

// ranges appends the working ranges of local day n to buf: none on a
// holiday, else the day's intervals as instants (wall-clock times resolved
// as time.Date does), clipped to the day and kept sorted and disjoint even
// when a zone transition folds the wall clock.
func (e *engine) ranges(n int64, buf []span) []span {
	ivs := e.week[weekday(n)]
	if len(ivs) == 0 {
		return buf
	}
	if _, found := slices.BinarySearch(e.holidays, n); found {
		return buf
	}
	y, m, d := civil(n)
	prev := time.Date(y, m, d, 0, 0, 0, 0, e.loc)
	hi := time.Date(y, m, d+1, 0, 0, 0, 0, e.loc)
	for _, iv := range ivs {
		a := time.Date(y, m, d, 0, iv.Start, 0, 0, e.loc)
		b := time.Date(y, m, d, 0, iv.End, 0, 0, e.loc)
		if a.Before(prev) {
			a = prev
		}
		if b.After(hi) {
			b = hi
		}
		if b.After(a) {
			buf = append(buf, span{a, b})
			prev = b
		}
	}
	return buf
}

// wholeWeeks is how many whole weeks, at most limit, starting at day n
// (whose midnight is mid) hold no holiday and no zone transition, so that
// each has exactly e.weekly of working time.
func (e *engine) wholeWeeks(n int64, mid time.Time, limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	if _, end := mid.ZoneBounds(); !end.IsZero() {
		limit = min(limit, int64((end.Sub(mid)-1)/week))
	}
	if h := e.nextHoliday(n); h != 1<<63-1 {
		limit = min(limit, (h-n)/7)
	}
	return max(limit, 0)
}

// Add returns the instant at which d of business time has elapsed, counting
// from from. Working intervals are local wall-clock times of c's zone: on a
// day when the clocks change an interval spanning the change is shorter or
// longer in absolute time (00:00-24:00 is 23 or 25 hours), and a wall-clock
// time inside a spring-forward gap resolves as time.Date resolves it.
//
// d <= 0 returns from unchanged (even outside working time). A nil calendar
// counts calendar time: from.Add(d). So does a calendar whose zone does not
// load or whose week has no working minute — Validate refuses both, and
// counting wall time keeps an SLA clock running rather than never ending.
// Whole weeks without holidays or zone transitions are skipped
// arithmetically, so a huge d is quick; if d does not elapse within Horizon
// of from (holidays covering decades), Add returns the end of the horizon.
// The result is in from's location.
func (c *Calendar) Add(from time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return from
	}
	e, ok := c.engine()
	if !ok {
		return from.Add(d)
	}
	var buf []span
	n := e.dayOf(from)
	limit := n + horizonDays
	for n <= limit {
		mid := e.midnight(n)
		if !mid.Before(from) && d > e.weekly {
			if k := e.wholeWeeks(n, mid, min(int64((d-1)/e.weekly), (limit-n)/7)); k > 0 {
				d -= time.Duration(k) * e.weekly
				n += 7 * k
				continue
			}
		}
		buf = e.ranges(n, buf[:0])
		for _, r := range buf {
			if !r.b.After(from) {
				continue
			}
			a := r.a
			if a.Before(from) {
				a = from
			}
			if avail := r.b.Sub(a); d <= avail {
				return a.Add(d).In(from.Location())
			}
			d -= r.b.Sub(a)
		}
		n++
	}
	return e.midnight(n).In(from.Location())
}

// Between returns the business time in [from, to): 0 when to is not after
// from; to.Sub(from) for a nil calendar (and for a calendar Add counts as
// calendar time). Only the first Horizon after from is counted.
func (c *Calendar) Between(from, to time.Time) time.Duration {
	if !to.After(from) {
		return 0
	}
	e, ok := c.engine()
	if !ok {
		return to.Sub(from)
	}
	if to.Sub(from) > Horizon {
		to = from.Add(Horizon)
	}
	var total time.Duration
	var buf []span
	for n := e.dayOf(from); ; {
		mid := e.midnight(n)
		if !mid.Before(to) {
			break
		}
		if !mid.Before(from) {
			if k := e.wholeWeeks(n, mid, int64(to.Sub(mid)/week)); k > 0 {
				total += time.Duration(k) * e.weekly
				n += 7 * k
				continue
			}
		}
		buf = e.ranges(n, buf[:0])
		for _, r := range buf {
			a, b := later(r.a, from), earlier(r.b, to)
			if b.After(a) {
				total += b.Sub(a)
			}
		}
		n++
	}
	return total
}

// Spans splits [from, to) into consecutive pieces, alternately working and
// not working, to explain an SLA clock ("outside business hours"). The
// pieces cover [from, to) exactly and adjacent pieces of the same kind are
// merged, so a working range running past midnight is one piece. A nil
// calendar gives one working piece; to not after from gives none. At most
// MaxSpans pieces are returned (the last then ends before to), and only the
// first Horizon after from is split. Pieces are in from's location.
func (c *Calendar) Spans(from, to time.Time) []Span {
	if !to.After(from) {
		return nil
	}
	e, ok := c.engine()
	if !ok {
		return []Span{{Start: from, End: to, Working: true}}
	}
	if to.Sub(from) > Horizon {
		to = from.Add(Horizon)
	}
	loc := from.Location()
	var out []Span
	var buf []span
	cursor := from
	for n := e.dayOf(from); e.midnight(n).Before(to); n++ {
		buf = e.ranges(n, buf[:0])
		for _, r := range buf {
			a, b := later(r.a, from), earlier(r.b, to)
			if !b.After(a) {
				continue
			}
			if a.After(cursor) {
				out = append(out, Span{Start: cursor.In(loc), End: a.In(loc)})
			}
			if last := len(out) - 1; last >= 0 && out[last].Working && out[last].End.Equal(a) {
				out[last].End = b.In(loc)
			} else {
				if len(out) >= MaxSpans {
					return out
				}
				out = append(out, Span{Start: a.In(loc), End: b.In(loc), Working: true})
			}
			cursor = b
			if len(out) >= MaxSpans {
				return out
			}
		}
	}
	if to.After(cursor) {
		out = append(out, Span{Start: cursor.In(loc), End: to.In(loc)})
	}
	return out
}

// IsWorking reports whether t is within working time. A nil calendar (and
// one Add counts as calendar time) is always working.
func (c *Calendar) IsWorking(t time.Time) bool {
	e, ok := c.engine()
	if !ok {
		return true
	}
	for _, r := range e.ranges(e.dayOf(t), nil) {
		if !t.Before(r.a) && t.Before(r.b) {
			return true
		}
	}
	return false
}

// NextWorking returns t when t is within working time, else the start of
// the next working interval, in t's location. A nil calendar (and one Add
// counts as calendar time) returns t, as does a calendar with no working
// time within Horizon of t.
func (c *Calendar) NextWorking(t time.Time) time.Time {
	e, ok := c.engine()
	if !ok {
		return t
	}
	var buf []span
	n := e.dayOf(t)
	for limit := n + horizonDays; n <= limit; n++ {
		buf = e.ranges(n, buf[:0])
		for _, r := range buf {
			if r.b.After(t) {
				if r.a.After(t) {
					return r.a.In(t.Location())
				}
				return t
			}
		}
	}
	return t
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
