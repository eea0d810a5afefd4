package support

import (
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/eventlog"
)

func TestNotifyTemplatesRender(t *testing.T) {
	tk := &Ticket{Number: "TKT-000042", Title: "Loss <on> NYC", Status: StatusResolved, Priority: PriorityHigh, RootCause: "fibre cut"}
	comments := []Comment{{Content: "We replaced <the> card", AuthorName: "Alex"}}
	for _, name := range EmailTemplates() {
		t.Run(name, func(t *testing.T) {
			vars := map[string]string{"message": "Hello <b>there</b>", "eta": "5 & 6"}
			subject, body, err := renderEmail(name, emailData{Ticket: tk, Name: "Jane", Variables: vars, Comments: comments}, "")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(body, eventlog.HTMLBodyPrefix) || !strings.Contains(body, "TKT-000042") || !strings.Contains(body, "Dear Jane") {
				t.Fatalf("body %s", body)
			}
			for _, want := range []string{"Hello &lt;b&gt;there&lt;/b&gt;", "eta: 5 &amp; 6", "We replaced &lt;the&gt; card", "Loss &lt;on&gt; NYC"} {
				if !strings.Contains(body, want) {
					t.Fatalf("body lacks %q: %s", want, body)
				}
			}
			if strings.Contains(body, "<b>there") {
				t.Fatalf("variable not escaped: %s", body)
			}
			if name != TemplateCustom && !strings.HasPrefix(subject, "[TKT-000042] ") {
				t.Fatalf("subject %q", subject)
			}
		})
	}
	if _, body, _ := renderEmail(TemplateTicketResolved, emailData{Ticket: tk}, "s"); !strings.Contains(body, "Root cause: fibre cut") || !strings.Contains(body, "Hello,") {
		t.Fatalf("resolved body %s", body)
	}
}

func TestNotifyInputValidation(t *testing.T) {
	many := make([]NotifyRecipient, MaxNotifyRecipients+1)
	for i := range many {
		many[i].Email = "a@example.com"
	}
	cases := []struct {
		name  string
		in    NotifyInput
		field string
	}{
		{"type", NotifyInput{Type: "fax", Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "type"},
		{"no recipients", NotifyInput{Type: NotifyEmail}, "recipients"},
		{"too many", NotifyInput{Type: NotifyEmail, Recipients: many}, "recipients"},
		{"email", NotifyInput{Type: NotifyEmail, Recipients: []NotifyRecipient{{Email: "not-an-address"}}}, "recipients[0].email"},
		{"template", NotifyInput{Type: NotifyEmail, Template: "nope", Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "template"},
		{"custom subject", NotifyInput{Type: NotifyEmail, Template: TemplateCustom, Variables: map[string]string{"message": "x"}, Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "subject"},
		{"custom message", NotifyInput{Type: NotifyEmail, Template: TemplateCustom, Subject: "s", Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "variables.message"},
		{"variable name", NotifyInput{Type: NotifyEmail, Variables: map[string]string{"Bad Name": "x"}, Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "variables"},
		{"filter", NotifyInput{Type: NotifyEmail, CommentFilter: "all", Recipients: []NotifyRecipient{{Email: "a@example.com"}}}, "comment_filter"},
		{"phone", NotifyInput{Type: NotifySMS, Message: "hi", Recipients: []NotifyRecipient{{Phone: "555 0100"}}}, "recipients[0].phone"},
		{"sms message", NotifyInput{Type: NotifySMS, Recipients: []NotifyRecipient{{Phone: "+15550100200"}}}, "message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.validate()
			e, ok := err.(*models.Error)
			if !ok {
				t.Fatalf("err %v", err)
			}
			if !strings.Contains(e.Error()+fmtIssues(e), c.field) {
				t.Fatalf("no issue on %s: %v %s", c.field, e, fmtIssues(e))
			}
		})
	}
	ok := NotifyInput{Type: NotifySMS, Message: "hi", Recipients: []NotifyRecipient{{Phone: "+15550100200"}}}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
}

// fmtIssues lists the fields of a validation error's issues.
func fmtIssues(e *models.Error) string {
	var b strings.Builder
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	for _, i := range issues {
		b.WriteString(i.Field + " ")
	}
	return b.String()
}
