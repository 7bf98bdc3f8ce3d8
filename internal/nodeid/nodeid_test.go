package nodeid_test

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/nodeid"
)

// "Ids are opaque, stable and globally unique": the same key always gives the same id, and keys
// that differ in type or in any part give different ids, whatever the parts hold.
func TestIdsRoundTripAndStayDistinctWhateverThePartsHold(t *testing.T) {
	keys := []nodeid.Key{
		{Type: "TopAccount", Parts: []string{"w-1"}},
		{Type: "Individual", Parts: []string{"t", "w-1", "c-1"}},
		{Type: "Trust", Parts: []string{"t", "w-1", "c-1"}},
		{Type: "Individual", Parts: []string{"t", "w-1:c", "1"}},
		{Type: "Individual", Parts: []string{"t", "w-1", "c:1"}},
		{Type: "Individual", Parts: []string{"t", "w-1%3Ac", "1"}},
		{Type: "Individual", Parts: []string{"t", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f", "3F2B6C1E-8A4D-4C2B-9E7F-0A1B2C3D4E5F"}},
		{Type: "Individual", Parts: []string{"t", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5fa"}},
		{Type: "Individual", Parts: []string{"c", "ref", "", "", "c-1"}},
		{Type: "Document", Parts: []string{"w", "%25%"}},
		{Type: "Client", Parts: []string{"ünïcødé", "adv", "team"}},
		{Type: "BulkUpload", Parts: []string{strings.Repeat("x", 700)}},
		{Type: "Relationship", Parts: []string{"t", "w-1", "c-1", "OWNER", "ext-2", "0"}},
		{Type: "ContactRef", Parts: []string{"t", "w-1", "ext-2", ""}},
	}
	seen := map[string]int{}
	for i, k := range keys {
		id := nodeid.Encode(k.Type, k.Parts...)
		if again := nodeid.Encode(k.Type, k.Parts...); again != id {
			t.Errorf("key %d: encoded %q then %q", i, id, again)
		}
		if j, dup := seen[id]; dup {
			t.Errorf("keys %d and %d share the id %q", j, i, id)
		}
		seen[id] = i
		got, err := nodeid.Decode(id)
		if err != nil || got.Type != k.Type || !slices.Equal(got.Parts, k.Parts) {
			t.Errorf("key %d: Decode(%q) = %+v, %v; want %+v", i, id, got, err, k)
		}
		if strings.ContainsAny(id, "=+/") {
			t.Errorf("key %d: id %q is not unpadded base64url", i, id)
		}
	}
}

// "A forged or foreign id is NOT_FOUND": whatever is not exactly what Encode wrote is refused.
func TestForgedTamperedAndOversizedIdsAreRefused(t *testing.T) {
	b64 := base64.RawURLEncoding.EncodeToString
	// Ids are not signed: a changed byte that still spells a key names another object, which
	// the resolvers answer NOT_FOUND unless the caller may read it (the gateway's tests).
	valid := nodeid.Encode("Individual", "t", "w-1", "c-12")
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	for _, tc := range []struct{ name, id string }{
		{"empty", ""},
		{"not base64", "not an id!"},
		{"padded", base64.URLEncoding.EncodeToString(raw)},
		{"standard alphabet", base64.RawStdEncoding.EncodeToString([]byte{1, 1, 0, 2, 0xfb, 0xff})},
		{"not a whole number of bytes", "AAAAA"},
		{"a trailing bit set", valid[:len(valid)-1] + string(valid[len(valid)-1]+1)},
		{"an upstream id as it is", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f"},
		{"another version", b64(append([]byte{2}, raw[1:]...))},
		{"type code zero", b64([]byte{1, 0})},
		{"an unknown type code", b64([]byte{1, 200, 0, 1, 'w'})},
		{"no type", b64([]byte{1})},
		{"a part longer than the key", b64([]byte{1, 1, 0, 9, 'w'})},
		{"a UUID cut short", b64([]byte{1, 1, 1, 0xde, 0xad})},
		{"an unknown part form", b64([]byte{1, 1, 7, 'w'})},
		{"a UUID written as text", b64(append([]byte{1, 1, 0, 36}, "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f"...))},
		{"a length written long", b64([]byte{1, 1, 0, 0x81, 0x00, 'w'})},
		{"oversized", b64(append([]byte{1, 1, 0, 0xff, 0x07}, strings.Repeat("w", nodeid.MaxLen)...))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k, err := nodeid.Decode(tc.id); err == nil {
				t.Errorf("Decode(%q) = %+v, want ErrInvalid", tc.id, k)
			}
		})
	}
}

// The upstream's ids are UUIDs: packed, a card's id is about as long as the upstream's id.
func TestACardsIdIsShortWhenItsPartsAreUUIDs(t *testing.T) {
	id := nodeid.Encode("Individual", "t", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f", "04399aad-847f-41c9-8034-08edfc0ce150")
	if len(id) > 56 {
		t.Errorf("a card's id is %d characters (%s), want at most 56", len(id), id)
	}
	k, err := nodeid.Decode(id)
	if err != nil || k.Parts[1] != "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f" || k.Parts[2] != "04399aad-847f-41c9-8034-08edfc0ce150" {
		t.Errorf("Decode(%q) = %+v, %v", id, k, err)
	}
}

// The family query computes an id for every card it selects one of: the string is all it
// allocates.
func TestEncodeAllocatesOnlyTheString(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = nodeid.Encode("Individual", "t", "wid-0123456789", "contact-0123456789") }); n != 1 {
		t.Errorf("Encode allocated %v times, want 1", n)
	}
}

// The executor writes a selected id from New, not from Encode's string: it must be the same
// id, of the length Len says, whatever the parts hold, and cost no allocation.
func TestAnUnencodedIdWritesWhatEncodeGives(t *testing.T) {
	for _, k := range []nodeid.Key{
		{Type: "TopAccount", Parts: []string{"3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f"}},
		{Type: "Individual", Parts: []string{"t", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f", "04399aad-847f-41c9-8034-08edfc0ce150"}},
		{Type: "Trust", Parts: []string{"c", "ref", "", "", "3F2B6C1E-8A4D-4C2B-9E7F-0A1B2C3D4E5F"}},
		{Type: "Document", Parts: []string{"w", strings.Repeat("ü", 100)}},
		{Type: "BulkUpload", Parts: []string{strings.Repeat("x", 700)}},
		{Type: "Client", Parts: []string{}},
	} {
		want := nodeid.Encode(k.Type, k.Parts...)
		id := nodeid.New(k.Type, k.Parts...)
		if got := id.String(); got != want {
			t.Errorf("%+v: String() = %q, Encode gives %q", k, got, want)
		}
		if got := string(id.Append([]byte("x"))); got != "x"+want {
			t.Errorf("%+v: Append wrote %q, want x%s", k, got, want)
		}
		if id.Len() != len(want) {
			t.Errorf("%+v: Len() = %d, the id has %d bytes", k, id.Len(), len(want))
		}
		// Encoded once and kept, it writes the same.
		kept := nodeid.Encoded(id.Append(nil))
		if got := kept.String(); got != want || kept.Len() != len(want) || string(kept.Append([]byte("x"))) != "x"+want {
			t.Errorf("%+v: the id encoded before writes %q (Len %d), want %q", k, got, kept.Len(), want)
		}
	}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		id := nodeid.New("Individual", "t", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f", "contact-0123456789")
		buf = id.Append(buf[:0])
		_ = id.Len()
	})
	if allocs != 0 {
		t.Errorf("New, Append and Len allocated %v times, want none", allocs)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(nodeid.Encode("Individual", "t", "w", "c"))
	f.Add(nodeid.Encode("Client", "a:b", "%", ""))
	f.Add("AQEAAXc")
	f.Add("")
	f.Fuzz(func(t *testing.T, id string) {
		k, err := nodeid.Decode(id)
		if err != nil {
			return
		}
		if again := nodeid.Encode(k.Type, k.Parts...); again != id {
			t.Errorf("Decode(%q) = %+v, which encodes as %q", id, k, again)
		}
	})
}

func FuzzEncode(f *testing.F) {
	f.Add(2, "t", "w:1", "3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f")
	types := []string{"TopAccount", "Individual", "Trust", "Entity", "Charity", "Will", "Class", "Document", "Client", "BulkUpload", "Relationship", "ContactRef"}
	f.Fuzz(func(t *testing.T, code int, a, b, c string) {
		typ := types[(code%len(types)+len(types))%len(types)]
		id := nodeid.Encode(typ, a, b, c)
		k, err := nodeid.Decode(id)
		if len(id) > nodeid.MaxLen {
			if err == nil {
				t.Errorf("an id of %d bytes decoded", len(id))
			}
			return
		}
		if err != nil || k.Type != typ || !slices.Equal(k.Parts, []string{a, b, c}) {
			t.Errorf("Encode(%q, %q, %q, %q) = %q decodes as %+v, %v", typ, a, b, c, id, k, err)
		}
	})
}
