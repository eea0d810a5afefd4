package builder

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// MaxSlotRows is the most rows (groups of 15-minute slots) a run with a
// time dimension reads from the database before folding; past it the
// run fails with a VALIDATION_ERROR asking for a shorter period or fewer
// dimensions.
const MaxSlotRows = 1000000

// Scope is what a run reads: one organization's records, or every
// organization's (OrganizationID "": provider staff only, the caller
// decides), of one environment.
type Scope struct {
	OrganizationID string
	Environment    models.Environment
}

// Store runs plans over the database.
type Store struct {
	core *models.Store
	// maxSlotRows and maxGroups bound a run with a time dimension
	// (MaxSlotRows and MaxFoldGroups; tests lower them).
	maxSlotRows, maxGroups int
}

// NewStore returns the Store of the report builder over core's database.
func NewStore(core *models.Store) *Store {
	return &Store{core: core, maxSlotRows: MaxSlotRows, maxGroups: MaxFoldGroups}
}

// Stats of a written file.
type Stats struct {
	Rows   int64
	Newest *time.Time // newest TimeField value read (data freshness), nil without rows
}

// note records the newest time field read (seconds since the epoch).
func (st *Stats) note(epoch sql.NullInt64) {
	if !epoch.Valid {
		return
	}
	t := time.Unix(epoch.Int64, 0).UTC()
	if st.Newest == nil || t.After(*st.Newest) {
		st.Newest = &t
	}
}

// Rows runs plan over scope and returns its rows, each as values in
// plan.Columns order: string, int64, float64, models.Money, time.Time (in
// plan.Location) or nil (no value: the mean, extreme or ratio of no rows).
// Errors are models errors.
func (s *Store) Rows(ctx context.Context, plan *Plan, scope Scope) ([][]any, Stats, error) {
	q, err := compile(plan, scope, s.dialect())
	if err != nil {
		return nil, Stats{}, err
	}
	var out [][]any
	st, err := s.run(ctx, q, plan, func(vals []any) error {
		out = append(out, vals)
		return nil
	})
	return out, st, err
}

// Write runs plan over scope and streams the file (format "json" or
// "csv") to w. id is the report's id, written into the JSON document's
// header. Nothing is written when the plan or the scope is invalid.
// Errors are models errors (a failure of w: INTERNAL_ERROR).
func (s *Store) Write(ctx context.Context, w io.Writer, id string, plan *Plan, scope Scope, format string, generatedAt time.Time) (Stats, error) {
	if format != FormatJSON && format != FormatCSV {
		return Stats{}, models.Invalid(models.FieldIssue{Field: "format", Issue: "must be json or csv"})
	}
	q, err := compile(plan, scope, s.dialect())
	if err != nil {
		return Stats{}, err
	}
	f, err := newFile(w, id, plan, q.columns(), format, generatedAt)
	if err != nil {
		return Stats{}, models.Internal(err)
	}
	st, err := s.run(ctx, q, plan, f.writeRow)
	if err != nil {
		return st, err
	}
	if err := f.close(st.Newest); err != nil {
		return st, models.Internal(err)
	}
	return st, nil
}

func (s *Store) dialect() dialect { return dialect{sqlite: models.IsSQLite(s.core.DB)} }

// cell is one partial aggregate read: n for whole numbers, x for
// floating-point ones; ok is false for null.
type cell struct {
	n  int64
	x  float64
	ok bool
}

// group is one output group being folded: its dimension values and its
// metrics' partials, in the query's order.
type group struct {
	dims  []any
	cells [][]cell
}

// run executes q and hands every output row to emit: straight from the
// database cursor without a time dimension, else after folding the
// 15-minute slots into the zone's units, sorting and limiting.
func (s *Store) run(ctx context.Context, q *query, plan *Plan, emit func([]any) error) (Stats, error) {
	var st Stats
	rows, err := s.core.DB.WithContext(ctx).Raw(q.sql, q.args...).Rows()
	if err != nil {
		return st, models.DBErr(err)
	}
	defer rows.Close()
	r := newReader(q, plan.Location)
	groups := map[string]*group{}
	var read int
	for rows.Next() {
		g, key, fresh, err := r.read(rows)
		if err != nil {
			return st, models.DBErr(err)
		}
		st.note(fresh)
		if !q.folded {
			if err := emit(q.values(g.dims, g.cells)); err != nil {
				return st, models.Internal(err)
			}
			st.Rows++
			continue
		}
		if read++; read > s.maxSlotRows {
			return st, tooMany(fmt.Sprintf("the report reads more than %d groups of 15-minute slots", s.maxSlotRows))
		}
		acc := groups[key]
		if acc == nil {
			if len(groups) == s.maxGroups {
				return st, tooMany(fmt.Sprintf("the report has more than %d groups", s.maxGroups))
			}
			groups[key] = g
			continue
		}
		for i, m := range q.mets {
			m.fold(acc.cells[i], g.cells[i])
		}
	}
	if err := rows.Err(); err != nil {
		return st, models.DBErr(err)
	}
	if !q.folded {
		return st, nil
	}
	out := make([][]any, 0, len(groups))
	for _, g := range groups {
		out = append(out, q.values(g.dims, g.cells))
	}
	q.sortRows(out, plan.Definition.Sort)
	if len(out) > plan.Definition.Limit {
		out = out[:plan.Definition.Limit]
	}
	for _, vals := range out {
		if err := emit(vals); err != nil {
			return st, models.Internal(err)
		}
		st.Rows++
	}
	return st, nil
}

// reader scans the rows of a query.
type reader struct {
	q     *query
	loc   *time.Location
	parts [][]partial // each metric's partial columns
	plain int         // the dimensions read from the database (not time)
}

func newReader(q *query, loc *time.Location) *reader {
	r := &reader{q: q, loc: loc, parts: make([][]partial, len(q.mets))}
	for i, m := range q.mets {
		r.parts[i] = m.partials(q.dialect)
	}
	for _, dd := range q.dims {
		if dd.unit == "" {
			r.plain++
		}
	}
	return r
}

// read scans the current row: its group (the dimension values in the
// definition's order, time dimensions as the start of the slot's unit in
// the zone, and the metrics' partials), the group's key and the newest
// time field of its records.
func (r *reader) read(rows *sql.Rows) (*group, string, sql.NullInt64, error) {
	q := r.q
	keys := make([]sql.NullString, r.plain)
	var slot int64
	var fresh sql.NullInt64
	dest := make([]any, 0, r.plain+2+2*len(q.mets))
	for i := range keys {
		dest = append(dest, &keys[i])
	}
	if q.folded {
		dest = append(dest, &slot)
	}
	g := &group{dims: make([]any, len(q.dims)), cells: make([][]cell, len(q.mets))}
	var ints []*sql.NullInt64
	var reals []*sql.NullFloat64
	for i := range q.mets {
		for _, p := range r.parts[i] {
			if p.real {
				reals = append(reals, new(sql.NullFloat64))
				dest = append(dest, reals[len(reals)-1])
			} else {
				ints = append(ints, new(sql.NullInt64))
				dest = append(dest, ints[len(ints)-1])
			}
		}
	}
	dest = append(dest, &fresh)
	if err := rows.Scan(dest...); err != nil {
		return nil, "", fresh, err
	}
	for i := range q.mets {
		for _, p := range r.parts[i] {
			var c cell
			if p.real {
				v := reals[0]
				reals = reals[1:]
				c = cell{x: v.Float64, n: int64(v.Float64), ok: v.Valid}
			} else {
				v := ints[0]
				ints = ints[1:]
				c = cell{n: v.Int64, x: float64(v.Int64), ok: v.Valid}
			}
			g.cells[i] = append(g.cells[i], c)
		}
	}
	at := time.Unix(slot*slotSeconds, 0).In(r.loc)
	var key strings.Builder
	k := 0
	for i, dd := range q.dims {
		if dd.unit != "" {
			t := unitStart(at, dd.unit)
			g.dims[i] = t
			fmt.Fprintf(&key, "%d\x00", t.Unix())
			continue
		}
		g.dims[i] = dimValue(dd, keys[k].String)
		key.WriteString(keys[k].String + "\x00")
		k++
	}
	return g, key.String(), fresh, nil
}

// tooMany is the error of a run past its bounds.
func tooMany(what string) error {
	return models.Invalid(models.FieldIssue{Field: "period", Issue: what + ": narrow the period, choose a coarser time dimension or fewer dimensions"})
}

// dimValue is the value of a non-time dimension read as text.
func dimValue(dd dimDef, s string) any {
	if dd.col.Type == TypeInteger {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if x, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(x)
		}
		return nil
	}
	return s
}

// fold adds the partials o of one slot to acc.
func (m metricDef) fold(acc, o []cell) {
	for i := range acc {
		a, b := &acc[i], o[i]
		switch {
		case !b.ok:
		case !a.ok:
			*a = b
		case m.agg == aggMin && (m.real && b.x < a.x || !m.real && b.n < a.n):
			*a = b
		case m.agg == aggMax && (m.real && b.x > a.x || !m.real && b.n > a.n):
			*a = b
		case m.agg != aggMin && m.agg != aggMax:
			a.n += b.n
			a.x += b.x
		}
	}
}

// values is a group's output row: its dimension values, then its metrics'.
func (q *query) values(dims []any, cells [][]cell) []any {
	out := append(make([]any, 0, len(dims)+len(q.mets)), dims...)
	for i, m := range q.mets {
		out = append(out, m.value(cells[i]))
	}
	return out
}

// value is the metric's value from its partials: int64 (integer),
// models.Money (money), float64 rounded to 4 decimals (number) or nil.
func (m metricDef) value(c []cell) any {
	scale := m.scale
	if scale == 0 {
		scale = 1
	}
	num := func(v cell) float64 {
		if m.real {
			return v.x
		}
		return float64(v.n)
	}
	switch m.agg {
	case aggCount:
		return c[0].n
	case aggAvg:
		if c[1].n == 0 || !c[0].ok {
			return nil
		}
		avg := num(c[0]) / float64(c[1].n)
		if m.col.Type == TypeMoney {
			return models.Money(math.Round(avg))
		}
		return round4(avg * scale)
	case aggRatio:
		if num(c[1]) == 0 {
			return nil
		}
		return round4(num(c[0]) / num(c[1]) * scale)
	}
	if !c[0].ok {
		return nil
	}
	switch m.col.Type {
	case TypeMoney:
		return models.Money(c[0].n)
	case TypeInteger:
		return c[0].n
	}
	return round4(num(c[0]) * scale)
}

// round4 rounds x to 4 decimals.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// sortRows sorts folded rows by the sort keys (empty values last whatever
// the direction), then by every dimension ascending, as the database
// sorts the rows of a run without a time dimension.
func (q *query) sortRows(rows [][]any, sorts []Sort) {
	index := func(name string) int {
		for i, dd := range q.dims {
			if dd.col.Name == name {
				return i
			}
		}
		for i, m := range q.mets {
			if m.col.Name == name {
				return len(q.dims) + i
			}
		}
		return -1
	}
	type key struct {
		i    int
		desc bool
	}
	var keys []key
	for _, s := range sorts {
		if i := index(s.Field); i >= 0 {
			keys = append(keys, key{i, s.Direction == Desc})
		}
	}
	for i := range q.dims {
		keys = append(keys, key{i, false})
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for _, k := range keys {
			x, y := a[k.i], b[k.i]
			switch {
			case x == nil && y == nil:
				continue
			case x == nil:
				return 1
			case y == nil:
				return -1
			}
			c := compareValues(x, y)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// compareValues orders two values of one column.
func compareValues(x, y any) int {
	switch a := x.(type) {
	case string:
		b, _ := y.(string)
		return strings.Compare(a, b)
	case int64:
		b, _ := y.(int64)
		return cmp.Compare(a, b)
	case float64:
		b, _ := y.(float64)
		return cmp.Compare(a, b)
	case models.Money:
		b, _ := y.(models.Money)
		return cmp.Compare(a, b)
	case time.Time:
		b, _ := y.(time.Time)
		return a.Compare(b)
	}
	return 0
}
