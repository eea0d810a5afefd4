package portal

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// The billing area: invoices with their lines (as a page, a PDF or a
// print-friendly HTML download), paying an invoice with a saved payment
// method (the API's second-factor challenge answered in the page), the
// payment history, usage and cost charts (server-rendered SVG from the
// analytics endpoints) and the budgets with their burn, set from the page
// (billing_budgets.go).

// billingPage is the data of the billing overview.
type billingPage struct {
	Invoices  []any
	Payments  []any
	Budgets   []any
	Period    string
	Periods   []string
	CostChart *billingChart // nil when the costs could not be read
	UseChart  *billingChart // nil without services:read
	Currency  string
	Costs     M // the costs' totals and forecast
	Usage     M // the usage totals
	// CanBudget offers the "Set a budget" form (billing:write; the API decides).
	CanBudget     bool
	Accounts      []any    // the accounts a budget can be set on
	BudgetPeriods []string // the periods a budget can cover
	Message       string   // the result of the last action
}

// invoicePage is the data of an invoice's page.
type invoicePage struct {
	Invoice  M
	Lines    []any
	Payments []any
	Methods  []any  // the account's saved payment methods
	Chosen   string // the method selected first: the default, else the first
	CanPay   bool
	Notice   string
	Error    string
}

// chartPeriods are the periods the charts offer.
func chartPeriods() []string {
	return []string{"last_7_days", "last_30_days", "current_month", "last_month", "current_year"}
}

// registerBilling registers the billing area.
func (p *Portal) registerBilling(r fiber.Router) {
	r.Get("/billing", p.page(p.billingOverview))
	r.Get("/billing/invoices/:file", p.page(func(c *fiber.Ctx, r *Request) error {
		file := c.Params("file")
		switch {
		case strings.HasSuffix(file, ".pdf"):
			return p.invoicePDF(c, r, strings.TrimSuffix(file, ".pdf"))
		case strings.HasSuffix(file, ".html"):
			return p.invoicePrint(c, r, strings.TrimSuffix(file, ".html"))
		}
		return p.invoice(c, r, file, http.StatusOK, p.takeNotice(c, r), "")
	}))
	r.Post("/billing/invoices/:id/pay", p.page(p.pay))
	r.Post("/billing/budgets", p.page(p.createBudget))
}

func (p *Portal) billingOverview(c *fiber.Ctx, r *Request) error {
	d := billingPage{Period: c.Query("period"), Periods: chartPeriods(), Message: p.takeNotice(c, r)}
	if !slices.Contains(d.Periods, d.Period) {
		d.Period = "last_30_days"
	}
	inv, err := r.API.Get("/billing/invoices", url.Values{"limit": {"50"}})
	if err != nil {
		return err
	}
	d.Invoices = listOf(inv, "invoices")
	pays, err := r.API.Get("/billing/payments", url.Values{"limit": {"20"}})
	if err != nil {
		return err
	}
	d.Payments = listOf(pays, "payments")
	b, err := r.API.Get("/billing/budgets", nil)
	if err != nil {
		return err
	}
	d.Budgets = listOf(b, "budgets")
	if r.Session.Can("billing:write") {
		accts, err := r.API.Get("/billing/accounts", url.Values{"limit": {"100"}})
		if err != nil {
			return err
		}
		d.CanBudget, d.Accounts, d.BudgetPeriods = true, listOf(accts, "accounts"), budgetPeriods()
	}
	costs, err := r.API.Get("/analytics/costs", url.Values{"period": {d.Period}})
	if err != nil {
		return err
	}
	cs := obj(costs["costs"])
	d.Currency, d.Costs = str(cs["currency"]), cs
	d.CostChart = barChart("cost-chart", "Net cost per period ("+d.Currency+")", listOf(cs, "buckets"), func(b M) float64 { return num(b["net"]) }, money)
	if r.Session.Can("services:read") {
		use, err := r.API.Get("/analytics/usage", url.Values{"period": {d.Period}})
		if err != nil {
			return err
		}
		us := obj(use["usage"])
		d.Usage = obj(us["totals"])
		d.UseChart = barChart("usage-chart", "Data transferred per period (GB)", listOf(us, "buckets"), func(b M) float64 { return num(b["data_gb"]) }, func(v any) string { return str(v) })
	}
	return p.render(c, http.StatusOK, "billing", r, d)
}

func (p *Portal) invoice(c *fiber.Ctx, r *Request, id string, status int, notice, msg string) error {
	inv, err := r.API.Get("/billing/invoices/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	in := obj(inv["invoice"])
	d := invoicePage{Invoice: in, Lines: listOf(in, "services"), Notice: notice, Error: msg}
	pays, err := r.API.Get("/billing/payments", url.Values{"invoice_id": {id}, "limit": {"50"}})
	if err != nil {
		return err
	}
	d.Payments = listOf(pays, "payments")
	st := str(in["status"])
	if (st == "pending" || st == "overdue") && r.Session.Can("billing:write") {
		pms, err := r.API.Get("/billing/accounts/"+url.PathEscape(str(in["account_id"]))+"/payment-methods", nil)
		if err != nil {
			return err
		}
		d.Methods, d.CanPay = listOf(pms, "payment_methods"), true
		for i, m := range d.Methods {
			if i == 0 || obj(m)["default"] == true {
				d.Chosen = str(obj(m)["id"])
			}
		}
	}
	return p.render(c, status, "billing_invoice", r, d)
}

// pay pays an invoice with a saved payment method. The API challenges a
// user with a second factor: the framework shows the challenge and sends
// this form again once it is met.
func (p *Portal) pay(c *fiber.Ctx, r *Request) error {
	id := c.Params("id")
	amount, err := models.ParseMoney(c.FormValue("amount"))
	if err != nil || amount <= 0 {
		return p.invoice(c, r, id, http.StatusBadRequest, "", "The amount must be a positive number with at most two decimals.")
	}
	body := M{"invoice_id": id, "amount": amount, "payment_method_id": c.FormValue("payment_method_id")}
	var out struct {
		PaymentID       string        `json:"payment_id"`
		Status          string        `json:"status"`
		Amount          models.Money  `json:"amount"`
		Currency        string        `json:"currency"`
		AmountRemaining *models.Money `json:"amount_remaining"`
	}
	if err := r.API.Do(fiber.MethodPost, "/billing/payments", body, &out); err != nil {
		if e, ok := err.(*APIError); ok && (refusal(e) || e.Status == http.StatusPaymentRequired) {
			return p.invoice(c, r, id, e.Status, "", "The payment was refused: "+errorMessage(err))
		}
		return err
	}
	notice := "Payment " + out.PaymentID + " of " + money(out.Amount.Float()) + " " + out.Currency + ": " + out.Status + "."
	if out.AmountRemaining != nil && *out.AmountRemaining > 0 {
		notice += " Still due: " + money(out.AmountRemaining.Float()) + " " + out.Currency + "."
	}
	return p.redirectNotice(c, r, Path+"/billing/invoices/"+url.PathEscape(id), notice)
}
