package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// budgetList is the answer of GET /v1/billing/budgets.
type budgetList struct {
	Budgets []struct {
		ID         string  `json:"id"`
		AccountID  string  `json:"account_id"`
		Amount     float64 `json:"amount"`
		Currency   string  `json:"currency"`
		Period     string  `json:"period"`
		Thresholds []int   `json:"thresholds"`
	} `json:"budgets"`
}

// budgets lists the budgets the key sees.
func budgets(t *testing.T, h *harness, key string) budgetList {
	t.Helper()
	var out budgetList
	h.do("GET", "/v1/billing/budgets", key, nil).decode(http.StatusOK, &out)
	return out
}

// TestPortalBudgets sets a budget from the billing page's form and reads
// it back through the API; bad amounts and thresholds are refused with a
// message (the portal's own check and the API's), another organization's
// account is refused, and a form without the CSRF token or from a session
// without billing:write sets nothing.
func TestPortalBudgets(t *testing.T) {
	h := newHarness(t)
	a, other := h.tenants[0], h.tenants[1]
	lin, csrf := portalUserOf(t, h, a.org.ID, "lin@tenant-a.example", "customer", nil)

	res, page := lin.send("GET", "/portal/billing", nil)
	for _, want := range []string{`id="create-budget"`, `<label for="budget-account">`, `<label for="budget-amount">`, `<label for="budget-period">`,
		`<label for="budget-thresholds">`, `<option value="` + a.account.ID + `">`, `value="quarterly"`, `name="csrf_token" value="` + csrf + `"`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("billing page lacks %s: %d\n%s", want, res.StatusCode, page)
		}
	}
	if strings.Contains(page, other.account.ID) {
		t.Fatal("the budget form offers another organization's account")
	}

	form := url.Values{"account_id": {a.account.ID}, "amount": {"2500.50"}, "period": {"quarterly"}, "thresholds": {"25, 75"}}
	if res, _ := lin.send("POST", "/portal/billing/budgets", form); res.StatusCode != http.StatusForbidden {
		t.Fatalf("budget form without CSRF token: %d", res.StatusCode)
	}
	form.Set("csrf_token", csrf)
	for _, bad := range []struct {
		field, value, says string
		status             int
	}{
		{"amount", "12,5x", "amount", http.StatusBadRequest},
		{"amount", "-3", "amount", http.StatusBadRequest},
		{"amount", "2500,50", "amount", http.StatusBadRequest}, // a decimal comma is not read as 250050.00
		{"amount", "1,0,0", "amount", http.StatusBadRequest},
		{"thresholds", "fifty", "thresholds", http.StatusBadRequest},
		{"thresholds", "0, 80", "thresholds", http.StatusBadRequest}, // the API's check
		{"period", "weekly", "period", http.StatusBadRequest},        // the API's check
		{"account_id", other.account.ID, "no billing account", http.StatusBadRequest},
	} {
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		f.Set(bad.field, bad.value)
		res, page := lin.send("POST", "/portal/billing/budgets", f)
		if res.StatusCode != bad.status || !strings.Contains(page, `id="error-message"`) || !strings.Contains(page, bad.says) {
			t.Fatalf("%s %q: %d\n%s", bad.field, bad.value, res.StatusCode, page)
		}
	}
	if n, m := len(budgets(t, h, a.liveKey).Budgets), len(budgets(t, h, other.liveKey).Budgets); n != 0 || m != 0 {
		t.Fatalf("refused forms set budgets: %d, %d", n, m)
	}

	res, _ = lin.send("POST", "/portal/billing/budgets", form)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/portal/billing" {
		t.Fatalf("set a budget: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	list := budgets(t, h, a.liveKey)
	if len(list.Budgets) != 1 {
		t.Fatalf("budgets after the form: %+v", list)
	}
	got := list.Budgets[0]
	if got.AccountID != a.account.ID || got.Amount != 2500.50 || got.Currency != "USD" || got.Period != "quarterly" || len(got.Thresholds) != 2 || got.Thresholds[0] != 25 || got.Thresholds[1] != 75 {
		t.Fatalf("budget set from the form: %+v", got)
	}
	_, page = lin.send("GET", res.Header.Get("Location"), nil)
	if !strings.Contains(page, got.ID) || !strings.Contains(page, "2,500.50 USD") || !strings.Contains(page, `id="message"`) {
		t.Fatalf("billing page after setting a budget:\n%s", page)
	}
	// Without thresholds the API's defaults apply; an amount written with
	// a thousands separator, as the page shows amounts, is read.
	form.Set("thresholds", "")
	form.Set("period", "monthly")
	form.Set("amount", "1,000.00")
	if res, _ := lin.send("POST", "/portal/billing/budgets", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("budget with the default thresholds: %d", res.StatusCode)
	}
	list = budgets(t, h, a.liveKey)
	amounts := map[float64]bool{}
	for _, b := range list.Budgets {
		amounts[b.Amount] = true
	}
	if len(list.Budgets) != 2 || !amounts[1000] || !amounts[2500.50] {
		t.Fatalf("budgets after the second form: %+v", list)
	}

	// A session with billing:read only sees the budgets but no form, and the API refuses its post.
	reader, readerCSRF := portalUserOf(t, h, a.org.ID, "ray@tenant-a.example", "customer", []string{"billing:read"})
	res, page = reader.send("GET", "/portal/billing", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, got.ID) || strings.Contains(page, `id="create-budget"`) {
		t.Fatalf("read-only billing page: %d\n%s", res.StatusCode, page)
	}
	form.Set("csrf_token", readerCSRF)
	if res, page := reader.send("POST", "/portal/billing/budgets", form); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "not allowed") {
		t.Fatalf("budget without billing:write: %d\n%s", res.StatusCode, page)
	}
	if list := budgets(t, h, a.liveKey); len(list.Budgets) != 2 {
		t.Fatalf("a refused session set a budget: %+v", list)
	}
	// Another organization sees none of them.
	if list := budgets(t, h, other.liveKey); len(list.Budgets) != 0 {
		t.Fatalf("another organization lists the budgets: %+v", list)
	}
}
