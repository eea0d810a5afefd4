package api_test

import (
	"context"
	"maps"
	"net/http"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
	"github.com/telcoplatform/platform/models/seed"
)

// TestDemoDataSeed: seeding the demo data twice gives the same counts, and
// the demo tenant's sandbox key sees its services (with telemetry) and its
// invoices, one of them unpaid.
func TestDemoDataSeed(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	seeded, err := seed.NewStore(h.store).Seed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var counts []map[string]int64
	for range 2 {
		if _, err := seed.NewStore(h.store).SeedDemoData(ctx, seeded); err != nil {
			t.Fatal(err)
		}
		c, err := seed.NewStore(h.store).DemoDataCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, c)
	}
	want := map[string]int64{"services": 3, "telemetry": 3 * seed.DemoTelemetryDays * 24, "invoices": 2, "payments": 1}
	for k, n := range want {
		if counts[0][k] != n {
			t.Fatalf("first seeding: %s = %d, want %d (%v)", k, counts[0][k], n, counts[0])
		}
	}
	if !maps.Equal(counts[0], counts[1]) {
		t.Fatalf("seeding again changed the counts: %v, then %v", counts[0], counts[1])
	}

	key := "sk_test_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(ctx, seeded.Demo.ID, key, "demo", models.RoleCustomer, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	var svcs struct {
		Services []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"services"`
	}
	h.do("GET", "/v1/services", key, nil).decode(http.StatusOK, &svcs)
	if len(svcs.Services) != 3 || svcs.Services[0].Status != "operational" {
		t.Fatalf("services %+v", svcs)
	}
	var metrics struct {
		Metrics []map[string]any `json:"metrics"`
	}
	h.do("GET", "/v1/services/svc_demoFiberAustin/metrics", key, nil).decode(http.StatusOK, &metrics)
	if len(metrics.Metrics) < 20 {
		t.Fatalf("a demo service has %d points of telemetry over the last day", len(metrics.Metrics))
	}
	var invs struct {
		Invoices []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"invoices"`
		TotalCount int `json:"total_count"`
	}
	h.do("GET", "/v1/billing/invoices", key, nil).decode(http.StatusOK, &invs)
	statuses := map[string]string{}
	for _, inv := range invs.Invoices {
		statuses[inv.ID] = inv.Status
	}
	if invs.TotalCount != 2 || statuses[seed.DemoInvoicePaid] != "paid" || statuses[seed.DemoInvoiceUnpaid] != "pending" {
		t.Fatalf("invoices %+v", invs)
	}
	// The live environment of the demo tenant stays empty.
	live := "sk_live_" + models.RandomString(56)
	if _, err := identity.NewStore(h.store).EnsureAPIKey(ctx, seeded.Demo.ID, live, "demo live", models.RoleCustomer, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/v1/services", live, nil).decode(http.StatusOK, &svcs)
	if len(svcs.Services) != 0 {
		t.Fatalf("live services %+v", svcs)
	}
}
