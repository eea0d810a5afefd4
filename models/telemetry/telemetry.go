package telemetry

import (
	"context"
	"math"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// TelemetrySample is one measurement of a service by the network: latency,
// jitter, packet loss, utilisation, reachability and security alerts.
type TelemetrySample struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	models.Tenant
	ServiceID      string    `gorm:"size:40;not null;index:idx_telemetry_service_at,priority:1"`
	At             time.Time `gorm:"not null;index:idx_telemetry_service_at,priority:2;index:idx_telemetry_at"`
	Up             bool      `gorm:"not null"`
	LatencyMs      float64   `gorm:"not null"`
	JitterMs       float64   `gorm:"not null"`
	PacketLossPct  float64   `gorm:"not null"`
	UtilizationPct float64   `gorm:"not null"`
	SecurityAlerts int       `gorm:"not null;default:0"`
	// ThroughputMbps is the traffic at the time of the sample; DataMB the
	// data transferred since the previous sample; Calls the calls handled
	// since then (voice) and CallQuality their mean opinion score (1 to 5).
	ThroughputMbps float64 `gorm:"not null;default:0"`
	DataMB         float64 `gorm:"not null;default:0"`
	Calls          int     `gorm:"not null;default:0"`
	CallQuality    float64 `gorm:"not null;default:0"`
}

// RecordTelemetry stores samples in scope (their tenant).
func (s *Store) RecordTelemetry(ctx context.Context, scope models.Scope, samples ...*TelemetrySample) error {
	if len(samples) == 0 {
		return nil
	}
	return models.DBErr(s.In(ctx, scope).Create(samples).Error)
}

// HasTelemetry reports whether the service has any sample.
func (s *Store) HasTelemetry(ctx context.Context, scope models.Scope, serviceID string) (bool, error) {
	var n int64
	err := s.In(ctx, scope).Model(&TelemetrySample{}).Where("service_id = ?", serviceID).Limit(1).Count(&n).Error
	return n > 0, models.DBErr(err)
}

// Windows over which the status response is computed.
const (
	UptimeWindow      = 30 * 24 * time.Hour
	PerformanceWindow = time.Hour
	SecurityWindow    = 24 * time.Hour
)

// Health check values.
const (
	HealthHealthy   = "healthy"
	HealthDegraded  = "degraded"
	HealthUnhealthy = "unhealthy"
	HealthWarning   = "warning"
	HealthUnknown   = "unknown"
)

// PerformanceTargets are the latency and jitter an SLA promises.
type PerformanceTargets struct {
	LatencyMs     float64
	JitterMs      float64
	PacketLossPct float64
}

// SLATargets returns the performance an SLA tier promises (docs/provisioning.md).
func SLATargets(sla string) PerformanceTargets {
	switch sla {
	case "enterprise":
		return PerformanceTargets{LatencyMs: 20, JitterMs: 3, PacketLossPct: 0.1}
	case "premium":
		return PerformanceTargets{LatencyMs: 30, JitterMs: 5, PacketLossPct: 0.5}
	default:
		return PerformanceTargets{LatencyMs: 50, JitterMs: 10, PacketLossPct: 1}
	}
}

// PerformanceMetrics are averages over the performance window.
type PerformanceMetrics struct {
	LatencyMs            float64
	BandwidthUtilization float64
	PacketLoss           float64
	JitterMs             float64
}

// ServiceStatusReport is the status response of spec 2.2, computed from
// telemetry: uptime over the last 30 days, the last incident (a sample where
// the service was down or lost more packets than its SLA allows), averages
// of the last hour (or the latest sample), and health checks.
type ServiceStatusReport struct {
	Service          *services.Service
	UptimePercentage *float64
	LastIncident     *time.Time
	Metrics          *PerformanceMetrics
	Connectivity     string
	Performance      string
	Security         string
	Samples          int
}

// Round2 rounds v to two decimals.
func Round2(v float64) float64 { return math.Round(v*100) / 100 }

// StatusReport computes the status report of a service visible to p at
// time now. A service that is not delivered (pending, provisioning,
// decommissioning, decommissioned, failed) is not measured: nulls and
// unknown health, whatever samples it had before. Errors: NOT_FOUND.
func (s *Store) StatusReport(ctx context.Context, p *models.Principal, serviceID string, now time.Time) (*ServiceStatusReport, error) {
	svc, err := s.services.GetService(ctx, p, serviceID)
	if err != nil {
		return nil, err
	}
	if !svc.Live() {
		return &ServiceStatusReport{Service: svc, Connectivity: HealthUnknown, Performance: HealthUnknown, Security: HealthUnknown}, nil
	}
	scope := models.TenantScope(svc.OrganizationID, svc.Environment)
	db := s.In(ctx, scope)
	var samples []TelemetrySample
	if err := db.Where("service_id = ? AND at > ? AND at <= ?", serviceID, now.Add(-UptimeWindow), now).Order("at").Find(&samples).Error; err != nil {
		return nil, models.DBErr(err)
	}
	r := &ServiceStatusReport{Service: svc, Connectivity: HealthUnknown, Performance: HealthUnknown, Security: HealthUnknown, Samples: len(samples)}
	targets := SLATargets(svc.SLA)
	var lastIncident TelemetrySample
	if err := db.Where("service_id = ? AND at <= ? AND (up = ? OR packet_loss_pct > ?)", serviceID, now, false, targets.PacketLossPct).
		Order("at DESC").Limit(1).Find(&lastIncident).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if lastIncident.ID != 0 {
		t := lastIncident.At.UTC()
		r.LastIncident = &t
	}
	if len(samples) == 0 {
		return r, nil
	}
	up := 0
	for _, smp := range samples {
		if smp.Up {
			up++
		}
	}
	uptime := Round2(float64(up) * 100 / float64(len(samples)))
	r.UptimePercentage = &uptime

	latest := samples[len(samples)-1]
	recent := []TelemetrySample{}
	for _, smp := range samples {
		if smp.At.After(now.Add(-PerformanceWindow)) && smp.Up {
			recent = append(recent, smp)
		}
	}
	if len(recent) == 0 && latest.Up {
		recent = append(recent, latest)
	}
	if len(recent) > 0 {
		var m PerformanceMetrics
		for _, smp := range recent {
			m.LatencyMs += smp.LatencyMs
			m.JitterMs += smp.JitterMs
			m.PacketLoss += smp.PacketLossPct
			m.BandwidthUtilization += smp.UtilizationPct
		}
		n := float64(len(recent))
		m = PerformanceMetrics{LatencyMs: Round2(m.LatencyMs / n), JitterMs: Round2(m.JitterMs / n), PacketLoss: Round2(m.PacketLoss / n), BandwidthUtilization: Round2(m.BandwidthUtilization / n)}
		r.Metrics = &m
	}

	switch {
	case !latest.Up:
		r.Connectivity = HealthUnhealthy
	case latest.PacketLossPct > targets.PacketLossPct:
		r.Connectivity = HealthDegraded
	default:
		r.Connectivity = HealthHealthy
	}
	switch {
	case r.Metrics == nil:
		r.Performance = HealthUnhealthy
	case r.Metrics.LatencyMs > targets.LatencyMs || r.Metrics.JitterMs > targets.JitterMs:
		r.Performance = HealthDegraded
	default:
		r.Performance = HealthHealthy
	}
	r.Security = HealthHealthy
	for _, smp := range samples {
		if smp.At.After(now.Add(-SecurityWindow)) && smp.SecurityAlerts > 0 {
			r.Security = HealthWarning
		}
	}
	return r, nil
}

// ---------------------------------------------------------------------------
// Metrics, health and analytics, computed from the telemetry rows.

// MetricsPeriod is a period a time series covers, and the width of its buckets.
type MetricsPeriod struct {
	Name   string
	Length time.Duration
	Bucket time.Duration
}

// metricsPeriods returns the periods that `period` accepts, with their
// aliases in the spec's style.
func metricsPeriods() map[string]MetricsPeriod {
	hour := MetricsPeriod{Name: "1h", Length: time.Hour, Bucket: 5 * time.Minute}
	day := MetricsPeriod{Name: "24h", Length: 24 * time.Hour, Bucket: time.Hour}
	week := MetricsPeriod{Name: "7d", Length: 7 * 24 * time.Hour, Bucket: 6 * time.Hour}
	month := MetricsPeriod{Name: "30d", Length: 30 * 24 * time.Hour, Bucket: 24 * time.Hour}
	return map[string]MetricsPeriod{
		"1h": hour, "last_hour": hour, "24h": day, "last_24_hours": day, "1d": day,
		"7d": week, "last_7_days": week, "30d": month, "last_30_days": month,
	}
}

// ParseMetricsPeriod returns the period named p ("" is 24h). Errors:
// VALIDATION_ERROR (field period).
func ParseMetricsPeriod(p string) (MetricsPeriod, error) {
	if p == "" {
		p = "24h"
	}
	mp, ok := metricsPeriods()[p]
	if !ok {
		return MetricsPeriod{}, models.Invalid(models.FieldIssue{Field: "period", Issue: "must be 1h, 24h, 7d or 30d (or last_hour, last_24_hours, last_7_days, last_30_days)"})
	}
	return mp, nil
}

// MetricPoint is one bucket of a service's time series: averages over the
// samples in which the service was up (nil without any), totals, and the
// share of samples in which it was up.
type MetricPoint struct {
	Start              time.Time
	Samples            int
	UptimePercentage   *float64
	LatencyMs          *float64
	JitterMs           *float64
	PacketLoss         *float64
	Utilization        *float64
	ThroughputMbps     *float64
	PeakThroughputMbps *float64
	DataTransferredMB  float64
	Calls              int
	CallQuality        *float64
	SecurityAlerts     int
}

// MetricsSeries is a service's telemetry over a period, in buckets.
type MetricsSeries struct {
	Service *services.Service
	Period  MetricsPeriod
	From    time.Time
	To      time.Time
	Points  []MetricPoint
}

func svcRound(v float64) *float64 { r := Round2(v); return &r }

// ServiceMetrics returns the time series of a service visible to p over
// period, ending at now: one point per bucket, oldest first, including
// empty buckets. A service that is not delivered is not measured: every
// bucket is empty (null values), as its status report. Errors: NOT_FOUND.
func (s *Store) ServiceMetrics(ctx context.Context, p *models.Principal, serviceID string, period MetricsPeriod, now time.Time) (*MetricsSeries, error) {
	svc, err := s.services.GetService(ctx, p, serviceID)
	if err != nil {
		return nil, err
	}
	to := now.UTC().Truncate(period.Bucket).Add(period.Bucket)
	from := to.Add(-period.Length)
	var samples []TelemetrySample
	if svc.Live() {
		err = s.In(ctx, models.TenantScope(svc.OrganizationID, svc.Environment)).
			Where("service_id = ? AND at >= ? AND at < ?", serviceID, from, to).Order("at").Find(&samples).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
	}
	n := int(period.Length / period.Bucket)
	series := &MetricsSeries{Service: svc, Period: period, From: from, To: to, Points: make([]MetricPoint, n)}
	type acc struct {
		lat, jit, loss, util, thr, peak, quality float64
		upN, qualityN                            int
	}
	accs := make([]acc, n)
	for i := range series.Points {
		series.Points[i].Start = from.Add(time.Duration(i) * period.Bucket)
	}
	for _, smp := range samples {
		i := int(smp.At.Sub(from) / period.Bucket)
		if i < 0 || i >= n {
			continue
		}
		pt, a := &series.Points[i], &accs[i]
		pt.Samples++
		pt.DataTransferredMB += smp.DataMB
		pt.Calls += smp.Calls
		pt.SecurityAlerts += smp.SecurityAlerts
		if smp.Calls > 0 {
			a.quality += smp.CallQuality
			a.qualityN++
		}
		if !smp.Up {
			continue
		}
		a.upN++
		a.lat += smp.LatencyMs
		a.jit += smp.JitterMs
		a.loss += smp.PacketLossPct
		a.util += smp.UtilizationPct
		a.thr += smp.ThroughputMbps
		a.peak = math.Max(a.peak, smp.ThroughputMbps)
	}
	for i := range series.Points {
		pt, a := &series.Points[i], accs[i]
		pt.DataTransferredMB = Round2(pt.DataTransferredMB)
		if pt.Samples > 0 {
			pt.UptimePercentage = svcRound(float64(a.upN) * 100 / float64(pt.Samples))
		}
		if a.upN > 0 {
			k := float64(a.upN)
			pt.LatencyMs, pt.JitterMs, pt.PacketLoss = svcRound(a.lat/k), svcRound(a.jit/k), svcRound(a.loss/k)
			pt.Utilization, pt.ThroughputMbps, pt.PeakThroughputMbps = svcRound(a.util/k), svcRound(a.thr/k), svcRound(a.peak)
		}
		if a.qualityN > 0 {
			pt.CallQuality = svcRound(a.quality / float64(a.qualityN))
		}
	}
	return series, nil
}

// SLAUptimeTarget returns the availability an SLA tier promises, in percent.
func SLAUptimeTarget(sla string) float64 {
	switch sla {
	case "enterprise":
		return 99.99
	case "premium":
		return 99.9
	}
	return 99.5
}

// HealthCheck is one check of a service's health: its status, what was
// observed, the target and a message.
type HealthCheck struct {
	Name     string
	Status   string
	Observed map[string]any
	Target   map[string]any
	Message  string
}

// ServiceHealth is a service's health, computed from its telemetry: the
// checks, and overall the worst of them.
type ServiceHealth struct {
	Service      *services.Service
	Overall      string
	Checks       []HealthCheck
	LastSampleAt *time.Time
	OpenIncident *ServiceIncident
}

// svcHealthRank orders health values from best to worst.
func svcHealthRank(h string) int {
	switch h {
	case HealthHealthy:
		return 0
	case HealthWarning:
		return 1
	case HealthDegraded:
		return 2
	case HealthUnhealthy:
		return 3
	}
	return -1
}

// ServiceHealthReport returns the health of a service visible to p at now:
// the status report's checks (connectivity, performance, security) with
// what was observed against the SLA's targets, plus availability (uptime
// over 30 days against the SLA's uptime target) and, for voice, call
// quality. A service that is not delivered is not measured: every check
// unknown, nothing observed, no last sample nor open incident, as its
// status report. Errors: NOT_FOUND.
func (s *Store) ServiceHealthReport(ctx context.Context, p *models.Principal, serviceID string, now time.Time) (*ServiceHealth, error) {
	r, err := s.StatusReport(ctx, p, serviceID, now)
	if err != nil {
		return nil, err
	}
	svc := r.Service
	h := &ServiceHealth{Service: svc}
	targets := SLATargets(svc.SLA)
	if !svc.Live() {
		unmeasuredHealth(h, targets)
		return h, nil
	}
	scope := models.TenantScope(svc.OrganizationID, svc.Environment)
	var latest TelemetrySample
	if err := s.In(ctx, scope).Where("service_id = ? AND at <= ?", serviceID, now).Order("at DESC").Limit(1).Find(&latest).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if latest.ID != 0 {
		t := latest.At.UTC()
		h.LastSampleAt = &t
	}
	inc, err := s.OpenIncident(ctx, scope, serviceID)
	if err != nil {
		return nil, err
	}
	h.OpenIncident = inc
	conn := HealthCheck{Name: "connectivity", Status: r.Connectivity, Target: map[string]any{"packet_loss_max": targets.PacketLossPct}}
	perf := HealthCheck{Name: "performance", Status: r.Performance, Target: map[string]any{"latency_ms_max": targets.LatencyMs, "jitter_ms_max": targets.JitterMs}}
	sec := HealthCheck{Name: "security", Status: r.Security, Observed: map[string]any{}, Target: map[string]any{"security_alerts_24h": 0}}
	avail := HealthCheck{Name: "availability", Status: HealthUnknown, Target: map[string]any{"uptime_percentage_min": SLAUptimeTarget(svc.SLA)}}
	if latest.ID != 0 {
		conn.Observed = map[string]any{"up": latest.Up, "packet_loss": latest.PacketLossPct, "at": models.Timestamp(latest.At)}
	}
	if m := r.Metrics; m != nil {
		perf.Observed = map[string]any{"latency_ms": m.LatencyMs, "jitter_ms": m.JitterMs}
	}
	var alerts int64
	if err := s.In(ctx, scope).Model(&TelemetrySample{}).Where("service_id = ? AND at > ? AND at <= ?", serviceID, now.Add(-SecurityWindow), now).
		Select("COALESCE(SUM(security_alerts), 0)").Scan(&alerts).Error; err != nil {
		return nil, models.DBErr(err)
	}
	sec.Observed["security_alerts_24h"] = alerts
	if r.UptimePercentage != nil {
		avail.Observed = map[string]any{"uptime_percentage": *r.UptimePercentage}
		avail.Status = HealthHealthy
		if *r.UptimePercentage < SLAUptimeTarget(svc.SLA) {
			avail.Status = HealthDegraded
		}
	}
	for _, c := range []*HealthCheck{&conn, &perf, &sec, &avail} {
		c.Message = svcHealthMessage(c)
	}
	h.Checks = []HealthCheck{conn, perf, sec, avail}
	if svc.Kind == services.KindPhoneSystem || svc.Kind == services.KindContactCenter {
		var q struct {
			Quality float64
			Calls   int64
		}
		if err := s.In(ctx, scope).Model(&TelemetrySample{}).Where("service_id = ? AND at > ? AND at <= ? AND calls > 0", serviceID, now.Add(-PerformanceWindow), now).
			Select("COALESCE(AVG(call_quality), 0) AS quality, COALESCE(SUM(calls), 0) AS calls").Scan(&q).Error; err != nil {
			return nil, models.DBErr(err)
		}
		cq := HealthCheck{Name: "call_quality", Status: HealthUnknown, Target: map[string]any{"mos_min": 3.6}}
		if q.Calls > 0 {
			cq.Observed = map[string]any{"mos": Round2(q.Quality), "calls_last_hour": q.Calls}
			cq.Status = HealthHealthy
			if q.Quality < 3.6 {
				cq.Status = HealthDegraded
			}
		}
		cq.Message = svcHealthMessage(&cq)
		h.Checks = append(h.Checks, cq)
	}
	h.Overall = HealthUnknown
	for _, c := range h.Checks {
		if svcHealthRank(c.Status) > svcHealthRank(h.Overall) {
			h.Overall = c.Status
		}
	}
	return h, nil
}

// unmeasuredHealth fills h, the health of a service the network does not
// measure (not delivered): the checks with their targets, each unknown.
func unmeasuredHealth(h *ServiceHealth, targets PerformanceTargets) {
	svc := h.Service
	h.Checks = []HealthCheck{
		{Name: "connectivity", Target: map[string]any{"packet_loss_max": targets.PacketLossPct}},
		{Name: "performance", Target: map[string]any{"latency_ms_max": targets.LatencyMs, "jitter_ms_max": targets.JitterMs}},
		{Name: "security", Target: map[string]any{"security_alerts_24h": 0}},
		{Name: "availability", Target: map[string]any{"uptime_percentage_min": SLAUptimeTarget(svc.SLA)}},
	}
	if svc.Kind == services.KindPhoneSystem || svc.Kind == services.KindContactCenter {
		h.Checks = append(h.Checks, HealthCheck{Name: "call_quality", Target: map[string]any{"mos_min": 3.6}})
	}
	for i := range h.Checks {
		h.Checks[i].Status = HealthUnknown
		h.Checks[i].Message = "the service is " + string(svc.Status) + ": it is not measured"
	}
	h.Overall = HealthUnknown
}

func svcHealthMessage(c *HealthCheck) string {
	switch c.Status {
	case HealthHealthy:
		return c.Name + " is within the SLA's targets"
	case HealthUnknown:
		return "no measurement yet"
	case HealthWarning:
		return "security alerts were recorded in the last 24 hours"
	case HealthUnhealthy:
		return "the service does not answer"
	}
	return c.Name + " is outside the SLA's targets"
}

// ServiceAnalytics is the analytics response of spec 2.2, computed from a
// service's telemetry and price over a period. Figures without a sample to
// compute them from are nil: the peak without samples, the average latency
// without a sample in which the service was up, the call quality without
// calls (always, for kinds that carry no calls), the uptime without samples.
type ServiceAnalytics struct {
	Service             *services.Service
	Period              MetricsPeriod
	From, To            time.Time
	DataTransferredMB   float64
	PeakThroughputMbps  *float64
	AverageLatencyMs    *float64
	TotalCalls          int64
	CallQuality         *float64
	UptimePercentage    *float64
	TotalCost           models.Money
	CostPerGB           models.Money
	OptimizationSavings models.Money
	Currency            string
	// UsageGrowth is the data of the period's second half against its
	// first, in percent; nil when the first half moved no data (growth
	// from nothing has no rate).
	UsageGrowth *float64
	// PerformanceImprove is the average latency's drop from the period's
	// first half to its second, in percent; nil unless both halves have
	// a latency to compare.
	PerformanceImprove   *float64
	Samples              int64
	RecommendedBandwidth string
}

type svcTelemetryTotals struct {
	Samples int64
	UpN     int64
	Data    float64
	Peak    float64
	Latency float64
	Calls   int64
	Quality float64
}

func (s *Store) svcTelemetryTotals(ctx context.Context, db *gorm.DB, from, to time.Time) (svcTelemetryTotals, error) {
	var t svcTelemetryTotals
	err := db.Model(&TelemetrySample{}).Where("at > ? AND at <= ?", from, to).
		Select(`COUNT(*) AS samples, COALESCE(SUM(CASE WHEN up THEN 1 ELSE 0 END), 0) AS up_n, COALESCE(SUM(data_mb), 0) AS data,
			COALESCE(MAX(throughput_mbps), 0) AS peak, COALESCE(AVG(CASE WHEN up THEN latency_ms END), 0) AS latency,
			COALESCE(SUM(calls), 0) AS calls, COALESCE(AVG(CASE WHEN calls > 0 THEN call_quality END), 0) AS quality`).
		Scan(&t).Error
	return t, models.DBErr(err)
}

// Analytics returns the analytics of a service visible to p over period
// ending at now: usage (data transferred, peak throughput, average latency,
// calls and their quality), cost (the monthly charge prorated over the days
// of the period the service was billed, per GB, and what moving to the
// smallest bandwidth option that still covers 125 % of the peak would save
// per month), and trends (usage growth and latency improvement of the
// period's second half over its first, in percent; nil when the first half
// has nothing to compare with). Errors: NOT_FOUND.
func (s *Store) ServiceAnalyticsFor(ctx context.Context, p *models.Principal, serviceID string, period MetricsPeriod, now time.Time) (*ServiceAnalytics, error) {
	svc, err := s.services.GetService(ctx, p, serviceID)
	if err != nil {
		return nil, err
	}
	to := now.UTC()
	from := to.Add(-period.Length)
	db := s.In(ctx, models.TenantScope(svc.OrganizationID, svc.Environment)).Where("service_id = ?", serviceID)
	all, err := s.svcTelemetryTotals(ctx, db.Session(&gorm.Session{}), from, to)
	if err != nil {
		return nil, err
	}
	mid := from.Add(period.Length / 2)
	first, err := s.svcTelemetryTotals(ctx, db.Session(&gorm.Session{}), from, mid)
	if err != nil {
		return nil, err
	}
	second, err := s.svcTelemetryTotals(ctx, db.Session(&gorm.Session{}), mid, to)
	if err != nil {
		return nil, err
	}
	a := &ServiceAnalytics{Service: svc, Period: period, From: from, To: to, DataTransferredMB: Round2(all.Data),
		TotalCalls: all.Calls, Samples: all.Samples, Currency: services.OrDefault(svc.Currency, "USD")}
	if all.Samples > 0 {
		a.UptimePercentage = svcRound(float64(all.UpN) * 100 / float64(all.Samples))
		a.PeakThroughputMbps = svcRound(all.Peak)
	}
	if all.UpN > 0 {
		a.AverageLatencyMs = svcRound(all.Latency)
	}
	if all.Calls > 0 {
		a.CallQuality = svcRound(all.Quality)
	}
	if first.Data > 0 {
		a.UsageGrowth = svcRound((second.Data - first.Data) * 100 / first.Data)
	}
	if first.Latency > 0 && second.Latency > 0 {
		a.PerformanceImprove = svcRound((first.Latency - second.Latency) * 100 / first.Latency)
	}
	a.TotalCost = svcBilledCost(svc, from, to)
	if gb := all.Data / 1000; gb > 0 {
		a.CostPerGB = models.Money(math.Round(float64(a.TotalCost) / gb))
	}
	savings, rec, err := s.optimization(ctx, svc, all.Peak)
	if err != nil {
		return nil, err
	}
	a.OptimizationSavings, a.RecommendedBandwidth = savings, rec
	return a, nil
}

// svcBilledCost prorates the service's monthly charge (30-day months) over the
// part of [from, to] in which it was billed: from activation to the end of
// billing.
func svcBilledCost(svc *services.Service, from, to time.Time) models.Money {
	if svc.ActivatedAt == nil {
		return 0
	}
	start := laterOf(from, *svc.ActivatedAt)
	end := to
	if svc.BillingEndedAt != nil && svc.BillingEndedAt.Before(end) {
		end = *svc.BillingEndedAt
	}
	if !end.After(start) {
		return 0
	}
	seconds := int64(end.Sub(start) / time.Second)
	return models.Money((int64(svc.MonthlyCharge)*seconds + 30*24*3600/2) / (30 * 24 * 3600))
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// optimization returns the monthly saving of moving a bandwidth service to
// the smallest catalog option that covers 125 % of its peak throughput, and
// that option ("" when it is already the right size or has no bandwidth).
func (s *Store) optimization(ctx context.Context, svc *services.Service, peakMbps float64) (models.Money, string, error) {
	prof, _ := services.LookupKind(svc.Kind)
	if prof.Bandwidth == "" || svc.BandwidthMbps == 0 || peakMbps <= 0 {
		return 0, "", nil
	}
	offer, err := s.catalog.CatalogServiceByID(ctx, svc.CatalogServiceID)
	if err != nil {
		return 0, "", err
	}
	need := peakMbps * 1.25
	for _, opt := range offer.BandwidthOptions {
		mbps, err := catalog.ParseBandwidth("", opt)
		if err != nil || float64(mbps) < need {
			continue
		}
		if mbps >= svc.BandwidthMbps {
			return 0, "", nil
		}
		after, err := s.services.PriceService(ctx, svc, &services.ServiceUpdate{Bandwidth: opt, BandwidthMbps: mbps})
		if err != nil {
			return 0, "", err
		}
		return max(svc.MonthlyCharge-after.Monthly, 0), opt, nil
	}
	return 0, "", nil
}

// ServicesSummary is the analytics summary of a tenant's services
// (GET /services/analytics/summary), computed from the service rows,
// their telemetry and their incidents over a period.
type ServicesSummary struct {
	Period            MetricsPeriod
	From, To          time.Time
	Total             int64
	ByStatus          map[string]int64
	ByType            map[string]int64
	UptimePercentage  *float64
	AverageLatencyMs  float64
	DataTransferredMB float64
	TotalCalls        int64
	Incidents         int64
	OpenIncidents     int64
	MonthlyRecurring  models.Money
	Currency          string
}

// Summary returns the analytics summary of the services visible to p over
// period ending at now. Errors: none but database failures.
func (s *Store) SummarizeServices(ctx context.Context, p *models.Principal, period MetricsPeriod, now time.Time) (*ServicesSummary, error) {
	to := now.UTC()
	from := to.Add(-period.Length)
	scope := p.Scope()
	sum := &ServicesSummary{Period: period, From: from, To: to, ByStatus: map[string]int64{}, ByType: map[string]int64{}, Currency: "USD"}
	var groups []struct {
		Status string
		Kind   string
		N      int64
	}
	if err := s.In(ctx, scope).Model(&services.Service{}).Select("status, kind, COUNT(*) AS n").Group("status, kind").Scan(&groups).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, g := range groups {
		sum.Total += g.N
		sum.ByStatus[g.Status] += g.N
		sum.ByType[g.Kind] += g.N
	}
	var money struct {
		Total    int64
		Currency string
	}
	if err := s.In(ctx, scope).Model(&services.Service{}).Where("status IN ? AND billing_ended_at IS NULL", svcMonitoredStatuses()).
		Select("COALESCE(SUM(monthly_charge), 0) AS total, COALESCE(MAX(currency), '') AS currency").Scan(&money).Error; err != nil {
		return nil, models.DBErr(err)
	}
	sum.MonthlyRecurring = models.Money(money.Total)
	sum.Currency = services.OrDefault(money.Currency, "USD")
	t, err := s.svcTelemetryTotals(ctx, s.In(ctx, scope), from, to)
	if err != nil {
		return nil, err
	}
	if t.Samples > 0 {
		sum.UptimePercentage = svcRound(float64(t.UpN) * 100 / float64(t.Samples))
	}
	sum.AverageLatencyMs, sum.DataTransferredMB, sum.TotalCalls = Round2(t.Latency), Round2(t.Data), t.Calls
	if err := s.In(ctx, scope).Model(&ServiceIncident{}).Where("started_at > ? AND started_at <= ?", from, to).Count(&sum.Incidents).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if err := s.In(ctx, scope).Model(&ServiceIncident{}).Where("resolved_at IS NULL").Count(&sum.OpenIncidents).Error; err != nil {
		return nil, models.DBErr(err)
	}
	return sum, nil
}

// svcMonitoredStatuses returns the statuses of services the network measures.
func svcMonitoredStatuses() []services.ServiceStatus {
	return []services.ServiceStatus{services.ServiceOperational, services.ServiceDegraded, services.ServiceDown, services.ServiceMaintenance}
}

// MonitoredServices returns every service the network measures, of every
// tenant (the simulator's telemetry run).
func (s *Store) MonitoredServices(ctx context.Context) ([]services.Service, error) {
	var out []services.Service
	err := s.In(ctx, models.SystemScope()).Where("status IN ?", svcMonitoredStatuses()).Order("id").Find(&out).Error
	return out, models.DBErr(err)
}
