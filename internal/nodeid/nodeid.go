// Package nodeid makes and reads the global object ids of the Relay server specification
// (docs/graphql.md, "Node ids"): opaque to clients, stable, and unique across every type the
// gateway serves. An id is the unpadded base64url of a versioned, typed, binary key: a version
// byte, a byte for the object's GraphQL type, then the parts the upstream needs to read the
// object again (a card's top account and its own id), each tagged with its form: a canonical
// UUID as its 16 bytes, anything else as its length and its bytes. Lengths make the parts
// unambiguous whatever they hold, and packing UUIDs (the upstream's ids) keeps a card's id
// about as long as the upstream's, so the family query's answer does not grow by half.
package nodeid

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// version is the key's first byte: a later layout gets a new version, and ids of this one keep
// decoding.
const version = 1

// types are the GraphQL types ids are made for; a type's code is its index. Ids are stable, so
// the list only ever grows at its end.
var types = [...]string{"", "TopAccount", "Individual", "Trust", "Entity", "Charity", "Will", "Class", "Document", "Client", "BulkUpload", "Relationship", "ContactRef"}

// The forms of a part.
const (
	partText = 0 // uvarint length, then the bytes
	partUUID = 1 // the 16 bytes of a canonical (lower-case, hyphenated) UUID
)

// MaxLen bounds an id in bytes: anything longer is forged, and is refused before it is decoded.
const MaxLen = 1024

// ErrInvalid is why an id is refused: it is not one the gateway made. Callers answer it as
// NOT_FOUND, never as an upstream error: a forged id names nothing.
var ErrInvalid = errors.New("not a node id the gateway made")

var enc = base64.RawURLEncoding.Strict()

// Encode returns the id of an object of GraphQL type typ, keyed by parts. The returned string
// is all it allocates, unless the key is long. typ must be one of the types above: another is
// the gateway's bug, and panics.
func Encode(typ string, parts ...string) string {
	var out [224]byte
	return string(appendEncoded(out[:0], typeCode(typ), parts))
}

// maxParts bounds the parts of an ID: a client's card has the most, five.
const maxParts = 5

// An ID is a global id before it is encoded: the type and parts New was given. It costs no
// allocation, so that the executor writes a selected id straight into its response
// (gqlrun.NodeID) rather than making a string of it first.
type ID struct {
	code  byte
	n     uint8
	parts [maxParts]string
	// encoded, when set (Encoded), is the id already encoded, and the rest is unset.
	encoded []byte
}

// Encoded is an id encoded before (id.Append), for an object whose id is selected many times in
// one answer: its encoding is then copied, not made again.
func Encoded(b []byte) ID { return ID{encoded: b} }

// New is the id Encode(typ, parts...) encodes, not yet encoded. typ must be one of the types
// above and parts at most five: anything else is the gateway's bug, and panics.
func New(typ string, parts ...string) ID {
	if len(parts) > maxParts {
		panic("nodeid: more parts than an ID holds")
	}
	id := ID{code: typeCode(typ), n: uint8(len(parts))}
	copy(id.parts[:], parts)
	return id
}

// String is the encoded id, as Encode returns it.
func (id ID) String() string {
	var out [224]byte
	return string(id.Append(out[:0]))
}

// Append appends the encoded id to b.
func (id *ID) Append(b []byte) []byte {
	if id.encoded != nil {
		return append(b, id.encoded...)
	}
	return appendEncoded(b, id.code, id.parts[:id.n])
}

// Len is the length of the encoded id, found without encoding it.
func (id *ID) Len() int {
	if id.encoded != nil {
		return len(id.encoded)
	}
	n := 2
	for _, p := range id.parts[:id.n] {
		if _, ok := parseUUID(p); ok {
			n += 17
		} else {
			n += 1 + uvarintLen(uint64(len(p))) + len(p)
		}
	}
	return enc.EncodedLen(n)
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// appendEncoded appends to dst the id of the type of code, keyed by parts.
func appendEncoded(dst []byte, code byte, parts []string) []byte {
	var stack [160]byte
	raw := append(stack[:0], version, code)
	for _, p := range parts {
		raw = appendPart(raw, p)
	}
	return enc.AppendEncode(dst, raw)
}

// typeCode is typ's index in types, found by its length and first letters rather than by
// comparing it with each name in turn: every id selected is encoded, so this is a hot path.
func typeCode(typ string) byte {
	for i := 1; i < len(types); i++ {
		if t := types[i]; len(t) == len(typ) && t[0] == typ[0] && t == typ {
			return byte(i)
		}
	}
	panic("nodeid: no type code for " + typ)
}

func appendPart(b []byte, p string) []byte {
	if u, ok := parseUUID(p); ok {
		return append(append(b, partUUID), u[:]...)
	}
	b = append(b, partText)
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// parseUUID reads a UUID written as its canonical form: lower-case hex, hyphenated 8-4-4-4-12.
// Any other spelling is text, so that a part decodes to exactly what was encoded.
func parseUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	// Spelled out, at constant offsets, rather than a loop over where each byte starts: the
	// compiler then checks no bounds, and every id the executor writes parses its UUIDs twice
	// (ID.Len and ID.Append).
	var bad byte
	at := func(i int) byte {
		hi, lo := hexValues[s[i]], hexValues[s[i+1]]
		bad |= hi | lo
		return hi<<4 | lo&0xf
	}
	u = [16]byte{at(0), at(2), at(4), at(6), at(9), at(11), at(14), at(16),
		at(19), at(21), at(24), at(26), at(28), at(30), at(32), at(34)}
	return u, bad&0xf0 == 0
}

// hexValues maps a lower-case hex digit to its value and any other byte to 0xff.
var hexValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range hexDigits {
		t[c] = byte(i)
	}
	return t
}()

const hexDigits = "0123456789abcdef"

func formatUUID(u []byte) string {
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexDigits[c>>4], hexDigits[c&0xf]
		j += 2
	}
	return string(b[:])
}

// Key is a decoded id: the object's GraphQL type and the parts of its key.
type Key struct {
	Type  string
	Parts []string
}

// Decode reads an id that Encode made. Anything else (too long, not base64url, another
// version or type code, a part cut short, bytes past the last part, or any spelling Encode
// would not have written) is ErrInvalid: only the exact bytes Encode gives decode.
func Decode(id string) (Key, error) {
	if len(id) == 0 || len(id) > MaxLen {
		return Key{}, ErrInvalid
	}
	raw, err := enc.DecodeString(id)
	if err != nil || len(raw) < 2 || raw[0] != version || raw[1] == 0 || int(raw[1]) >= len(types) {
		return Key{}, ErrInvalid
	}
	k := Key{Type: types[raw[1]], Parts: []string{}}
	for rest := raw[2:]; len(rest) > 0; {
		switch rest[0] {
		case partUUID:
			if len(rest) < 17 {
				return Key{}, ErrInvalid
			}
			k.Parts = append(k.Parts, formatUUID(rest[1:17]))
			rest = rest[17:]
		case partText:
			n, w := binary.Uvarint(rest[1:])
			if w <= 0 || n > uint64(len(rest)-1-w) {
				return Key{}, ErrInvalid
			}
			start := 1 + w
			k.Parts = append(k.Parts, string(rest[start:start+int(n)]))
			rest = rest[start+int(n):]
		default:
			return Key{}, ErrInvalid
		}
	}
	if Encode(k.Type, k.Parts...) != id {
		return Key{}, ErrInvalid
	}
	return k, nil
}

// Node is an object with a global id: the GraphQL interface Node, in Go. Each type computes
// its id when a query selects it, not when the object is made.
type Node interface {
	ID() string
}
