package portal

import (
	"math"
	"time"
)

// billingChart is a bar chart drawn by the billing template as SVG: no script,
// no inline style (the bars' look is in billing.css).
type billingChart struct {
	ID     string
	Title  string
	Width  int
	Height int
	Base   float64 // the y of the axis
	Max    string  // the top value, formatted
	Bars   []bar
	Ticks  []tick // labels under some bars
	Total  string
	Empty  bool // every bucket is zero
}

// bar is one bucket.
type bar struct {
	X, Y, W, H float64
	Label      string // the bucket and its value (the bar's title)
}

// tick is a label on the x axis.
type tick struct {
	X    float64
	Text string
}

// Chart geometry (SVG user units).
const (
	barWidth  = 640
	barHeight = 220
	barLeft   = 8
	barTop    = 24
	barBottom = 28
)

// barChart draws buckets (each with a start) by value, formatting values
// with format.
func barChart(id, title string, buckets []any, value func(M) float64, format func(any) string) *billingChart {
	c := &billingChart{ID: id, Title: title, Width: barWidth, Height: barHeight, Base: barHeight - barBottom}
	top, total := 0.0, 0.0
	for _, b := range buckets {
		v := value(obj(b))
		top, total = math.Max(top, v), total+v
	}
	c.Max, c.Total, c.Empty = format(top), format(total), top <= 0
	n := len(buckets)
	if n == 0 {
		return c
	}
	slot := float64(barWidth-2*barLeft) / float64(n)
	every := max(1, n/6) // at most about six labels
	for i, b := range buckets {
		o := obj(b)
		v := value(o)
		h := 0.0
		if top > 0 {
			h = math.Round(v/top*(c.Base-barTop)*10) / 10
		}
		x := barLeft + float64(i)*slot
		start := shortDate(str(o["start"]), hourly(buckets))
		c.Bars = append(c.Bars, bar{X: round1(x + slot*0.1), Y: round1(c.Base - h), W: round1(slot * 0.8), H: h, Label: start + ": " + format(v)})
		if i%every == 0 {
			c.Ticks = append(c.Ticks, tick{X: round1(x + slot/2), Text: start})
		}
	}
	return c
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// hourly reports whether the buckets are hours (their labels show the hour).
func hourly(buckets []any) bool {
	if len(buckets) < 2 {
		return false
	}
	a, errA := time.Parse(time.RFC3339, str(obj(buckets[0])["end"]))
	b, errB := time.Parse(time.RFC3339, str(obj(buckets[1])["end"]))
	return errA == nil && errB == nil && b.Sub(a) <= time.Hour
}

// shortDate renders a bucket's start as a month and day (and the hour).
func shortDate(v string, withHour bool) string {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return v
	}
	if withHour {
		return t.Format("Jan 2 15h")
	}
	return t.Format("Jan 2")
}
