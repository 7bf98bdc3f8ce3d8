// Package cursor makes and reads the cursors of the gateway's connections (docs/graphql.md,
// "Connections"). A cursor is opaque to clients: the unpadded base64url of a versioned binary
// key that names its connection, a digest of whose list it pages (the caller's firm and, for a
// family's lists, the top account), the position the connection resumes from, and a checksum.
// The connection and the list are in the key so that a cursor given to another list is refused
// by name rather than read as a position there; the checksum so that a cursor changed by hand
// is refused rather than read as another position. A cursor grants nothing: it holds only what
// the list's own arguments could ask for, and every read still goes out with the caller's
// credentials.
package cursor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/advisorhq/gateway/internal/apperr"
)

// version is the key's first byte: a later layout gets a new version.
const version = 1

// Kind names the connection a cursor belongs to.
type Kind byte

// The connections. Cursors are handed out, so a kind's code never changes.
const (
	TopAccounts Kind = 1 // Query.topAccounts: the key is an offset
	Documents   Kind = 2 // TopAccount.documents: the key is a vault id (the service's nextToken)
	Contacts    Kind = 3 // TopAccount.contactsConnection: the key is an offset
	Events      Kind = 4 // Query.eventHistory: the key is an event's id in the gateway's log
)

// String is the connection's field, as a message names it.
func (k Kind) String() string {
	switch k {
	case TopAccounts:
		return "Query.topAccounts"
	case Documents:
		return "TopAccount.documents"
	case Contacts:
		return "TopAccount.contactsConnection"
	case Events:
		return "Query.eventHistory"
	}
	return "an unknown connection"
}

// MaxLen bounds a cursor in characters, as nodeid.MaxLen bounds an id: a cursor holds one of the
// service's ids (a UUID) or an offset, and is under 80 characters, so anything this long was not
// made here, and is refused before it is decoded.
const MaxLen = 1024

const (
	scopeLen = 8 // bytes of SHA-256 of the list's scope
	sumLen   = 4 // bytes of SHA-256 of the rest, the checksum
	headLen  = 2 + scopeLen
)

var enc = base64.RawURLEncoding.Strict()

// Encode returns the cursor of the position key in the list scope of connection k. scope is
// whatever tells one list of k from another (the firm, and the top account).
func Encode(k Kind, scope, key string) string {
	raw := make([]byte, 0, headLen+len(key)+sumLen)
	raw = append(raw, version, byte(k))
	s := sha256.Sum256([]byte(scope))
	raw = append(raw, s[:scopeLen]...)
	raw = append(raw, key...)
	sum := sha256.Sum256(raw)
	raw = append(raw, sum[:sumLen]...)
	return enc.EncodeToString(raw)
}

// EncodeOffset is Encode of an offset into the list.
func EncodeOffset(k Kind, scope string, offset int) string {
	return Encode(k, scope, string(binary.AppendUvarint(nil, uint64(offset))))
}

// Decode returns the key of cursor c, given as argument arg (after, before) of connection k over
// the list scope. A cursor the gateway did not make, or one made for another connection or
// another list, is a BAD_USER_INPUT naming arg that says which.
func Decode(arg string, k Kind, scope, c string) (string, error) {
	if len(c) > MaxLen {
		return "", apperr.Input(arg, fmt.Sprintf("%s is not a cursor: it is %d characters long, and a cursor is at most %d", arg, len(c), MaxLen))
	}
	raw, err := enc.DecodeString(c)
	if err != nil || len(raw) < headLen+sumLen || raw[0] != version {
		return "", forged(arg, k)
	}
	body, sum := raw[:len(raw)-sumLen], raw[len(raw)-sumLen:]
	if want := sha256.Sum256(body); string(want[:sumLen]) != string(sum) {
		return "", forged(arg, k)
	}
	if got := Kind(raw[1]); got != k {
		return "", apperr.Input(arg, fmt.Sprintf("%s is a cursor of %s, not of %s: pass a cursor of the list being paged", arg, got, k))
	}
	if s := sha256.Sum256([]byte(scope)); string(s[:scopeLen]) != string(raw[2:headLen]) {
		return "", apperr.Input(arg, fmt.Sprintf("%s is a cursor of another list of %s (another firm's, or another top account's): pass a cursor of the list being paged", arg, k))
	}
	return string(body[headLen:]), nil
}

// DecodeOffset is Decode of a cursor made by EncodeOffset: its offset, at most max.
func DecodeOffset(arg string, k Kind, scope, c string, max int) (int, error) {
	key, err := Decode(arg, k, scope, c)
	if err != nil {
		return 0, err
	}
	n, size := binary.Uvarint([]byte(key))
	if size <= 0 || size != len(key) || n > uint64(max) {
		return 0, forged(arg, k)
	}
	return int(n), nil
}

func forged(arg string, k Kind) error {
	return apperr.Input(arg, fmt.Sprintf("%s is not a cursor the gateway made, or it was changed: pass a cursor of %s's edges or pageInfo as it was given", arg, k))
}
