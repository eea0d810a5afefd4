package eventlog

import (
	"context"
	"database/sql"
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

// Horizon is how far the event log may be read in order (see StreamHorizon).
type Horizon struct {
	// Until is the horizon itself: events created at or before it are
	// settled.
	Until time.Time
	// Oldest is the start of the oldest open transaction that has written
	// (PostgreSQL; zero when there is none, and on SQLite).
	Oldest time.Time
	// Capped reports that Oldest was more than the maximum lag ago: the
	// horizon did not wait for it.
	Capped bool
}

// StreamHorizon returns how far the event log may be read in order without
// a gap: every event created at or before it is committed, or will never
// be. Events are stamped when they are inserted, inside the transaction
// that reports its change, so a transaction still open may commit an
// event older than events already committed by others. On PostgreSQL the
// horizon is settle before the start of the oldest open transaction that
// has written anything (pg_stat_activity's backend_xid), and never later
// than settle before now; settle covers the moment between an event's
// stamp and its transaction's first write, and the clocks' difference
// between the application and the database. SQLite has one writer at a
// time, which commits before the next writes: the horizon is settle before
// now.
//
// maxLag bounds the wait (0: unbounded): a transaction open longer than
// maxLag (a long or idle-in-transaction writer) holds the horizon no
// further back than maxLag before now, and Capped says so; an event such a
// transaction commits later than that may be passed over by the readers
// that went past it. pg_stat_activity shows another session's xact_start
// and backend_xid only to the same role or one with pg_read_all_stats:
// the transactions of sessions it does not show are not waited for.
// Errors: INTERNAL_ERROR.
func (s *Store) StreamHorizon(ctx context.Context, settle, maxLag time.Duration) (Horizon, error) {
	now := s.Now()
	h := Horizon{Until: now.Add(-settle)}
	if s.DB.Dialector.Name() != "postgres" {
		return h, nil
	}
	var oldest sql.NullTime
	err := s.DB.WithContext(ctx).Raw(`SELECT min(xact_start) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL AND xact_start IS NOT NULL`).
		Row().Scan(&oldest)
	if err != nil {
		return Horizon{}, models.DBErr(err)
	}
	if !oldest.Valid {
		return h, nil
	}
	h.Oldest = oldest.Time
	if held := oldest.Time.Add(-settle); held.Before(h.Until) {
		floor := now.Add(-maxLag)
		if maxLag > 0 && held.Before(floor) {
			h.Capped = true
			if floor.Before(h.Until) {
				h.Until = floor
			}
		} else {
			h.Until = held
		}
	}
	return h, nil
}
