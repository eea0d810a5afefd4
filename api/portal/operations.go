package portal

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"
)

// registerOperations registers the operations list, an operation's page
// (following it live) and its event stream for the page's script.
func (p *Portal) registerOperations(r fiber.Router) {
	r.Get("/operations", p.page(func(c *fiber.Ctx, r *Request) error {
		list, err := r.API.Get("/operations", url.Values{"limit": {"50"}})
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "operations", r, listOf(list, "operations"))
	}))
	r.Get("/operations/:id", p.page(func(c *fiber.Ctx, r *Request) error {
		op, err := r.API.Get("/operations/"+url.PathEscape(c.Params("id")), nil)
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "operation", r, op)
	}))
	// The operation's Server-Sent Events, relayed from the API's stream.
	r.Get("/operations/:id/events", p.page(func(c *fiber.Ctx, r *Request) error {
		return r.API.Stream(c, "/operations/"+url.PathEscape(c.Params("id")))
	}))
}
