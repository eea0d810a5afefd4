package models_test

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// checkValidation fails unless err is a VALIDATION_ERROR listing at least
// one field issue.
func checkValidation(t *testing.T, what string, err error) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("%s: error %v is not a VALIDATION_ERROR", what, err)
	}
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	if len(issues) == 0 || issues[0].Field == "" || issues[0].Issue == "" {
		t.Fatalf("%s: VALIDATION_ERROR without a field issue: %v", what, e.Details)
	}
}

// FuzzParseMoney: ParseMoney never panics; an amount it accepts formats
// (String) to a text that parses back to the same amount, and every
// int64 amount formats to a text ParseMoney reads back.
func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"12.50", "-0.01", "0", "1.", ".5", "1e3", "+1", "--1", " 7.1 ", "1.234", "1.050", "1.0500", "1.0501", "0x10", "1_000",
		"92233720368547758.07", "-92233720368547758.08", "92233720368547758.08", "99999999999999999999"} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(math.MinInt64))
	f.Add("", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, s string, n int64) {
		if m, err := models.ParseMoney(s); err == nil {
			back, err := models.ParseMoney(m.String())
			if err != nil || back != m {
				t.Fatalf("%q parsed to %d, formatted %q, parsed back to %d (%v)", s, int64(m), m.String(), int64(back), err)
			}
			if whole, frac, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(s), "-"), "."); (len(frac) > 2 && strings.TrimRight(frac[2:], "0") != "") || whole == "" {
				t.Fatalf("%q accepted: more than two decimals or no whole part", s)
			}
		}
		text := models.Money(n).String()
		back, err := models.ParseMoney(text)
		if err != nil || int64(back) != n {
			t.Fatalf("%d formats as %q, which parses to %d (%v)", n, text, int64(back), err)
		}
	})
}

// FuzzParsePage: ParsePage (every list's limit, offset, page, cursor and
// sort) never panics; it answers a window within bounds whose next cursor
// decodes to the next window, or a VALIDATION_ERROR naming a field.
func FuzzParsePage(f *testing.F) {
	cursor := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	f.Add(0, 0, 0, 0, "", "")
	f.Add(50, 0, 100, 0, "", "created_at:desc,name")
	f.Add(0, 10, 0, 3, "", "name:ASC")
	f.Add(200, 0, 0, 0, cursor("o:400"), "")
	f.Add(1, 0, 0, 0, cursor("o:-1"), "")
	f.Add(0, 0, 0, 0, cursor("o:9223372036854775807"), "")
	f.Add(200, 0, 0, math.MaxInt, "", "")
	f.Add(0, 0, math.MaxInt, 0, "", ":desc,,x:up")
	f.Add(201, -1, -1, -1, "not base64!", "")
	f.Fuzz(func(t *testing.T, limit, perPage, offset, page int, cur, sort string) {
		q := models.ListQuery{Limit: limit, PerPage: perPage, Offset: offset, Page: page, Cursor: cur, Sort: sort}
		pr, err := models.ParsePage(q)
		if err != nil {
			checkValidation(t, "ParsePage", err)
			return
		}
		if pr.Limit < 1 || pr.Limit > models.MaxPageLimit || pr.Offset < 0 || pr.Offset > models.MaxPageOffset {
			t.Fatalf("%+v: window %+v out of bounds", q, pr)
		}
		if pr.PageNumber() < 1 {
			t.Fatalf("%+v: page number %d", q, pr.PageNumber())
		}
		for _, total := range []int64{0, int64(pr.Offset), int64(pr.Offset) + int64(pr.Limit), int64(pr.Offset) + int64(pr.Limit) + 1, math.MaxInt64} {
			next := pr.NextCursor(total)
			if next == "" {
				if int64(pr.Offset)+int64(pr.Limit) < total {
					t.Fatalf("%+v: no next cursor though %d items remain", pr, total)
				}
				continue
			}
			again, err := models.ParsePage(models.ListQuery{Limit: pr.Limit, Cursor: next})
			if err != nil {
				t.Fatalf("%+v: next cursor %q refused: %v", pr, next, err)
			}
			if again.Offset != pr.Offset+pr.Limit {
				t.Fatalf("%+v: next cursor %q gives offset %d", pr, next, again.Offset)
			}
		}
		if pr.Pages(math.MaxInt32) < 0 {
			t.Fatalf("%+v: negative page count", pr)
		}
	})
}
