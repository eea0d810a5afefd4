package filter

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Parse parses expr into its tree, checking the grammar and the bounds
// (not the fields: see Compile). Errors: VALIDATION_ERROR with the
// position.
func Parse(expr string) (Node, error) {
	if n := utf8.RuneCountInString(expr); n > MaxLength {
		return nil, errAt(MaxLength, "the filter is too long", fmt.Sprintf("at most %d characters, this one has %d", MaxLength, n))
	}
	if err := checkCharacters(expr); err != nil {
		return nil, err
	}
	toks, err := lex([]rune(expr))
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	if p.peek().kind == tokEOF {
		return nil, errAt(0, "the filter is empty", "write a comparison such as status = open")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		hint := `expected "and", "or" or the end of the filter`
		if t.kind == tokRParen {
			hint = `this ")" closes no "("`
		}
		return nil, errAt(t.pos, "unexpected "+t.describe(), hint)
	}
	return n, nil
}

// parser is a recursive-descent parser over the tokens of an expression.
type parser struct {
	toks  []token
	i     int
	depth int // nesting of parentheses and not
	terms int // comparisons so far
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// or parses or_expr = and_expr { "or" and_expr }.
func (p *parser) or() (Node, error) {
	first, err := p.and()
	if err != nil || !p.peek().is("or") {
		return first, err
	}
	n := &Or{At: first.Pos()}
	n.Terms = appendOr(n.Terms, first)
	for p.peek().is("or") {
		p.next()
		t, err := p.and()
		if err != nil {
			return nil, err
		}
		n.Terms = appendOr(n.Terms, t)
	}
	return n, nil
}

// and parses and_expr = unary { "and" unary }.
func (p *parser) and() (Node, error) {
	first, err := p.unary()
	if err != nil || !p.peek().is("and") {
		return first, err
	}
	n := &And{At: first.Pos()}
	n.Terms = appendAnd(n.Terms, first)
	for p.peek().is("and") {
		p.next()
		t, err := p.unary()
		if err != nil {
			return nil, err
		}
		n.Terms = appendAnd(n.Terms, t)
	}
	return n, nil
}

// appendOr appends t to the terms of an or: t's terms when t is an or.
func appendOr(terms []Node, t Node) []Node {
	if o, ok := t.(*Or); ok {
		return append(terms, o.Terms...)
	}
	return append(terms, t)
}

// appendAnd appends t to the terms of an and: t's terms when t is an and.
func appendAnd(terms []Node, t Node) []Node {
	if a, ok := t.(*And); ok {
		return append(terms, a.Terms...)
	}
	return append(terms, t)
}

// unary parses unary = "not" unary | primary.
func (p *parser) unary() (Node, error) {
	t := p.peek()
	if !t.is("not") {
		return p.primary()
	}
	p.next()
	if err := p.enter(t); err != nil {
		return nil, err
	}
	defer p.leave()
	term, err := p.unary()
	if err != nil {
		return nil, err
	}
	return &Not{Term: term, At: t.pos}, nil
}

// primary parses primary = "(" or_expr ")" | comparison.
func (p *parser) primary() (Node, error) {
	t := p.peek()
	if t.kind != tokLParen {
		return p.comparison()
	}
	p.next()
	if err := p.enter(t); err != nil {
		return nil, err
	}
	defer p.leave()
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if c := p.next(); c.kind != tokRParen {
		return nil, errAt(c.pos, `expected ")"`, fmt.Sprintf(`to close the "(" at %d, found %s`, t.pos, c.describe()))
	}
	return n, nil
}

// enter counts one more level of nesting at t.
func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > MaxDepth {
		return errAt(t.pos, "the filter nests too deep", fmt.Sprintf("at most %d levels of parentheses and not", MaxDepth))
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// comparison parses field followed by an operator and its values.
func (p *parser) comparison() (Node, error) {
	f := p.next()
	if f.kind != tokWord || isKeyword(f.text) || !isFieldName(f.text) {
		return nil, errAt(f.pos, "expected a field name, found "+f.describe(), "write a comparison such as status = open")
	}
	p.terms++
	if p.terms > MaxTerms {
		return nil, errAt(f.pos, "the filter has too many comparisons", fmt.Sprintf("at most %d", MaxTerms))
	}
	c := &Comparison{Field: f.text, At: f.pos}
	op := p.next()
	c.OpAt = op.pos
	switch {
	case op.kind == tokOp:
		c.Op = Op(op.text)
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		c.Values = []Value{v}
	case op.is("in"):
		c.Op = In
		return c, p.list(c)
	case op.is("not"):
		if in := p.next(); !in.is("in") {
			return nil, errAt(in.pos, `expected "in" after "not", found `+in.describe(), `write field not in (a, b); to negate a comparison put "not" before it`)
		}
		c.Op = NotIn
		return c, p.list(c)
	case op.is("is"):
		c.Op = IsNull
		n := p.next()
		if n.is("not") {
			c.Op = IsNotNull
			n = p.next()
		}
		if !n.is("null") {
			return nil, errAt(n.pos, `expected "null", found `+n.describe(), "write is null or is not null")
		}
	default:
		return nil, errAt(op.pos, "expected an operator after "+f.text+", found "+op.describe(), "operators are =, !=, <, <=, >, >=, ~, in, not in, is null, is not null")
	}
	return c, nil
}

// list parses "(" value { "," value } ")" into c.Values.
func (p *parser) list(c *Comparison) error {
	open := p.next()
	if open.kind != tokLParen {
		return errAt(open.pos, `expected "(" after `+string(c.Op)+", found "+open.describe(), "write "+c.Field+" "+string(c.Op)+" (a, b)")
	}
	for {
		v, err := p.value()
		if err != nil {
			return err
		}
		if len(c.Values) == MaxList {
			return errAt(v.At, "the list has too many values", fmt.Sprintf("at most %d", MaxList))
		}
		c.Values = append(c.Values, v)
		switch t := p.next(); t.kind {
		case tokComma:
		case tokRParen:
			return nil
		default:
			return errAt(t.pos, `expected "," or ")" in the list, found `+t.describe(), "")
		}
	}
}

// value parses value = quoted | word; bare keywords are not values.
func (p *parser) value() (Value, error) {
	t := p.next()
	switch {
	case t.kind == tokString:
		return Value{Text: t.text, Quoted: true, At: t.pos}, nil
	case t.is("null"):
		return Value{}, errAt(t.pos, "null is not a value", "write field is null or field is not null")
	case t.kind == tokWord && isKeyword(t.text):
		return Value{}, errAt(t.pos, "expected a value, found the keyword "+t.describe(), "quote it to mean the text: \""+t.text+"\"")
	case t.kind == tokWord:
		return Value{Text: t.text, At: t.pos}, nil
	}
	return Value{}, errAt(t.pos, "expected a value, found "+t.describe(), "")
}

// isFieldName reports whether w is letter { letter | digit | "_" | "." }.
func isFieldName(w string) bool {
	for i, r := range w {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '_' || r == '.')) {
			return false
		}
	}
	return w != ""
}

// checkCharacters refuses bytes that are not UTF-8 and control
// characters other than white space (NUL...), which no database column
// compares with.
func checkCharacters(expr string) error {
	pos := 0
	for _, r := range expr {
		if r == utf8.RuneError {
			return errAt(pos, "the filter is not valid UTF-8", "")
		}
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return errAt(pos, fmt.Sprintf("control character %U in the filter", r), "")
		}
		pos++
	}
	return nil
}
