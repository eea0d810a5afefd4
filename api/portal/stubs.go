package portal

import "github.com/gofiber/fiber/v2"

func (p *Portal) registerServices(r fiber.Router)   {}
func (p *Portal) registerOrder(r fiber.Router)      {}
func (p *Portal) registerDevelopers(r fiber.Router) {}
