package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
	"github.com/telcoplatform/platform/models/services"
)

// SubscriptionStatus is a subscription's state: pending until its workflow
// has begun, active while it bills, cancelled once it has ended (cancelled,
// not renewed, or its service decommissioned: see EndedReason).
type SubscriptionStatus string

// Subscription states: pending → active → cancelled, or pending → cancelled.
const (
	SubscriptionPending   SubscriptionStatus = "pending"
	SubscriptionActive    SubscriptionStatus = "active"
	SubscriptionCancelled SubscriptionStatus = "cancelled"
)

// Valid reports whether s is a known subscription status.
func (s SubscriptionStatus) Valid() bool {
	return s == SubscriptionPending || s == SubscriptionActive || s == SubscriptionCancelled
}

// Why a subscription ended.
const (
	EndedCancelled      = "cancelled"
	EndedNotRenewed     = "not_renewed"
	EndedDecommissioned = "service_decommissioned"
)

// Billing cycles. A sandbox cycle `sandbox_<n>s` (test keys only) lasts n
// seconds, is priced like a month, and makes every other billing delay
// count seconds instead of days (docs/billing.md).
const (
	CycleMonthly   = "monthly"
	CycleQuarterly = "quarterly"
	CycleAnnual    = "annual"
)

var sandboxCycle = regexp.MustCompile(`^sandbox_([0-9]{1,4})s$`)

// Bounds of sandbox cycles, in seconds.
const (
	minSandboxCycle = 1
	maxSandboxCycle = 3600
)

// sandboxSeconds returns n of a sandbox cycle `sandbox_<n>s`, or 0.
func sandboxSeconds(cycle string) int {
	m := sandboxCycle.FindStringSubmatch(cycle)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// IsSandboxCycle reports whether cycle is a sandbox cycle.
func IsSandboxCycle(cycle string) bool { return sandboxSeconds(cycle) > 0 }

// ValidCycle reports whether cycle may be used in env: monthly, quarterly,
// annual, and in the sandbox also sandbox_<n>s with n from 1 to 3600.
func ValidCycle(cycle string, env models.Environment) bool {
	switch cycle {
	case CycleMonthly, CycleQuarterly, CycleAnnual:
		return true
	}
	n := sandboxSeconds(cycle)
	return env == models.EnvTest && n >= minSandboxCycle && n <= maxSandboxCycle
}

// CycleMonths returns how many months of the monthly price one period of
// cycle costs (a sandbox period costs one month).
func CycleMonths(cycle string) int {
	switch cycle {
	case CycleQuarterly:
		return 3
	case CycleAnnual:
		return 12
	}
	return 1
}

// BillingDay returns the length of a "day" of the billing delays (payment
// terms, dunning) of cycle: a day, or a second for sandbox cycles.
func BillingDay(cycle string) time.Duration {
	if IsSandboxCycle(cycle) {
		return time.Second
	}
	return 24 * time.Hour
}

// DunningDays are the days after a failed auto-payment on which it is
// retried; when the last retry fails the invoice becomes overdue.
var dunningDays = []int{1, 3, 7}

// DunningSchedule returns the delays, counted from the first failed
// attempt, of the auto-payment retries of an invoice of cycle.
func DunningSchedule(cycle string) []time.Duration {
	out := make([]time.Duration, len(dunningDays))
	for i, d := range dunningDays {
		out[i] = time.Duration(d) * BillingDay(cycle)
	}
	return out
}

// PaymentTerm returns how long after issue an invoice of cycle is due: the
// last dunning retry with auto-pay, PaymentTermDays without.
func PaymentTerm(cycle string, autoPay bool) time.Duration {
	if autoPay {
		return time.Duration(dunningDays[len(dunningDays)-1]) * BillingDay(cycle)
	}
	return PaymentTermDays * BillingDay(cycle)
}

// PeriodEnd returns the end of the period of cycle that starts at start.
// Monthly periods end on the anchor day of the next month (the last day
// when the month is shorter: Jan 31 → Feb 28 → Mar 31), at start's time of day.
func PeriodEnd(start time.Time, cycle string, anchorDay int) time.Time {
	if n := sandboxSeconds(cycle); n > 0 {
		return start.Add(time.Duration(n) * time.Second)
	}
	start = start.UTC()
	y, m, _ := start.Date()
	first := time.Date(y, m+time.Month(CycleMonths(cycle)), 1, start.Hour(), start.Minute(), start.Second(), start.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	day := anchorDay
	if day < 1 {
		day = start.Day()
	}
	if day > last {
		day = last
	}
	return first.AddDate(0, 0, day-1)
}

// segmentsJSON encodes segments for a map update (which bypasses the
// column's JSON serializer).
func segmentsJSON(segs []QuantitySegment) string {
	raw, _ := json.Marshal(segs)
	return string(raw)
}

// QuantitySegment says from when a quantity applies in the current period.
type QuantitySegment struct {
	From     time.Time `json:"from"`
	Quantity int       `json:"quantity"`
}

// Subscription is the recurring billing of one service (sub_). Its Temporal
// workflow (id = the subscription id) closes each period at its end: it
// rates the period (recurring charge, metered usage, API overage), issues
// the invoice and collects it. The row is the truth the API reads; the API
// records changes here and signals the workflow only to wake it.
type Subscription struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	AccountID          string             `gorm:"size:40;not null;index"`
	ServiceID          string             `gorm:"size:40;not null;index;uniqueIndex:idx_subscription_open_service,where:status <> 'cancelled'"`
	Status             SubscriptionStatus `gorm:"size:20;not null;index"`
	BillingCycle       string             `gorm:"size:20;not null"`
	PendingCycle       string             `gorm:"size:20"`
	AutoRenew          bool               `gorm:"not null"`
	Quantity           int                `gorm:"not null"`
	UnitPrice          models.Money       `gorm:"not null"` // per unit and month
	Currency           string             `gorm:"size:3;not null"`
	Description        string             `gorm:"size:300;not null"`
	Category           string             `gorm:"size:40;not null"`
	PaymentMethodID    string             `gorm:"size:40"`
	AnchorDay          int                `gorm:"not null"`
	StartDate          time.Time          `gorm:"not null"`
	CurrentPeriodStart time.Time          `gorm:"not null"`
	CurrentPeriodEnd   time.Time          `gorm:"not null"`
	Segments           []QuantitySegment  `gorm:"serializer:json;type:text"`
	CancelAt           *time.Time
	CancelledAt        *time.Time
	EndedReason        string `gorm:"size:40"`
	PeriodsBilled      int    `gorm:"not null;default:0"`
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// CyclePrice returns the price of one full period for one unit.
func (sub *Subscription) CyclePrice() models.Money {
	return sub.UnitPrice * models.Money(CycleMonths(sub.BillingCycle))
}

// MonthlyRunRate returns what the subscription costs per month.
func (sub *Subscription) MonthlyRunRate() models.Money {
	return sub.UnitPrice * models.Money(sub.Quantity)
}

// RecurringItem is one service of the recurring billing request (spec 2.3).
type RecurringItem struct {
	ServiceID    string
	BillingCycle string
	AutoRenew    *bool
	Quantity     int
}

// RecurringInput is the recurring billing request (spec 2.3).
type RecurringInput struct {
	AccountID       string
	Services        []RecurringItem
	PaymentMethodID string
	StartDate       *time.Time
}

// Bounds of recurring billing requests.
const (
	maxRecurringServices = 100
	maxQuantity          = 10_000
	maxStartAhead        = 365 * 24 * time.Hour
	maxStartPast         = 24 * time.Hour
)

// billableStatuses are the service statuses a subscription may start on.
var billableStatuses = []services.ServiceStatus{services.ServicePending, services.ServiceProvisioning, services.ServiceOperational, services.ServiceDegraded, services.ServiceDown, services.ServiceMaintenance}

// CreateSubscriptions validates a recurring billing request and stores one
// pending subscription per service (priced from the catalog), returning
// them and their tenant scope; the caller starts one workflow per
// subscription. Errors: VALIDATION_ERROR, SERVICE_CONFLICT (a service
// already has an open subscription).
func (s *Store) CreateSubscriptions(ctx context.Context, p *models.Principal, in RecurringInput) ([]Subscription, models.Scope, error) {
	var v models.Validator
	v.Check(len(in.Services) >= 1 && len(in.Services) <= maxRecurringServices, "services", fmt.Sprintf("must list 1 to %d services", maxRecurringServices))
	now := s.Now()
	start := now.Truncate(time.Second)
	if in.StartDate != nil {
		start = in.StartDate.UTC().Truncate(time.Second)
		v.Check(!start.Before(now.Add(-maxStartPast)), "start_date", "must not be more than a day in the past")
		v.Check(start.Before(now.Add(maxStartAhead)), "start_date", "must be within 365 days")
	}
	acct, scope, aerr := s.accountFor(ctx, p, in.AccountID, "account_id")
	if aerr != nil {
		if e := models.AsError(aerr); e.Code == models.CodeValidation {
			for _, fi := range e.Details["fields"].([]models.FieldIssue) {
				v.Add(fi.Field, fi.Issue)
			}
		} else {
			return nil, models.Scope{}, aerr
		}
	}
	seen := map[string]bool{}
	for i, it := range in.Services {
		f := fmt.Sprintf("services[%d]", i)
		v.Check(models.HasPrefix(it.ServiceID, models.PrefixService), f+".service_id", "must be a service id (svc_...)")
		v.Check(!seen[it.ServiceID], f+".service_id", "is listed twice")
		seen[it.ServiceID] = true
		if it.BillingCycle != "" {
			v.Check(ValidCycle(it.BillingCycle, p.Environment), f+".billing_cycle", "must be monthly, quarterly or annual (sandbox keys also sandbox_<n>s, n from 1 to 3600)")
		}
		v.Check(it.Quantity >= 0 && it.Quantity <= maxQuantity, f+".quantity", fmt.Sprintf("must be between 1 and %d", maxQuantity))
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	if in.PaymentMethodID != "" {
		if _, err := s.ResolvePaymentMethodID(ctx, scope, acct.ID, in.PaymentMethodID, "payment_method_id"); err != nil {
			return nil, models.Scope{}, err
		}
	}
	subs := make([]Subscription, 0, len(in.Services))
	for i, it := range in.Services {
		f := fmt.Sprintf("services[%d].service_id", i)
		svc, err := s.services.ServiceIn(ctx, scope, it.ServiceID)
		if models.ErrorCode(err) == models.CodeNotFound {
			v.Add(f, fmt.Sprintf("no service %s in this organization", it.ServiceID))
			continue
		}
		if err != nil {
			return nil, models.Scope{}, err
		}
		if svc.AccountID != acct.ID {
			v.Add(f, fmt.Sprintf("service %s is billed to another account", svc.ID))
			continue
		}
		if !slices.Contains(billableStatuses, svc.Status) {
			v.Add(f, fmt.Sprintf("service %s is %s and cannot be billed", svc.ID, svc.Status))
			continue
		}
		var cs catalog.CatalogService
		if err := s.In(ctx, models.SystemScope()).Where("id = ?", svc.CatalogServiceID).Take(&cs).Error; err != nil {
			v.Add(f, fmt.Sprintf("service %s has no catalog price", svc.ID))
			continue
		}
		// The service's own monthly charge (its pricing: the quote's
		// price, or the catalog's for its configuration, kept up to date
		// by its changes); the catalog's starting price for a service
		// that has none.
		unit, currency := cs.StartingPrice, cs.Currency
		if svc.MonthlyCharge > 0 {
			unit, currency = svc.MonthlyCharge, svc.Currency
			// That charge already covers the service's units (users,
			// agents, sites): a quantity would count them twice.
			if it.Quantity > 1 {
				v.Add(fmt.Sprintf("services[%d].quantity", i), fmt.Sprintf("must be 1: service %s is billed its own monthly charge, which covers its %d units (scale the service to change them)", svc.ID, max(svc.Quantity, 1)))
				continue
			}
		}
		if currency != acct.Currency {
			v.Add("account_id", fmt.Sprintf("services are priced in %s but account %s is in %s", currency, acct.ID, acct.Currency))
			continue
		}
		cycle := it.BillingCycle
		if cycle == "" {
			cycle = acct.BillingCycle
		}
		qty := it.Quantity
		if qty == 0 {
			qty = 1
		}
		autoRenew := true
		if it.AutoRenew != nil {
			autoRenew = *it.AutoRenew
		}
		desc, _ := s.serviceDescription(ctx, svc)
		sub := Subscription{ID: models.NewID(models.PrefixSubscription), AccountID: acct.ID, ServiceID: svc.ID, Status: SubscriptionPending,
			BillingCycle: cycle, AutoRenew: autoRenew, Quantity: qty, UnitPrice: unit, Currency: currency,
			Description: desc, Category: cs.Category, PaymentMethodID: in.PaymentMethodID, AnchorDay: start.Day(), StartDate: start,
			CurrentPeriodStart: start, Segments: []QuantitySegment{{From: start, Quantity: qty}}}
		sub.CurrentPeriodEnd = PeriodEnd(start, cycle, sub.AnchorDay)
		subs = append(subs, sub)
	}
	if err := v.Err(); err != nil {
		return nil, models.Scope{}, err
	}
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		for i := range subs {
			var open int64
			if err := tx.Model(&Subscription{}).Where("service_id = ? AND status <> ?", subs[i].ServiceID, SubscriptionCancelled).Count(&open).Error; err != nil {
				return models.DBErr(err)
			}
			if open > 0 {
				return models.Errorf(models.CodeAlreadyExists, "service %s already has a subscription", subs[i].ServiceID).WithDetail("service_id", subs[i].ServiceID)
			}
			if err := tx.Create(&subs[i]).Error; err != nil {
				if models.IsUniqueViolation(err) {
					return models.Errorf(models.CodeAlreadyExists, "service %s already has a subscription", subs[i].ServiceID).WithDetail("service_id", subs[i].ServiceID)
				}
				return models.DBErr(err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, models.Scope{}, models.AsError(err)
	}
	return subs, scope, nil
}

// DeletePendingSubscriptions removes subscriptions whose workflow could not
// be started (still pending).
func (s *Store) DeletePendingSubscriptions(ctx context.Context, scope models.Scope, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return models.DBErr(s.In(ctx, scope).Where("id IN ? AND status = ?", ids, SubscriptionPending).Delete(&Subscription{}).Error)
}

// GetSubscription returns one subscription visible to p. Errors: NOT_FOUND.
func (s *Store) GetSubscription(ctx context.Context, p *models.Principal, id string) (*Subscription, error) {
	var sub Subscription
	err := s.In(ctx, p.Scope()).Where("id = ?", id).Take(&sub).Error
	return &sub, models.NotFoundOr(err, "subscription")
}

// SubscriptionIn returns one subscription in scope. Errors: NOT_FOUND.
func (s *Store) SubscriptionIn(ctx context.Context, scope models.Scope, id string) (*Subscription, error) {
	var sub Subscription
	err := s.In(ctx, scope).Where("id = ?", id).Take(&sub).Error
	return &sub, models.NotFoundOr(err, "subscription")
}

// SubscriptionFilter narrows a subscription list.
type SubscriptionFilter struct {
	AccountID string
	ServiceID string
	Status    string
}

var subscriptionSorts = models.SortFields{"created_at": "created_at", "status": "status"}

// ListSubscriptions returns a page of the subscriptions visible to p.
// Errors: VALIDATION_ERROR.
func (s *Store) ListSubscriptions(ctx context.Context, p *models.Principal, f SubscriptionFilter, page models.PageRequest) ([]Subscription, int64, error) {
	if f.Status != "" && !SubscriptionStatus(f.Status).Valid() {
		return nil, 0, models.Invalid(models.FieldIssue{Field: "status", Issue: "must be pending, active or cancelled"})
	}
	q := s.In(ctx, p.Scope()).Model(&Subscription{})
	if f.AccountID != "" {
		q = q.Where("account_id = ?", f.AccountID)
	}
	if f.ServiceID != "" {
		q = q.Where("service_id = ?", f.ServiceID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	out := []Subscription{}
	total, err := models.Paginate(q, page, subscriptionSorts, &out)
	return out, total, err
}

// lockSubscription reads a subscription inside tx, locking its row on PostgreSQL.
func lockSubscription(tx *gorm.DB, id string) (*Subscription, error) {
	var sub Subscription
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&sub).Error; err != nil {
		return nil, models.NotFoundOr(err, "subscription")
	}
	return &sub, nil
}

// SubscriptionPatch is the body of PUT /billing/subscriptions/{id}; nil
// fields stay as they are.
type SubscriptionPatch struct {
	BillingCycle *string
	AutoRenew    *bool
	Quantity     *int
}

// UpdateSubscription changes a subscription visible to p: a new quantity
// applies from now and the current period is prorated between the
// quantities; a new billing cycle applies from the next period; auto_renew
// false ends the subscription at the end of the current period.
// Errors: VALIDATION_ERROR, NOT_FOUND, INVALID_STATE_TRANSITION (cancelled).
func (s *Store) UpdateSubscription(ctx context.Context, p *models.Principal, id string, in SubscriptionPatch) (*Subscription, error) {
	var v models.Validator
	if in.BillingCycle != nil {
		v.Check(ValidCycle(*in.BillingCycle, p.Environment), "billing_cycle", "must be monthly, quarterly or annual (sandbox keys also sandbox_<n>s, n from 1 to 3600)")
	}
	if in.Quantity != nil {
		v.Check(*in.Quantity >= 1 && *in.Quantity <= maxQuantity, "quantity", fmt.Sprintf("must be between 1 and %d", maxQuantity))
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	sub, err := s.GetSubscription(ctx, p, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(sub.OrganizationID, sub.Environment)
	err = s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		cur, err := lockSubscription(tx, id)
		if err != nil {
			return err
		}
		if cur.Status == SubscriptionCancelled {
			return models.Errorf(models.CodeInvalidStateTransition, "subscription %s has ended and cannot change", id).WithDetail("status", string(cur.Status))
		}
		updates := map[string]any{"updated_at": s.Now()}
		if in.AutoRenew != nil {
			updates["auto_renew"] = *in.AutoRenew
		}
		if in.BillingCycle != nil {
			pending := *in.BillingCycle
			if pending == cur.BillingCycle {
				pending = ""
			}
			updates["pending_cycle"] = pending
		}
		if in.Quantity != nil && *in.Quantity != cur.Quantity {
			if price, _, err := serviceMonthlyCharge(tx, cur.ServiceID); err != nil {
				return err
			} else if price > 0 && *in.Quantity != 1 {
				return models.Invalid(models.FieldIssue{Field: "quantity", Issue: fmt.Sprintf("must be 1: service %s is billed its own monthly charge, which covers its units (scale the service to change them)", cur.ServiceID)})
			}
			from := s.Now().Truncate(time.Second)
			if from.Before(cur.CurrentPeriodStart) {
				from = cur.CurrentPeriodStart
			}
			segs := slices.Clone(cur.Segments)
			for len(segs) > 0 && !segs[len(segs)-1].From.Before(from) {
				segs = segs[:len(segs)-1]
			}
			segs = append(segs, QuantitySegment{From: from, Quantity: *in.Quantity})
			updates["segments"], updates["quantity"] = segmentsJSON(segs), *in.Quantity
		}
		return models.DBErr(tx.Model(&Subscription{}).Where("id = ?", id).Updates(updates).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.SubscriptionIn(ctx, scope, id)
}

// CancelSubscription records the cancellation of a subscription visible to
// p: at the end of its current period, or now (the period is then billed
// up to now); one whose first period has not started ends at its start. An
// earlier cancellation time always wins. The workflow is
// signalled by the caller; the row alone already makes the cancellation
// effective at the latest at the period's end. Errors: NOT_FOUND,
// INVALID_STATE_TRANSITION (already ended).
func (s *Store) CancelSubscription(ctx context.Context, p *models.Principal, id string, atPeriodEnd bool) (*Subscription, error) {
	sub, err := s.GetSubscription(ctx, p, id)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(sub.OrganizationID, sub.Environment)
	err = s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		cur, err := lockSubscription(tx, id)
		if err != nil {
			return err
		}
		if cur.Status == SubscriptionCancelled {
			return models.Errorf(models.CodeInvalidStateTransition, "subscription %s has already ended", id).WithDetail("status", string(cur.Status))
		}
		now := s.Now().Truncate(time.Second)
		at := now
		if atPeriodEnd {
			at = cur.CurrentPeriodEnd
		}
		if now.Before(cur.CurrentPeriodStart) && at.After(cur.CurrentPeriodStart) {
			at = cur.CurrentPeriodStart // not started yet: it ends before anything is billed
		}
		if cur.CancelAt != nil && cur.CancelAt.Before(at) {
			return nil
		}
		return models.DBErr(tx.Model(&Subscription{}).Where("id = ?", id).Updates(map[string]any{"cancel_at": at, "updated_at": s.Now()}).Error)
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return s.SubscriptionIn(ctx, scope, id)
}
