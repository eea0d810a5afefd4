package filter

import (
	"slices"
	"strings"
)

// Type is the type of a filterable field: it decides how a value is read
// and which operators the field takes by default.
type Type int

// The field types.
const (
	// String is text: = != in, not in and ~ (contains, case-insensitive).
	String Type = iota
	// Enum is one of Field.Values: = != in, not in, and < <= > >= when
	// Field.Ordered.
	Enum
	// Int is a whole number: = != < <= > >= in, not in.
	Int
	// Decimal is a number with an optional fraction (100.50), compared
	// as a double-precision number: = != < <= > >= in, not in.
	Decimal
	// Money is an amount with at most two decimals stored in minor units
	// (models.Money): = != < <= > >= in, not in.
	Money
	// Bool is true or false: = !=.
	Bool
	// Time is a timestamp, given as RFC 3339 or as a date: = != < <= > >=.
	Time
)

// String names the type as the documentation does.
func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Enum:
		return "enum"
	case Int:
		return "int"
	case Decimal:
		return "decimal"
	case Money:
		return "money"
	case Bool:
		return "bool"
	case Time:
		return "time"
	}
	return "unknown"
}

// Op is an operator of a comparison.
type Op string

// The operators.
const (
	Eq        Op = "="
	Ne        Op = "!="
	Lt        Op = "<"
	Le        Op = "<="
	Gt        Op = ">"
	Ge        Op = ">="
	Contains  Op = "~"
	In        Op = "in"
	NotIn     Op = "not in"
	IsNull    Op = "is null"
	IsNotNull Op = "is not null"
)

// Field describes one field of a list that filters may name.
type Field struct {
	// Column is the SQL expression the field compares: chosen by the
	// platform, never taken from the user (NULLIF(assigned_to, '') makes
	// an empty string read as null).
	Column string
	// Type decides how values are read and the default operators.
	Type Type
	// Values are the values of an Enum, lowest first when Ordered.
	Values []string
	// Ordered makes < <= > >= on an Enum compare by the order of Values
	// (priority >= high is high or critical).
	Ordered bool
	// Nullable fields may be empty: they take is null and is not null, a
	// comparison of an empty field is false, and != and not in select it.
	Nullable bool
	// Operators, when set, replace the type's default operators.
	Operators []Op
}

// Schema is the fields a list offers to filters, by name.
type Schema map[string]Field

// operators returns the operators f takes.
func (f Field) operators() []Op {
	if f.Operators != nil {
		return f.Operators
	}
	var ops []Op
	switch f.Type {
	case String:
		ops = []Op{Eq, Ne, In, NotIn, Contains}
	case Enum:
		ops = []Op{Eq, Ne, In, NotIn}
		if f.Ordered {
			ops = append(ops, Lt, Le, Gt, Ge)
		}
	case Int, Decimal, Money:
		ops = []Op{Eq, Ne, Lt, Le, Gt, Ge, In, NotIn}
	case Bool:
		ops = []Op{Eq, Ne}
	case Time:
		ops = []Op{Eq, Ne, Lt, Le, Gt, Ge}
	}
	if f.Nullable {
		ops = append(ops, IsNull, IsNotNull)
	}
	return ops
}

// Allows reports whether f takes op.
func (f Field) Allows(op Op) bool { return slices.Contains(f.operators(), op) }

// Names returns the field names of s, sorted.
func (s Schema) Names() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// opList writes ops as "=, !=, in".
func opList(ops []Op) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = string(op)
	}
	return strings.Join(parts, ", ")
}
