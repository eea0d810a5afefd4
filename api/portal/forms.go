package portal

import (
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"
)

// Reading the lists a form sends: repeated fields (checkboxes) and text
// fields holding several values.

// formList returns the non-empty values of the form's field name.
func formList(c *fiber.Ctx, name string) []string {
	out := []string{}
	for k, v := range c.Request().PostArgs().All() {
		if string(k) == name {
			if s := strings.TrimSpace(string(v)); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// splitList splits text on commas and white space (line breaks
// included): a list of words, event types or numbers.
func splitList(text string) []string {
	out := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if out == nil {
		return []string{}
	}
	return out
}

// splitLines returns text's non-blank lines, trimmed: values such as URIs
// that may hold commas.
func splitLines(text string) []string {
	out := []string{}
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
