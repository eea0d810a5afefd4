package models

import (
	"context"
	"math"
	"time"
)

// TelemetrySample is one measurement of a service by the network: latency,
// jitter, packet loss, utilisation, reachability and security alerts.
type TelemetrySample struct {
	ID uint64 `gorm:"primaryKey;autoIncrement"`
	Tenant
	ServiceID      string    `gorm:"size:40;not null;index:idx_telemetry_service_at,priority:1"`
	At             time.Time `gorm:"not null;index:idx_telemetry_service_at,priority:2"`
	Up             bool      `gorm:"not null"`
	LatencyMs      float64   `gorm:"not null"`
	JitterMs       float64   `gorm:"not null"`
	PacketLossPct  float64   `gorm:"not null"`
	UtilizationPct float64   `gorm:"not null"`
	SecurityAlerts int       `gorm:"not null;default:0"`
}

// RecordTelemetry stores samples in scope (their tenant).
func (s *Store) RecordTelemetry(ctx context.Context, scope Scope, samples ...*TelemetrySample) error {
	if len(samples) == 0 {
		return nil
	}
	return dbErr(s.In(ctx, scope).Create(samples).Error)
}

// HasTelemetry reports whether the service has any sample.
func (s *Store) HasTelemetry(ctx context.Context, scope Scope, serviceID string) (bool, error) {
	var n int64
	err := s.In(ctx, scope).Model(&TelemetrySample{}).Where("service_id = ?", serviceID).Limit(1).Count(&n).Error
	return n > 0, dbErr(err)
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
	Service          *Service
	UptimePercentage *float64
	LastIncident     *time.Time
	Metrics          *PerformanceMetrics
	Connectivity     string
	Performance      string
	Security         string
	Samples          int
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// StatusReport computes the status report of a service visible to p at
// time now. A service that never became operational (pending, provisioning,
// failed) has no measurements: nulls and unknown health. Errors: NOT_FOUND.
func (s *Store) StatusReport(ctx context.Context, p *Principal, serviceID string, now time.Time) (*ServiceStatusReport, error) {
	svc, err := s.GetService(ctx, p, serviceID)
	if err != nil {
		return nil, err
	}
	switch svc.Status {
	case ServicePending, ServiceProvisioning, ServiceFailed:
		return &ServiceStatusReport{Service: svc, Connectivity: HealthUnknown, Performance: HealthUnknown, Security: HealthUnknown}, nil
	}
	scope := TenantScope(svc.OrganizationID, svc.Environment)
	db := s.In(ctx, scope)
	var samples []TelemetrySample
	if err := db.Where("service_id = ? AND at > ? AND at <= ?", serviceID, now.Add(-UptimeWindow), now).Order("at").Find(&samples).Error; err != nil {
		return nil, dbErr(err)
	}
	r := &ServiceStatusReport{Service: svc, Connectivity: HealthUnknown, Performance: HealthUnknown, Security: HealthUnknown, Samples: len(samples)}
	targets := SLATargets(svc.SLA)
	var lastIncident TelemetrySample
	if err := db.Where("service_id = ? AND at <= ? AND (up = ? OR packet_loss_pct > ?)", serviceID, now, false, targets.PacketLossPct).
		Order("at DESC").Limit(1).Find(&lastIncident).Error; err != nil {
		return nil, dbErr(err)
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
	uptime := round2(float64(up) * 100 / float64(len(samples)))
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
		m = PerformanceMetrics{LatencyMs: round2(m.LatencyMs / n), JitterMs: round2(m.JitterMs / n), PacketLoss: round2(m.PacketLoss / n), BandwidthUtilization: round2(m.BandwidthUtilization / n)}
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
