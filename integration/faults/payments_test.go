//go:build faults

package faults

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestConcurrentFullPayments sends 100 full payments of one invoice at
// once through two API processes: exactly one succeeds (one charge), the
// others are refused with 409 DUPLICATE_PAYMENT, and the invoice is paid
// once.
func TestConcurrentFullPayments(t *testing.T) {
	t.Parallel()
	s := startStack(t, stackOptions{apis: 2, postgresOnly: "two API processes on one database"})
	var accts struct {
		Accounts []struct{ ID string } `json:"accounts"`
	}
	s.do("GET", "/v1/billing/accounts", nil, nil, http.StatusOK, &accts)
	if len(accts.Accounts) == 0 {
		t.Fatal("the demo tenant has no sandbox billing account")
	}
	acct := accts.Accounts[0].ID
	var acc accepted
	s.do("POST", "/v1/services/provision", map[string]any{"service_template": "internet-business-100m", "location_id": "loc_sandbox_all", "account_id": acct},
		nil, http.StatusAccepted, &acc)
	if st := s.waitTerminal([]string{acc.RequestID}, 2*time.Minute)[acc.RequestID]; st != "completed" {
		t.Fatalf("provisioning %s", st)
	}
	var created struct {
		Invoice struct {
			ID        string  `json:"id"`
			AmountDue float64 `json:"amount_due"`
		} `json:"invoice"`
	}
	s.do("POST", "/v1/billing/invoices", map[string]any{"account_id": acct,
		"services": []map[string]any{{"service_id": acc.ServiceID, "quantity": 1, "unit_price": 25}}}, nil, http.StatusCreated, &created)
	inv := created.Invoice
	if inv.AmountDue <= 0 {
		t.Fatalf("invoice %+v", inv)
	}

	const n = 100
	keys := s.keyPool(3)
	statuses := make([]int, n)
	codes := make([]string, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			a, err := s.sendKey(keys[i%3], s.bases[i%2], "POST", "/v1/billing/payments", map[string]any{"invoice_id": inv.ID, "amount": inv.AmountDue,
				"payment_method": map[string]any{"type": "credit_card", "card_token": "tok_visa"}}, map[string]string{"Idempotency-Key": fmt.Sprintf("pay-%d", i)})
			if err != nil {
				codes[i] = err.Error()
				return
			}
			statuses[i], codes[i] = a.status, a.errorCode()
		}()
	}
	close(start)
	wg.Wait()
	succeeded, duplicates, limited := 0, 0, 0
	for i := range n {
		switch {
		case statuses[i] == http.StatusCreated:
			succeeded++
		case statuses[i] == http.StatusConflict && codes[i] == "DUPLICATE_PAYMENT":
			duplicates++
		case statuses[i] == http.StatusTooManyRequests && codes[i] == "RATE_LIMIT_EXCEEDED":
			limited++ // the payment endpoints' own burst limit: refused before any charge
		default:
			t.Errorf("payment %d through API %d: %d %s", i, i%2, statuses[i], codes[i])
		}
	}
	if succeeded != 1 || duplicates+limited != n-1 || duplicates < n/2 {
		t.Fatalf("%d payments succeeded, %d refused as duplicates, %d rate limited, of %d", succeeded, duplicates, limited, n)
	}
	var charges int64
	if err := s.db().Table("payments").Where("invoice_id = ? AND status IN ?", inv.ID, []string{"successful", "processing"}).Count(&charges).Error; err != nil {
		t.Fatal(err)
	}
	var got struct {
		Invoice struct {
			Status    string  `json:"status"`
			AmountDue float64 `json:"amount_due"`
		} `json:"invoice"`
	}
	s.do("GET", "/v1/billing/invoices/"+inv.ID, nil, nil, http.StatusOK, &got)
	if charges != 1 || got.Invoice.Status != "paid" || got.Invoice.AmountDue != 0 {
		t.Fatalf("%d charges recorded; invoice %+v", charges, got.Invoice)
	}
	t.Logf("%d concurrent full payments of %.2f through two APIs: %d succeeded, %d DUPLICATE_PAYMENT, %d RATE_LIMIT_EXCEEDED, %d charge recorded", n, inv.AmountDue, succeeded, duplicates, limited, charges)
	s.figure("payments_concurrent", n)
	s.figure("payments_succeeded", succeeded)
	s.figure("payments_double_charges", charges-1)
}
