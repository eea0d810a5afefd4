package telemetry

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/services"
)

// ---------------------------------------------------------------------------
// Incidents.

// Incident kinds: the service went down, or its performance degraded.
const (
	IncidentDown     = "down"
	IncidentDegraded = "degraded"
)

// ServiceIncident is a period in which a service was down or degraded, as
// the network reported it (inc_).
type ServiceIncident struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	ServiceID  string         `gorm:"size:40;not null;index"`
	Kind       string         `gorm:"size:20;not null"`
	Cause      string         `gorm:"size:200;not null"`
	Metrics    map[string]any `gorm:"serializer:json;type:text"`
	StartedAt  time.Time      `gorm:"not null;index"`
	ResolvedAt *time.Time     `gorm:"index"`
}

// OpenIncident returns the service's unresolved incident, or nil.
func (s *Store) OpenIncident(ctx context.Context, scope models.Scope, serviceID string) (*ServiceIncident, error) {
	var inc ServiceIncident
	err := s.In(ctx, scope).Where("service_id = ? AND resolved_at IS NULL", serviceID).Order("started_at DESC").Limit(1).Find(&inc).Error
	if err != nil {
		return nil, models.DBErr(err)
	}
	if inc.ID == "" {
		return nil, nil
	}
	return &inc, nil
}

// Incidents returns the incidents of a service, newest first.
func (s *Store) ServiceIncidents(ctx context.Context, scope models.Scope, serviceID string) ([]ServiceIncident, error) {
	var out []ServiceIncident
	err := s.In(ctx, scope).Where("service_id = ?", serviceID).Order("started_at DESC, id").Find(&out).Error
	return out, models.DBErr(err)
}

// RaiseIncident records that the network sees the service down or degraded
// at at, in one transaction: the incident, the status change (operational
// or degraded → down; operational → degraded) with service.status_changed,
// and service.down or service.performance_alert (data: service, incident,
// metrics against the SLA's targets). A service in maintenance, not
// delivered, or already in that state (or down, for degraded) is left as it
// is and nil is returned. Errors: NOT_FOUND.
func (s *Store) RaiseIncident(ctx context.Context, scope models.Scope, serviceID, kind, cause string, metrics map[string]any, at time.Time) (*ServiceIncident, error) {
	to := services.ServiceDown
	if kind == IncidentDegraded {
		to = services.ServiceDegraded
	}
	var out *ServiceIncident
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var svc services.Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.Status != services.ServiceOperational && !(svc.Status == services.ServiceDegraded && to == services.ServiceDown) {
			return nil
		}
		moved, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, to, "incident: "+cause, "")
		if err != nil {
			return err
		}
		var open ServiceIncident
		if err := tx.Where("service_id = ? AND resolved_at IS NULL", serviceID).Limit(1).Find(&open).Error; err != nil {
			return models.DBErr(err)
		}
		inc := &open
		if open.ID == "" || open.Kind != kind {
			if open.ID != "" {
				if err := tx.Model(&ServiceIncident{}).Where("id = ?", open.ID).Update("resolved_at", at.UTC()).Error; err != nil {
					return models.DBErr(err)
				}
			}
			inc = &ServiceIncident{ID: models.NewID(services.PrefixIncident), ServiceID: serviceID, Kind: kind, Cause: cause, Metrics: metrics, StartedAt: at.UTC()}
			if err := tx.Create(inc).Error; err != nil {
				return models.DBErr(err)
			}
		}
		typ := services.EventServiceDown
		if kind == IncidentDegraded {
			typ = services.EventServicePerformanceAlert
		}
		targets := SLATargets(svc.SLA)
		data := map[string]any{"service": services.ServiceSummary(moved), "incident": map[string]any{"id": inc.ID, "kind": kind, "cause": cause, "started_at": models.Timestamp(inc.StartedAt)},
			"metrics": metrics, "targets": map[string]any{"latency_ms": targets.LatencyMs, "jitter_ms": targets.JitterMs, "packet_loss": targets.PacketLossPct}}
		if err := eventlog.RecordEvent(tx, eventlog.NewEvent(typ, serviceID, data)); err != nil {
			return err
		}
		out = inc
		return nil
	})
	return out, services.ErrOrNil(err)
}

// ResolveIncident records that the service is back at at: its open
// incident is resolved and, when it is down or degraded, it becomes
// operational (service.status_changed and service.restored, data: service,
// incident, duration_seconds) in one transaction. A service without an open
// incident is left as it is. Errors: NOT_FOUND.
func (s *Store) ResolveIncident(ctx context.Context, scope models.Scope, serviceID string, at time.Time) (*ServiceIncident, error) {
	var out *ServiceIncident
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		var inc ServiceIncident
		if err := tx.Where("service_id = ? AND resolved_at IS NULL", serviceID).Order("started_at DESC").Limit(1).Find(&inc).Error; err != nil {
			return models.DBErr(err)
		}
		if inc.ID == "" {
			return nil
		}
		when := at.UTC()
		if err := tx.Model(&ServiceIncident{}).Where("service_id = ? AND resolved_at IS NULL", serviceID).Update("resolved_at", when).Error; err != nil {
			return models.DBErr(err)
		}
		inc.ResolvedAt = &when
		var svc services.Service
		if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
			return models.NotFoundOr(err, "service")
		}
		if svc.Status == services.ServiceDown || svc.Status == services.ServiceDegraded {
			moved, err := s.services.MoveServiceTx(ctx, scope, tx, serviceID, services.ServiceOperational, "incident resolved", "")
			if err != nil {
				return err
			}
			data := map[string]any{"service": services.ServiceSummary(moved), "incident": map[string]any{"id": inc.ID, "kind": inc.Kind, "cause": inc.Cause,
				"started_at": models.Timestamp(inc.StartedAt), "resolved_at": models.Timestamp(when)}, "duration_seconds": int64(when.Sub(inc.StartedAt) / time.Second)}
			if err := eventlog.RecordEvent(tx, eventlog.NewEvent(services.EventServiceRestored, serviceID, data)); err != nil {
				return err
			}
		}
		out = &inc
		return nil
	})
	return out, services.ErrOrNil(err)
}
