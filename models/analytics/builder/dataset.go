package builder

import (
	"fmt"
	"strings"

	"github.com/telcoplatform/platform/models/filter"
	"github.com/telcoplatform/platform/models/services"
)

// Dataset describes one dataset: what a definition may name.
type Dataset struct {
	Name        string
	Description string
	// TimeField is the column the period and the time dimensions apply to.
	TimeField  string
	Metrics    []Column
	Dimensions []Column
	// Filters are the fields the definition's filter may name, with their
	// filter types (string, enum, int, decimal, money, bool, time).
	Filters []Column
}

// aggregation is how a metric aggregates its expression.
type aggregation int

const (
	aggCount aggregation = iota // rows (expr "") or rows where expr holds
	aggSum                      // sum of expr (0 without rows)
	aggAvg                      // mean of expr's non-null values (sum and count carried apart)
	aggMin                      // least of expr
	aggMax                      // greatest of expr
	aggRatio                    // sum of expr / sum of den × scale (null when the sum of den is 0)
)

// metricDef is one metric of a dataset: an aggregation of an SQL
// expression over the dataset's source columns, chosen here.
type metricDef struct {
	col   Column
	agg   aggregation
	expr  string  // the condition counted, the value aggregated, the ratio's numerator
	den   string  // aggRatio: the denominator
	real  bool    // expr (and den) are floating point; else whole numbers (money in minor units)
	scale float64 // multiplies the result (0: 1); positive
}

// dimDef is one dimension of a dataset: a source column, or (unit set) a
// time dimension of the dataset's time field.
type dimDef struct {
	col  Column
	expr string // string and integer dimensions
	unit string // time dimensions: hour, day, week or month
}

// dataset is a dataset's definition: its public description, the SQL of
// its source rows (one table, or one with its joined tables, restricted
// by tenant and period) and its metrics, dimensions and filter fields,
// whose SQL names the source's columns.
type dataset struct {
	info Dataset
	// from is the FROM clause of the source: alias is the table the
	// tenant and the period restrict (timeCol its time column); joined
	// tables join on the same organization and environment.
	from, alias, timeCol string
	// cols is the source's select list ("x.col AS col").
	cols    func(d dialect) []string
	metrics []metricDef
	dims    []dimDef
	filter  filter.Schema
}

// dimension returns the dimension called name.
func (ds *dataset) dimension(name string) (dimDef, bool) {
	for _, d := range ds.dims {
		if d.col.Name == name {
			return d, true
		}
	}
	return dimDef{}, false
}

// metric returns the metric called name.
func (ds *dataset) metric(name string) (metricDef, bool) {
	for _, m := range ds.metrics {
		if m.col.Name == name {
			return m, true
		}
	}
	return metricDef{}, false
}

func (ds *dataset) dimensionNames() []string {
	out := make([]string, len(ds.dims))
	for i, d := range ds.dims {
		out[i] = d.col.Name
	}
	return out
}

func (ds *dataset) metricNames() []string {
	out := make([]string, len(ds.metrics))
	for i, m := range ds.metrics {
		out[i] = m.col.Name
	}
	return out
}

// public returns ds's description with its columns filled.
func (ds *dataset) public() Dataset {
	out := ds.info
	for _, m := range ds.metrics {
		out.Metrics = append(out.Metrics, m.col)
	}
	for _, d := range ds.dims {
		out.Dimensions = append(out.Dimensions, d.col)
	}
	for _, name := range ds.filter.Names() {
		f := ds.filter[name]
		desc := ""
		switch {
		case f.Type == filter.Enum && f.Ordered:
			desc = "one of " + strings.Join(f.Values, ", ") + " (ordered)"
		case f.Type == filter.Enum:
			desc = "one of " + strings.Join(f.Values, ", ")
		case f.Type == filter.String && f.Allows(filter.Contains):
			desc = "takes ~ (contains)"
		}
		if f.Nullable {
			desc = strings.TrimPrefix(desc+"; may be null", "; ")
		}
		out.Filters = append(out.Filters, Column{Name: name, Type: f.Type.String(), Description: desc})
	}
	return out
}

// Datasets returns every dataset, in a stable order.
func Datasets() []Dataset {
	all := datasets()
	out := make([]Dataset, len(all))
	for i := range all {
		out[i] = all[i].public()
	}
	return out
}

// DatasetNames returns the datasets' names, in the order of Datasets.
func DatasetNames() []string {
	all := datasets()
	out := make([]string, len(all))
	for i := range all {
		out[i] = all[i].info.Name
	}
	return out
}

// LookupDataset returns the description of the dataset called name, and
// whether it exists.
func LookupDataset(name string) (Dataset, bool) {
	ds, ok := lookup(name)
	if !ok {
		return Dataset{}, false
	}
	return ds.public(), true
}

// lookup returns the dataset called name.
func lookup(name string) (*dataset, bool) {
	all := datasets()
	for i := range all {
		if all[i].info.Name == name {
			return &all[i], true
		}
	}
	return nil, false
}

// datasets is the table of datasets, in the order Datasets lists them.
func datasets() []dataset {
	return []dataset{servicesDataset(), telemetryDataset(), usageDataset(), invoicesDataset(),
		paymentsDataset(), operationsDataset(), ticketsDataset(), slaDataset()}
}

// Constructors of the tables' entries.

func count(name, cond, desc string) metricDef {
	return metricDef{col: Column{Name: name, Type: TypeInteger, Description: desc}, agg: aggCount, expr: cond}
}

func metric(name, typ string, agg aggregation, expr string, real bool, desc string) metricDef {
	return metricDef{col: Column{Name: name, Type: typ, Description: desc}, agg: agg, expr: expr, real: real}
}

func scaled(m metricDef, scale float64) metricDef {
	m.scale = scale
	return m
}

func pct(name, num, den, desc string) metricDef {
	return metricDef{col: Column{Name: name, Type: TypeNumber, Description: desc}, agg: aggRatio, expr: num, den: den, scale: 100}
}

func dim(name, expr, desc string) dimDef {
	return dimDef{col: Column{Name: name, Type: TypeString, Description: desc}, expr: expr}
}

// timeDims are the time dimensions of a dataset's time field.
func timeDims(field string) []dimDef {
	var out []dimDef
	for _, u := range TimeDimensions() {
		out = append(out, dimDef{col: Column{Name: u, Type: TypeTimestamp,
			Description: fmt.Sprintf("start of the %s of %s in the time zone", strings.Replace(u, "week", "ISO week (Monday)", 1), field)}, unit: u})
	}
	return out
}

// orgDim is the organization dimension (one value for a tenant's run).
func orgDim() dimDef {
	return dim("organization_id", "organization_id", "the organization (provider staff: every organization)")
}

// text is the operators of an identifier field.
func text() []filter.Op { return []filter.Op{filter.Eq, filter.Ne, filter.In, filter.NotIn} }

// categoryCase is the SQL of the catalog category of the service kind in
// col ("other" for an unknown kind): literals from the kind table.
func categoryCase(col string) string {
	var b strings.Builder
	b.WriteString("CASE " + col)
	for _, p := range services.KindProfiles() {
		fmt.Fprintf(&b, " WHEN '%s' THEN '%s'", sqlLiteral(p.Kind), sqlLiteral(p.Category))
	}
	b.WriteString(" ELSE 'other' END")
	return b.String()
}

// categories returns the catalog categories of the service kinds, in
// order, and "other".
func categories() []string {
	var out []string
	for _, p := range services.KindProfiles() {
		if !strings.Contains(strings.Join(out, ","), p.Category) {
			out = append(out, p.Category)
		}
	}
	return append(out, "other")
}

// sqlLiteral keeps the letters, digits, _ and - of a constant of the
// platform's tables (never user text), so it is safe between quotes.
func sqlLiteral(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return -1
	}, s)
}
