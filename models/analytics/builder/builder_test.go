package builder

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
)

var now = time.Date(2030, 3, 15, 10, 30, 0, 0, time.UTC)

// issues returns the fields and issues of a VALIDATION_ERROR.
func issues(t *testing.T, err error) (map[string]string, *models.Error) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("want a VALIDATION_ERROR, got %v", err)
	}
	out := map[string]string{}
	for _, is := range e.Details["fields"].([]models.FieldIssue) {
		out[is.Field] = is.Issue
	}
	return out, e
}

func TestValidateGood(t *testing.T) {
	def := Definition{Dataset: " invoices ", Metrics: []string{"count", "sum_total"}, Dimensions: []string{"status", "month"},
		Sort: []Sort{{Field: "sum_total", Direction: "DESC"}, {Field: "status"}}}
	p, err := Validate(def, now)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Definition
	if d.Dataset != "invoices" || d.Period != "last_30_days" || d.Timezone != "UTC" || d.Limit != DefaultLimit ||
		d.Sort[0].Direction != "desc" || d.Sort[1].Direction != "asc" {
		t.Fatalf("normalised %+v", d)
	}
	if !p.To.Equal(now) || !p.From.Equal(now.AddDate(0, 0, -30)) || p.Location != time.UTC {
		t.Fatalf("period %v %v %v", p.From, p.To, p.Location)
	}
	var names, types []string
	for _, c := range p.Columns {
		names, types = append(names, c.Name), append(types, c.Type)
	}
	if strings.Join(names, ",") != "status,month,count,sum_total" || strings.Join(types, ",") != "string,timestamp,integer,money" {
		t.Fatalf("columns %v %v", names, types)
	}
	if def.Sort[0].Direction != "DESC" {
		t.Fatal("Validate changed its argument")
	}

	// Absolute, in a zone: dates are midnights of the zone.
	p, err = Validate(Definition{Dataset: "telemetry", Metrics: []string{"samples"}, From: "2030-01-01", To: "2030-01-02T12:00:00Z",
		Timezone: "America/New_York", Limit: MaxLimit}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.From.Format(time.RFC3339) != "2030-01-01T00:00:00-05:00" || !p.To.Equal(time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)) || p.Definition.Period != "" {
		t.Fatalf("period %v %v", p.From, p.To)
	}
	// A calendar period of the zone.
	p, err = Validate(Definition{Dataset: "sla", Metrics: []string{"count"}, Period: "last_month", Timezone: "Europe/Berlin"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.From.Format(time.RFC3339) != "2030-02-01T00:00:00+01:00" || p.To.Format(time.RFC3339) != "2030-03-01T00:00:00+01:00" {
		t.Fatalf("last_month %v %v", p.From, p.To)
	}
	// Every dataset validates with each of its metrics and dimensions.
	for _, ds := range Datasets() {
		def := Definition{Dataset: ds.Name}
		for _, m := range ds.Metrics {
			def.Metrics = append(def.Metrics, m.Name)
		}
		for _, d := range ds.Dimensions[:min(MaxDimensions, len(ds.Dimensions))] {
			def.Dimensions = append(def.Dimensions, d.Name)
		}
		if _, err := Validate(def, now); err != nil {
			t.Errorf("%s: %v", ds.Name, err)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	base := func() Definition { return Definition{Dataset: "payments", Metrics: []string{"count"}} }
	tests := []struct {
		name  string
		edit  func(*Definition)
		field string
		has   string // in the issue
	}{
		{"unknown dataset", func(d *Definition) { d.Dataset = "users" }, "dataset", "services, telemetry, usage"},
		{"no metric", func(d *Definition) { d.Metrics = nil }, "metrics", "at least one"},
		{"unknown metric", func(d *Definition) { d.Metrics = []string{"count", "sum_total"} }, "metrics[1]", `"sum_total"`},
		{"unknown metric lists the allowed", func(d *Definition) { d.Metrics = []string{"count", "sum_total"} }, "metrics[1]", "sum_amount, avg_amount"},
		{"metric of another dataset", func(d *Definition) { d.Metrics = []string{"avg_latency_ms"} }, "metrics[0]", "metrics are count"},
		{"metric twice", func(d *Definition) { d.Metrics = []string{"count", "count"} }, "metrics[1]", "twice"},
		{"unknown dimension", func(d *Definition) { d.Dimensions = []string{"priority"} }, "dimensions[0]", "dimensions are status, method"},
		{"SQL as a dimension", func(d *Definition) { d.Dimensions = []string{"status; DROP TABLE payments"} }, "dimensions[0]", "unknown dimension"},
		{"too many dimensions", func(d *Definition) {
			d.Dimensions = []string{"status", "method", "card_brand", "currency", "account_id", "source", "organization_id", "hour", "day"}
		}, "dimensions", "at most 8"},
		{"sort by an unchosen field", func(d *Definition) { d.Sort = []Sort{{Field: "sum_amount"}} }, "sort[0].field", "not a chosen metric or dimension"},
		{"sort without a field", func(d *Definition) { d.Sort = []Sort{{Direction: "asc"}} }, "sort[0].field", "required"},
		{"sort direction", func(d *Definition) { d.Sort = []Sort{{Field: "count", Direction: "up"}} }, "sort[0].direction", "asc or desc"},
		{"limit negative", func(d *Definition) { d.Limit = -1 }, "limit", "between 1 and 100000"},
		{"limit too large", func(d *Definition) { d.Limit = MaxLimit + 1 }, "limit", "between 1 and 100000"},
		{"unknown period", func(d *Definition) { d.Period = "last_week" }, "period", "last_24_hours"},
		{"period with from and to", func(d *Definition) { d.Period, d.From, d.To = "last_7_days", "2030-01-01", "2030-01-02" }, "period", "cannot be combined"},
		{"from without to", func(d *Definition) { d.From = "2030-01-01" }, "to", "required"},
		{"bad from", func(d *Definition) { d.From, d.To = "yesterday", "2030-01-02" }, "from", "RFC 3339"},
		{"to before from", func(d *Definition) { d.From, d.To = "2030-01-02", "2030-01-01" }, "to", "after from"},
		{"timezone", func(d *Definition) { d.Timezone = "Mars/Olympus" }, "timezone", "IANA"},
		{"filter field", func(d *Definition) { d.Filter = "priority = high" }, "filter", `unknown field "priority" at 0`},
		{"filter grammar", func(d *Definition) { d.Filter = "status = successful and" }, "filter", "at 23"},
		{"filter value", func(d *Definition) { d.Filter = "amount > lots" }, "filter", "not an amount"},
		{"hours over a century", func(d *Definition) { d.Dimensions, d.From, d.To = []string{"hour"}, "2000-01-01", "2099-01-01" }, "dimensions[0]", "narrow the period"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def := base()
			tc.edit(&def)
			_, err := Validate(def, now)
			got, _ := issues(t, err)
			if !strings.Contains(got[tc.field], tc.has) {
				t.Fatalf("issue of %s: got %v, want one containing %q", tc.field, got, tc.has)
			}
		})
	}
}

func TestValidateEveryProblemAtOnce(t *testing.T) {
	def := Definition{Dataset: "tickets", Metrics: []string{"count", "nope"}, Dimensions: []string{"priority", "colour"},
		Sort: []Sort{{Field: "created_at"}}, Filter: "priority >= urgent", Limit: 200000, Period: "someday", Timezone: "Nowhere"}
	_, err := Validate(def, now)
	got, e := issues(t, err)
	for _, f := range []string{"metrics[1]", "dimensions[1]", "sort[0].field", "filter", "limit", "period", "timezone"} {
		if got[f] == "" {
			t.Errorf("no issue for %s in %v", f, got)
		}
	}
	if e.Details["position"] != 12 {
		t.Errorf("filter position %v", e.Details["position"])
	}
}

func TestLimitBounds(t *testing.T) {
	for _, n := range []int{1, 500, MaxLimit} {
		p, err := Validate(Definition{Dataset: "usage", Metrics: []string{"count"}, Limit: n}, now)
		if err != nil || p.Definition.Limit != n {
			t.Fatalf("limit %d: %v", n, err)
		}
	}
}

func TestCompiledSQL(t *testing.T) {
	evil := `x'); DROP TABLE invoices; --`
	def := Definition{Dataset: "invoices", Metrics: []string{"count", "sum_total", "avg_total"}, Dimensions: []string{"status", "currency"},
		Filter: `account_id = "` + evil + `" or number in ("50%", x)`, Sort: []Sort{{Field: "avg_total", Direction: "desc"}}, Limit: 25,
		From: "2030-01-01", To: "2030-02-01"}
	plan, err := Validate(def, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []dialect{{sqlite: true}, {sqlite: false}} {
		q, err := compile(plan, Scope{OrganizationID: "org_1", Environment: models.EnvTest}, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"DROP", evil, "50%", "org_1", "2030"} {
			if strings.Contains(q.sql, bad) {
				t.Errorf("user text %q in SQL: %s", bad, q.sql)
			}
		}
		for _, want := range []string{"FROM (SELECT ", "FROM invoices i WHERE i.environment = ? AND i.organization_id = ? AND i.issued_at >= ? AND i.issued_at < ?",
			"WHERE (account_id = ? OR number IN (?, ?))", "GROUP BY COALESCE(status, ''), COALESCE(currency, '')",
			"ORDER BY CASE WHEN AVG(", " DESC, COALESCE(status, '')", "LIMIT ?"} {
			if !strings.Contains(q.sql, want) {
				t.Errorf("SQL lacks %q: %s", want, q.sql)
			}
		}
		wantArgs := []any{"test", "org_1", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC), evil, "50%", "x", 25}
		if !slices.EqualFunc(q.args, wantArgs, func(a, b any) bool { return a == b }) {
			t.Errorf("args %#v, want %#v", q.args, wantArgs)
		}
		if strings.Count(q.sql, "?") != len(q.args) {
			t.Errorf("%d placeholders, %d args", strings.Count(q.sql, "?"), len(q.args))
		}
		if !d.sqlite && !strings.Contains(q.sql, `COLLATE "C"`) {
			t.Errorf("PostgreSQL sorts text bytewise: %s", q.sql)
		}
	}

	// Staff: every organization; a time dimension: grouped by slot, no
	// LIMIT (folded, sorted and limited after).
	def = Definition{Dataset: "telemetry", Metrics: []string{"avg_latency_ms"}, Dimensions: []string{"type", "day"}, Timezone: "Asia/Tokyo"}
	plan, err = Validate(def, now)
	if err != nil {
		t.Fatal(err)
	}
	q, err := compile(plan, Scope{Environment: models.EnvLive}, dialect{sqlite: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(q.sql, "organization_id = ?") || strings.Contains(q.sql, "LIMIT") || !q.folded ||
		!strings.Contains(q.sql, "GROUP BY COALESCE(kind, ''), (CAST(strftime('%s', at) AS INTEGER) / 900)") ||
		!strings.Contains(q.sql, "SUM(latency_ms) AS REAL), COUNT(latency_ms)") ||
		!strings.Contains(q.sql, "s.organization_id = t.organization_id AND s.environment = t.environment") {
		t.Errorf("SQL %s", q.sql)
	}
	if len(q.args) != 3 || q.args[0] != "live" {
		t.Errorf("args %v", q.args)
	}
	// A scope without an environment never runs.
	if _, err := compile(plan, Scope{OrganizationID: "org_1"}, dialect{}); models.ErrorCode(err) != models.CodeInternal {
		t.Errorf("no environment: %v", err)
	}
}

func TestDatasetsDescribed(t *testing.T) {
	names := DatasetNames()
	if strings.Join(names, ",") != "services,telemetry,usage,invoices,payments,operations,tickets,sla" {
		t.Fatalf("names %v", names)
	}
	if ds, ok := LookupDataset("sla"); !ok || ds.TimeField != "started_at" {
		t.Fatalf("LookupDataset(sla) %+v %v", ds, ok)
	}
	if _, ok := LookupDataset("users"); ok {
		t.Fatal("LookupDataset(users)")
	}
	types := []string{TypeString, TypeInteger, TypeNumber, TypeMoney, TypeTimestamp, TypeBoolean}
	for _, ds := range Datasets() {
		if ds.Description == "" || ds.TimeField == "" || len(ds.Metrics) == 0 || len(ds.Dimensions) == 0 || len(ds.Filters) == 0 {
			t.Errorf("%s is not described: %+v", ds.Name, ds)
		}
		seen := map[string]bool{}
		for _, c := range append(slices.Clone(ds.Metrics), ds.Dimensions...) {
			if seen[c.Name] || !slices.Contains(types, c.Type) || c.Description == "" {
				t.Errorf("%s: column %+v", ds.Name, c)
			}
			seen[c.Name] = true
		}
		for _, u := range TimeDimensions() {
			if !seen[u] {
				t.Errorf("%s lacks the time dimension %s", ds.Name, u)
			}
		}
		found := false
		for _, f := range ds.Filters {
			found = found || f.Name == ds.TimeField || ds.Name == "telemetry" && f.Name == "at"
		}
		if !found {
			t.Errorf("%s cannot filter on its time field %s", ds.Name, ds.TimeField)
		}
	}
}

func TestUnits(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	// 2030-03-31 is the spring change in Berlin: a day of 23 hours.
	at := time.Date(2030, 3, 31, 15, 20, 0, 0, berlin)
	for _, tc := range []struct{ unit, start, next string }{
		{DimHour, "2030-03-31T15:00:00+02:00", "2030-03-31T16:00:00+02:00"},
		{DimDay, "2030-03-31T00:00:00+01:00", "2030-04-01T00:00:00+02:00"},
		{DimWeek, "2030-03-25T00:00:00+01:00", "2030-04-01T00:00:00+02:00"},
		{DimMonth, "2030-03-01T00:00:00+01:00", "2030-04-01T00:00:00+02:00"},
	} {
		s := unitStart(at, tc.unit)
		if s.Format(time.RFC3339) != tc.start || nextUnit(s, tc.unit).Format(time.RFC3339) != tc.next {
			t.Errorf("%s: %v %v", tc.unit, s, nextUnit(s, tc.unit))
		}
	}
	if !unitsWithin(at, at.AddDate(0, 0, 3), DimDay, 4) || unitsWithin(at, at.AddDate(0, 0, 3), DimDay, 3) {
		t.Error("unitsWithin")
	}
}

// TestDocsListEveryName checks that the datasets' document lists every
// metric, dimension and filter field of each dataset in its section.
func TestDocsListEveryName(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, ds := range Datasets() {
		_, section, ok := strings.Cut(doc, "#### `"+ds.Name+"`")
		if !ok {
			t.Errorf("no section for %s", ds.Name)
			continue
		}
		section, _, _ = strings.Cut(section, "\n#")
		if !strings.Contains(section, "**Time field:** `"+ds.TimeField+"`") {
			t.Errorf("%s: time field %s not documented", ds.Name, ds.TimeField)
		}
		for _, c := range append(append(slices.Clone(ds.Metrics), ds.Dimensions...), ds.Filters...) {
			if c.Type == TypeTimestamp && slices.Contains(TimeDimensions(), c.Name) {
				continue
			}
			if !strings.Contains(section, "| `"+c.Name+"` | "+c.Type+" |") {
				t.Errorf("%s: %s (%s) not documented", ds.Name, c.Name, c.Type)
			}
		}
	}
}
