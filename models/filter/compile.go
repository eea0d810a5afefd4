package filter

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/telcoplatform/platform/models"
)

// Query is a compiled expression: a parameterised SQL condition with one
// "?" placeholder per argument, for db.Where(q.SQL, q.Args...).
type Query struct {
	SQL  string
	Args []any
	// Expr is the parsed expression.
	Expr Node
}

// Compile parses expr and compiles it against the fields of s.
// Comparisons of a Nullable field's empty value are false (never SQL's
// unknown), except != and not in, which select it; so "not" is always
// the exact complement. Errors: VALIDATION_ERROR with the position
// (grammar, bounds, unknown field, operator the field does not take,
// value not of the field's type); INTERNAL_ERROR for a Field without a
// Column.
func Compile(s Schema, expr string) (*Query, error) {
	n, err := Parse(expr)
	if err != nil {
		return nil, err
	}
	return CompileNode(s, n)
}

// CompileNode compiles a parsed expression against the fields of s (see
// Compile).
func CompileNode(s Schema, n Node) (*Query, error) {
	c := &compiler{schema: s}
	sql, err := c.node(n)
	if err != nil {
		return nil, err
	}
	return &Query{SQL: sql, Args: c.args, Expr: n}, nil
}

// compiler collects the arguments while writing the SQL of a tree.
type compiler struct {
	schema Schema
	args   []any
}

// node writes the SQL of n; and, or and not are parenthesised.
func (c *compiler) node(n Node) (string, error) {
	switch n := n.(type) {
	case *Or:
		return c.join(n.Terms, " OR ")
	case *And:
		return c.join(n.Terms, " AND ")
	case *Not:
		sql, err := c.node(n.Term)
		if err != nil {
			return "", err
		}
		return "NOT (" + sql + ")", nil
	case *Comparison:
		return c.comparison(n)
	}
	return "", models.Internal(fmt.Errorf("filter: unknown node %T", n))
}

func (c *compiler) join(terms []Node, sep string) (string, error) {
	parts := make([]string, len(terms))
	for i, t := range terms {
		sql, err := c.node(t)
		if err != nil {
			return "", err
		}
		parts[i] = sql
	}
	return "(" + strings.Join(parts, sep) + ")", nil
}

// comparison checks n against its field and writes its SQL.
func (c *compiler) comparison(n *Comparison) (string, error) {
	f, ok := c.schema[n.Field]
	if !ok {
		return "", errAt(n.At, fmt.Sprintf("unknown field %q", n.Field), "fields are "+strings.Join(c.schema.Names(), ", "))
	}
	if f.Column == "" {
		return "", models.Internal(fmt.Errorf("filter: field %q has no column", n.Field))
	}
	if !f.Allows(n.Op) {
		return "", errAt(n.OpAt, fmt.Sprintf("operator %s is not allowed on %s", n.Op, n.Field), n.Field+" takes "+opList(f.operators()))
	}
	col := f.Column
	switch n.Op {
	case IsNull:
		return col + " IS NULL", nil
	case IsNotNull:
		return col + " IS NOT NULL", nil
	case Contains:
		c.args = append(c.args, "%"+escapeLike(n.Values[0].Text)+"%")
		return c.present(f, "LOWER("+col+`) LIKE LOWER(?) ESCAPE '\'`), nil
	}
	vals := make([]any, len(n.Values))
	var day bool // a date compared with a time field
	for i, v := range n.Values {
		arg, isDate, err := f.read(n.Field, v)
		if err != nil {
			return "", err
		}
		vals[i], day = arg, isDate
	}
	if f.Type == Enum && f.Ordered && (n.Op == Lt || n.Op == Le || n.Op == Gt || n.Op == Ge) {
		return c.rank(f, n.Op, vals[0].(string)), nil
	}
	if day && (n.Op == Eq || n.Op == Ne) {
		start := vals[0].(time.Time)
		c.args = append(c.args, start, start.AddDate(0, 0, 1))
		if n.Op == Eq {
			return c.present(f, "("+col+" >= ? AND "+col+" < ?)"), nil
		}
		return c.absent(f, "("+col+" < ? OR "+col+" >= ?)"), nil
	}
	switch n.Op {
	case In, NotIn:
		c.args = append(c.args, vals...)
		list := strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")
		if n.Op == In {
			return c.present(f, col+" IN ("+list+")"), nil
		}
		return c.absent(f, col+" NOT IN ("+list+")"), nil
	case Ne:
		c.args = append(c.args, vals[0])
		return c.absent(f, col+" <> ?"), nil
	}
	c.args = append(c.args, vals[0])
	return c.present(f, col+" "+string(n.Op)+" ?"), nil
}

// rank writes an ordered enum comparison as the set of values it selects
// (priority >= high: priority IN ('high', 'critical')).
func (c *compiler) rank(f Field, op Op, v string) string {
	i := slices.Index(f.Values, v)
	var set []string
	for j, w := range f.Values {
		if op == Lt && j < i || op == Le && j <= i || op == Gt && j > i || op == Ge && j >= i {
			set = append(set, w)
		}
	}
	if len(set) == 0 {
		return "1 = 0"
	}
	for _, w := range set {
		c.args = append(c.args, w)
	}
	return c.present(f, f.Column+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(set)), ", ")+")")
}

// present guards a condition that must be false on an empty field.
func (c *compiler) present(f Field, cond string) string {
	if !f.Nullable {
		return cond
	}
	return "(" + f.Column + " IS NOT NULL AND " + cond + ")"
}

// absent guards a condition that must be true on an empty field.
func (c *compiler) absent(f Field, cond string) string {
	if !f.Nullable {
		return cond
	}
	return "(" + f.Column + " IS NULL OR " + cond + ")"
}

// escapeLike escapes the LIKE wildcards of s with \.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// isNumber reports whether s is -?digits(.digits)?.
func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	return digits(whole) && (!dot || digits(frac))
}

// isDateShape reports whether s has the shape YYYY-MM-DD.
func isDateShape(s string) bool {
	return len(s) == 10 && s[4] == '-' && s[7] == '-' && digits(s[:4]) && digits(s[5:7]) && digits(s[8:])
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// read converts v to the argument of field name of type f.Type; isDate
// reports a date given for a time field (midnight UTC).
func (f Field) read(name string, v Value) (arg any, isDate bool, err error) {
	bad := func(what string, hint string) (any, bool, error) {
		return nil, false, errAt(v.At, fmt.Sprintf("%s is not %s", quote(v.Text), what), hint)
	}
	switch f.Type {
	case String:
		return v.Text, false, nil
	case Enum:
		for _, w := range f.Values {
			if strings.EqualFold(w, v.Text) {
				return w, false, nil
			}
		}
		return bad("a "+strings.ReplaceAll(name, "_", " "), strings.Join(f.Values, ", "))
	case Int:
		i, err := strconv.ParseInt(v.Text, 10, 64)
		if err != nil {
			return bad("a whole number", name+" is a whole number such as 3")
		}
		return i, false, nil
	case Decimal:
		x, err := strconv.ParseFloat(v.Text, 64)
		if !isNumber(v.Text) || err != nil || math.IsInf(x, 0) {
			return bad("a number", name+" is a number such as 100.50")
		}
		return x, false, nil
	case Money:
		m, err := models.ParseMoney(v.Text)
		if !isNumber(v.Text) || err != nil {
			return bad("an amount", name+" is an amount with at most two decimals such as 100.50")
		}
		return int64(m), false, nil
	case Bool:
		switch strings.ToLower(v.Text) {
		case "true":
			return true, false, nil
		case "false":
			return false, false, nil
		}
		return bad("a boolean", name+" is true or false")
	case Time:
		if isDateShape(v.Text) {
			d, err := time.Parse(time.DateOnly, v.Text)
			if err == nil {
				return d, true, nil
			}
		} else if t, err := time.Parse(time.RFC3339, v.Text); err == nil {
			return t.UTC(), false, nil
		}
		return bad("a date or timestamp", name+" is a date (2026-01-31) or an RFC 3339 timestamp (2026-01-31T09:30:00Z)")
	}
	return nil, false, models.Internal(fmt.Errorf("filter: field %q has unknown type %d", name, f.Type))
}
