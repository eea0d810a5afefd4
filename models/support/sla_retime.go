package support

import (
	"context"

	"github.com/telcoplatform/platform/models"
)

// RetimeScope says which open tickets an edit of SLA policies or calendars
// may re-time: those whose clocks run under PolicyID, those with a clock
// counting in CalendarID, those of Category, or every open ticket (Any).
type RetimeScope struct {
	PolicyID   string `json:"policy_id,omitempty"`
	CalendarID string `json:"calendar_id,omitempty"`
	Category   string `json:"category,omitempty"`
	Any        bool   `json:"any,omitempty"`
}

// RetimeScopeOfPolicy is the scope of an edit of policy pol (created,
// updated or deleted): the tickets under it, and those its tier and
// category may now take (every open ticket of its category, or every open
// ticket for a policy of any category).
func RetimeScopeOfPolicy(pol *SLAPolicy) RetimeScope {
	return RetimeScope{PolicyID: pol.ID, Category: pol.Category, Any: pol.Category == ""}
}

// MaxRetimePage bounds a page of RetimeCandidates.
const MaxRetimePage = 500

// RetimeCandidates returns up to limit ids (at most MaxRetimePage) of the
// open tickets (open, in_progress, pending, escalated) in sc, every
// organization and environment, in id order after the id after.
func (s *Store) RetimeCandidates(ctx context.Context, sc RetimeScope, after string, limit int) ([]string, error) {
	if limit <= 0 || limit > MaxRetimePage {
		limit = MaxRetimePage
	}
	db := s.core.In(ctx, models.SystemScope())
	q := db.Model(&Ticket{}).Where("status IN ?", []string{StatusOpen, StatusInProgress, StatusPending, StatusEscalated})
	if after != "" {
		q = q.Where("id > ?", after)
	}
	if !sc.Any {
		var ors []string
		var args []any
		if sc.PolicyID != "" {
			ors, args = append(ors, "sla_policy_id = ?"), append(args, sc.PolicyID)
		}
		if sc.Category != "" {
			ors, args = append(ors, "category = ?"), append(args, sc.Category)
		}
		if sc.CalendarID != "" {
			ors = append(ors, "id IN (?)")
			args = append(args, db.Model(&Clock{}).Select("ticket_id").Where("calendar_id = ? AND state <> ?", sc.CalendarID, ClockStopped))
		}
		if len(ors) == 0 {
			return nil, nil
		}
		where := ors[0]
		for _, o := range ors[1:] {
			where += " OR " + o
		}
		q = q.Where("("+where+")", args...)
	}
	var ids []string
	if err := q.Order("id").Limit(limit).Pluck("id", &ids).Error; err != nil {
		return nil, dbErr(err)
	}
	return ids, nil
}
