package api

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/swaggest/swgui/v5emb"
)

// registerDocs serves the OpenAPI 3.0 document (huma's downgrade of its 3.1
// model) at /openapi.json and /openapi.yaml, the 3.1 original at
// /openapi-3.1.json, and an explorer whose assets ship with the binary at /docs.
func (s *Server) registerDocs() {
	s.App.Get("/", func(c *fiber.Ctx) error { return c.Redirect("/docs", fiber.StatusFound) })
	document := func(contentType string, render func() ([]byte, error)) fiber.Handler {
		return func(c *fiber.Ctx) error {
			b, err := render()
			if err != nil {
				return err
			}
			c.Set(fiber.HeaderContentType, contentType)
			return c.Send(b)
		}
	}
	s.App.Get("/openapi.json", document("application/json", s.API.OpenAPI().Downgrade))
	s.App.Get("/openapi.yaml", document("application/yaml", s.API.OpenAPI().DowngradeYAML))
	s.App.Get("/openapi-3.1.json", document("application/json", s.API.OpenAPI().MarshalJSON))
	explorer := adaptor.HTTPHandler(v5emb.New("Telecom & IT Services Platform API", "/openapi.json", "/docs/"))
	s.App.Get("/docs", explorer)
	s.App.Get("/docs/*", explorer)
}
