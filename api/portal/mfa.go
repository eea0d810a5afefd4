package portal

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The second factor in the page: an action the API answers with 401
// mfa_required shows the challenge form, carrying the action's own fields;
// once the code is verified, the action is sent again with the verified
// challenge (X-MFA-Challenge-Id), from a form that submits itself (or a
// Continue button without scripts).

// field is a form field carried through the challenge.
type field struct{ Name, Value string }

// challengePage is the data of the challenge form.
type challengePage struct {
	Challenge *Challenge
	Action    string  // the challenged action's path
	Fields    []field // its form fields
	Error     string
	Sent      string // "a code was sent by e-mail" notice
	Verified  bool   // the code is verified: the continue form
}

// carriedFields returns the POST fields of the request except the CSRF
// token, the challenge's own and the environment (the challenge's forms
// carry that one themselves: envfield).
func carriedFields(c *fiber.Ctx) []field {
	var out []field
	for k, v := range c.Request().PostArgs().All() {
		name := string(k)
		if orig, ok := strings.CutPrefix(name, "f."); ok {
			name = orig
		}
		if name == "csrf_token" || name == "env" || strings.HasPrefix(name, "mfa_") {
			continue
		}
		out = append(out, field{name, string(v)})
	}
	return out
}

// renderChallenge shows the challenge form for the request's action.
func (p *Portal) renderChallenge(c *fiber.Ctx, r *Request, ch *Challenge, msg string) error {
	action := c.FormValue("mfa_action")
	if action == "" {
		action = c.OriginalURL()
	}
	return p.render(c, http.StatusUnauthorized, "mfa", r, challengePage{Challenge: ch, Action: action, Fields: carriedFields(c), Error: msg})
}

// registerMFA registers the challenge's verify and send forms.
func (p *Portal) registerMFA(r fiber.Router) {
	r.Post("/mfa/send", p.page(func(c *fiber.Ctx, r *Request) error {
		ch := &Challenge{ID: c.FormValue("mfa_challenge"), Methods: strings.Split(c.FormValue("mfa_methods"), ",")}
		page := challengePage{Challenge: ch, Action: c.FormValue("mfa_action"), Fields: carriedFields(c)}
		err := r.API.Do(fiber.MethodPost, "/auth/mfa/challenges/"+url.PathEscape(ch.ID)+"/send", M{"method": c.FormValue("mfa_method")}, nil)
		if err != nil {
			page.Error = errorMessage(err)
		} else {
			page.Sent = "A code was sent by " + c.FormValue("mfa_method") + "."
		}
		return p.render(c, http.StatusOK, "mfa", r, page)
	}))
	r.Post("/mfa/verify", p.page(func(c *fiber.Ctx, r *Request) error {
		ch := &Challenge{ID: c.FormValue("mfa_challenge"), Methods: strings.Split(c.FormValue("mfa_methods"), ",")}
		page := challengePage{Challenge: ch, Action: c.FormValue("mfa_action"), Fields: carriedFields(c)}
		if !strings.HasPrefix(page.Action, Path+"/") {
			return p.renderError(c, r.Session, http.StatusBadRequest, "The challenged action is not a portal page.")
		}
		body := M{"challenge_id": ch.ID, "method": c.FormValue("mfa_method"), "code": strings.TrimSpace(c.FormValue("mfa_code"))}
		if err := r.API.Do(fiber.MethodPost, "/auth/mfa/verify", body, nil); err != nil {
			page.Error = errorMessage(err)
			return p.render(c, http.StatusUnauthorized, "mfa", r, page)
		}
		// The session's second factor is verified: its pages call the API
		// with a token minted from now on.
		p.Forget(r.Session.ID)
		page.Verified = true
		return p.render(c, http.StatusOK, "mfa", r, page)
	}))
}

// errorMessage is the message of an API refusal for a page.
func errorMessage(err error) string {
	if e, ok := err.(*APIError); ok {
		msg := e.Message
		for _, f := range e.Fields {
			if issue := f.Field + ": " + f.Issue; !strings.Contains(msg, issue) {
				msg += "; " + issue
			}
		}
		return msg
	}
	return "The platform could not answer. Try again in a moment."
}
