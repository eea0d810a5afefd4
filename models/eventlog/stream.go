package eventlog

import (
	"context"
	"time"

	"github.com/telcoplatform/platform/models"
)

// StreamPosition is a place in the event log's order: events are ordered
// by creation time, then by id. Real-time streams resume after a position.
type StreamPosition struct {
	At time.Time
	ID string
}

// Before reports whether p comes before q in the event log's order.
func (p StreamPosition) Before(q StreamPosition) bool {
	if !p.At.Equal(q.At) {
		return p.At.Before(q.At)
	}
	return p.ID < q.ID
}

// PositionOf returns the position of ev.
func PositionOf(ev *Event) StreamPosition { return StreamPosition{At: ev.CreatedAt, ID: ev.ID} }

// EventPosition returns the position of event id, one of scope's events.
// Errors: NOT_FOUND (unknown, another tenant's, or past the retention).
func (s *Store) EventPosition(ctx context.Context, scope models.Scope, id string) (StreamPosition, error) {
	var ev Event
	err := s.In(ctx, scope).Select("id", "created_at").Where("id = ?", id).Take(&ev).Error
	if err != nil {
		return StreamPosition{}, models.NotFoundOr(err, "event")
	}
	return PositionOf(&ev), nil
}

// StreamQuery selects a page of events in the event log's order.
type StreamQuery struct {
	// After is the position the page starts after.
	After StreamPosition
	// Until bounds the page: only events created at or before it.
	Until time.Time
	// Tenants, when not empty, keeps the events of these tenants only
	// (ignored by a tenant's scope, which keeps its own).
	Tenants []models.Tenant
	Limit   int
}

// EventsAfter returns up to q.Limit events of scope (models.SystemScope()
// for every tenant) after q.After and created at or before q.Until, oldest
// first. Errors: INTERNAL_ERROR.
func (s *Store) EventsAfter(ctx context.Context, scope models.Scope, q StreamQuery) ([]Event, error) {
	db := s.In(ctx, scope).
		Where("(created_at > ? OR (created_at = ? AND id > ?))", q.After.At.UTC(), q.After.At.UTC(), q.After.ID).
		Where("created_at <= ?", q.Until.UTC())
	if len(q.Tenants) > 0 && scope.System {
		orgs := make([]string, 0, len(q.Tenants))
		for _, t := range q.Tenants {
			orgs = append(orgs, t.OrganizationID)
		}
		db = db.Where("organization_id IN ?", orgs)
	}
	var out []Event
	err := db.Order("created_at, id").Limit(q.Limit).Find(&out).Error
	return out, models.DBErr(err)
}
