package eventlog

import (
	"context"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// NewEventDelivery returns the first-generation delivery of ev to sub (a
// webhook subscription, or a chat integration's subscription view when
// kind is DeliveryToChat), not yet written: InsertEventDeliveries writes it.
func NewEventDelivery(ev *Event, sub *WebhookSubscription, kind DeliveryKind) *WebhookDelivery {
	d := newDelivery(ev, sub, 1, DeliveryForEvent)
	d.Kind = kind
	return d
}

// InsertEventDeliveries writes rows (NewEventDelivery) in one transaction,
// a few hundred per statement, keeping any row that already exists for the
// same event, subscription and generation (its id wins: a repeated or
// concurrent dispatch finds the same row). Callers pass the rows of
// several events in the same order every time (events oldest first, each
// event's targets in a fixed order), so that two dispatchers writing
// overlapping batches on PostgreSQL take the unique index's locks in the
// same order. EventDeliveries returns the rows as stored.
func (s *Store) InsertEventDeliveries(ctx context.Context, rows []*WebhookDelivery) error {
	if len(rows) == 0 {
		return nil
	}
	return models.DBErr(s.Tx(ctx, models.SystemScope(), func(tx *gorm.DB) error {
		return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, deliveryBatch).Error
	}))
}

// EventDeliveries returns the first-generation deliveries (reason event)
// of the events eventIDs, every tenant, ordered by event then creation.
func (s *Store) EventDeliveries(ctx context.Context, eventIDs []string) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	for chunk := range slices.Chunk(eventIDs, deliveryBatch) {
		var part []WebhookDelivery
		err := s.In(ctx, models.SystemScope()).Where("event_id IN ? AND generation = ? AND reason = ?", chunk, 1, DeliveryForEvent).
			Order("created_at, id").Find(&part).Error
		if err != nil {
			return nil, models.DBErr(err)
		}
		out = append(out, part...)
	}
	return out, nil
}

// MarkDeliveriesStarted records that the workflows of the deliveries ids
// exist (MarkDeliveryStarted for many, a few hundred per statement).
func (s *Store) MarkDeliveriesStarted(ctx context.Context, ids []string) error {
	now := s.Now()
	for chunk := range slices.Chunk(ids, deliveryBatch) {
		err := s.In(ctx, models.SystemScope()).Model(&WebhookDelivery{}).Where("id IN ? AND workflow_started_at IS NULL", chunk).
			Update("workflow_started_at", now).Error
		if err != nil {
			return models.DBErr(err)
		}
	}
	return nil
}

// MarkEventsDispatched records that every delivery of the events ids was
// handed to the workflow engine (MarkEventDispatched for many).
func (s *Store) MarkEventsDispatched(ctx context.Context, ids []string) error {
	now := s.Now()
	for chunk := range slices.Chunk(ids, deliveryBatch) {
		err := s.In(ctx, models.SystemScope()).Model(&Event{}).Where("id IN ? AND dispatched_at IS NULL", chunk).Update("dispatched_at", now).Error
		if err != nil {
			return models.DBErr(err)
		}
	}
	return nil
}

// SubscriptionsForEvents returns, for each organization and environment of
// evs, the active subscriptions that tenancy lets receive its events and
// that existed when the newest of them happened (CandidateSubscriptions
// for a batch of events: the caller keeps, per event, those created at or
// before it), keyed by CandidateKey.
func (s *Store) SubscriptionsForEvents(ctx context.Context, evs []Event) (map[CandidateKey][]WebhookSubscription, error) {
	newest := map[CandidateKey]time.Time{}
	for i := range evs {
		k := CandidateKey{OrganizationID: evs[i].OrganizationID, Environment: evs[i].Environment}
		if t, ok := newest[k]; !ok || evs[i].CreatedAt.After(t) {
			newest[k] = evs[i].CreatedAt
		}
	}
	out := make(map[CandidateKey][]WebhookSubscription, len(newest))
	for k, t := range newest {
		subs, err := s.CandidateSubscriptions(ctx, &Event{Tenant: models.Tenant{OrganizationID: k.OrganizationID, Environment: k.Environment}, CreatedAt: t})
		if err != nil {
			return nil, err
		}
		out[k] = subs
	}
	return out, nil
}

// CandidateKey is the organization and environment of an event.
type CandidateKey struct {
	OrganizationID string
	Environment    models.Environment
}
