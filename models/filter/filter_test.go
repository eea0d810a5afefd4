package filter_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/filter"
)

// testSchema is a list with a field of every type.
func testSchema() filter.Schema {
	return filter.Schema{
		"status":      {Column: "status", Type: filter.Enum, Values: []string{"open", "in_progress", "pending", "escalated", "resolved", "closed"}},
		"priority":    {Column: "priority", Type: filter.Enum, Values: []string{"low", "medium", "high", "critical"}, Ordered: true},
		"category":    {Column: "category", Type: filter.String},
		"title":       {Column: "title", Type: filter.String},
		"assigned_to": {Column: "NULLIF(assigned_to, '')", Type: filter.String, Nullable: true},
		"created_at":  {Column: "created_at", Type: filter.Time},
		"paid_at":     {Column: "paid_at", Type: filter.Time, Nullable: true},
		"amount":      {Column: "amount", Type: filter.Money},
		"ratio":       {Column: "ratio", Type: filter.Decimal},
		"currency":    {Column: "currency", Type: filter.Enum, Values: []string{"USD", "EUR", "GBP"}},
		"level":       {Column: "level", Type: filter.Int},
		"vip":         {Column: "vip", Type: filter.Bool},
		"number":      {Column: "number", Type: filter.String, Operators: []filter.Op{filter.Eq}},
	}
}

func TestFilterParseCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{"status in (open, escalated) and priority >= high and created_at > 2026-01-01",
			"status in (open, escalated) and priority >= high and created_at > 2026-01-01"},
		{`not (category = "voice") or title ~ "fiber"`, `not category = "voice" or title ~ "fiber"`},
		{"amount >= 100.50 and currency = USD and paid_at is null", "amount >= 100.50 and currency = USD and paid_at is null"},
		{"a=1 AND b!=2 Or c<3", "a = 1 and b != 2 or c < 3"},
		{"a = 1 or b = 2 and c = 3", "a = 1 or b = 2 and c = 3"},
		{"(a = 1 or b = 2) and c = 3", "(a = 1 or b = 2) and c = 3"},
		{"a = 1 and (b = 2 and (c = 3))", "a = 1 and b = 2 and c = 3"},
		{"((a = 1) or (b = 2 or c = 3))", "a = 1 or b = 2 or c = 3"},
		{"NOT NOT a = 1", "not not a = 1"},
		{"not (a = 1 and b = 2)", "not (a = 1 and b = 2)"},
		{"a NOT IN (x,y , z)", "a not in (x, y, z)"},
		{"a IS NOT NULL and b is null", "a is not null and b is null"},
		{`t = "say \"hi\" \\ bye"`, `t = "say \"hi\" \\ bye"`},
		{`t = ""`, `t = ""`},
		{`t = "and"`, `t = "and"`},
		{"created_at <= 2026-01-01T09:30:00+02:00", "created_at <= 2026-01-01T09:30:00+02:00"},
		{"x>=-5", "x >= -5"},
		{"t ~ café", "t ~ café"},
	}
	for _, c := range cases {
		n, err := filter.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := n.String(); got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
		again, err := filter.Parse(n.String())
		if err != nil || again.String() != n.String() {
			t.Errorf("Parse(%q) does not give its canonical form back: %v %v", n.String(), again, err)
		}
	}
}

func TestFilterParseTree(t *testing.T) {
	n, err := filter.Parse(`a = 1 or not b in (x, "y z")`)
	if err != nil {
		t.Fatal(err)
	}
	want := &filter.Or{At: 0, Terms: []filter.Node{
		&filter.Comparison{Field: "a", Op: filter.Eq, At: 0, OpAt: 2, Values: []filter.Value{{Text: "1", At: 4}}},
		&filter.Not{At: 9, Term: &filter.Comparison{Field: "b", Op: filter.In, At: 13, OpAt: 15,
			Values: []filter.Value{{Text: "x", At: 19}, {Text: "y z", Quoted: true, At: 22}}}},
	}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("tree %#v, want %#v", n, want)
	}
}

func TestFilterCompile(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := day.AddDate(0, 0, 1)
	cases := []struct {
		in   string
		sql  string
		args []any
	}{
		{"status in (open, escalated) and priority >= high and created_at > 2026-01-01",
			"(status IN (?, ?) AND priority IN (?, ?) AND created_at > ?)", []any{"open", "escalated", "high", "critical", day}},
		{`not (category = "voice") or title ~ "fiber"`,
			`(NOT (category = ?) OR LOWER(title) LIKE LOWER(?) ESCAPE '\')`, []any{"voice", "%fiber%"}},
		{"amount >= 100.50 and currency = usd and paid_at is null",
			"(amount >= ? AND currency = ? AND paid_at IS NULL)", []any{int64(10050), "USD"}},
		{"priority < low", "1 = 0", nil},
		{"priority <= medium", "priority IN (?, ?)", []any{"low", "medium"}},
		{"priority > high", "priority IN (?)", []any{"critical"}},
		{"status != closed", "status <> ?", []any{"closed"}},
		{"status not in (closed, resolved)", "status NOT IN (?, ?)", []any{"closed", "resolved"}},
		{"created_at = 2026-01-01", "(created_at >= ? AND created_at < ?)", []any{day, next}},
		{"created_at != 2026-01-01", "(created_at < ? OR created_at >= ?)", []any{day, next}},
		{"created_at <= 2026-01-01T02:00:00+02:00", "created_at <= ?", []any{day}},
		{"paid_at = 2026-01-01", "(paid_at IS NOT NULL AND (paid_at >= ? AND paid_at < ?))", []any{day, next}},
		{"paid_at > 2026-01-01", "(paid_at IS NOT NULL AND paid_at > ?)", []any{day}},
		{"assigned_to != u1", "(NULLIF(assigned_to, '') IS NULL OR NULLIF(assigned_to, '') <> ?)", []any{"u1"}},
		{"assigned_to not in (u1)", "(NULLIF(assigned_to, '') IS NULL OR NULLIF(assigned_to, '') NOT IN (?))", []any{"u1"}},
		{"assigned_to is not null", "NULLIF(assigned_to, '') IS NOT NULL", nil},
		{`title ~ "50%_off\\"`, `LOWER(title) LIKE LOWER(?) ESCAPE '\'`, []any{`%50\%\_off\\%`}},
		{"level in (1, 2) or ratio < -0.5", "(level IN (?, ?) OR ratio < ?)", []any{int64(1), int64(2), -0.5}},
		{"vip = TRUE and vip != false", "(vip = ? AND vip <> ?)", []any{true, false}},
		{`category = "and" and title = 42`, "(category = ? AND title = ?)", []any{"and", "42"}},
		{"not not level = 1", "NOT (NOT (level = ?))", []any{int64(1)}},
		{"(level = 1 or level = 2) and not (vip = true and level = 3)",
			"((level = ? OR level = ?) AND NOT ((vip = ? AND level = ?)))", []any{int64(1), int64(2), true, int64(3)}},
	}
	for _, c := range cases {
		q, err := filter.Compile(testSchema(), c.in)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.in, err)
			continue
		}
		if q.SQL != c.sql || !reflect.DeepEqual(q.Args, c.args) {
			t.Errorf("Compile(%q) =\n  %s %#v\nwant\n  %s %#v", c.in, q.SQL, q.Args, c.sql, c.args)
		}
		if strings.Count(q.SQL, "?") != len(q.Args) {
			t.Errorf("Compile(%q): %d placeholders for %d args", c.in, strings.Count(q.SQL, "?"), len(q.Args))
		}
	}
}

// filterError returns err's position and issue, failing unless it is a
// VALIDATION_ERROR of the filter field.
func filterError(t *testing.T, in string, err error) (int, string) {
	t.Helper()
	var e *models.Error
	if !errors.As(err, &e) || e.Code != models.CodeValidation {
		t.Fatalf("%q: error %v, want a VALIDATION_ERROR", in, err)
	}
	pos, ok := e.Details["position"].(int)
	if !ok || e.Details["field"] != "filter" {
		t.Fatalf("%q: details %v, want field filter and a position", in, e.Details)
	}
	issues, _ := e.Details["fields"].([]models.FieldIssue)
	if len(issues) != 1 || issues[0].Field != "filter" || e.Message != "filter: "+issues[0].Issue {
		t.Fatalf("%q: message %q, issues %v", in, e.Message, issues)
	}
	return pos, issues[0].Issue
}

func TestFilterErrors(t *testing.T) {
	cases := []struct {
		in   string
		pos  int
		want string // part of the issue
	}{
		{"", 0, "the filter is empty at 0"},
		{"   ", 0, "the filter is empty"},
		{"colour = red", 0, `unknown field "colour" at 0: fields are amount, assigned_to, category`},
		{"status = open and colour = red", 18, `unknown field "colour" at 18`},
		{"amount ~ 100", 7, "operator ~ is not allowed on amount at 7: amount takes =, !=, <, <=, >, >=, in, not in"},
		{"priority = hihg", 11, `"hihg" is not a priority at 11: low, medium, high, critical`},
		{"status in (open, shut)", 17, `"shut" is not a status`},
		{"level = 1.5", 8, `"1.5" is not a whole number`},
		{"amount = 1.234", 9, `"1.234" is not an amount`},
		{"amount = 1e3", 9, `"1e3" is not an amount`},
		{"ratio = NaN", 8, `"NaN" is not a number`},
		{"vip = yes", 6, `"yes" is not a boolean`},
		{"created_at > 2026-13-01", 13, "is not a date or timestamp"},
		{"created_at > yesterday", 13, "is not a date or timestamp"},
		{"created_at in (2026-01-01)", 11, "operator in is not allowed on created_at"},
		{"status is null", 7, "operator is null is not allowed on status"},
		{"number != 1", 7, "operator != is not allowed on number at 7: number takes ="},
		{"status = ", 9, "expected a value, found the end of the filter at 9"},
		{"status", 6, "expected an operator after status, found the end of the filter at 6"},
		{"status open", 7, `expected an operator after status, found "open" at 7`},
		{"(status = open", 14, `expected ")" at 14: to close the "(" at 0, found the end of the filter`},
		{"status = open)", 13, `unexpected ")" at 13: this ")" closes no "("`},
		{"status = open status = closed", 14, `unexpected "status" at 14: expected "and", "or"`},
		{"status = open and", 17, "expected a field name, found the end of the filter at 17"},
		{"and = 1", 0, `expected a field name, found "and" at 0`},
		{"1abc = 1", 0, `expected a field name`},
		{`title = "unterminated`, 8, "unterminated string at 8"},
		{`title = "bad \n escape"`, 13, `unknown escape \n in a string at 13`},
		{"status ! open", 7, `"!" must be followed by "=" at 7`},
		{"status = null", 9, "null is not a value at 9: write field is null"},
		{"status = or", 9, "expected a value, found the keyword \"or\" at 9"},
		{"status not (open)", 11, `expected "in" after "not"`},
		{"status in open", 10, `expected "(" after in`},
		{"status in ()", 11, `expected a value, found ")" at 11`},
		{"status in (open escalated)", 16, `expected "," or ")" in the list`},
		{"paid_at is not nothing", 15, `expected "null"`},
		{"é = 1", 0, "expected a field name"},
		{"title = \"a\xffb\"", 10, "the filter is not valid UTF-8 at 10"},
		{"title ~ x\x00", 9, "control character U+0000 in the filter at 9"},
		{"titlé ~ \ufffd", 8, "the filter is not valid UTF-8 at 8"},
		{`title = "ñandú" and colour = 1`, 20, `unknown field "colour" at 20`},
	}
	for _, c := range cases {
		_, err := filter.Compile(testSchema(), c.in)
		pos, issue := filterError(t, c.in, err)
		if pos != c.pos || !strings.Contains(issue, c.want) {
			t.Errorf("%q: position %d, issue %q; want %d, %q", c.in, pos, issue, c.pos, c.want)
		}
	}
}

func TestFilterLimits(t *testing.T) {
	long := "title = \"" + strings.Repeat("x", filter.MaxLength) + "\""
	if pos, issue := filterError(t, "long", compileErr(long)); pos != filter.MaxLength || !strings.Contains(issue, "too long") {
		t.Errorf("long: %d %q", pos, issue)
	}
	ok := "title = \"" + strings.Repeat("é", filter.MaxLength-10) + "\""
	if _, err := filter.Compile(testSchema(), ok); err != nil {
		t.Errorf("%d characters (more bytes): %v", filter.MaxLength-1, err)
	}
	deep := strings.Repeat("(", filter.MaxDepth) + "level = 1" + strings.Repeat(")", filter.MaxDepth)
	if _, err := filter.Compile(testSchema(), deep); err != nil {
		t.Errorf("depth %d: %v", filter.MaxDepth, err)
	}
	deeper := "not " + deep
	if pos, issue := filterError(t, deeper, compileErr(deeper)); pos != 4+filter.MaxDepth-1 || !strings.Contains(issue, "nests too deep") {
		t.Errorf("depth %d: %d %q", filter.MaxDepth+1, pos, issue)
	}
	terms := strings.TrimSuffix(strings.Repeat("level = 1 or ", filter.MaxTerms), " or ")
	if _, err := filter.Compile(testSchema(), terms); err != nil {
		t.Errorf("%d terms: %v", filter.MaxTerms, err)
	}
	more := terms + " or vip = true"
	if pos, issue := filterError(t, more, compileErr(more)); pos != len(terms)+4 || !strings.Contains(issue, "too many comparisons") {
		t.Errorf("%d terms: %d %q", filter.MaxTerms+1, pos, issue)
	}
	list := "level in (" + strings.TrimSuffix(strings.Repeat("1, ", filter.MaxList), ", ") + ")"
	if _, err := filter.Compile(testSchema(), list); err != nil {
		t.Errorf("list of %d: %v", filter.MaxList, err)
	}
	longer := strings.TrimSuffix(list, ")") + ", 2)"
	if pos, issue := filterError(t, longer, compileErr(longer)); pos != len(longer)-2 || !strings.Contains(issue, "too many values") {
		t.Errorf("list of %d: %d %q", filter.MaxList+1, pos, issue)
	}
}

func compileErr(expr string) error {
	_, err := filter.Compile(testSchema(), expr)
	return err
}
