package portal

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// orderPage is the data of the order pages: the catalog, an availability
// answer (or its refusal with alternatives) and a quote.
type orderPage struct {
	Categories   []any
	Offer        string // the catalog offer chosen
	Address      M      // the address typed
	Availability M
	Refusal      string
	Alternatives []any
	Quote        M
}

// registerOrder registers the order flow: catalog, availability at an
// address, quote, provisioning from the quote.
func (p *Portal) registerOrder(r fiber.Router) {
	r.Get("/order", p.page(func(c *fiber.Ctx, r *Request) error {
		cat, err := r.API.Get("/services/catalog", nil)
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "order", r, orderPage{Categories: listOf(cat, "categories"), Offer: c.Query("offer")})
	}))
	r.Post("/order/availability", p.page(func(c *fiber.Ctx, r *Request) error {
		d := orderPage{Offer: c.FormValue("offer"), Address: M{"address": c.FormValue("address"), "city": c.FormValue("city"), "state": c.FormValue("state"), "zip": c.FormValue("zip")}}
		var out M
		err := r.API.Do(http.MethodPost, "/services/availability/check", M{"location": d.Address}, &out)
		var apiErr *APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnprocessableEntity || errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest:
			d.Refusal = errorMessage(apiErr)
			d.Alternatives, _ = apiErr.Details["alternatives"].([]any)
		case err != nil:
			return err
		default:
			d.Availability = out
		}
		return p.render(c, http.StatusOK, "availability", r, d)
	}))
	r.Post("/order/quote", p.page(func(c *fiber.Ctx, r *Request) error {
		item := M{"type": c.FormValue("service"), "bandwidth": c.FormValue("bandwidth"), "sla": c.FormValue("sla"), "location": c.FormValue("location_id")}
		for k, v := range item {
			if v == "" {
				delete(item, k)
			}
		}
		var out M
		if err := r.API.Do(http.MethodPost, "/services/quotes", M{"services": []M{item}}, &out); err != nil {
			return err
		}
		return c.Redirect(withEnv(r.Env, Path+"/order/quotes/"+url.PathEscape(str(obj(out["quote"])["id"]))), http.StatusSeeOther)
	}))
	r.Get("/order/quotes/:id", p.page(func(c *fiber.Ctx, r *Request) error {
		q, err := r.API.Get("/services/quotes/"+url.PathEscape(c.Params("id")), nil)
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "quote", r, orderPage{Quote: obj(q["quote"])})
	}))
	r.Post("/order/quotes/:id/provision", p.page(func(c *fiber.Ctx, r *Request) error {
		body := M{"quote_id": c.Params("id"), "quote_item": int(num(parseNumber(c.FormValue("item"))))}
		if name := strings.TrimSpace(c.FormValue("name")); name != "" {
			body["name"] = name
		}
		var acc M
		if err := r.API.Do(http.MethodPost, "/services/provision", body, &acc); err != nil {
			return err
		}
		return p.followOperation(c, r, acc)
	}))
}
