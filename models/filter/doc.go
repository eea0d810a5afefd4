// Package filter is the platform's filter expression language: the
// `filter=` parameter of lists. An expression is parsed into an AST
// (Parse), checked against the Schema of the list (the fields it offers,
// their types and operators) and compiled into a parameterised SQL
// condition (Compile): user text never reaches the SQL, only the columns
// the platform chose and placeholders do.
//
// Grammar (EBNF; keywords are case-insensitive, whitespace separates
// tokens and is otherwise ignored, "and" binds tighter than "or"):
//
//	filter     = or_expr ;
//	or_expr    = and_expr { "or" and_expr } ;
//	and_expr   = unary { "and" unary } ;
//	unary      = "not" unary | primary ;
//	primary    = "(" or_expr ")" | comparison ;
//	comparison = field ( compare_op value
//	                   | "~" value
//	                   | [ "not" ] "in" "(" value { "," value } ")"
//	                   | "is" [ "not" ] "null" ) ;
//	compare_op = "=" | "!=" | "<" | "<=" | ">" | ">=" ;
//	field      = letter { letter | digit | "_" | "." } ;
//	value      = quoted | word ;
//	quoted     = '"' { char - ( '"' | "\" ) | '\"' | "\\" } '"' ;
//	word       = wordchar { wordchar } ;
//	wordchar   = char - ( space | "(" | ")" | "," | '"' | "=" | "!" | "<" | ">" | "~" ) ;
//
// A word is read by the type of its field: a number (100, -2, 100.50),
// a boolean (true, false), an RFC 3339 timestamp (2026-01-01T09:30:00Z),
// a date (2026-01-01, midnight UTC; "=" and "!=" compare the whole day),
// an enum value or plain text. The words and, or, not, in, is and null
// are keywords: quote them to use them as text.
//
// Limits: MaxLength characters, MaxDepth nested parentheses or "not",
// MaxTerms comparisons, MaxList values in one list.
//
// Every error is a models.Error VALIDATION_ERROR whose details carry
// field "filter" and position, the 0-based offset in characters (runes)
// of the token at fault; the message names the position and what would
// be valid there. docs/filtering.md is the user's version of this
// comment.
package filter

// Bounds of an expression.
const (
	// MaxLength is the longest expression, in characters (runes).
	MaxLength = 2000
	// MaxDepth is the deepest nesting of parentheses and "not".
	MaxDepth = 10
	// MaxTerms is the most comparisons in one expression.
	MaxTerms = 50
	// MaxList is the most values in one in (...) list.
	MaxList = 100
)
