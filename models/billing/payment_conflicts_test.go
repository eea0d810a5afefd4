package billing_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/billing"
	"github.com/telcoplatform/platform/testenv"
)

// TestBeginPaymentConflictDetails: under the invoice row's lock, paying a
// paid invoice is DUPLICATE_PAYMENT with every documented detail, and
// paying a cancelled one is INVALID_STATE_TRANSITION with from, to and
// allowed.
func TestBeginPaymentConflictDetails(t *testing.T) {
	s, _ := testenv.SeededStore(t)
	ctx := context.Background()
	store := billing.NewStore(s)
	tn := newTenant(t, s, "Conflicts", 0)
	svc := tn.service(t, s, 50_00)
	method := &billing.PaymentMethod{ID: "pm_test", Type: "credit_card", Brand: "visa", Last4: "4242"}
	issue := func() *billing.Invoice {
		t.Helper()
		inv, err := store.CreateInvoice(ctx, tn.p, billing.InvoiceInput{AccountID: tn.acct.ID, Lines: []billing.InvoiceLineInput{{ServiceID: svc.ID, Quantity: 1, UnitPrice: 20_00}}})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}

	paid := issue()
	pay, err := store.BeginPayment(ctx, tn.scope(), billing.PaymentStart{Invoice: paid.ID, Amount: 20_00, Method: method, Source: billing.PaymentSourceAPI})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.FinishPayment(ctx, tn.scope(), pay.ID, billing.PaymentOutcome{Succeeded: true, TransactionID: "txn_1"}); err != nil {
		t.Fatal(err)
	}
	_, err = store.BeginPayment(ctx, tn.scope(), billing.PaymentStart{Invoice: paid.ID, Amount: 3_00, Method: method, Source: billing.PaymentSourceAPI})
	e := models.AsError(err)
	if e.Code != models.CodeDuplicatePayment {
		t.Fatalf("error %v", err)
	}
	want := map[string]any{"invoice_id": paid.ID, "status": "paid", "amount_due": models.Money(0), "processing_amount": models.Money(0), "requested_amount": models.Money(3_00)}
	for k, v := range want {
		if e.Details[k] != v {
			t.Fatalf("details.%s = %v, want %v: %+v", k, e.Details[k], v, e.Details)
		}
	}
	if _, ok := e.Details["paid_date"]; !ok {
		t.Fatalf("details %+v", e.Details)
	}

	voided := issue()
	staff := &models.Principal{ID: "ak_staff", OrganizationID: tn.p.OrganizationID, Environment: models.EnvLive, Role: models.RoleAdmin, Permissions: []string{"*"}}
	if _, err := store.CancelInvoice(ctx, staff, voided.ID, ""); err != nil {
		t.Fatal(err)
	}
	_, err = store.BeginPayment(ctx, tn.scope(), billing.PaymentStart{Invoice: voided.ID, Amount: 1_00, Method: method, Source: billing.PaymentSourceAPI})
	e = models.AsError(err)
	if e.Code != models.CodeInvalidStateTransition || e.Details["from"] != "cancelled" || e.Details["to"] != "paid" || fmt.Sprint(e.Details["allowed"]) != "[]" {
		t.Fatalf("error %v %+v", err, e.Details)
	}
}
