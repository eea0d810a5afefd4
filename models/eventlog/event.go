package eventlog

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
)

// Event names written by this package (DECISIONS 9 lists every canonical name).
const (
	EventServiceProvisioned = "service.provisioned"
	// EventWebhookTest is the ping of POST /v1/webhooks/{id}/test, delivered
	// to that one subscription only.
	EventWebhookTest = "webhook.test"
)

// Event is an outbox row: something that happened to a tenant's resource,
// written in the same transaction as the state change it reports, and
// delivered later (dispatched_at is set once delivery has been scheduled).
type Event struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	Type         string         `gorm:"size:60;not null;index"`
	ResourceID   string         `gorm:"size:64;not null;index"`
	Data         map[string]any `gorm:"serializer:jsonnumber;type:text"` // numbers read as json.Number: sent on as stored
	CreatedAt    time.Time      `gorm:"not null;index"`
	DispatchedAt *time.Time     `gorm:"index"`
}

// NewEvent returns an event (evt_) of type typ about resourceID with data.
func NewEvent(typ, resourceID string, data map[string]any) *Event {
	return &Event{ID: models.NewID(models.PrefixEvent), Type: typ, ResourceID: resourceID, Data: data}
}

// RecordEvent writes ev inside tx, the transaction of the state change it
// reports (tx carries the tenant scope, which stamps the event).
func RecordEvent(tx *gorm.DB, ev *Event) error {
	return models.DBErr(tx.Create(ev).Error)
}

// EventsFor returns the events about resourceID in scope, oldest first.
func (s *Store) EventsFor(ctx context.Context, scope models.Scope, resourceID string) ([]Event, error) {
	var out []Event
	err := s.In(ctx, scope).Where("resource_id = ?", resourceID).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// EventFilter narrows a list of events. Types and Groups select by name
// (canonical names, and groups such as "service" for service.*; an event
// matching either is kept); Readable, when not nil, is every group the
// caller may read.
type EventFilter struct {
	Types         []string
	Groups        []string
	Readable      []string
	ResourceID    string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// Expr is a filter expression over EventFilterSchema's fields
	// (docs/filtering.md), applied by ListEvents; empty: no such filter.
	Expr string
}

var eventSorts = models.SortFields{"created_at": "created_at", "type": "type"}

// groupsClause returns "(type LIKE ? OR ...)" and its arguments.
func groupsClause(groups []string) (string, []any) {
	parts := make([]string, len(groups))
	args := make([]any, len(groups))
	for i, g := range groups {
		parts[i], args[i] = "type LIKE ?", g+".%"
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// eventsQuery returns the events visible to p that f selects.
func (s *Store) eventsQuery(ctx context.Context, p *models.Principal, f EventFilter) *gorm.DB {
	q := s.In(ctx, p.Scope()).Model(&Event{})
	if f.Readable != nil {
		if len(f.Readable) == 0 {
			return q.Where("1 = 0")
		}
		sql, args := groupsClause(f.Readable)
		q = q.Where(sql, args...)
	}
	switch {
	case len(f.Types) > 0 && len(f.Groups) > 0:
		sql, args := groupsClause(f.Groups)
		q = q.Where("(type IN ? OR "+sql+")", append([]any{f.Types}, args...)...)
	case len(f.Types) > 0:
		q = q.Where("type IN ?", f.Types)
	case len(f.Groups) > 0:
		sql, args := groupsClause(f.Groups)
		q = q.Where(sql, args...)
	}
	if f.ResourceID != "" {
		q = q.Where("resource_id = ?", f.ResourceID)
	}
	if f.CreatedAfter != nil {
		q = q.Where("created_at >= ?", f.CreatedAfter.UTC())
	}
	if f.CreatedBefore != nil {
		q = q.Where("created_at < ?", f.CreatedBefore.UTC())
	}
	return q
}

// ListEvents returns a page of the events visible to p that f selects,
// newest first by default. Errors: VALIDATION_ERROR (sort, filter).
func (s *Store) ListEvents(ctx context.Context, p *models.Principal, f EventFilter, page models.PageRequest) ([]Event, int64, error) {
	q := s.eventsQuery(ctx, p, f)
	if strings.TrimSpace(f.Expr) != "" {
		expr, err := filter.Compile(EventFilterSchema(), f.Expr)
		if err != nil {
			return nil, 0, err
		}
		q = q.Where(expr.SQL, expr.Args...)
	}
	var out []Event
	total, err := models.Paginate(q, page, eventSorts, &out)
	return out, total, err
}

// GetEvent returns one event visible to p whose group is readable (see
// EventFilter.Readable). Errors: NOT_FOUND.
func (s *Store) GetEvent(ctx context.Context, p *models.Principal, id string, readable []string) (*Event, error) {
	var ev Event
	err := s.eventsQuery(ctx, p, EventFilter{Readable: readable}).Where("id = ?", id).Take(&ev).Error
	return &ev, models.NotFoundOr(err, "event")
}

// EventByID returns any tenant's event (delivery activities).
// Errors: NOT_FOUND.
func (s *Store) EventByID(ctx context.Context, id string) (*Event, error) {
	var ev Event
	err := s.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&ev).Error
	return &ev, models.NotFoundOr(err, "event")
}
