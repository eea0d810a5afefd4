package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Event names written by this package (DECISIONS 9 lists every canonical name).
const (
	EventServiceProvisioned = "service.provisioned"
)

// Event is an outbox row: something that happened to a tenant's resource,
// written in the same transaction as the state change it reports, and
// delivered later (dispatched_at is set once delivery has been scheduled).
type Event struct {
	ID string `gorm:"primaryKey;size:40"`
	Tenant
	Type         string         `gorm:"size:60;not null;index"`
	ResourceID   string         `gorm:"size:64;not null;index"`
	Data         map[string]any `gorm:"serializer:json;type:text"`
	CreatedAt    time.Time      `gorm:"not null;index"`
	DispatchedAt *time.Time     `gorm:"index"`
}

// NewEvent returns an event (evt_) of type typ about resourceID with data.
func NewEvent(typ, resourceID string, data map[string]any) *Event {
	return &Event{ID: NewID(PrefixEvent), Type: typ, ResourceID: resourceID, Data: data}
}

// RecordEvent writes ev inside tx, the transaction of the state change it
// reports (tx carries the tenant scope, which stamps the event).
func RecordEvent(tx *gorm.DB, ev *Event) error {
	return dbErr(tx.Create(ev).Error)
}

// EventsFor returns the events about resourceID in scope, oldest first.
func (s *Store) EventsFor(ctx context.Context, scope Scope, resourceID string) ([]Event, error) {
	var out []Event
	err := s.In(ctx, scope).Where("resource_id = ?", resourceID).Order("created_at, id").Find(&out).Error
	return out, dbErr(err)
}

// ProvisionedData is the data of a service.provisioned event.
func ProvisionedData(svc *Service, opID string) map[string]any {
	return map[string]any{
		"service": map[string]any{
			"id": svc.ID, "status": string(svc.Status), "type": svc.Kind, "service_type": svc.ServiceType,
			"account_id": svc.AccountID, "bandwidth": svc.Bandwidth, "sla": svc.SLA, "location_id": svc.LocationID,
		},
		"request_id": opID,
	}
}
