package api_test

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/models/services"
)

type slaCreditDoc struct {
	ID            string  `json:"id"`
	ServiceID     string  `json:"service_id"`
	TicketID      string  `json:"ticket_id"`
	Percent       float64 `json:"percent"`
	Amount        float64 `json:"amount"`
	AppliedAmount float64 `json:"applied_amount"`
	Currency      string  `json:"currency"`
	Reason        string  `json:"reason"`
	Status        string  `json:"status"`
	InvoiceID     *string `json:"invoice_id"`
	CreatedAt     string  `json:"created_at"`
	AppliedAt     *string `json:"applied_at"`
}

type slaCreditsAnswer struct {
	SLACredits []slaCreditDoc `json:"sla_credits"`
	Pagination struct {
		Total int64 `json:"total"`
	} `json:"pagination"`
}

// pricedService stores a service of tn whose monthly charge is monthly (cents).
func pricedService(t testing.TB, h *harness, tn tenant, monthly models.Money) string {
	t.Helper()
	id := mustService(t, h, tn)
	if err := h.store.In(context.Background(), models.TenantScope(tn.org.ID, models.EnvLive)).Model(&services.Service{}).
		Where("id = ?", id).Updates(map[string]any{"monthly_charge": monthly, "currency": "USD"}).Error; err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSLACreditsEndpoint(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	a, b := h.tenants[0], h.tenants[1]
	svcA, svcA2, svcB := pricedService(t, h, a, 299_00), pricedService(t, h, a, 100_00), pricedService(t, h, b, 500_00)
	store := billing.NewStore(h.store)
	issue := func(tn tenant, svc, ticket string, bp int) *billing.SLACredit {
		t.Helper()
		c, created, err := store.IssueSLACredit(ctx, models.TenantScope(tn.org.ID, models.EnvLive), billing.SLACreditInput{ServiceID: svc, TicketID: ticket,
			SourceKey: "ticket:" + ticket + ":cycle:1:resolution", PercentBP: bp, Reason: "resolution target missed"})
		if err != nil || !created {
			t.Fatalf("%v %v", created, err)
		}
		return c
	}
	first := issue(a, svcA, "tkt_a1", 1000)
	issue(a, svcA2, "tkt_a2", 500)
	foreign := issue(b, svcB, "tkt_b1", 1000)
	inv := newInvoice(t, h, a, svcA2, 1, 200)
	if len(inv.Services) != 2 || inv.Services[1].Kind != "sla_credit" || inv.Services[1].Amount != -5 || inv.Subtotal != 195 || inv.Amount != 195 {
		t.Fatalf("invoice %+v", inv)
	}

	tests := []struct {
		name  string
		key   string
		query string
		want  []string // ticket ids, newest first
		code  int
	}{
		{"everything of the tenant", a.liveKey, "", []string{"tkt_a2", "tkt_a1"}, 200},
		{"one service", a.liveKey, "?service_id=" + svcA, []string{"tkt_a1"}, 200},
		{"pending", a.liveKey, "?status=pending", []string{"tkt_a1"}, 200},
		{"applied", a.liveKey, "?status=applied", []string{"tkt_a2"}, 200},
		{"a page", a.liveKey, "?limit=1&sort=created_at:asc", []string{"tkt_a1"}, 200},
		{"another tenant's service", a.liveKey, "?service_id=" + svcB, []string{}, 200},
		{"the other tenant", b.liveKey, "", []string{"tkt_b1"}, 200},
		{"the owner's sandbox", a.testKey, "", []string{}, 200},
		{"unknown status", a.liveKey, "?status=lost", nil, 400},
		{"unknown sort", a.liveKey, "?sort=reason", nil, 400},
		{"billing:read is needed", keyWith(t, h, a, "services:read"), "", nil, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.code != 200 {
				h.do("GET", "/v1/billing/sla-credits"+tc.query, tc.key, nil).decode(tc.code, nil)
				return
			}
			var got slaCreditsAnswer
			h.do("GET", "/api/v1/billing/sla-credits"+tc.query, tc.key, nil).decode(200, &got)
			tickets := []string{}
			for _, c := range got.SLACredits {
				tickets = append(tickets, c.TicketID)
				if c.ID == foreign.ID && tc.key != b.liveKey {
					t.Fatalf("another tenant's credit: %+v", c)
				}
			}
			if len(tickets) != len(tc.want) {
				t.Fatalf("tickets %v, want %v", tickets, tc.want)
			}
			for i := range tickets {
				if tickets[i] != tc.want[i] {
					t.Fatalf("tickets %v, want %v", tickets, tc.want)
				}
			}
		})
	}

	var all slaCreditsAnswer
	h.do("GET", "/v1/billing/sla-credits?service_id="+svcA, a.liveKey, nil).decode(200, &all)
	c := all.SLACredits[0]
	if c.ID != first.ID || c.ServiceID != svcA || c.Percent != 10 || c.Amount != 29.9 || c.AppliedAmount != 0 || c.Currency != "USD" ||
		c.Reason != "resolution target missed" || c.Status != "pending" || c.InvoiceID != nil || c.AppliedAt != nil || c.CreatedAt == "" || all.Pagination.Total != 1 {
		t.Fatalf("credit %+v", all)
	}
	h.do("GET", "/v1/billing/sla-credits?status=applied", a.liveKey, nil).decode(200, &all)
	if c := all.SLACredits[0]; c.InvoiceID == nil || *c.InvoiceID != inv.ID || c.AppliedAt == nil || c.AppliedAmount != 5 {
		t.Fatalf("applied %+v", c)
	}
}
