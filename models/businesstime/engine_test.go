package businesstime_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models/businesstime"
)

// hm is a clock time in minutes.
func hm(h, m int) int { return h*60 + m }

// weekdays is a Monday-Friday calendar with the given intervals per day.
func weekdays(zone string, ivs ...businesstime.Interval) *businesstime.Calendar {
	c := &businesstime.Calendar{Zone: zone}
	for d := time.Monday; d <= time.Friday; d++ {
		c.Week[d] = ivs
	}
	return c
}

func nineToFive(zone string) *businesstime.Calendar {
	return weekdays(zone, businesstime.Interval{Start: hm(9, 0), End: hm(17, 0)})
}

// sundays is a calendar in which only Sundays, all day, are working time.
func sundays(zone string) *businesstime.Calendar {
	c := &businesstime.Calendar{Zone: zone}
	c.Week[time.Sunday] = []businesstime.Interval{{Start: 0, End: 1440}}
	return c
}

func allWeek(zone string) *businesstime.Calendar {
	c := &businesstime.Calendar{Zone: zone}
	for d := range c.Week {
		c.Week[d] = []businesstime.Interval{{Start: 0, End: 1440}}
	}
	return c
}

func withHolidays(c *businesstime.Calendar, dates ...string) *businesstime.Calendar {
	cc := *c
	for _, d := range dates {
		cc.Holidays = append(cc.Holidays, businesstime.Holiday{Date: d, Name: "holiday " + d})
	}
	return &cc
}

// at is the wall-clock time "2006-01-02 15:04" in zone.
func at(t *testing.T, zone, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const (
	london   = "Europe/London"
	newYork  = "America/New_York"
	kolkata  = "Asia/Kolkata"
	lordHowe = "Australia/Lord_Howe"
)

func TestAdd(t *testing.T) {
	split := weekdays(london, businesstime.Interval{Start: hm(9, 0), End: hm(12, 0)}, businesstime.Interval{Start: hm(13, 0), End: hm(17, 0)})
	ny8to6 := weekdays(newYork, businesstime.Interval{Start: hm(8, 0), End: hm(18, 0)})
	lon8to6 := weekdays(london, businesstime.Interval{Start: hm(8, 0), End: hm(18, 0)})
	nyGap := &businesstime.Calendar{Zone: newYork}
	nyGap.Week[time.Sunday] = []businesstime.Interval{{Start: hm(1, 0), End: hm(4, 0)}}
	tests := []struct {
		name string
		cal  *businesstime.Calendar
		zone string
		from string
		d    time.Duration
		want string
	}{
		{"across a weekend", nineToFive(london), london, "2026-03-06 16:00", 2 * time.Hour, "2026-03-09 10:00"},
		{"before opening", nineToFive(london), london, "2026-03-09 07:00", time.Hour, "2026-03-09 10:00"},
		{"after closing", nineToFive(london), london, "2026-03-09 18:00", time.Hour, "2026-03-10 10:00"},
		{"exactly at opening to closing", nineToFive(london), london, "2026-03-09 09:00", 8 * time.Hour, "2026-03-09 17:00"},
		{"exactly at closing", nineToFive(london), london, "2026-03-09 17:00", time.Minute, "2026-03-10 09:01"},
		{"from a Saturday", nineToFive(london), london, "2026-03-07 12:00", 30 * time.Minute, "2026-03-09 09:30"},
		{"a week", nineToFive(london), london, "2026-03-09 10:00", 40 * time.Hour, "2026-03-16 10:00"},
		{"holiday in the middle", withHolidays(nineToFive(london), "2026-03-11"), london, "2026-03-10 16:00", 2 * time.Hour, "2026-03-12 10:00"},
		{"holiday on a Friday before a weekend", withHolidays(nineToFive(london), "2026-03-13"), london, "2026-03-12 16:00", 2 * time.Hour, "2026-03-16 10:00"},
		{"split day through lunch", split, london, "2026-03-09 11:00", 2 * time.Hour, "2026-03-09 14:00"},
		{"split day from lunch", split, london, "2026-03-09 12:30", time.Hour, "2026-03-09 14:00"},
		{"split day end of morning", split, london, "2026-03-09 11:00", time.Hour, "2026-03-09 12:00"},
		{"zero outside working time", nineToFive(london), london, "2026-03-07 12:00", 0, "2026-03-07 12:00"},
		{"negative", nineToFive(london), london, "2026-03-09 12:00", -time.Hour, "2026-03-09 12:00"},
		{"New York", nineToFive(newYork), newYork, "2026-03-06 16:00", 2 * time.Hour, "2026-03-09 10:00"},
		{"Kolkata +05:30", nineToFive(kolkata), kolkata, "2026-03-06 16:30", time.Hour, "2026-03-09 09:30"},
		{"Lord Howe over its half-hour spring forward", nineToFive(lordHowe), lordHowe, "2026-10-02 16:00", 2 * time.Hour, "2026-10-05 10:00"},
		{"New York spring forward over the weekend", ny8to6, newYork, "2026-03-06 17:00", 2 * time.Hour, "2026-03-09 09:00"},
		{"New York fall back over the weekend", ny8to6, newYork, "2026-10-30 17:00", 2 * time.Hour, "2026-11-02 09:00"},
		{"London spring forward over the weekend", lon8to6, london, "2026-03-27 17:00", 2 * time.Hour, "2026-03-30 09:00"},
		{"London fall back over the weekend", lon8to6, london, "2026-10-23 17:00", 2 * time.Hour, "2026-10-26 09:00"},
		{"New York 23-hour Sunday", sundays(newYork), newYork, "2026-03-08 00:00", 23 * time.Hour, "2026-03-09 00:00"},
		{"New York 23-hour Sunday, wall clock", sundays(newYork), newYork, "2026-03-08 00:00", 3 * time.Hour, "2026-03-08 04:00"},
		{"New York 25-hour Sunday", sundays(newYork), newYork, "2026-11-01 00:00", 25 * time.Hour, "2026-11-02 00:00"},
		{"New York 25-hour Sunday continues next week", sundays(newYork), newYork, "2026-11-01 00:00", 26 * time.Hour, "2026-11-08 01:00"},
		{"London 23-hour Sunday", sundays(london), london, "2026-03-29 00:00", 23 * time.Hour, "2026-03-30 00:00"},
		{"London 25-hour Sunday", sundays(london), london, "2026-10-25 00:00", 25 * time.Hour, "2026-10-26 00:00"},
		{"interval 01:00-04:00 over the gap is 2 hours", nyGap, newYork, "2026-03-08 00:00", 2 * time.Hour, "2026-03-08 04:00"},
		{"interval over the gap, next week", nyGap, newYork, "2026-03-08 00:00", 2*time.Hour + time.Minute, "2026-03-15 01:01"},
		{"24x7 across spring forward", allWeek(london), london, "2026-03-28 12:00", 24 * time.Hour, "2026-03-29 13:00"},
		{"nil calendar", nil, london, "2026-03-28 12:00", 24 * time.Hour, "2026-03-29 13:00"},
		{"no working time counts calendar time", &businesstime.Calendar{Zone: london}, london, "2026-03-07 12:00", time.Hour, "2026-03-07 13:00"},
		{"unknown zone counts calendar time", &businesstime.Calendar{Zone: "Mars/Olympus"}, london, "2026-03-07 12:00", time.Hour, "2026-03-07 13:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := at(t, tt.zone, tt.from)
			want := at(t, tt.zone, tt.want)
			got := tt.cal.Add(from, tt.d)
			if !got.Equal(want) {
				t.Fatalf("Add(%v, %v) = %v, want %v", from, tt.d, got, want)
			}
			if tt.d > 0 {
				if b := tt.cal.Between(from, got); b != tt.d {
					t.Errorf("Between(from, Add(from, d)) = %v, want %v", b, tt.d)
				}
			}
		})
	}
}

func TestBetween(t *testing.T) {
	ny8to6 := weekdays(newYork, businesstime.Interval{Start: hm(8, 0), End: hm(18, 0)})
	tests := []struct {
		name     string
		cal      *businesstime.Calendar
		zone     string
		from, to string
		want     time.Duration
	}{
		{"within a day", nineToFive(london), london, "2026-03-09 10:00", "2026-03-09 12:30", 150 * time.Minute},
		{"over a weekend", nineToFive(london), london, "2026-03-06 16:00", "2026-03-09 10:00", 2 * time.Hour},
		{"a whole week", nineToFive(london), london, "2026-03-09 00:00", "2026-03-16 00:00", 40 * time.Hour},
		{"a week with a holiday", withHolidays(nineToFive(london), "2026-03-11"), london, "2026-03-09 00:00", "2026-03-16 00:00", 32 * time.Hour},
		{"to before from", nineToFive(london), london, "2026-03-09 12:00", "2026-03-09 10:00", 0},
		{"outside working time", nineToFive(london), london, "2026-03-07 00:00", "2026-03-09 09:00", 0},
		{"New York Sunday of 23 hours", sundays(newYork), newYork, "2026-03-08 00:00", "2026-03-09 00:00", 23 * time.Hour},
		{"New York Sunday of 25 hours", sundays(newYork), newYork, "2026-11-01 00:00", "2026-11-02 00:00", 25 * time.Hour},
		{"London Sunday of 23 hours", sundays(london), london, "2026-03-29 00:00", "2026-03-30 00:00", 23 * time.Hour},
		{"London Sunday of 25 hours", sundays(london), london, "2026-10-25 00:00", "2026-10-26 00:00", 25 * time.Hour},
		{"London Sunday of 25 hours within a longer range", sundays(london), london, "2026-10-23 00:00", "2026-10-28 00:00", 25 * time.Hour},
		{"Lord Howe Sunday of 23h30", sundays(lordHowe), lordHowe, "2026-10-04 00:00", "2026-10-05 00:00", 23*time.Hour + 30*time.Minute},
		{"Lord Howe Sunday of 24h30", sundays(lordHowe), lordHowe, "2026-04-05 00:00", "2026-04-06 00:00", 24*time.Hour + 30*time.Minute},
		{"New York weekdays over spring forward", ny8to6, newYork, "2026-03-02 00:00", "2026-03-16 00:00", 100 * time.Hour},
		{"New York weekdays over fall back", ny8to6, newYork, "2026-10-26 00:00", "2026-11-09 00:00", 100 * time.Hour},
		{"a year of weekdays", nineToFive(london), london, "2026-01-05 00:00", "2027-01-04 00:00", 52 * 40 * time.Hour},
		{"24x7 equals wall time", allWeek(newYork), newYork, "2026-03-01 00:00", "2026-04-01 00:00", 31*24*time.Hour - time.Hour},
		{"nil calendar", nil, newYork, "2026-03-01 00:00", "2026-04-01 00:00", 31*24*time.Hour - time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := at(t, tt.zone, tt.from), at(t, tt.zone, tt.to)
			if got := tt.cal.Between(from, to); got != tt.want {
				t.Fatalf("Between(%v, %v) = %v, want %v", from, to, got, tt.want)
			}
		})
	}
}

// calendars are the calendars of the property tests.
func calendars() map[string]*businesstime.Calendar {
	sunAndWeek := nineToFive(lordHowe)
	sunAndWeek.Week[time.Sunday] = []businesstime.Interval{{Start: 0, End: 1440}}
	return map[string]*businesstime.Calendar{
		"London 9-17 with holidays": withHolidays(nineToFive(london), "2026-12-25", "2026-12-28", "2027-01-01", "2027-04-02", "2027-04-05", "2030-05-06"),
		"New York split": withHolidays(weekdays(newYork,
			businesstime.Interval{Start: hm(8, 30), End: hm(12, 0)},
			businesstime.Interval{Start: hm(13, 0), End: hm(17, 30)}), "2026-11-26", "2027-07-05"),
		"Kolkata 9-17":        nineToFive(kolkata),
		"Lord Howe + Sundays": sunAndWeek,
		"New York Sundays":    sundays(newYork),
		"London 24x7":         allWeek(london),
		"Sao Paulo nights": weekdays("America/Sao_Paulo",
			businesstime.Interval{Start: 0, End: hm(2, 0)},
			businesstime.Interval{Start: hm(22, 0), End: 1440}),
		"nil": nil,
	}
}

func TestAddBetweenRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, cal := range calendars() {
		t.Run(name, func(t *testing.T) {
			for range 300 {
				from := base.Add(time.Duration(rng.Int64N(10*365*24*60)) * time.Minute)
				var d time.Duration
				switch rng.IntN(3) {
				case 0:
					d = time.Duration(rng.Int64N(24*60)) * time.Minute
				case 1:
					d = time.Duration(rng.Int64N(2000*60)) * time.Minute
				default:
					d = time.Duration(rng.Int64N(20000*60*60)) * time.Second
				}
				end := cal.Add(from, d)
				if end.Before(from) {
					t.Fatalf("Add(%v, %v) = %v is before from", from, d, end)
				}
				if got := cal.Between(from, end); got != d {
					t.Fatalf("Between(%v, Add(from, %v) = %v) = %v", from, d, end, got)
				}
				if d > 0 && cal.Between(from, end.Add(-time.Second)) >= d {
					t.Fatalf("Add(%v, %v) = %v is not the first such instant", from, d, end)
				}
			}
		})
	}
}

// TestBetweenBruteForce checks Between (which skips whole weeks) against
// counting half hours with IsWorking: every boundary of these calendars
// (intervals on the hour or half hour, zone offsets in half hours) falls on
// a half hour of absolute time.
func TestBetweenBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 42))
	// Around the 2026 transitions, so DST weeks are covered.
	starts := []time.Time{
		time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 22, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC),
	}
	for name, cal := range calendars() {
		t.Run(name, func(t *testing.T) {
			for _, s := range starts {
				const step = 30 * time.Minute
				from := s.Add(time.Duration(rng.Int64N(3*48)) * step)
				to := from.Add(time.Duration(rng.Int64N(20*48)) * step)
				var want time.Duration
				for m := from; m.Before(to); m = m.Add(step) {
					if cal.IsWorking(m) {
						want += step
					}
				}
				if got := cal.Between(from, to); got != want {
					t.Errorf("Between(%v, %v) = %v, counting minutes gives %v", from, to, got, want)
				}
				checkSpans(t, cal, from, to)
			}
		})
	}
}

func TestHugeAdd(t *testing.T) {
	cal := withHolidays(nineToFive(london), "2027-12-27", "2030-01-01", "2031-05-05", "2040-12-25")
	from := at(t, london, "2026-03-06 16:00")
	for _, d := range []time.Duration{5 * 365 * 24 * time.Hour, 10 * 52 * 40 * time.Hour, 10 * 365 * 24 * time.Hour} {
		start := time.Now()
		end := cal.Add(from, d)
		if took := time.Since(start); took > time.Second {
			t.Errorf("Add(from, %v) took %v", d, took)
		}
		if got := cal.Between(from, end); got != d {
			t.Errorf("Between(from, Add(from, %v) = %v) = %v", d, end, got)
		}
	}
	// Beyond the 100-year horizon the search stops.
	holidays := &businesstime.Calendar{Zone: london}
	holidays.Week[time.Monday] = []businesstime.Interval{{Start: hm(9, 0), End: hm(9, 1)}}
	end := holidays.Add(from, 100*365*24*time.Hour)
	if end.Sub(from) > businesstime.Horizon+8*24*time.Hour {
		t.Errorf("Add beyond the horizon = %v", end)
	}
}

func TestIsWorkingAndNextWorking(t *testing.T) {
	cal := withHolidays(weekdays(london,
		businesstime.Interval{Start: hm(9, 0), End: hm(12, 0)},
		businesstime.Interval{Start: hm(13, 0), End: hm(17, 0)}), "2026-03-10")
	tests := []struct {
		t       string
		working bool
		next    string
	}{
		{"2026-03-09 09:00", true, "2026-03-09 09:00"},
		{"2026-03-09 08:59", false, "2026-03-09 09:00"},
		{"2026-03-09 12:00", false, "2026-03-09 13:00"},
		{"2026-03-09 16:59", true, "2026-03-09 16:59"},
		{"2026-03-09 17:00", false, "2026-03-11 09:00"},
		{"2026-03-10 10:00", false, "2026-03-11 09:00"},
		{"2026-03-07 10:00", false, "2026-03-09 09:00"},
	}
	for _, tt := range tests {
		tm := at(t, london, tt.t)
		if got := cal.IsWorking(tm); got != tt.working {
			t.Errorf("IsWorking(%s) = %v", tt.t, got)
		}
		if got, want := cal.NextWorking(tm), at(t, london, tt.next); !got.Equal(want) {
			t.Errorf("NextWorking(%s) = %v, want %v", tt.t, got, want)
		}
	}
	var nilCal *businesstime.Calendar
	tm := at(t, london, "2026-03-07 03:00")
	if !nilCal.IsWorking(tm) || !nilCal.NextWorking(tm).Equal(tm) {
		t.Error("a nil calendar is always working")
	}
}

// checkSpans checks that Spans covers [from, to) exactly with alternating
// pieces whose working total is Between.
func checkSpans(t *testing.T, cal *businesstime.Calendar, from, to time.Time) {
	t.Helper()
	spans := cal.Spans(from, to)
	if !to.After(from) {
		if len(spans) != 0 {
			t.Fatalf("Spans(%v, %v) = %v, want none", from, to, spans)
		}
		return
	}
	if len(spans) == 0 || !spans[0].Start.Equal(from) || !spans[len(spans)-1].End.Equal(to) {
		t.Fatalf("Spans(%v, %v) = %v does not cover the range", from, to, spans)
	}
	var working time.Duration
	for i, s := range spans {
		if !s.End.After(s.Start) {
			t.Fatalf("span %d %v is empty", i, s)
		}
		if i > 0 && (!spans[i-1].End.Equal(s.Start) || spans[i-1].Working == s.Working) {
			t.Fatalf("spans %d and %d (%v, %v) do not alternate", i-1, i, spans[i-1], s)
		}
		if s.Working {
			working += s.End.Sub(s.Start)
			if !cal.IsWorking(s.Start) {
				t.Fatalf("working span %v starts outside working time", s)
			}
		} else if cal.IsWorking(s.Start) {
			t.Fatalf("non-working span %v starts in working time", s)
		}
	}
	if b := cal.Between(from, to); working != b {
		t.Fatalf("Spans working total %v, Between %v", working, b)
	}
}

func TestSpans(t *testing.T) {
	cal := withHolidays(nineToFive(london), "2026-03-11")
	from, to := at(t, london, "2026-03-09 10:00"), at(t, london, "2026-03-13 10:00")
	got := cal.Spans(from, to)
	want := []struct {
		start, end string
		working    bool
	}{
		{"2026-03-09 10:00", "2026-03-09 17:00", true},
		{"2026-03-09 17:00", "2026-03-10 09:00", false},
		{"2026-03-10 09:00", "2026-03-10 17:00", true},
		{"2026-03-10 17:00", "2026-03-12 09:00", false},
		{"2026-03-12 09:00", "2026-03-12 17:00", true},
		{"2026-03-12 17:00", "2026-03-13 09:00", false},
		{"2026-03-13 09:00", "2026-03-13 10:00", true},
	}
	if len(got) != len(want) {
		t.Fatalf("Spans = %v", got)
	}
	for i, w := range want {
		if !got[i].Start.Equal(at(t, london, w.start)) || !got[i].End.Equal(at(t, london, w.end)) || got[i].Working != w.working {
			t.Errorf("span %d = %v, want %v", i, got[i], w)
		}
	}
	checkSpans(t, cal, from, to)
	checkSpans(t, cal, to, from)
	checkSpans(t, cal, at(t, london, "2026-03-07 10:00"), at(t, london, "2026-03-08 10:00"))

	// 24x7: one piece across midnights and the DST change.
	all := allWeek(london).Spans(at(t, london, "2026-03-27 10:00"), at(t, london, "2026-03-31 10:00"))
	if len(all) != 1 || !all[0].Working {
		t.Errorf("24x7 Spans = %v, want one working piece", all)
	}
	var nilCal *businesstime.Calendar
	if s := nilCal.Spans(from, to); len(s) != 1 || !s[0].Working {
		t.Errorf("nil Spans = %v", s)
	}
	// The output is capped.
	long := cal.Spans(from, from.Add(80*365*24*time.Hour))
	if len(long) != businesstime.MaxSpans {
		t.Errorf("80 years of Spans = %d pieces, want the cap %d", len(long), businesstime.MaxSpans)
	}
}
