package filter

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/telcoplatform/platform/models"
)

// tokenKind is the kind of a lexical token.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokWord             // a bare word: field, keyword or value
	tokString           // a double-quoted string (text holds it unescaped)
	tokLParen           // (
	tokRParen           // )
	tokComma            // ,
	tokOp               // = != < <= > >= ~
)

// token is one lexical token and its rune offset in the expression.
type token struct {
	kind tokenKind
	text string
	pos  int
}

// describe names t for an error message.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the filter"
	case tokString:
		return quote(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// is reports whether t is the keyword kw (case-insensitive).
func (t token) is(kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }

// isKeyword reports whether w is one of the words with a meaning of their
// own: and, or, not, in, is, null (case-insensitive).
func isKeyword(w string) bool {
	switch strings.ToLower(w) {
	case "and", "or", "not", "in", "is", "null":
		return true
	}
	return false
}

// isDelimiter reports whether r ends a bare word.
func isDelimiter(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(`()",=!<>~`, r)
}

// lex splits src into tokens, ending with tokEOF.
// Errors: VALIDATION_ERROR at the offending character.
func lex(src []rune) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		r := src[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '(':
			toks = append(toks, token{tokLParen, "(", i})
			i++
		case r == ')':
			toks = append(toks, token{tokRParen, ")", i})
			i++
		case r == ',':
			toks = append(toks, token{tokComma, ",", i})
			i++
		case r == '=' || r == '~':
			toks = append(toks, token{tokOp, string(r), i})
			i++
		case r == '<' || r == '>' || r == '!':
			op := string(r)
			if i+1 < len(src) && src[i+1] == '=' {
				op += "="
			}
			if op == "!" {
				return nil, errAt(i, `"!" must be followed by "="`, `use "not" to negate`)
			}
			toks = append(toks, token{tokOp, op, i})
			i += len(op)
		case r == '"':
			text, next, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokString, text, i})
			i = next
		default:
			start := i
			for i < len(src) && !isDelimiter(src[i]) {
				i++
			}
			toks = append(toks, token{tokWord, string(src[start:i]), start})
		}
	}
	return append(toks, token{tokEOF, "", len(src)}), nil
}

// lexString reads the quoted string starting at src[start] (a '"') and
// returns its text and the offset after its closing quote.
func lexString(src []rune, start int) (string, int, error) {
	var b strings.Builder
	for i := start + 1; i < len(src); i++ {
		switch src[i] {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(src) {
				return "", 0, errAt(start, "unterminated string", `close it with "`)
			}
			if src[i+1] != '"' && src[i+1] != '\\' {
				return "", 0, errAt(i, fmt.Sprintf(`unknown escape \%c in a string`, src[i+1]), `only \" and \\ are escapes`)
			}
			b.WriteRune(src[i+1])
			i++
		default:
			b.WriteRune(src[i])
		}
	}
	return "", 0, errAt(start, "unterminated string", `close it with "`)
}

// errAt returns the VALIDATION_ERROR of a filter at rune offset pos:
// its issue reads "<what> at <pos>: <hint>" (no hint: "<what> at <pos>")
// and its details carry field "filter" and position.
func errAt(pos int, what, hint string) *models.Error {
	issue := fmt.Sprintf("%s at %d", what, pos)
	if hint != "" {
		issue += ": " + hint
	}
	return models.Invalid(models.FieldIssue{Field: "filter", Issue: issue}).
		WithDetail("field", "filter").WithDetail("position", pos)
}
