package billing

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
	"github.com/telcoplatform/platform/models/services"
)

// SubscriptionEventData is the data of the subscription.* events.
func SubscriptionEventData(sub *Subscription) map[string]any {
	d := map[string]any{
		"subscription": map[string]any{
			"id": sub.ID, "status": string(sub.Status), "account_id": sub.AccountID, "service_id": sub.ServiceID,
			"billing_cycle": sub.BillingCycle, "auto_renew": sub.AutoRenew, "quantity": sub.Quantity,
			"unit_price": sub.UnitPrice, "currency": sub.Currency,
			"current_period_start": models.Timestamp(sub.CurrentPeriodStart), "current_period_end": models.Timestamp(sub.CurrentPeriodEnd),
		},
	}
	if sub.CancelledAt != nil {
		d["subscription"].(map[string]any)["cancelled_at"] = models.Timestamp(*sub.CancelledAt)
		d["subscription"].(map[string]any)["ended_reason"] = sub.EndedReason
	}
	return d
}

// BeginSubscription activates a pending subscription (writing
// subscription.created in the same transaction) and returns it; an active
// or ended one is returned as it is. Errors: NOT_FOUND.
func (s *Store) BeginSubscription(ctx context.Context, scope models.Scope, id string) (*Subscription, error) {
	var out *Subscription
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		sub, err := lockSubscription(tx, id)
		if err != nil {
			return err
		}
		out = sub
		if sub.Status != SubscriptionPending {
			return nil
		}
		sub.Status, sub.UpdatedAt = SubscriptionActive, s.Now()
		if err := tx.Model(&Subscription{}).Where("id = ?", id).Updates(map[string]any{"status": sub.Status, "updated_at": sub.UpdatedAt}).Error; err != nil {
			return models.DBErr(err)
		}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventSubscriptionCreated, sub.ID, SubscriptionEventData(sub)))
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// serviceBillingEnd returns when a service stopped being billable: its
// billing_ended_at when the services area records one, else when it became
// decommissioned (or failed); nil while it is billable.
func serviceBillingEnd(tx *gorm.DB, serviceID string) (*time.Time, error) {
	var svc services.Service
	if err := tx.Where("id = ?", serviceID).Take(&svc).Error; err != nil {
		if models.ErrorCode(models.NotFoundOr(err, "")) == models.CodeNotFound {
			return nil, nil
		}
		return nil, models.DBErr(err)
	}
	if tx.Migrator().HasColumn(&services.Service{}, "billing_ended_at") {
		var row struct{ BillingEndedAt *time.Time }
		if err := tx.Model(&services.Service{}).Select("billing_ended_at").Where("id = ?", serviceID).Scan(&row).Error; err != nil {
			return nil, models.DBErr(err)
		}
		if row.BillingEndedAt != nil {
			t := row.BillingEndedAt.UTC()
			return &t, nil
		}
	}
	if svc.Status == services.ServiceDecommissioned || svc.Status == services.ServiceFailed {
		t := svc.StatusChangedAt.UTC()
		return &t, nil
	}
	return nil, nil
}

// serviceMonthlyCharge returns a service's monthly charge and its currency
// (0 and "" for a service without one, or gone).
func serviceMonthlyCharge(tx *gorm.DB, serviceID string) (models.Money, string, error) {
	var row struct {
		MonthlyCharge models.Money
		Currency      string
	}
	if err := tx.Model(&services.Service{}).Select("monthly_charge", "currency").Where("id = ?", serviceID).Scan(&row).Error; err != nil {
		return 0, "", models.DBErr(err)
	}
	return row.MonthlyCharge, row.Currency, nil
}

// recurringLines returns the recurring charge of sub for [start, end) of
// the period [start, periodEnd): one line per quantity segment, each
// prorated by the share of the period it covers (to the nanosecond, rounded
// to the cent; a segment worth less than half a cent is left out).
func recurringLines(sub *Subscription, start, periodEnd, end time.Time) []InvoiceLine {
	segs := slices.Clone(sub.Segments)
	if len(segs) == 0 {
		segs = []QuantitySegment{{From: start, Quantity: sub.Quantity}}
	}
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].From.Before(segs[j].From) })
	full := periodEnd.Sub(start)
	var out []InvoiceLine
	for i, seg := range segs {
		from := seg.From
		if from.Before(start) {
			from = start
		}
		to := end
		if i+1 < len(segs) && segs[i+1].From.Before(to) {
			to = segs[i+1].From
		}
		if !to.After(from) || seg.Quantity <= 0 {
			continue
		}
		unit := sub.CyclePrice()
		amount := mulDiv(unit*models.Money(seg.Quantity), int64(to.Sub(from)), int64(full))
		if amount == 0 {
			continue // a sliver of a period that rounds to nothing is not invoiced
		}
		desc := fmt.Sprintf("%s, %s %s to %s", sub.Description, sub.BillingCycle, models.Timestamp(from), models.Timestamp(to))
		if to.Sub(from) != full {
			desc += fmt.Sprintf(" (prorated: %.1f%% of the period)", float64(to.Sub(from))*100/float64(full))
		}
		f, t := from, to
		out = append(out, InvoiceLine{Kind: LineRecurring, ServiceID: sub.ServiceID, Category: sub.Category, Description: models.Truncate(desc, 500),
			Quantity: int64(seg.Quantity), UnitPrice: unit, Amount: amount, PeriodStart: &f, PeriodEnd: &t})
	}
	return out
}

// CloseInput closes one period of a subscription.
type CloseInput struct {
	SubscriptionID string
	PeriodStart    time.Time // the period being closed (idempotency key)
	CloseAt        time.Time // its end, or the cancellation time
	// APIRequests are the organization's API requests of calendar months
	// (key "2006-01") that ended before CloseAt, read from the rate
	// limiter; months absent are not billed for overage by this close.
	APIRequests map[string]int64
}

// CycleClose is what closing a period did.
type CycleClose struct {
	InvoiceID     string
	InvoiceStatus InvoiceStatus
	Total         models.Money
	Currency      string
	DueAt         time.Time
	AutoPay       bool
	Ended         bool
	EndedReason   string
	NextStart     time.Time
	NextEnd       time.Time
	Cycle         string
}

// CloseSubscriptionPeriod closes the period of a subscription that starts
// at in.PeriodStart, in one transaction: it meters the service's usage,
// rates the recurring charge (prorated to a cancellation or to the end of
// the service's billing), adds metered usage and unbilled API overage,
// issues the invoice (invoice.created) and then either starts the next
// period (a pending cycle change takes effect) or ends the subscription
// (subscription.cancelled). Closing the same period again returns what the
// first close did. Errors: NOT_FOUND.
func (s *Store) CloseSubscriptionPeriod(ctx context.Context, scope models.Scope, in CloseInput) (*CycleClose, error) {
	var out *CycleClose
	err := s.In(ctx, scope).Transaction(func(tx *gorm.DB) error {
		sub, err := lockSubscription(tx, in.SubscriptionID)
		if err != nil {
			return err
		}
		var acct models.BillingAccount
		if err := tx.Where("id = ?", sub.AccountID).Take(&acct).Error; err != nil {
			return models.NotFoundOr(err, "billing account")
		}
		autoPay := acct.AutoPay && (sub.PaymentMethodID != "" || acct.PaymentMethodID != "")
		out = &CycleClose{Currency: sub.Currency, AutoPay: autoPay, Cycle: sub.BillingCycle}
		if sub.Status == SubscriptionCancelled || !sub.CurrentPeriodStart.Equal(in.PeriodStart) {
			// Closed before (a retried activity): report what happened.
			var inv Invoice
			err := tx.Where("subscription_id = ? AND period_start = ?", sub.ID, in.PeriodStart).Take(&inv).Error
			if err == nil {
				out.InvoiceID, out.InvoiceStatus, out.Total, out.DueAt = inv.ID, inv.Status, inv.Total, inv.DueDate
			} else if models.ErrorCode(models.NotFoundOr(err, "")) != models.CodeNotFound {
				return models.DBErr(err)
			}
			out.Ended, out.EndedReason = sub.Status == SubscriptionCancelled, sub.EndedReason
			out.NextStart, out.NextEnd, out.Cycle = sub.CurrentPeriodStart, sub.CurrentPeriodEnd, sub.BillingCycle
			return nil
		}
		now := s.Now()
		start, periodEnd := sub.CurrentPeriodStart, sub.CurrentPeriodEnd
		end := in.CloseAt.UTC()
		if end.After(periodEnd) {
			end = periodEnd
		}
		reason := ""
		if sub.CancelAt != nil && !sub.CancelAt.After(end) {
			end, reason = *sub.CancelAt, EndedCancelled
		}
		billingEnd, err := serviceBillingEnd(tx, sub.ServiceID)
		if err != nil {
			return err
		}
		if billingEnd != nil && billingEnd.Before(end) {
			end, reason = *billingEnd, EndedDecommissioned
		}
		if billingEnd != nil && reason == "" {
			reason = EndedDecommissioned
		}
		if end.Before(start) {
			end = start
		}
		if reason == "" && !sub.AutoRenew && !end.Before(periodEnd) {
			reason = EndedNotRenewed
		}

		lines := recurringLines(sub, start, periodEnd, end)
		if end.After(start) {
			if err := s.meterService(ctx, tx, sub, start, end); err != nil {
				return err
			}
		}
		usageLines, claimed, err := s.unbilledUsageLines(ctx, tx, sub, &acct, end, in.APIRequests)
		if err != nil {
			return err
		}
		lines = append(lines, usageLines...)
		if len(lines) > 0 {
			for i := range lines {
				lines[i].Position = i + 1
			}
			ps, pe := start, end
			inv := &Invoice{ID: models.NewID(models.PrefixInvoice), AccountID: acct.ID, Source: InvoiceSourceSubscription, SubscriptionID: sub.ID,
				PeriodStart: &ps, PeriodEnd: &pe, Currency: sub.Currency, TaxRateBP: acct.TaxRateBP, IssuedAt: now,
				DueDate: now.Add(PaymentTerm(sub.BillingCycle, autoPay)), Lines: lines}
			if err := s.insertInvoice(tx, scope, inv, now); err != nil {
				return err
			}
			if len(claimed) > 0 {
				if err := tx.Model(&UsageRecord{}).Where("id IN ? AND invoice_id = ?", claimed, "").Update("invoice_id", inv.ID).Error; err != nil {
					return models.DBErr(err)
				}
			}
			out.InvoiceID, out.InvoiceStatus, out.Total, out.DueAt = inv.ID, inv.Status, inv.Total, inv.DueDate
		}
		updates := map[string]any{"updated_at": now, "periods_billed": sub.PeriodsBilled + 1}
		if reason != "" {
			sub.Status, sub.CancelledAt, sub.EndedReason, sub.CurrentPeriodEnd = SubscriptionCancelled, &now, reason, end
			updates["status"], updates["cancelled_at"], updates["ended_reason"], updates["current_period_end"] = sub.Status, now, reason, end
			if err := tx.Model(&Subscription{}).Where("id = ?", sub.ID).Updates(updates).Error; err != nil {
				return models.DBErr(err)
			}
			out.Ended, out.EndedReason = true, reason
			return eventlog.RecordEvent(tx, eventlog.NewEvent(EventSubscriptionCancelled, sub.ID, SubscriptionEventData(sub)))
		}
		cycle := sub.BillingCycle
		if sub.PendingCycle != "" {
			cycle = sub.PendingCycle
		}
		next := PeriodEnd(periodEnd, cycle, sub.AnchorDay)
		updates["billing_cycle"], updates["pending_cycle"] = cycle, ""
		updates["current_period_start"], updates["current_period_end"] = periodEnd, next
		updates["segments"] = segmentsJSON([]QuantitySegment{{From: periodEnd, Quantity: sub.Quantity}})
		// The next period is priced at the service's monthly charge as it
		// is now: a change of the service (a scale, an SLA, features)
		// applies from the period after it.
		price, currency, err := serviceMonthlyCharge(tx, sub.ServiceID)
		if err != nil {
			return err
		}
		if price > 0 && currency == sub.Currency && price != sub.UnitPrice {
			updates["unit_price"] = price
		}
		if err := tx.Model(&Subscription{}).Where("id = ?", sub.ID).Updates(updates).Error; err != nil {
			return models.DBErr(err)
		}
		out.NextStart, out.NextEnd, out.Cycle = periodEnd, next, cycle
		return nil
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return out, nil
}

// AutoPayTarget says how to collect an invoice automatically.
type AutoPayTarget struct {
	Invoice *Invoice
	Method  *PaymentMethod // nil: no usable payment method
	Cycle   string
	// Disputed is true while the invoice has an open dispute: auto-pay
	// does not charge a disputed invoice.
	Disputed bool
}

// AutoPayTargetOf returns an invoice with the payment method that auto-pay
// charges: its subscription's, else its account's. Errors: NOT_FOUND.
func (s *Store) AutoPayTargetOf(ctx context.Context, scope models.Scope, invoiceID string) (*AutoPayTarget, error) {
	inv, err := s.InvoiceIn(ctx, scope, invoiceID)
	if err != nil {
		return nil, err
	}
	var acct models.BillingAccount
	if err := s.In(ctx, scope).Where("id = ?", inv.AccountID).Take(&acct).Error; err != nil {
		return nil, models.NotFoundOr(err, "billing account")
	}
	t := &AutoPayTarget{Invoice: inv, Cycle: CycleMonthly}
	if t.Disputed, err = openDispute(s.In(ctx, scope), inv.ID); err != nil {
		return nil, err
	}
	pmID := acct.PaymentMethodID
	if inv.SubscriptionID != "" {
		if sub, err := s.SubscriptionIn(ctx, scope, inv.SubscriptionID); err == nil {
			t.Cycle = sub.BillingCycle
			if sub.PaymentMethodID != "" {
				pmID = sub.PaymentMethodID
			}
		}
	}
	if !acct.AutoPay || pmID == "" {
		return t, nil
	}
	pm, err := s.PaymentMethodIn(ctx, scope, acct.ID, pmID)
	if err == nil {
		t.Method = pm
	} else if models.ErrorCode(err) != models.CodeNotFound {
		return nil, err
	}
	return t, nil
}
