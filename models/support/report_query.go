package support

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// ReportColumn is one column of a report: its name and type (string,
// integer, number, boolean or timestamp).
type ReportColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Column types.
const (
	ColString    = "string"
	ColInteger   = "integer"
	ColNumber    = "number"
	ColBoolean   = "boolean"
	ColTimestamp = "timestamp"
)

// ReportColumns returns the columns of spec's report, in order.
func ReportColumns(spec *ReportSpec) []ReportColumn {
	var cols []ReportColumn
	add := func(name, typ string) { cols = append(cols, ReportColumn{Name: name, Type: typ}) }
	if spec.ReportType == ReportTicketExport {
		add("ticket_id", ColString)
		add("number", ColString)
		add("customer_id", ColString)
		add("category", ColString)
		add("priority", ColString)
		add("status", ColString)
		add("agent", ColString)
		add("created_at", ColTimestamp)
		add("resolved_at", ColTimestamp)
		for _, m := range spec.Metrics {
			switch m {
			case MetricResolutionTime:
				add("resolution_hours", ColNumber)
			case MetricSLACompliance:
				add("sla_resolution", ColString)
			case MetricCustomerSatisfaction:
				add("satisfaction_rating", ColInteger)
			case MetricEscalationRate:
				add("escalated", ColBoolean)
				add("escalation_level", ColInteger)
			case MetricFirstContactResolution:
				add("agent_replies", ColInteger)
				add("first_contact_resolved", ColBoolean)
			}
		}
		return cols
	}
	for _, g := range spec.Grouping {
		add(g, ColString)
	}
	add("tickets", ColInteger)
	for _, m := range spec.Metrics {
		switch m {
		case MetricResolutionTime:
			add("resolved", ColInteger)
			add("avg_resolution_hours", ColNumber)
		case MetricSLACompliance:
			add("sla_measured", ColInteger)
			add("sla_compliance_pct", ColNumber)
		case MetricCustomerSatisfaction:
			add("ratings", ColInteger)
			add("avg_satisfaction", ColNumber)
		case MetricEscalationRate:
			add("escalated", ColInteger)
			add("escalation_rate_pct", ColNumber)
		case MetricFirstContactResolution:
			add("first_contact_resolved", ColInteger)
			add("first_contact_resolution_pct", ColNumber)
		}
	}
	return cols
}

// ReportRowWriter receives a report's rows one at a time, each with one
// value per column (nil for none): string, int64, float64, bool or
// time.Time.
type ReportRowWriter interface {
	WriteRow(values []any) error
}

// ReportStats is what a report run counted: the rows written, the tickets
// read and the newest change among them.
type ReportStats struct {
	Rows    int64
	Tickets int64
	Newest  *time.Time
}

// reportQuery builds the SQL of a report over the tickets of spec.
type reportQuery struct {
	s      *Store
	ctx    context.Context
	spec   *ReportSpec
	sqlite bool
}

// epoch is the expression of the timestamp column col in whole seconds
// since the epoch (NULL stays NULL).
func (q *reportQuery) epoch(col string) string {
	if q.sqlite {
		return fmt.Sprintf("CAST(strftime('%%s', %s) AS INTEGER)", col)
	}
	return fmt.Sprintf("CAST(FLOOR(EXTRACT(EPOCH FROM %s)) AS BIGINT)", col)
}

// seconds is resolved_at - created_at of the ticket, in seconds.
func (q *reportQuery) seconds() string {
	if q.sqlite {
		return "((julianday(support_tickets.resolved_at) - julianday(support_tickets.created_at)) * 86400.0)"
	}
	return "CAST(EXTRACT(EPOCH FROM (support_tickets.resolved_at - support_tickets.created_at)) AS DOUBLE PRECISION)"
}

// Per-ticket facts, each a correlated subquery on an indexed ticket_id
// (plan-stable whatever the statistics: a fresh bulk load must not turn
// a join into a nested loop over aggregated subqueries): the resolution
// clocks met and measured (of every cycle), the feedback rating and the
// agent's customer-visible replies.
const (
	reportMetExpr = "(SELECT COALESCE(SUM(CASE WHEN c.breached_at IS NULL AND c.state = 'stopped' THEN 1 ELSE 0 END), 0) " +
		"FROM support_sla_clocks c WHERE c.ticket_id = support_tickets.id AND c.metric = 'resolution')"
	reportMeasuredExpr = "(SELECT COALESCE(SUM(CASE WHEN c.breached_at IS NOT NULL OR c.state = 'stopped' THEN 1 ELSE 0 END), 0) " +
		"FROM support_sla_clocks c WHERE c.ticket_id = support_tickets.id AND c.metric = 'resolution')"
	reportRatingExpr  = "(SELECT f.rating FROM support_feedback f WHERE f.ticket_id = support_tickets.id)"
	reportRepliesExpr = "(SELECT COUNT(*) FROM support_comments c WHERE c.ticket_id = support_tickets.id " +
		"AND c.author_type = 'agent' AND c.visibility = 'customer')"
)

// resolvedExpr is true for a resolved ticket: the dashboard's rule
// (resolvedCond) on support_tickets.
func resolvedExpr() string { return "(" + resolvedCond("support_tickets.") + ")" }

// escalatedExpr is true for a ticket escalated at least once.
const escalatedExpr = "(support_tickets.escalation_level > 0 OR support_tickets.escalated_at IS NOT NULL)"

// fcrExpr is true for a facts row (f) of a ticket resolved in its first
// cycle (never reopened) with at most one customer-visible agent reply.
const fcrExpr = "(f.resolved = 1 AND f.sla_cycle_n = 1 AND f.replies <= 1)"

// facts is the scoped query of the report's tickets, one row per ticket
// with its facts under the names the report reads (created_s, resolved_s
// and updated_s in epoch seconds; res_seconds null unless resolved).
func (q *reportQuery) facts() *gorm.DB {
	sel := strings.Join([]string{
		"support_tickets.id AS id", "support_tickets.number AS number", "support_tickets.customer_id AS customer_id",
		"support_tickets.category AS category", "support_tickets.priority AS priority", "support_tickets.status AS status",
		"support_tickets.assigned_to AS assigned_to",
		q.epoch("support_tickets.created_at") + " AS created_s", q.epoch("support_tickets.resolved_at") + " AS resolved_s",
		q.epoch("support_tickets.updated_at") + " AS updated_s",
		"CASE WHEN " + resolvedExpr() + " THEN " + q.seconds() + " END AS res_seconds",
		"CASE WHEN " + resolvedExpr() + " THEN 1 ELSE 0 END AS resolved",
		reportMetExpr + " AS met", reportMeasuredExpr + " AS measured",
		"CASE WHEN support_tickets.status NOT IN ('resolved', 'closed') THEN 1 ELSE 0 END AS is_open",
		reportRatingExpr + " AS rating", "CASE WHEN " + escalatedExpr + " THEN 1 ELSE 0 END AS escalated",
		"support_tickets.escalation_level AS esc_level", reportRepliesExpr + " AS replies", "support_tickets.sla_cycle AS sla_cycle_n",
	}, ", ")
	return q.filtered(q.s.core.In(q.ctx, q.spec.Scope()).Model(&Ticket{}).Select(sel))
}

// filtered restricts db (on support_tickets) to the report's period and filters.
func (q *reportQuery) filtered(db *gorm.DB) *gorm.DB {
	db = db.Where("support_tickets.created_at >= ? AND support_tickets.created_at < ?", q.spec.Start, q.spec.End)
	if len(q.spec.CustomerIDs) > 0 {
		db = db.Where("support_tickets.customer_id IN ?", q.spec.CustomerIDs)
	}
	if len(q.spec.Categories) > 0 {
		db = db.Where("support_tickets.category IN ?", q.spec.Categories)
	}
	if len(q.spec.Priorities) > 0 {
		db = db.Where("support_tickets.priority IN ?", q.spec.Priorities)
	}
	return db
}

// dimension is the facts column of a grouping other than week.
func dimension(g string) string {
	switch g {
	case GroupCategory:
		return "f.category"
	case GroupPriority:
		return "f.priority"
	case GroupAgent:
		return "f.assigned_to"
	case GroupCustomer:
		return "f.customer_id"
	}
	return ""
}

// RunReport computes spec's report and hands its rows to w in order: a
// ticket_export streams one row per ticket from the database cursor; a
// detailed_analytics report is aggregated by the database (per 15-minute
// bucket when grouped by week, folded into ISO weeks of the report's zone
// here), so memory is bounded by the number of groups, not of tickets.
// Errors: INTERNAL_ERROR (database), or w's error.
func (s *Store) RunReport(ctx context.Context, spec *ReportSpec, w ReportRowWriter) (ReportStats, error) {
	q := &reportQuery{s: s, ctx: ctx, spec: spec, sqlite: models.IsSQLite(s.core.DB)}
	if spec.ReportType == ReportTicketExport {
		return q.export(w)
	}
	return q.aggregate(w)
}

// export streams one row per ticket, oldest first.
func (q *reportQuery) export(w ReportRowWriter) (ReportStats, error) {
	var st ReportStats
	rows, err := q.facts().Order("support_tickets.created_at, support_tickets.id").Rows()
	if err != nil {
		return st, dbErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, number, customer, category, priority, status, agent string
			created, updated                                        int64
			resolvedAt                                              sql.NullInt64
			seconds                                                 sql.NullFloat64
			resolved, met, measured, open, escalated, level         int64
			replies, cycle                                          int64
			rating                                                  sql.NullInt64
		)
		if err := rows.Scan(&id, &number, &customer, &category, &priority, &status, &agent, &created, &resolvedAt, &updated,
			&seconds, &resolved, &met, &measured, &open, &rating, &escalated, &level, &replies, &cycle); err != nil {
			return st, dbErr(err)
		}
		st.Tickets++
		st.note(updated)
		vals := []any{id, number, customer, category, priority, status, agent, time.Unix(created, 0).UTC(), nil}
		if resolvedAt.Valid {
			vals[8] = time.Unix(resolvedAt.Int64, 0).UTC()
		}
		for _, m := range q.spec.Metrics {
			switch m {
			case MetricResolutionTime:
				if seconds.Valid {
					vals = append(vals, round(seconds.Float64/3600, 2))
				} else {
					vals = append(vals, nil)
				}
			case MetricSLACompliance:
				vals = append(vals, slaOutcome(met, measured, open == 1))
			case MetricCustomerSatisfaction:
				if rating.Valid {
					vals = append(vals, rating.Int64)
				} else {
					vals = append(vals, nil)
				}
			case MetricEscalationRate:
				vals = append(vals, escalated == 1, level)
			case MetricFirstContactResolution:
				vals = append(vals, replies, resolved == 1 && cycle == 1 && replies <= 1)
			}
		}
		if err := w.WriteRow(vals); err != nil {
			return st, err
		}
		st.Rows++
	}
	return st, dbErr(rows.Err())
}

// slaOutcome is a ticket's resolution SLA in one word: breached when any
// cycle breached, met when every measured cycle stopped in time, running
// while the ticket is open and nothing was decided, none otherwise.
func slaOutcome(met, measured int64, open bool) string {
	switch {
	case measured > met:
		return "breached"
	case measured > 0 && !open:
		return "met"
	case open:
		return "running"
	}
	return "none"
}

// note records the change time of a row read.
func (st *ReportStats) note(epoch int64) {
	t := time.Unix(epoch, 0).UTC()
	if st.Newest == nil || t.After(*st.Newest) {
		st.Newest = &t
	}
}

// reportGroup is the running sums of one group of a detailed report.
type reportGroup struct {
	keys                                         []string
	tickets, resolved                            int64
	seconds                                      float64
	met, measured, ratingSum, ratings, escalated int64
	fcr                                          int64
}

// aggregate computes the grouped figures and writes one row per group,
// ordered by the grouping's values.
func (q *reportQuery) aggregate(w ReportRowWriter) (ReportStats, error) {
	var st ReportStats
	week := slices.Contains(q.spec.Grouping, GroupWeek)
	var dims []string
	for _, g := range q.spec.Grouping {
		if g != GroupWeek {
			dims = append(dims, dimension(g))
		}
	}
	group := append([]string(nil), dims...)
	if week {
		group = append(group, fmt.Sprintf("(f.created_s / %d)", bucketSeconds))
	}
	sel := append(append([]string(nil), group...),
		"COUNT(*)", "COALESCE(SUM(f.resolved), 0)", "COALESCE(SUM(f.res_seconds), 0)",
		"COALESCE(SUM(f.met), 0)", "COALESCE(SUM(f.measured), 0)", "COALESCE(SUM(f.rating), 0)", "COUNT(f.rating)",
		"COALESCE(SUM(f.escalated), 0)", "COALESCE(SUM(CASE WHEN "+fcrExpr+" THEN 1 ELSE 0 END), 0)", "MAX(f.updated_s)")
	db := q.s.core.DB.WithContext(q.ctx).Table("(?) AS f", q.facts()).Select(strings.Join(sel, ", "))
	if len(group) > 0 {
		db = db.Group(strings.Join(group, ", "))
	}
	rows, err := db.Rows()
	if err != nil {
		return st, dbErr(err)
	}
	defer rows.Close()
	groups := map[string]*reportGroup{}
	loc := q.spec.Location()
	for rows.Next() {
		keys := make([]sql.NullString, len(dims))
		var bucket int64
		var g reportGroup
		var newest sql.NullInt64
		dest := make([]any, 0, len(dims)+11)
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		if week {
			dest = append(dest, &bucket)
		}
		dest = append(dest, &g.tickets, &g.resolved, &g.seconds, &g.met, &g.measured, &g.ratingSum, &g.ratings, &g.escalated, &g.fcr, &newest)
		if err := rows.Scan(dest...); err != nil {
			return st, dbErr(err)
		}
		if g.tickets == 0 {
			continue // no grouping and no ticket: the one row of zeros is written below
		}
		if newest.Valid {
			st.note(newest.Int64)
		}
		st.Tickets += g.tickets
		// The group's values in the grouping's order, week folded in.
		var vals []string
		d := 0
		for _, name := range q.spec.Grouping {
			if name == GroupWeek {
				y, wk := time.Unix(bucket*bucketSeconds, 0).In(loc).ISOWeek()
				vals = append(vals, fmt.Sprintf("%04d-W%02d", y, wk))
				continue
			}
			v := keys[d].String
			if name == GroupAgent && v == "" {
				v = "unassigned"
			}
			vals = append(vals, v)
			d++
		}
		key := strings.Join(vals, "\x00")
		acc := groups[key]
		if acc == nil {
			acc = &reportGroup{keys: vals}
			groups[key] = acc
		}
		acc.add(&g)
	}
	if err := rows.Err(); err != nil {
		return st, dbErr(err)
	}
	out := make([]*reportGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *reportGroup) int { return slices.Compare(a.keys, b.keys) })
	if len(q.spec.Grouping) == 0 && len(out) == 0 {
		out = append(out, &reportGroup{}) // totals of an empty period: zeros
	}
	for _, g := range out {
		if err := w.WriteRow(g.values(q.spec)); err != nil {
			return st, err
		}
		st.Rows++
	}
	return st, nil
}

// add adds o's sums to g's.
func (g *reportGroup) add(o *reportGroup) {
	g.tickets += o.tickets
	g.resolved += o.resolved
	g.seconds += o.seconds
	g.met += o.met
	g.measured += o.measured
	g.ratingSum += o.ratingSum
	g.ratings += o.ratings
	g.escalated += o.escalated
	g.fcr += o.fcr
}

// pct is part of whole in percent with one decimal; nil when whole is 0.
func pct(part, whole int64) any {
	if whole == 0 {
		return nil
	}
	return round(float64(part)*100/float64(whole), 1)
}

// values is the group's row in ReportColumns order.
func (g *reportGroup) values(spec *ReportSpec) []any {
	vals := make([]any, 0, len(g.keys)+1+2*len(spec.Metrics))
	for _, k := range g.keys {
		vals = append(vals, k)
	}
	vals = append(vals, g.tickets)
	for _, m := range spec.Metrics {
		switch m {
		case MetricResolutionTime:
			var avg any
			if g.resolved > 0 {
				avg = round(g.seconds/float64(g.resolved)/3600, 2)
			}
			vals = append(vals, g.resolved, avg)
		case MetricSLACompliance:
			vals = append(vals, g.measured, pct(g.met, g.measured))
		case MetricCustomerSatisfaction:
			var avg any
			if g.ratings > 0 {
				avg = round(float64(g.ratingSum)/float64(g.ratings), 2)
			}
			vals = append(vals, g.ratings, avg)
		case MetricEscalationRate:
			vals = append(vals, g.escalated, pct(g.escalated, g.tickets))
		case MetricFirstContactResolution:
			vals = append(vals, g.fcr, pct(g.fcr, g.resolved))
		}
	}
	return vals
}
