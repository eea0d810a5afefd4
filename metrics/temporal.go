package metrics

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// temporalBuckets are the buckets (seconds) of the SDK's timers.
var temporalBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// TemporalHandler returns the Temporal SDK's metrics handler
// (client.Options.MetricsHandler) that records the SDK's own metrics
// (temporal_request, temporal_workflow_task_schedule_to_start_latency,
// temporal_activity_execution_latency, temporal_worker_task_slots_available
// and the rest) on m's registry under the SDK's names and tags: counters
// as counters (a _total suffix added), gauges as gauges, timers as
// histograms in seconds. nil m: the SDK's no-op handler.
func (m *Metrics) TemporalHandler() client.MetricsHandler {
	if m == nil {
		return client.MetricsNopHandler
	}
	return temporalHandler{c: m.temporal}
}

// temporalCollector holds the SDK's series and exposes them at scrape
// time. It is an unchecked collector (it describes nothing), since the
// SDK emits one name with different tag sets.
type temporalCollector struct {
	mu     sync.Mutex
	series map[string]*temporalSeries
}

type temporalKind int

const (
	kindCounter temporalKind = iota
	kindGauge
	kindTimer
)

type temporalSeries struct {
	name    string
	kind    temporalKind
	labels  []string // sorted names
	values  []string
	value   float64  // counter total or gauge value
	count   uint64   // timer observations
	buckets []uint64 // timer observations per bucket (not cumulative)
}

func newTemporalCollector() *temporalCollector {
	return &temporalCollector{series: map[string]*temporalSeries{}}
}

// Describe describes nothing: the collector is unchecked.
func (c *temporalCollector) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series recorded so far.
func (c *temporalCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.series {
		switch s.kind {
		case kindCounter:
			d := prometheus.NewDesc(s.name+"_total", "Temporal SDK counter "+s.name+".", s.labels, nil)
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, s.value, s.values...)
		case kindGauge:
			d := prometheus.NewDesc(s.name, "Temporal SDK gauge "+s.name+".", s.labels, nil)
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, s.value, s.values...)
		case kindTimer:
			d := prometheus.NewDesc(s.name, "Temporal SDK timer "+s.name+" (seconds).", s.labels, nil)
			cum := make(map[float64]uint64, len(temporalBuckets))
			var n uint64
			for i, b := range temporalBuckets {
				n += s.buckets[i]
				cum[b] = n
			}
			ch <- prometheus.MustNewConstHistogram(d, s.count, s.value, cum, s.values...)
		}
	}
}

// get returns the series of name and tags, creating it.
func (c *temporalCollector) get(kind temporalKind, name string, tags map[string]string) *temporalSeries {
	name = sanitize(name)
	labels := make([]string, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		labels = append(labels, sanitize(k))
	}
	values := make([]string, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		values = append(values, tags[k])
	}
	var key strings.Builder
	key.WriteString(name)
	for i := range labels {
		key.WriteString("\xff" + labels[i] + "\xfe" + values[i])
	}
	k := key.String()
	s := c.series[k]
	if s == nil {
		s = &temporalSeries{name: name, kind: kind, labels: labels, values: values}
		if kind == kindTimer {
			s.buckets = make([]uint64, len(temporalBuckets))
		}
		c.series[k] = s
	}
	return s
}

// sanitize makes s a valid Prometheus metric or label name.
func sanitize(s string) string {
	b := []byte(s)
	for i, r := range b {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// temporalHandler is client.MetricsHandler over a temporalCollector.
type temporalHandler struct {
	c    *temporalCollector
	tags map[string]string
}

// WithTags returns a handler whose metrics carry tags on top of h's.
func (h temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	maps.Copy(merged, h.tags)
	maps.Copy(merged, tags)
	return temporalHandler{c: h.c, tags: merged}
}

// Counter returns the counter of name with h's tags.
func (h temporalHandler) Counter(name string) client.MetricsCounter {
	return temporalCounter{h: h, name: name}
}

// Gauge returns the gauge of name with h's tags.
func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	return temporalGauge{h: h, name: name}
}

// Timer returns the timer of name with h's tags.
func (h temporalHandler) Timer(name string) client.MetricsTimer {
	return temporalTimer{h: h, name: name}
}

type temporalCounter struct {
	h    temporalHandler
	name string
}

// Inc adds d to the counter.
func (t temporalCounter) Inc(d int64) {
	t.h.c.mu.Lock()
	defer t.h.c.mu.Unlock()
	t.h.c.get(kindCounter, t.name, t.h.tags).value += float64(d)
}

type temporalGauge struct {
	h    temporalHandler
	name string
}

// Update sets the gauge.
func (t temporalGauge) Update(v float64) {
	t.h.c.mu.Lock()
	defer t.h.c.mu.Unlock()
	t.h.c.get(kindGauge, t.name, t.h.tags).value = v
}

type temporalTimer struct {
	h    temporalHandler
	name string
}

// Record observes d.
func (t temporalTimer) Record(d time.Duration) {
	t.h.c.mu.Lock()
	defer t.h.c.mu.Unlock()
	s := t.h.c.get(kindTimer, t.name, t.h.tags)
	v := d.Seconds()
	s.count++
	s.value += v
	if i, found := slices.BinarySearch(temporalBuckets, v); found || i < len(temporalBuckets) {
		s.buckets[i]++
	}
}
