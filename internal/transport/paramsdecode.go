package transport

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// decodeParams reads one operation's parameters from data, a JSON object. The decoder below
// reads the bodies clients send (a query, its variables, an operation name) in one walk over
// the bytes, where encoding/json's reflection, its reader's buffer and its copies cost more
// than the rest of reading a request; encoding/json reads the body whenever it holds anything
// the decoder does not take on (a key in another case or sent twice, a value of the wrong
// kind, an escaped surrogate, invalid UTF-8, invalid JSON, something after the object...). The
// decoder gives up rather than guess, so what a body decodes to, and whether it is refused, are
// encoding/json's in every case.
//
// Nothing decoded shares data's bytes, so a caller may reuse them: the query, operation name
// and document id are copies of their own, since the document cache and the persisted
// documents keep them long after the request; the strings of variables and of extensions share
// one copy of their object, which lives as long as any of them does.
func decodeParams(data []byte, raw *rawParams) error {
	d := paramsDecoder{b: data}
	if d.operation(raw) {
		return nil
	}
	*raw = rawParams{} // encoding/json would merge into what the decoder left
	return decodeJSON(bytes.NewReader(data), raw)
}

// decodeJSON decodes r's one JSON value into v as encoding/json does, numbers as json.Number.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// maxParamsDepth bounds how deeply the values the decoder reads nest; deeper ones are left to
// encoding/json, which has a limit and an error of its own. The body's bounds refuse them
// long before, unless they are set past it.
const maxParamsDepth = 1000

// paramsDecoder walks one body. Every method that reads a value returns false to give up.
type paramsDecoder struct {
	b []byte
	i int
	// shared is b as a string when b is a copy the decoded values may share: the copy of a
	// variables or extensions object. Otherwise (the body itself) each string is copied out.
	shared string
	depth  int
}

// operation reads the whole body: one object of the members GraphQL over HTTP names, and
// nothing after it.
func (d *paramsDecoder) operation(raw *rawParams) bool {
	if !d.consume('{') {
		return false
	}
	if !d.consume('}') {
		var seen uint8
		for {
			key, ok := d.key()
			if !ok || !d.consume(':') {
				return false
			}
			var bit uint8
			switch string(key) {
			case "query":
				bit, ok = 1<<0, d.strPtr(&raw.Query)
			case "operationName":
				bit, ok = 1<<1, d.strPtr(&raw.OperationName)
			case "documentId":
				bit, ok = 1<<2, d.strPtr(&raw.DocumentID)
			case "variables":
				bit, ok = 1<<3, d.members(&raw.Variables)
			case "extensions":
				bit, ok = 1<<4, d.members(&raw.Extensions)
			default:
				// encoding/json matches a key to a field case-insensitively: such a key is
				// left to it. Any other it skips, as valid JSON.
				ok = !paramsField(key) && d.skip()
			}
			// A member sent twice is left to encoding/json too: it replaces strings and
			// merges objects.
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			if d.consume('}') {
				break
			}
			if !d.consume(',') {
				return false
			}
		}
	}
	d.space()
	return d.i == len(d.b)
}

// paramsField reports whether key names one of rawParams' fields in some case.
func paramsField(key []byte) bool {
	for _, name := range [...]string{"query", "operationName", "documentId", "variables", "extensions"} {
		if len(key) == len(name) && strings.EqualFold(string(key), name) {
			return true
		}
	}
	return false
}

// key reads a member's name in the body's object: plain ASCII only, the only names compared
// here as encoding/json compares them (see paramsField).
func (d *paramsDecoder) key() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	j := plainRun(d.b, start)
	if j == len(d.b) || d.b[j] != '"' {
		return nil, false
	}
	d.i = j + 1
	return d.b[start:j], true
}

// strPtr reads a string or null into a pointer.
func (d *paramsDecoder) strPtr(p **string) bool {
	if d.peek() == 'n' {
		*p = nil
		return d.literal("null")
	}
	s, ok := d.str()
	*p = &s
	return ok
}

// members reads an object or null into a map. The object's bytes are copied once, after a
// walk that checks them, and its strings are read from the copy without one of their own.
func (d *paramsDecoder) members(p *map[string]any) bool {
	switch d.peek() {
	case 'n':
		*p = nil
		return d.literal("null")
	case '{':
	default:
		return false
	}
	start := d.i
	if !d.skip() {
		return false
	}
	region := string(d.b[start:d.i])
	// The copy's bytes, read only: a string's are never written.
	sub := paramsDecoder{b: unsafe.Slice(unsafe.StringData(region), len(region)), shared: region}
	m, ok := sub.object()
	*p = m
	return ok
}

// value reads any value as encoding/json reads it into an any, with UseNumber.
func (d *paramsDecoder) value() (any, bool) {
	switch d.peek() {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		start := d.i
		if !d.number() {
			return nil, false
		}
		return json.Number(d.take(start, d.i)), true
	}
}

// object reads an object into a map: empty, not nil, for {}; a key sent twice keeps its last
// value, as encoding/json does.
func (d *paramsDecoder) object() (map[string]any, bool) {
	if d.depth++; d.depth > maxParamsDepth {
		return nil, false
	}
	d.i++ // {
	m := map[string]any{}
	if d.consume('}') {
		d.depth--
		return m, true
	}
	for {
		if d.peek() != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok || !d.consume(':') {
			return nil, false
		}
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		m[k] = v
		if d.consume('}') {
			d.depth--
			return m, true
		}
		if !d.consume(',') {
			return nil, false
		}
	}
}

// array reads an array into a slice: empty, not nil, for [].
func (d *paramsDecoder) array() ([]any, bool) {
	if d.depth++; d.depth > maxParamsDepth {
		return nil, false
	}
	d.i++ // [
	a := make([]any, 0)
	if d.consume(']') {
		d.depth--
		return a, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if d.consume(']') {
			d.depth--
			return a, true
		}
		if !d.consume(',') {
			return nil, false
		}
	}
}

// str reads a string. Its bytes must be valid UTF-8, which encoding/json would replace.
func (d *paramsDecoder) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	for i := start; ; {
		i = plainRun(d.b, i)
		if i == len(d.b) {
			return "", false
		}
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return d.take(start, i), true
		case c == '\\':
			return d.unescape(start, i)
		case c < 0x20:
			return "", false
		default:
			n, ok := utf8Rune(d.b[i:])
			if !ok {
				return "", false
			}
			i += n
		}
	}
}

// take is the string of b[x:y]: shared, or a copy.
func (d *paramsDecoder) take(x, y int) string {
	if d.shared != "" {
		return d.shared[x:y]
	}
	return string(d.b[x:y])
}

// unescape reads a string that starts at start and has its first escape at i into a string of
// its own, written once.
func (d *paramsDecoder) unescape(start, i int) (string, bool) {
	end := closingQuote(d.b, i)
	if end < 0 {
		return "", false
	}
	b := d.b[:end]
	var sb strings.Builder
	sb.Grow(end - start)
	sb.Write(b[start:i])
	for i < end {
		switch c := b[i]; {
		case c == '\\':
			// end is a quote no backslash escapes, so the escaped byte comes before it.
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				sb.WriteByte(e)
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r, n := escapedRune(b[i:])
				if n == 0 {
					return "", false
				}
				sb.WriteRune(r)
				i += n - 2
			default:
				return "", false
			}
			i += 2
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			n, ok := utf8Rune(b[i:])
			if !ok {
				return "", false
			}
			sb.Write(b[i : i+n])
			i += n
		default:
			j := plainRun(b, i)
			sb.Write(b[i:j])
			i = j
		}
	}
	d.i = end + 1
	return sb.String(), true
}

// closingQuote is the index of the quote that ends the string i is in, -1 if none: the first
// one no backslash escapes.
func closingQuote(b []byte, i int) int {
	q := -1
	for {
		if q < i {
			n := bytes.IndexByte(b[i:], '"')
			if n < 0 {
				return -1
			}
			q = i + n
		}
		e := bytes.IndexByte(b[i:q], '\\')
		if e < 0 {
			return q
		}
		i += e + 2 // past the backslash and the byte it escapes, which may be the quote
		if i > len(b) {
			return -1
		}
	}
}

// escapedRune reads the \u escape b starts with: the rune, and the length of its escape, 12
// for a surrogate pair; 0 for a malformed escape, or a surrogate that is not half of a pair,
// which is left to encoding/json, whose replacement of it is the one to match.
func escapedRune(b []byte) (rune, int) {
	r, ok := hex4(b[2:])
	if !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
		return 0, 0
	}
	low, ok := hex4(b[8:])
	if !ok {
		return 0, 0
	}
	if r = utf16.DecodeRune(r, low); r == unicode.ReplacementChar {
		return 0, 0
	}
	return r, 12
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// utf8Rune is the length of the valid UTF-8 sequence b starts with, as utf8.DecodeRune (and so
// encoding/json) judges it.
func utf8Rune(b []byte) (int, bool) {
	r, n := utf8.DecodeRune(b)
	return n, r != utf8.RuneError || n > 1
}

// Lanes of a word read 8 bytes at a time.
const (
	lanes01 = 0x0101010101010101
	lanes7f = 0x7f * lanes01
	lanes80 = 0x80 * lanes01
)

// plainRun is the index of the first byte from i on that a string's reader must look at (a
// quote, a backslash, a control character or a byte of a multi-byte sequence), or len(b).
// Strings are most of a body, the query, so it looks at 8 bytes at a time. With each lane's
// top bit cleared (x), adding 0x60 sets it unless the lane is below 0x20, and adding 0x7f to
// the lane xored with a quote or a backslash sets it unless the lane is that byte; no lane
// carries into the next. A lane whose top bit all three set, and which had none to begin with,
// is plain.
func plainRun(b []byte, i int) int {
	p := b[i:]
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		x := w & lanes7f
		plain := (x + 0x60*lanes01) & ((x ^ '"'*lanes01) + lanes7f) & ((x ^ '\\'*lanes01) + lanes7f) &^ w
		if m := ^plain & lanes80; m != 0 {
			return len(b) - len(p) + bits.TrailingZeros64(m)/8
		}
		p = p[8:]
	}
	for j, c := range p {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return len(b) - len(p) + j
		}
	}
	return len(b)
}

// skip reads over any valid JSON value, as encoding/json skips a member no field takes: only
// its syntax matters.
func (d *paramsDecoder) skip() bool {
	switch c := d.peek(); c {
	case '{', '[':
		if d.depth++; d.depth > maxParamsDepth {
			return false
		}
		d.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if d.consume(end) {
			d.depth--
			return true
		}
		for {
			if c == '{' && (d.peek() != '"' || !d.skipString() || !d.consume(':')) {
				return false
			}
			if !d.skip() {
				return false
			}
			if d.consume(end) {
				d.depth--
				return true
			}
			if !d.consume(',') {
				return false
			}
		}
	case '"':
		return d.skipString()
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		return d.number()
	}
}

// skipString reads over a string, checking its escapes and control characters as JSON's
// grammar does; its UTF-8 is no matter of syntax.
func (d *paramsDecoder) skipString() bool {
	for i := d.i + 1; ; {
		i = plainRun(d.b, i)
		if i == len(d.b) {
			return false
		}
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(d.b) {
				return false
			}
			switch d.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(d.b[i+2:]); !ok {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
}

// number reads over a number, checked against JSON's grammar: encoding/json's UseNumber keeps
// the text of any number the grammar allows.
func (d *paramsDecoder) number() bool {
	b := d.b
	i := d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		i = digits(b, i)
	}
	d.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// literal reads lit, which must come next.
func (d *paramsDecoder) literal(lit string) bool {
	if !bytes.HasPrefix(d.b[d.i:], []byte(lit)) {
		return false
	}
	d.i += len(lit)
	return true
}

func (d *paramsDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek is the next byte after any whitespace, or 0 at the end.
func (d *paramsDecoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// consume takes c, after any whitespace.
func (d *paramsDecoder) consume(c byte) bool {
	if d.peek() == c {
		d.i++
		return true
	}
	return false
}
