package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/analytics"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/services"
	"github.com/telcoplatform/platform/models/telemetry"
	"github.com/telcoplatform/platform/testenv"
)

// fixture is two tenants with services, telemetry, invoices, usage
// records, credits and a budget in January 2030 (far from the demo seed's
// data), and a staff principal.
type fixture struct {
	s                  *analytics.Store
	a, b, staff        *models.Principal
	acctA, acctB       string
	a1, a2, b1         *services.Service
	orgA, orgB         string
	creditID, budgetID string
	core               *models.Store
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	store, _ := testenv.SeededStore(t)
	ids := identity.NewStore(store)
	provider, err := ids.EnsureProviderOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: analytics.NewStore(store), core: store}
	f.staff = &models.Principal{ID: "ak_staff", OrganizationID: provider.ID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	tenant := func(name string) (*models.Principal, string) {
		org, err := ids.CreateOrganization(ctx, f.staff, identity.OrganizationInput{Name: name, Plan: models.PlanBusiness})
		if err != nil {
			t.Fatal(err)
		}
		p := &models.Principal{ID: "ak_" + name, OrganizationID: org.ID, Environment: models.EnvLive, Role: models.RoleCustomer, Permissions: []string{"*"}}
		acct, err := billing.NewStore(store).CreateAccount(ctx, p, billing.AccountInput{Name: "Main", Currency: "USD", BillingEmail: "b@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return p, acct.ID
	}
	f.a, f.acctA = tenant("A")
	f.b, f.acctB = tenant("B")
	f.orgA, f.orgB = f.a.OrganizationID, f.b.OrganizationID
	create := func(p *models.Principal, rows ...any) {
		t.Helper()
		for _, r := range rows {
			if err := store.In(ctx, p.OwnScope()).Create(r).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	svc := func(p *models.Principal, acct, kind, city, loc string) *services.Service {
		now := at("2029-12-01T00:00:00Z")
		s := &services.Service{ID: models.NewID(models.PrefixService), AccountID: acct, Name: kind + " " + city, Kind: kind, ServiceType: kind + "_std",
			CatalogServiceID: "x", Status: services.ServiceOperational, Bandwidth: "1gbps", BandwidthMbps: 1000, SLA: "premium", BillingCycle: "monthly",
			LocationID: loc, Address: "1 Main St", City: city, State: "TX", Zip: "78701", OperationID: models.NewID(models.PrefixProvisioning),
			ActivatedAt: &now, StatusChangedAt: now, Currency: "USD"}
		create(p, s)
		return s
	}
	f.a1 = svc(f.a, f.acctA, "internet", "Austin", "loc_austin_congress")
	f.a2 = svc(f.a, f.acctA, "phone_system", "Dallas", "loc_dallas_main")
	f.b1 = svc(f.b, f.acctB, "internet", "Austin", "loc_austin_congress")
	sample := func(svc *services.Service, when string, dataMB float64, calls int) *telemetry.TelemetrySample {
		return &telemetry.TelemetrySample{ServiceID: svc.ID, At: at(when), Up: true, DataMB: dataMB, Calls: calls}
	}
	create(f.a, sample(f.a1, "2030-01-10T10:00:00Z", 1000, 0), sample(f.a1, "2030-01-11T02:00:00Z", 2000, 0), sample(f.a2, "2030-01-12T12:00:00Z", 0, 30),
		// Around the start of daylight saving time in New York (10 March 2030, 02:00 EST → 03:00 EDT).
		sample(f.a1, "2030-03-10T06:30:00Z", 100, 0), sample(f.a1, "2030-03-10T07:30:00Z", 200, 0))
	create(f.b, sample(f.b1, "2030-01-10T10:00:00Z", 5000, 0))
	create(f.a, &billing.UsageRecord{RecordKey: "k1", AccountID: f.acctA, ServiceID: f.a2.ID, ServiceType: "phone_system", Category: "voice",
		Metric: billing.MetricVoiceMinutes, Quantity: 120.5, Unit: "minutes", PeriodStart: at("2030-01-11T00:00:00Z"), PeriodEnd: at("2030-01-12T00:00:00Z"),
		Cost: 700, Currency: "USD"})

	invoice := func(p *models.Principal, acct, id string, status billing.InvoiceStatus, currency, issued string, lines ...billing.InvoiceLine) {
		var sub models.Money
		for i := range lines {
			lines[i].InvoiceID, lines[i].Position, lines[i].Quantity, lines[i].UnitPrice = id, i, 1, lines[i].Amount
			lines[i].Description = "line"
			sub += lines[i].Amount
		}
		create(p, &billing.Invoice{ID: id, AccountID: acct, Number: id, Status: status, Source: billing.InvoiceSourceManual, Currency: currency,
			Subtotal: sub, Total: sub, IssuedAt: at(issued), DueDate: at(issued).AddDate(0, 0, 30)})
		for i := range lines {
			create(p, &lines[i])
		}
	}
	invoice(f.a, f.acctA, "inv_a1", billing.InvoicePaid, "USD", "2030-01-09T12:00:00Z",
		billing.InvoiceLine{Kind: billing.LineRecurring, ServiceID: f.a1.ID, Category: "connectivity", Amount: 10000},
		billing.InvoiceLine{Kind: billing.LineUsage, ServiceID: f.a2.ID, Category: "voice", Amount: 2500},
		billing.InvoiceLine{Kind: billing.LineCredit, ServiceID: f.a1.ID, Category: "connectivity", Amount: -500})
	invoice(f.a, f.acctA, "inv_a2", billing.InvoiceCancelled, "USD", "2030-01-10T12:00:00Z",
		billing.InvoiceLine{Kind: billing.LineService, Category: "other", Amount: 99999})
	invoice(f.a, "acct_eur", "inv_a3", billing.InvoicePending, "EUR", "2030-01-10T12:00:00Z",
		billing.InvoiceLine{Kind: billing.LineService, ServiceID: f.a1.ID, Category: "connectivity", Amount: 88888})
	invoice(f.b, f.acctB, "inv_b1", billing.InvoicePending, "USD", "2030-01-09T12:00:00Z",
		billing.InvoiceLine{Kind: billing.LineRecurring, ServiceID: f.b1.ID, Category: "connectivity", Amount: 40000})
	f.creditID = models.NewID(billing.PrefixSLACredit)
	create(f.a, &billing.SLACredit{ID: f.creditID, ServiceID: f.a1.ID, TicketID: "TKT-1", SourceKey: "s1", PercentBP: 1000, Amount: 1500, Currency: "USD",
		Reason: "resolution breached", Status: billing.SLACreditPending, CreatedAt: at("2030-01-12T08:00:00Z")},
		&billing.SLACredit{ID: models.NewID(billing.PrefixSLACredit), ServiceID: f.a1.ID, TicketID: "TKT-2", SourceKey: "s2", PercentBP: 1000, Amount: 9999,
			Currency: "USD", Reason: "void", Status: billing.SLACreditVoid, CreatedAt: at("2030-01-12T08:00:00Z")})
	f.budgetID = models.NewID(billing.PrefixBudget)
	create(f.a, &billing.Budget{ID: f.budgetID, AccountID: f.acctA, Amount: 20000, Currency: "USD", Period: billing.CycleMonthly, Thresholds: []int{50}})
	return f
}

func parse(t *testing.T, in analytics.QueryInput, staff bool, now time.Time) *analytics.Query {
	t.Helper()
	q, err := analytics.ParseQuery(in, staff, now)
	if err != nil {
		t.Fatalf("ParseQuery(%+v): %v", in, err)
	}
	return q
}

var jan = analytics.QueryInput{From: "2030-01-08", To: "2030-01-15"}

func TestAnalyticsUsageGranularities(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := at("2030-02-01T00:00:00Z")
	cases := []struct {
		granularity string
		buckets     int
		gb          map[int]float64 // bucket index → data_gb (others zero)
		calls       map[int]int64
	}{
		{"hour", 168, map[int]float64{58: 1, 74: 2}, map[int]int64{108: 30}},
		{"day", 7, map[int]float64{2: 1, 3: 2}, map[int]int64{4: 30}},
		{"week", 2, map[int]float64{0: 3}, map[int]int64{0: 30}}, // Tue 8th to Mon 14th, then Mon 14th
		{"month", 1, map[int]float64{0: 3}, map[int]int64{0: 30}},
	}
	for _, c := range cases {
		t.Run(c.granularity, func(t *testing.T) {
			in := jan
			in.Granularity = c.granularity
			u, err := f.s.Usage(ctx, f.a, parse(t, in, false, now))
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Buckets) != c.buckets {
				t.Fatalf("%d buckets, want %d", len(u.Buckets), c.buckets)
			}
			for i, b := range u.Buckets {
				if b.DataGB != c.gb[i] || b.VoiceCalls != c.calls[i] {
					t.Errorf("bucket %d (%s): %v GB %d calls, want %v and %d", i, b.Start, b.DataGB, b.VoiceCalls, c.gb[i], c.calls[i])
				}
			}
			if u.Totals.DataGB != 3 || u.Totals.VoiceCalls != 30 || u.Totals.VoiceMinutes != 120.5 || u.Totals.Samples != 3 {
				t.Errorf("totals %+v", u.Totals)
			}
		})
	}
	in := jan
	in.Granularity = "week"
	u, err := f.s.Usage(ctx, f.a, parse(t, in, false, now))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Buckets[1].Start; !got.Equal(at("2030-01-14T00:00:00Z")) || got.Weekday() != time.Monday {
		t.Errorf("second week starts %s, want Monday 14 January", got)
	}
	if !u.Buckets[0].Start.Equal(at("2030-01-08T00:00:00Z")) {
		t.Errorf("first bucket starts %s, want the period's start", u.Buckets[0].Start)
	}
	// Per service, category and kind.
	if len(u.Services) != 2 {
		t.Fatalf("services %+v", u.Services)
	}
	for _, su := range u.Services {
		switch su.ServiceID {
		case f.a1.ID:
			if su.DataGB != 3 || su.Category != "connectivity" || su.Kind != "internet" {
				t.Errorf("a1 %+v", su)
			}
		case f.a2.ID:
			if su.VoiceCalls != 30 || su.VoiceMinutes != 120.5 || su.Category != "voice" {
				t.Errorf("a2 %+v", su)
			}
		}
	}
	cats := map[string]analytics.UsageFigures{}
	for _, c := range u.Categories {
		cats[c.Key] = c.UsageFigures
	}
	if len(cats) != len(analytics.Categories()) || cats["connectivity"].DataGB != 3 || cats["voice"].VoiceCalls != 30 || cats["cloud"] != (analytics.UsageFigures{}) {
		t.Errorf("categories %+v", u.Categories)
	}
	if len(u.ServiceTypes) != 2 || u.ServiceTypes[0].Key != "internet" || u.ServiceTypes[1].Key != "phone_system" {
		t.Errorf("service types %+v", u.ServiceTypes)
	}
}

func TestAnalyticsTimezoneMovesRecords(t *testing.T) {
	f := newFixture(t)
	in := jan
	in.Timezone = "America/New_York"
	in.Granularity = "day"
	u, err := f.s.Usage(context.Background(), f.a, parse(t, in, false, at("2030-02-01T00:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	// 2030-01-11T02:00Z is 21:00 on the 10th in New York: both samples fall on the 10th.
	if len(u.Buckets) != 7 || u.Buckets[2].DataGB != 3 || u.Buckets[3].DataGB != 0 {
		t.Fatalf("buckets %+v", u.Buckets)
	}
	if got := analytics.Label(u.Buckets[2].Start); got != "2030-01-10T00:00:00-05:00" {
		t.Errorf("bucket starts %s", got)
	}
}

func TestAnalyticsDaylightSaving(t *testing.T) {
	f := newFixture(t)
	now := at("2031-01-01T00:00:00Z")
	q := parse(t, analytics.QueryInput{From: "2030-03-09", To: "2030-03-12", Granularity: "day", Timezone: "America/New_York"}, false, now)
	if len(q.Buckets) != 3 || q.Buckets[1].End.Sub(q.Buckets[1].Start) != 23*time.Hour {
		t.Fatalf("spring-forward day: %+v", q.Buckets)
	}
	u, err := f.s.Usage(context.Background(), f.a, parse(t, analytics.QueryInput{From: "2030-03-10", To: "2030-03-11", Granularity: "hour", Timezone: "America/New_York"}, false, now))
	if err != nil {
		t.Fatal(err)
	}
	// 06:30Z is 01:30 EST, 07:30Z is 03:30 EDT: hours 1 and 2 of a 23-hour day.
	if len(u.Buckets) != 23 || u.Buckets[1].DataGB != 0.1 || u.Buckets[2].DataGB != 0.2 || analytics.Label(u.Buckets[2].Start) != "2030-03-10T03:00:00-04:00" {
		t.Fatalf("%d buckets: %+v", len(u.Buckets), u.Buckets[:4])
	}
	q = parse(t, analytics.QueryInput{From: "2030-11-03", To: "2030-11-04", Granularity: "hour", Timezone: "America/New_York"}, false, now)
	if len(q.Buckets) != 25 || analytics.Label(q.Buckets[1].Start) != "2030-11-03T01:00:00-04:00" || analytics.Label(q.Buckets[2].Start) != "2030-11-03T01:00:00-05:00" {
		t.Fatalf("fall-back day: %d buckets", len(q.Buckets))
	}
	q = parse(t, analytics.QueryInput{From: "2030-03-01", To: "2030-05-01", Granularity: "month", Timezone: "Europe/London"}, false, now)
	if len(q.Buckets) != 2 || analytics.Label(q.Buckets[1].Start) != "2030-04-01T00:00:00+01:00" {
		t.Fatalf("months: %+v", q.Buckets)
	}
}

func TestAnalyticsEmptyPeriodIsZeros(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := at("2035-06-01T00:00:00Z")
	q := parse(t, analytics.QueryInput{Period: "last_7_days"}, false, now)
	u, err := f.s.Usage(ctx, f.a, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Buckets) != 7 || u.Totals != (analytics.UsageFigures{}) || len(u.Services) != 0 {
		t.Fatalf("usage %+v", u)
	}
	for _, b := range u.Buckets {
		if b.UsageFigures != (analytics.UsageFigures{}) {
			t.Errorf("bucket %+v", b)
		}
	}
	c, err := f.s.Costs(ctx, f.a, q, "", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Buckets) != 7 || c.Totals != (analytics.CostFigures{}) || len(c.Credits) != 0 || len(c.Categories) != len(billing.CostCategories()) {
		t.Fatalf("costs %+v", c)
	}
	if c.Forecast.SpentToDate != 0 || c.Forecast.Forecast != 0 || c.Forecast.Method != analytics.ForecastMethod {
		t.Errorf("forecast %+v", c.Forecast)
	}
}

func TestAnalyticsTenancy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := at("2030-02-01T00:00:00Z")
	total := func(p *models.Principal, in analytics.QueryInput) (float64, error) {
		q, err := analytics.ParseQuery(in, p.IsStaff(), now)
		if err != nil {
			return 0, err
		}
		u, err := f.s.Usage(ctx, p, q)
		if err != nil {
			return 0, err
		}
		return u.Totals.DataGB, nil
	}
	with := func(mod func(*analytics.QueryInput)) analytics.QueryInput {
		in := jan
		mod(&in)
		return in
	}
	cases := []struct {
		name string
		p    *models.Principal
		in   analytics.QueryInput
		gb   float64
		code models.Code
	}{
		{"tenant A sees its own", f.a, jan, 3, ""},
		{"tenant B sees its own", f.b, jan, 5, ""},
		{"staff see every tenant", f.staff, jan, 8, ""},
		{"staff filter one organization", f.staff, with(func(in *analytics.QueryInput) { in.OrganizationID = f.orgB }), 5, ""},
		{"staff filter an unknown organization", f.staff, with(func(in *analytics.QueryInput) { in.OrganizationID = "org_nope" }), 0, models.CodeNotFound},
		{"staff filter a service", f.staff, with(func(in *analytics.QueryInput) { in.ServiceID = f.b1.ID }), 5, ""},
		{"customer's organization_id", f.a, with(func(in *analytics.QueryInput) { in.OrganizationID = f.orgA }), 0, models.CodeValidation},
		{"another tenant's service", f.a, with(func(in *analytics.QueryInput) { in.ServiceID = f.b1.ID }), 0, models.CodeNotFound},
		{"another tenant's account", f.a, with(func(in *analytics.QueryInput) { in.AccountID = f.acctB }), 0, models.CodeNotFound},
		{"own account", f.a, with(func(in *analytics.QueryInput) { in.AccountID = f.acctA }), 3, ""},
		{"service type voice", f.a, with(func(in *analytics.QueryInput) { in.ServiceType = "voice" }), 0, ""},
		{"service type internet", f.a, with(func(in *analytics.QueryInput) { in.ServiceType = "internet" }), 3, ""},
		{"location city", f.a, with(func(in *analytics.QueryInput) { in.Location = "austin" }), 3, ""},
		{"location id elsewhere", f.a, with(func(in *analytics.QueryInput) { in.Location = "loc_dallas_main" }), 0, ""},
		{"location state", f.staff, with(func(in *analytics.QueryInput) { in.Location = "TX" }), 8, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gb, err := total(c.p, c.in)
			if c.code != "" {
				if models.ErrorCode(err) != c.code {
					t.Fatalf("error %v, want %s", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gb != c.gb {
				t.Errorf("%v GB, want %v", gb, c.gb)
			}
		})
	}
}

func TestAnalyticsQueryValidation(t *testing.T) {
	now := at("2030-02-01T00:00:00Z")
	cases := []struct {
		in     analytics.QueryInput
		fields []string
	}{
		{analytics.QueryInput{Period: "yesterday"}, []string{"period"}},
		{analytics.QueryInput{Granularity: "minute", Timezone: "Mars/Olympus"}, []string{"timezone", "granularity"}},
		{analytics.QueryInput{From: "2030-01-01"}, []string{"to"}},
		{analytics.QueryInput{From: "2030-01-01", To: "soon", Period: "last_7_days"}, []string{"period", "to"}},
		{analytics.QueryInput{From: "2030-01-02", To: "2030-01-01"}, []string{"to"}},
		{analytics.QueryInput{From: "2030-01-01", To: "2030-03-01", Granularity: "hour"}, []string{"granularity"}},
		{analytics.QueryInput{ServiceType: "Fiber Optic", OrganizationID: "org_x"}, []string{"service_type", "organization_id"}},
	}
	for _, c := range cases {
		_, err := analytics.ParseQuery(c.in, false, now)
		e := models.AsError(err)
		if e.Code != models.CodeValidation {
			t.Fatalf("%+v: %v", c.in, err)
		}
		issues, _ := e.Details["fields"].([]models.FieldIssue)
		var got []string
		for _, i := range issues {
			got = append(got, i.Field)
		}
		if len(got) != len(c.fields) {
			t.Errorf("%+v: fields %v, want %v", c.in, got, c.fields)
			continue
		}
		for i := range got {
			if got[i] != c.fields[i] {
				t.Errorf("%+v: fields %v, want %v", c.in, got, c.fields)
			}
		}
	}
	// Defaults: last_30_days by day in UTC; current_year by month; 1000 buckets pass.
	q := parse(t, analytics.QueryInput{}, false, now)
	if q.Period != "last_30_days" || q.Granularity != "day" || len(q.Buckets) != 30 || q.Location != time.UTC {
		t.Errorf("default query %+v", q)
	}
	if q = parse(t, analytics.QueryInput{Period: "current_year", Timezone: "Asia/Tokyo"}, false, now); q.Granularity != "month" || len(q.Buckets) != 12 {
		t.Errorf("current year %+v", q)
	}
	if q = parse(t, analytics.QueryInput{Period: "last_24_hours"}, false, now); q.Granularity != "hour" || len(q.Buckets) != 24 {
		t.Errorf("last 24 hours: %d %s buckets", len(q.Buckets), q.Granularity)
	}
	if q = parse(t, analytics.QueryInput{From: "2030-01-01T00:00:00Z", To: "2030-02-11T16:00:00Z", Granularity: "hour"}, false, now); len(q.Buckets) != 1000 {
		t.Errorf("%d buckets, want 1000", len(q.Buckets))
	}
}

func TestAnalyticsCosts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := at("2030-01-16T00:00:00Z")
	in := jan
	in.Granularity = "day"
	c, err := f.s.Costs(ctx, f.a, parse(t, in, false, now), "", now)
	if err != nil {
		t.Fatal(err)
	}
	want := analytics.CostFigures{Charges: 12500, UnbilledUsage: 700, Credits: 1500, Net: 11700}
	if c.Currency != "USD" || c.Totals != want {
		t.Fatalf("totals %+v %s, want %+v", c.Totals, c.Currency, want)
	}
	days := map[int]analytics.CostFigures{1: {Charges: 12500, Net: 12500}, 3: {UnbilledUsage: 700, Net: 700}, 4: {Credits: 1500, Net: -1500}}
	for i, b := range c.Buckets {
		if b.CostFigures != days[i] {
			t.Errorf("bucket %d: %+v, want %+v", i, b.CostFigures, days[i])
		}
	}
	cats := map[string]analytics.CostFigures{}
	for _, k := range c.Categories {
		cats[k.Category] = k.CostFigures
	}
	if cats["connectivity"] != (analytics.CostFigures{Charges: 10000, Credits: 1500, Net: 8500}) || cats["voice"] != (analytics.CostFigures{Charges: 2500, UnbilledUsage: 700, Net: 3200}) {
		t.Errorf("categories %+v", c.Categories)
	}
	if len(c.Credits) != 1 || c.Credits[0].ID != f.creditID || c.Credits[0].Amount != 1500 || c.Credits[0].Category != "connectivity" {
		t.Errorf("credits %+v", c.Credits)
	}
	// Budget: January's invoices of the account (paid 120.00; the cancelled one not counted).
	if len(c.Budgets) != 1 || c.Budgets[0].BudgetID != f.budgetID || c.Budgets[0].Spent != 12000 || c.Budgets[0].Remaining != 8000 || c.Budgets[0].PercentUsed != 60 {
		t.Errorf("budgets %+v", c.Budgets)
	}
	// Forecast: 117.00 net in the 15 days of January elapsed, over 31 days
	// (0.48387... rounds to 0.4839; 117.00 / 0.4839 = 241.785...).
	fc := c.Forecast
	if fc.SpentToDate != 11700 || fc.Forecast != 24179 || fc.ElapsedFraction != 0.4839 || !fc.PeriodStart.Equal(at("2030-01-01T00:00:00Z")) {
		t.Errorf("forecast %+v", fc)
	}

	// Filters: a service's lines, credits and usage only; the EUR invoice in EUR only.
	in.ServiceID = f.a2.ID
	if c, err = f.s.Costs(ctx, f.a, parse(t, in, false, now), "", now); err != nil {
		t.Fatal(err)
	}
	if c.Totals != (analytics.CostFigures{Charges: 2500, UnbilledUsage: 700, Net: 3200}) || len(c.Credits) != 0 {
		t.Errorf("service filter %+v", c.Totals)
	}
	if c, err = f.s.Costs(ctx, f.a, parse(t, jan, false, now), "eur", now); err != nil {
		t.Fatal(err)
	}
	if c.Currency != "EUR" || c.Totals.Charges != 88888 {
		t.Errorf("EUR %+v", c.Totals)
	}
	if _, err := f.s.Costs(ctx, f.a, parse(t, jan, false, now), "dollars", now); models.ErrorCode(err) != models.CodeValidation {
		t.Errorf("currency dollars: %v", err)
	}

	// Staff: every tenant; one organization; another tenant never counted for A.
	if c, err = f.s.Costs(ctx, f.staff, parse(t, jan, true, now), "USD", now); err != nil {
		t.Fatal(err)
	}
	if c.Totals.Charges != 52500 || c.Totals.Net != 51700 {
		t.Errorf("staff %+v", c.Totals)
	}
	staffB := jan
	staffB.OrganizationID = f.orgB
	if c, err = f.s.Costs(ctx, f.staff, parse(t, staffB, true, now), "", now); err != nil {
		t.Fatal(err)
	}
	if c.Totals != (analytics.CostFigures{Charges: 40000, Net: 40000}) || len(c.Budgets) != 0 {
		t.Errorf("staff, organization B: %+v %+v", c.Totals, c.Budgets)
	}
}
