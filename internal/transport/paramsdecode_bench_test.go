package transport

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/advisorhq/gateway/internal/familyload"
)

// BenchmarkDecodeParams reads the family query's body, as a client sends it, with the
// parameters' decoder and with encoding/json, which it replaces for such bodies.
func BenchmarkDecodeParams(b *testing.B) {
	body, err := json.Marshal(map[string]any{
		"query":         familyload.Query,
		"variables":     map[string]any{"wid": "W-BENCH-20-0123456789"},
		"operationName": "Family",
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte, *rawParams) error
	}{
		{"decoder", decodeParams},
		{"encoding-json", func(body []byte, raw *rawParams) error { return decodeJSON(bytes.NewReader(body), raw) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var raw rawParams
				if err := c.decode(body, &raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
