package support

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// SLAView is a ticket's SLA as GET /v1/support/tickets/{id}/sla shows it,
// computed at one instant from the ticket's clocks (the source of the
// ticket's own sla and sla_status too).
type SLAView struct {
	Ticket     *Ticket
	At         time.Time
	Cycle      int
	PolicyID   string
	Tier       string
	Response   *Clock // in a reopen's cycle (which times the resolution only), the first response's clock
	Resolution *Clock
	// NextEscalation is the next instant a step of the escalation ladder
	// fires (nil when none is coming).
	NextEscalation *time.Time
	Escalations    []Escalation
	// Ledger is every segment of every cycle, oldest first (when asked).
	Ledger []LedgerEntry
}

// LedgerEntry is one segment of the ledger with the working and
// non-working pieces of a running stretch (Spans; nil for paused and
// re-timing segments) so that "why did this breach?" has an answer.
type LedgerEntry struct {
	Segment
	// Spans are the pieces of a running segment in and outside business
	// hours (one working piece on a calendar-hours target).
	Spans []LedgerSpan
}

// LedgerSpan is one piece of a running segment.
type LedgerSpan struct {
	Start, End time.Time
	Working    bool
}

// GetTicketSLA returns the SLA of a ticket visible to p at now, with the
// ledger when ledger is true (its segments are split into business and
// non-business pieces, at most 500 segments). Errors: NOT_FOUND.
func (s *Store) GetTicketSLA(ctx context.Context, p *models.Principal, ticketID string, ledger bool, now time.Time) (*SLAView, error) {
	t, err := s.GetTicket(ctx, p, ticketID)
	if err != nil {
		return nil, err
	}
	db := s.core.In(ctx, models.TenantScope(t.OrganizationID, t.Environment))
	sy := &slaSync{s: s, ctx: ctx, tx: db, t: t, view: *t}
	if err := sy.load(); err != nil {
		return nil, err
	}
	v := &SLAView{Ticket: t, At: now, Cycle: max(t.SLACycle, 1), PolicyID: t.SLAPolicyID, Tier: sy.policy.Tier}
	for _, c := range sy.clocks {
		switch c.Metric {
		case MetricResponse:
			v.Response = c
		case MetricResolution:
			v.Resolution = c
		}
		if c.State == ClockRunning {
			for _, at := range sy.ladderTimes(c, now) {
				if v.NextEscalation == nil || at.Before(*v.NextEscalation) {
					a := at
					v.NextEscalation = &a
				}
			}
		}
	}
	if v.Response == nil && v.Cycle > 1 {
		// A reopen's cycle times the resolution only: the first response
		// is the one of the latest cycle that had one (the first).
		var first Clock
		err := db.Where("ticket_id = ? AND metric = ? AND cycle < ?", t.ID, MetricResponse, v.Cycle).Order("cycle DESC").Take(&first).Error
		if err == nil {
			v.Response = &first
		} else if !errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, dbErr(err)
		}
	}
	if err := db.Where("ticket_id = ?", t.ID).Order("fired_at, id").Limit(200).Find(&v.Escalations).Error; err != nil {
		return nil, dbErr(err)
	}
	if !ledger {
		return v, nil
	}
	var segs []Segment
	if err := db.Where("ticket_id = ?", t.ID).Order("cycle, metric, seq").Limit(500).Find(&segs).Error; err != nil {
		return nil, dbErr(err)
	}
	var clocks []Clock
	if err := db.Where("ticket_id = ?", t.ID).Find(&clocks).Error; err != nil {
		return nil, dbErr(err)
	}
	byID := map[string]*Clock{}
	for i := range clocks {
		byID[clocks[i].ID] = &clocks[i]
	}
	for _, g := range segs {
		e := LedgerEntry{Segment: g}
		if c := byID[g.ClockID]; c != nil && g.Kind == SegmentRunning {
			end := now
			if g.EndedAt != nil {
				end = *g.EndedAt
			}
			for _, sp := range c.cal().Spans(g.StartedAt, end) {
				e.Spans = append(e.Spans, LedgerSpan{Start: sp.Start, End: sp.End, Working: sp.Working})
			}
		}
		v.Ledger = append(v.Ledger, e)
	}
	return v, nil
}

// Remaining is the (business) time left on c until its target at at:
// negative once over, zero once stopped.
func (c *Clock) Remaining(at time.Time) time.Duration {
	if c.State == ClockStopped {
		return 0
	}
	return c.Target() - c.Elapsed(at)
}
