// Package metrics holds the platform's Prometheus collectors: one Metrics
// value per process, built by New on a registry of its own (never the
// global default), passed to the API, the worker and the activities
// through their constructors, and served by Serve on a listener apart from
// the API's. A nil *Metrics is valid and records nothing, so code under
// test needs none. docs/operations.md lists every family.
package metrics

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/telcoplatform/platform/models/operations"
)

// Namespace prefixes every family of the platform's own (the Temporal
// SDK's keep their temporal_ names).
const Namespace = "platform"

// Metrics are the collectors of one process and the registry they are on.
type Metrics struct {
	// Registry is the process's registry: the platform's families, the Go
	// and process collectors, and the Temporal SDK's metrics.
	Registry *prometheus.Registry

	httpRequests      *prometheus.CounterVec
	httpDuration      *prometheus.HistogramVec
	apiErrors         *prometheus.CounterVec
	rateLimit         *prometheus.CounterVec
	opsStarted        *prometheus.CounterVec
	opsFinished       *prometheus.CounterVec
	webhookDeliveries *prometheus.CounterVec
	slaBreaches       *prometheus.CounterVec
	slaEscalations    *prometheus.CounterVec
	streamEnds        *prometheus.CounterVec
	horizonCapped     prometheus.Counter
	temporal          *temporalCollector
}

// New returns the collectors on a new registry, with the Go runtime and
// process collectors registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "http_requests_total",
			Help: "API requests answered, by route template (unmatched paths: (unmatched)), method and status."}, []string{"route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "http_request_duration_seconds",
			Help:    "Time to answer an API request, by route template and method.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route", "method"}),
		apiErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "api_errors_total",
			Help: "API error answers, by error code (the code of the error body)."}, []string{"code"}),
		rateLimit: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "ratelimit_decisions_total",
			Help: "Rate-limit decisions, by bucket (the one that refused: hourly, burst, group, suspended; admitted: the one the headers describe, or none) and outcome (allowed, limited)."}, []string{"bucket", "outcome"}),
		opsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "operations_started_total",
			Help: "Long-running operations that started running (pending to in_progress), by type."}, []string{"type"}),
		opsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "operations_finished_total",
			Help: "Long-running operations that ended, by type and status (completed, partial, failed, cancelled, rolled_back)."}, []string{"type", "status"}),
		webhookDeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "webhook_delivery_attempts_total",
			Help: "Webhook delivery attempts, by outcome (success, failure) and attempt number (1 to 6; later ones as 7+)."}, []string{"outcome", "attempt"}),
		slaBreaches: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "sla_breaches_total",
			Help: "Support SLA breaches recorded, by metric (response, resolution)."}, []string{"metric"}),
		slaEscalations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "sla_escalations_total",
			Help: "Support SLA escalation steps fired (warnings included), by metric and action."}, []string{"metric", "action"}),
		streamEnds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "stream_disconnects_total",
			Help: "Real-time streams (GET /v1/stream) the server ended, by reason (slow_consumer, credential, max_duration, shutdown)."}, []string{"reason"}),
		horizonCapped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "stream_horizon_capped_total",
			Help: "Reads of the event log by the real-time streams that did not wait for an open database transaction older than the maximum lag."}),
		temporal: newTemporalCollector(),
	}
	reg.MustRegister(m.httpRequests, m.httpDuration, m.apiErrors, m.rateLimit, m.opsStarted, m.opsFinished,
		m.webhookDeliveries, m.slaBreaches, m.slaEscalations, m.streamEnds, m.horizonCapped, m.temporal,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format (404
// when m is nil).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveHTTP counts one answered API request: route is the route
// template (never the raw path), status the HTTP status.
func (m *Metrics) ObserveHTTP(route, method string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// APIError counts one error answer by its error code.
func (m *Metrics) APIError(code string) {
	if m == nil {
		return
	}
	m.apiErrors.WithLabelValues(code).Inc()
}

// Outcomes of RateLimitDecision.
const (
	OutcomeAllowed = "allowed"
	OutcomeLimited = "limited"
)

// RateLimitDecision counts one decision of the rate limiter: bucket is the
// bucket that refused the request (hourly, burst, group, suspended) or, for
// an admitted one, the bucket its X-RateLimit-* headers describe (hourly,
// group; none when unlimited).
func (m *Metrics) RateLimitDecision(bucket string, allowed bool) {
	if m == nil {
		return
	}
	outcome := OutcomeLimited
	if allowed {
		outcome = OutcomeAllowed
	}
	m.rateLimit.WithLabelValues(bucket, outcome).Inc()
}

// RegisterFailOpen adds platform_ratelimit_fail_open_total, read from
// total at scrape time: the requests let through unlimited because the
// limiter (Redis) failed. A second registration on the same Metrics (two
// API servers in one process, in tests) is ignored.
func (m *Metrics) RegisterFailOpen(total func() float64) {
	if m == nil || total == nil {
		return
	}
	_ = m.Registry.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: "ratelimit_fail_open_total",
		Help: "Requests let through unlimited because the limiter (Redis) failed."}, total))
}

// OperationStatusChanged counts an operation's transition from one status
// to another: into in_progress from pending as started; into a terminal
// status (completed, partial, failed, cancelled, rolled_back) as finished.
func (m *Metrics) OperationStatusChanged(opType, from, to string) {
	if m == nil || from == to {
		return
	}
	switch status := operations.OperationStatus(to); {
	case status == operations.OpInProgress:
		if operations.OperationStatus(from) == operations.OpPending {
			m.opsStarted.WithLabelValues(opType).Inc()
		}
	case status.Terminal():
		m.opsFinished.WithLabelValues(opType, to).Inc()
	}
}

// WebhookAttempt counts one webhook delivery attempt (attempt counts from 1).
func (m *Metrics) WebhookAttempt(success bool, attempt int) {
	if m == nil {
		return
	}
	outcome := "failure"
	if success {
		outcome = "success"
	}
	n := strconv.Itoa(attempt)
	if attempt > 6 {
		n = "7+"
	}
	m.webhookDeliveries.WithLabelValues(outcome, n).Inc()
}

// StreamDisconnected counts one real-time stream the server ended for
// reason (slow_consumer, credential, max_duration, shutdown).
func (m *Metrics) StreamDisconnected(reason string) {
	if m == nil {
		return
	}
	m.streamEnds.WithLabelValues(reason).Inc()
}

// StreamHorizonCapped counts one read of the event log by the real-time
// streams that went past an open transaction older than their maximum lag
// instead of waiting for it.
func (m *Metrics) StreamHorizonCapped() {
	if m == nil {
		return
	}
	m.horizonCapped.Inc()
}

// SLABreach counts one recorded breach of a ticket's SLA metric.
func (m *Metrics) SLABreach(metric string) {
	if m == nil {
		return
	}
	m.slaBreaches.WithLabelValues(metric).Inc()
}

// SLAEscalation counts one fired escalation step of a ticket's SLA metric.
func (m *Metrics) SLAEscalation(metric, action string) {
	if m == nil {
		return
	}
	m.slaEscalations.WithLabelValues(metric, action).Inc()
}

// RegisterDB adds the connection pool statistics of db (sql.DBStats) as
// the go_sql_* families with db_name="platform".
func (m *Metrics) RegisterDB(db *sql.DB) {
	if m == nil || db == nil {
		return
	}
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, "platform"))
}

// OldestFunc returns the creation time of the oldest event not yet
// dispatched (ok false when every event is).
type OldestFunc func(ctx context.Context) (oldest time.Time, ok bool, err error)

// RegisterOutboxLag adds platform_outbox_lag_seconds, the age of the
// oldest undispatched event, read by oldest at scrape time (within 5s),
// and platform_outbox_lag_errors_total, the reads that failed (the gauge
// is then absent from the scrape).
func (m *Metrics) RegisterOutboxLag(oldest OldestFunc, now func() time.Time) {
	if m == nil || oldest == nil {
		return
	}
	if now == nil {
		now = time.Now
	}
	m.Registry.MustRegister(&outboxCollector{oldest: oldest, now: now,
		desc: prometheus.NewDesc(Namespace+"_outbox_lag_seconds", "Age of the oldest event in the outbox not yet dispatched (0: none waiting), read from the database at scrape time.", nil, nil),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "outbox_lag_errors_total",
			Help: "Scrapes whose outbox lag read failed (the lag is then absent)."}),
	})
}

type outboxCollector struct {
	oldest OldestFunc
	now    func() time.Time
	desc   *prometheus.Desc
	errs   prometheus.Counter
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	c.errs.Describe(ch)
}

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	at, ok, err := c.oldest(ctx)
	switch {
	case err != nil:
		c.errs.Inc()
	case !ok:
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 0)
	default:
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, max(0, c.now().Sub(at).Seconds()))
	}
	c.errs.Collect(ch)
}
