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
		{Type: "Individual", Parts: []string{"c", "ref", "", "", "c-1"}},
		{Type: "Document", Parts: []string{"w", "%25%"}},
		{Type: "Client", Parts: []string{"ünïcødé", "adv", "team"}},
		{Type: "BulkUpload", Parts: []string{strings.Repeat("x", 700)}},
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
	// Ids are not signed: a changed character that still spells a key names another object,
	// which the resolvers answer NOT_FOUND unless the caller may read it (the gateway's tests).
	valid := nodeid.Encode("Individual", "t", "w-1", "c-12")
	for _, tc := range []struct{ name, id string }{
		{"empty", ""},
		{"not base64", "not an id!"},
		{"padded", base64.URLEncoding.EncodeToString([]byte("1:TopAccount:w-1"))},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(nodeid.Encode("TopAccount", "\xfb\xff"))},
		{"not a whole number of bytes", "AAAAA"},
		{"a trailing bit set", valid[:len(valid)-1] + "B"},
		{"an upstream id as it is", "c-1"},
		{"another version", b64([]byte("2:TopAccount:w-1"))},
		{"no version", b64([]byte("TopAccount:w-1"))},
		{"no type", b64([]byte("1:"))},
		{"a lone percent", b64([]byte("1:TopAccount:w%1"))},
		{"a lower-case escape", b64([]byte("1:TopAccount:w%3a1"))},
		{"an escape Encode never writes", b64([]byte("1:TopAccount:%41"))},
		{"oversized", b64([]byte("1:TopAccount:" + strings.Repeat("w", nodeid.MaxLen)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k, err := nodeid.Decode(tc.id); err == nil {
				t.Errorf("Decode(%q) = %+v, want ErrInvalid", tc.id, k)
			}
		})
	}
}

func TestIsChecksTheTypeAndTheNumberOfParts(t *testing.T) {
	id := nodeid.Encode("Document", "w-1", "v-1")
	if _, ok := nodeid.Is(id, "Document", 2); !ok {
		t.Error("a document's id is not a Document of two parts")
	}
	if _, ok := nodeid.Is(id, "TopAccount", 2); ok {
		t.Error("a document's id passed as a TopAccount")
	}
	if _, ok := nodeid.Is(id, "Document", 3); ok {
		t.Error("a document's id passed with three parts")
	}
}

// The family query computes an id for every card it selects one of: the string is all it
// allocates.
func TestEncodeAllocatesOnlyTheString(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = nodeid.Encode("Individual", "t", "wid-0123456789", "contact-0123456789") }); n != 1 {
		t.Errorf("Encode allocated %v times, want 1", n)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(nodeid.Encode("Individual", "t", "w", "c"))
	f.Add(nodeid.Encode("Client", "a:b", "%", ""))
	f.Add("MTpUb3BBY2NvdW50Onc")
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
	f.Add("Individual", "t", "w:1", "c%2")
	f.Fuzz(func(t *testing.T, typ, a, b, c string) {
		if typ == "" || strings.Contains(typ, ":") {
			return
		}
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
