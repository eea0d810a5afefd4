package billing

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// Dispute and invoice-cancellation event names.
const (
	EventInvoiceCancelled = "invoice.cancelled"
	EventInvoiceDisputed  = "invoice.disputed"
)

// PrefixDispute starts invoice dispute ids.
const PrefixDispute = "dsp"

// DisputeReasons are the reasons a customer gives for disputing an invoice.
func DisputeReasons() []string {
	return []string{"incorrect_amount", "service_not_received", "duplicate_charge", "cancelled_service", "other"}
}

// Dispute statuses: a dispute is open until provider staff resolve it
// (cancelling the invoice resolves its open dispute).
const (
	DisputeOpen     = "open"
	DisputeResolved = "resolved"
)

// InvoiceDispute is a customer's objection to an invoice. Customers cannot
// cancel (void) the provider's invoices; they dispute them, which pauses
// auto-pay on the invoice and tells provider staff (invoice.disputed).
type InvoiceDispute struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	InvoiceID   string     `gorm:"size:40;not null;index"`
	Reason      string     `gorm:"size:40;not null"`
	Description string     `gorm:"size:4000"`
	Status      string     `gorm:"size:16;not null;index"`
	Resolution  string     `gorm:"size:1000"`
	CreatedBy   string     `gorm:"size:40;not null"`
	CreatedAt   time.Time  `gorm:"not null"`
	UpdatedAt   time.Time  `gorm:"not null"`
	ResolvedAt  *time.Time ``
}

// DisputeInput is the body of a dispute.
type DisputeInput struct {
	Reason      string
	Description string
}

// DisputeInvoice records a dispute of an invoice visible to p and writes
// invoice.disputed in the same transaction. An invoice has at most one open
// dispute; a cancelled invoice cannot be disputed.
// Errors: VALIDATION_ERROR, NOT_FOUND, INVALID_STATE_TRANSITION.
func (s *Store) DisputeInvoice(ctx context.Context, p *models.Principal, invoiceID string, in DisputeInput) (*InvoiceDispute, error) {
	var v models.Validator
	v.Check(slices.Contains(DisputeReasons(), in.Reason), "reason", "must be one of "+strings.Join(DisputeReasons(), ", "))
	in.Description = strings.TrimSpace(in.Description)
	v.Check(len(in.Description) <= 4000, "description", "must be at most 4000 characters")
	v.Check(in.Reason != "other" || in.Description != "", "description", "is required when reason is other")
	if err := v.Err(); err != nil {
		return nil, err
	}
	inv, err := s.GetInvoice(ctx, p, invoiceID)
	if err != nil {
		return nil, err
	}
	scope := models.TenantScope(inv.OrganizationID, inv.Environment)
	now := s.Now()
	d := &InvoiceDispute{ID: models.NewID(PrefixDispute), InvoiceID: inv.ID, Reason: in.Reason, Description: in.Description,
		Status: DisputeOpen, CreatedBy: p.ID, CreatedAt: now, UpdatedAt: now}
	err = s.Tx(ctx, scope, func(tx *gorm.DB) error {
		cur, err := lockInvoice(tx, inv.ID)
		if err != nil {
			return err
		}
		if cur.Status == InvoiceCancelled {
			return models.Errorf(models.CodeInvalidStateTransition, "invoice %s is cancelled and cannot be disputed", inv.ID).WithDetail("status", string(cur.Status))
		}
		var open int64
		if err := tx.Model(&InvoiceDispute{}).Where("invoice_id = ? AND status = ?", inv.ID, DisputeOpen).Count(&open).Error; err != nil {
			return models.DBErr(err)
		}
		if open > 0 {
			return models.Errorf(models.CodeInvalidStateTransition, "invoice %s already has an open dispute", inv.ID)
		}
		if err := tx.Create(d).Error; err != nil {
			return models.DBErr(err)
		}
		data := InvoiceEventData(cur)
		data["dispute"] = map[string]any{"id": d.ID, "reason": d.Reason, "description": d.Description, "status": d.Status}
		return eventlog.RecordEvent(tx, eventlog.NewEvent(EventInvoiceDisputed, inv.ID, data))
	})
	if err != nil {
		return nil, models.AsError(err)
	}
	return d, nil
}

// ListInvoiceDisputes returns a page of the disputes of an invoice visible
// to p. Errors: NOT_FOUND, VALIDATION_ERROR (sort).
func (s *Store) ListInvoiceDisputes(ctx context.Context, p *models.Principal, invoiceID string, page models.PageRequest) ([]InvoiceDispute, int64, error) {
	inv, err := s.GetInvoice(ctx, p, invoiceID)
	if err != nil {
		return nil, 0, err
	}
	var out []InvoiceDispute
	q := s.In(ctx, models.TenantScope(inv.OrganizationID, inv.Environment)).Model(&InvoiceDispute{}).Where("invoice_id = ?", inv.ID)
	total, err := models.Paginate(q, page, disputeSorts, &out)
	return out, total, err
}

var disputeSorts = models.SortFields{"created_at": "created_at", "status": "status"}

// openDispute reports whether an invoice has an open dispute.
func openDispute(tx *gorm.DB, invoiceID string) (bool, error) {
	var d InvoiceDispute
	err := tx.Where("invoice_id = ? AND status = ?", invoiceID, DisputeOpen).Take(&d).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return err == nil, models.DBErr(err)
}

// CanAdministerBilling reports whether p may act on the provider's side of
// billing (cancel invoices, set tax rates): provider staff holding
// billing:admin (administrators hold it through "*").
func CanAdministerBilling(p *models.Principal) bool {
	return p.IsStaff() && p.Can(models.PermissionBillingAdmin)
}
