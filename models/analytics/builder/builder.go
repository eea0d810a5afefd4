// Package builder is the engine of the analytics report builder (POST
// /v1/analytics/reports): datasets with allow-listed metrics and
// dimensions (Datasets), the validation of a report definition against
// them (Validate), its compilation to parameterised SQL restricted to one
// tenant, and its execution, streaming the rows to a CSV or JSON file
// (Store.Write).
//
// No user text reaches the SQL: column expressions come only from the
// datasets' allow-lists, directions are written by the package, and every
// value (the tenant, the period, the filter's values, the limit) is a "?"
// argument. Without a time dimension the database groups, sorts and
// limits and the rows stream to the file. With one (hour, day, week or
// month of the dataset's time field in the definition's time zone) the
// database aggregates per 15-minute slot and the slots are folded here
// into the zone's units, then sorted and limited, bounded by
// MaxFoldGroups.
package builder

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
	"github.com/telcoplatform/platform/models/filter"
)

// Bounds of a definition.
const (
	// DefaultLimit is the number of rows of a definition without a limit.
	DefaultLimit = 10000
	// MaxLimit is the largest limit.
	MaxLimit = 100000
	// MaxMetrics is the most metrics one definition names.
	MaxMetrics = 20
	// MaxDimensions is the most dimensions one definition names.
	MaxDimensions = 8
	// MaxTimeUnits is the most hours, days, weeks or months a time
	// dimension may span over the period.
	MaxTimeUnits = 10000
	// MaxFoldGroups is the most output groups (after folding the
	// 15-minute slots into the zone's units) a run with a time dimension
	// holds; past it the run fails with a VALIDATION_ERROR asking for a
	// shorter period, a coarser time dimension or fewer dimensions (see
	// also MaxSlotRows).
	MaxFoldGroups = 200000
)

// The time dimensions: the hour, day, ISO week (from Monday) or month of
// the dataset's time field in the definition's time zone.
const (
	DimHour  = "hour"
	DimDay   = "day"
	DimWeek  = "week"
	DimMonth = "month"
)

// TimeDimensions returns the time dimensions every dataset offers, finest
// first.
func TimeDimensions() []string { return []string{DimHour, DimDay, DimWeek, DimMonth} }

// Column types.
const (
	TypeString    = "string"
	TypeInteger   = "integer"
	TypeNumber    = "number"
	TypeMoney     = "money"
	TypeTimestamp = "timestamp"
	TypeBoolean   = "boolean"
)

// Definition is a report definition's query: what is saved, validated and
// run.
type Definition struct {
	Dataset    string   `json:"dataset"`              // services, telemetry, usage, invoices, payments, operations, tickets, sla
	Metrics    []string `json:"metrics"`              // names from the dataset's metric allow-list; at least 1
	Dimensions []string `json:"dimensions,omitempty"` // names from the dataset's dimension allow-list (GROUP BY), incl. hour/day/week/month
	Filter     string   `json:"filter,omitempty"`     // the filter language over the dataset's filter fields
	Sort       []Sort   `json:"sort,omitempty"`       // by a chosen metric or dimension
	Limit      int      `json:"limit,omitempty"`      // rows, 1..MaxLimit; default DefaultLimit
	Period     string   `json:"period,omitempty"`     // an analytics named period, relative to the run's time: default last_30_days
	From       string   `json:"from,omitempty"`       // or absolute: RFC 3339 or YYYY-MM-DD in Timezone; with To; not with Period
	To         string   `json:"to,omitempty"`         // exclusive
	Timezone   string   `json:"timezone,omitempty"`   // IANA, default UTC
}

// Sort is one sort key of a definition.
type Sort struct {
	Field     string `json:"field"`
	Direction string `json:"direction,omitempty"` // asc (default) or desc
}

// Sort directions.
const (
	Asc  = "asc"
	Desc = "desc"
)

// Column describes a metric, a dimension or an output column. Type is
// string, integer, number, money (a decimal string), timestamp or boolean
// (a filter field's Type is its filter type: string, enum, int, decimal,
// money, bool or time).
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
}

// Plan is a validated definition with the run's resolved period.
type Plan struct {
	Definition Definition     // normalised: defaults filled (period, timezone, limit, sort direction)
	From, To   time.Time      // [From, To) in Location
	Location   *time.Location // the definition's zone
	Columns    []Column       // output columns in order: the dimensions, then the metrics
}

// Validate checks def at now (relative periods resolve against now). Every
// problem is reported at once in one VALIDATION_ERROR naming the field
// ("dataset", "metrics[1]", "dimensions[0]", "sort[0].field", "filter"
// with the filter's position detail, "limit", "period", "from", "to",
// "timezone"); a metric or dimension outside the dataset's allow-list is
// named with the allowed names.
func Validate(def Definition, now time.Time) (*Plan, error) {
	var v models.Validator
	def = trimmed(def)
	p := &Plan{Location: time.UTC}
	if def.Timezone == "" {
		def.Timezone = "UTC"
	}
	loc, err := time.LoadLocation(def.Timezone)
	if err != nil || def.Timezone == "Local" || strings.HasPrefix(def.Timezone, "/") {
		v.Add("timezone", "must be an IANA time zone name, such as Europe/London or UTC")
	} else {
		p.Location = loc
	}
	okPeriod := resolvePeriod(&v, &def, p, now)
	switch {
	case def.Limit == 0:
		def.Limit = DefaultLimit
	case def.Limit < 0 || def.Limit > MaxLimit:
		v.Add("limit", fmt.Sprintf("must be between 1 and %d", MaxLimit))
	}
	ds, ok := lookup(def.Dataset)
	if !ok {
		v.Add("dataset", "must be one of "+strings.Join(DatasetNames(), ", "))
		return nil, v.Err()
	}
	var filterPos any
	if def.Filter != "" {
		if _, err := filter.Compile(ds.filter, def.Filter); err != nil {
			e := models.AsError(err)
			if e.Code != models.CodeValidation {
				return nil, e
			}
			issues, _ := e.Details["fields"].([]models.FieldIssue)
			for _, is := range issues {
				v.Add(is.Field, is.Issue)
			}
			filterPos = e.Details["position"]
		}
	}
	p.Columns = checkColumns(&v, ds, &def)
	if okPeriod {
		for i, name := range def.Dimensions {
			if d, ok := ds.dimension(name); ok && d.unit != "" && !unitsWithin(p.From, p.To, d.unit, MaxTimeUnits) {
				v.Add(fmt.Sprintf("dimensions[%d]", i), fmt.Sprintf("the period spans more than %d of %s: narrow the period or choose a coarser time dimension", MaxTimeUnits, plural(d.unit)))
			}
		}
	}
	if err := v.Err(); err != nil {
		if filterPos != nil {
			return nil, models.AsError(err).WithDetail("position", filterPos)
		}
		return nil, err
	}
	p.Definition = def
	return p, nil
}

// trimmed returns def with its names trimmed and lower-case directions.
func trimmed(def Definition) Definition {
	t := strings.TrimSpace
	def.Dataset, def.Filter, def.Period, def.From, def.To, def.Timezone = t(def.Dataset), t(def.Filter), t(def.Period), t(def.From), t(def.To), t(def.Timezone)
	def.Metrics = slices.Clone(def.Metrics)
	for i := range def.Metrics {
		def.Metrics[i] = t(def.Metrics[i])
	}
	def.Dimensions = slices.Clone(def.Dimensions)
	for i := range def.Dimensions {
		def.Dimensions[i] = t(def.Dimensions[i])
	}
	def.Sort = slices.Clone(def.Sort)
	for i := range def.Sort {
		def.Sort[i].Field = t(def.Sort[i].Field)
		def.Sort[i].Direction = strings.ToLower(t(def.Sort[i].Direction))
	}
	return def
}

// resolvePeriod checks the period of def (a named period, by default
// last_30_days, or from and to) and sets p's From and To in p.Location;
// ok is false when the period is invalid.
func resolvePeriod(v *models.Validator, def *Definition, p *Plan, now time.Time) bool {
	loc := p.Location
	if def.From == "" && def.To == "" {
		if def.Period == "" {
			def.Period = analytics.DefaultPeriod
		}
		from, to, ok := analytics.PeriodWindow(def.Period, now, loc)
		if !ok {
			v.Add("period", "must be one of "+strings.Join(analytics.Periods(), ", "))
			return false
		}
		p.From, p.To = from, to
		return true
	}
	v.Check(def.Period == "", "period", "cannot be combined with from and to")
	v.Check(def.From != "", "from", "is required with to")
	v.Check(def.To != "", "to", "is required with from")
	var okFrom, okTo bool
	if def.From != "" {
		p.From, okFrom = analytics.ParseTime(def.From, loc)
		v.Check(okFrom, "from", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
	}
	if def.To != "" {
		p.To, okTo = analytics.ParseTime(def.To, loc)
		v.Check(okTo, "to", "must be an RFC 3339 timestamp or a date (YYYY-MM-DD)")
	}
	if !okFrom || !okTo {
		return false
	}
	if !p.To.After(p.From) {
		v.Add("to", "must be after from")
		return false
	}
	if p.From.Year() < 2000 || p.To.Year() > 2100 {
		v.Add("from", "must lie between the years 2000 and 2100, as must to")
		return false
	}
	p.From, p.To = p.From.In(loc), p.To.In(loc)
	return def.Period == ""
}

// checkColumns checks the metrics, dimensions and sort of def against ds,
// fills the sort directions and returns the output columns.
func checkColumns(v *models.Validator, ds *dataset, def *Definition) []Column {
	var cols []Column
	seen := map[string]bool{}
	v.Check(len(def.Dimensions) <= MaxDimensions, "dimensions", fmt.Sprintf("at most %d dimensions", MaxDimensions))
	for i, name := range def.Dimensions {
		field := fmt.Sprintf("dimensions[%d]", i)
		d, ok := ds.dimension(name)
		switch {
		case !ok:
			v.Add(field, fmt.Sprintf("unknown dimension %q of dataset %s: dimensions are %s", name, ds.info.Name, strings.Join(ds.dimensionNames(), ", ")))
		case seen[name]:
			v.Add(field, fmt.Sprintf("dimension %q is named twice", name))
		default:
			seen[name] = true
			cols = append(cols, d.col)
		}
	}
	v.Check(len(def.Metrics) > 0, "metrics", "name at least one metric")
	v.Check(len(def.Metrics) <= MaxMetrics, "metrics", fmt.Sprintf("at most %d metrics", MaxMetrics))
	for i, name := range def.Metrics {
		field := fmt.Sprintf("metrics[%d]", i)
		m, ok := ds.metric(name)
		switch {
		case !ok:
			v.Add(field, fmt.Sprintf("unknown metric %q of dataset %s: metrics are %s", name, ds.info.Name, strings.Join(ds.metricNames(), ", ")))
		case seen[name]:
			v.Add(field, fmt.Sprintf("%q is named twice", name))
		default:
			seen[name] = true
			cols = append(cols, m.col)
		}
	}
	chosen := append(slices.Clone(def.Dimensions), def.Metrics...)
	sorted := map[string]bool{}
	for i := range def.Sort {
		s := &def.Sort[i]
		field := fmt.Sprintf("sort[%d]", i)
		switch {
		case s.Field == "":
			v.Add(field+".field", "is required")
		case !seen[s.Field]:
			v.Add(field+".field", fmt.Sprintf("%q is not a chosen metric or dimension: sort by one of %s", s.Field, strings.Join(chosen, ", ")))
		case sorted[s.Field]:
			v.Add(field+".field", fmt.Sprintf("%q is sorted on twice", s.Field))
		}
		sorted[s.Field] = true
		switch s.Direction {
		case "":
			s.Direction = Asc
		case Asc, Desc:
		default:
			v.Add(field+".direction", "must be asc or desc")
		}
	}
	return cols
}

// unitsWithin reports whether [from, to) spans at most max units (hour,
// day, week or month of from's zone).
func unitsWithin(from, to time.Time, unit string, max int) bool {
	n := 0
	for s := unitStart(from, unit); s.Before(to); s = nextUnit(s, unit) {
		if n++; n > max {
			return false
		}
	}
	return true
}

// plural names the units of a time dimension.
func plural(unit string) string { return unit + "s" }

// unitStart returns the first instant of the hour, day, ISO week (from
// Monday) or month of t's zone that holds t.
func unitStart(t time.Time, unit string) time.Time {
	loc := t.Location()
	switch unit {
	case DimHour:
		// Local hours start where the local clock shows a whole hour,
		// whatever the zone's offset.
		return t.Add(-time.Duration(t.Minute())*time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	case DimWeek:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, loc)
	case DimMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// nextUnit returns the start of the unit after the one starting at s.
func nextUnit(s time.Time, unit string) time.Time {
	loc := s.Location()
	var n time.Time
	switch unit {
	case DimHour:
		n = unitStart(s.Add(time.Hour), DimHour)
	case DimWeek:
		n = time.Date(s.Year(), s.Month(), s.Day()+7, 0, 0, 0, 0, loc)
	case DimMonth:
		n = time.Date(s.Year(), s.Month()+1, 1, 0, 0, 0, 0, loc)
	default:
		n = time.Date(s.Year(), s.Month(), s.Day()+1, 0, 0, 0, 0, loc)
	}
	if !n.After(s) { // a zone oddity: never loop
		n = s.Add(time.Hour)
	}
	return n
}
