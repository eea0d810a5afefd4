package builder

import (
	"errors"
	"fmt"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
)

// slotSeconds is the width of the slots a run with a time dimension
// aggregates in before folding them into the zone's units: 15 minutes,
// which every UTC offset in use is a multiple of.
const slotSeconds = 15 * 60

// dialect writes the SQL that differs between SQLite and PostgreSQL.
type dialect struct{ sqlite bool }

// epoch is the timestamp col in whole seconds since the epoch.
func (d dialect) epoch(col string) string {
	if d.sqlite {
		return fmt.Sprintf("CAST(strftime('%%s', %s) AS INTEGER)", col)
	}
	return fmt.Sprintf("CAST(FLOOR(EXTRACT(EPOCH FROM %s)) AS BIGINT)", col)
}

// slot is the 15-minute slot (seconds since the epoch / 900) of col.
func (d dialect) slot(col string) string {
	if d.sqlite {
		return fmt.Sprintf("(%s / %d)", d.epoch(col), slotSeconds)
	}
	return fmt.Sprintf("CAST(FLOOR(EXTRACT(EPOCH FROM %s) / %d) AS BIGINT)", col, slotSeconds)
}

// seconds is to - from in seconds, a floating-point number (whole
// seconds on SQLite).
func (d dialect) seconds(from, to string) string {
	if d.sqlite {
		return fmt.Sprintf("CAST(%s - %s AS REAL)", d.epoch(to), d.epoch(from))
	}
	return fmt.Sprintf("CAST(EXTRACT(EPOCH FROM (%s - %s)) AS DOUBLE PRECISION)", to, from)
}

// cast makes expr a floating-point (real) or a whole number.
func (d dialect) cast(expr string, real bool) string {
	switch {
	case !real:
		return "CAST(" + expr + " AS BIGINT)"
	case d.sqlite:
		return "CAST(" + expr + " AS REAL)"
	}
	return "CAST(" + expr + " AS DOUBLE PRECISION)"
}

// bytewise orders the string expr by its bytes (SQLite's default; the
// "C" collation of PostgreSQL), as the folded rows are sorted.
func (d dialect) bytewise(expr string) string {
	if d.sqlite {
		return expr
	}
	return expr + ` COLLATE "C"`
}

// partial is one aggregate column a metric reads: a whole number or a
// floating-point number, possibly null.
type partial struct {
	sql  string
	real bool
}

// partials are the aggregate columns of m, which fold across groups: a
// count or a sum adds, an average is its sum and count, a ratio its two
// sums, min and max keep the extreme.
func (m metricDef) partials(d dialect) []partial {
	switch m.agg {
	case aggCount:
		if m.expr == "" {
			return []partial{{sql: "COUNT(*)"}}
		}
		return []partial{{sql: d.cast("COALESCE(SUM(CASE WHEN "+m.expr+" THEN 1 ELSE 0 END), 0)", false)}}
	case aggSum:
		return []partial{{sql: d.cast("COALESCE(SUM("+m.expr+"), 0)", m.real), real: m.real}}
	case aggAvg:
		return []partial{{sql: d.cast("SUM("+m.expr+")", m.real), real: m.real}, {sql: "COUNT(" + m.expr + ")"}}
	case aggMin:
		return []partial{{sql: d.cast("MIN("+m.expr+")", m.real), real: m.real}}
	case aggMax:
		return []partial{{sql: d.cast("MAX("+m.expr+")", m.real), real: m.real}}
	}
	return []partial{{sql: d.cast("COALESCE(SUM("+m.expr+"), 0)", m.real), real: m.real},
		{sql: d.cast("COALESCE(SUM("+m.den+"), 0)", m.real), real: m.real}}
}

// orderExpr is the SQL of m's value for ORDER BY (scale is positive, so
// it does not change the order).
func (m metricDef) orderExpr(d dialect) string {
	switch m.agg {
	case aggAvg:
		return "AVG(" + d.cast(m.expr, true) + ")"
	case aggRatio:
		return "(" + d.cast("SUM("+m.expr+")", true) + " / NULLIF(" + d.cast("SUM("+m.den+")", true) + ", 0))"
	}
	return m.partials(d)[0].sql
}

// selectExpr is the SQL of a non-time dimension's value.
func (dd dimDef) selectExpr() string {
	if dd.col.Type == TypeString {
		return "COALESCE(" + dd.expr + ", '')"
	}
	return dd.expr
}

// query is a compiled plan: the statement and its arguments, and how to
// read its rows.
type query struct {
	sql  string
	args []any
	ds   *dataset
	dims []dimDef    // in the definition's order
	mets []metricDef // in the definition's order
	// folded: the statement groups by 15-minute slot (a time dimension
	// is asked); the rows are folded, sorted and limited by the caller.
	folded  bool
	dialect dialect
}

// columns are the output columns: the dimensions, then the metrics.
func (q *query) columns() []Column {
	var out []Column
	for _, dd := range q.dims {
		out = append(out, dd.col)
	}
	for _, m := range q.mets {
		out = append(out, m.col)
	}
	return out
}

// compile writes the statement of plan over scope. Errors:
// VALIDATION_ERROR (a definition that does not validate), INTERNAL_ERROR
// (a scope without an environment).
func compile(plan *Plan, scope Scope, d dialect) (*query, error) {
	if plan == nil || plan.Location == nil {
		return nil, models.Internal(errors.New("builder: run of a plan that was not validated"))
	}
	if !scope.Environment.Valid() {
		return nil, models.Internal(fmt.Errorf("builder: scope without a valid environment (%q)", scope.Environment))
	}
	def := plan.Definition
	ds, ok := lookup(def.Dataset)
	if !ok {
		return nil, models.Invalid(models.FieldIssue{Field: "dataset", Issue: "must be one of " + strings.Join(DatasetNames(), ", ")})
	}
	q := &query{ds: ds, dialect: d}
	for _, name := range def.Dimensions {
		dd, ok := ds.dimension(name)
		if !ok {
			return nil, models.Invalid(models.FieldIssue{Field: "dimensions", Issue: fmt.Sprintf("unknown dimension %q", name)})
		}
		q.dims = append(q.dims, dd)
		q.folded = q.folded || dd.unit != ""
	}
	for _, name := range def.Metrics {
		m, ok := ds.metric(name)
		if !ok {
			return nil, models.Invalid(models.FieldIssue{Field: "metrics", Issue: fmt.Sprintf("unknown metric %q", name)})
		}
		q.mets = append(q.mets, m)
	}
	if len(q.mets) == 0 {
		return nil, models.Invalid(models.FieldIssue{Field: "metrics", Issue: "name at least one metric"})
	}

	// The source: the dataset's rows of the tenant and the period.
	a := ds.alias
	src := "SELECT " + strings.Join(ds.cols(d), ", ") + " FROM " + ds.from + " WHERE " + a + ".environment = ?"
	q.args = append(q.args, string(scope.Environment))
	if scope.OrganizationID != "" {
		src += " AND " + a + ".organization_id = ?"
		q.args = append(q.args, scope.OrganizationID)
	}
	src += " AND " + a + "." + ds.timeCol + " >= ? AND " + a + "." + ds.timeCol + " < ?"
	q.args = append(q.args, plan.From.UTC(), plan.To.UTC())

	var sel, group []string
	for _, dd := range q.dims {
		if dd.unit == "" {
			sel = append(sel, dd.selectExpr())
			group = append(group, dd.selectExpr())
		}
	}
	if q.folded {
		sel = append(sel, d.slot(ds.info.TimeField))
		group = append(group, d.slot(ds.info.TimeField))
	}
	for _, m := range q.mets {
		for _, p := range m.partials(d) {
			sel = append(sel, p.sql)
		}
	}
	sel = append(sel, "MAX("+d.epoch(ds.info.TimeField)+")")

	stmt := "SELECT " + strings.Join(sel, ", ") + " FROM (" + src + ") d"
	if def.Filter != "" {
		f, err := filter.Compile(ds.filter, def.Filter)
		if err != nil {
			return nil, err
		}
		stmt += " WHERE " + f.SQL
		q.args = append(q.args, f.Args...)
	}
	if len(group) > 0 {
		stmt += " GROUP BY " + strings.Join(group, ", ")
	}
	if !q.folded {
		if order := q.orderBy(def.Sort, d); order != "" {
			stmt += " ORDER BY " + order
		}
		stmt += " LIMIT ?"
		q.args = append(q.args, def.Limit)
	}
	q.sql = stmt
	return q, nil
}

// orderBy is the ORDER BY list of a statement without time dimensions:
// the sort keys (empty values last whatever the direction), then every
// dimension ascending.
func (q *query) orderBy(sorts []Sort, d dialect) string {
	var parts []string
	dir := func(desc bool) string {
		if desc {
			return " DESC"
		}
		return " ASC"
	}
	dimKey := func(dd dimDef, desc bool) {
		expr := dd.selectExpr()
		if dd.col.Type == TypeString {
			expr = d.bytewise(expr)
		}
		parts = append(parts, expr+dir(desc))
	}
	for _, s := range sorts {
		if dd, ok := q.ds.dimension(s.Field); ok {
			dimKey(dd, s.Direction == Desc)
		} else if m, ok := q.ds.metric(s.Field); ok {
			e := m.orderExpr(d)
			parts = append(parts, "CASE WHEN "+e+" IS NULL THEN 1 ELSE 0 END", e+dir(s.Direction == Desc))
		}
	}
	for _, dd := range q.dims {
		dimKey(dd, false)
	}
	return strings.Join(parts, ", ")
}
