package support_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// FuzzTicketInput: a new ticket's validation never panics; it answers
// nil only for a ticket whose fields all keep their rules (a title, a
// description, a known category and subcategory, bounded lengths, a
// well-formed e-mail, phone and time zone), and otherwise a
// VALIDATION_ERROR whose every issue names a field and says why.
func FuzzTicketInput(f *testing.F) {
	cats := []support.Category{
		{ID: "voice", Subcategories: []support.Subcategory{{CategoryID: "voice", ID: "call_quality"}}},
		{ID: "network"},
	}
	f.Add("Dropped calls", "", "Calls drop after 30s", "voice", "call_quality", "high", "outage", "a@example.com", "+44 (20) 7946-0000", "Europe/London", `{"affected_users":3}`)
	f.Add("", "subject alias", "d", "network", "", "", "", "", "", "UTC", ``)
	f.Add(" ", " ", " ", "", "", "urgent", "bad", "not an address", "++12345678", "Local", `{"a":`)
	f.Add(strings.Repeat("é", 201), "", strings.Repeat("x", 10001), "voice", "nope", "low", "minimal", "A <a@example.com>", "1234567", "../../etc/passwd", `[1,2]`)
	f.Add("t", "", "d", "voice", "", "critical", "degraded", "a@b", "(555) 010.0000", "America/New_York", `{"k":"`+strings.Repeat("v", 9000)+`"}`)
	f.Fuzz(func(t *testing.T, title, subject, description, category, subcategory, priority, severity, email, phone, timezone, metadata string) {
		in := support.TicketInput{Title: title, Subject: subject, Description: description, Category: category, Subcategory: subcategory,
			Priority: priority, Severity: severity, Contact: support.Contact{Email: email, Phone: phone}, Location: support.Location{Timezone: timezone}}
		if metadata != "" {
			_ = json.Unmarshal([]byte(metadata), &in.Metadata) // as the API decodes it; a non-object leaves it nil
		}
		err := in.Validate(cats).Err()
		if err != nil {
			e, ok := err.(*models.Error)
			if !ok || e.Code != models.CodeValidation {
				t.Fatalf("error %v is not a VALIDATION_ERROR", err)
			}
			issues, _ := e.Details["fields"].([]models.FieldIssue)
			if len(issues) == 0 {
				t.Fatalf("VALIDATION_ERROR without issues: %v", e)
			}
			for _, is := range issues {
				if is.Field == "" || is.Issue == "" {
					t.Fatalf("an issue without a field or a reason: %+v", is)
				}
			}
			return
		}
		// Accepted: every rule holds on the normalised input.
		if in.Title == "" || in.Description == "" || utf8.RuneCountInString(in.Title) > support.MaxTitle || utf8.RuneCountInString(in.Description) > support.MaxDescription {
			t.Fatalf("accepted title %q / description of %d characters", in.Title, utf8.RuneCountInString(in.Description))
		}
		if !slices.ContainsFunc(cats, func(c support.Category) bool { return c.ID == in.Category }) {
			t.Fatalf("accepted category %q", in.Category)
		}
		if in.Contact.Email != "" && !support.ValidEmail(in.Contact.Email) || in.Contact.Phone != "" && !support.ValidPhone(in.Contact.Phone) {
			t.Fatalf("accepted contact %+v", in.Contact)
		}
		if in.Location.Timezone != "" && !support.ValidTimezone(in.Location.Timezone) {
			t.Fatalf("accepted time zone %q", in.Location.Timezone)
		}
		if raw, _ := json.Marshal(in.Metadata); len(raw) > support.MaxMetadataBytes {
			t.Fatalf("accepted %d bytes of metadata", len(raw))
		}
	})
}
