package filter

import "strings"

// Node is a node of a parsed expression: *Or, *And, *Not or *Comparison.
// String prints the canonical form: lower-case keywords, single spaces,
// parentheses only where needed; parsing it gives the same tree.
type Node interface {
	// Pos is the rune offset where the node starts in the expression.
	Pos() int
	// String is the canonical form of the node.
	String() string
	node()
}

// Or holds when any of its terms holds (two or more; nested ors are
// flattened into one).
type Or struct {
	Terms []Node
	At    int
}

// And holds when all of its terms hold (two or more; nested ands are
// flattened into one).
type And struct {
	Terms []Node
	At    int
}

// Not holds when its term does not.
type Not struct {
	Term Node
	At   int
}

// Comparison compares a field with values: one for = != < <= > >= ~,
// the list for in and not in, none for is null and is not null.
type Comparison struct {
	Field  string
	Op     Op
	Values []Value
	// At is the field's offset, OpAt the operator's.
	At, OpAt int
}

// Value is a value as written: a bare word or a quoted string (Text is
// unescaped). Its type comes from the field it is compared with.
type Value struct {
	Text   string
	Quoted bool
	At     int
}

// Pos is where the or starts.
func (n *Or) Pos() int { return n.At }

// Pos is where the and starts.
func (n *And) Pos() int { return n.At }

// Pos is where the not starts.
func (n *Not) Pos() int { return n.At }

// Pos is where the comparison's field starts.
func (n *Comparison) Pos() int { return n.At }

func (*Or) node()         {}
func (*And) node()        {}
func (*Not) node()        {}
func (*Comparison) node() {}

// String joins the terms with " or ".
func (n *Or) String() string { return joinTerms(n.Terms, " or ", false) }

// String joins the terms with " and ", an or term in parentheses.
func (n *And) String() string { return joinTerms(n.Terms, " and ", true) }

// String is "not " and the term, an and or an or in parentheses.
func (n *Not) String() string {
	switch n.Term.(type) {
	case *And, *Or:
		return "not (" + n.Term.String() + ")"
	}
	return "not " + n.Term.String()
}

// String is "field op value", "field in (a, b)" or "field is null".
func (n *Comparison) String() string {
	switch n.Op {
	case IsNull, IsNotNull:
		return n.Field + " " + string(n.Op)
	case In, NotIn:
		vals := make([]string, len(n.Values))
		for i, v := range n.Values {
			vals[i] = v.String()
		}
		return n.Field + " " + string(n.Op) + " (" + strings.Join(vals, ", ") + ")"
	}
	if len(n.Values) == 0 {
		return n.Field + " " + string(n.Op)
	}
	return n.Field + " " + string(n.Op) + " " + n.Values[0].String()
}

// String is the value as it would be written: quoted (with \" and \\
// escapes) when it was quoted, else the bare word.
func (v Value) String() string {
	if v.Quoted {
		return quote(v.Text)
	}
	return v.Text
}

// joinTerms prints terms joined by sep, wrapping ors when parenOr.
func joinTerms(terms []Node, sep string, parenOr bool) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = t.String()
		if _, ok := t.(*Or); ok && parenOr {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, sep)
}

// quote writes s as a quoted string of the language.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
