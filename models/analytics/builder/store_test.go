package builder

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/operations"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/testenv"
)

const (
	orgA = "org_builder_a"
	orgB = "org_builder_b"
)

// at parses an RFC 3339 time.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func ptr[T any](v T) *T { return &v }

// fixture seeds rows of every dataset in January 2030: organization A's
// live rows (the ones counted), and decoys that must never be counted by
// A's live runs: A's test rows and organization B's live rows.
func fixture(t *testing.T) *Store {
	t.Helper()
	core := testenv.Store(t)
	ctx := context.Background()
	aLive, aTest, bLive := models.TenantScope(orgA, models.EnvLive), models.TenantScope(orgA, models.EnvTest), models.TenantScope(orgB, models.EnvLive)
	mk := func(scope models.Scope, rows ...any) {
		t.Helper()
		for _, r := range rows {
			if err := core.In(ctx, scope).Create(r).Error; err != nil {
				t.Fatalf("seed %T: %v", r, err)
			}
		}
	}
	svc := func(id, kind, status, sla string, mbps int, charge models.Money, created string) *services.Service {
		return &services.Service{ID: id, AccountID: "acct_a", Name: id, Kind: kind, ServiceType: "std", Status: services.ServiceStatus(status),
			SLA: sla, BandwidthMbps: mbps, MonthlyCharge: charge, Currency: "USD", City: "Austin", State: "TX", CreatedAt: at(created), UpdatedAt: at(created),
			StatusChangedAt: at(created)}
	}
	mk(aLive,
		svc("svc_a1", "internet", "operational", "gold", 100, 10050, "2030-01-05T10:00:00Z"),
		svc("svc_a2", "internet", "pending", "silver", 200, 20025, "2030-01-06T23:30:00Z"),
		svc("svc_a3", "phone_system", "operational", "gold", 0, 5000, "2030-01-10T12:00:00Z"))
	mk(aTest, svc("svc_at", "internet", "operational", "gold", 100, 99999, "2030-01-05T10:00:00Z"))
	mk(bLive, svc("svc_b1", "internet", "operational", "gold", 1000, 77777, "2030-01-05T10:00:00Z"))

	sample := func(service, when string, up bool, latency, dataMB float64, calls int, quality float64) *telemetry.TelemetrySample {
		return &telemetry.TelemetrySample{ServiceID: service, At: at(when), Up: up, LatencyMs: latency, DataMB: dataMB, Calls: calls, CallQuality: quality}
	}
	mk(aLive,
		sample("svc_a1", "2030-01-05T18:20:00Z", true, 10, 1000, 0, 0),
		sample("svc_a1", "2030-01-05T18:40:00Z", false, 30, 500, 0, 0),
		sample("svc_a1", "2030-01-06T01:00:00Z", true, 20, 250, 0, 0),
		sample("svc_a3", "2030-01-05T12:00:00Z", true, 5, 0, 10, 4))
	mk(aTest, sample("svc_at", "2030-01-05T18:20:00Z", true, 500, 5, 0, 0))
	mk(bLive, sample("svc_b1", "2030-01-05T18:20:00Z", false, 1000, 9000, 0, 0))

	usage := func(key, metric string, qty float64, cost models.Money, start string) *billing.UsageRecord {
		return &billing.UsageRecord{RecordKey: key, AccountID: "acct_a", ServiceID: "svc_a1", ServiceType: "std", Category: "connectivity", Metric: metric,
			Quantity: qty, Unit: "gb", PeriodStart: at(start), PeriodEnd: at(start).Add(time.Hour), Cost: cost, Currency: "USD", CreatedAt: at(start)}
	}
	mk(aLive, usage("k1", "data_transfer", 10.5, 105, "2030-01-03T00:00:00Z"), usage("k2", "data_transfer", 4.5, 45, "2030-01-04T00:00:00Z"),
		usage("k3", "calls", 100, 500, "2030-01-04T00:00:00Z"))
	mk(bLive, usage("k4", "data_transfer", 1000, 100000, "2030-01-04T00:00:00Z"))

	invoice := func(id, status string, subtotal, tax, paid models.Money, issued string) *billing.Invoice {
		return &billing.Invoice{ID: id, AccountID: "acct_a", Number: id, Status: billing.InvoiceStatus(status), Source: "manual", Currency: "USD",
			Subtotal: subtotal, Tax: tax, Total: subtotal + tax, AmountPaid: paid, IssuedAt: at(issued), DueDate: at(issued), CreatedAt: at(issued), UpdatedAt: at(issued)}
	}
	mk(aLive, invoice("inv_a1", "paid", 10000, 1000, 11000, "2030-01-10T09:00:00Z"), invoice("inv_a2", "pending", 5000, 500, 0, "2030-01-20T09:00:00Z"),
		invoice("inv_a3", "overdue", 2000, 200, 200, "2030-01-31T23:30:00Z"))
	mk(bLive, invoice("inv_b1", "paid", 900000, 0, 900000, "2030-01-10T09:00:00Z"))

	payment := func(id, status, method string, amount models.Money, created string) *billing.Payment {
		return &billing.Payment{ID: id, InvoiceID: "inv_a1", AccountID: "acct_a", Amount: amount, Currency: "USD", Status: billing.PaymentStatus(status),
			Source: "api", MethodType: method, CreatedAt: at(created), UpdatedAt: at(created)}
	}
	mk(aLive, payment("pay_a1", "successful", "card", 11000, "2030-01-10T10:00:00Z"), payment("pay_a2", "failed", "card", 5500, "2030-01-11T10:00:00Z"),
		payment("pay_a3", "successful", "ach", 2000, "2030-01-12T10:00:00Z"))
	mk(bLive, payment("pay_b1", "successful", "ach", 500000, "2030-01-12T10:00:00Z"))

	op := func(id, typ, status, created string, took time.Duration) *operations.Operation {
		o := &operations.Operation{ID: id, Type: operations.OperationType(typ), Status: operations.OperationStatus(status), CreatedAt: at(created), UpdatedAt: at(created)}
		if took > 0 {
			o.FinishedAt = ptr(at(created).Add(took))
		}
		return o
	}
	mk(aLive, op("op_a1", "provisioning", "completed", "2030-01-05T10:00:00Z", 150*time.Second),
		op("op_a2", "provisioning", "failed", "2030-01-05T11:00:00Z", 30*time.Second), op("op_a3", "bulk_modify", "pending", "2030-01-06T10:00:00Z", 0))
	mk(bLive, op("op_b1", "provisioning", "completed", "2030-01-05T10:00:00Z", time.Hour))

	ticket := func(id, priority, category, status, agent string, created string, resolvedAfter time.Duration, level int) *support.Ticket {
		k := &support.Ticket{ID: id, Number: id, Title: id, CustomerID: "usr_c", Status: status, Priority: priority, Category: category, AssignedTo: agent,
			EscalationLevel: level, CreatedBy: "usr_c", CreatedAt: at(created), UpdatedAt: at(created), ResponseDue: at(created), ResolutionDue: at(created)}
		if resolvedAfter > 0 {
			k.ResolvedAt = ptr(at(created).Add(resolvedAfter))
		}
		return k
	}
	mk(aLive, ticket("tk_a1", "high", "network", "resolved", "usr_agent", "2030-01-05T10:00:00Z", 4*time.Hour, 1),
		ticket("tk_a2", "high", "network", "open", "", "2030-01-06T10:00:00Z", 0, 0),
		ticket("tk_a3", "low", "billing", "closed", "usr_agent", "2030-01-07T10:00:00Z", 2*time.Hour, 0),
		ticket("tk_a4", "low", "other", "open", "", "2030-01-07T10:00:00Z", 0, 0))
	mk(bLive, ticket("tk_b1", "high", "network", "open", "", "2030-01-05T10:00:00Z", 0, 3))

	clock := func(id, ticketID, metric, state string, breached bool, started string) *support.Clock {
		c := &support.Clock{ID: id, TicketID: ticketID, Cycle: 1, Metric: metric, State: state, TargetMinutes: 60, StartedAt: at(started),
			CreatedAt: at(started), UpdatedAt: at(started)}
		if breached {
			c.BreachedAt = ptr(at(started).Add(time.Hour))
		}
		return c
	}
	mk(aLive, clock("sl_a1", "tk_a1", "resolution", "stopped", false, "2030-01-05T10:00:00Z"),
		clock("sl_a2", "tk_a1", "response", "stopped", true, "2030-01-05T10:00:00Z"),
		clock("sl_a3", "tk_a2", "resolution", "running", false, "2030-01-06T10:00:00Z"),
		clock("sl_a4", "tk_a3", "resolution", "stopped", false, "2030-01-07T10:00:00Z"))
	mk(bLive, clock("sl_b1", "tk_b1", "resolution", "stopped", true, "2030-01-05T10:00:00Z"))
	return NewStore(core)
}

var (
	scopeA     = Scope{OrganizationID: orgA, Environment: models.EnvLive}
	scopeStaff = Scope{Environment: models.EnvLive}
)

// jan is a definition over January 2030 (UTC unless tz says).
func jan(ds string, metrics, dims []string, tz string) Definition {
	return Definition{Dataset: ds, Metrics: metrics, Dimensions: dims, From: "2030-01-01", To: "2030-02-01", Timezone: tz}
}

func run(t *testing.T, s *Store, def Definition, scope Scope) [][]any {
	t.Helper()
	plan, err := Validate(def, at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatalf("validate %+v: %v", def, err)
	}
	rows, _, err := s.Rows(context.Background(), plan, scope)
	if err != nil {
		t.Fatalf("run %+v: %v", def, err)
	}
	return rows
}

// loc loads a zone.
func loc(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func TestStoreDatasets(t *testing.T) {
	s := fixture(t)
	kolkata, berlin := loc("Asia/Kolkata"), loc("Europe/Berlin")
	tests := []struct {
		name  string
		def   Definition
		scope Scope
		want  [][]any
	}{
		{"services by type", jan("services", []string{"count", "sum_monthly_charge", "avg_monthly_charge", "max_bandwidth_mbps"}, []string{"type"}, ""), scopeA,
			[][]any{{"internet", int64(2), models.Money(30075), models.Money(15038), int64(200)}, {"phone_system", int64(1), models.Money(5000), models.Money(5000), int64(0)}}},
		{"services staff: every organization of the environment", jan("services", []string{"count"}, []string{"type"}, ""), scopeStaff,
			[][]any{{"internet", int64(3)}, {"phone_system", int64(1)}}},
		{"services by organization (staff)", jan("services", []string{"count"}, []string{"organization_id"}, ""), scopeStaff,
			[][]any{{orgA, int64(3)}, {orgB, int64(1)}}},
		{"services test environment", jan("services", []string{"count", "sum_monthly_charge"}, nil, ""), Scope{OrganizationID: orgA, Environment: models.EnvTest},
			[][]any{{int64(1), models.Money(99999)}}},
		{"services integer dimension and filter", withFilter(jan("services", []string{"count"}, []string{"bandwidth_mbps"}, ""), "status = operational and monthly_charge > 10"), scopeA,
			[][]any{{int64(0), int64(1)}, {int64(100), int64(1)}}},
		{"telemetry by day in Asia/Kolkata across the day boundary", jan("telemetry", []string{"samples", "availability_pct", "avg_latency_ms", "sum_data_gb"}, []string{"day"}, "Asia/Kolkata"), scopeA,
			[][]any{{time.Date(2030, 1, 5, 0, 0, 0, 0, kolkata), int64(2), 100.0, 7.5, 1.0}, {time.Date(2030, 1, 6, 0, 0, 0, 0, kolkata), int64(2), 50.0, 25.0, 0.75}}},
		{"telemetry by day in UTC", jan("telemetry", []string{"samples"}, []string{"day"}, ""), scopeA,
			[][]any{{time.Date(2030, 1, 5, 0, 0, 0, 0, time.UTC), int64(3)}, {time.Date(2030, 1, 6, 0, 0, 0, 0, time.UTC), int64(1)}}},
		{"telemetry by service", jan("telemetry", []string{"samples", "sum_calls", "avg_call_quality", "max_latency_ms", "min_latency_ms"}, []string{"service_id", "type", "category"}, ""), scopeA,
			[][]any{{"svc_a1", "internet", "connectivity", int64(3), int64(0), nil, 30.0, 10.0}, {"svc_a3", "phone_system", "voice", int64(1), int64(10), 4.0, 5.0, 5.0}}},
		{"telemetry totals", jan("telemetry", []string{"samples", "up_samples"}, nil, ""), scopeA, [][]any{{int64(4), int64(3)}}},
		{"telemetry filtered on a boolean", withFilter(jan("telemetry", []string{"samples", "avg_latency_ms"}, nil, ""), "up = false and type = internet"), scopeA,
			[][]any{{int64(1), 30.0}}},
		{"sla filtered on a boolean and an ordered enum", withFilter(jan("sla", []string{"count"}, nil, ""), "business_hours = false and priority >= medium"), scopeA,
			[][]any{{int64(3)}}},
		{"usage by metric, sorted by cost desc", withSort(jan("usage", []string{"count", "sum_quantity", "sum_cost", "avg_cost"}, []string{"metric"}, ""), Sort{Field: "sum_cost", Direction: "desc"}), scopeA,
			[][]any{{"calls", int64(1), 100.0, models.Money(500), models.Money(500)}, {"data_transfer", int64(2), 15.0, models.Money(150), models.Money(75)}}},
		{"invoices by month in Europe/Berlin", Definition{Dataset: "invoices", Metrics: []string{"count", "sum_total", "sum_amount_due", "sum_tax"}, Dimensions: []string{"month"},
			From: "2030-01-01", To: "2030-03-01", Timezone: "Europe/Berlin"}, scopeA,
			[][]any{{time.Date(2030, 1, 1, 0, 0, 0, 0, berlin), int64(2), models.Money(16500), models.Money(5500), models.Money(1500)},
				{time.Date(2030, 2, 1, 0, 0, 0, 0, berlin), int64(1), models.Money(2200), models.Money(2000), models.Money(200)}}},
		{"invoices by status with filter", withFilter(jan("invoices", []string{"count", "sum_amount_paid"}, []string{"status"}, ""), "amount >= 55 and status in (paid, pending)"), scopeA,
			[][]any{{"paid", int64(1), models.Money(11000)}, {"pending", int64(1), models.Money(0)}}},
		{"payments by method, sorted by mean desc", withSort(jan("payments", []string{"count", "successful", "success_rate_pct", "sum_successful_amount", "avg_amount"}, []string{"method"}, ""),
			Sort{Field: "avg_amount", Direction: "desc"}), scopeA,
			[][]any{{"card", int64(2), int64(1), 50.0, models.Money(11000), models.Money(8250)}, {"ach", int64(1), int64(1), 100.0, models.Money(2000), models.Money(2000)}}},
		{"operations by type", jan("operations", []string{"count", "completed", "failed", "avg_duration_seconds", "max_duration_seconds"}, []string{"type"}, ""), scopeA,
			[][]any{{"bulk_modify", int64(1), int64(0), int64(0), nil, nil}, {"provisioning", int64(2), int64(1), int64(1), 90.0, 150.0}}},
		{"tickets by priority", withFilter(jan("tickets", []string{"count", "open", "resolved", "escalated", "avg_resolution_hours"}, []string{"priority"}, ""), "category in (network, billing)"), scopeA,
			[][]any{{"high", int64(2), int64(1), int64(1), int64(1), 4.0}, {"low", int64(1), int64(0), int64(1), int64(0), 2.0}}},
		{"tickets by agent", jan("tickets", []string{"count"}, []string{"agent"}, ""), scopeA,
			[][]any{{"unassigned", int64(2)}, {"usr_agent", int64(2)}}},
		{"sla by priority", jan("sla", []string{"count", "breached", "met", "measured", "attainment_pct"}, []string{"priority"}, ""), scopeA,
			[][]any{{"high", int64(3), int64(1), int64(1), int64(2), 50.0}, {"low", int64(1), int64(0), int64(1), int64(1), 100.0}}},
		{"sla by metric and week", jan("sla", []string{"count"}, []string{"metric", "week"}, ""), scopeA,
			[][]any{{"resolution", time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC), int64(2)}, {"resolution", time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC), int64(1)},
				{"response", time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC), int64(1)}}},
		{"empty period: one row of zeros", Definition{Dataset: "payments", Metrics: []string{"count", "sum_amount", "avg_amount"}, From: "2031-01-01", To: "2031-02-01"}, scopeA,
			[][]any{{int64(0), models.Money(0), nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, s, tc.def, tc.scope)
			checkRows(t, got, tc.want)
		})
	}
}

func withFilter(d Definition, f string) Definition { d.Filter = f; return d }

func withSort(d Definition, s ...Sort) Definition { d.Sort = s; return d }

// checkRows compares rows value by value (times by instant and zone offset).
func checkRows(t *testing.T, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: got %v, want %v", i, got[i], want[i])
		}
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if wt, ok := w.(time.Time); ok {
				gt, ok := g.(time.Time)
				if !ok || !gt.Equal(wt) || gt.Format(time.RFC3339) != wt.Format(time.RFC3339) {
					t.Errorf("row %d col %d: got %v, want %v", i, j, g, w)
				}
				continue
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("row %d col %d: got %#v, want %#v", i, j, g, w)
			}
		}
	}
}

func TestStoreSortLimit(t *testing.T) {
	s := fixture(t)
	// Without a time dimension the database sorts and limits.
	def := withSort(jan("payments", []string{"count", "avg_amount"}, []string{"method"}, ""), Sort{Field: "avg_amount", Direction: "desc"})
	def.Limit = 1
	checkRows(t, run(t, s, def, scopeA), [][]any{{"card", int64(2), models.Money(8250)}})
	def.Sort[0].Direction = "asc"
	checkRows(t, run(t, s, def, scopeA), [][]any{{"ach", int64(1), models.Money(2000)}})

	// With one, the folded rows are sorted and limited here: by samples
	// desc, ties by the dimensions ascending.
	tel := withSort(jan("telemetry", []string{"samples"}, []string{"service_id", "day"}, ""), Sort{Field: "samples", Direction: "desc"})
	checkRows(t, run(t, s, tel, scopeA), [][]any{
		{"svc_a1", time.Date(2030, 1, 5, 0, 0, 0, 0, time.UTC), int64(2)},
		{"svc_a1", time.Date(2030, 1, 6, 0, 0, 0, 0, time.UTC), int64(1)},
		{"svc_a3", time.Date(2030, 1, 5, 0, 0, 0, 0, time.UTC), int64(1)},
	})
	tel.Limit = 2
	tel.Sort = []Sort{{Field: "day", Direction: "desc"}, {Field: "service_id", Direction: "desc"}}
	checkRows(t, run(t, s, tel, scopeA), [][]any{
		{"svc_a1", time.Date(2030, 1, 6, 0, 0, 0, 0, time.UTC), int64(1)},
		{"svc_a3", time.Date(2030, 1, 5, 0, 0, 0, 0, time.UTC), int64(1)},
	})
	// Empty values sort last in both directions.
	ops := withSort(jan("operations", []string{"avg_duration_seconds"}, []string{"type"}, ""), Sort{Field: "avg_duration_seconds", Direction: "asc"})
	checkRows(t, run(t, s, ops, scopeA), [][]any{{"provisioning", 90.0}, {"bulk_modify", nil}})
	ops.Sort[0].Direction = "desc"
	checkRows(t, run(t, s, ops, scopeA), [][]any{{"provisioning", 90.0}, {"bulk_modify", nil}})
}

func TestStoreWriteCSV(t *testing.T) {
	s := fixture(t)
	def := withSort(jan("payments", []string{"count", "success_rate_pct", "avg_amount"}, []string{"method", "day"}, "America/New_York"), Sort{Field: "day"})
	plan, err := Validate(def, at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := s.Write(context.Background(), &buf, "rpt_1", plan, scopeA, "csv", at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"method", "day", "count", "success_rate_pct", "avg_amount"},
		{"card", "2030-01-10T00:00:00-05:00", "1", "100", "110.00"},
		{"card", "2030-01-11T00:00:00-05:00", "1", "0", "55.00"},
		{"ach", "2030-01-12T00:00:00-05:00", "1", "100", "20.00"},
	}
	if !reflect.DeepEqual(recs, want) {
		t.Fatalf("csv:\n got %v\nwant %v", recs, want)
	}
	if st.Rows != 3 || st.Newest == nil || !st.Newest.Equal(at("2030-01-12T10:00:00Z")) {
		t.Fatalf("stats %+v", st)
	}
}

func TestStoreWriteJSON(t *testing.T) {
	s := fixture(t)
	def := jan("invoices", []string{"count", "sum_total", "avg_total"}, []string{"status"}, "Europe/Berlin")
	plan, err := Validate(def, at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := s.Write(context.Background(), &buf, "rpt_2", plan, scopeA, "json", at("2030-03-01T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Report struct {
			ID          string `json:"id"`
			Dataset     string `json:"dataset"`
			GeneratedAt string `json:"generated_at"`
			Period      struct {
				From, To, Timezone string
			} `json:"period"`
			Columns       []map[string]string `json:"columns"`
			Rows          []map[string]any    `json:"rows"`
			RowCount      int                 `json:"row_count"`
			DataFreshness *string             `json:"data_freshness"`
		} `json:"report"`
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	r := doc.Report
	if r.ID != "rpt_2" || r.Dataset != "invoices" || r.GeneratedAt != "2030-03-01T12:00:00Z" || r.Period.From != "2030-01-01T00:00:00+01:00" ||
		r.Period.To != "2030-02-01T00:00:00+01:00" || r.Period.Timezone != "Europe/Berlin" || r.RowCount != 2 || st.Rows != 2 {
		t.Fatalf("header %+v", r)
	}
	if r.DataFreshness == nil || *r.DataFreshness != "2030-01-20T10:00:00+01:00" {
		t.Fatalf("data_freshness %v", r.DataFreshness)
	}
	wantCols := []map[string]string{{"name": "status", "type": "string"}, {"name": "count", "type": "integer"},
		{"name": "sum_total", "type": "money"}, {"name": "avg_total", "type": "money"}}
	if !reflect.DeepEqual(r.Columns, wantCols) {
		t.Fatalf("columns %v", r.Columns)
	}
	// inv_a3 (31 January 23:30 UTC) is 1 February in Berlin: outside.
	want := []map[string]any{
		{"status": "paid", "count": json.Number("1"), "sum_total": "110.00", "avg_total": "110.00"},
		{"status": "pending", "count": json.Number("1"), "sum_total": "55.00", "avg_total": "55.00"},
	}
	if !reflect.DeepEqual(r.Rows, want) {
		t.Fatalf("rows %v", r.Rows)
	}
	// The columns of each row are in order.
	if !bytes.Contains(buf.Bytes(), []byte(`{"status":"paid","count":1,"sum_total":"110.00","avg_total":"110.00"}`)) {
		t.Fatalf("row order: %s", buf.String())
	}
}

func TestStoreWriteErrors(t *testing.T) {
	s := fixture(t)
	plan, err := Validate(jan("payments", []string{"count"}, nil, ""), at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Write(context.Background(), &buf, "r", plan, scopeA, "xml", time.Now()); models.ErrorCode(err) != models.CodeValidation {
		t.Fatalf("format xml: %v", err)
	}
	if _, err := s.Write(context.Background(), &buf, "r", plan, Scope{OrganizationID: orgA}, "csv", time.Now()); models.ErrorCode(err) != models.CodeInternal {
		t.Fatalf("no environment: %v", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q on error", buf.String())
	}
}

func TestStoreHoursInAQuarterHourZone(t *testing.T) {
	s := fixture(t)
	// Asia/Kathmandu is UTC+05:45: the samples of 18:20 and 18:40 UTC
	// are 00:05 and 00:25 local, one local hour (from 18:15 UTC).
	kathmandu := loc("Asia/Kathmandu")
	def := jan("telemetry", []string{"samples"}, []string{"hour"}, "Asia/Kathmandu")
	checkRows(t, run(t, s, def, scopeA), [][]any{
		{time.Date(2030, 1, 5, 17, 0, 0, 0, kathmandu), int64(1)},
		{time.Date(2030, 1, 6, 0, 0, 0, 0, kathmandu), int64(2)},
		{time.Date(2030, 1, 6, 6, 0, 0, 0, kathmandu), int64(1)},
	})
}

func TestStoreFoldBounds(t *testing.T) {
	s := fixture(t)
	plan, err := Validate(jan("telemetry", []string{"samples"}, []string{"day"}, ""), at("2030-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	// Two days from four slots: within bounds of 2 groups and 4 slots.
	s.maxGroups, s.maxSlotRows = 2, 4
	if rows, _, err := s.Rows(context.Background(), plan, scopeA); err != nil || len(rows) != 2 {
		t.Fatalf("within bounds: %v %v", rows, err)
	}
	for _, bounds := range [][2]int{{1, 4}, {2, 3}} {
		s.maxGroups, s.maxSlotRows = bounds[0], bounds[1]
		_, _, err := s.Rows(context.Background(), plan, scopeA)
		fields, _ := issues(t, err)
		if !strings.Contains(fields["period"], "narrow the period") {
			t.Fatalf("bounds %v: %v", bounds, err)
		}
	}
}
