package analytics

import (
	"context"
	"math"
	"sort"
	"strconv"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
)

// LatencyBins is the number of 1 ms latency bins percentiles are read
// from; latencies of LatencyBins-1 ms and more share the last bin.
const LatencyBins = 10001

// PercentileMethod names how latency percentiles are computed (see
// docs/analytics.md): nearest rank over a histogram of 1 ms bins counted
// in SQL, each bin reporting its largest latency.
const PercentileMethod = "nearest_rank_1ms_histogram"

// PerformanceFigures are the performance of a bucket, a service or the
// whole period. Pointers are nil when nothing was measured.
type PerformanceFigures struct {
	Samples         int64    // telemetry samples taken
	UpSamples       int64    // of which the service was up
	AvailabilityPct *float64 // UpSamples / Samples × 100
	LatencyP50Ms    *float64 // nearest-rank percentiles of the up samples' latency
	LatencyP95Ms    *float64
	LatencyP99Ms    *float64
	JitterMs        *float64 // means over the up samples
	PacketLossPct   *float64
	UtilizationPct  *float64
	Incidents       int64    // down incidents started
	Restored        int64    // down incidents resolved
	MTTRMinutes     *float64 // mean minutes from down to restored, of Restored
}

// ServicePerformance is one service's performance over the period, and
// whether it met its SLA tier's availability target.
type ServicePerformance struct {
	ServiceID string
	Name      string
	Kind      string
	Category  string
	SLA       string
	TargetPct float64 // telemetry.SLAUptimeTarget of the tier
	MetSLA    *bool   // nil without samples
	PerformanceFigures
}

// PerformanceBucket is the performance of one bucket.
type PerformanceBucket struct {
	Bucket
	PerformanceFigures
}

// SLAAttainment is the share of services with samples whose availability
// met their tier's target.
type SLAAttainment struct {
	Measured      int64    // services with samples in the period
	Met           int64    // of which met their target
	AttainmentPct *float64 // Met / Measured × 100; nil when none measured
}

// Performance is the answer of GET /analytics/performance.
type Performance struct {
	Query    *Query
	Totals   PerformanceFigures
	Buckets  []PerformanceBucket  // every bucket
	Services []ServicePerformance // services with samples or incidents, by id
	SLA      SLAAttainment
}

// perfAcc accumulates the figures of a bucket or service.
type perfAcc struct {
	samples, up, incidents, restored  int64
	latency, jitter, loss, util, ttrS float64
	hist                              map[int64]*histBin
}

// histBin is one latency bin: its samples and largest latency.
type histBin struct {
	n   int64
	max float64
}

func newAcc() *perfAcc { return &perfAcc{hist: map[int64]*histBin{}} }

func (a *perfAcc) addBin(bin, n int64, maxMs float64) {
	h := a.hist[bin]
	if h == nil {
		h = &histBin{}
		a.hist[bin] = h
	}
	h.n += n
	h.max = math.Max(h.max, maxMs)
}

func (a *perfAcc) merge(o *perfAcc) {
	a.samples, a.up, a.incidents, a.restored = a.samples+o.samples, a.up+o.up, a.incidents+o.incidents, a.restored+o.restored
	a.latency, a.jitter, a.loss, a.util, a.ttrS = a.latency+o.latency, a.jitter+o.jitter, a.loss+o.loss, a.util+o.util, a.ttrS+o.ttrS
	for k, h := range o.hist {
		a.addBin(k, h.n, h.max)
	}
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100): the
// largest latency of the bin holding the ceil(p/100 × n)-th smallest value.
func (a *perfAcc) percentile(p float64) *float64 {
	var n int64
	bins := make([]int64, 0, len(a.hist))
	for k, h := range a.hist {
		n += h.n
		bins = append(bins, k)
	}
	if n == 0 {
		return nil
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i] < bins[j] })
	rank := max(int64(math.Ceil(p/100*float64(n))), 1)
	var seen int64
	for _, k := range bins {
		seen += a.hist[k].n
		if seen >= rank {
			return ptr(round2(a.hist[k].max))
		}
	}
	return nil
}

func (a *perfAcc) figures() PerformanceFigures {
	f := PerformanceFigures{Samples: a.samples, UpSamples: a.up, Incidents: a.incidents, Restored: a.restored}
	if a.samples > 0 {
		f.AvailabilityPct = ptr(round3(float64(a.up) * 100 / float64(a.samples)))
	}
	if a.up > 0 {
		n := float64(a.up)
		f.JitterMs, f.PacketLossPct, f.UtilizationPct = ptr(round2(a.jitter/n)), ptr(round2(a.loss/n)), ptr(round2(a.util/n))
		f.LatencyP50Ms, f.LatencyP95Ms, f.LatencyP99Ms = a.percentile(50), a.percentile(95), a.percentile(99)
	}
	if a.restored > 0 {
		f.MTTRMinutes = ptr(round2(a.ttrS / 60 / float64(a.restored)))
	}
	return f
}

func ptr[T any](v T) *T { return &v }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// perfRow is one aggregate row of the performance queries.
type perfRow struct {
	Bucket    int64
	ServiceID string
	Samples   int64
	UpSamples int64
	Latency   float64
	Jitter    float64
	Loss      float64
	Util      float64
	Bin       int64
	MaxMs     float64
	N         int64
	Seconds   float64
}

// Performance answers the performance of what p sees (see
// docs/analytics.md) over q. Errors: NOT_FOUND (a filter naming what p
// cannot see).
func (s *Store) Performance(ctx context.Context, p *models.Principal, q *Query) (*Performance, error) {
	t, err := s.resolve(ctx, p, q)
	if err != nil {
		return nil, err
	}
	from, to := q.From.UTC(), q.To.UTC()
	samples := func() *gorm.DB {
		return t.onServices(s.In(ctx, t.scope).Model(&telemetry.TelemetrySample{}), "service_id").Where("at >= ? AND at < ?", from, to)
	}
	incidents := func(col string) *gorm.DB {
		return t.onServices(s.In(ctx, t.scope).Model(&telemetry.ServiceIncident{}), "service_id").
			Where("kind = ? AND "+col+" >= ? AND "+col+" < ?", telemetry.IncidentDown, from, to)
	}
	bin := "CAST(latency_ms AS INTEGER)" // latencies are not negative: truncation is the floor
	seconds := "(julianday(resolved_at) - julianday(started_at)) * 86400"
	if !t.sqlite {
		bin = "CAST(FLOOR(latency_ms) AS BIGINT)"
		seconds = "CAST(EXTRACT(EPOCH FROM resolved_at - started_at) AS DOUBLE PRECISION)"
	}
	bin = "CASE WHEN latency_ms >= " + strconv.Itoa(LatencyBins-1) + " THEN " + strconv.Itoa(LatencyBins-1) + " ELSE " + bin + " END"
	const sums = "COUNT(*) AS samples, SUM(CASE WHEN up THEN 1 ELSE 0 END) AS up_samples, SUM(CASE WHEN up THEN latency_ms ELSE 0 END) AS latency, " +
		"SUM(CASE WHEN up THEN jitter_ms ELSE 0 END) AS jitter, SUM(CASE WHEN up THEN packet_loss_pct ELSE 0 END) AS loss, " +
		"SUM(CASE WHEN up THEN utilization_pct ELSE 0 END) AS util"

	buckets := make([]*perfAcc, len(q.Buckets))
	for i := range buckets {
		buckets[i] = newAcc()
	}
	per := map[string]*perfAcc{}
	svc := func(id string) *perfAcc {
		if per[id] == nil {
			per[id] = newAcc()
		}
		return per[id]
	}
	run := func(db *gorm.DB, sel, group string, fold func(r perfRow)) error {
		var rows []perfRow
		if err := db.Select(sel).Group(group).Scan(&rows).Error; err != nil {
			return models.DBErr(err)
		}
		for _, r := range rows {
			fold(r)
		}
		return nil
	}
	addSums := func(a *perfAcc, r perfRow) {
		a.samples += r.Samples
		a.up += r.UpSamples
		a.latency, a.jitter, a.loss, a.util = a.latency+r.Latency, a.jitter+r.Jitter, a.loss+r.Loss, a.util+r.Util
	}
	b := t.bucket("at")
	steps := []func() error{
		func() error {
			return run(samples(), b+" AS bucket, "+sums, b, func(r perfRow) { addSums(buckets[q.bucketIndex(r.Bucket)], r) })
		},
		func() error {
			return run(samples(), "service_id, "+sums, "service_id", func(r perfRow) { addSums(svc(r.ServiceID), r) })
		},
		func() error {
			return run(samples().Where("up = ?", true), b+" AS bucket, "+bin+" AS bin, COUNT(*) AS n, MAX(latency_ms) AS max_ms", b+", "+bin,
				func(r perfRow) { buckets[q.bucketIndex(r.Bucket)].addBin(r.Bin, r.N, r.MaxMs) })
		},
		func() error {
			return run(samples().Where("up = ?", true), "service_id, "+bin+" AS bin, COUNT(*) AS n, MAX(latency_ms) AS max_ms", "service_id, "+bin,
				func(r perfRow) { svc(r.ServiceID).addBin(r.Bin, r.N, r.MaxMs) })
		},
		func() error {
			bs := t.bucket("started_at")
			if err := run(incidents("started_at"), bs+" AS bucket, COUNT(*) AS n", bs, func(r perfRow) { buckets[q.bucketIndex(r.Bucket)].incidents += r.N }); err != nil {
				return err
			}
			return run(incidents("started_at"), "service_id, COUNT(*) AS n", "service_id", func(r perfRow) { svc(r.ServiceID).incidents += r.N })
		},
		func() error {
			br := t.bucket("resolved_at")
			fold := func(a *perfAcc, r perfRow) { a.restored += r.N; a.ttrS += r.Seconds }
			if err := run(incidents("resolved_at"), br+" AS bucket, COUNT(*) AS n, SUM("+seconds+") AS seconds", br,
				func(r perfRow) { fold(buckets[q.bucketIndex(r.Bucket)], r) }); err != nil {
				return err
			}
			return run(incidents("resolved_at"), "service_id, COUNT(*) AS n, SUM("+seconds+") AS seconds", "service_id", func(r perfRow) { fold(svc(r.ServiceID), r) })
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}

	out := &Performance{Query: q, Buckets: make([]PerformanceBucket, len(q.Buckets)), Services: []ServicePerformance{}}
	total := newAcc()
	for i, a := range buckets {
		out.Buckets[i] = PerformanceBucket{Bucket: q.Buckets[i], PerformanceFigures: a.figures()}
		total.merge(a)
	}
	out.Totals = total.figures()

	ids := sortedKeys(per)
	info := map[string]services.Service{}
	for rest := ids; len(rest) > 0; {
		chunk := rest[:min(len(rest), 500)]
		rest = rest[len(chunk):]
		var rows []services.Service
		if err := s.In(ctx, t.scope).Select("id, name, kind, sla").Where("id IN ?", chunk).Find(&rows).Error; err != nil {
			return nil, models.DBErr(err)
		}
		for _, r := range rows {
			info[r.ID] = r
		}
	}
	for _, id := range ids {
		v := info[id]
		sp := ServicePerformance{ServiceID: id, Name: v.Name, Kind: v.Kind, Category: categoryOf(v.Kind), SLA: v.SLA, TargetPct: telemetry.SLAUptimeTarget(v.SLA),
			PerformanceFigures: per[id].figures()}
		if sp.SLA == "" {
			sp.SLA = "standard"
		}
		if sp.Samples > 0 {
			// Compare unrounded: met when up/samples × 100 ≥ target.
			met := float64(sp.UpSamples)*100/float64(sp.Samples) >= sp.TargetPct
			sp.MetSLA = &met
			out.SLA.Measured++
			if met {
				out.SLA.Met++
			}
		}
		out.Services = append(out.Services, sp)
	}
	if out.SLA.Measured > 0 {
		out.SLA.AttainmentPct = ptr(round2(float64(out.SLA.Met) * 100 / float64(out.SLA.Measured)))
	}
	return out, nil
}
