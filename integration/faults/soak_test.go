//go:build faults && soak

package faults

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Soak bounds: SOAK_DURATION (a Go duration, default 3m) is clamped to
// [30s, 30m].
const (
	soakDefault = 3 * time.Minute
	soakMax     = 30 * time.Minute
	soakTick    = 100 * time.Millisecond // one action per tick
	soakRestart = 30 * time.Second       // a worker is SIGKILLed and started again
)

// soakRun counts what the soak did.
type soakRun struct {
	requests, reads, tickets, ops, invoices, payments, refused atomic.Int64
	mu                                                         sync.Mutex
	opIDs                                                      []string
	paidInvoices                                               []string
	bad                                                        []string
}

func (r *soakRun) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) < 20 {
		r.bad = append(r.bad, fmt.Sprintf(format, args...))
	}
}

// TestSoak is `make soak`: mixed traffic (reads, provisioning, tickets,
// invoices and their payments, webhooks to a loopback receiver) at a
// steady rate through two APIs, for SOAK_DURATION, with a worker SIGKILLed
// and started again every 30 s; then a consistency check over the
// database: every operation terminal, every event delivered, every paid
// invoice paid once for its total, inventory and services consistent. It
// prints the figures.
func TestSoak(t *testing.T) {
	duration := soakDefault
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SOAK_DURATION: %v", err)
		}
		duration = min(max(d, 30*time.Second), soakMax)
	}
	s := startStack(t, stackOptions{apis: 2, workers: 2, postgresOnly: "the soak runs two APIs and two workers on one database"})
	hooks := newReceiver(t)
	subscribed := time.Now()
	sub := s.subscribe(hooks, "service.*", "ticket.*", "invoice.*", "payment.*")
	var servicesBefore int64
	if err := s.db().Table("services").Count(&servicesBefore).Error; err != nil {
		t.Fatal(err)
	}
	var accts struct {
		Accounts []struct{ ID string } `json:"accounts"`
	}
	s.do("GET", "/v1/billing/accounts", nil, nil, http.StatusOK, &accts)
	if len(accts.Accounts) == 0 {
		t.Fatal("no sandbox billing account")
	}
	account := accts.Accounts[0].ID
	// Provisioning and billing have hourly limits per credential (50 and
	// 100 requests): enough keys for the run's share of each.
	ticks := int(duration / soakTick)
	keys := s.keyPool(ticks/10/40 + ticks/20/80 + 2)
	keyFor := func(group, i int) string { return keys[(group*7+i/40)%len(keys)] }

	r := &soakRun{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	kills := 0
	wg.Add(1)
	go func() { // the worker restarts
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(soakRestart):
			}
			w := s.workers[kills%2]
			w.Kill()
			kills++
			w.Start()
			w.WaitReady(time.Minute)
		}
	}()
	began := time.Now()
	ticker := time.NewTicker(soakTick)
	var provisioned []string // services ready to invoice
	for i := 0; time.Since(began) < duration; i++ {
		<-ticker.C
		api := s.bases[i%2]
		switch {
		case i%10 == 0: // provisioning
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := s.soakCall(r, keyFor(0, i/10), api, "POST", "/v1/services/provision", sandboxOrder, fmt.Sprintf("soak-op-%d", i))
				var acc accepted
				if a.status == http.StatusAccepted && jsonDecode(a.body, &acc) == nil {
					r.ops.Add(1)
					r.mu.Lock()
					r.opIDs = append(r.opIDs, acc.RequestID)
					r.mu.Unlock()
				} else if a.status != 0 {
					r.fail("provision: %d %s", a.status, a.body)
				}
			}()
		case i%20 == 5 && len(provisioned) > 0: // an invoice, paid in full
			svc := provisioned[i%len(provisioned)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := keyFor(1, i/20)
				var inv struct {
					Invoice struct {
						ID        string  `json:"id"`
						AmountDue float64 `json:"amount_due"`
					} `json:"invoice"`
				}
				a := s.soakCall(r, key, api, "POST", "/v1/billing/invoices", map[string]any{"account_id": account,
					"services": []map[string]any{{"service_id": svc, "quantity": 1, "unit_price": 10 + i%7}}}, fmt.Sprintf("soak-inv-%d", i))
				if a.status != http.StatusCreated || jsonDecode(a.body, &inv) != nil {
					r.fail("invoice: %d %s", a.status, a.body)
					return
				}
				r.invoices.Add(1)
				p := s.soakCall(r, key, s.bases[(i+1)%2], "POST", "/v1/billing/payments", map[string]any{"invoice_id": inv.Invoice.ID,
					"amount": inv.Invoice.AmountDue, "payment_method": map[string]any{"type": "credit_card", "card_token": "tok_visa"}}, fmt.Sprintf("soak-pay-%d", i))
				if p.status != http.StatusCreated {
					r.fail("payment: %d %s", p.status, p.body)
					return
				}
				r.payments.Add(1)
				r.mu.Lock()
				r.paidInvoices = append(r.paidInvoices, inv.Invoice.ID)
				r.mu.Unlock()
			}()
		case i%4 == 1: // a ticket
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := s.soakCall(r, s.key, api, "POST", "/v1/support/tickets", map[string]any{"title": fmt.Sprintf("Soak %d", i), "description": "soak",
					"category": "network", "priority": "low"}, fmt.Sprintf("soak-tk-%d", i))
				if a.status == http.StatusCreated {
					r.tickets.Add(1)
				} else if a.status != 0 {
					r.fail("ticket: %d %s", a.status, a.body)
				}
			}()
		default: // reads
			path := []string{"/v1/services/catalog", "/v1/services", "/v1/support/tickets", "/v1/operations"}[i%4]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if a := s.soakCall(r, s.key, api, "GET", path, nil, ""); a.status == http.StatusOK {
					r.reads.Add(1)
				} else if a.status != 0 {
					r.fail("GET %s: %d %s", path, a.status, a.body)
				}
			}()
		}
		if i%50 == 0 { // refresh the services ready to invoice
			var ids []string
			_ = s.db().Table("services").Where("status = ?", "operational").Limit(50).Pluck("id", &ids).Error
			provisioned = ids
		}
	}
	ticker.Stop()
	close(stop)
	wg.Wait()
	load := time.Since(began)
	if len(r.bad) > 0 {
		t.Fatalf("answers outside the contract:\n%v", r.bad)
	}

	// The consistency check.
	statuses := s.waitTerminal(r.opIDs, 5*time.Minute)
	for id, st := range statuses {
		if st != "completed" {
			t.Fatalf("operation %s ended %s", id, st)
		}
	}
	c := s.consistency(servicesBefore, len(r.opIDs), subscribed)
	deliveries := s.waitDelivered(sub, 5*time.Minute)
	var events int64
	if err := s.db().Table("events").Where("created_at >= ? AND (type LIKE 'service.%' OR type LIKE 'ticket.%' OR type LIKE 'invoice.%' OR type LIKE 'payment.%')", subscribed).
		Count(&events).Error; err != nil {
		t.Fatal(err)
	}
	if deliveries["succeeded"] != events || len(deliveries) != 1 {
		t.Fatalf("deliveries by status %v for %d events", deliveries, events)
	}
	var badInvoices, badPayments int64
	if err := s.db().Table("invoices").Where("id IN ? AND (status <> 'paid' OR amount_paid <> total)", r.paidInvoices).Count(&badInvoices).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.store.DB.Raw(`SELECT count(*) FROM (SELECT invoice_id FROM payments WHERE status = 'successful' GROUP BY invoice_id HAVING count(*) > 1) d`).
		Scan(&badPayments).Error; err != nil {
		t.Fatal(err)
	}
	if badInvoices != 0 || badPayments != 0 {
		t.Fatalf("inconsistent: %d paid invoices whose balance is off, %d invoices charged twice", badInvoices, badPayments)
	}
	seen := map[string]bool{}
	for _, d := range hooks.deliveries() {
		seen[d.eventID] = true
	}
	t.Logf("soak figures: duration %s (load %s), %d requests (%.1f/s): %d reads, %d tickets, %d provisioning operations, %d invoices, %d payments; "+
		"%d worker SIGKILLs; %d services, %d events, %d deliveries succeeded, %d distinct events received; 503 retried %d; "+
		"operations not terminal 0, events lost 0, double charges 0, inventory inconsistencies 0",
		duration, load.Round(time.Second), r.requests.Load(), float64(r.requests.Load())/load.Seconds(), r.reads.Load(), r.tickets.Load(), r.ops.Load(),
		r.invoices.Load(), r.payments.Load(), kills, c.services, events, deliveries["succeeded"], len(seen), r.refused.Load())
}

// soakCall sends one request through retryCall and counts it.
func (s *stack) soakCall(r *soakRun, key, base, method, path string, body any, idem string) answer {
	a, retries, problem := s.retryCall(key, base, method, path, body, idem)
	r.requests.Add(int64(retries + 1))
	r.refused.Add(int64(retries))
	if problem != "" {
		r.fail("%s", problem)
		return answer{}
	}
	return a
}
