package support

import (
	"encoding/json"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/telcoplatform/platform/models"
)

// Bounds of ticket and comment fields.
const (
	MaxTitle          = 200
	MaxDescription    = 10000
	MaxName           = 200
	MaxEmail          = 320
	MaxShort          = 64 // identifiers, roles, site ids
	MaxAddress        = 500
	MaxMetadataBytes  = 8 << 10
	MaxMetadataKeys   = 50
	MaxComment        = 10000
	MaxInternalNotes  = 10000
	MaxRootCause      = 2000
	MaxVendorTicket   = 100
	MaxEscalationStep = 5
)

// Severities of a ticket: how badly the problem hurts the customer's
// business, worst first.
const (
	SeverityOutage            = "outage"
	SeverityBusinessImpacting = "business_impacting"
	SeverityDegraded          = "degraded"
	SeverityMinimal           = "minimal"
)

// Severities returns the ticket severities, worst first.
func Severities() []string {
	return []string{SeverityOutage, SeverityBusinessImpacting, SeverityDegraded, SeverityMinimal}
}

// TicketInput is the body of a new ticket. Subject is an alias of Title.
type TicketInput struct {
	Title           string
	Subject         string
	Description     string
	CustomerID      string
	Contact         Contact
	Category        string
	Subcategory     string
	Priority        string
	Severity        string
	ServiceAffected string
	Location        Location
	Metadata        map[string]any
	// Attachments are the files sent with the ticket (see
	// prepareAttachments).
	Attachments []AttachmentInput
}

// normalise trims the strings of in and applies the subject alias.
func (in *TicketInput) normalise() {
	for _, f := range []*string{&in.Title, &in.Subject, &in.Description, &in.CustomerID, &in.Category, &in.Subcategory,
		&in.Priority, &in.Severity, &in.ServiceAffected, &in.Contact.Name, &in.Contact.Email, &in.Contact.Phone,
		&in.Contact.Role, &in.Location.SiteID, &in.Location.Address, &in.Location.Timezone} {
		*f = strings.TrimSpace(*f)
	}
	if in.Title == "" {
		in.Title = in.Subject
	}
}

// Validate checks every field of in against the rules of docs/support.md
// and the categories cats, and returns the issues found.
func (in *TicketInput) Validate(cats []Category) *models.Validator {
	in.normalise()
	var v models.Validator
	v.Check(in.Title != "", "title", "is required (subject is accepted as an alias)")
	checkLen(&v, "title", in.Title, MaxTitle)
	v.Check(in.Description != "", "description", "is required")
	checkLen(&v, "description", in.Description, MaxDescription)
	checkLen(&v, "customer_id", in.CustomerID, MaxShort)
	cat := categoryByID(cats, in.Category)
	switch {
	case in.Category == "":
		v.Add("category", "is required; one of "+joinList(categoryIDs(cats)))
	case cat == nil:
		v.Add("category", "must be one of "+joinList(categoryIDs(cats)))
	case in.Subcategory != "" && !cat.HasSubcategory(in.Subcategory):
		subs := make([]string, len(cat.Subcategories))
		for i, sc := range cat.Subcategories {
			subs[i] = sc.ID
		}
		v.Add("subcategory", "must be one of "+joinList(subs)+" for category "+cat.ID)
	}
	v.Check(in.Priority == "" || priorityRank(in.Priority) >= 0, "priority", "must be one of "+joinList(Priorities()))
	v.Check(in.Severity == "" || slices.Contains(Severities(), in.Severity), "severity", "must be one of "+joinList(Severities()))
	checkLen(&v, "service_affected", in.ServiceAffected, MaxShort)
	checkContact(&v, "contact", in.Contact)
	checkLen(&v, "location.site_id", in.Location.SiteID, MaxShort)
	checkLen(&v, "location.address", in.Location.Address, MaxAddress)
	if in.Location.Timezone != "" {
		v.Check(ValidTimezone(in.Location.Timezone), "location.timezone", "must be an IANA time zone name such as Europe/Berlin or America/New_York")
	}
	checkMetadata(&v, "metadata", in.Metadata)
	return &v
}

// checkLen records an issue when s is longer than max characters.
func checkLen(v *models.Validator, field, s string, max int) {
	if utf8.RuneCountInString(s) > max {
		v.Add(field, "must be at most "+itoa(max)+" characters")
	}
}

// checkContact validates a contact's name, e-mail, phone and role.
func checkContact(v *models.Validator, field string, c Contact) {
	checkLen(v, field+".name", c.Name, MaxName)
	checkLen(v, field+".role", c.Role, MaxShort)
	if c.Email != "" {
		v.Check(ValidEmail(c.Email), field+".email", "must be an e-mail address such as ops@example.com")
	}
	if c.Phone != "" {
		v.Check(ValidPhone(c.Phone), field+".phone", "must be a phone number of 7 to 15 digits, optionally starting with + (spaces, dashes, dots and parentheses allowed)")
	}
}

// checkMetadata bounds a free-form metadata object: at most 50 keys and
// 8 KiB of JSON.
func checkMetadata(v *models.Validator, field string, m map[string]any) {
	if m == nil {
		return
	}
	v.Check(len(m) <= MaxMetadataKeys, field, "must have at most "+itoa(MaxMetadataKeys)+" keys")
	raw, err := json.Marshal(m)
	v.Check(err == nil && len(raw) <= MaxMetadataBytes, field, "must be at most 8 KiB of JSON")
}

// ValidEmail reports whether s is a bare e-mail address of at most 320
// characters.
func ValidEmail(s string) bool {
	if len(s) > MaxEmail {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

var phoneChars = regexp.MustCompile(`^\+?[0-9 ().\-]+$`)

// ValidPhone reports whether s is a phone number: an optional leading +,
// then 7 to 15 digits with spaces, dashes, dots or parentheses between.
func ValidPhone(s string) bool {
	if !phoneChars.MatchString(s) || strings.Count(s, "+") > 1 {
		return false
	}
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return digits >= 7 && digits <= 15
}

// ValidTimezone reports whether s names an IANA time zone ("UTC" included,
// "Local" not).
func ValidTimezone(s string) bool {
	if s == "" || s == "Local" || len(s) > MaxShort {
		return false
	}
	_, err := time.LoadLocation(s)
	return err == nil
}

// validStatus reports whether s is a ticket status.
func validStatus(s string) bool { return slices.Contains(Statuses(), s) }

// joinList writes a list as "a, b, c".
func joinList(items []string) string { return strings.Join(items, ", ") }

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
