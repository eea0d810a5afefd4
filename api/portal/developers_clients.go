package portal

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// OAuth clients on the developers page: register one (its secret shown
// once), rotate its secret (shown once) and delete it. The API decides:
// auth:manage, and a second factor for users with one enrolled.

// grantType is a grant type offered by the registration form.
type grantType struct {
	Value   string // the grant_types value sent to the API
	Label   string // what the form shows
	Default bool   // checked to begin with
}

// grantTypes are the grant types a client can be registered with.
func grantTypes() []grantType {
	return []grantType{
		{Value: "authorization_code", Label: "authorization_code", Default: true},
		{Value: "refresh_token", Label: "refresh_token", Default: true},
		{Value: "client_credentials", Label: "client_credentials"},
		{Value: "urn:ietf:params:oauth:grant-type:device_code", Label: "device code (urn:ietf:params:oauth:grant-type:device_code)"},
	}
}

// registerClients registers the OAuth client forms.
func (p *Portal) registerClients(r fiber.Router) {
	r.Post("/developers/clients", p.page(p.createClient))
	r.Post("/developers/clients/:id/rotate", p.page(func(c *fiber.Ctx, r *Request) error {
		var out M
		if err := r.API.Do(http.MethodPost, "/auth/clients/"+url.PathEscape(c.Params("id"))+"/rotate-secret", nil, &out); err != nil {
			return err
		}
		cl := obj(out["client"])
		return p.render(c, http.StatusOK, "secret", r, secretPage{Kind: "OAuth client secret", ID: str(cl["client_id"]), Name: str(cl["name"]), Secret: str(cl["client_secret"])})
	}))
	r.Post("/developers/clients/:id/delete", p.deleteThenDevelopers("/auth/clients/", "OAuth client deleted."))
}

// createClient registers an OAuth client from the form: name, redirect
// URIs (one per line), grant types and scopes (checkboxes), public.
func (p *Portal) createClient(c *fiber.Ctx, r *Request) error {
	body := M{
		"name":          strings.TrimSpace(c.FormValue("name")),
		"redirect_uris": splitLines(c.FormValue("redirect_uris")),
		"grant_types":   formList(c, "grant_types"),
		"scopes":        formList(c, "scopes"),
		"public":        c.FormValue("public") == "true",
	}
	var out M
	if err := r.API.Do(http.MethodPost, "/auth/clients", body, &out); err != nil {
		return err
	}
	cl := obj(out["client"])
	if str(cl["client_secret"]) == "" {
		msg := "Public OAuth client " + str(cl["client_id"]) + " registered (no secret: it must use PKCE)."
		return p.redirectNotice(c, r, Path+"/developers", msg)
	}
	return p.render(c, http.StatusCreated, "secret", r, secretPage{Kind: "OAuth client secret", ID: str(cl["client_id"]), Name: str(cl["name"]), Secret: str(cl["client_secret"])})
}
