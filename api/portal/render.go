package portal

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// pages are the parsed page templates, each with the layout.
type pages struct {
	byName map[string]*template.Template
	// invoicePrint is the standalone print copy of an invoice (no layout).
	invoicePrint *template.Template
}

// parsePages parses templates/layout.html with each other template file
// (a page defines "title" and "content").
func parsePages() *pages {
	base := template.Must(template.New("layout.html").Funcs(funcs()).ParseFS(templateFiles, "templates/layout.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	ps := &pages{byName: map[string]*template.Template{},
		invoicePrint: template.Must(template.New("invoice.html").Funcs(template.FuncMap{"day": day}).ParseFS(printFiles, "print/invoice.html"))}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		ps.byName[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFiles, n))
	}
	return ps
}

// navItem is an entry of the navigation.
type navItem struct {
	ID         string
	Label      string
	Path       string
	Permission string   // needed to see the entry ("" none)
	AnyOf      []string // or any of these
}

// view is what the layout renders around a page's content.
type view struct {
	Title   string
	Session *Session
	Nav     []navItem
	Active  string // the active navigation entry's path
	Env     models.Environment
	SSO     bool
	Data    any
}

// render executes page name with data for r's session.
func (p *Portal) render(c *fiber.Ctx, status int, name string, r *Request, data any) error {
	v := view{Data: data, SSO: p.cfg.SSO, Env: models.EnvLive}
	if r != nil {
		v.Session, v.Env = r.Session, r.Env
	}
	return p.renderView(c, status, name, v)
}

func (p *Portal) renderView(c *fiber.Ctx, status int, name string, v view) error {
	t, ok := p.pages.byName[name]
	if !ok {
		return models.Internal(fmt.Errorf("no portal page %q", name))
	}
	if v.Session != nil {
		v.Nav = p.nav(v.Session)
		for _, n := range v.Nav {
			if n.Path == Path && c.Path() == Path || n.Path != Path && strings.HasPrefix(c.Path(), n.Path) {
				v.Active = n.Path
			}
		}
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout.html", v); err != nil {
		return models.Internal(err)
	}
	setHeaders(c)
	c.Type("html", "utf-8")
	return c.Status(status).Send(b.Bytes())
}

// nav returns the navigation entries the session's permissions allow.
func (p *Portal) nav(s *Session) []navItem {
	var out []navItem
	for _, a := range p.areas() {
		n := a.nav
		if n.Label == "" || n.Permission != "" && !s.Can(n.Permission) {
			continue
		}
		if len(n.AnyOf) > 0 {
			ok := false
			for _, perm := range n.AnyOf {
				ok = ok || s.Can(perm)
			}
			if !ok {
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Heading string
	Message string
}

// renderError renders the error page (s nil: no session). A signed-in
// person's error page keeps the request's environment: its links go back
// to the sandbox when the request was made there.
func (p *Portal) renderError(c *fiber.Ctx, s *Session, status int, message string) error {
	env := models.EnvLive
	if s != nil {
		env = requestEnv(c)
	}
	return p.renderView(c, status, "error", view{Session: s, SSO: p.cfg.SSO, Env: env,
		Data: errorPage{Status: status, Heading: http.StatusText(status), Message: message}})
}

// RenderError renders the error page outside a signed-in page (no
// navigation), for the portal's routes served beside it (sign-out).
func (p *Portal) RenderError(c *fiber.Ctx, status int, message string) error {
	return p.renderError(c, nil, status, message)
}

// signIn is the data of the sign-in page.
type signIn struct {
	Error     string
	Email     string
	LoginCSRF string
}

// RenderSignIn renders the sign-in page with an error message (or none)
// and the e-mail typed, setting the sign-in form's CSRF cookie.
func (p *Portal) RenderSignIn(c *fiber.Ctx, status int, message, email string) error {
	token := c.Cookies(LoginCookie)
	if len(token) < 32 {
		token = models.RandomString(32)
		c.Cookie(&fiber.Cookie{Name: LoginCookie, Value: token, Path: Path, HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: p.cfg.Secure})
	}
	return p.renderView(c, status, "signin", view{SSO: p.cfg.SSO, Env: models.EnvLive, Data: signIn{Error: message, Email: email, LoginCSRF: token}})
}

// funcs are the templates' helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"ts": formatTime,
		// formKey is a new idempotency key for a form that creates a
		// secret shown once: posted again by a reload, the form gets the
		// API's stored answer (the same secret) instead of a second one.
		"formKey": func() string { return "portal_" + models.RandomString(24) },
		"money":   money,
		"str":     str,
		"num":     num,
		"pct":     func(v any) string { return fmt.Sprintf("%.0f", num(v)) },
		"has":     func(s *Session, perm string) bool { return s != nil && s.Can(perm) },
		"lower":   strings.ToLower,
		"title": func(s string) string {
			return strings.ToUpper(s[:min(1, len(s))]) + strings.ReplaceAll(s[min(1, len(s)):], "_", " ")
		},
		"join": func(v any) string {
			if l, ok := v.([]string); ok {
				return strings.Join(l, ",")
			}
			return strings.Join(strs(v), ", ")
		},
		"terminal": terminal,
		"list":     func(v any) []any { l, _ := v.([]any); return l },
		"obj":      func(v any) M { m, _ := v.(M); return m },
		"contains": func(list []string, s string) bool {
			for _, x := range list {
				if x == s {
					return true
				}
			}
			return false
		},
		// envq is the query string that keeps a link in the sandbox
		// ("" live); envfield the hidden field that keeps a form there.
		"envq":     func(env models.Environment) string { return withEnv(env, "") },
		"envfield": envField,
		"inenv":    func(env models.Environment, data any) inEnv { return inEnv{Env: env, Data: data} },
	}
}

// str renders a JSON value as text ("" for null).
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return fmt.Sprintf("%.0f", x)
		}
		return fmt.Sprintf("%.2f", x)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v)
}

// num reads a JSON number (0 for anything else).
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}

// strs reads a JSON list of strings.
func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, str(x))
	}
	return out
}

// money formats an amount with two decimals and thousands separators.
func money(v any) string {
	s := fmt.Sprintf("%.2f", num(v))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	out := b.String() + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}

// formatTime renders a time or an RFC 3339 string in UTC, minutes precision.
func formatTime(v any) string {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04 UTC")
	case string:
		if t, err := time.Parse(time.RFC3339, x); err == nil {
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return x
	}
	return ""
}
