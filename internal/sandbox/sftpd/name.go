package sftpd

import (
	"strings"
	"time"
)

// Kind is the kind of bulk file a name announces.
type Kind string

// The bulk files of the specification's Clients-based and container models: TopAccounts is the
// container model's Add/Update Top Accounts file.
const (
	TopAccounts Kind = "top-accounts"
	Clients     Kind = "clients"
	People      Kind = "people"
)

// TimestampLayout is the UTC timestamp in a bulk file's name: ISO 8601 basic format to the
// second with a literal Z, such as 20261123T204500Z. Basic format because it has no colons,
// which some file systems and tools refuse in names; to the second because an uploader sends
// at most one file of a kind per second; always UTC so names sort in upload order.
const TimestampLayout = "20060102T150405Z"

// Name is the name of a bulk file of kind k written at t, such as
// clients-20261123T204500Z.jsonl.
func Name(k Kind, t time.Time) string {
	return string(k) + "-" + t.UTC().Format(TimestampLayout) + ".jsonl"
}

// ParseName reports whether name (a base name, not a path) is a bulk file's name, exactly as
// Name writes it, and what kind and time it names. Anything else (a ".part" name, a
// timestamp with a zone offset, fractions of a second or an impossible date, another
// extension or case) is not a bulk file.
func ParseName(name string) (Kind, time.Time, bool) {
	rest, ok := strings.CutSuffix(name, ".jsonl")
	if !ok {
		return "", time.Time{}, false
	}
	var k Kind
	for _, c := range []Kind{TopAccounts, Clients, People} {
		if ts, ok := strings.CutPrefix(rest, string(c)+"-"); ok {
			k, rest = c, ts
			break
		}
	}
	if k == "" || len(rest) != len(TimestampLayout) {
		return "", time.Time{}, false
	}
	t, err := time.Parse(TimestampLayout, rest)
	// The round trip refuses what time.Parse is lenient about, so one instant has one name.
	if err != nil || t.Format(TimestampLayout) != rest {
		return "", time.Time{}, false
	}
	return k, t, true
}
