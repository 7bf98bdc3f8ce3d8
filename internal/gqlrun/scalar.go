package gqlrun

import (
	"bytes"
	"io"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/nodeid"
)

// gqlgen marshals a scalar by wrapping its value in a closure, one allocation per value. The
// executor instead writes a field's value where it lies, in its object, through these pointer
// types: a pointer in an interface costs nothing. They write what gqlgen's marshallers write.

// String writes a String or ID as graphql.MarshalString does.
type String string

func (s *String) MarshalGQL(w io.Writer) { writeQuoted(w, string(*s)) }

// A Node is an object whose global id (its ID method, a nodeid string) NodeID gives unencoded.
type Node interface{ NodeID() nodeid.ID }

// NodeID writes a Node's global id as graphql.MarshalID writes the string of its ID method,
// encoded straight into the executor's buffer: a selected id costs no allocation, neither the
// string nor gqlgen's closure. N is a pointer, so a NodeID in an interface is one too.
type NodeID[N Node] struct{ node N }

// IDOf is the writer of n's global id.
func IDOf[N Node](n N) NodeID[N] { return NodeID[N]{n} }

func (n NodeID[N]) MarshalGQL(w io.Writer) {
	id := n.node.NodeID()
	if b, ok := w.(*bytes.Buffer); ok {
		buf := append(b.AvailableBuffer(), '"')
		buf = id.Append(buf)
		b.Write(append(buf, '"'))
		return
	}
	writeQuoted(w, id.String()) // base64url has nothing to escape
}

// Float writes a Float as graphql.MarshalFloatContext does. A value JSON cannot hold (NaN,
// infinity) is written as null: gqlgen reports an error there, but the executor reads values
// decoded from JSON, which holds none.
type Float float64

func (f *Float) MarshalGQL(w io.Writer) {
	v := float64(*f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		io.WriteString(w, "null")
		return
	}
	if b, ok := w.(*bytes.Buffer); ok {
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'g', -1, 64))
		return
	}
	io.WriteString(w, strconv.FormatFloat(v, 'g', -1, 64))
}

// Int writes an Int as graphql.MarshalInt does.
type Int int

func (i *Int) MarshalGQL(w io.Writer) { writeInt(w, int64(*i)) }

// Int64 writes an int64 as graphql.MarshalInt64 does.
type Int64 int64

func (i *Int64) MarshalGQL(w io.Writer) { writeInt(w, int64(*i)) }

// Beyond32 reports whether an Int's value lies outside the 32 bits GraphQL gives Int, so that
// it is not written in place as Int but by its marshaller, which refuses it with a field error
// (gqlscalar.MarshalInt).
func Beyond32(v int) bool { return v < math.MinInt32 || v > math.MaxInt32 }

// Beyond32Ptr is Beyond32 of a value that may be null (which is within).
func Beyond32Ptr(p *int) bool { return p != nil && Beyond32(*p) }

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53−1.
const maxSafeInteger = 1<<53 - 1

// BigInt writes a BigInt as gqlscalar.MarshalBigInt does: a number within ±(2^53−1), a
// string of digits beyond.
type BigInt int64

func (i *BigInt) MarshalGQL(w io.Writer) {
	v := int64(*i)
	if v >= -maxSafeInteger && v <= maxSafeInteger {
		writeInt(w, v)
		return
	}
	if b, ok := w.(*bytes.Buffer); ok {
		buf := append(b.AvailableBuffer(), '"')
		buf = strconv.AppendInt(buf, v, 10)
		b.Write(append(buf, '"'))
		return
	}
	io.WriteString(w, `"`+strconv.FormatInt(v, 10)+`"`)
}

// Refusal is why a context marshaller refuses to write its value (gqlscalar's Int beyond 32
// bits), or nil. gqlgen learns of such an error only as the response is written, and writes
// null in its place even where the schema says non-null; asked first, the executor returns
// null for the field at once, so the null reaches the field's parent as GraphQL requires.
func Refusal(m graphql.ContextMarshaler) error {
	if r, ok := m.(interface{ Refusal() error }); ok {
		return r.Refusal()
	}
	return nil
}

// Boolean writes a Boolean as graphql.MarshalBoolean does.
type Boolean bool

func (b *Boolean) MarshalGQL(w io.Writer) {
	if *b {
		io.WriteString(w, "true")
	} else {
		io.WriteString(w, "false")
	}
}

// BooleanOf is b written as graphql.MarshalBoolean writes it. A Boolean a method returns has
// no place of its own to be written from, and there are only two: each is written from one of
// these, never written to (a family query's ownerships each have one, joint).
func BooleanOf(b bool) graphql.Marshaler {
	if b {
		return &booleans[1]
	}
	return &booleans[0]
}

var booleans = [2]Boolean{false, true}

// Nullable is the marshaller of a value that may be null: p as M, or null.
func Nullable[T any, M interface {
	*T
	graphql.Marshaler
}](p *T) graphql.Marshaler {
	if p == nil {
		return graphql.Null
	}
	return M(p)
}

func writeInt(w io.Writer, v int64) {
	if b, ok := w.(*bytes.Buffer); ok {
		b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
		return
	}
	io.WriteString(w, strconv.FormatInt(v, 10))
}

// writeQuoted is gqlgen's writeQuotedString: the same escapes, so the same bytes. Most
// strings need none, and go to the executor's bytes.Buffer in one piece.
func writeQuoted(w io.Writer, s string) {
	if b, ok := w.(*bytes.Buffer); ok && !needsEscape(s) {
		b.Grow(len(s) + 2)
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	const hex = "0123456789ABCDEF"
	start := 0
	io.WriteString(w, `"`)
	for i, c := range s {
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		io.WriteString(w, s[start:i])
		switch c {
		case '\t':
			io.WriteString(w, `\t`)
		case '\r':
			io.WriteString(w, `\r`)
		case '\n':
			io.WriteString(w, `\n`)
		case '\\':
			io.WriteString(w, `\\`)
		case '"':
			io.WriteString(w, `\"`)
		default:
			io.WriteString(w, `\u00`)
			io.WriteString(w, hex[c>>4:c>>4+1])
			io.WriteString(w, hex[c&0xf:c&0xf+1])
		}
		start = i + 1
	}
	io.WriteString(w, s[start:])
	io.WriteString(w, `"`)
}

// needsEscape reports whether writeQuoted escapes a byte of s: a control character, a quote or
// a backslash. Bytes of multi-byte characters (and invalid UTF-8) are all 0x80 or above and
// are written as they are.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}
