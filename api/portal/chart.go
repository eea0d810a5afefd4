package portal

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// chart is a metric's line chart, drawn on the server as SVG.
type chart struct {
	ID    string
	Title string
	Unit  string
	SVG   template.HTML
	Last  string // the latest value, for the text alternative
}

// Chart geometry (viewBox units).
const (
	chartW, chartH       = 400.0, 160.0
	chartLeft, chartBott = 44.0, 22.0
	chartTop, chartRight = 10.0, 8.0
)

// lineChart draws the points of key across metric buckets (nulls are gaps).
func lineChart(id, title, unit, key string, points []any) chart {
	vals := make([]float64, len(points))
	lo, hi, have := math.Inf(1), math.Inf(-1), false
	last := ""
	for i, p := range points {
		v, ok := obj(p)[key].(float64)
		if !ok {
			vals[i] = math.NaN()
			continue
		}
		vals[i], have = v, true
		lo, hi, last = math.Min(lo, v), math.Max(hi, v), fmt.Sprintf("%.2f %s", v, unit)
	}
	if !have {
		lo, hi = 0, 1
	}
	if lo > 0 {
		lo = 0
	}
	if hi-lo < 1e-9 {
		hi = lo + 1
	}
	plotW, plotH := chartW-chartLeft-chartRight, chartH-chartTop-chartBott
	x := func(i int) float64 {
		if len(vals) < 2 {
			return chartLeft
		}
		return chartLeft + plotW*float64(i)/float64(len(vals)-1)
	}
	y := func(v float64) float64 { return chartTop + plotH*(1-(v-lo)/(hi-lo)) }
	var b strings.Builder
	desc := title + ": no data in this period"
	if have {
		desc = fmt.Sprintf("%s from %.2f to %.2f %s; latest %s", title, lo, hi, unit, last)
	}
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, html.EscapeString(id), chartW, chartH, html.EscapeString(desc))
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, chartLeft, chartTop, chartLeft, chartTop+plotH)
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, chartLeft, chartTop+plotH, chartLeft+plotW, chartTop+plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, chartLeft-4, chartTop+8, trimNum(hi))
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, chartLeft-4, chartTop+plotH, trimNum(lo))
	if len(points) > 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`, chartLeft, chartH-6, html.EscapeString(formatTime(obj(points[0])["timestamp"])))
	}
	path, pen := strings.Builder{}, false
	for i, v := range vals {
		if math.IsNaN(v) {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(i), y(v))
		pen = true
	}
	if path.Len() > 0 {
		fmt.Fprintf(&b, `<path class="line" d="%s"/>`, strings.TrimSpace(path.String()))
	}
	for i, v := range vals { // each bucket's value as a dot, so a lone sample shows too
		if !math.IsNaN(v) {
			fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="2.5"/>`, x(i), y(v))
		}
	}
	b.WriteString(`</svg>`)
	return chart{ID: id, Title: title, Unit: unit, SVG: template.HTML(b.String()), Last: last} // #nosec: numbers and escaped text only
}

// trimNum formats an axis value compactly.
func trimNum(v float64) string {
	if math.Abs(v) >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
