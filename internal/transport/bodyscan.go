package transport

import (
	"bytes"
	"errors"
	"fmt"
)

// BodyBounds bound what one JSON request may hold beyond its size. They are checked in one pass
// over the body's bytes that allocates nothing, before anything decodes it: decoding is what
// costs, since each value of variables or extensions becomes a map, a slice or a string, and a
// 2 MiB body of empty objects is 700,000 maps (90 MB and 180 ms of CPU).
type BodyBounds struct {
	// Depth bounds how deeply the values of variables and extensions nest, the variables object
	// itself being the first level; 0 is DefaultBodyDepth.
	Depth int
	// Values bounds the values a request's variables and extensions hold, together and, in a
	// batch, over all its operations; 0 is DefaultBodyValues. Strings are bounded by the body's
	// size only.
	Values int
}

// The bounds of a body: GraphQL inputs nest a few levels and carry tens of values, hundreds
// for a long list of ids; these are far past what a client sends and far below what costs.
const (
	DefaultBodyDepth  = 32
	DefaultBodyValues = 10000
)

func (b BodyBounds) withDefaults() BodyBounds {
	if b.Depth <= 0 {
		b.Depth = DefaultBodyDepth
	}
	if b.Values <= 0 {
		b.Values = DefaultBodyValues
	}
	return b
}

// boundError is a body refused for holding more than the bounds allow: a client error that
// says which bound it passed.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

// errNotJSON is a body that is not JSON, or not shaped as GraphQL over HTTP's parameters; the
// caller says what it should have been.
var errNotJSON = errors.New("not JSON")

// bodyScan checks a body's syntax and counts what it holds, refusing at the first value past a
// bound, so that a refusal costs at most one pass over the bytes and a bomb is never decoded.
// What it does not need for that (the digits of an escape, the order of a number's characters,
// control characters and UTF-8 in strings) it leaves to the decoder that follows.
type bodyScan struct {
	data   []byte
	pos    int
	bounds BodyBounds
	values int
	// member is the member of the operation the scan is in, when it is variables or extensions,
	// to name it in a refusal.
	member string
	// typed checks the types of the operation's members too, so that a body with a query of
	// the wrong type is refused without being decoded.
	typed bool
}

// scanOperation checks the body of one operation: a JSON object, whose members have the types
// GraphQL over HTTP gives them, within b. A body that is not that is errNotJSON; one past a
// bound is a *boundError.
func scanOperation(data []byte, b BodyBounds) error {
	s := &bodyScan{data: data, bounds: b.withDefaults(), typed: true}
	s.space()
	if s.peek() != '{' {
		return errNotJSON
	}
	return s.whole(s.value(0))
}

// scanBatch checks the body of a batch: an array of at most limit operations, together within
// b. The (limit+1)th operation is refused as soon as it begins, unread. The operations' types
// are left to the decoder: one of the wrong type has an error in its place, and the others run.
func scanBatch(data []byte, b BodyBounds, limit int) error {
	s := &bodyScan{data: data, bounds: b.withDefaults()}
	s.space()
	if s.peek() != '[' {
		return errNotJSON
	}
	return s.whole(s.batch(limit))
}

// whole is err, or errNotJSON when something follows the value scanned.
func (s *bodyScan) whole(err error) error {
	if err != nil {
		return err
	}
	if s.space(); s.pos != len(s.data) {
		return errNotJSON
	}
	return nil
}

// scanParam checks one parameter of a GET, variables or extensions, as scanOperation checks them in
// a body.
func scanParam(name string, data []byte, b BodyBounds) error {
	s := &bodyScan{data: data, bounds: b.withDefaults(), member: name}
	s.space()
	return s.whole(s.value(1))
}

// batch scans an array of operations, each at level 0.
func (s *bodyScan) batch(limit int) error {
	s.pos++ // [
	s.space()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for n := 1; ; n++ {
		if n > limit {
			return &boundError{fmt.Sprintf("the batch holds more than %d operations; at most %d are allowed (GRAPHQL_BATCH_LIMIT)", limit, limit)}
		}
		if err := s.value(0); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case ']':
			s.pos++
			return nil
		default:
			return errNotJSON
		}
	}
}

// value scans one value at level: an operation is level 0, its members' values level 1, and
// what they hold level 2 and below. Values from level 2 count against the bounds.
func (s *bodyScan) value(level int) error {
	if level >= 2 {
		if err := s.count(); err != nil {
			return err
		}
	}
	switch c := s.peek(); {
	case c == '{' || c == '[':
		if level > s.bounds.Depth {
			return &boundError{fmt.Sprintf("%s nest deeper than %d levels; at most %d are allowed", s.subject(), s.bounds.Depth, s.bounds.Depth)}
		}
		if c == '{' {
			return s.object(level)
		}
		return s.array(level)
	case c == '"':
		return s.string()
	case c == '-' || '0' <= c && c <= '9':
		s.number()
		return nil
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		return errNotJSON
	}
}

// count counts one value against the bounds.
func (s *bodyScan) count() error {
	if s.values++; s.values > s.bounds.Values {
		return &boundError{fmt.Sprintf("%s hold more than %d values; a request may send at most %d in its variables and extensions together",
			s.subject(), s.bounds.Values, s.bounds.Values)}
	}
	return nil
}

func (s *bodyScan) object(level int) error {
	s.pos++ // {
	s.space()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		start := s.pos
		if s.peek() != '"' {
			return errNotJSON
		}
		if err := s.string(); err != nil {
			return err
		}
		want := byte(0) // the first byte the member's value must have, when typed; 0 is any
		if level == 0 {
			switch key := s.data[start+1 : s.pos-1]; string(key) {
			case "variables":
				s.member, want = "variables", '{'
			case "extensions":
				s.member, want = "extensions", '{'
			case "query", "operationName", "documentId":
				s.member, want = "", '"'
			default:
				// A member GraphQL over HTTP does not name is skipped by the decoder, but not
				// for nothing: each counts as a value, or a body of 250,000 of them costs 30 ms.
				s.member = ""
				if err := s.count(); err != nil {
					return err
				}
			}
		}
		s.space()
		if s.peek() != ':' {
			return errNotJSON
		}
		s.pos++
		s.space()
		if c := s.peek(); s.typed && want != 0 && c != want && c != 'n' { // null is absent
			return errNotJSON
		}
		if err := s.value(level + 1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case '}':
			s.pos++
			return nil
		default:
			return errNotJSON
		}
	}
}

func (s *bodyScan) array(level int) error {
	s.pos++ // [
	s.space()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(level + 1); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case ']':
			s.pos++
			return nil
		default:
			return errNotJSON
		}
	}
}

// string scans a string, its escapes whole, so that an escaped quote does not end it. Strings
// are most of what a body holds (the query, long variables): the search for the closing quote
// goes at bytes.IndexByte's speed, and looks at each escape only when there is one.
func (s *bodyScan) string() error {
	i := s.pos + 1
	for {
		q := bytes.IndexByte(s.data[i:], '"')
		if q < 0 {
			return errNotJSON
		}
		e := bytes.IndexByte(s.data[i:i+q], '\\')
		if e < 0 {
			s.pos = i + q + 1
			return nil
		}
		i += e + 2 // past the backslash and the byte it escapes, which may be a quote
		if i > len(s.data) {
			return errNotJSON
		}
	}
}

// number scans the bytes a number may hold; the decoder checks their order.
func (s *bodyScan) number() {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case '0' <= c && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.pos++
		default:
			return
		}
	}
}

func (s *bodyScan) literal(lit string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return errNotJSON
	}
	s.pos += len(lit)
	return nil
}

func (s *bodyScan) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek is the next byte, or 0 at the end.
func (s *bodyScan) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// subject names what a refused body held too much of.
func (s *bodyScan) subject() string {
	if s.member != "" {
		return s.member
	}
	return "the request's values"
}
