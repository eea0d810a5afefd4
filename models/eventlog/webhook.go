package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
)

// PrefixDelivery starts the id of a webhook delivery (whd_), which is also
// the id of the Temporal workflow that delivers it.
const PrefixDelivery = "whd"

// Webhook areas: the endpoint a subscription was created through, which
// bounds the events it may subscribe to (docs/webhooks.md).
const (
	WebhookAreaAll      = "all"
	WebhookAreaServices = "services"
	WebhookAreaBilling  = "billing"
	WebhookAreaSupport  = "support"
)

// Ticket priorities that a support subscription may filter on.
var webhookPriorities = []string{"low", "medium", "high", "critical"}

// WebhookPriorities returns the priorities a subscription may filter on.
func WebhookPriorities() []string { return slices.Clone(webhookPriorities) }

// Bounds of a subscription's fields.
const (
	MaxWebhookEvents      = 50
	MaxWebhookCustomerIDs = 100
	MaxWebhookDescription = 500
	// MaxWebhooksPerTenant caps the subscriptions of one organization and
	// environment (every area together).
	MaxWebhooksPerTenant = 50
)

// WebhookSubscription is a subscriber URL and the events it receives (wh_).
// Its secrets are sealed with the store's Sealer; the previous secret keeps
// signing for a while after a rotation (SecretRotatedAt).
type WebhookSubscription struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	Area             string     `gorm:"size:20;not null"`
	URL              string     `gorm:"size:2000;not null"`
	Description      string     `gorm:"size:500"`
	Events           []string   `gorm:"serializer:json;type:text;not null"`
	CustomerIDs      []string   `gorm:"serializer:json;type:text"`
	Priorities       []string   `gorm:"serializer:json;type:text"`
	Active           bool       `gorm:"not null;index"`
	AllOrganizations bool       `gorm:"not null"`
	Secret           string     `gorm:"size:400;not null"` // sealed
	PreviousSecret   string     `gorm:"size:400"`          // sealed; "" before the first rotation
	SecretRotatedAt  *time.Time //
	CreatedBy        string     `gorm:"size:40"`
	CreatedAt        time.Time  `gorm:"not null;index"`
	UpdatedAt        time.Time
}

// WebhookSpec is a validated subscription to create (events.Subscriptions
// checks the URL, the event patterns and the secret before the store sees them).
type WebhookSpec struct {
	Area             string
	URL              string
	Description      string
	Events           []string
	CustomerIDs      []string
	Priorities       []string
	Active           bool
	AllOrganizations bool
	Secret           string // plaintext whsec_...; sealed when stored
}

// WebhookPatch is a validated change to a subscription; nil fields stay as they are.
type WebhookPatch struct {
	URL         *string
	Description *string
	Events      []string
	Filters     *WebhookFilters
	Active      *bool
}

// WebhookFilters are a subscription's support filters (empty: no filter).
type WebhookFilters struct {
	CustomerIDs []string
	Priorities  []string
}

// DeliveryStatus is the state of one delivery.
type DeliveryStatus string

// Delivery states: pending (being attempted or waiting for a retry), then
// succeeded, failed (every attempt failed) or cancelled (the subscription
// was paused or deleted).
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
	DeliveryCancelled DeliveryStatus = "cancelled"
)

// Terminal reports whether no further attempt will be made.
func (s DeliveryStatus) Terminal() bool { return s != DeliveryPending }

// DeliveryReason says why a delivery exists.
type DeliveryReason string

// Delivery reasons: the dispatcher matched the event (generation 1), a
// redelivery was asked for (generation 2 and up), or a test ping.
const (
	DeliveryForEvent   DeliveryReason = "event"
	DeliveryRedelivery DeliveryReason = "redelivery"
	DeliveryTest       DeliveryReason = "test"
)

// DeliveryKind says what a delivery is sent to.
type DeliveryKind string

// Delivery kinds: a signed event to a webhook subscription, or a rendered
// message to a support chat integration (whose id is then SubscriptionID).
const (
	DeliveryToWebhook DeliveryKind = "webhook"
	DeliveryToChat    DeliveryKind = "chat"
)

// WebhookDelivery is one event sent to one subscription (whd_), with its
// retries. (EventID, SubscriptionID, Generation) is unique: the dispatcher
// writes generation 1 once, whatever happens to it; each redelivery takes
// the next generation. The row belongs to the subscription's tenant.
type WebhookDelivery struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	EventID           string         `gorm:"size:40;not null;uniqueIndex:idx_webhook_delivery_pair,priority:1"`
	SubscriptionID    string         `gorm:"size:40;not null;uniqueIndex:idx_webhook_delivery_pair,priority:2;index:idx_webhook_delivery_order,priority:1"`
	Generation        int            `gorm:"not null;uniqueIndex:idx_webhook_delivery_pair,priority:3"`
	Kind              DeliveryKind   `gorm:"size:12;not null;default:webhook"`
	Reason            DeliveryReason `gorm:"size:12;not null"`
	EventType         string         `gorm:"size:60;not null"`
	ResourceID        string         `gorm:"size:64;not null;index:idx_webhook_delivery_order,priority:2"`
	EventCreatedAt    time.Time      `gorm:"not null"`
	Status            DeliveryStatus `gorm:"size:12;not null;index"`
	StatusReason      string         `gorm:"size:200"`
	Attempts          int            `gorm:"not null"`
	LastStatusCode    int            `gorm:"not null"`
	LastError         string         `gorm:"size:500"`
	NextAttemptAt     *time.Time
	WorkflowStartedAt *time.Time
	CompletedAt       *time.Time
	CreatedAt         time.Time `gorm:"not null;index"`
	UpdatedAt         time.Time
}

// WebhookAttempt is one HTTP attempt of a delivery, numbered from 1.
type WebhookAttempt struct {
	DeliveryID string `gorm:"primaryKey;size:40;autoIncrement:false"`
	Number     int    `gorm:"primaryKey;autoIncrement:false"`
	models.Tenant
	AttemptedAt  time.Time `gorm:"not null"`
	StatusCode   int       `gorm:"not null"` // 0: no response
	LatencyMs    int64     `gorm:"not null"`
	Success      bool      `gorm:"not null"`
	Error        string    `gorm:"size:500"`
	ResponseBody string    `gorm:"type:text"` // at most the first 1 KiB
}

// SubscriptionMayReceive reports whether tenancy lets sub receive ev: the
// same environment, and the same organization unless sub is a provider
// staff subscription across organizations.
func SubscriptionMayReceive(sub *WebhookSubscription, ev *Event) bool {
	if sub.Environment != ev.Environment {
		return false
	}
	return sub.AllOrganizations || sub.OrganizationID == ev.OrganizationID
}

// CheckWebhookFilters validates support filters (customer_ids,
// priorities) into v, as subscriptions and chat integrations take them.
func CheckWebhookFilters(v *models.Validator, f WebhookFilters) { checkFilters(v, f) }

// checkFilters validates support filters into v.
func checkFilters(v *models.Validator, f WebhookFilters) {
	v.Check(len(f.CustomerIDs) <= MaxWebhookCustomerIDs, "filters.customer_ids", "must have at most 100 entries")
	for _, id := range f.CustomerIDs {
		if id == "" || len(id) > 64 {
			v.Add("filters.customer_ids", "entries must be 1 to 64 characters")
			break
		}
	}
	for _, p := range f.Priorities {
		if !slices.Contains(webhookPriorities, p) {
			v.Add("filters.priorities", "entries must be low, medium, high or critical")
			break
		}
	}
}

// CheckFilterCustomers refuses support filters naming a customer_id that
// p may not see (another tenant's, or none; staff see every customer that
// exists): 400 VALIDATION_ERROR on filters.customer_ids[i], as a body's
// reference to anything unseen is. Webhook subscriptions and chat
// integrations share it.
func (s *Store) CheckFilterCustomers(ctx context.Context, p *models.Principal, customerIDs []string) error {
	if len(customerIDs) == 0 {
		return nil
	}
	q := s.In(ctx, models.SystemScope()).Model(&models.Organization{}).Where("customer_id IN ?", customerIDs)
	if !p.IsStaff() {
		q = q.Where("id = ?", p.OrganizationID)
	}
	var seen []string
	if err := q.Pluck("customer_id", &seen).Error; err != nil {
		return models.DBErr(err)
	}
	var v models.Validator
	for i, id := range customerIDs {
		v.Check(slices.Contains(seen, id), fmt.Sprintf("filters.customer_ids[%d]", i), fmt.Sprintf("no customer %s that this credential may see", id))
	}
	return v.Err()
}

// CreateWebhook stores a subscription for p's own organization and
// environment, sealing its secret. Only provider staff may subscribe across
// organizations. An organization holds at most MaxWebhooksPerTenant
// subscriptions per environment: creations are serialised on the
// organization's row, so concurrent ones cannot pass the cap together.
// Errors: VALIDATION_ERROR (filters, description), INSUFFICIENT_PERMISSIONS
// (all_organizations by a customer), RESOURCE_LIMIT_EXCEEDED, INTERNAL_ERROR.
func (s *Store) CreateWebhook(ctx context.Context, p *models.Principal, spec WebhookSpec) (*WebhookSubscription, error) {
	var v models.Validator
	checkFilters(&v, WebhookFilters{CustomerIDs: spec.CustomerIDs, Priorities: spec.Priorities})
	v.Check(len(spec.Description) <= MaxWebhookDescription, "description", "must be at most 500 characters")
	if err := v.Err(); err != nil {
		return nil, err
	}
	if spec.AllOrganizations && !p.IsStaff() {
		return nil, models.Errorf(models.CodeInsufficientPermissions, "only provider staff may subscribe to every organization's events")
	}
	if s.Sealer == nil {
		return nil, models.Internal(errors.New("the store has no sealer for secrets"))
	}
	subID := models.NewID(models.PrefixWebhook)
	sub := &WebhookSubscription{
		ID: subID, Area: spec.Area, URL: spec.URL, Description: spec.Description, Events: spec.Events,
		CustomerIDs: spec.CustomerIDs, Priorities: spec.Priorities, Active: spec.Active, AllOrganizations: spec.AllOrganizations,
		Secret: s.Sealer.Seal(models.BindWebhook(subID), spec.Secret), CreatedBy: p.ID,
	}
	err := s.Tx(ctx, p.OwnScope(), func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", p.OrganizationID).Take(&models.Organization{}).Error; err != nil {
			return models.NotFoundOr(err, "organization")
		}
		var n int64
		if err := tx.Model(&WebhookSubscription{}).Count(&n).Error; err != nil {
			return models.DBErr(err)
		}
		if n >= MaxWebhooksPerTenant {
			return models.Errorf(models.CodeResourceLimit, "this organization already has %d webhook subscriptions in this environment, the most it may hold; delete one first", n).
				WithDetail("resource", "webhook_subscriptions").WithDetail("limit", MaxWebhooksPerTenant)
		}
		return models.DBErr(tx.Create(sub).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return sub, nil
}

// GetWebhook returns a subscription visible to p. Errors: NOT_FOUND.
func (s *Store) GetWebhook(ctx context.Context, p *models.Principal, id string) (*WebhookSubscription, error) {
	return s.WebhookIn(ctx, p.Scope(), id)
}

// WebhookIn returns a subscription in scope. Errors: NOT_FOUND.
func (s *Store) WebhookIn(ctx context.Context, scope models.Scope, id string) (*WebhookSubscription, error) {
	var sub WebhookSubscription
	err := s.In(ctx, scope).Where("id = ?", id).Take(&sub).Error
	return &sub, models.NotFoundOr(err, "webhook")
}

// WebhookListFilter narrows a list of subscriptions.
type WebhookListFilter struct {
	Area   string
	Active *bool
}

var webhookSorts = models.SortFields{"created_at": "created_at", "url": "url"}

// ListWebhooks returns a page of the subscriptions visible to p.
// Errors: VALIDATION_ERROR (sort).
func (s *Store) ListWebhooks(ctx context.Context, p *models.Principal, f WebhookListFilter, page models.PageRequest) ([]WebhookSubscription, int64, error) {
	q := s.In(ctx, p.Scope()).Model(&WebhookSubscription{})
	if f.Area != "" {
		q = q.Where("area = ?", f.Area)
	}
	if f.Active != nil {
		q = q.Where("active = ?", *f.Active)
	}
	var subs []WebhookSubscription
	total, err := models.Paginate(q, page, webhookSorts, &subs)
	return subs, total, err
}

// UpdateWebhook applies a validated patch. Pausing (active false) cancels
// the subscription's pending deliveries in the same transaction.
// Errors: NOT_FOUND, VALIDATION_ERROR (filters, description).
func (s *Store) UpdateWebhook(ctx context.Context, p *models.Principal, id string, patch WebhookPatch) (*WebhookSubscription, error) {
	var v models.Validator
	if patch.Filters != nil {
		checkFilters(&v, *patch.Filters)
	}
	if patch.Description != nil {
		v.Check(len(*patch.Description) <= MaxWebhookDescription, "description", "must be at most 500 characters")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var sub WebhookSubscription
		if err := tx.Where("id = ?", id).Take(&sub).Error; err != nil {
			return models.NotFoundOr(err, "webhook")
		}
		updates := map[string]any{"updated_at": s.Now()}
		if patch.URL != nil {
			updates["url"] = *patch.URL
		}
		if patch.Description != nil {
			updates["description"] = *patch.Description
		}
		if patch.Events != nil {
			updates["events"] = jsonValue(patch.Events)
		}
		if patch.Filters != nil {
			updates["customer_ids"], updates["priorities"] = jsonValue(patch.Filters.CustomerIDs), jsonValue(patch.Filters.Priorities)
		}
		if patch.Active != nil {
			updates["active"], sub.Active = *patch.Active, *patch.Active
		}
		if err := tx.Model(&WebhookSubscription{}).Where("id = ?", id).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		if !sub.Active {
			return s.cancelPending(tx, id, "the subscription was paused")
		}
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.GetWebhook(ctx, p, id)
}

// jsonValue returns the column value of a JSON-serialised string list (a
// map update bypasses the field's serializer).
func jsonValue(list []string) string {
	if list == nil {
		list = []string{}
	}
	raw, _ := json.Marshal(list) // a []string always encodes
	return string(raw)
}

// cancelPending cancels the pending deliveries of a subscription.
func (s *Store) cancelPending(tx *gorm.DB, subID, reason string) error {
	now := s.Now()
	err := tx.Model(&WebhookDelivery{}).Where("subscription_id = ? AND status = ?", subID, DeliveryPending).
		Updates(map[string]any{"status": DeliveryCancelled, "status_reason": reason, "next_attempt_at": nil, "completed_at": now, "updated_at": now}).Error
	return models.DBErr(err)
}

// DeleteWebhook removes a subscription and cancels its pending deliveries;
// its delivery history is kept. Errors: NOT_FOUND.
func (s *Store) DeleteWebhook(ctx context.Context, p *models.Principal, id string) error {
	return webhookErr(s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(&WebhookSubscription{})
		if res.Error != nil {
			return models.DBErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return models.NotFound("webhook")
		}
		return s.cancelPending(tx, id, "the subscription was deleted")
	}))
}

// RotateWebhookSecret makes secret (plaintext, already validated) the
// subscription's signing secret; the secret it replaces keeps signing
// until the overlap after SecretRotatedAt ends (a secret older than that
// is dropped at once). Errors: NOT_FOUND, INTERNAL_ERROR.
func (s *Store) RotateWebhookSecret(ctx context.Context, p *models.Principal, id, secret string) (*WebhookSubscription, error) {
	if s.Sealer == nil {
		return nil, models.Internal(errors.New("the store has no sealer for secrets"))
	}
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		var sub WebhookSubscription
		if err := tx.Where("id = ?", id).Take(&sub).Error; err != nil {
			return models.NotFoundOr(err, "webhook")
		}
		now := s.Now()
		return models.DBErr(tx.Model(&WebhookSubscription{}).Where("id = ?", id).Updates(map[string]any{
			"secret": s.Sealer.Seal(models.BindWebhook(sub.ID), secret), "previous_secret": sub.Secret, "secret_rotated_at": now, "updated_at": now,
		}).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.GetWebhook(ctx, p, id)
}

// WebhookSecrets returns a subscription's current secret and the previous
// one ("" before any rotation), opened. Errors: INTERNAL_ERROR.
func (s *Store) WebhookSecrets(sub *WebhookSubscription) (current, previous string, err error) {
	if s.Sealer == nil {
		return "", "", models.Internal(errors.New("the store has no sealer for secrets"))
	}
	if current, err = s.Sealer.Open(models.BindWebhook(sub.ID), sub.Secret); err != nil {
		return "", "", models.Internal(err)
	}
	if sub.PreviousSecret != "" {
		if previous, err = s.Sealer.Open(models.BindWebhook(sub.ID), sub.PreviousSecret); err != nil {
			return "", "", models.Internal(err)
		}
	}
	return current, previous, nil
}

// CandidateSubscriptions returns the active subscriptions that tenancy lets
// receive ev and that existed when it happened: those of ev's organization
// and environment, and provider staff subscriptions across the
// organizations of ev's environment, oldest first. The caller matches
// their event patterns and filters.
func (s *Store) CandidateSubscriptions(ctx context.Context, ev *Event) ([]WebhookSubscription, error) {
	var subs []WebhookSubscription
	err := s.In(ctx, models.SystemScope()).Where("environment = ? AND active = ? AND created_at <= ?", ev.Environment, true, ev.CreatedAt).
		Where("organization_id = ? OR all_organizations = ?", ev.OrganizationID, true).
		Order("created_at, id").Find(&subs).Error
	return subs, models.DBErr(err)
}

// newDelivery returns a pending delivery of ev to sub.
func newDelivery(ev *Event, sub *WebhookSubscription, gen int, reason DeliveryReason) *WebhookDelivery {
	return &WebhookDelivery{
		ID: models.NewID(PrefixDelivery), Tenant: sub.Tenant, EventID: ev.ID, SubscriptionID: sub.ID, Generation: gen, Reason: reason, Kind: DeliveryToWebhook,
		EventType: ev.Type, ResourceID: ev.ResourceID, EventCreatedAt: ev.CreatedAt, Status: DeliveryPending,
	}
}

// EnsureDeliveries writes the first-generation delivery of ev to each of
// subs, keeping any that already exists (the unique key makes a repeated
// dispatch harmless), and returns every first-generation delivery of ev.
func (s *Store) EnsureDeliveries(ctx context.Context, ev *Event, subs []WebhookSubscription) ([]WebhookDelivery, error) {
	db := s.In(ctx, models.SystemScope())
	for i := range subs {
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(newDelivery(ev, &subs[i], 1, DeliveryForEvent)).Error; err != nil {
			return nil, models.DBErr(err)
		}
	}
	var out []WebhookDelivery
	err := db.Where("event_id = ? AND generation = ? AND reason = ?", ev.ID, 1, DeliveryForEvent).Order("created_at, id").Find(&out).Error
	return out, models.DBErr(err)
}

// EnsureChatDeliveries writes the first-generation delivery (kind chat) of
// ev to each of the chat integrations chats (as their subscription view:
// id and tenant), keeping any that already exists; EnsureDeliveries,
// called after it, returns them with the others.
func (s *Store) EnsureChatDeliveries(ctx context.Context, ev *Event, chats []WebhookSubscription) error {
	db := s.In(ctx, models.SystemScope())
	for i := range chats {
		d := newDelivery(ev, &chats[i], 1, DeliveryForEvent)
		d.Kind = DeliveryToChat
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(d).Error; err != nil {
			return models.DBErr(err)
		}
	}
	return nil
}

// CreateChatTestDelivery writes, in one transaction, a webhook.test event
// about chat integration chat (its subscription view) and its delivery of
// kind chat, for a test message the caller sends at once and records with
// RecordDeliveryAttempt (and FinishDelivery when it failed).
// Errors: INTERNAL_ERROR.
func (s *Store) CreateChatTestDelivery(ctx context.Context, chat *WebhookSubscription, data map[string]any) (*WebhookDelivery, *Event, error) {
	ev := NewEvent(EventWebhookTest, chat.ID, data)
	ev.Tenant = chat.Tenant
	now := s.Now()
	ev.CreatedAt, ev.DispatchedAt = now, &now
	d := newDelivery(ev, chat, 1, DeliveryTest)
	// Sent by the caller itself, never by a workflow: marked started so
	// that the dispatcher's sweep of unstarted deliveries leaves it alone.
	d.Kind, d.WorkflowStartedAt = DeliveryToChat, &now
	err := s.Tx(ctx, models.TenantScope(chat.OrganizationID, chat.Environment), func(tx *gorm.DB) error {
		if err := RecordEvent(tx, ev); err != nil {
			return err
		}
		return models.DBErr(tx.Create(d).Error)
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return d, ev, nil
}

// UndispatchedEvents returns up to limit events not yet handed to
// delivery, oldest first (every tenant).
func (s *Store) UndispatchedEvents(ctx context.Context, limit int) ([]Event, error) {
	var out []Event
	err := s.In(ctx, models.SystemScope()).Where("dispatched_at IS NULL").Order("created_at, id").Limit(limit).Find(&out).Error
	return out, models.DBErr(err)
}

// OldestUndispatched returns the creation time of the oldest event not yet
// handed to delivery (every tenant); ok is false when there is none. The
// outbox lag metric reads it at scrape time. Errors: INTERNAL_ERROR.
func (s *Store) OldestUndispatched(ctx context.Context) (time.Time, bool, error) {
	var ev []Event
	err := s.In(ctx, models.SystemScope()).Select("created_at").Where("dispatched_at IS NULL").Order("created_at").Limit(1).Find(&ev).Error
	if err != nil || len(ev) == 0 {
		return time.Time{}, false, models.DBErr(err)
	}
	return ev[0].CreatedAt, true, nil
}

// MarkEventDispatched records that every delivery of event id was handed to
// the workflow engine.
func (s *Store) MarkEventDispatched(ctx context.Context, id string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&Event{}).Where("id = ? AND dispatched_at IS NULL", id).Update("dispatched_at", s.Now()).Error)
}

// UnstartedDeliveries returns up to limit pending deliveries created before
// `before` whose workflow has not been started (every tenant), oldest first.
func (s *Store) UnstartedDeliveries(ctx context.Context, before time.Time, limit int) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	err := s.In(ctx, models.SystemScope()).Where("workflow_started_at IS NULL AND status = ? AND created_at < ?", DeliveryPending, before).
		Order("created_at, id").Limit(limit).Find(&out).Error
	return out, models.DBErr(err)
}

// MarkDeliveryStarted records that the delivery's workflow exists.
func (s *Store) MarkDeliveryStarted(ctx context.Context, id string) error {
	return models.DBErr(s.In(ctx, models.SystemScope()).Model(&WebhookDelivery{}).Where("id = ? AND workflow_started_at IS NULL", id).
		Update("workflow_started_at", s.Now()).Error)
}

// DeliveryIn returns one delivery in scope. Errors: NOT_FOUND.
func (s *Store) DeliveryIn(ctx context.Context, scope models.Scope, id string) (*WebhookDelivery, error) {
	var d WebhookDelivery
	err := s.In(ctx, scope).Where("id = ?", id).Take(&d).Error
	return &d, models.NotFoundOr(err, "delivery")
}

// DeliveryReady reports whether d may make its first attempt: an event
// delivery waits while an earlier event of the same resource, for the same
// subscription, has not made its first attempt yet. Redeliveries, tests and
// deliveries that already attempted are always ready.
func (s *Store) DeliveryReady(ctx context.Context, scope models.Scope, d *WebhookDelivery) (bool, error) {
	if d.Reason != DeliveryForEvent || d.Attempts > 0 {
		return true, nil
	}
	var n int64
	err := s.In(ctx, scope).Model(&WebhookDelivery{}).
		Where("subscription_id = ? AND resource_id = ? AND reason = ? AND status = ? AND attempts = 0 AND id <> ?",
			d.SubscriptionID, d.ResourceID, DeliveryForEvent, DeliveryPending, d.ID).
		Where("event_created_at < ? OR (event_created_at = ? AND event_id < ?)", d.EventCreatedAt, d.EventCreatedAt, d.EventID).
		Count(&n).Error
	return n == 0, models.DBErr(err)
}

// AttemptOf returns attempt number n of a delivery, or nil when it was not made.
func (s *Store) AttemptOf(ctx context.Context, scope models.Scope, deliveryID string, n int) (*WebhookAttempt, error) {
	var out []WebhookAttempt
	if err := s.In(ctx, scope).Where("delivery_id = ? AND number = ?", deliveryID, n).Limit(1).Find(&out).Error; err != nil {
		return nil, models.DBErr(err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return &out[0], nil
}

// RecordDeliveryAttempt stores attempt a (once per number: a repeated call
// keeps the first) and, in the same transaction, updates its delivery:
// attempt count, last outcome, next attempt time, and succeeded on success
// while the delivery is still pending. It returns the delivery.
// Errors: NOT_FOUND, INTERNAL_ERROR.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, scope models.Scope, a *WebhookAttempt, next *time.Time) (*WebhookDelivery, error) {
	a.Error = models.Truncate(a.Error, 500)
	var out WebhookDelivery
	err := s.Tx(ctx, scope, func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", a.DeliveryID).Take(&out).Error; err != nil {
			return models.NotFoundOr(err, "delivery")
		}
		a.Tenant = out.Tenant
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(a)
		if res.Error != nil {
			return models.DBErr(res.Error)
		}
		if res.RowsAffected == 0 {
			return nil
		}
		now := s.Now()
		updates := map[string]any{"last_status_code": a.StatusCode, "last_error": a.Error, "next_attempt_at": next, "updated_at": now}
		if a.Number > out.Attempts {
			updates["attempts"] = a.Number
		}
		if err := tx.Model(&WebhookDelivery{}).Where("id = ?", a.DeliveryID).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		if a.Success {
			if err := tx.Model(&WebhookDelivery{}).Where("id = ? AND status = ?", a.DeliveryID, DeliveryPending).
				Updates(map[string]any{"status": DeliverySucceeded, "next_attempt_at": nil, "completed_at": now}).Error; err != nil {
				return models.DBErr(err)
			}
		}
		// A fresh value: scanning into out would keep fields that are now NULL.
		var fresh WebhookDelivery
		if err := tx.Where("id = ?", a.DeliveryID).Take(&fresh).Error; err != nil {
			return models.DBErr(err)
		}
		out = fresh
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return &out, nil
}

// FinishDelivery ends a pending delivery with status (failed or cancelled)
// and a reason; a delivery that already ended is left as it is.
func (s *Store) FinishDelivery(ctx context.Context, scope models.Scope, id string, status DeliveryStatus, reason string) error {
	now := s.Now()
	return models.DBErr(s.In(ctx, scope).Model(&WebhookDelivery{}).Where("id = ? AND status = ?", id, DeliveryPending).
		Updates(map[string]any{"status": status, "status_reason": models.Truncate(reason, 200), "next_attempt_at": nil, "completed_at": now, "updated_at": now}).Error)
}

// DeliveryListFilter narrows a list of deliveries.
type DeliveryListFilter struct {
	Status  DeliveryStatus
	EventID string
}

var deliverySorts = models.SortFields{"created_at": "created_at", "event_created_at": "event_created_at"}

// ListDeliveries returns a page of a subscription's deliveries (newest
// first by default) and their attempts, by delivery id, in order.
// Errors: NOT_FOUND (subscription), VALIDATION_ERROR (sort, status).
func (s *Store) ListDeliveries(ctx context.Context, p *models.Principal, webhookID string, f DeliveryListFilter, page models.PageRequest) ([]WebhookDelivery, map[string][]WebhookAttempt, int64, error) {
	if _, err := s.GetWebhook(ctx, p, webhookID); err != nil {
		return nil, nil, 0, err
	}
	return s.ListDeliveriesTo(ctx, p, webhookID, f, page)
}

// ListDeliveriesTo returns a page of the deliveries visible to p sent to
// targetID (a subscription or a chat integration, which the caller has
// found visible), as ListDeliveries. Errors: VALIDATION_ERROR (sort, status).
func (s *Store) ListDeliveriesTo(ctx context.Context, p *models.Principal, targetID string, f DeliveryListFilter, page models.PageRequest) ([]WebhookDelivery, map[string][]WebhookAttempt, int64, error) {
	q := s.In(ctx, p.Scope()).Model(&WebhookDelivery{}).Where("subscription_id = ?", targetID)
	if f.Status != "" {
		switch f.Status {
		case DeliveryPending, DeliverySucceeded, DeliveryFailed, DeliveryCancelled:
		default:
			return nil, nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be pending, succeeded, failed or cancelled"})
		}
		q = q.Where("status = ?", f.Status)
	}
	if f.EventID != "" {
		q = q.Where("event_id = ?", f.EventID)
	}
	var ds []WebhookDelivery
	total, err := models.Paginate(q, page, deliverySorts, &ds)
	if err != nil {
		return nil, nil, 0, err
	}
	atts, err := s.attemptsOf(ctx, p.Scope(), ds)
	return ds, atts, total, err
}

// attemptsOf loads the attempts of deliveries, by delivery id, in order.
func (s *Store) attemptsOf(ctx context.Context, scope models.Scope, ds []WebhookDelivery) (map[string][]WebhookAttempt, error) {
	out := map[string][]WebhookAttempt{}
	if len(ds) == 0 {
		return out, nil
	}
	ids := make([]string, len(ds))
	for i := range ds {
		ids[i] = ds[i].ID
	}
	var atts []WebhookAttempt
	if err := s.In(ctx, scope).Where("delivery_id IN ?", ids).Order("delivery_id, number").Find(&atts).Error; err != nil {
		return nil, models.DBErr(err)
	}
	for _, a := range atts {
		out[a.DeliveryID] = append(out[a.DeliveryID], a)
	}
	return out, nil
}

// DeliveriesOfEvent returns the deliveries of an event visible to p, oldest
// first, with their attempts.
func (s *Store) DeliveriesOfEvent(ctx context.Context, p *models.Principal, eventID string) ([]WebhookDelivery, map[string][]WebhookAttempt, error) {
	var ds []WebhookDelivery
	if err := s.In(ctx, p.Scope()).Where("event_id = ?", eventID).Order("created_at, id").Find(&ds).Error; err != nil {
		return nil, nil, models.DBErr(err)
	}
	atts, err := s.attemptsOf(ctx, p.Scope(), ds)
	return ds, atts, err
}

// MatchedSubscriptionIDs returns the subscriptions visible to p that the
// dispatcher matched with an event (its first-generation deliveries).
func (s *Store) MatchedSubscriptionIDs(ctx context.Context, p *models.Principal, eventID string) ([]string, error) {
	var ids []string
	err := s.In(ctx, p.Scope()).Model(&WebhookDelivery{}).Where("event_id = ? AND reason = ? AND kind = ?", eventID, DeliveryForEvent, DeliveryToWebhook).
		Order("created_at, id").Pluck("subscription_id", &ids).Error
	return ids, models.DBErr(err)
}

// CreateRedeliveries writes a new delivery of ev to each of subs, each with
// the next generation of its (event, subscription) pair, in one
// transaction. Errors: INTERNAL_ERROR.
func (s *Store) CreateRedeliveries(ctx context.Context, p *models.Principal, ev *Event, subs []WebhookSubscription) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	err := s.Tx(ctx, p.Scope(), func(tx *gorm.DB) error {
		out = out[:0]
		for i := range subs {
			var maxGen int
			if err := tx.Model(&WebhookDelivery{}).Where("event_id = ? AND subscription_id = ?", ev.ID, subs[i].ID).
				Select("COALESCE(MAX(generation), 0)").Scan(&maxGen).Error; err != nil {
				return models.DBErr(err)
			}
			d := newDelivery(ev, &subs[i], max(maxGen, 1)+1, DeliveryRedelivery)
			if err := tx.Create(d).Error; err != nil {
				return models.DBErr(err)
			}
			out = append(out, *d)
		}
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// CreateTestDelivery writes, in one transaction, a webhook.test event for
// sub (already handed to delivery, so the dispatcher leaves it alone) and
// its delivery to sub alone. Errors: INTERNAL_ERROR.
func (s *Store) CreateTestDelivery(ctx context.Context, sub *WebhookSubscription, data map[string]any) (*WebhookDelivery, *Event, error) {
	ev := NewEvent(EventWebhookTest, sub.ID, data)
	ev.Tenant = sub.Tenant
	now := s.Now()
	ev.CreatedAt, ev.DispatchedAt = now, &now
	d := newDelivery(ev, sub, 1, DeliveryTest)
	err := s.Tx(ctx, models.TenantScope(sub.OrganizationID, sub.Environment), func(tx *gorm.DB) error {
		if err := RecordEvent(tx, ev); err != nil {
			return err
		}
		return models.DBErr(tx.Create(d).Error)
	})
	if err != nil {
		return nil, nil, models.AsError(err)
	}
	return d, ev, nil
}

// webhookErr returns nil for nil and err as *Error otherwise.
func webhookErr(err error) error {
	if err == nil {
		return nil
	}
	return models.AsError(err)
}

// deliveryBatch bounds the rows of one INSERT or IN list (SQLite allows
// 32,766 parameters per statement; a delivery row has about 20 columns).
const deliveryBatch = 500
