package api_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// dashboardAnswer is the support dashboard's answer.
type dashboardAnswer struct {
	Dashboard struct {
		Period struct {
			Start    string `json:"start"`
			End      string `json:"end"`
			Timezone string `json:"timezone"`
		} `json:"period"`
		Overview struct {
			TotalTickets         int      `json:"total_tickets"`
			TicketsResolved      int      `json:"tickets_resolved"`
			TicketsOpen          int      `json:"tickets_open"`
			AvgResolutionTime    *string  `json:"avg_resolution_time"`
			SLACompliance        *float64 `json:"sla_compliance"`
			CustomerSatisfaction *float64 `json:"customer_satisfaction"`
		} `json:"overview"`
		Categories []struct {
			Category          string   `json:"category"`
			Count             int      `json:"count"`
			AvgResolutionTime *string  `json:"avg_resolution_time"`
			SLACompliance     *float64 `json:"sla_compliance"`
		} `json:"categories"`
		Trends struct {
			TicketsPerDay []struct {
				Date  string `json:"date"`
				Count int    `json:"count"`
			} `json:"tickets_per_day"`
			ResolutionTimeTrend []struct {
				Week     string  `json:"week"`
				AvgHours float64 `json:"avg_hours"`
			} `json:"resolution_time_trend"`
		} `json:"trends"`
	} `json:"dashboard"`
}

func TestSupportDashboard(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, _ := staffKey(t, h)
	// Tenant A: two network tickets (one resolved and rated 4) and a voice
	// one; tenant B: one; A's sandbox: one.
	resolved := newTicket(t, h, a.liveKey, nil)
	newTicket(t, h, a.liveKey, nil)
	newTicket(t, h, a.liveKey, map[string]any{"category": "voice", "subcategory": nil})
	newTicket(t, h, b.liveKey, nil)
	newTicket(t, h, a.testKey, nil)
	h.do("PUT", "/v1/support/tickets/"+resolved.Ticket.ID, staff, map[string]any{"status": "resolved"}).decode(200, nil)
	h.do("POST", "/v1/support/feedback", a.liveKey, map[string]any{"ticket_id": resolved.Ticket.ID, "rating": 4}).decode(201, nil)

	get := func(key string, q url.Values) *response {
		t.Helper()
		return h.do("GET", "/v1/support/analytics/dashboard?"+q.Encode(), key, nil)
	}
	now := time.Now().UTC()
	yesterday, tomorrow := now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly)
	tests := []struct {
		name             string
		key              string
		query            url.Values
		total, resolvedN int
		categories       int
		satisfaction     float64 // 0: null
		zone             string
		days             int // 0: not checked
	}{
		{"customer", a.liveKey, url.Values{}, 3, 1, 2, 4, "UTC", 31},
		{"customer, a week in a zone", a.liveKey, url.Values{"date_range": {"7d"}, "timezone": {"Asia/Tokyo"}}, 3, 1, 2, 4, "Asia/Tokyo", 0},
		{"customer naming their own customer", a.liveKey, url.Values{"customer_id": {a.org.CustomerID}}, 3, 1, 2, 4, "UTC", 0},
		{"customer naming another tenant's customer: nothing", a.liveKey, url.Values{"customer_id": {b.org.CustomerID}}, 0, 0, 0, 0, "UTC", 0},
		{"the other tenant", b.liveKey, url.Values{}, 1, 0, 1, 0, "UTC", 0},
		{"the sandbox", a.testKey, url.Values{}, 1, 0, 1, 0, "UTC", 0},
		{"staff: every organization of the environment", staff, url.Values{}, 4, 1, 2, 4, "UTC", 0},
		{"staff: one customer", staff, url.Values{"customer_id": {b.org.CustomerID}}, 1, 0, 1, 0, "UTC", 0},
		{"explicit dates", a.liveKey, url.Values{"start": {yesterday}, "end": {tomorrow}}, 3, 1, 2, 4, "UTC", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got dashboardAnswer
			get(tc.key, tc.query).decode(200, &got)
			d := got.Dashboard
			o := d.Overview
			if o.TotalTickets != tc.total || o.TicketsResolved != tc.resolvedN || o.TicketsOpen != tc.total-tc.resolvedN || len(d.Categories) != tc.categories {
				t.Fatalf("overview %+v, categories %+v", o, d.Categories)
			}
			if (tc.satisfaction == 0) != (o.CustomerSatisfaction == nil) || (o.CustomerSatisfaction != nil && *o.CustomerSatisfaction != tc.satisfaction) {
				t.Fatalf("satisfaction %v, want %v", o.CustomerSatisfaction, tc.satisfaction)
			}
			if (tc.resolvedN == 0) != (o.AvgResolutionTime == nil) || o.SLACompliance != nil && *o.SLACompliance != 100 {
				t.Fatalf("resolution %v, compliance %v", o.AvgResolutionTime, o.SLACompliance)
			}
			if d.Period.Timezone != tc.zone || d.Period.Start >= d.Period.End {
				t.Fatalf("period %+v", d.Period)
			}
			days := d.Trends.TicketsPerDay
			if tc.days != 0 && len(days) != tc.days {
				t.Fatalf("%d days: %+v", len(days), days)
			}
			sum := 0
			for _, day := range days {
				sum += day.Count
			}
			if sum != tc.total {
				t.Fatalf("tickets per day %+v, want %d in all", days, tc.total)
			}
		})
	}

	// The answer's shape, with the nulls of a period without tickets.
	res := get(a.liveKey, url.Values{"start": {"2020-01-01"}, "end": {"2020-01-03"}})
	body := string(res.body)
	for _, want := range []string{`"period":{"start":"2020-01-01T00:00:00Z","end":"2020-01-03T00:00:00Z","timezone":"UTC"}`,
		`"avg_resolution_time":null`, `"sla_compliance":null`, `"customer_satisfaction":null`, `"categories":[]`,
		`"tickets_per_day":[{"date":"2020-01-01","count":0},{"date":"2020-01-02","count":0}]`, `"resolution_time_trend":[]`} {
		if !strings.Contains(body, want) {
			t.Fatalf("no %s in %s", want, body)
		}
	}

	// Validation.
	for _, tc := range []struct {
		query url.Values
		field string
	}{
		{url.Values{"date_range": {"4w"}}, "date_range"},
		{url.Values{"date_range": {"400d"}}, "date_range"},
		{url.Values{"timezone": {"Mars/Olympus"}}, "timezone"},
		{url.Values{"start": {"2026-01-01"}}, "end"},
		{url.Values{"start": {"yesterday"}, "end": {"2026-01-01"}}, "start"},
		{url.Values{"start": {"2026-02-01"}, "end": {"2026-01-01"}}, "end"},
		{url.Values{"start": {"2024-01-01"}, "end": {"2026-01-01"}}, "end"},
	} {
		wantFields(t, get(a.liveKey, tc.query), tc.field)
	}
}

// TestSupportDashboardAtRisk: the overview counts the open tickets whose
// next SLA target is due within the hour, of the caller's organization only.
func TestSupportDashboardAtRisk(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	newTicket(t, h, a.liveKey, map[string]any{"priority": "critical"}) // first response due in 15m
	newTicket(t, h, a.liveKey, map[string]any{"priority": "low"})      // hours away
	var got struct {
		Dashboard struct {
			Overview struct {
				SLAAtRisk int `json:"sla_at_risk"`
			} `json:"overview"`
		} `json:"dashboard"`
	}
	h.do("GET", "/v1/support/analytics/dashboard", a.liveKey, nil).decode(200, &got)
	if got.Dashboard.Overview.SLAAtRisk != 1 {
		t.Fatalf("at risk %d, want 1", got.Dashboard.Overview.SLAAtRisk)
	}
	h.do("GET", "/v1/support/analytics/dashboard", b.liveKey, nil).decode(200, &got)
	if got.Dashboard.Overview.SLAAtRisk != 0 {
		t.Fatalf("another tenant's at risk %d, want 0", got.Dashboard.Overview.SLAAtRisk)
	}
}
