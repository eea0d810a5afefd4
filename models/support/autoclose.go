package support

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// AutoCloseAfter is the quiet period after which a resolved ticket closes
// by itself: three days without any change (a customer's reply reopens it
// instead, see AddComment).
const AutoCloseAfter = 72 * time.Hour

// ActorAutoClose is the system actor id of the automatic close.
const ActorAutoClose = "auto_close"

// AutoClose says which resolution of which ticket an automatic close is
// for: the ticket's tenant and its resolved_at.
type AutoClose struct {
	TicketID       string             `json:"ticket_id"`
	OrganizationID string             `json:"organization_id"`
	Environment    models.Environment `json:"environment"`
	ResolvedAt     time.Time          `json:"resolved_at"`
	// UpdatedAt is the ticket's updated_at as the resolution left it.
	UpdatedAt time.Time `json:"updated_at"`
}

// AutoCloseOf returns the automatic close of t's current resolution (ok
// false when t is not resolved).
func AutoCloseOf(t *Ticket) (AutoClose, bool) {
	if t.Status != StatusResolved || t.ResolvedAt == nil {
		return AutoClose{}, false
	}
	return AutoClose{TicketID: t.ID, OrganizationID: t.OrganizationID, Environment: t.Environment, ResolvedAt: t.ResolvedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}, true
}

// sameInstant compares times read back from either database (PostgreSQL
// keeps microseconds).
func sameInstant(a, b time.Time) bool {
	d := a.Sub(b)
	return d < time.Millisecond && d > -time.Millisecond
}

// CloseIfQuiet closes the ticket of in when it is still resolved by the
// same resolution and unchanged since (updated_at as the resolution left
// it, and no comment added after it): the
// status becomes closed, closed_at is set, the history records actor
// {system, auto_close} and ticket.updated is written. It reports whether
// it closed the ticket; a reopened, re-resolved, changed, closed or
// removed ticket is left alone (false, nil). It is idempotent.
// Errors: INTERNAL_ERROR.
func (s *Store) CloseIfQuiet(ctx context.Context, in AutoClose) (bool, error) {
	closed := false
	err := s.core.Tx(ctx, models.TenantScope(in.OrganizationID, in.Environment), func(tx *gorm.DB) error {
		s := s.bound(tx) // reads in the transaction: never a second connection
		var t Ticket
		err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", in.TicketID).Take(&t).Error
		if err != nil {
			if nf := notFoundOr(err, "ticket"); models.ErrorCode(nf) == models.CodeNotFound {
				return nil
			}
			return dbErr(err)
		}
		if t.Status != StatusResolved || t.ResolvedAt == nil || !sameInstant(*t.ResolvedAt, in.ResolvedAt) || !sameInstant(t.UpdatedAt, in.UpdatedAt) {
			return nil
		}
		var comments int64
		if err := tx.Model(&Comment{}).Where("ticket_id = ? AND created_at > ?", t.ID, in.ResolvedAt.Add(time.Millisecond)).Count(&comments).Error; err != nil {
			return dbErr(err)
		}
		if comments > 0 {
			return nil
		}
		ch := &change{tx: tx, t: &t, p: &models.Principal{ID: ActorAutoClose}, now: s.now(), system: ActorAutoClose}
		if err := ch.setStatus(StatusClosed); err != nil {
			return err
		}
		closed = true
		return ch.flush()
	})
	if err != nil {
		return false, models.AsError(err)
	}
	return closed, nil
}
