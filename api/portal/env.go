package portal

import (
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// The sandbox view: ?env=test (or a form's env field) shows and acts on
// the organization's test data. Every page of the sandbox keeps the choice:
// its links carry env=test (withEnv, the envq template function), its forms
// post it in a hidden field (envfield) and the redirects after an action go
// back to the sandbox (redirectNotice, followOperation). The live view has
// none of it.

// requestEnv is the environment a request asks for: test when its query
// or its form says env=test, live otherwise.
func requestEnv(c *fiber.Ctx) models.Environment {
	if c.Query("env") == string(models.EnvTest) || c.FormValue("env") == string(models.EnvTest) {
		return models.EnvTest
	}
	return models.EnvLive
}

// withEnv returns the portal address to kept in env: in the sandbox,
// env=test is added to its query (before any fragment) unless it already
// names an environment; live addresses are returned unchanged.
func withEnv(env models.Environment, to string) string {
	if env != models.EnvTest {
		return to
	}
	path, frag, hasFrag := strings.Cut(to, "#")
	base, query, hasQuery := strings.Cut(path, "?")
	for _, kv := range strings.Split(query, "&") {
		if kv == "env" || strings.HasPrefix(kv, "env=") {
			return to
		}
	}
	out := base + "?env=test"
	if hasQuery && query != "" {
		out = base + "?" + query + "&env=test"
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// envField is the hidden field that keeps a form in the sandbox ("" live).
func envField(env models.Environment) template.HTML {
	if env == models.EnvTest {
		return `<input type="hidden" name="env" value="test">`
	}
	return ""
}

// inEnv is a sub-template's data with the page's environment (the inenv
// template function): lists rendered by a template of their own, such as
// attachments or payments, link in the page's environment.
type inEnv struct {
	Env  models.Environment
	Data any
}
