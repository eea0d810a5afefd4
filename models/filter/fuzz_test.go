package filter_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
)

// fuzzSeeds are expressions, valid and not, the fuzz tests start from.
var fuzzSeeds = []string{
	"status in (open, escalated) and priority >= high and created_at > 2026-01-01",
	`not (category = "voice") or title ~ "fiber"`,
	"amount >= 100.50 and currency = USD and paid_at is null",
	`title ~ "a\"b\\c%_" and assigned_to is not null`,
	"((level = 1 or level != 2) and not vip = true)",
	"created_at = 2026-01-01 or created_at < 2026-01-01T09:30:00+02:00",
	"status not in (open,closed)",
	`title = "unterminated`,
	"status ! open",
	"priority = hihg",
	"",
	"é ~ ñ",
}

// checkError fails unless err is a VALIDATION_ERROR (or, from Compile, an
// INTERNAL_ERROR never: the schema is complete) whose position is within
// the input.
func checkError(t *testing.T, expr string, err error) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("%q: error %v is not a VALIDATION_ERROR", expr, err)
	}
	pos, ok := e.Details["position"].(int)
	if !ok || pos < 0 || pos > utf8.RuneCountInString(expr) {
		t.Fatalf("%q: position %v outside the input (%d characters)", expr, e.Details["position"], utf8.RuneCountInString(expr))
	}
	if e.Details["field"] != "filter" || e.Message == "" {
		t.Fatalf("%q: details %v, message %q", expr, e.Details, e.Message)
	}
}

// FuzzParse: Parse never panics; it answers a tree whose canonical form
// parses back to itself, or a VALIDATION_ERROR with a position within
// the input.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		n, err := filter.Parse(expr)
		if err != nil {
			checkError(t, expr, err)
			return
		}
		canon := n.String()
		if utf8.RuneCountInString(canon) > filter.MaxLength {
			return // the canonical spacing made it longer than a filter may be
		}
		again, err := filter.Parse(canon)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", expr, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("%q: canonical form %q parses to %q", expr, canon, again.String())
		}
	})
}

// FuzzCompile: Compile never panics; it answers SQL with one placeholder
// per argument and none of the user's text, or a VALIDATION_ERROR with a
// position within the input.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	schema := testSchema()
	f.Fuzz(func(t *testing.T, expr string) {
		q, err := filter.Compile(schema, expr)
		if err != nil {
			checkError(t, expr, err)
			return
		}
		if strings.Count(q.SQL, "?") != len(q.Args) {
			t.Fatalf("%q: %q has %d placeholders for %d args", expr, q.SQL, strings.Count(q.SQL, "?"), len(q.Args))
		}
		// The SQL is made of the schema's columns and the compiler's own
		// words only: no quote the user could have brought in.
		rest := q.SQL
		for _, f := range schema {
			rest = strings.ReplaceAll(rest, f.Column, "")
		}
		rest = strings.ReplaceAll(rest, `ESCAPE '\'`, "")
		if strings.ContainsAny(rest, `'";`) {
			t.Fatalf("%q: SQL %q carries text of its own", expr, q.SQL)
		}
	})
}
