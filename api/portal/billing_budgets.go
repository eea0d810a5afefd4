package portal

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// Budgets on the billing page: the "Set a budget" form posts an account,
// an amount, a period and alert thresholds to POST /billing/budgets
// (billing:write; the budget takes its account's currency). Each post
// adds a budget; the API has no route to change or delete one, so the
// page offers neither and says so.

// budgetPeriods are the periods a budget can cover.
func budgetPeriods() []string { return []string{"monthly", "quarterly", "annual"} }

// parseThresholds reads comma- or space-separated percentages ("" none:
// the API's defaults).
func parseThresholds(text string) ([]int, bool) {
	out := []int{}
	for _, f := range splitList(text) {
		n, err := strconv.Atoi(strings.TrimSuffix(f, "%"))
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// groupedAmount is an amount written with thousands separators, as the
// pages show amounts (1,000.00); a comma anywhere else (2500,50) is not
// read, so it cannot be taken for a hundred times the amount.
var groupedAmount = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]{1,2})?$`)

// parseAmount reads a positive amount typed in a form: plain (1000.00) or
// with thousands separators (1,000.00).
func parseAmount(text string) (models.Money, error) {
	text = strings.TrimSpace(text)
	if strings.Contains(text, ",") {
		if !groupedAmount.MatchString(text) {
			return 0, models.Invalid(models.FieldIssue{Field: "amount", Issue: "commas may only separate thousands"})
		}
		text = strings.ReplaceAll(text, ",", "")
	}
	return models.ParseMoney(text)
}

// createBudget sets a budget from the form.
func (p *Portal) createBudget(c *fiber.Ctx, r *Request) error {
	amount, err := parseAmount(c.FormValue("amount"))
	if err != nil || amount <= 0 {
		return p.renderError(c, r.Session, http.StatusBadRequest, "The budget's amount must be a positive number with at most two decimals.")
	}
	thresholds, ok := parseThresholds(c.FormValue("thresholds"))
	if !ok {
		return p.renderError(c, r.Session, http.StatusBadRequest, "The thresholds must be whole percentages separated by commas, for example 50, 80, 100.")
	}
	body := M{"account_id": strings.TrimSpace(c.FormValue("account_id")), "amount": amount}
	if period := c.FormValue("period"); period != "" {
		body["period"] = period // else the API's default
	}
	if len(thresholds) > 0 {
		body["thresholds"] = thresholds
	}
	var out M
	if err := r.API.Do(http.MethodPost, "/billing/budgets", body, &out); err != nil {
		return err
	}
	b := obj(out["budget"])
	msg := "Budget " + str(b["id"]) + " set: " + money(b["amount"]) + " " + str(b["currency"]) + " " + str(b["period"]) + "."
	return p.redirectNotice(c, r, Path+"/billing", msg)
}
