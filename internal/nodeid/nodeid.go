// Package nodeid makes and reads the global object ids of the Relay server specification
// (docs/graphql.md, "Node ids"): opaque to clients, stable, and unique across every type the
// gateway serves. An id is the unpadded base64url of a versioned, typed key,
// "1:<Type>:<part>:<part>...", whose parts are what the upstream needs to read the object again
// (a card's top account and its own id). A part's '%' and ':' are escaped as %25 and %3A, so
// the separators are unambiguous whatever an upstream id holds.
package nodeid

import (
	"encoding/base64"
	"errors"
	"strings"
)

// version is the key's first field: a later layout gets a new version, and ids of this one
// keep decoding.
const version = "1"

// MaxLen bounds an id in bytes: anything longer is forged, and is refused before it is decoded.
const MaxLen = 1024

// ErrInvalid is why an id is refused: it is not one the gateway made. Callers answer it as
// NOT_FOUND, never as an upstream error: a forged id names nothing.
var ErrInvalid = errors.New("not a node id the gateway made")

var enc = base64.RawURLEncoding.Strict()

// Encode returns the id of an object of GraphQL type typ, keyed by parts. It allocates the
// returned string and, for keys longer than a small stack buffer, one buffer more.
func Encode(typ string, parts ...string) string {
	var stack [192]byte
	raw := appendKey(stack[:0], typ, parts)
	var out [256]byte
	dst := out[:0]
	if n := enc.EncodedLen(len(raw)); n > len(out) {
		dst = make([]byte, 0, n)
	}
	return string(enc.AppendEncode(dst, raw))
}

func appendKey(b []byte, typ string, parts []string) []byte {
	b = append(b, version...)
	b = append(b, ':')
	b = append(b, typ...)
	for _, p := range parts {
		b = append(b, ':')
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '%':
				b = append(b, "%25"...)
			case ':':
				b = append(b, "%3A"...)
			default:
				b = append(b, p[i])
			}
		}
	}
	return b
}

// Key is a decoded id: the object's GraphQL type and the parts of its key.
type Key struct {
	Type  string
	Parts []string
}

// Decode reads an id that Encode made. Anything else (too long, not base64url, another
// version, a malformed escape, or any spelling Encode would not have written) is ErrInvalid:
// only the exact bytes Encode gives decode, so a tampered id cannot pass for another.
func Decode(id string) (Key, error) {
	if len(id) == 0 || len(id) > MaxLen {
		return Key{}, ErrInvalid
	}
	raw, err := enc.DecodeString(id)
	if err != nil {
		return Key{}, ErrInvalid
	}
	fields := strings.Split(string(raw), ":")
	if len(fields) < 2 || fields[0] != version || fields[1] == "" {
		return Key{}, ErrInvalid
	}
	k := Key{Type: fields[1], Parts: make([]string, 0, len(fields)-2)}
	for _, f := range fields[2:] {
		p, ok := unescape(f)
		if !ok {
			return Key{}, ErrInvalid
		}
		k.Parts = append(k.Parts, p)
	}
	if Encode(k.Type, k.Parts...) != id {
		return Key{}, ErrInvalid
	}
	return k, nil
}

// unescape undoes appendKey's escaping; any other escape (%3a, %41, a lone %) is not one
// Encode writes.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(s[i:], "%3A"):
			b.WriteByte(':')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// Is reports whether id decodes to a key of type typ with n parts, and returns it.
func Is(id, typ string, n int) (Key, bool) {
	k, err := Decode(id)
	if err != nil || k.Type != typ || len(k.Parts) != n {
		return Key{}, false
	}
	return k, true
}

// Node is an object with a global id: the GraphQL interface Node, in Go. Each type computes
// its id when a query selects it, not when the object is made.
type Node interface {
	ID() string
}
