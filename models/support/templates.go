package support

import (
	"html/template"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

// E-mail templates of ticket notifications (docs/support.md).
const (
	TemplateTicketCreated  = "ticket_created"
	TemplateTicketUpdate   = "ticket_update"
	TemplateTicketResolved = "ticket_resolved"
	TemplateCustom         = "custom"
)

// EmailTemplates returns the names of the e-mail templates.
func EmailTemplates() []string {
	return []string{TemplateTicketCreated, TemplateTicketUpdate, TemplateTicketResolved, TemplateCustom}
}

// emailLayout frames every template: a greeting, the template's content,
// the variables (but message, shown by the content), the comments and the
// ticket's summary. html/template escapes every value.
const emailLayout = eventlog.HTMLBodyPrefix + `
<html><body>
<p>{{if .Name}}Dear {{.Name}},{{else}}Hello,{{end}}</p>
{{template "content" .}}
{{with .Message}}<p>{{.}}</p>{{end}}
{{with .Vars}}<ul>{{range .}}<li>{{.Key}}: {{.Value}}</li>{{end}}</ul>{{end}}
{{with .Comments}}<h3>Comments</h3>{{range .}}<p><b>{{if .AuthorName}}{{.AuthorName}}{{else}}{{.AuthorType}}{{end}}</b> ({{timestamp .CreatedAt}}):<br>{{.Content}}</p>{{end}}{{end}}
<p>Ticket {{.Ticket.Number}}: {{.Ticket.Title}}<br>Status: {{.Ticket.Status}}, priority: {{.Ticket.Priority}}</p>
</body></html>
`

// emailContents are the templates' own parts, with their default subject
// (the ticket number and title follow it).
var emailContents = map[string]struct{ subject, content string }{
	TemplateTicketCreated: {"We received your request",
		`<p>We received your support request and opened ticket {{.Ticket.Number}}. We will respond by {{timestamp .Ticket.ResponseDue}}.</p>`},
	TemplateTicketUpdate: {"Update on your ticket",
		`<p>There is an update on ticket {{.Ticket.Number}}.</p>`},
	TemplateTicketResolved: {"Your ticket is resolved",
		`<p>Ticket {{.Ticket.Number}} is resolved.{{with .Ticket.RootCause}} Root cause: {{.}}{{end}} If the problem persists, reply on the ticket to reopen it.</p>`},
	TemplateCustom: {"", ``},
}

var emailTemplates = func() map[string]*template.Template {
	funcs := template.FuncMap{"timestamp": models.Timestamp}
	base := template.Must(template.New("layout").Funcs(funcs).Parse(emailLayout))
	out := map[string]*template.Template{}
	for name, c := range emailContents {
		out[name] = template.Must(template.Must(base.Clone()).New("content").Parse(c.content))
	}
	return out
}()

// emailData is what a template sees.
type emailData struct {
	Ticket    *Ticket
	Name      string
	Variables map[string]string
	Comments  []Comment
}

// variable is one variable shown in a message.
type variable struct{ Key, Value string }

// renderEmail renders template name for data: the subject (subject when
// given, else the template's default with the ticket number and title) and
// the HTML body. Errors: INTERNAL_ERROR.
func renderEmail(name string, data emailData, subject string) (string, string, error) {
	t, ok := emailTemplates[name]
	if !ok {
		return "", "", models.Invalid(models.FieldIssue{Field: "template", Issue: "must be one of " + joinList(EmailTemplates())})
	}
	view := struct {
		emailData
		Message string
		Vars    []variable
	}{emailData: data, Message: data.Variables["message"]}
	for k, v := range data.Variables {
		if k != "message" {
			view.Vars = append(view.Vars, variable{k, v})
		}
	}
	slices.SortFunc(view.Vars, func(a, b variable) int { return strings.Compare(a.Key, b.Key) })
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", view); err != nil {
		return "", "", models.Internal(err)
	}
	if subject == "" {
		subject = "[" + data.Ticket.Number + "] " + emailContents[name].subject + ": " + data.Ticket.Title
	}
	if len(subject) > MaxNotifySubject {
		subject = strings.ToValidUTF8(subject[:MaxNotifySubject], "")
	}
	return subject, b.String(), nil
}
