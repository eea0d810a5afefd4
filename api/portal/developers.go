package portal

import (
	"net/http"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// developersPage is the data of the developers page.
type developersPage struct {
	Keys        []any
	Clients     []any
	Webhooks    []any
	Events      []any
	Permissions []string    // what a new key may be given (the session's own)
	Scopes      []string    // what a new OAuth client may ask for (the same, dotted)
	GrantTypes  []grantType // the grant types a client can be registered with
	CanKeys     bool
	CanWebhooks bool
	CanEvents   bool
	Message     string
}

// secretPage shows a secret once (a new or rotated key, a webhook's secret).
type secretPage struct {
	Kind   string
	ID     string
	Name   string
	Secret string
}

// webhookPage is a webhook subscription with its deliveries.
type webhookPage struct {
	Webhook    M
	Deliveries []any
	Message    string
}

// keyPermissions are the permissions a key can be created with from the page.
func keyPermissions() []string {
	return []string{"services:read", "services:write", "billing:read", "billing:write", "support:read", "support:create", "support:write",
		"webhooks:manage", "analytics:read"}
}

// registerDevelopers registers API keys, OAuth clients (registered,
// rotated and deleted: developers_clients.go), webhook subscriptions with
// their deliveries (paused, resumed and deleted), and events.
func (p *Portal) registerDevelopers(r fiber.Router) {
	r.Get("/developers", p.page(p.developers))
	r.Post("/developers/keys", p.page(func(c *fiber.Ctx, r *Request) error {
		var out M
		if err := r.API.Do(http.MethodPost, "/auth/api-keys", M{"name": c.FormValue("name"), "permissions": formList(c, "permissions")}, &out); err != nil {
			return err
		}
		k := obj(out["api_key"])
		return p.render(c, http.StatusCreated, "secret", r, secretPage{Kind: "API key", ID: str(k["id"]), Name: str(k["name"]), Secret: str(k["key"])})
	}))
	r.Post("/developers/keys/:id/rotate", p.page(func(c *fiber.Ctx, r *Request) error {
		var out M
		if err := r.API.Do(http.MethodPost, "/auth/api-keys/"+url.PathEscape(c.Params("id"))+"/rotate", M{}, &out); err != nil {
			return err
		}
		k := obj(out["api_key"])
		return p.render(c, http.StatusOK, "secret", r, secretPage{Kind: "API key", ID: str(k["id"]), Name: str(k["name"]), Secret: str(k["key"])})
	}))
	r.Post("/developers/keys/:id/revoke", p.deleteThenDevelopers("/auth/api-keys/", "Key revoked."))
	r.Post("/developers/webhooks", p.page(func(c *fiber.Ctx, r *Request) error {
		var out M
		if err := r.API.Do(http.MethodPost, "/webhooks", M{"url": c.FormValue("url"), "events": splitList(c.FormValue("events")), "description": c.FormValue("description")}, &out); err != nil {
			return err
		}
		w := obj(out["webhook"])
		return p.render(c, http.StatusCreated, "secret", r, secretPage{Kind: "Webhook signing secret", ID: str(w["id"]), Name: str(w["url"]), Secret: str(w["secret"])})
	}))
	r.Get("/developers/webhooks/:id", p.page(func(c *fiber.Ctx, r *Request) error {
		id := url.PathEscape(c.Params("id"))
		w, err := r.API.Get("/webhooks/"+id, nil)
		if err != nil {
			return err
		}
		d, err := r.API.Get("/webhooks/"+id+"/deliveries", url.Values{"limit": {"50"}})
		if err != nil {
			return err
		}
		return p.render(c, http.StatusOK, "webhook", r, webhookPage{Webhook: obj(w["webhook"]), Deliveries: listOf(d, "deliveries"), Message: p.takeNotice(c, r)})
	}))
	r.Post("/developers/webhooks/:id/redeliver", p.page(func(c *fiber.Ctx, r *Request) error {
		id := c.Params("id")
		if err := r.API.Do(http.MethodPost, "/events/"+url.PathEscape(c.FormValue("event_id"))+"/redeliver", M{"subscription_id": id}, nil); err != nil {
			return err
		}
		return p.redirectNotice(c, r, Path+"/developers/webhooks/"+url.PathEscape(id), "Redelivery started.")
	}))
	for _, st := range []struct {
		action, message string
		active          bool
	}{{"pause", "Subscription paused: nothing is delivered until it is resumed.", false}, {"resume", "Subscription resumed.", true}} {
		r.Post("/developers/webhooks/:id/"+st.action, p.page(func(c *fiber.Ctx, r *Request) error {
			id := url.PathEscape(c.Params("id"))
			if err := r.API.Do(http.MethodPatch, "/webhooks/"+id, M{"active": st.active}, nil); err != nil {
				return err
			}
			return p.redirectNotice(c, r, Path+"/developers/webhooks/"+id, st.message)
		}))
	}
	r.Post("/developers/webhooks/:id/delete", p.deleteThenDevelopers("/webhooks/", "Webhook subscription deleted."))
	p.registerClients(r)
}

// deleteThenDevelopers is a form's handler that sends DELETE of the API
// resource prefix + the path's id, then goes back to the developers page
// with notice.
func (p *Portal) deleteThenDevelopers(prefix, notice string) fiber.Handler {
	return p.page(func(c *fiber.Ctx, r *Request) error {
		if err := r.API.Do(http.MethodDelete, prefix+url.PathEscape(c.Params("id")), nil, nil); err != nil {
			return err
		}
		return p.redirectNotice(c, r, Path+"/developers", notice)
	})
}

func (p *Portal) developers(c *fiber.Ctx, r *Request) error {
	s := r.Session
	d := developersPage{CanKeys: s.Can("auth:manage"), CanWebhooks: s.Can("webhooks:manage"), CanEvents: s.Can("services:read"), Message: p.takeNotice(c, r),
		GrantTypes: grantTypes()}
	if !d.CanKeys && !d.CanWebhooks {
		return p.renderError(c, s, http.StatusForbidden, "You are not allowed to manage API keys or webhooks.")
	}
	for _, perm := range keyPermissions() {
		if s.Can(perm) {
			d.Permissions = append(d.Permissions, perm)
			d.Scopes = append(d.Scopes, models.PermissionToScope(perm))
		}
	}
	if d.CanKeys {
		keys, err := r.API.Get("/auth/api-keys", url.Values{"limit": {"50"}})
		if err != nil {
			return err
		}
		d.Keys = listOf(keys, "api_keys")
		clients, err := r.API.Get("/auth/clients", nil)
		if err != nil {
			return err
		}
		d.Clients = listOf(clients, "clients")
	}
	if d.CanWebhooks {
		hooks, err := r.API.Get("/webhooks", nil)
		if err != nil {
			return err
		}
		d.Webhooks = listOf(hooks, "webhooks")
	}
	if d.CanEvents {
		events, err := r.API.Get("/events", url.Values{"limit": {"20"}})
		if err == nil {
			d.Events = listOf(events, "events")
		}
	}
	return p.render(c, http.StatusOK, "developers", r, d)
}
